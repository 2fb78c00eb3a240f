"""``acpref check-agent [--json] -- AGENT_CMD...``: grade an agent, clause by clause.

Drives the agent through scripted scenarios (``acpref.testing.check_agent``), a fresh process
each, and prints the failures first (each with the spec's sentence and the evidence), then the
counts of passes and skips; ``--table`` adds the whole table by clause. ``--report REPORT.html``
also writes the scenarios' transcripts as one page of sequence diagrams (``acpref show``), a tab
per scenario. Exit status: 1 when a failed clause fails the check (MUST and MUST NOT;
``--strict-gaps``, ``--fail-on`` add levels), else 0; 2 for bad usage or an agent command that
cannot be started (``_status``).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from typing import Any

from ..testing import AgentCheckOptions, check_agent
from ..testing._agent_scenarios import SCENARIOS
from ._junit import add_junit_option
from ._status import USAGE, unstartable
from ._levels import add_level_options, add_newer_spec_option, levels_of

SCENARIO_NAMES = [scenario.name for scenario in SCENARIOS]


_DESCRIPTION = """\
Grade an ACP agent clause by clause: start it, drive it through scripted scenarios
(a handshake, prompts, a cancel, sessions loaded, listed, closed...), judge everything
it says, and print what it got wrong, with the spec's sentence and the evidence.

Each scenario runs against a fresh process of AGENT_CMD, given after --. The scenarios:
""" + ", ".join(SCENARIO_NAMES) + "."

_EPILOG = """\
examples:
  grade the echo agent:
  $ acpref check-agent -- acpref echo
  two scenarios only, with the full table by clause:
  $ acpref check-agent --only handshake --only prompt --table -- acpref echo
  keep the transcripts and write them as an HTML page of sequence diagrams:
  $ acpref check-agent --only prompt --record runs --report report.html -- acpref echo

exit status:
  0  no failed clause fails the check (by default: none at MUST or MUST NOT)
  1  a failed clause fails the check: MUST or MUST NOT; with --strict-gaps a spec-gap too,
     with --fail-on LEVEL one of LEVEL too (warning: a forward-compatibility note)
  2  bad usage: no agent command, an unknown scenario, a report that cannot be written;
     or the agent command cannot be started (not found, not executable): one line, no clause
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        usage="acpref check-agent [options] -- AGENT_CMD [ARGS...]",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--table", action="store_true", help="also print every clause checked, passed or not"
    )
    add_level_options(p)
    add_newer_spec_option(p)
    p.add_argument("--prompt", help="the text of an ordinary prompt (default: a greeting)")
    p.add_argument(
        "--tools-prompt",
        help="a prompt asking for a file read, a command and a file write, sent by a client "
        "that advertises no capability; {path} names a file (default: one asking all three)",
    )
    p.add_argument(
        "--cwd-prompt",
        help="a prompt asking for the file {file} by its relative name, sent in a session whose "
        "cwd is not the directory the agent was started in (default: '/read {file}' and a "
        "sentence asking to read it; '/run cat {file}' makes acpref echo run a command on it)",
    )
    _add_waits(p)
    p.add_argument(
        "--auth", metavar="METHOD_ID", help="authenticate with this method before sessions"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to wait for each answer (default 30); a kind of request that gets none "
        "is not sent again in the run, so against an agent that answers nothing after "
        "initialize a run takes at most (SCENARIOS + 2) x S, plus each process's start and exit",
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on stderr (each scenario's start "
        "and end, with its time)",
    )
    p.add_argument(
        "--cwd",
        help="directory to open sessions in (default: a temporary directory; the cwd scenario "
        "starts the agent in a scratch directory and opens its session in another)",
    )
    p.add_argument(
        "--record", metavar="DIR", help="keep one transcript per scenario in DIR (see validate)"
    )
    p.add_argument(
        "--report", metavar="REPORT.html", help="write the transcripts as an HTML page too"
    )
    add_junit_option(p)
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SCENARIO",
        help="run only this scenario (repeatable; the names are listed above)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log the connections' warnings")
    p.add_argument(
        "agent", nargs=argparse.REMAINDER, metavar="-- AGENT_CMD", help="the agent command"
    )
    p.set_defaults(func=run)


def _add_waits(p: argparse.ArgumentParser) -> None:
    """The options of the cancellation and MCP checks: what to ask, how long to wait."""
    p.add_argument(
        "--cancel-prompt",
        help="a prompt that keeps the agent busy, for the cancellation checks (default: a long "
        "counting task; '/wait' for acpref echo)",
    )
    p.add_argument(
        "--cancel-after",
        type=float,
        default=3.0,
        metavar="S",
        help="cancel the busy turn after S seconds if it shows no sign of life first (default 3)",
    )
    p.add_argument(
        "--cancel-grace",
        type=float,
        default=5.0,
        metavar="S",
        help="a turn still running S seconds after the cancel ignored it (default 5)",
    )
    p.add_argument(
        "--mcp-wait",
        type=float,
        default=5.0,
        metavar="S",
        help="seconds to wait for the agent to initialize the MCP servers it is given (default 5)",
    )


def run(args: argparse.Namespace) -> int:
    argv = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not argv:
        print("acpref check-agent: give the agent command after --", file=sys.stderr)
        return 2
    unknown = [name for name in args.only if name not in SCENARIO_NAMES]
    if unknown:
        print(
            f"acpref check-agent: no scenario {', '.join(unknown)}; "
            f"the scenarios: {', '.join(SCENARIO_NAMES)}",
            file=sys.stderr,
        )
        return 2
    if not args.verbose:
        logging.getLogger("acpref").setLevel(logging.CRITICAL)
    # Is it an agent at all? A command that is not found, or one that exits before answering
    # initialize (a missing module, a wrong interpreter), is one line and exit 2: the clauses
    # it would fail only repeat that. One extra start of the agent, before any progress line.
    if unstartable("check-agent", argv) or _exits_unanswered(argv, args.timeout):
        return USAGE
    if args.report and not args.record:
        with tempfile.TemporaryDirectory(prefix="acpref-check-agent-") as tmp:
            return _check(args, argv, tmp)
    return _check(args, argv, args.record)


def _exits_unanswered(argv: Any, timeout: float) -> bool:
    """True (and one line saying so) when the agent exits without a byte on stdout after its
    initialize: it never started as an agent (a missing module, a wrong interpreter). An agent
    still running when the wait ends is not judged here: the scenarios judge it."""
    from ..testing._driver import AgentDriver

    driver = AgentDriver.spawn(argv, timeout=min(timeout, 10.0))
    try:
        driver.initialize()
    except Exception:  # noqa: BLE001 - the probe's question is only whether it answered
        pass
    process = driver.process
    report = driver.close(grace=1.0)
    status = process.returncode if process is not None else None
    if report.messages > 1 or status is None or process is None:
        return False  # it spoke ACP (or still runs): the check's verdicts stand
    process.wait_drained(2.0)  # its last words are read to the end of its stderr, then quoted
    stderr = process.stderr.text()
    tail = stderr.strip().splitlines()[-1:] or ["(nothing)"]
    print(
        f"acpref check-agent: cannot start {argv[0]!r}: it exited with status {status} before "
        f"answering initialize; its stderr ends: {tail[0][:200]}",
        file=sys.stderr,
    )
    return True


def _check(args: argparse.Namespace, argv: Any, record_dir: Any) -> int:
    options = AgentCheckOptions(
        **{
            k: v
            for k, v in (
                ("prompt", args.prompt),
                ("cancel_prompt", args.cancel_prompt),
                ("tools_prompt", args.tools_prompt),
                ("cwd_prompt", args.cwd_prompt),
            )
            if v
        },
        auth_method=args.auth,
        timeout=args.timeout,
        cwd=args.cwd,
        record_dir=record_dir,
        only=tuple(args.only),
        cancel_after=args.cancel_after,
        cancel_grace=args.cancel_grace,
        mcp_wait=args.mcp_wait,
        progress=not args.quiet,
        newer_spec=args.newer_spec,
    )
    started = time.monotonic()
    report = check_agent(argv, options)
    seconds = time.monotonic() - started
    levels = levels_of(args)
    if args.junit and not _write_junit(args.junit, report, seconds, levels):
        return 2
    print(report.dumps() if args.json else report.format_text(full=args.table, **levels))
    if args.report:
        from .._tools.show_html import write_report

        parts = [(os.path.basename(p)[: -len(".jsonl")], p, None) for p in report.transcripts]
        try:
            write_report(
                args.report, parts, title=f"acpref check-agent: {' '.join(argv)}",
                notes=report.format_text(full=True, **levels),
                verdict=not report.failing(**levels),
            )
        except OSError as exc:
            print(f"acpref check-agent: cannot write {args.report}: {exc}", file=sys.stderr)
            return 2
        print(f"acpref check-agent: report written to {args.report}", file=sys.stderr)
    return 0 if not report.failing(**levels) else 1


def _write_junit(path: str, report: Any, seconds: float, levels: Any) -> bool:
    from ._junit import check_suite, write_junit

    try:
        write_junit(path, [check_suite(report, "acpref check-agent", seconds, **levels)])
    except OSError as exc:
        print(f"acpref check-agent: cannot write {path}: {exc}", file=sys.stderr)
        return False
    return True
