"""``check_agent``: drive an agent through scripted scenarios and grade it clause by clause.

Each scenario (``_agent_scenarios``) runs against a fresh agent process behind an
``AgentDriver``: it asks for what the agent must do, checks what is only visible from the
answers (a replay that really replays, distinct session ids, an error code), and leaves the rest
to the oracle, which judges the whole transcript with the same rules the live sides obey. A
scenario that needs a capability the agent did not advertise is SKIPPED, with that reason.

The verdicts go into a ``CheckReport``: a finding blamed on the agent fails its clause; what a
scenario checked and found right passes; findings blamed on the driver (the bad-input scenario
breaks rules on purpose) are kept in the report but fail nothing.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence

from .._core import gate_open
from ..errors import ConnectionClosed, ErrorCode, RemoteProtocolError, RequestTimeout, RpcError
from ._agent_scenarios import SCENARIOS
from ._cwd_scenarios import CWD_FILE
from ._deadlines import Stalled
from ._driver import AgentDriver
from ._results import FAIL, PASS, SKIPPED, CheckReport
from ._scenario import (
    AUTH_HINT,
    BUSY_HINT,
    REFUSED_HINT,
    AgentCheckOptions,
    NeedsAuth,
    NotReached,
    Scenario,
    ScenarioContext,
)

__all__ = ["AgentCheckOptions", "check_agent", "declared_clauses", "NeedsAuth"]


def declared_clauses(scenarios: Optional[Sequence[Scenario]] = None) -> List[str]:
    """Every clause the scenarios decide, in order, plus acpref's per-run checks."""
    seen: Dict[str, None] = {}
    for scenario in scenarios or SCENARIOS:
        seen.update(dict.fromkeys(scenario.clauses))
    seen.update(dict.fromkeys(RUN_CLAUSES))
    return list(seen)


#: What every scenario's run decides besides its own clauses.
RUN_CLAUSES = ("spec-gap:exit-on-eof",)


def check_agent(
    argv: Sequence[str],
    options: Optional[AgentCheckOptions] = None,
    *,
    scenarios: Optional[Sequence[Scenario]] = None,
) -> CheckReport:
    """Run every scenario against ``argv`` (a fresh process each) and return the report."""
    options = options or AgentCheckOptions()
    report = CheckReport(subject="agent", command=list(argv))
    chosen = [sc for sc in (scenarios or SCENARIOS) if not options.only or sc.name in options.only]
    # The kinds of request that got no answer within the timeout, shared by every scenario's
    # agent: each costs one timeout in the whole run (see AgentDriver.stalled).
    stalled: Dict[str, str] = {}
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="acpref-check-agent-") as tmp:
        cwd = os.path.realpath(options.cwd or tmp)
        caps: Optional[Dict[str, object]] = None
        for n, scenario in enumerate(chosen, 1):
            if scenario.needs is not None and caps is not None and not _open(caps, scenario.needs):
                reason = f"the agent does not advertise {scenario.needs}"
                for clause in scenario.clauses:
                    report._record(clause, SKIPPED, scenario.name, reason)
                _progress(options, f"[{n}/{len(chosen)}] {scenario.name}: SKIPPED, {reason}")
                continue
            _progress(options, f"[{n}/{len(chosen)}] {scenario.name} ...")
            began = time.monotonic()
            driver_caps = _run(scenario, argv, options, report, cwd, stalled, scratch=tmp)
            if caps is None and driver_caps is not None:
                caps = driver_caps
            took = time.monotonic() - began
            tally = _tally(report, scenario)
            _progress(options, f"[{n}/{len(chosen)}] {scenario.name}: {tally} in {took:.1f}s")
    _hints(report, options)
    _progress(options, f"done in {time.monotonic() - start:.1f}s")
    return report


def _progress(options: AgentCheckOptions, text: str) -> None:
    """One line of progress on stderr (never stdout: it carries the report), if asked for."""
    if options.progress:
        print(f"acpref check-agent: {text}", file=sys.stderr, flush=True)


def _tally(report: CheckReport, scenario: Scenario) -> str:
    """What a scenario's clauses came to so far: ``3 PASS, 1 FAIL, 2 SKIPPED``."""
    counts: Dict[str, int] = {}
    for clause in scenario.clauses:
        row = report.results.get(clause)
        if row is not None:
            counts[row.status] = counts.get(row.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "done"


def _open(caps: Dict[str, object], gate: str) -> bool:
    return gate_open(gate, caps)


def _run(
    scenario: Scenario,
    argv: Sequence[str],
    options: AgentCheckOptions,
    report: CheckReport,
    cwd: str,
    stalled: Optional[Dict[str, str]] = None,
    *,
    scratch: Optional[str] = None,
) -> Optional[Dict[str, object]]:
    if options.record_dir:
        os.makedirs(options.record_dir, exist_ok=True)
    processes = iter(range(1, 1 << 20))
    spawn_dir: Optional[str] = None
    if scenario.apart:
        # The agent starts in one fresh directory and its sessions open in another: what it
        # then names shows which one it takes for the session's (SETUP-26, SETUP-27). Both lie
        # in the run's temporary directory, removed with it.
        spawn_dir = os.path.realpath(tempfile.mkdtemp(prefix="spawned-here-", dir=scratch))
        cwd = os.path.realpath(tempfile.mkdtemp(prefix="session-cwd-", dir=scratch))
        # A program named by a relative path is the one the user meant, from here.
        program = str(argv[0]) if argv else ""
        if os.sep in program and not os.path.isabs(program):
            argv = [os.path.abspath(program), *argv[1:]]

    def spawn() -> AgentDriver:
        # One transcript per agent process: the scenario's name, then -2, -3... after a restart.
        n = next(processes)
        name = scenario.name if n == 1 else f"{scenario.name}-{n}"
        where = options.record_dir
        transcript = os.path.join(where, f"{name}.jsonl") if where else None
        return AgentDriver.spawn(
            argv,
            cwd=spawn_dir,
            env=options.env,
            transcript=transcript,
            timeout=options.timeout,
            stalled=stalled,
            part=f"scenario {scenario.name!r}",
            newer_spec=options.newer_spec,
        )

    try:
        driver = spawn()
    except OSError as exc:
        for clause in scenario.clauses:
            reason = f"not reached: could not start the agent: {exc}"
            report._record(clause, SKIPPED, scenario.name, reason)
        if not scenario.apart:  # started elsewhere, a command may fail for that alone
            report._record(scenario.main, FAIL, scenario.name, f"could not start the agent: {exc}")
        return None

    def restart(old: AgentDriver) -> AgentDriver:
        _finish(scenario, old, report)
        return spawn()

    ctx = ScenarioContext(
        scenario, driver, options, report, cwd, restart=restart, spawn_dir=spawn_dir
    )
    failures_before = len(report.failures)
    why = "the scenario ended before it"
    try:
        scenario.run(ctx)
    except Exception as exc:  # noqa: BLE001 - every way a scenario stops is reported below
        if not isinstance(exc, _STOPS):
            raise
        why = _stopped(ctx, exc)
    finally:
        _finish(scenario, ctx.driver, report)
        for clause in scenario.clauses:
            if clause not in ctx.decided:
                # Whatever happened, every clause the scenario sets out to check gets a status.
                report._record(clause, SKIPPED, scenario.name, f"not reached: {why}")
        tail = ctx.driver.stderr.strip().splitlines()[-3:]
        if len(report.failures) > failures_before and tail:
            report.notes.append(f"[{scenario.name}] agent stderr ends: " + " | ".join(tail))
    return driver.agent_capabilities if driver.initialize_response is not None else None


def _finish(scenario: Scenario, driver: AgentDriver, report: CheckReport) -> None:
    """Close one agent process of a scenario and file what the oracle found in its transcript."""
    result = driver.close()
    transcript = driver.sink.transcript_path
    if scenario.apart and driver.initialize_response is None:
        # Started in a directory of the check's, an agent whose command names its files by
        # relative paths cannot start: what it did not answer is not judged here (the other
        # scenarios, run where its command was given, judge its start).
        report.notes.append(
            f"[{scenario.name}] the agent, started in another directory, answered no "
            "initialize: its transcript is not judged"
        )
    else:
        # A turn that ends as the cancel crosses it is a race the check itself provokes: the
        # scenario says SKIPPED for it; the finding stays in the report's list.
        report.add_findings(
            result.findings, scenario.name, transcript, ignore=("spec-gap:cancel-race",)
        )
    if transcript:
        report.transcripts.append(transcript)
    # spec-gap exit-on-eof: an agent ends when its input ends (transports.mdx, TRANSPORT-10).
    report._record(
        "spec-gap:exit-on-eof",
        PASS if driver.exited_on_eof else FAIL,
        scenario.name,
        None
        if driver.exited_on_eof
        else "the agent did not exit within 5s of the end of its input",
    )


_STOPS = (
    NeedsAuth,
    NotReached,
    RpcError,
    RequestTimeout,
    RemoteProtocolError,
    ConnectionClosed,
    TimeoutError,
    Stalled,
)

def _stopped(ctx: ScenarioContext, exc: BaseException) -> str:
    """File the exception that stopped a scenario; return why the rest was not reached."""
    if isinstance(exc, (NotReached, Stalled)):
        # A refused step breaks no clause (ScenarioContext.step); a request of a kind that
        # already got no answer in time is not sent again (AgentDriver.stalled).
        return str(exc)
    method = _last_call(ctx.driver, answered=isinstance(exc, (RpcError, RemoteProtocolError)))
    pending = [c for c in ctx.current if c not in ctx.decided]
    if isinstance(exc, NeedsAuth) or (
        isinstance(exc, RpcError) and exc.code == ErrorCode.AUTH_REQUIRED
    ):
        # spec RPC-16: -32000 is the answer to a request that needs authentication first; it
        # is no failure, but nothing that needs a session or a turn can be checked without it.
        raw = ctx.driver.initialize_raw if isinstance(ctx.driver.initialize_raw, dict) else {}
        methods = raw.get("authMethods")
        offered = [
            str(m["id"]) for m in (methods if isinstance(methods, list) else [])
            if isinstance(m, dict) and "id" in m
        ]
        offer = f" (the agent offers: {', '.join(map(str, offered))})" if offered else ""
        if ctx.options.auth_method:
            reason = (
                f"{method} answered -32000 auth required although we authenticated with "
                f"{ctx.options.auth_method!r}"
            )
            for clause in pending:
                ctx.record(clause, FAIL, reason)
            return reason
        return f"{method} answered -32000 auth required; {AUTH_HINT}{offer}"
    if isinstance(exc, (RequestTimeout, TimeoutError)):
        # No spec sentence sets a deadline: a request we stopped waiting for is not one the
        # agent never answered (spec-gap gave-up). The clauses after it are not reached.
        ctx.driver.deadlines.give_up()
        return f"{method} got no answer within {ctx.options.timeout:g}s (see --timeout)"
    if isinstance(exc, RpcError):
        reason = f"{method} answered error {exc.code}: {exc.detail}"
    elif isinstance(exc, RemoteProtocolError):
        reason = f"the answer to {method} broke {exc.clause}: {exc.message}"
    else:
        code = ctx.driver.process.popen.poll() if ctx.driver.process is not None else None
        status = f" (exit status {code})" if code is not None else ""
        during = f" during {method}" if method != "the last request" else ""
        reason = f"the agent closed the connection{during}{status}: {exc}"
    for clause in pending:
        ctx.record(clause, FAIL, reason)
    return reason


def _last_call(driver: AgentDriver, *, answered: bool) -> str:
    """The method of our last request that was answered (``answered``) or is still unanswered."""
    sent: Dict[str, str] = {}
    last_answered = ""
    for record in driver.sink.records():
        if not record.is_message or record.raw is None:
            continue
        try:
            message = json.loads(record.raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(message, dict):
            continue
        key = json.dumps(message.get("id"))
        if record.sender == "client" and "method" in message and "id" in message:
            sent[key] = str(message["method"])
        elif record.sender == "agent" and "method" not in message and key in sent:
            last_answered = sent.pop(key)
    if answered:
        return last_answered or "the last request"
    return list(sent.values())[-1] if sent else "the last request"


def _hints(report: CheckReport, options: AgentCheckOptions) -> None:
    """Name the options that would have turned SKIPPED rows into verdicts."""
    rows = [r for r in report.rows() if r.status == SKIPPED]
    auth = [r.clause for r in rows if any(AUTH_HINT in e for e in r.evidence)]
    busy = [r.clause for r in rows if any(BUSY_HINT in e for e in r.evidence)]
    refused = [r for r in rows if any(REFUSED_HINT in e for e in r.evidence)]
    cwd = [r.clause for r in rows if any("give --cwd-prompt" in e for e in r.evidence)]
    if auth:
        report.notes.append(
            f"{len(auth)} clauses were not reached because the agent requires authentication: "
            f"{AUTH_HINT} (one of the agent's authMethods)"
        )
    if refused:
        first = next(e for e in refused[0].evidence if REFUSED_HINT in e)
        report.notes.append(
            f"{len(refused)} clauses were not reached because the agent answered a request the "
            f"check needs with an error (the first: {first.replace('not reached: ', '')})"
        )
    if busy:
        report.notes.append(
            f"{', '.join(busy)}: the turn ended before the cancel could be judged; {BUSY_HINT}"
            " (and --cancel-after)"
        )
    decided = [c for c in ("SETUP-26", "SETUP-27") if c in report.results and c not in cwd]
    if cwd and not decided:  # one clause decided: the prompt works, the agent chose its tools
        report.notes.append(
            f"{', '.join(cwd)}: the working-directory check saw nothing that decides it; give "
            f"--cwd-prompt a prompt that makes the agent read {CWD_FILE} (or run a command on "
            "it) through the client"
        )
