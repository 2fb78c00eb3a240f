"""What a ``check-agent`` scenario works with: the options, its context, the scenario record.

A scenario (``_agent_scenarios`` and its siblings) is a function of a ``ScenarioContext``: the
driver of a fresh agent process, the options, and the report every verdict goes into, through
``record`` (which refuses a clause the scenario does not declare).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Set, Tuple

import attrs

from ..errors import ErrorCode, RpcError
from ._driver import AgentDriver, Turn
from ._results import FAIL, PASS, SKIPPED, CheckReport

__all__ = [
    "AgentCheckOptions",
    "NeedsAuth",
    "NotReached",
    "Scenario",
    "ScenarioContext",
    "AUTH_HINT",
    "BUSY_HINT",
    "REFUSED_HINT",
    "META",
    "round_trip",
]


DEFAULT_PROMPT = "Hello from acpref check-agent: please answer with one short sentence. (\u00e9\u00e8 \u65e5\u672c \U0001f642)"

#: A prompt that keeps a real model busy for a while: the cancellation checks cancel it.
DEFAULT_BUSY_PROMPT = (
    "acpref check-agent: please count from 1 to 400, one number per line, and after every tenth "
    "number write one sentence about it. Do not use any tool."
)


@attrs.frozen(kw_only=True)
class AgentCheckOptions:
    """How to drive the agent. ``cancel_prompt`` should keep the agent busy for a while."""

    prompt: str = DEFAULT_PROMPT
    cancel_prompt: Optional[str] = None
    #: A prompt that asks for a file read, a command and a file write, sent to the agent by a
    #: client that advertises no capability (default: ``TOOLS_PROMPT`` of the scenarios);
    #: ``{path}`` in it names a file of the session's directory.
    tools_prompt: Optional[str] = None
    #: A prompt that asks the agent to read the file ``CWD_FILE`` by its relative name, sent in
    #: a session whose cwd is not the directory the agent was started in (default:
    #: ``CWD_PROMPT`` of ``_cwd_scenarios``, the echo agent's ``/read``); ``{file}`` in it is
    #: replaced by the file's name.
    cwd_prompt: Optional[str] = None
    auth_method: Optional[str] = None
    timeout: float = 30.0
    #: The directory sessions are opened in (default: a fresh temporary directory).
    cwd: Optional[str] = None
    #: Where to keep one transcript per scenario (default: not kept).
    record_dir: Optional[str] = None
    #: Run only these scenarios (default: all).
    only: Sequence[str] = ()
    env: Optional[Dict[str, str]] = None
    #: Seconds a busy turn may run before it is cancelled when it shows no sign of life first.
    cancel_after: float = 3.0
    #: Seconds after ``session/cancel`` past which a turn that did not end ``cancelled`` is
    #: reported as having ignored the cancel (spec-gap cancel-ignored).
    cancel_grace: float = 5.0
    #: Seconds to wait for the agent to initialize the MCP servers it was given, after
    #: ``session/new`` and again after a prompt turn.
    mcp_wait: float = 5.0
    #: Print progress on stderr (each scenario as it starts and ends, with its time); the
    #: command line's default, off for the library and the pytest plugin.
    progress: bool = False
    #: The agent is built on a newer spec than the one acpref carries: a value that no closed set
    #: of the carried schemas defines (a ``stopReason``, a tool call ``status``...) is a
    #: warning, not a failure (``--newer-spec``; spec_notes/decisions.md, undefined-value).
    newer_spec: bool = False


class NeedsAuth(Exception):
    """The agent answered auth_required (-32000) and no ``auth_method`` was given."""


class NotReached(Exception):
    """A request the scenario needs on its way was answered with an error: what comes after it
    cannot be checked (SKIPPED, with the answer as the reason; see ``ScenarioContext.step``)."""

    def __init__(self, answer: str) -> None:
        super().__init__(f"{answer}; {REFUSED_HINT}")
        self.answer = answer


#: The error codes that refuse a request as the protocol defines it: the method unknown, the
#: request or its params unreadable (schema.json ErrorCode). Any other error (-32603 Internal
#: error, an implementation's own -32099..-32000) is the agent failing to serve it here: its
#: model unreachable, its environment refused.
_PROTOCOL_REFUSALS = (
    ErrorCode.METHOD_NOT_FOUND,
    ErrorCode.INVALID_REQUEST,
    ErrorCode.INVALID_PARAMS,
)


class ScenarioContext:
    """What a scenario works with: its driver, the options, and the report to fill.

    Every verdict goes through ``record`` (``check``, ``passed``, ``skip``), which refuses a
    clause the scenario does not declare: that is what keeps the clause list of a run the same
    whatever the agent does. ``at`` names the clauses the next requests decide, which fail if the
    agent answers them with an unexpected error.
    """

    def __init__(
        self,
        scenario: "Scenario",
        driver: AgentDriver,
        options: AgentCheckOptions,
        report: CheckReport,
        cwd: str,
        *,
        restart: Optional[Callable[[AgentDriver], AgentDriver]] = None,
        spawn_dir: Optional[str] = None,
    ) -> None:
        self.scenario = scenario
        self.name = scenario.name
        self.driver = driver
        self.options = options
        self.report = report
        self.cwd = cwd
        #: The directory the agent process was started in, when the scenario chose it (``apart``).
        self.spawn_dir = spawn_dir
        self.authenticated = False
        self.decided: Set[str] = set()
        self.current: Tuple[str, ...] = (scenario.main,)
        self._restart = restart

    def restart(self) -> None:
        """End the agent process (its input closed, its findings filed) and start a new one,
        not yet initialized: what a client does when the user reopens the editor."""
        if self._restart is None:
            raise RuntimeError("this context cannot restart the agent")
        self.driver = self._restart(self.driver)
        self.authenticated = False

    @property
    def cancel_prompt(self) -> str:
        return self.options.cancel_prompt or DEFAULT_BUSY_PROMPT

    def at(self, *clause_ids: str) -> None:
        """The clauses an unexpected error of the next requests fails (until the next ``at``)."""
        self.current = clause_ids

    def record(self, clause: str, status: str, evidence: Optional[str] = None) -> None:
        if clause not in self.scenario.clauses:
            raise ValueError(f"scenario {self.name!r} decides {clause} but does not declare it")
        self.decided.add(clause)
        self.report._record(clause, status, self.name, evidence)

    def check(self, clause: str, ok: bool, evidence: str = "") -> bool:
        """Record a verdict: PASS when ``ok``, else FAIL with ``evidence``."""
        self.record(clause, PASS if ok else FAIL, None if ok else evidence)
        return ok

    def passed(self, *clause_ids: str) -> None:
        for clause in clause_ids:
            self.record(clause, PASS)

    def skip(self, clause: str, reason: str) -> None:
        self.record(clause, SKIPPED, reason)

    def initialize(self) -> None:
        self.driver.initialize()

    def authenticate(self) -> None:
        """``authenticate`` with ``--auth METHOD_ID``, once, when it was given."""
        if self.options.auth_method and not self.authenticated:
            self.driver.request("authenticate", {"methodId": self.options.auth_method})
            self.authenticated = True

    def new_session(self, *, judged: bool = False, **kwargs: object) -> str:
        """``session/new`` in the check's directory, authenticating first if told to.

        A step (see ``step``): ``judged`` when the scenario checks session/new itself."""
        self.authenticate()
        with self.step("session/new", judged=judged):
            return self.driver.new_session(self.cwd, **kwargs)  # type: ignore[arg-type]

    def prompt(self, session_id: str, *content: Any, judged: bool = False) -> Turn:
        """One prompt turn, as a step (see ``step``)."""
        with self.step("session/prompt", judged=judged):
            return self.driver.prompt(session_id, *content)

    @contextlib.contextmanager
    def step(self, method: str, *, judged: bool = False) -> Iterator[None]:
        """A request on the scenario's way to what it checks, answered with an error.

        No clause forbids an error answer in general: a session the agent cannot open in this
        environment, a turn whose model cannot be reached, break nothing, and the clauses after
        them are not reached (``NotReached``). Only when the scenario checks the request itself
        (``judged``) does a protocol refusal (unknown method, unreadable request or params, for
        a well-formed request of a method every agent serves) fail the clauses of ``at``.
        -32000 keeps its own path (``NeedsAuth``, RPC-16).
        """
        try:
            yield
        except RpcError as exc:
            if exc.code == ErrorCode.AUTH_REQUIRED or (judged and exc.code in _PROTOCOL_REFUSALS):
                raise
            raise NotReached(f"{method} answered error {exc.code}: {exc.detail}") from None


@attrs.frozen
class Scenario:
    """One scripted conversation, on a fresh agent process."""

    name: str
    run: Callable[[ScenarioContext], None]
    #: Every clause it decides: each ends PASS, FAIL or SKIPPED, whatever the agent does.
    clauses: Sequence[str]
    #: The agent capability it needs, as a dotted path (``"loadSession"``), or None.
    needs: Optional[str] = None
    #: The clause an unexpected failure of the scenario is filed under (until ``ctx.at``).
    main: str = "OVERVIEW-01"
    #: Start the agent in a scratch directory of its own and open sessions in another
    #: (``ctx.spawn_dir``, ``ctx.cwd``), both fresh, whatever ``--cwd`` says (SETUP-26).
    apart: bool = False


#: The marker of a reason that ``--auth`` would turn into a verdict (see ``_hints``).
AUTH_HINT = "rerun with --auth METHOD_ID"
#: The marker of a reason that a busier ``--cancel-prompt`` would turn into a verdict.
BUSY_HINT = "give --cancel-prompt a prompt that keeps the agent busy longer"
#: The marker of a reason that the agent refused a request the check needed (``NotReached``).
REFUSED_HINT = "the check needs it to succeed (see the agent's stderr)"

#: ``_meta`` values no agent defines: they must never cause an error (EXT-02).
META = {"acpref.dev/check": {"any": ["thing", 1, None], "\u00e9": "\u65e5\u672c"}}


def round_trip(ctx: ScenarioContext) -> Dict[str, Any]:
    """A request every agent answers at once (an unknown custom method): a point in time."""
    return ctx.driver.request_raw({"method": "_acpref/ping", "params": {}})
