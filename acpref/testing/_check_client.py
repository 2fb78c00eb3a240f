"""``check-client``: a scripted acpref agent that grades the client which launched it.

Configure the client under test to launch ``acpref check-client --serve REPORT.json`` as its
agent, then use it: each prompt runs the next step of the script (``_client_steps``), which
drives the client through what it must handle (permission requests, file reads and writes,
terminals, elicitation, custom methods, cancellation with a permission pending, load replay) and
tells the user, in agent messages, what to do next. Everything the client sends is recorded
(``REPORT.jsonl`` beside the report) and judged by the oracle as it arrives.

The report is written after each step and when the client disconnects; ``acpref check-client
--report REPORT.json`` prints it. Verdicts merge across runs with the same report file (the
sessions persist beside it, so that a restarted client can load one); delete the report to start
over. Steps the client's capabilities rule out are checked the other way round: the client must
refuse the unadvertised method with -32601 (RPC-12), which needs a request no conforming agent
would send, so the script writes it raw.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Optional

from .. import __version__
from .._shell import groups as _groups
from .. import schema as s
from .._shell.transport import FdStream
from ..agent import Agent, AgentSideConnection, ClientHandle, PromptTurn, SessionRegistry
from ..errors import RequestTimeout
from ._client_steps import STEP_CLAUSES, STEPS, say
from ._deadlines import Stalled
from ._grader import Grader
from ._recording import RecordingStream, RecordSink
from ._results import CheckReport

__all__ = ["serve_check_client", "read_client_report", "GraderAgent", "Grader"]

#: Clauses every session exercises; PASS unless the oracle finds them broken.
_ALWAYS = (
    "INIT-01",
    "INIT-02",
    "INIT-03",
    "TRANSPORT-09",
    "RPC-01",
    "RPC-04",
    "RPC-05",
    "OVERVIEW-01",
)
_ON_SESSION = ("SETUP-01", "SETUP-25", "SETUP-32")
_ON_PROMPT = ("PROMPT-01", "PROMPT-02", "PROMPT-03")


class GraderAgent(Agent):
    """The scripted agent: each prompt runs the next step of ``_client_steps.STEPS``."""

    info = s.Implementation(
        name="acpref-check-client", title="acpref client check", version=__version__
    )

    def __init__(
        self,
        client: ClientHandle,
        grader: Grader,
        stream: RecordingStream,
        sessions: SessionRegistry,
    ) -> None:
        super().__init__(client, sessions)
        # Every typed request to the client waits at most the grader's timeout, and a kind of
        # request that got no answer is not sent again (Grader.deadline).
        client._connection = _Deadlines(client._connection, grader)  # type: ignore[assignment]
        self.grader = grader
        self.stream = stream
        self._step = 0
        self._step_lock = threading.Lock()

    def initialize(self, params: s.InitializeRequest) -> s.InitializeResponse:
        self.grader.passed(*_ALWAYS)
        return super().initialize(params)

    def session_new(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        self.grader.passed(*_ON_SESSION)
        return super().session_new(params)

    def session_load(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        self.grader.scenario = "load"
        # spec SETUP-03, SETUP-04, SETUP-22: judged by the oracle; reaching here means it was sent.
        self.grader.passed("SETUP-03", "SETUP-04", "SETUP-22")
        response = super().session_load(params)
        self.grader.save()
        return response

    def session_prompt(self, params: s.PromptRequest, turn: PromptTurn) -> s.PromptResponse:
        self.grader.passed(*_ON_PROMPT)
        turn._connection = _Deadlines(turn._connection, self.grader)  # type: ignore[assignment]
        with self._step_lock:
            step = STEPS[self._step] if self._step < len(STEPS) else None
            self._step += 1
        if step is None:
            say(turn, f"All checks are done. The report is in {self.grader.path}.")
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
        name = self.grader.scenario = step.__name__.strip("_")
        self.grader.running = name
        self.grader.deadlines.part = f"step {name!r}"
        self.grader.progress(f"step {name!r} ...")
        began = time.monotonic()
        try:
            return step(self, turn)
        except (RequestTimeout, Stalled) as exc:
            # The client stopped answering: what the step had left is not reached, and says
            # which request it waited for (not "too few prompts").
            why = f"not reached: step {name!r} was running when the client stopped answering: {exc}"
            for clause in STEP_CLAUSES.get(name, ()):
                if not self.grader.decided(clause):
                    self.grader.skip(clause, why)
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
        finally:
            self.grader.running = None
            self.grader.progress(f"step {name!r} done in {time.monotonic() - began:.1f}s")
            self.grader.save()


class _Deadlines:
    """A connection of the agent side, with a deadline on every request (``Grader.deadline``):
    what ``ClientHandle`` and ``PromptTurn`` send to the client through it."""

    def __init__(self, connection: Any, grader: Grader) -> None:
        self._connection = connection
        self._grader = grader

    def request_async(self, method: str, params: Any = None) -> "_Pending":
        self._grader.deadline(method)  # Stalled, unsent, when its kind got no answer
        return _Pending(self._connection.request_async(method, params), method, self._grader)

    def request(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        return self.request_async(method, params).result(timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


class _Pending:
    """A request in flight whose wait is bounded by the grader's timeout."""

    def __init__(self, pending: Any, method: str, grader: Grader) -> None:
        self._pending = pending
        self._method = method
        self._grader = grader

    def result(self, timeout: Optional[float] = None) -> Any:
        wait = self._grader.timeout if timeout is None else min(timeout, self._grader.timeout)
        try:
            return self._pending.result(wait)
        except RequestTimeout:
            self._grader.stalled_on(self._method, wait)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pending, name)


def serve_check_client(
    report_path: str, *, timeout: float = 300.0, progress: bool = False, newer_spec: bool = False
) -> int:
    """Serve the scripted agent on stdio until the client disconnects; write the report.

    Each request to the client waits at most ``timeout`` seconds (a person answers the
    permission requests); ``progress`` prints each step and part on stderr. ``newer_spec``: the
    client is built on a newer spec; a value no carried schema defines is a warning, not a
    failure (``--newer-spec``)."""
    report_path = os.path.abspath(report_path)
    base = report_path[:-5] if report_path.endswith(".json") else report_path
    protocol_out = os.dup(1)
    os.dup2(2, 1)  # spec TRANSPORT-08: nothing but protocol on the real stdout
    sys.stdout = sys.stderr
    sink = RecordSink(
        "agent", f"{base}.jsonl", header={"check": "client", "subject": "client"},
        newer_spec=newer_spec,
    )
    grader = Grader(report_path, sink, timeout=timeout, progress=progress)
    stream = RecordingStream(FdStream(0, protocol_out, write_timeout=None), sink)
    sessions = SessionRegistry(state_dir=f"{base}.sessions")

    def factory(client: ClientHandle) -> Agent:
        return GraderAgent(client, grader, stream, sessions)

    side = AgentSideConnection(factory, stream, name="check-client")
    grader.save()
    side.start()
    _groups.install_stop_signals()  # SIGTERM, SIGHUP: close as on Ctrl-C, the report written
    try:
        side.wait_closed()
    except KeyboardInterrupt:
        side.close()
    grader.not_reached(STEP_CLAUSES)
    grader.save(final=True)
    return 0


def read_client_report(path: str) -> CheckReport:
    """The report a ``check-client --serve`` run wrote."""
    with open(path, encoding="utf-8") as f:
        return CheckReport.from_json(json.load(f))
