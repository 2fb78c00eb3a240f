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

Only MUST / MUST NOT findings fail a test, each printed with the spec's sentence and the offending
message's index; ``spec-gap`` findings (acpref's own readings) fail too with ``--acp-strict-gaps``,
SHOULD / MAY findings with ``--acp-fail-on SHOULD`` / ``MAY``. The end of the run says how many
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
        help="fail tests on findings of LEVEL too: SHOULD (and SHOULD NOT), MAY or spec-gap "
        "(repeatable; MUST always fails, forward-compatibility warnings never do)",
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
_FAIL_ON = ("MAY", "SHOULD", "spec-gap")
_FLAGS = {
    "SHOULD": "--acp-fail-on SHOULD",
    "SHOULD NOT": "--acp-fail-on SHOULD",
    "MAY": "--acp-fail-on MAY",
    "spec-gap": "--acp-strict-gaps",
}
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

    def add(self, driver: "AgentDriver", ignore: Sequence[str], warnings: bool) -> "AgentDriver":
        self.drivers.append((driver, tuple(ignore), warnings))
        return driver

    def verdict(self) -> Optional[str]:
        from ..oracle._validate import format_finding, format_quote
        from ._conforms import problems

        messages = []
        for driver, ignore, warnings in self.drivers:
            report = driver.close()
            found = problems(report, blame="agent", warnings=warnings, ignore=ignore, **self.levels)
            rest = [f.level for f in report.blamed("agent") if f not in found]
            _below(self.config, rest)
            if found:
                where = f" (transcript: {driver.transcript_path})" if driver.transcript_path else ""
                messages.append(f"the agent broke the ACP spec{where}:")
                for f in found:
                    messages.append("  " + format_finding(f))
                    messages.extend("  " + line for line in format_quote(f))
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
        return "\n".join(messages) or None


@pytest.fixture
def acp_agent(tmp_path: Any, request: Any) -> Iterator[Callable[..., "AgentDriver"]]:
    """Start an agent under test: ``acp_agent(argv, *, cwd=None, env=None, ignore=(), warnings=False,
    timeout=10.0, keep_updates=10_000, newer_spec=None)`` -> ``AgentDriver``. The test fails at
    teardown if the agent broke the spec. The transcript streams to disk and is judged as it
    passes; the driver keeps the last ``keep_updates`` updates of each session (``None``: all).
    ``newer_spec=True``: values no carried schema defines are warnings (default:
    ``--acp-newer-spec``)."""
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
        newer_spec: Optional[bool] = None,
    ) -> "AgentDriver":
        from ._driver import AgentDriver

        transcript = tmp_path / f"agent-{len(launched.drivers) + 1}.jsonl"
        driver = AgentDriver.spawn(
            argv, cwd=cwd, env=env, transcript=transcript, timeout=timeout,
            keep_updates=keep_updates, newer_spec=_newer_spec(request.config, newer_spec),
        )
        return launched.add(driver, ignore, warnings)

    yield launch
    verdict = launched.verdict()
    if verdict:
        pytest.fail(verdict, pytrace=False)


@pytest.fixture
def acp_pair(tmp_path: Any, request: Any) -> Iterator[Callable[..., "AgentDriver"]]:
    """Serve an ``acpref.agent.Agent`` in this process: ``acp_pair(agent, *, ignore=(),
    warnings=False, timeout=10.0, newer_spec=None)`` -> ``AgentDriver``. The test fails at
    teardown if the agent broke the spec."""
    launched = _Launched(request)

    def pair(
        agent: "AgentUnderTest",
        *,
        ignore: Sequence[str] = (),
        warnings: bool = False,
        timeout: float = 10.0,
        newer_spec: Optional[bool] = None,
    ) -> "AgentDriver":
        from ._pairs import memory_pair

        transcript = tmp_path / f"pair-{len(launched.drivers) + 1}.jsonl"
        newer = _newer_spec(request.config, newer_spec)
        driver = memory_pair(agent, transcript=transcript, timeout=timeout, newer_spec=newer)
        return launched.add(driver, ignore, warnings)

    yield pair
    verdict = launched.verdict()
    if verdict:
        pytest.fail(verdict, pytrace=False)


class ClientCheck:
    """A scripted grading agent for a client under test: launch ``argv`` as the client's agent."""

    def __init__(self, report_path: str, *, newer_spec: bool = False) -> None:
        self.report_path = report_path
        #: The client is built on a newer spec: values no carried schema defines are warnings
        #: (default: ``--acp-newer-spec``); set it before launching ``argv``.
        self.newer_spec = newer_spec
        self.ignore: Sequence[str] = ()

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
    from .._show_html import write_report

    page = os.path.splitext(report_path)[0] + ".html"
    try:
        return write_report(page, [(os.path.basename(t), t, None) for t in present])
    except (OSError, ValueError):
        return None


def _html_beside(transcript: Optional[str], report: Any) -> Optional[str]:
    """Write the HTML report of a failed test's transcript beside it; its path, or None."""
    if not transcript:
        return None
    from .._show_html import write_report

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
