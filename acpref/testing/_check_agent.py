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

import os
import tempfile
from typing import Callable, Dict, Optional, Sequence

import attrs

from ..errors import ConnectionClosed, ErrorCode, RemoteProtocolError, RequestTimeout, RpcError
from ._driver import AgentDriver
from ._results import FAIL, PASS, CheckReport

__all__ = ["AgentCheckOptions", "check_agent", "NeedsAuth"]


DEFAULT_PROMPT = "Hello from acpref check-agent: please answer with one short sentence."


@attrs.frozen(kw_only=True)
class AgentCheckOptions:
    """How to drive the agent. ``cancel_prompt`` should keep the agent busy for a while."""

    prompt: str = DEFAULT_PROMPT
    cancel_prompt: Optional[str] = None
    auth_method: Optional[str] = None
    timeout: float = 30.0
    #: The directory sessions are opened in (default: a fresh temporary directory).
    cwd: Optional[str] = None
    #: Where to keep one transcript per scenario (default: not kept).
    record_dir: Optional[str] = None
    #: Run only these scenarios (default: all).
    only: Sequence[str] = ()
    env: Optional[Dict[str, str]] = None


class NeedsAuth(Exception):
    """The agent answered auth_required and no ``auth_method`` was given."""


class ScenarioContext:
    """What a scenario works with: its driver, the options, and the report to fill."""

    def __init__(
        self,
        name: str,
        driver: AgentDriver,
        options: AgentCheckOptions,
        report: CheckReport,
        cwd: str,
    ) -> None:
        self.name = name
        self.driver = driver
        self.options = options
        self.report = report
        self.cwd = cwd
        self.authenticated = False

    @property
    def cancel_prompt(self) -> str:
        return self.options.cancel_prompt or self.options.prompt

    def check(self, clause: str, ok: bool, evidence: str = "") -> bool:
        """Record a verdict: PASS when ``ok``, else FAIL with ``evidence``."""
        self.report.record(clause, PASS if ok else FAIL, self.name, None if ok else evidence)
        return ok

    def passed(self, *clause_ids: str) -> None:
        for clause in clause_ids:
            self.report.passed(clause, self.name)

    def skip(self, clause: str, reason: str) -> None:
        self.report.skipped(clause, self.name, reason)

    def initialize(self) -> None:
        self.driver.initialize()

    def new_session(self, **kwargs: object) -> str:
        """``session/new`` in the check's directory, authenticating first if told to."""
        if self.options.auth_method and not self.authenticated:
            self.driver.request("authenticate", {"methodId": self.options.auth_method})
            self.authenticated = True
        try:
            return self.driver.new_session(self.cwd, **kwargs)  # type: ignore[arg-type]
        except RpcError as exc:
            if exc.code == ErrorCode.AUTH_REQUIRED and not self.options.auth_method:
                raise NeedsAuth(str(exc)) from None
            raise


@attrs.frozen
class Scenario:
    """One scripted conversation, on a fresh agent process."""

    name: str
    run: Callable[[ScenarioContext], None]
    #: The clauses it decides (SKIPPED all together when it cannot run).
    clauses: Sequence[str]
    #: The agent capability it needs, as a dotted path (``"loadSession"``), or None.
    needs: Optional[str] = None
    #: The clause an unexpected failure of the scenario is filed under.
    main: str = "OVERVIEW-01"


def check_agent(
    argv: Sequence[str],
    options: Optional[AgentCheckOptions] = None,
    *,
    scenarios: Optional[Sequence[Scenario]] = None,
) -> CheckReport:
    """Run every scenario against ``argv`` (a fresh process each) and return the report."""
    from ._agent_scenarios import SCENARIOS

    options = options or AgentCheckOptions()
    report = CheckReport(subject="agent", command=list(argv))
    chosen = [sc for sc in (scenarios or SCENARIOS) if not options.only or sc.name in options.only]
    with tempfile.TemporaryDirectory(prefix="acpref-check-agent-") as tmp:
        cwd = os.path.realpath(options.cwd or tmp)
        caps: Optional[Dict[str, object]] = None
        for scenario in chosen:
            if scenario.needs is not None and caps is not None and not _open(caps, scenario.needs):
                for clause in scenario.clauses:
                    report.skipped(
                        clause, scenario.name, f"the agent does not advertise {scenario.needs}"
                    )
                continue
            driver_caps = _run(scenario, argv, options, report, cwd)
            if caps is None and driver_caps is not None:
                caps = driver_caps
    return report


def _open(caps: Dict[str, object], gate: str) -> bool:
    from .._rules import gate_open

    return gate_open(gate, caps)


def _run(
    scenario: Scenario,
    argv: Sequence[str],
    options: AgentCheckOptions,
    report: CheckReport,
    cwd: str,
) -> Optional[Dict[str, object]]:
    transcript = (
        os.path.join(options.record_dir, f"{scenario.name}.jsonl") if options.record_dir else None
    )
    if options.record_dir:
        os.makedirs(options.record_dir, exist_ok=True)
    try:
        driver = AgentDriver.spawn(
            argv, env=options.env, transcript=transcript, timeout=options.timeout
        )
    except OSError as exc:
        report.failed(scenario.main, scenario.name, f"could not start the agent: {exc}")
        return None
    ctx = ScenarioContext(scenario.name, driver, options, report, cwd)
    failures_before = len(report.failures)
    try:
        scenario.run(ctx)
    except NeedsAuth as exc:
        for clause in scenario.clauses:
            report.skipped(
                clause,
                scenario.name,
                f"the agent requires authentication ({exc}); use --auth METHOD_ID",
            )
    except (RpcError, RequestTimeout, RemoteProtocolError, ConnectionClosed, TimeoutError) as exc:
        report.failed(scenario.main, scenario.name, f"{type(exc).__name__}: {exc}")
    finally:
        result = driver.close()
        # A turn that ends as the cancel crosses it is a race the check itself provokes: the
        # scenario says SKIPPED for it; the finding stays in the report's list.
        report.add_findings(
            result.findings, scenario.name, transcript, ignore=("spec-gap:cancel-race",)
        )
        if transcript:
            report.transcripts.append(transcript)
        # spec-gap exit-on-eof: an agent ends when its input ends (transports.mdx, TRANSPORT-10).
        report.record(
            "spec-gap:exit-on-eof",
            PASS if driver.exited_on_eof else FAIL,
            scenario.name,
            None
            if driver.exited_on_eof
            else "the agent did not exit within 5s of the end of its input",
        )
        tail = driver.stderr.strip().splitlines()[-3:]
        if len(report.failures) > failures_before and tail:
            report.notes.append(f"[{scenario.name}] agent stderr ends: " + " | ".join(tail))
    return driver.agent_capabilities if driver.initialize_response is not None else None
