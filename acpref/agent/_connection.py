"""The agent side of a connection: serves an ``Agent`` and enforces the protocol around it.

Spec: initialization.mdx, authentication.mdx, session-setup.mdx, prompt-turn.mdx,
cancellation.mdx, extensibility.mdx, transports.mdx; clauses cited where enforced. Decisions
where the spec is silent: spec_notes/agent.md.

What ``AgentSideConnection`` does around the implementer's ``Agent`` methods:

* **Rules both ways** (``acpref._core``, plugged in as the connection's observer): a client
  request that breaks a MUST rule is answered with the error its clause names before any agent
  code runs (a session method before ``initialize``, an unadvertised method, a relative ``cwd``,
  prompt content beyond ``promptCapabilities``, an unknown session); anything the agent is about
  to send that breaks one raises ``LocalProtocolError`` and nothing is sent. Our own broken rule
  inside a handler is answered -32603 naming the clause: the client did nothing wrong.
* **initialize**: decoded here, so that any requested ``protocolVersion`` (even one of the wrong
  shape) negotiates: 1 answers 1, anything else our newest, 1; never an error (INIT-07, INIT-08).
  The client's capabilities are remembered on ``ClientHandle``; ours on ``Agent.advertised``.
* **authentication**: the agent declares its policy (``Agent.auth_required``) to the protocol
  core, which answers session methods -32000 until ``authenticate`` succeeds, and again after
  ``logout`` (RPC-16, AUTH-10, AUTH-17).
* **turns** (``_requests.TurnFlags``): one turn per session, its flag made as the prompt is read;
  the core answers a second concurrent prompt -32600 (spec-gap concurrent-prompt). Which turn starts
  and which a message stops is the core's decision, returned as effects as the message is
  recorded (``_core.effects``: ``TurnStarts``, ``TurnStops`` for ``session/cancel``,
  ``$/cancel_request`` on the prompt, ``session/close``, ``session/delete``; at the end of input
  ``ProtocolState.end_of_input``: every turn), which set the turn's ``cancelled`` flag; what a cancelled turn answers is the core's too
  (``_core.prompt_turn.prompt_answer``: stopReason "cancelled" whatever the agent returned or
  raised, PROMPT-23, PROMPT-24); the turn is closed before its response is written, so none of
  its updates can follow it (PROMPT-26).
* **session order**: which requests of a session wait for which (close and delete after the
  others, the others after a load or resume), and which are refused because the reopen they
  waited for failed, is the core's, handed over as effects (``Waits``, ``Refuses``);
  ``_requests._SessionRequests`` only waits. What the client advertised is handed over once
  too (``ClientCaps``, to ``ClientHandle``): nothing here reads the core's state.
* **after the answer**: ``Agent.session_opened`` runs once a session/new, load or resume response
  is on the wire, the place for ``available_commands_update`` (SLASH-01), which may only name a
  session the client knows.

What must not live here: the rules themselves (``acpref._core``), JSON-RPC framing and threads
(``acpref.connection``), what a session remembers (``_sessions``), agent behaviour (``Agent``).
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Union

import attrs

from .. import codec
from .._shell import groups as _groups
from .. import schema as s
from .._core import Party
from .._shell.observer import RulesObserver
from .._core.findings import Finding
from .._core.state import ProtocolState
from .._shell.transport import FdStream, Stream
from .._shell.connection import Connection, Recorder, RequestContext
from ..errors import ErrorCode, LocalProtocolError, RpcError
from ..methods import AGENT_METHODS, PROTOCOL_VERSION
from ._client import ClientHandle
from ._interface import Agent
from .._core.prompt_turn import prompt_answer
from ._requests import TurnFlags, _AfterResponse, _AgentObserver, _SessionRequests
from ._turn import PromptTurn

__all__ = ["AgentSideConnection", "serve_stdio"]

log = logging.getLogger("acpref.agent")

#: How long session/close and session/delete wait for a cancelled turn to end (SETUP-16), and
#: for the session's other requests (spec-gap close-in-flight).
_TURN_END_TIMEOUT = 30.0

#: After the end of input, how long requests already received (a cancelled turn included) may
#: take to answer before the connection closes (spec-gap end-of-input). Below the 2 s a client
#: of acpref's waits before SIGTERM, so an acpref agent exits on its own.
DRAIN_TIMEOUT = 1.0


def _version_of(value: Any) -> int:
    # spec INIT-08, spec-gap version-shape: a version of any other value or shape is
    # unsupported, never an error; it reads as 0 so that the codec accepts the rest of the params.
    return value if type(value) is int and 0 <= value <= 0xFFFF else 0


class AgentSideConnection:
    """Serves one ``Agent`` over one stream (stdio, a socket, a pipe pair in a test).

    At the end of its input every running turn is cancelled and answered ``cancelled``;
    requests already received get ``drain_timeout`` seconds to answer, then the connection
    closes (spec-gap end-of-input).
    """

    def __init__(
        self,
        agent: Union[Agent, Callable[[ClientHandle], Agent]],
        stream: Stream,
        *,
        name: str = "agent",
        recorder: Optional[Recorder] = None,
        on_finding: Optional[Callable[[Finding], None]] = None,
        max_handlers: int = 64,
        max_queued: Optional[int] = None,
        max_line_bytes: Optional[int] = None,
        max_items: Optional[int] = None,
        max_held_bytes: Optional[int] = None,
        drain_timeout: float = DRAIN_TIMEOUT,
    ) -> None:
        self._flags = TurnFlags()
        self._after = _AfterResponse(name)
        self._requests = _SessionRequests()
        rules = ProtocolState()
        # The agent's authentication policy, which the protocol core applies as each request
        # is read (RPC-16, AUTH-10, AUTH-17: acpref/_core/authentication.py).
        rules.requires_auth = self._auth_required
        self.observer = _AgentObserver(
            RulesObserver(Party.AGENT, rules, on_finding=on_finding),
            self._flags,
            self._after,
            self._requests,
        )
        bounds = dict(max_queued=max_queued, max_line_bytes=max_line_bytes, max_items=max_items,
                      max_held_bytes=max_held_bytes)  # None: the connection's default
        kwargs: Dict[str, Any] = {k: v for k, v in bounds.items() if v is not None}
        self.connection = Connection(
            stream,
            fallback=self._fallback,
            name=name,
            recorder=recorder,
            observer=self.observer,
            on_close=lambda _c: self._on_close(),
            on_end_of_input=lambda _c: self._on_end_of_input(),
            drain_timeout=drain_timeout,
            max_handlers=max_handlers,
            # spec-gap cancel-request-prompt, PROMPT-24: the prompt answers "cancelled" itself,
            # even to a $/cancel_request read before its handler starts (behind a session/load).
            answers_own_cancel=("session/prompt",),
            **kwargs,
        )
        self.client = ClientHandle(self.connection)
        self.observer.told_client_caps = self.client._told_caps
        if isinstance(agent, Agent):
            agent.client = self.client
            self.agent = agent
        else:
            self.agent = agent(self.client)
        # spec OVERVIEW-02: a handler for every agent method (the optional ones are answered
        # -32601 by the rules unless advertised, OVERVIEW-03).
        for method in AGENT_METHODS:
            if method == "initialize":
                continue  # decoded by _on_initialize through the fallback (INIT-08)
            own = getattr(self, "_on_" + method.replace("/", "_"), None)
            self.connection.set_handler(
                method, self._guard(method, own or self._passthrough(method))
            )

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def findings(self) -> "list[Finding]":
        """Every rule broken on this connection so far, by either side."""
        return list(self.observer.rules.findings)

    def start(self) -> "AgentSideConnection":
        """Start reading and serving; returns self."""
        self.connection.start()
        return self

    def close(self) -> None:
        """Close the connection: running turns are cancelled, the agent's
        ``connection_closed`` hook runs (its MCP servers are stopped).
        """
        self.connection.close()

    def wait_closed(self, timeout: Optional[float] = None) -> bool:
        """Wait up to ``timeout`` seconds (None: for ever) for the connection to end."""
        return self.connection.wait_closed(timeout)

    def _auth_required(self) -> bool:
        return bool(self.agent.auth_required)

    def _on_end_of_input(self) -> None:
        # spec-gap end-of-input: which turns stop, and that they answer stopReason "cancelled",
        # is the core's decision (acpref/_core/effects.py, end_of_input); the flags carry it
        # out. Other requests get drain_timeout to answer, then the connection closes.
        self.observer.end_of_input()

    def _on_close(self) -> None:
        # Nothing can be written any more: every turn's threads are let go.
        self._flags.cancel_all()
        self._after.stop()
        self._requests.forget_all()
        try:
            self.agent.connection_closed()
        except Exception:  # noqa: BLE001 - closing goes on whatever the hook does
            log.exception("%s: connection_closed hook failed", self.connection.name)

    # -- handlers --------------------------------------------------------------------------------

    def _guard(
        self, method: str, handler: Callable[[Any, RequestContext], Any]
    ) -> Callable[[Any, RequestContext], Any]:
        """Wrap a handler: run in its session's order; our own broken rules become -32603."""

        def handle(params: Any, ctx: RequestContext) -> Any:
            # After the requests of its session the core said it is answered after (its Waits
            # effect: a close or delete after all the others, any other after the loads and
            # resumes read before it); refused if the reopen it waited for left its session
            # unknown (its Refuses effect: spec-gap reopen-in-flight, unknown-session).
            done, refused = self._requests.wait_turn(ctx.id, _TURN_END_TIMEOUT)
            if not done:
                log.warning(
                    "%s: %s %r still waits for requests of its session after %ss; going on",
                    self.connection.name,
                    method,
                    ctx.id,
                    _TURN_END_TIMEOUT,
                )
            if refused is not None:
                raise RpcError.resource_not_found(refused)
            try:
                return handler(params, ctx)
            except LocalProtocolError as exc:
                # Our own code was about to break a rule (an fs call the client did not
                # advertise, ...): spec RPC-14, an internal error, naming the clause.
                log.error("%s: %s handler broke a rule: %s", self.connection.name, method, exc)
                raise RpcError(
                    ErrorCode.INTERNAL_ERROR, f"Internal error: {exc}", {"clause": exc.clause}
                ) from None

        return handle

    def _passthrough(self, method: str) -> Callable[[Any, RequestContext], Any]:
        fn = getattr(self.agent, method.replace("/", "_"))
        return lambda params, ctx: fn(params)

    def _on_initialize(self, raw: Any, ctx: RequestContext) -> Any:
        params = dict(raw) if isinstance(raw, dict) else {}
        params["protocolVersion"] = _version_of(params.get("protocolVersion"))
        typed = codec.decode(params, s.InitializeRequest, root="params")
        caps = typed.client_capabilities
        self.client.capabilities = (
            caps if isinstance(caps, s.ClientCapabilities) else s.ClientCapabilities()
        )
        self.client.info = (
            typed.client_info if isinstance(typed.client_info, s.Implementation) else None
        )
        response = self.agent.initialize(typed)
        # spec INIT-06, INIT-07, INIT-08: requested 1 -> 1; any other -> our newest (1); never an
        # error. The connection then speaks that one version.
        response = attrs.evolve(response, protocol_version=PROTOCOL_VERSION)
        if isinstance(response.auth_methods, list) and not self.client.supports("auth.terminal"):
            # spec AUTH-05: terminal auth methods only for a client that advertised auth.terminal.
            kept: List[s.AuthMethod] = [
                m for m in response.auth_methods if not isinstance(m, s.AuthMethodTerminal)
            ]
            response = attrs.evolve(response, auth_methods=kept)
        caps_out = response.agent_capabilities
        self.agent.advertised = (
            caps_out if isinstance(caps_out, s.AgentCapabilities) else s.AgentCapabilities()
        )
        return codec.encode(response)

    def _opened(self, ctx: RequestContext, session_id: str) -> None:
        self._after.schedule(ctx.id, lambda: self.agent.session_opened(session_id))

    def _on_session_new(
        self, params: s.NewSessionRequest, ctx: RequestContext
    ) -> s.NewSessionResponse:
        response = self.agent.session_new(params)
        self._opened(ctx, response.session_id)
        return response

    def _on_session_load(
        self, params: s.LoadSessionRequest, ctx: RequestContext
    ) -> s.LoadSessionResponse:
        # spec SETUP-07: the replay is sent by the agent before this handler returns.
        response = self.agent.session_load(params)
        self._opened(ctx, params.session_id)
        return response

    def _on_session_resume(
        self, params: s.ResumeSessionRequest, ctx: RequestContext
    ) -> s.ResumeSessionResponse:
        response = self.agent.session_resume(params)
        self._opened(ctx, params.session_id)
        return response

    def _wait_session_quiet(self) -> None:
        """Before the session goes: its turn ended, its other requests and follow-ups done."""
        # The turn was cancelled as the request was read (see _AgentObserver); it is one of the
        # session's requests _guard waited for, its response first (spec SETUP-16), with the
        # session's other requests (the core's order, Waits). What runs after an answer
        # (available_commands_update after session/new) is sent too.
        self._after.wait_queued(_TURN_END_TIMEOUT)

    def _on_session_close(
        self, params: s.CloseSessionRequest, ctx: RequestContext
    ) -> s.CloseSessionResponse:
        self._wait_session_quiet()
        return self.agent.session_close(params)

    def _on_session_delete(
        self, params: s.DeleteSessionRequest, ctx: RequestContext
    ) -> s.DeleteSessionResponse:
        # spec-gap delete-active: deleting a session with a running turn cancels the turn first.
        self._wait_session_quiet()
        return self.agent.session_delete(params)

    def _on_session_cancel(self, params: s.CancelNotification, ctx: RequestContext) -> None:
        # The turn's flag was set as the notification was read (PROMPT-22); this is the hook.
        self.agent.session_cancel(params)

    def _on_session_prompt(self, params: s.PromptRequest, ctx: RequestContext) -> s.PromptResponse:
        # ctx.answer_on_cancel is False since the prompt was read (answers_own_cancel above):
        # spec-gap cancel-request-prompt: $/cancel_request on a prompt acts as session/cancel.
        registry = self.agent.sessions
        turn = self._flags.attach(
            ctx.id,
            lambda cancelled: PromptTurn(
                connection=self.connection,
                client=self.client,
                session_id=params.session_id,
                request_id=ctx.id,
                cancelled=cancelled,
                registry=registry,
                after_answer=functools.partial(self._after.schedule, ctx.id),
            ),
        )
        if turn is None:  # pragma: no cover - the slot is claimed before any handler runs
            raise RpcError(ErrorCode.INTERNAL_ERROR, "the prompt has no turn slot")
        if self._flags.session_ends(ctx.id):
            # spec-gap close-in-flight: a prompt read while its session is being closed is
            # cancelled as it starts; the agent never runs it, so nothing of it can follow the
            # close's answer.
            turn._end()
            return s.PromptResponse(stop_reason=s.StopReason.CANCELLED)
        session = turn.session
        if session is not None:
            registry.begin_turn(session, turn)
            registry.record_prompt(session, params.prompt, turn.new_message_id())
        try:
            # What a cancelled turn answers is the core's decision (PROMPT-23, PROMPT-24:
            # acpref/_core/prompt_turn.py, prompt_answer).
            # The answer is chosen under the slot's seal: a cancel read from now on waits until
            # it is written, so none can be answered "as read" before it (TurnFlags.seal).
            try:
                response = _as_response(self.agent.session_prompt(params, turn))
            except Exception as exc:  # noqa: BLE001
                stop = prompt_answer(self._flags.seal(ctx.id) or turn.cancelled.is_set(), None)
                if stop is None:
                    raise
                log.info("turn %r raised after cancel (%s): answered %s", ctx.id, exc, stop)
                return s.PromptResponse(stop_reason=s.StopReason(stop))
            chosen = getattr(response.stop_reason, "value", response.stop_reason)
            stop = prompt_answer(self._flags.seal(ctx.id) or turn.cancelled.is_set(), chosen)
            if stop != chosen:
                response = attrs.evolve(response, stop_reason=s.StopReason(stop))
            return response
        finally:
            turn._end()
            if session is not None:
                registry.end_turn(session, turn)

    def _fallback(self, method: str, params: Any, ctx: RequestContext) -> Any:
        if method == "initialize":
            return self._guard(method, self._on_initialize)(params, ctx)
        if ctx.is_notification:
            self.agent.ext_notification(method, params)
            return None
        # spec EXT-06: a custom request goes to the agent's ext_method;
        # spec EXT-07: it is answered under its own id.
        return self._guard(method, lambda p, _c: self.agent.ext_method(method, p))(params, ctx)


def _as_response(result: Any) -> s.PromptResponse:
    # spec PROMPT-11, PROMPT-12: the handler returned, so the turn is over: the prompt is
    # answered with a stop reason, whichever the agent chose (end_turn, max_tokens, refusal...).
    if isinstance(result, s.PromptResponse):
        return result
    if result is None:
        return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
    return s.PromptResponse(stop_reason=s.StopReason(result))


def serve_stdio(
    agent: Union[Agent, Callable[[ClientHandle], Agent]],
    *,
    recorder: Optional[Recorder] = None,
    **kwargs: Any,
) -> int:
    """Serve ``agent`` on this process's stdin/stdout until the client goes away; returns 0.

    ``kwargs`` go to ``AgentSideConnection`` (``drain_timeout``, ``max_handlers``...). Called
    from the main thread, it makes SIGTERM and SIGHUP close the connection cleanly (every
    process the agent started is stopped) before it returns.

    spec TRANSPORT-08: stdout carries protocol messages only. The protocol keeps the original
    stdout descriptor; file descriptor 1 and ``sys.stdout`` are pointed at stderr, so that a
    stray ``print`` (or a child process that inherits fd 1) cannot corrupt the stream.
    """
    # spec TRANSPORT-02: the agent speaks stdio: messages on stdin and on the original stdout.
    protocol_out = os.dup(1)
    # spec TRANSPORT-06, TRANSPORT-08: anything printed or logged goes to stderr (UTF-8 text),
    # never stdout: only the connection writes to the original stdout.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stream = FdStream(0, protocol_out, write_timeout=None)
    side = AgentSideConnection(agent, stream, recorder=recorder, **kwargs).start()
    # SIGTERM and SIGHUP end the connection as Ctrl-C does: turns cancelled, MCP servers and
    # their groups stopped (in a hurry: spec-gap shutdown-ladder), then we return.
    _groups.install_stop_signals()
    try:
        side.wait_closed()
    except KeyboardInterrupt:
        side.close()
    return 0
