"""Prompt turns: the running ``session/prompt`` an agent streams into.

Spec: prompt-turn.mdx, tool-calls.mdx, file-system.mdx, terminals.mdx, elicitation.mdx,
cancellation.mdx; clauses PROMPT-06, PROMPT-07, PROMPT-21 .. PROMPT-26, TOOL-02, TERM-07,
CANCEL-08 (spec_notes/agent.md).

``PromptTurn`` is what an agent's ``session_prompt`` gets. It streams updates (recorded in the
session's history for ``session/load``), calls the client on the turn's session, and carries
``cancelled``, the turn's cancellation flag (``is_set()``, ``wait(timeout)``, like a
``threading.Event``), which ``_requests.TurnFlags`` sets as the cancellation is read.

Cancellation is cooperative: nothing is interrupted. Client calls made through a cancelled turn
raise ``TurnCancelled`` without sending anything; calls in flight when the turn is cancelled are
cancelled with ``$/cancel_request`` (CANCEL-08), except permission requests, which the client
itself answers ``cancelled`` (PROMPT-21), the clean-up calls (terminal kill and release), and a
terminal's ``wait_for_exit``, which is ended by killing the command instead.

What must not live here: the JSON-RPC machinery (``acpref.connection``) and the rules.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import attrs

from .. import schema as s
from .._shell.threads import Flag
from .._shell.connection import Connection, PendingRequest
from ..errors import ConnectionClosed, LocalProtocolError
from ..schema import UNSET
from ._client import ClientHandle, check_update
from ._sessions import Session, SessionRegistry

__all__ = ["PromptTurn", "TerminalHandle", "TurnCancelled"]

log = logging.getLogger("acpref.agent")


_PROCESS_PREFIX = os.urandom(4).hex()
_TURN_NUMBERS = itertools.count(1)


class TurnCancelled(Exception):
    """Raised by a client call made through a turn that was already cancelled.

    Let it propagate: the agent side answers the prompt ``stopReason: "cancelled"`` (PROMPT-24).
    """


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


@attrs.define(eq=False)
class TerminalHandle:
    """A client terminal created in a turn; always ``release()`` it when done (spec TERM-07)."""

    turn: "PromptTurn"
    terminal_id: str
    released: bool = False
    #: The output the last ``output()`` returned; kept for the session's replay on release.
    last_output: Optional[str] = None

    def _params(self, cls: Any) -> Any:
        return cls(session_id=self.turn.session_id, terminal_id=self.terminal_id)

    def output(self) -> s.TerminalOutputResponse:
        """The output so far, and the exit status once the command has ended (TERM-04)."""
        response = self.turn._call(
            "terminal/output", self._params(s.TerminalOutputRequest), cascade=False
        )
        self.last_output = response.output
        return response

    def wait_for_exit(self, timeout: Optional[float] = None) -> s.WaitForTerminalExitResponse:
        """Wait for the command to end.

        If the turn is cancelled meanwhile, the command is killed (``terminal/kill``, sent
        without waiting), so the wait ends with its exit status (PROMPT-22). This needs nothing
        but the terminal capability, unlike ``$/cancel_request``, which a client may ignore.
        """
        kill = self._params(s.KillTerminalRequest)
        # spec CANCEL-03: cancelling the turn aborts the command it waits for (killed).
        with self.turn._on_cancel(lambda: self.turn._send_only("terminal/kill", kill)):
            return self.turn._call(
                "terminal/wait_for_exit",
                self._params(s.WaitForTerminalExitRequest),
                timeout=timeout,
                cascade=False,
            )

    def kill(self) -> None:
        """Kill the command; the terminal stays valid until released (TERM-10)."""
        self.turn._call("terminal/kill", self._params(s.KillTerminalRequest), cascade=False)

    def release(self) -> None:
        """Release the terminal (killing a running command); idempotent (TERM-07)."""
        if not self.released:
            self.released = True  # spec TERM-07: released once, killed or not
            self.turn._call(
                "terminal/release", self._params(s.ReleaseTerminalRequest), cascade=False
            )
            session, registry = self.turn.session, self.turn._registry
            if session is not None and registry is not None and self.last_output is not None:
                registry.record_terminal_output(session, self.terminal_id, self.last_output)


class PromptTurn:
    """One running ``session/prompt``: stream its updates, call the client, watch ``cancelled``.

    ``cancelled`` is set by ``session/cancel``, by ``$/cancel_request`` aimed at the prompt, by
    ``session/close`` or ``session/delete`` of its session, and by the connection ending.
    """

    def __init__(
        self,
        *,
        connection: Connection,
        client: ClientHandle,
        session_id: str,
        request_id: Any,
        cancelled: Flag,
        registry: Optional[SessionRegistry] = None,
        after_answer: Optional[Callable[[Callable[[], None]], None]] = None,
    ) -> None:
        self._connection = connection
        self._after_answer = after_answer
        self.client = client
        self.session_id = session_id
        self.request_id = request_id
        self.cancelled = cancelled
        self._registry = registry
        #: The registry's record of the session, if the registry knows it.
        self.session: Optional[Session] = registry.get(session_id) if registry is not None else None
        # Guards _ended; held across one update's write and record (so the history keeps the wire
        # order), and taken by _end() to wait for an update being written.
        self._lock = threading.Lock()
        # Guards _pending and _cancel_hooks. Apart from _lock, so that the reading thread, which
        # cancels turns, never waits behind a write.
        self._calls_lock = threading.Lock()
        self._ended = False
        self._pending: List[PendingRequest] = []
        #: Permission requests in flight: left to the client's "cancelled" answer on a cancel
        #: (PROMPT-21), withdrawn when the session ends (see ``_cascade_cancel``).
        self._permissions: List[PendingRequest] = []
        self._withdrawn = False
        self._cancel_hooks: List[Callable[[], None]] = []
        self._counter = itertools.count(1)
        # Ids must stay unique across turns, connections and restarts (SETUP-06, TOOL-02): a
        # random prefix per process, and a number per turn.
        self._prefix = f"{_PROCESS_PREFIX}{next(_TURN_NUMBERS):x}"

    @property
    def ended(self) -> bool:
        """True once the prompt was answered: no update of this turn can be sent any more."""
        return self._ended

    def new_message_id(self) -> str:
        """A fresh, opaque id for the chunks of one message (spec PROMPT-07, SETUP-06)."""
        # spec PROMPT-07: one opaque id per message, never reused.
        return f"msg_{self._prefix}_{next(self._counter)}"

    def new_tool_call_id(self) -> str:
        """A fresh tool call id, unique within the session for good (spec TOOL-02)."""
        return f"call_{self._prefix}_{next(self._counter)}"

    # -- streaming -------------------------------------------------------------------------------

    def update(self, update: "s.SessionUpdate") -> None:
        """Send a session update of this turn, and record it in the session's history.

        ``update`` is one of the schema's session update models (``s.AgentMessageChunk``,
        ``s.ToolCall``, ``s.Plan``...); anything else raises ``TypeError``, and nothing is sent
        or recorded. Sent and recorded under the turn's lock, so that the history (and so a
        later replay) keeps the wire order even when several threads of one turn stream at once.
        """
        check_update(update)
        with self._lock:
            # spec PROMPT-25, CANCEL-04: only the end of the turn stops updates; after a cancel,
            # content and tool call updates may still go out until the prompt is answered. One
            # sent after the answer is refused by the protocol core (PROMPT-26, acpref/_core):
            # LocalProtocolError, and nothing is sent or recorded.
            self.client.update(self.session_id, update)  # spec PROMPT-06: as session/update
            if self.session is not None and self._registry is not None:
                self._registry.record(self.session, update)

    def notice(self, severity: Any, title: str, description: Optional[str] = None) -> bool:
        """Send a live ``notice`` to the user, if the client takes notices; True when sent.

        spec NOTICE-01: only to a client that advertised ``session.notices``; without it nothing
        is sent (NOTICE-02: the caller may say the same in an agent message instead). A notice is
        no history (NOTICE-06): it is not recorded for replay. Never rely on it being seen
        (NOTICE-05).
        """
        if not self.client.supports("session.notices"):
            return False  # spec NOTICE-02: nothing sent; the caller may say it in a message
        detail: Any = s.UNSET if description is None else description
        notice = s.Notice(severity=severity, title=title, description=detail)
        with self._lock:
            if self._ended:
                raise LocalProtocolError(
                    "PROMPT-26", "this prompt turn has ended; use after_answer for later notices"
                )
            self.client.update(self.session_id, notice)
        return True

    def after_answer(self, job: Callable[[], None]) -> None:
        """Run ``job`` once this turn's ``session/prompt`` response is on the wire.

        For what the agent sends outside the turn, such as a notice (NOTICE-10) or a session
        title: ``job`` calls the client handle (``turn.client``) directly, not the turn.
        """
        if self._after_answer is None:
            raise RuntimeError("this turn was not made by an agent-side connection")
        self._after_answer(job)

    def say(self, text: str, *, message_id: Optional[str] = None, thought: bool = False) -> str:
        """Send ``text`` as one agent message (or thought) chunk; returns the message id used."""
        message_id = message_id or self.new_message_id()
        chunk = s.AgentThoughtChunk if thought else s.AgentMessageChunk
        self.update(chunk(content=s.TextContent(text=text), message_id=message_id))
        return message_id

    # -- cancellation ----------------------------------------------------------------------------

    def _cascade_cancel(self, *, ending: bool = False) -> None:
        """Cancel the turn's client calls in flight (spec CANCEL-08). The flag is set already.

        ``ending``: the session ends (session/close, session/delete) or the connection does. The
        client owes a "cancelled" answer to a permission request only after a session/cancel of
        its own (PROMPT-21); a close is none, so the turn stops waiting for its permission
        requests: each gets ``$/cancel_request`` and reads as cancelled at once (spec SETUP-16:
        the work ends as if session/cancel had arrived, and the session is freed).

        Runs on the thread that read the cancellation (the connection's reader): nothing here
        may wait for an answer.
        """
        with self._calls_lock:
            pending = list(self._pending)
            hooks = list(self._cancel_hooks)
            permissions: List[PendingRequest] = []
            if ending:
                self._withdrawn = True
                permissions = list(self._permissions)
        for p in permissions:
            p._withdraw(TurnCancelled("the session ended while permission was asked"))
        for p in pending:
            # spec CANCEL-08, CANCEL-03: the turn's client calls in flight get $/cancel_request.
            p.cancel()
        for hook in hooks:
            try:
                hook()
            except Exception:  # noqa: BLE001 - one failed hook must not stop the others
                log.exception("a cancellation hook of turn %r failed", self.request_id)

    @contextlib.contextmanager
    def _on_cancel(self, hook: Callable[[], None]) -> Iterator[None]:
        """Run ``hook`` (which must not block) if the turn is cancelled while inside the block."""
        with self._calls_lock:
            self._cancel_hooks.append(hook)
        try:
            if self.cancelled.is_set():
                hook()
            yield
        finally:
            with self._calls_lock:
                self._cancel_hooks.remove(hook)

    def _send_only(self, method: str, params: Any) -> None:
        """Send a request without waiting for its answer (a kill on cancellation)."""
        try:
            self._connection.request_async(method, params)
        except (ConnectionClosed, LocalProtocolError) as exc:
            log.debug("turn %r: %s not sent: %s", self.request_id, method, exc)

    def _end(self) -> None:
        with self._lock:  # waits for an update being written right now (PROMPT-26)
            self._ended = True

    # -- client calls bound to this turn's session -----------------------------------------------

    def _call(
        self, method: str, params: Any, *, timeout: Optional[float] = None, cascade: bool = True
    ) -> Any:
        if cascade and self.cancelled.is_set():
            # spec-gap calls-after-cancel: a cancelled turn's calls are not sent at all.
            raise TurnCancelled(f"{method} not sent: the turn was cancelled")
        pending = self._connection.request_async(method, params)
        if not cascade:
            return pending.result(timeout)
        with self._calls_lock:
            self._pending.append(pending)
        if self.cancelled.is_set():
            pending.cancel()  # cancelled between the check above and now
        try:
            return pending.result(timeout)
        finally:
            with self._calls_lock:
                self._pending.remove(pending)

    def request_permission(
        self,
        tool_call: s.ToolCallUpdate,
        options: Sequence[s.PermissionOption],
        *,
        timeout: Optional[float] = None,
        then: Optional[Callable[[], None]] = None,
    ) -> Any:
        """Ask the user (TOOL-07): ``SelectedPermissionOutcome`` or ``CancelledPermissionOutcome``.

        Not cancelled with ``$/cancel_request``: after ``session/cancel`` the client answers it
        ``cancelled`` itself (PROMPT-21). Asked after the turn was cancelled, it answers
        ``cancelled`` at once without asking. ``then``, if given, runs once the request is on
        the wire, before the wait for its answer (what is sent then follows it on the wire).
        """
        if self.cancelled.is_set():
            # spec-gap calls-after-cancel: asked after the cancel: cancelled, without asking.
            return s.CancelledPermissionOutcome()
        # spec PROMPT-13, TOOL-07: sessionId, the tool call (a ToolCallUpdate) and the options.
        params = s.RequestPermissionRequest(
            session_id=self.session_id, tool_call=tool_call, options=list(options)
        )
        # spec-gap permission-at-cancel: no $/cancel_request cascade on session/cancel: the client
        # answers it "cancelled" itself (PROMPT-21). When the session ends it is withdrawn.
        pending = self._connection.request_async("session/request_permission", params)
        with self._calls_lock:
            self._permissions.append(pending)
            withdrawn = self._withdrawn
        if withdrawn:  # the session ended between the check above and now
            pending._withdraw(TurnCancelled("the session ended while permission was asked"))
        try:
            if then is not None:
                then()
            return pending.result(timeout).outcome
        except TurnCancelled:
            return s.CancelledPermissionOutcome()
        finally:
            with self._calls_lock:
                self._permissions.remove(pending)

    def read_text_file(
        self, path: str, *, line: Optional[int] = None, limit: Optional[int] = None
    ) -> str:
        """``fs/read_text_file`` (FS-01; the path is absolute, FS-03)."""
        params = s.ReadTextFileRequest(
            session_id=self.session_id, path=path, line=_opt(line), limit=_opt(limit)
        )
        return self._call("fs/read_text_file", params).content

    def write_text_file(self, path: str, content: str) -> None:
        """``fs/write_text_file`` (FS-02; the path is absolute, FS-06)."""
        self._call(
            "fs/write_text_file",
            s.WriteTextFileRequest(session_id=self.session_id, path=path, content=content),
        )

    def create_terminal(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        output_byte_limit: Optional[int] = None,
    ) -> TerminalHandle:
        """``terminal/create`` (TERM-01); release the handle when done (TERM-07)."""
        params = s.CreateTerminalRequest(
            session_id=self.session_id,
            command=command,
            args=list(args),
            env=[s.EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
            cwd=_opt(cwd),
            output_byte_limit=_opt(output_byte_limit),
        )
        return TerminalHandle(
            turn=self, terminal_id=self._call("terminal/create", params).terminal_id
        )

    def elicit(
        self, request: s.CreateElicitationRequest, *, timeout: Optional[float] = None
    ) -> s.CreateElicitationResponse:
        """``elicitation/create`` in the request's mode (which the client advertised, ELICIT-06)."""
        # spec ELICIT-10: asked on this turn's connection, and answered by it only: the answer is
        # matched by request id on the connection that sent the request (RPC-07).
        return self._call("elicitation/create", request, timeout=timeout)

    def elicit_form(
        self, message: str, schema: s.ElicitationSchema, *, tool_call_id: Optional[str] = None
    ) -> s.CreateElicitationResponse:
        """A form elicitation scoped to this turn's session (ELICIT-09)."""
        scope = s.ElicitationSessionScope(
            session_id=self.session_id, tool_call_id=_opt(tool_call_id)
        )
        mode = s.ElicitationFormMode(requested_schema=schema, scope=scope)
        return self.elicit(s.CreateElicitationRequest(message=message, mode=mode))

    def elicit_url(
        self, message: str, url: str, *, elicitation_id: str, tool_call_id: Optional[str] = None
    ) -> s.CreateElicitationResponse:
        """A URL elicitation in this turn's session; ids unique while outstanding (ELICIT-24)."""
        scope = s.ElicitationSessionScope(
            session_id=self.session_id, tool_call_id=_opt(tool_call_id)
        )
        mode = s.ElicitationUrlMode(elicitation_id=elicitation_id, url=url, scope=scope)
        return self.elicit(s.CreateElicitationRequest(message=message, mode=mode))

    def complete_elicitation(self, elicitation_id: str) -> None:
        """``elicitation/complete``: the URL interaction finished (ELICIT-26)."""
        # spec ELICIT-26, ELICIT-27: on the connection that received the URL elicitation.
        self.client.elicitation_complete(
            s.CompleteElicitationNotification(elicitation_id=elicitation_id)
        )
