"""The pytest plugin of acpref: conformance fixtures for agents and clients under test.

Registered as the ``pytest11`` entry point ``acpref``, so that installing acpref makes these
fixtures available with no configuration (without the entry point: ``-p acpref.testing.plugin``,
or import the fixtures into a conftest):

* ``acp_agent``: a factory; ``acp_agent(argv)`` starts the agent under test and returns an
  ``AgentDriver`` playing its client. At teardown every agent is shut down (end of input first)
  and the test fails with the violations the oracle found on the agent's side, naming the
  transcript and an HTML report of it written beside it (``acpref show``).
* ``acp_pair``: the same for an ``acpref.agent.Agent`` served in this process, over in-memory
  pipes.
* ``acp_client_check``: for a client under test: ``.argv`` launches the scripted grading agent
  (``acpref check-client --serve``); run the client with it; at teardown the test fails with the
  clauses the client failed.

``assert_conforms(transcript)`` (``acpref.testing``) judges any recorded transcript.

What a fixture holds of its agent is bounded by configuration, not by the agent: the transcript
streams to disk and is judged as it travels, the driver keeps the last ``keep_updates`` updates
of each session and the last 64 MiB of the agent's messages (``acpref.testing._recording``), and
the page of a failed test folds long runs of updates (spec_notes/reliability.md, the bounds).

By default only MUST / MUST NOT findings fail a test, each printed with the spec's sentence and the
offending message's index; ``spec-gap`` findings (acpref's own readings) fail too with
``--acp-strict-gaps``, SHOULD / MAY findings and forward-compatibility warnings with
``--acp-fail-on SHOULD`` / ``MAY`` / ``warning`` (or, for one agent, the fixture's ``fail_on``).
A test that fails while its agent broke the spec gets one report, the verdict first, acpref's own
frames cut from its traceback. The end of the run says how many
findings of the fixtures' peers did not fail, by level, and which option would fail on them.
``--acp-full-table`` prints the client check's whole table, not only its failures.
``--acp-newer-spec`` (a fixture's ``newer_spec=True``, a client check's ``.newer_spec``) takes the
peers for ones built on a newer spec: a value that no closed set of the carried schemas defines
is a warning, not a failure.

This module is imported by every pytest run of a project that has acpref installed: it imports
the drivers and the oracle only when a fixture is used.
"""

from __future__ import annotations

import os
import select
import sys
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._driver import AgentDriver
    from ._pairs import AgentUnderTest
    from ._results import CheckReport

__all__ = ["acp_agent", "acp_pair", "acp_client_check", "ClientCheck", "pytest_addoption"]


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("acpref", "ACP conformance (acpref)")
    group.addoption(
        "--acp-strict-gaps",
        action="store_true",
        default=False,
        help="fail tests on spec-gap findings too (acpref's readings where the spec is silent)",
    )
    group.addoption(
        "--acp-fail-on",
        action="append",
        default=[],
        metavar="LEVEL",
        choices=_FAIL_ON,
        help="fail tests on findings of LEVEL too: SHOULD (and SHOULD NOT), MAY, spec-gap or "
        "warning (forward compatibility) (repeatable; by default only MUST and MUST NOT fail, "
        "and a fixture's fail_on=(...) adds levels for its own peers)",
    )
    group.addoption(
        "--acp-newer-spec",
        action="store_true",
        default=False,
        help=_NEWER_SPEC_HELP + " (every fixture; one fixture: newer_spec=True)",
    )
    group.addoption(
        "--acp-full-table",
        action="store_true",
        default=False,
        help="print the full clause table of a failed client check, not only its failures",
    )


#: The levels ``--acp-fail-on`` takes (``register.FAIL_ON``, spelled out here so that loading
#: the plugin does not load the rules), and the plugin's own spelling of the option that makes
#: each level fail (``register.CLI_FLAGS``).
_FAIL_ON = ("MUST", "MAY", "SHOULD", "spec-gap", "warning")
_FLAGS = {
    "SHOULD": "--acp-fail-on SHOULD",
    "SHOULD NOT": "--acp-fail-on SHOULD",
    "MAY": "--acp-fail-on MAY",
    "spec-gap": "--acp-strict-gaps",
    "warning": "--acp-fail-on warning",
}
#: The ``_Launched`` of the fixtures a test uses: a failure of the test itself is reported with
#: their verdict (``pytest_runtest_makereport``), once.
_LAUNCHED = pytest.StashKey[List["_Launched"]]()
#: Where acpref's own modules are: their frames are hidden from a failed test's traceback.
_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: What ``--acp-newer-spec`` changes: the words of ``--newer-spec`` (``acpref._cli._levels``),
#: spelled out here so that loading the plugin does not load the CLI.
_NEWER_SPEC_HELP = (
    "the peer is built on a newer ACP spec than the one acpref carries (stable schema of "
    "2026-11-02): a value that no closed set of the carried schemas defines (a stopReason, "
    "a sessionUpdate kind, a tool call status, a permission outcome...) is a warning instead of "
    "a failure; everything else is judged as without it"
)
#: Where the fixtures leave the levels of the findings that did not fail their test.
_BELOW = pytest.StashKey[List[str]]()


def _levels(config: Any) -> Dict[str, Any]:
    """The keyword arguments of ``failing`` that the command line asks for."""
    return {
        "strict_gaps": bool(config.getoption("acp_strict_gaps", default=False)),
        "fail_on": tuple(config.getoption("acp_fail_on", default=None) or ()),
    }


def _newer_spec(config: Any, asked: Optional[bool]) -> bool:
    """Whether a fixture's oracle takes its peer for one built on a newer spec (undefined
    values are warnings): the fixture's ``newer_spec`` argument, else ``--acp-newer-spec``."""
    if asked is not None:
        return asked
    return bool(config.getoption("acp_newer_spec", default=False))


def _below(config: Any, levels: Iterable[str]) -> None:
    """Keep, for the end of the run, the levels of findings that did not fail their test."""
    config.stash.setdefault(_BELOW, []).extend(levels)


def _below_line(levels: Iterable[str], config: Any) -> str:
    from .._core.register import below_the_fold

    return below_the_fold(levels, flags=_FLAGS, **_levels(config))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: Any, config: Any) -> None:
    """Nothing hides below the fold: what the peers under test broke without failing a test."""
    below = config.stash.get(_BELOW, [])
    if below:
        line = _below_line(below, config)
        terminalreporter.write_line(f"acpref: findings of the peers under test {line}")


class _Launched:
    """The drivers a test started, and what their agents may break unnoticed (``ignore``)."""

    def __init__(self, request: Any) -> None:
        self.drivers: List[Any] = []
        self.config = request.config
        self.levels = _levels(request.config)
        #: The verdict once given (the drivers are closed then): given once, reported once.
        self.given: Optional[List[str]] = None
        self.reported = False
        request.node.stash.setdefault(_LAUNCHED, []).append(self)

    def add(
        self,
        driver: "AgentDriver",
        ignore: Sequence[str],
        warnings: bool,
        fail_on: Sequence[str] = (),
    ) -> "AgentDriver":
        unknown = [level for level in fail_on if level not in _FAIL_ON]
        if unknown or isinstance(fail_on, str):
            driver.close()
            raise ValueError(
                f"fail_on takes a sequence of levels among {', '.join(_FAIL_ON)}: {fail_on!r}"
            )
        self.drivers.append((driver, tuple(ignore), warnings, tuple(fail_on)))
        return driver

    def verdict(self) -> Optional[str]:
        """What the agents broke that fails the test (``None``: nothing); the drivers closed."""
        if self.given is None:
            self.given = []
            for driver, ignore, warnings, fail_on in self.drivers:
                self.given.extend(self._judge(driver, ignore, warnings, fail_on))
        return "\n".join(self.given) or None

    def _judge(
        self, driver: Any, ignore: Sequence[str], warnings: bool, fail_on: Sequence[str]
    ) -> List[str]:
        from ..oracle._validate import format_finding, format_quote
        from ._conforms import problems

        messages: List[str] = []
        report = driver.close()
        levels = dict(self.levels, fail_on=self.levels["fail_on"] + tuple(fail_on))
        # ``warnings=True`` (the older spelling): every finding fails, whatever its level.
        found = problems(report, blame="agent", warnings=warnings, ignore=ignore, **levels)
        rest = [f.level for f in report.blamed("agent") if f not in found]
        _below(self.config, rest)
        if found:
            where = f" (transcript: {driver.transcript_path})" if driver.transcript_path else ""
            messages.append(f"the agent broke the ACP spec{where}:")
            for f in found:
                messages.append("  " + format_finding(f))
                messages.extend("  " + line for line in format_quote(f, shown=True))
            if rest:
                line = _below_line(rest, self.config)
                messages.append(f"  {line} (acpref validate lists them)")
            page = _html_beside(driver.transcript_path, report)
            if page:
                messages.append(f"  the transcript drawn, findings marked: {page}")
            tail = driver.stderr.strip().splitlines()[-5:]
            if tail:
                messages.append("  agent stderr ends:")
                messages.extend("    " + line for line in tail)
        return messages

    def teardown(self) -> None:
        """At the fixture's teardown: fail with the verdict, unless the test's failure did."""
        verdict = self.verdict()
        if verdict and not self.reported:
            pytest.fail(verdict, pytrace=False)


def _hide_own_frames(longrepr: Any) -> None:
    """Cut acpref's own frames from a failed test's traceback: the test's frames are what its
    author reads. As ``__tracebackhide__`` would, for a library that cannot mark every frame;
    the last frame, where the error was raised, keeps its location and its ``E`` lines only."""
    for reprtraceback, _, _ in getattr(longrepr, "chain", None) or ():
        entries = list(reprtraceback.reprentries)
        if not entries:
            continue
        kept = [e for e in entries[:-1] if not _own(e)]
        last = entries[-1]
        if _own(last) and hasattr(last, "lines"):
            last.lines = [line for line in last.lines if line.startswith("E ")]
            last.reprfuncargs = None
        reprtraceback.reprentries = [*kept, last]


def _own(entry: Any) -> bool:
    where = getattr(entry, "reprfileloc", None)
    path = os.path.abspath(str(where.path)) if where is not None else ""
    return path.startswith(_OWN + os.sep)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    """A test that failed while its agent broke the spec gets one report: the verdict first
    (the clause, its sentence, the evidence), then where the test stopped; no second report
    of the same defect at teardown."""
    launched = item.stash.get(_LAUNCHED, None)
    failed = (
        call.when == "call"
        and call.excinfo is not None
        and not call.excinfo.errisinstance(pytest.skip.Exception)
    )
    outcome: Any = yield
    if not (launched and failed):
        return
    _hide_own_frames(outcome.get_result().longrepr)
    verdicts = [v for v in (each.verdict() for each in launched) if v]
    if not verdicts:
        return
    for each in launched:
        each.reported = True
    report = outcome.get_result()
    # Where the test stopped: its own last frame, not acpref's.
    theirs = [e for e in call.excinfo.traceback if not str(e.path).startswith(_OWN + os.sep)]
    at = f" at {theirs[-1].path}:{theirs[-1].lineno + 1}" if theirs else ""
    report.longrepr = (
        "\n".join(verdicts) + f"\n\nthe test stopped{at}: {call.excinfo.exconly()}"
    )


@pytest.fixture
def acp_agent(tmp_path: Any, request: Any) -> Iterator[Callable[..., "AgentDriver"]]:
    """Start an agent under test: ``acp_agent(argv, *, cwd=None, env=None, ignore=(), fail_on=(),
    timeout=10.0, keep_updates=10_000, newer_spec=None)`` -> ``AgentDriver``. The test fails if
    the agent broke the spec: MUST and MUST NOT, the levels ``--acp-fail-on`` names, and those
    ``fail_on`` adds for this agent (``("SHOULD", "warning")``; ``warnings=True``: every finding).
    The transcript streams to disk and is judged as it passes; the driver keeps the last
    ``keep_updates`` updates of each session (``None``: all). ``newer_spec=True``: values no
    carried schema defines are warnings (default: ``--acp-newer-spec``). A command that cannot be
    started raises ``RuntimeError`` naming it, at the call."""
    launched = _Launched(request)

    def launch(
        argv: Sequence[str],
        *,
        cwd: Optional[str] = None,
        env: Optional[dict] = None,
        ignore: Sequence[str] = (),
        warnings: bool = False,
        timeout: float = 10.0,
        keep_updates: Optional[int] = 10_000,
        fail_on: Sequence[str] = (),
        newer_spec: Optional[bool] = None,
    ) -> "AgentDriver":
        from .._shell.process import cannot_start
        from ._driver import AgentDriver

        __tracebackhide__ = True
        problem = cannot_start(argv, cwd=cwd)
        if problem is not None:  # the environment's mistake, not a clause the agent broke
            raise RuntimeError(f"acp_agent: {problem}")
        transcript = tmp_path / f"agent-{len(launched.drivers) + 1}.jsonl"
        driver = AgentDriver.spawn(
            argv, cwd=cwd, env=env, transcript=transcript, timeout=timeout,
            keep_updates=keep_updates, newer_spec=_newer_spec(request.config, newer_spec),
        )
        return launched.add(driver, ignore, warnings, fail_on)

    yield launch
    launched.teardown()


@pytest.fixture
def acp_pair(tmp_path: Any, request: Any) -> Iterator[Callable[..., "AgentDriver"]]:
    """Serve an ``acpref.agent.Agent`` in this process: ``acp_pair(agent, *, ignore=(),
    fail_on=(), timeout=10.0, newer_spec=None)`` -> ``AgentDriver``. The test fails if the agent
    broke the spec (as ``acp_agent``)."""
    launched = _Launched(request)

    def pair(
        agent: "AgentUnderTest",
        *,
        ignore: Sequence[str] = (),
        warnings: bool = False,
        timeout: float = 10.0,
        fail_on: Sequence[str] = (),
        newer_spec: Optional[bool] = None,
    ) -> "AgentDriver":
        from ._pairs import memory_pair

        transcript = tmp_path / f"pair-{len(launched.drivers) + 1}.jsonl"
        newer = _newer_spec(request.config, newer_spec)
        driver = memory_pair(agent, transcript=transcript, timeout=timeout, newer_spec=newer)
        return launched.add(driver, ignore, warnings, fail_on)

    yield pair
    launched.teardown()


class ClientCheck:
    """A scripted grading agent for a client under test: launch ``argv`` as the client's agent."""

    def __init__(self, report_path: str, *, newer_spec: bool = False) -> None:
        self.report_path = report_path
        #: The client is built on a newer spec: values no carried schema defines are warnings
        #: (default: ``--acp-newer-spec``); set it before launching ``argv``.
        self.newer_spec = newer_spec
        self.ignore: Sequence[str] = ()
        #: Levels that fail this check besides MUST and ``--acp-fail-on``'s (``("SHOULD",)``).
        self.fail_on: Sequence[str] = ()

    @property
    def argv(self) -> List[str]:
        """The agent command for the client under test."""
        argv = [sys.executable, "-m", "acpref", "check-client", "--serve", self.report_path]
        return argv + ["--newer-spec"] if self.newer_spec else argv

    def report(self, timeout: float = 10.0) -> "CheckReport":
        """The report; waits (up to ``timeout``) for a grading agent still writing it."""
        from ._check_client import read_client_report

        report = read_client_report(self.report_path)
        if not report.final and report.pid:
            _wait_pid(report.pid, timeout)
            report = read_client_report(self.report_path)
        return report


@pytest.fixture
def acp_client_check(tmp_path: Any, request: Any) -> Iterator[ClientCheck]:
    """A grading agent for a client under test; the test fails at teardown on a MUST failure."""
    check = ClientCheck(
        os.fspath(tmp_path / "client-report.json"), newer_spec=_newer_spec(request.config, None)
    )
    yield check
    if not os.path.exists(check.report_path):
        pytest.fail(
            f"the client never started the grading agent ({' '.join(check.argv)})", pytrace=False
        )
    report = check.report()
    levels = _levels(request.config)
    levels["fail_on"] += tuple(check.fail_on)
    failed = [r for r in report.failing(**levels) if r.clause not in check.ignore]
    _below(request.config, [r.level for r in report.failed() if r not in failed])
    if failed:
        full = bool(request.config.getoption("acp_full_table", default=False))
        text = report.format_text(full=full, **levels)
        page = _client_html(check.report_path, report.transcripts)
        drawn = f"\nthe transcripts drawn, findings marked: {page}" if page else ""
        pytest.fail("the client broke the ACP spec:\n" + text + drawn, pytrace=False)


def _client_html(report_path: str, transcripts: Sequence[str]) -> Optional[str]:
    """The grading agent's transcripts as one HTML report beside its JSON report."""
    present = [t for t in transcripts if os.path.exists(t)]
    if not present:
        return None
    from .._tools.show_html import write_report

    page = os.path.splitext(report_path)[0] + ".html"
    try:
        return write_report(page, [(os.path.basename(t), t, None) for t in present])
    except (OSError, ValueError):
        return None


def _html_beside(transcript: Optional[str], report: Any) -> Optional[str]:
    """Write the HTML report of a failed test's transcript beside it; its path, or None."""
    if not transcript:
        return None
    from .._tools.show_html import write_report

    page = os.path.splitext(transcript)[0] + ".html"
    try:
        return write_report(page, [(os.path.basename(transcript), transcript, report)])
    except (OSError, ValueError):
        return None  # the verdict matters more than its picture


def _wait_pid(pid: int, timeout: float) -> None:
    """Wait for a process that is not our child to end (pidfd where the OS has it)."""
    try:
        fd = os.pidfd_open(pid)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)  # no pidfd: the only portable wait for a non-child process
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll(int(timeout * 1000))
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
