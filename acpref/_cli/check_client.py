"""``acpref check-client``: grade a client with a scripted agent.

``acpref check-client --serve REPORT.json`` is the agent: configure the client under test to
launch it, then use the client (each prompt runs the next step; the agent's messages say what to
do). ``acpref check-client --report REPORT.json [--json] [--table]`` prints the report: failures
first, each with the spec's sentence and the evidence, then the counts (``--table``: the whole
table by clause); exit status 1 when a failed clause fails the check (MUST and MUST NOT;
``--strict-gaps``, ``--fail-on`` add levels), else 0; 2 when the report cannot be read. The
grading agent judges as it serves, so ``--newer-spec`` goes with ``--serve``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ._junit import add_junit_option
from ._levels import add_level_options, add_newer_spec_option, levels_of


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--serve",
        metavar="REPORT.json",
        help="run the scripted agent on stdio, grading into REPORT",
    )
    group.add_argument("--report", metavar="REPORT.json", help="print a report written by --serve")
    p.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="with --serve: seconds to wait for each answer of the client (default 300: a person "
        "answers the permission requests); a kind of request that gets none is not sent again, "
        "so a client that answers nothing after initialize costs at most PARTS x S per prompt "
        "(10 parts in step 1, 1 in step 2)",
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="with --serve: no progress on stderr"
    )
    p.add_argument("--json", action="store_true", help="with --report: print JSON")
    p.add_argument("--table", action="store_true", help="with --report: the full table too")
    add_level_options(p, when="with --report: ")
    add_junit_option(p, when="with --report: ")
    add_newer_spec_option(p, when="with --serve: ")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..testing import read_client_report, serve_check_client

    if args.serve and args.junit:
        print("acpref check-client: --junit goes with --report (the verdicts are final there)",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.serve:
        logging.getLogger("acpref").setLevel(logging.ERROR)
        return serve_check_client(
            args.serve, timeout=args.timeout, progress=not args.quiet, newer_spec=args.newer_spec
        )
    if args.newer_spec:
        # The grading agent judges as it serves: the report holds its verdicts already.
        print("acpref check-client: --newer-spec goes with --serve", file=sys.stderr)
        return 2
    try:
        report = read_client_report(args.report)
    except (OSError, ValueError, KeyError) as exc:
        print(f"acpref check-client: cannot read {args.report}: {exc}", file=sys.stderr)
        return 2
    levels = levels_of(args)
    if args.junit:  # first: the file CI reads is written whatever printing meets
        from ._junit import check_suite, write_junit

        try:  # the grading's time is not in the report: the suite has none
            write_junit(args.junit, [check_suite(report, "acpref check-client", None, **levels)])
        except OSError as exc:
            print(f"acpref check-client: cannot write {args.junit}: {exc}", file=sys.stderr)
            return 2
    print(report.dumps() if args.json else report.format_text(full=args.table, **levels))
    return 0 if not report.failing(**levels) else 1
