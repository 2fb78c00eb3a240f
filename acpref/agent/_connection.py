"""The agent side of a connection: serves an ``Agent``, and gives it a typed handle on the client.

Spec: initialization.mdx, authentication.mdx, session-setup.mdx, prompt-turn.mdx,
cancellation.mdx, transports.mdx; clauses cited where enforced. Decisions: spec_notes/decisions.md.

What the connection does around the implementer's ``Agent`` methods:

* **Rules both ways** (``acpref._rules``): a client request that breaks a MUST rule is answered
  with the error its clause names before any agent code runs (a session method before
  ``initialize``, an unadvertised method, a relative ``cwd``, prompt content beyond
  ``promptCapabilities``, an unknown session, a second prompt while one runs); anything the agent
  is about to send that breaks one (an fs/terminal/elicitation call the client did not advertise,
  a boolean config option for a client without support, an update after its turn ended) raises
  ``LocalProtocolError`` and nothing is sent.
* **initialize**: the version is negotiated here: 1 answers 1, anything else answers our newest
  (1), never an error (INIT-07, INIT-08); the client's capabilities are remembered.
* **authentication**: with ``Agent.auth_required``, session methods answer -32000 until
  ``authenticate`` succeeds, and again after ``logout`` (RPC-16, AUTH-10, AUTH-17).
* **turns**: one ``PromptTurn`` per ``session/prompt``; ``session/cancel``, ``$/cancel_request``
  on the prompt, and ``session/close`` set its ``cancelled`` flag; a cancelled turn is answered
  ``stopReason: "cancelled"`` whatever the agent returned or raised (PROMPT-23, PROMPT-24); the
  turn is closed before its response is written, so no update of it can follow (PROMPT-26).
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import attrs

from .. import schema as s
from .._rules import Party, RulesObserver, gate_open
from .._rules.findings import Finding
from .._transport import FdStream, Stream
from ..connection import Connection, PendingRequest, Recorder, RequestContext
from ..errors import ConnectionClosed, LocalProtocolError, RpcError
from ..methods import AGENT_METHODS, PROTOCOL_VERSION
from ..schema import UNSET
from ._interface import Agent
from ._sessions import SessionRegistry

__all__ = ["AgentSideConnection", "ClientHandle", "PromptTurn", "TerminalHandle", "serve_stdio"]

log = logging.getLogger("acpref.agent")

#: Methods that need a successful ``authenticate`` first when the agent requires it (RPC-16).
_AUTH_GATED = frozenset(
    {
        "session/new",
        "session/load",
        "session/resume",
        "session/list",
        "session/delete",
        "session/close",
        "session/set_mode",
        "session/set_config_option",
        "session/prompt",
    }
)


class ClientHandle:
    """Typed calls from the agent to the client, named after meta.json's ``clientMethods`` keys.

    Each call is refused before sending (``LocalProtocolError`` naming the clause) when the client
    did not advertise it: ``fs/*`` (FS-01, FS-02), ``terminal/*`` (TERM-01), an elicitation mode
    (ELICIT-06). ``timeout`` bounds the wait; ``None`` waits until the answer or the connection ends.
    """

    def __init__(self, connection: Connection, observer: RulesObserver) -> None:
        self._connection = connection
        self._observer = observer
        self.capabilities: s.ClientCapabilities = s.ClientCapabilities()
        self.info: Optional[s.Implementation] = None

    def supports(self, gate: str) -> bool:
        """True when the client advertised the capability path ``gate`` (e.g. ``"fs.readTextFile"``)."""
        return gate_open(gate, self._observer.state.client_caps)

    # -- notifications ---------------------------------------------------------------------------

    def session_update(self, params: s.SessionNotification) -> None:
        self._connection.notify("session/update", params)

    def update(self, session_id: str, update: Any) -> None:
        """Send one ``session/update`` for ``session_id``."""
        self.session_update(s.SessionNotification(session_id=session_id, update=update))

    def elicitation_complete(self, params: s.CompleteElicitationNotification) -> None:
        self._connection.notify("elicitation/complete", params)

    def ext_notification(self, method: str, params: Any = None) -> None:
        self._connection.notify(method, params)

    # -- requests --------------------------------------------------------------------------------

    def session_request_permission(
        self, params: s.RequestPermissionRequest, *, timeout: Optional[float] = None
    ) -> s.RequestPermissionResponse:
        return self._connection.request("session/request_permission", params, timeout=timeout)

    def fs_read_text_file(self, params: s.ReadTextFileRequest, *, timeout: Optional[float] = None) -> s.ReadTextFileResponse:
        return self._connection.request("fs/read_text_file", params, timeout=timeout)

    def fs_write_text_file(
        self, params: s.WriteTextFileRequest, *, timeout: Optional[float] = None
    ) -> s.WriteTextFileResponse:
        return self._connection.request("fs/write_text_file", params, timeout=timeout)

    def terminal_create(
        self, params: s.CreateTerminalRequest, *, timeout: Optional[float] = None
    ) -> s.CreateTerminalResponse:
        return self._connection.request("terminal/create", params, timeout=timeout)

    def terminal_output(
        self, params: s.TerminalOutputRequest, *, timeout: Optional[float] = None
    ) -> s.TerminalOutputResponse:
        return self._connection.request("terminal/output", params, timeout=timeout)

    def terminal_release(
        self, params: s.ReleaseTerminalRequest, *, timeout: Optional[float] = None
    ) -> s.ReleaseTerminalResponse:
        return self._connection.request("terminal/release", params, timeout=timeout)

    def terminal_wait_for_exit(
        self, params: s.WaitForTerminalExitRequest, *, timeout: Optional[float] = None
    ) -> s.WaitForTerminalExitResponse:
        return self._connection.request("terminal/wait_for_exit", params, timeout=timeout)

    def terminal_kill(self, params: s.KillTerminalRequest, *, timeout: Optional[float] = None) -> s.KillTerminalResponse:
        return self._connection.request("terminal/kill", params, timeout=timeout)

    def elicitation_create(
        self, params: s.CreateElicitationRequest, *, timeout: Optional[float] = None
    ) -> s.CreateElicitationResponse:
        return self._connection.request("elicitation/create", params, timeout=timeout)

    def ext_method(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """A custom ``_``-prefixed request (spec EXT-05, EXT-06); the raw JSON result."""
        return self._connection.request(method, params, timeout=timeout)

    def request_async(self, method: str, params: Any) -> PendingRequest:
        return self._connection.request_async(method, params)


@attrs.define
class TerminalHandle:
    """A client terminal created in a turn; release it when done (spec TERM-07)."""

    turn: "PromptTurn"
    terminal_id: str
    released: bool = False

    def output(self) -> s.TerminalOutputResponse:
        return self.turn._call(
            "terminal/output", s.TerminalOutputRequest(session_id=self.turn.session_id, terminal_id=self.terminal_id)
        )

    def wait_for_exit(self, timeout: Optional[float] = None) -> s.WaitForTerminalExitResponse:
        return self.turn._call(
            "terminal/wait_for_exit",
            s.WaitForTerminalExitRequest(session_id=self.turn.session_id, terminal_id=self.terminal_id),
            timeout=timeout,
        )

    def kill(self) -> None:
        self.turn._call("terminal/kill", s.KillTerminalRequest(session_id=self.turn.session_id, terminal_id=self.terminal_id))

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.turn._call(
                "terminal/release", s.ReleaseTerminalRequest(session_id=self.turn.session_id, terminal_id=self.terminal_id)
            )


class PromptTurn:
    """One running ``session/prompt``: stream its updates, call the client, see cancellation.

    ``cancelled`` is set by ``session/cancel``, by ``$/cancel_request`` aimed at the prompt, by
    ``session/close`` and by the connection ending. Calls to the client made through the turn
    (other than permission requests, which the client answers ``cancelled`` itself, PROMPT-21)
    are cancelled with ``$/cancel_request`` when the turn is (CANCEL-08).
    """

    def __init__(self, side: "AgentSideConnection", session_id: str, ctx: RequestContext) -> None:
        self._side = side
        self.session_id = session_id
        self.request_id = ctx.id
        self.cancelled: threading.Event = ctx.cancelled
        self._lock = threading.Lock()
        self._ended = False
        self._pending: List[PendingRequest] = []
        self._message_ids = itertools.count(1)
        self._message_prefix = f"msg_{os.urandom(4).hex()}"

    @property
    def client(self) -> ClientHandle:
        return self._side.client

    @property
    def ended(self) -> bool:
        return self._ended

    def new_message_id(self) -> str:
        """A fresh, opaque message id for the chunks of one message (PROMPT-07, SETUP-06)."""
        return f"{self._message_prefix}_{next(self._message_ids)}"

    def update(self, update: Any) -> None:
        """Send a session update of this turn, and record it for ``session/load``."""
        with self._lock:
            if self._ended:
                # spec PROMPT-26: nothing of a turn after its session/prompt response.
                raise LocalProtocolError("PROMPT-26", "this prompt turn has ended; its updates can no longer be sent")
            self._side.client.update(self.session_id, update)
        session = self._side.agent.sessions.get(self.session_id)
        if session is not None:
            self._side.agent.sessions.record(session, update)

    def cancel(self) -> None:
        """Flag the turn cancelled, and cancel its outstanding client calls (CANCEL-08)."""
        self.cancelled.set()
        with self._lock:
            pending = list(self._pending)
        for p in pending:
            p.cancel()

    # -- client calls bound to this turn's session -----------------------------------------------

    def _call(self, method: str, params: Any, *, timeout: Optional[float] = None, cascade: bool = True) -> Any:
        pending = self._side.connection.request_async(method, params)
        if cascade:
            with self._lock:
                self._pending.append(pending)
            if self.cancelled.is_set():
                pending.cancel()
        try:
            return pending.result(timeout)
        finally:
            if cascade:
                with self._lock:
                    self._pending.remove(pending)

    def request_permission(
        self, tool_call: s.ToolCallUpdate, options: Sequence[s.PermissionOption], *, timeout: Optional[float] = None
    ) -> Any:
        """Ask the user; returns the outcome (``SelectedPermissionOutcome`` or cancelled)."""
        params = s.RequestPermissionRequest(session_id=self.session_id, tool_call=tool_call, options=list(options))
        return self._call("session/request_permission", params, timeout=timeout, cascade=False).outcome

    def read_text_file(self, path: str, *, line: Optional[int] = None, limit: Optional[int] = None) -> str:
        params = s.ReadTextFileRequest(
            session_id=self.session_id,
            path=path,
            line=line if line is not None else UNSET,
            limit=limit if limit is not None else UNSET,
        )
        return self._call("fs/read_text_file", params).content

    def write_text_file(self, path: str, content: str) -> None:
        self._call("fs/write_text_file", s.WriteTextFileRequest(session_id=self.session_id, path=path, content=content))

    def create_terminal(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        output_byte_limit: Optional[int] = None,
    ) -> TerminalHandle:
        params = s.CreateTerminalRequest(
            session_id=self.session_id,
            command=command,
            args=list(args),
            env=[s.EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
            cwd=cwd if cwd is not None else UNSET,
            output_byte_limit=output_byte_limit if output_byte_limit is not None else UNSET,
        )
        result = self._call("terminal/create", params)
        return TerminalHandle(turn=self, terminal_id=result.terminal_id)

    def elicit(self, request: s.CreateElicitationRequest, *, timeout: Optional[float] = None) -> s.CreateElicitationResponse:
        return self._call("elicitation/create", request, timeout=timeout)

    def _end(self) -> None:
        with self._lock:  # waits for an update being written right now (PROMPT-26)
            self._ended = True


class AgentSideConnection:
    """Serves one ``Agent`` over one stream (stdio, a socket, an in-memory pipe)."""

    def __init__(
        self,
        agent: Union[Agent, Callable[[ClientHandle], Agent]],
        stream: Stream,
        *,
        name: str = "agent",
        recorder: Optional[Recorder] = None,
        on_finding: Optional[Callable[[Finding], None]] = None,
        max_handlers: int = 64,
        max_line_bytes: Optional[int] = None,
    ) -> None:
        self.observer = RulesObserver(Party.AGENT, on_finding=on_finding)
        kwargs: Dict[str, Any] = {"max_handlers": max_handlers}
        if max_line_bytes is not None:
            kwargs["max_line_bytes"] = max_line_bytes
        self.connection = Connection(
            stream,
            fallback=self._fallback,
            name=name,
            recorder=recorder,
            observer=self.observer,
            on_close=lambda _c: self._on_close(),
            **kwargs,
        )
        self.client = ClientHandle(self.connection, self.observer)
        self.agent: Agent = agent(self.client) if not isinstance(agent, Agent) else agent
        if isinstance(agent, Agent):
            agent.client = self.client
        self._authenticated = False
        self._turns: Dict[str, PromptTurn] = {}
        self._turns_lock = threading.Lock()
        self._turn_done = threading.Condition(self._turns_lock)
        for method in AGENT_METHODS:
            handler = getattr(self, "_on_" + method.replace("/", "_"), None) or self._passthrough(method)
            self.connection.set_handler(method, handler)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> "AgentSideConnection":
        self.connection.start()
        return self

    def close(self) -> None:
        self.connection.close()

    def wait_closed(self, timeout: Optional[float] = None) -> bool:
        return self.connection.wait_closed(timeout)

    def _on_close(self) -> None:
        with self._turns_lock:
            turns = list(self._turns.values())
        for turn in turns:
            turn.cancel()

    # -- handlers --------------------------------------------------------------------------------

    def _check_auth(self, method: str) -> None:
        if self.agent.auth_required and not self._authenticated and method in _AUTH_GATED:
            # spec RPC-16, AUTH-17: authentication first (again after logout).
            raise RpcError.auth_required(f"{method} needs authentication first")

    def _passthrough(self, method: str) -> Callable[[Any, RequestContext], Any]:
        name = AGENT_METHODS[method].name.replace("/", "_")

        def handle(params: Any, ctx: RequestContext) -> Any:
            self._check_auth(method)
            return getattr(self.agent, name)(params)

        return handle

    def _on_initialize(self, params: s.InitializeRequest, ctx: RequestContext) -> s.InitializeResponse:
        self.client.capabilities = params.client_capabilities if params.client_capabilities is not UNSET else s.ClientCapabilities()
        self.client.info = params.client_info if isinstance(params.client_info, s.Implementation) else None
        response = self.agent.initialize(params)
        # spec INIT-07, INIT-08: requested 1 -> 1; any other -> our newest (1); never an error.
        return attrs.evolve(response, protocol_version=PROTOCOL_VERSION)

    def _on_authenticate(self, params: s.AuthenticateRequest, ctx: RequestContext) -> s.AuthenticateResponse:
        response = self.agent.authenticate(params)
        self._authenticated = True  # spec AUTH-10
        return response

    def _on_logout(self, params: s.LogoutRequest, ctx: RequestContext) -> s.LogoutResponse:
        response = self.agent.logout(params)
        self._authenticated = False  # spec AUTH-17
        return response

    def _on_session_close(self, params: s.CloseSessionRequest, ctx: RequestContext) -> s.CloseSessionResponse:
        self._check_auth("session/close")
        with self._turns_lock:
            turn = self._turns.get(params.session_id)
        if turn is not None:
            # spec SETUP-16: cancel the running turn as if session/cancel arrived, and let it end
            # (its response goes out first) before freeing the session.
            turn.cancel()
            with self._turns_lock:
                self._turn_done.wait_for(lambda: params.session_id not in self._turns, timeout=30.0)
        return self.agent.session_close(params)

    def _on_session_cancel(self, params: s.CancelNotification, ctx: RequestContext) -> None:
        with self._turns_lock:
            turn = self._turns.get(params.session_id)
        if turn is not None:
            turn.cancel()  # spec PROMPT-22: stop as soon as possible
        self.agent.session_cancel(params)

    def _on_session_prompt(self, params: s.PromptRequest, ctx: RequestContext) -> s.PromptResponse:
        self._check_auth("session/prompt")
        # The prompt answers cancellation itself, with stopReason "cancelled" (spec-gap
        # cancel-request-prompt: $/cancel_request on a prompt is treated as session/cancel).
        ctx.answer_on_cancel = False
        turn = PromptTurn(self, params.session_id, ctx)
        with self._turns_lock:
            if params.session_id in self._turns:
                # spec-gap concurrent-prompt: one turn at a time per session.
                raise RpcError(-32600, f"a prompt turn is already running in session {params.session_id!r}")
            self._turns[params.session_id] = turn
        try:
            session = self.agent.sessions.get(params.session_id)
            if session is not None:
                self.agent.sessions.record_prompt(session, params.prompt, turn.new_message_id())
            try:
                response = self.agent.session_prompt(params, turn)
            except Exception as exc:  # noqa: BLE001
                if not turn.cancelled.is_set():
                    raise
                # spec PROMPT-24: an abort exception after cancel becomes stopReason "cancelled".
                log.info("turn %s raised after cancel (%s): answered cancelled", turn.request_id, exc)
                response = s.PromptResponse(stop_reason=s.StopReason.CANCELLED)
            if turn.cancelled.is_set() and response.stop_reason != s.StopReason.CANCELLED:
                # spec PROMPT-23: a cancelled turn is answered with stopReason "cancelled".
                response = attrs.evolve(response, stop_reason=s.StopReason.CANCELLED)
            return response
        finally:
            turn._end()
            with self._turns_lock:
                self._turns.pop(params.session_id, None)
                self._turn_done.notify_all()

    def _fallback(self, method: str, params: Any, ctx: RequestContext) -> Any:
        if ctx.is_notification:
            self.agent.ext_notification(method, params)
            return None
        return self.agent.ext_method(method, params)


def serve_stdio(
    agent: Union[Agent, Callable[[ClientHandle], Agent]],
    *,
    recorder: Optional[Recorder] = None,
    **kwargs: Any,
) -> int:
    """Serve ``agent`` on this process's stdin/stdout until the client goes away.

    spec TRANSPORT-08: stdout carries protocol messages only. The protocol keeps the original
    stdout descriptor; file descriptor 1 and ``sys.stdout`` are pointed at stderr, so a stray
    ``print`` (or a child process that inherits fd 1) cannot corrupt the stream.
    """
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stream = FdStream(0, protocol_out, write_timeout=None)
    side = AgentSideConnection(agent, stream, recorder=recorder, **kwargs).start()
    try:
        side.wait_closed()
    except KeyboardInterrupt:
        side.close()
    return 0
