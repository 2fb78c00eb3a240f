"""The client side of an ACP connection: spawn or attach to an agent, and talk to it typed.

Spec: overview.mdx, initialization.mdx, session-setup.mdx, prompt-turn.mdx (Cancellation),
transports.mdx (stdio); clauses INIT-01 .. INIT-03, INIT-09, INIT-12, OVERVIEW-06, SETUP-09,
SETUP-16, SETUP-25, PROMPT-21, TRANSPORT-03, TRANSPORT-07, TRANSPORT-10. Walk-through:
spec_notes/client.md.

``ClientSideConnection`` joins a ``Client`` (which serves the agent's requests) to a
``Connection`` with the protocol's rules as its observer (``RulesObserver(Party.CLIENT)``): every
message we are about to send that breaks a MUST rule is refused with ``LocalProtocolError`` before
a byte is written (a method or prompt content the agent did not advertise, a relative ``cwd``,
a request before ``initialize``...), and a request from the agent that breaks one is answered
with the rule's error before the client sees it.

The typed calls are named after meta.json's ``agentMethods`` keys (``session_new``,
``session_prompt``...) and take the schema's request models; beside them are keyword
conveniences (``_conveniences``: ``new_session(cwd)``, ``prompt(session_id, "text")``...).

Threads: the connection's, plus one *asker* per pending permission request (``_desk``).
``close()`` stops all of them and shuts the agent down in a bounded ladder (stdin, TERM, KILL).
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from .. import codec
from .. import schema as s
from .._core import Party, ProtocolState, gate_open
from .._core.effects import AgentCaps, AsksCancelled, CancelLifted, Effect, SystemPromptKept
from .._core.effects import ChildrenReplayed, WorkCancelled
from .._core.facts import DEFAULT_MAX_REMEMBERED
from .._shell.observer import RulesObserver
from .._shell.transport import FdStream, Process, StderrBuffer, Stream, spawn
from .._shell.connection import DEFAULT_MAX_HELD_BYTES, DEFAULT_MAX_ITEMS, DEFAULT_MAX_LINE_BYTES
from .._shell.connection import Connection, Handler
from .._shell.connection import Recorder, RequestContext
from ..errors import ConnectionClosed, RequestTimeout
from ..methods import PROTOCOL_VERSION
from ._conveniences import Conveniences
from ._desk import ClientObserver, PermissionDesk
from .interface import Client, OpenedSession
from .turns import AgentExited, PromptTurn, UnsupportedProtocolVersion

__all__ = ["ClientSideConnection"]

log = logging.getLogger("acpref.client")

#: The answers that open a session: the client learns the session's roots from them.
_OPENING = frozenset({"session/new", "session/load", "session/resume"})

class ClientSideConnection(Conveniences):
    """A connection to one agent, from the client's side. See the module's doc.

    Build it with ``spawn(client, argv)`` for an agent process, or with a ``Stream`` for any
    other transport. Call ``initialize()`` first, then set up sessions and prompt.
    """

    def __init__(
        self,
        client: Client,
        stream: Stream,
        *,
        process: Optional[Process] = None,
        name: str = "acpref-client",
        recorder: Optional[Recorder] = None,
        on_finding: Optional[Callable[[Any], None]] = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_held_bytes: int = DEFAULT_MAX_HELD_BYTES,
        max_handlers: int = 64,
        max_queued: int = 1024,
        max_remembered: int = DEFAULT_MAX_REMEMBERED,
    ) -> None:
        self.client = client
        self._hooks_results = type(client).on_agent_result is not Client.on_agent_result
        self.process = process
        #: The protocol's rules as seen from this side; ``rules.findings`` lists what they found.
        rules = ProtocolState(max_remembered=max_remembered)  # spec-gap remembered-bound
        self.rules = RulesObserver(Party.CLIENT, rules, on_finding=on_finding)
        self._desk = PermissionDesk()
        #: What the core handed over (``_carry_out``): the agent's capabilities as the rules read
        #: them, and the systemPrompt each session re-sends (SYSPROMPT-11), as wire JSON.
        self._agent_caps: Dict[str, Any] = {}
        self._system_prompts: Dict[str, Any] = {}
        self._closed_by_us = False  # close() was called: a failing call is not the agent's doing
        self._cleaned_up = False  # the client and the desk were told the connection ended
        self._process_done = False
        self._close_lock = threading.Lock()  # guards the three flags and the process shutdown
        self.returncode: Optional[int] = None
        self.initialize_response: Optional[s.InitializeResponse] = None
        self.connection = Connection(
            stream,
            self._handlers(),
            fallback=self._on_extension,
            name=name,
            recorder=recorder,
            observer=ClientObserver(
                self.rules,
                self._desk,
                self._on_agent_result,
                self._wants_agent_result,
                self._carry_out,
            ),
            on_close=self._on_connection_closed,
            # What an agent can make us hold: one line, its values decoded; its requests decoded
            # together, running, waiting (past these three -32800, spec RPC-15): reliability.md.
            max_line_bytes=max_line_bytes, max_items=max_items,
            max_held_bytes=max_held_bytes, max_handlers=max_handlers, max_queued=max_queued,
        )
        self.connection.start()

    def _handlers(self) -> Dict[str, Handler]:
        """The agent's requests and notifications, each to the ``Client`` method serving it."""
        c = self.client
        # spec-gap request-after-updates: an agent request is served after every update read
        # before it (the connection runs notifications on the reading thread, in wire order).
        return {
            "session/request_permission": self._on_permission,
            "session/update": self._on_update,
            "fs/read_text_file": lambda p, ctx: c.fs_read_text_file(p),
            "fs/write_text_file": lambda p, ctx: c.fs_write_text_file(p),
            "terminal/create": lambda p, ctx: c.terminal_create(p),
            "terminal/output": lambda p, ctx: c.terminal_output(p),
            "terminal/release": lambda p, ctx: c.terminal_release(p),
            "terminal/wait_for_exit": lambda p, ctx: c.terminal_wait_for_exit(p),
            "terminal/kill": lambda p, ctx: c.terminal_kill(p),
            "elicitation/create": lambda p, ctx: c.elicitation_create(p),
            "elicitation/complete": lambda p, ctx: c.elicitation_complete(p),
        }

    @classmethod
    def spawn(
        cls,
        client: Client,
        argv: Sequence[str],
        *,
        env: Optional[dict] = None,
        cwd: Optional[str] = None,
        on_stderr_line: Optional[Callable[[str], None]] = None,
        stderr_limit: int = 1 << 20,
        write_timeout: Optional[float] = 30.0,
        new_session: bool = True,
        pass_stderr: bool = False,
        **kwargs: Any,
    ) -> "ClientSideConnection":
        """Start the agent ``argv`` (no shell) and connect to its stdin/stdout (spec TRANSPORT-03).

        Its stderr is always drained (TRANSPORT-07): the last ``stderr_limit`` bytes are kept in
        ``stderr``, and each line goes to ``on_stderr_line`` if given. With ``pass_stderr`` the
        agent writes to our own stderr instead, straight through (nothing is kept, and
        ``on_stderr_line`` is not called). An agent that stops reading its
        stdin fails a write of ours after ``write_timeout`` seconds without progress, and with it
        every pending call (the connection closes).

        With ``new_session`` (the default) the agent runs in a session and process group of its
        own: a Ctrl-C typed at our terminal reaches us, not it, and ``close()`` stops the whole
        group, whatever the agent started included. With ``new_session=False`` it stays in our
        process group (a harness that stops its own group by signal reaches it, and so does a
        Ctrl-C): ``close()`` then signals the agent process only, and what it started is the
        group owner's to stop.
        """
        # spec TRANSPORT-02, TRANSPORT-03, TRANSPORT-07: we spawn the agent and speak over its
        # stdin/stdout; its stderr is drained, not parsed.
        process = spawn(
            argv,
            env=env,
            cwd=cwd,
            stderr=StderrBuffer(stderr_limit, on_stderr_line),
            new_session=new_session,
            pass_stderr=pass_stderr,
        )
        assert process.popen.stdout is not None and process.popen.stdin is not None
        # spec TRANSPORT-09: the agent's stdin is the connection's alone: nothing but its
        # messages is ever written there.
        stream = FdStream(
            process.popen.stdout.fileno(),
            process.popen.stdin.fileno(),
            write_timeout=write_timeout,
        )
        kwargs.setdefault("name", f"acpref-client-{process.pid}")
        return cls(client, stream, process=process, **kwargs)

    # -- State ----------------------------------------------------------------------------------

    @property
    def stderr(self) -> Optional[StderrBuffer]:
        """The agent's stderr (what is kept of it), for a spawned agent."""
        return self.process.stderr if self.process is not None else None

    @property
    def closed(self) -> bool:
        """True once the connection has ended (closed by us, or the agent went away)."""
        return self.connection.closed

    @property
    def agent_capabilities(self) -> s.AgentCapabilities:
        """What the agent advertised in ``initialize`` (empty capabilities before it)."""
        r = self.initialize_response
        caps = r.agent_capabilities if r is not None else s.UNSET
        return caps if isinstance(caps, s.AgentCapabilities) else s.AgentCapabilities()

    @property
    def agent_info(self) -> Optional[s.Implementation]:
        """The agent's ``agentInfo`` (name, title, version), if it sent one."""
        r = self.initialize_response
        return (
            r.agent_info if r is not None and isinstance(r.agent_info, s.Implementation) else None
        )

    @property
    def auth_methods(self) -> List[Any]:
        """The authentication methods the agent offered in ``initialize``."""
        r = self.initialize_response
        return list(r.auth_methods) if r is not None and isinstance(r.auth_methods, list) else []

    def supports(self, capability: str) -> bool:
        """True when the agent advertised a dotted capability path (``"loadSession"``)."""
        return gate_open(capability, self._agent_caps)  # handed over by the core (AgentCaps)

    # -- Typed calls, one per agent method (meta.json agentMethods) -----------------------------

    def initialize(
        self, params: Optional[s.InitializeRequest] = None, *, timeout: Optional[float] = None
    ) -> s.InitializeResponse:
        """Negotiate the version and exchange capabilities: the first request (spec INIT-01).

        Without ``params``, sends version 1 with the client's real capabilities and
        ``clientInfo`` (INIT-02, INIT-03, INIT-12). If the agent answers a version we do not
        speak, closes the connection and raises ``UnsupportedProtocolVersion`` (INIT-09).
        """
        if params is None:
            params = s.InitializeRequest(
                protocol_version=PROTOCOL_VERSION,  # spec INIT-02: the newest version we speak
                client_capabilities=self.client.capabilities(),  # spec INIT-02, INIT-12
                client_info=self.client.client_info,  # spec INIT-03
            )
        result = self._call("initialize", params, timeout)
        if result.protocol_version != PROTOCOL_VERSION:
            # spec INIT-09: a version we cannot speak: close the connection and say so.
            self.close()
            raise UnsupportedProtocolVersion(result.protocol_version)
        self.initialize_response = result
        return result

    def authenticate(
        self, params: s.AuthenticateRequest, *, timeout: Optional[float] = None
    ) -> s.AuthenticateResponse:
        """Authenticate with one of the agent's ``authMethods`` (spec AUTH-01); needed before
        sessions when the agent asks for it."""
        return self._call("authenticate", params, timeout)

    def session_new(
        self, params: s.NewSessionRequest, *, timeout: Optional[float] = None
    ) -> s.NewSessionResponse:
        """Create a session (spec SETUP-24); the client learns its roots from the request."""
        return self._call("session/new", params, timeout)  # spec SETUP-24, SETUP-35: rules

    def session_load(
        self, params: s.LoadSessionRequest, *, timeout: Optional[float] = None
    ) -> s.LoadSessionResponse:
        """Load a session; its history is replayed as updates before this returns.

        A ``null`` result is accepted as success (spec SETUP-09).
        """
        self._opening(params.session_id, params.cwd, params.additional_directories, "load")
        # spec SETUP-03, SETUP-09: refused unless loadSession; a null result reads as {}
        return self._call("session/load", params, timeout)

    def session_set_mode(
        self, params: s.SetSessionModeRequest, *, timeout: Optional[float] = None
    ) -> s.SetSessionModeResponse:
        """Switch the session's mode (spec MODES-05); refused unless the agent offered modes."""
        return self._call("session/set_mode", params, timeout)

    def session_set_config_option(
        self, params: s.SetSessionConfigOptionRequest, *, timeout: Optional[float] = None
    ) -> s.SetSessionConfigOptionResponse:
        """Set one of the session's config options (spec CONFIG-08); the answer carries every
        option's new state."""
        return self._call("session/set_config_option", params, timeout)

    def session_prompt(
        self, params: s.PromptRequest, *, timeout: Optional[float] = None
    ) -> s.PromptResponse:
        """Run one turn: blocks until it ends; every update of the turn is delivered first.

        ``timeout`` bounds the whole call: a turn still running then is cancelled
        (``session/cancel``, so that the agent stops) and ``RequestTimeout`` is raised at once;
        the turn's own answer (normally ``cancelled``) is read by the connection when it comes.
        For a turn to wait for in steps, use ``session_prompt_async``.
        """
        turn = self.session_prompt_async(params)
        if not turn.wait(timeout):
            self.session_cancel(s.CancelNotification(session_id=params.session_id))
            raise RequestTimeout(
                f"the prompt turn of {params.session_id} did not end within {timeout}s; "
                "it was cancelled"
            )
        return turn.result(0)

    def session_prompt_async(self, params: s.PromptRequest) -> PromptTurn:
        """Send ``session/prompt`` and return at once with a ``PromptTurn`` (never given up on a
        timeout: wait for it as long as you like, cancel it with ``PromptTurn.cancel``)."""
        self.client.on_prompt(params)
        pending = self.connection.request_async("session/prompt", params)
        return PromptTurn(
            params.session_id, pending, cancel=self.session_cancel, explain=self._explain
        )

    def session_cancel(self, params: s.CancelNotification) -> None:
        """Cancel the session's turn; pending permission requests are answered ``cancelled``.

        spec PROMPT-21: every ``session/request_permission`` of the session still pending when
        ``session/cancel`` goes out is answered ``cancelled``, even while its dialog is open.
        """
        with self._desk.holding():
            # spec PROMPT-21: the rules name the pending requests as they record the cancel
            # (AsksCancelled), and the sessions whose work it cancels (WorkCancelled: the client
            # is told, ``on_cancel``), both carried out by ``_carry_out``.
            self.connection.notify("session/cancel", params)

    def session_list(
        self, params: Optional[s.ListSessionsRequest] = None, *, timeout: Optional[float] = None
    ) -> s.ListSessionsResponse:
        """One page of the agent's sessions; ``list_sessions`` walks every page."""
        # spec LIST-01: refused by the rules unless the agent advertised sessionCapabilities.list
        return self._call("session/list", params or s.ListSessionsRequest(), timeout)

    def session_delete(
        self, params: s.DeleteSessionRequest, *, timeout: Optional[float] = None
    ) -> s.DeleteSessionResponse:
        """Delete a session for good (spec DELETE-01); refused unless the agent advertised it."""
        return self._call("session/delete", params, timeout)  # spec DELETE-01: rules

    def session_resume(
        self, params: s.ResumeSessionRequest, *, timeout: Optional[float] = None
    ) -> s.ResumeSessionResponse:
        """Resume a session without its history being replayed (spec SETUP-10)."""
        self._opening(params.session_id, params.cwd, params.additional_directories, "resume")
        return self._call("session/resume", params, timeout)  # spec SETUP-10: rules

    def session_close(
        self, params: s.CloseSessionRequest, *, timeout: Optional[float] = None
    ) -> s.CloseSessionResponse:
        """Close a session; a running turn is cancelled with it (spec SETUP-16, PROMPT-21)."""
        try:
            with self._desk.holding():  # spec SETUP-16: the close cancels as session/cancel does
                # spec SETUP-14: the rules refuse it unless the agent advertised close
                pending = self.connection.request_async("session/close", params)
            return pending.result(timeout)
        except ConnectionClosed as exc:
            raise self._explain(exc, "session/close") from None

    def logout(
        self, params: Optional[s.LogoutRequest] = None, *, timeout: Optional[float] = None
    ) -> s.LogoutResponse:
        """End the authenticated state (spec AUTH-03); refused unless ``auth.logout``."""
        return self._call("logout", params or s.LogoutRequest(), timeout)  # spec AUTH-03

    def ext_method(
        self, method: str, params: Any = None, *, timeout: Optional[float] = None
    ) -> Any:
        """Call a custom ``_``-prefixed method (spec EXT-05, EXT-06): raw JSON both ways."""
        return self._call(method, {} if params is None else params, timeout)

    def ext_notification(self, method: str, params: Any = None) -> None:
        """Send a custom ``_``-prefixed notification (spec EXT-05): raw JSON params."""
        self.connection.notify(method, {} if params is None else params)

    # -- Ending ---------------------------------------------------------------------------------

    def close(self, *, grace: float = 2.0, term_grace: float = 2.0) -> Optional[int]:
        """Close the connection and shut the agent down; returns its exit status (if spawned).

        The client frees its resources first (terminals are killed and reaped), then the
        connection's threads stop, then the agent: its stdin is closed, and it gets ``grace``
        seconds to exit, then SIGTERM and ``term_grace`` seconds, then SIGKILL (TRANSPORT-10).
        """
        with self._close_lock:
            self._closed_by_us = True
            first = not self._cleaned_up
            self._cleaned_up = True
        if first:
            self._desk.close()
            self._client_closed("closed by the client")
        self.connection.close("closed by the client")
        return self._shutdown_process(grace, term_grace)

    def wait_closed(self, timeout: Optional[float] = None) -> bool:
        """Wait up to ``timeout`` seconds for the connection to end; True if it has."""
        return self.connection.wait_closed(timeout)

    def __enter__(self) -> "ClientSideConnection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- Internals ------------------------------------------------------------------------------

    def _call(self, method: str, params: Any, timeout: Optional[float]) -> Any:
        try:
            return self.connection.request(method, params, timeout=timeout)
        except ConnectionClosed as exc:
            raise self._explain(exc, method) from None

    def _explain(self, exc: BaseException, method: str) -> BaseException:
        """Turn "connection closed" into "the agent exited with status N" where that is so."""
        if not isinstance(exc, ConnectionClosed) or self.process is None or self._closed_by_us:
            return exc
        returncode = self.process.wait(1.0)  # not reaped: the ladder still owns its group
        if returncode is None:
            return exc  # still running: the plain error says enough
        self.returncode = returncode
        tail = self.process.stderr.text()[-2000:]
        stopped_by = self.process.stopped_by
        signals = {"SIGTERM": -signal.SIGTERM, "SIGKILL": -signal.SIGKILL}
        if stopped_by is None or signals.get(stopped_by) != returncode:
            how = self.process.describe_exit(returncode)
            message = f"the agent {how} while we waited for {method}"
        else:
            # The connection ended first (the agent closed its output, or stopped reading and a
            # write timed out); then we stopped the agent. Say so, with the first cause: the
            # exit status is only the consequence.
            message = (
                f"{method} failed: {exc}; the agent was then stopped by acpref with {stopped_by}"
            )
        if tail.strip():
            message += f"; its last stderr:\n{tail.rstrip()}"
        return AgentExited(message, returncode, tail)

    def _system_prompt_of(self, session_id: str) -> Any:
        """The systemPrompt the session was last set up with, to re-send (provisional).

        spec SYSPROMPT-11: load and resume send the same value as when the session was created
        (UNSET when it had none). The rules hand it over, as wire JSON, from the accepted
        request (SystemPromptKept).
        """
        sent = self._system_prompts.get(session_id)
        return codec.decode(sent, s.SystemPrompt) if isinstance(sent, dict) else s.UNSET

    def _opening(self, session_id: str, cwd: str, dirs: Any, how: str) -> None:
        # Load and resume name their session up front: the client learns its roots before the
        # agent can replay anything (SETUP-05) or ask for files.
        opened = OpenedSession(
            session_id=session_id, cwd=cwd, additional_directories=tuple(dirs or ()), how=how
        )
        self.client.on_session_open(opened)

    def _wants_agent_result(self, method: str) -> bool:
        # The session-opening answers always (the roots); the others only for a client that
        # overrides on_agent_result.
        return method in _OPENING or self._hooks_results

    def _on_agent_result(self, method: str, params: Any, result: Any) -> None:
        # On the reading thread, in wire order (see ClientObserver).
        if method in _OPENING:
            session_id = result.session_id if method == "session/new" else params.session_id
            dirs = params.additional_directories
            how = method.split("/")[1]
            opened = OpenedSession(
                session_id=session_id,
                cwd=params.cwd,
                additional_directories=tuple(dirs or ()),
                how=how,
                response=result,
            )
            self.client.on_session_open(opened)
        self.client.on_agent_result(method, params, result)

    def _on_update(self, params: s.SessionNotification, ctx: RequestContext) -> None:
        self.client.session_update(params)

    def _carry_out(self, effect: Effect) -> None:
        """What the core decided a message does here (``acpref._core.effects``; called by the
        observer as the rules record it, in wire order; the agent's turn effects are not ours)."""
        if isinstance(effect, AsksCancelled):
            self._desk.cancel_asks(effect.request_ids)  # spec PROMPT-21, SETUP-16, SUBAGENT-44
        elif isinstance(effect, WorkCancelled):
            for session_id in effect.session_ids:  # spec PROMPT-20, spec-gap child-cancel-reach
                self.client.on_cancel(session_id)
        elif isinstance(effect, CancelLifted):
            for session_id in effect.session_ids:
                self.client.on_cancel_lifted(session_id)
        elif isinstance(effect, ChildrenReplayed):
            for child in effect.children:  # the load replays them (SUBAGENT-30)
                self.client.on_child_reloading(child)
        elif isinstance(effect, AgentCaps):
            self._agent_caps = effect.capabilities
        elif isinstance(effect, SystemPromptKept):
            if effect.system_prompt is None:
                self._system_prompts.pop(effect.session_id, None)
            else:
                self._system_prompts[effect.session_id] = effect.system_prompt

    def _on_permission(
        self, params: s.RequestPermissionRequest, ctx: RequestContext
    ) -> s.RequestPermissionResponse:
        return self._desk.ask(params, ctx, self.client.session_request_permission)

    def _on_extension(self, method: str, params: Any, ctx: RequestContext) -> Any:
        if ctx.is_notification:
            self.client.ext_notification(method, params)
            return None
        return self.client.ext_method(method, params)

    def _client_closed(self, reason: Optional[str]) -> None:
        try:
            self.client.on_close(reason)
        except Exception:  # noqa: BLE001 - shutting down goes on
            log.exception("client on_close failed")

    def _on_connection_closed(self, connection: Connection) -> None:
        # The connection ended on its own (the agent exited) or by close().
        with self._close_lock:
            first = not self._cleaned_up
            self._cleaned_up = True
        if first:
            self._desk.close()
            self._client_closed(connection.close_reason)
            self._shutdown_process(0.5, 1.0)

    def _shutdown_process(self, grace: float, term_grace: float) -> Optional[int]:
        if self.process is None:
            return None
        with self._close_lock:
            if not self._process_done:
                self._process_done = True
                self.returncode = self.process.shutdown(grace=grace, term_grace=term_grace)
                self.process.wait_drained(1.0)
                log.info(
                    "agent process %s exited with status %s", self.process.pid, self.returncode
                )
        return self.returncode
