"""``ReferenceClient``: a complete client with real files, real terminals and a UI's state.

Spec: file-system.mdx, terminals.mdx, tool-calls.mdx (Requesting Permission), elicitation.mdx,
prompt-turn.mdx; clauses FS-04 .. FS-08, TERM-03 .. TERM-15, TOOL-08, TOOL-09, PROMPT-20,
PROMPT-21, ELICIT-05, ELICIT-25, ELICIT-28, ELICIT-29, ELICIT-33, RPC-17. Decisions and the
threat model: spec_notes/client.md, spec_notes/threat-model.md.

What it does with each request:

* files (``roots``, ``files``): only below the session's roots, as sent in new/load/resume;
* terminals (``terminals``): real processes, bounded output, killed and reaped on close;
* permissions (``permissions``): a policy (allow, reject, or ask a callback);
* elicitation: form and URL modes through callbacks, advertised only when given (ELICIT-05); the
  client never opens a URL itself, the callback asks the user (ELICIT-33);
* updates: folded into a ``SessionView`` per session (``views``), then passed to ``on_update``;
  each view keeps at most ``max_kept`` counted characters of them (``_kept``);
* children: a view each within ``max_remembered``, then in the parent's view only (``child_count``).

Callbacks (``on_update``, ``on_terminal_output``, elicitation) run on connection threads.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set

import attrs

from .. import schema as s
from .._core.facts import DEFAULT_MAX_REMEMBERED
from ..errors import ErrorCode, RpcError
from . import files
from ._kept import DEFAULT_MAX_KEPT
from .interface import CLIENT_INFO, Client, OpenedSession
from .permissions import PermissionPolicy, Reject
from .roots import Roots
from .subagents import ChildCount
from .terminals import DEFAULT_OUTPUT_CAP, OutputListener, TerminalManager
from .views import SessionView, ToolCallView

__all__ = ["ReferenceClient", "ElicitationCallback", "UpdateListener"]

log = logging.getLogger("acpref.client")

#: ``callback(request, cancelled) -> an action or a CreateElicitationResponse``: ask the user.
#: For URL mode, ``accept`` means the user consented to open the URL (the callback shows the
#: whole URL first and never opens it without consent, spec ELICIT-33, ELICIT-34).
ElicitationCallback = Callable[[s.CreateElicitationRequest, threading.Event], Any]
#: ``listener(session_id, update)``: an update was applied to the session's view.
UpdateListener = Callable[[str, Any], None]

_ACTIONS = (s.ElicitationAcceptAction, s.ElicitationDeclineAction, s.ElicitationCancelAction)


@attrs.define
class _Session:
    roots: Roots
    view: SessionView
    closed: bool = False


class ReferenceClient(Client):
    """A ready ``Client``; see the module's doc for what it does."""

    supports_boolean_config = True
    supports_notices = True  # shown in the session view and by the CLI (NOTICE-07, NOTICE-08)
    supports_compaction = True  # kept in the session view (COMPACT-05 .. COMPACT-08, COMPACT-13)
    #: Its session views keep plans by planId (provisional, ``SessionView.plans``).
    supports_plan_operations = True
    #: Child sessions get views of their own (provisional, ``SessionView.subagents``).
    supports_subagents = True

    def __init__(
        self,
        *,
        permissions: Optional[PermissionPolicy] = None,
        elicit_form: Optional[ElicitationCallback] = None,
        elicit_url: Optional[ElicitationCallback] = None,
        on_elicitation_complete: Optional[Callable[[str], None]] = None,
        buffers: Optional[files.BufferProvider] = None,
        on_update: Optional[UpdateListener] = None,
        on_terminal_output: Optional[OutputListener] = None,
        extensions: Optional[Mapping[str, Callable[[Any], Any]]] = None,
        capability_meta: Optional[Dict[str, Any]] = None,
        max_terminals_per_session: int = 16,
        terminal_output_cap: int = DEFAULT_OUTPUT_CAP,
        kill_grace: float = 2.0,
        max_read_bytes: int = files.DEFAULT_MAX_READ_BYTES,
        terminal_env: Optional[Mapping[str, str]] = None,
        client_info: s.Implementation = CLIENT_INFO,
        max_kept: int = DEFAULT_MAX_KEPT,
        max_remembered: int = DEFAULT_MAX_REMEMBERED,
    ) -> None:
        #: The permission policy; ``Reject`` unless told otherwise (never allows by surprise).
        self.permissions: PermissionPolicy = permissions if permissions is not None else Reject()
        self.client_info = client_info
        self.terminals = TerminalManager(
            max_per_session=max_terminals_per_session,
            output_cap=terminal_output_cap,
            kill_grace=kill_grace,
            base_env=terminal_env,
            listener=on_terminal_output,
        )
        self._elicit = {"form": elicit_form, "url": elicit_url}
        self._on_elicitation_complete = on_elicitation_complete
        self._buffers = buffers
        self._on_update = on_update
        self._extensions = dict(extensions or {})
        self._capability_meta = dict(capability_meta) if capability_meta else None
        self._max_read_bytes = max_read_bytes
        #: What each session's view keeps of the agent's updates, in counted characters.
        self.max_kept = max_kept
        self._lock = threading.Lock()  # guards the four below
        self.child_count = ChildCount(max_remembered)
        self._sessions: Dict[str, _Session] = {}
        self._url_elicitations: Set[str] = set()
        #: The flag an asking callback of a session waits on: set once the core says the
        #: session's work is cancelled (``on_cancel``), replaced once it says the cancel no longer
        #: reaches it (``on_cancel_lifted``). The core decides which sessions; nothing here does.
        self._cancelled: Dict[str, threading.Event] = {}

    # -- Sessions -----------------------------------------------------------------------------

    def view(self, session_id: str) -> SessionView:
        """The UI state of a session (KeyError if unknown)."""
        with self._lock:
            return self._sessions[session_id].view

    @property
    def session_ids(self) -> List[str]:
        """The ids of the sessions this client knows, in the order they opened."""
        with self._lock:
            return list(self._sessions)

    def tool_call(self, session_id: str, tool_call_id: str) -> Optional[ToolCallView]:
        """A tool call of a session as reported so far, or None."""
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            return None
        with session.view.lock:
            return session.view.tool_calls.get(tool_call_id)

    def roots(self, session_id: str) -> Sequence[str]:
        """The roots a session was given (its cwd, then its additional directories)."""
        with self._lock:
            return self._sessions[session_id].roots.given

    def _session(self, session_id: str) -> _Session:
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None or session.closed:
            # spec RPC-17 / spec-gap unknown-session: not one of ours: -32002.
            raise RpcError(
                ErrorCode.RESOURCE_NOT_FOUND,
                f"unknown session {session_id!r}",
                {"sessionId": session_id},
            )
        return session

    def on_session_open(self, session: OpenedSession) -> None:
        """A session opened (new, load or resume): its roots are set, and a new or loaded
        session starts from an empty view.
        """
        roots = Roots(session.roots)
        with self._lock:
            known = self._sessions.get(session.session_id)
            fresh = session.how == "new" or (session.how == "load" and session.response is None)
            if known is None or fresh:
                # A load replays the whole history: it starts from an empty view (so do its
                # children's views: ``on_child_reloading``).
                known = _Session(roots, SessionView(session.session_id, max_kept=self.max_kept))
                self._sessions[session.session_id] = known
            else:
                known.roots = roots
                known.closed = False
        book = known.view.subagents
        with known.view.lock:
            if session.how in ("load", "resume") and session.response is None:
                # spec SUBAGENT-35: what was known of the children is no longer current.
                book.invalidate()
                book.replaying = session.how == "load"
            else:
                book.replaying = False
        if session.response is not None:
            known.view.seed(session.response)

    def on_agent_result(self, method: str, params: Any, result: Any) -> None:
        """An agent's answer arrived: the view follows mode and option changes, and a closed or
        deleted session's terminals are released.
        """
        with self._lock:
            session = self._sessions.get(getattr(params, "session_id", None) or "")
        if session is None:
            return
        if method == "session/set_mode":
            with session.view.lock:
                session.view.current_mode = params.mode_id
        elif method == "session/set_config_option":
            session.view.set_config_options(result.config_options)
        elif method == "session/close":
            session.closed = True
            threading.Thread(
                target=self.terminals.release_session, args=(params.session_id,), daemon=True
            ).start()
        elif method == "session/delete":
            # A deleted session is gone for good: its view goes too, so that a long-lived client
            # holds only the sessions that exist (tests/test_load.py: memory stays flat).
            with self._lock:
                self._sessions.pop(params.session_id, None)
                self._cancelled.pop(params.session_id, None)
            threading.Thread(
                target=self.terminals.release_session, args=(params.session_id,), daemon=True
            ).start()

    def on_prompt(self, params: s.PromptRequest) -> None:
        """A turn starts: the prompt is recorded as the user's message."""
        with self._lock:
            session = self._sessions.get(params.session_id)
        if session is not None:
            session.view.begin_turn(params.prompt)

    def on_cancel(self, session_id: str) -> None:
        """The session's work was cancelled (its own cancel or close, or an ancestor's: the core
        names every child reached, spec-gap child-cancel-reach): pending questions stop waiting,
        and unfinished tool calls are marked cancelled.
        """
        with self._lock:
            session = self._sessions.get(session_id)
            cancelled = self._cancelled.setdefault(session_id, threading.Event())
        # Asking callbacks stop waiting for the user (spec SUBAGENT-45: a child's elicitation is
        # answered cancel).
        cancelled.set()
        if session is not None:
            # spec PROMPT-20, SUBAGENT-49: unfinished tool calls are marked cancelled (later
            # updates for them are still applied, as for any tool call).
            session.view.cancel_turn()

    def on_cancel_lifted(self, session_id: str) -> None:
        """The cancel no longer reaches the session's work: its next questions wait on a fresh
        flag (spec-gap permission-after-cancel, child-cancel-reach)."""
        with self._lock:
            self._cancelled.pop(session_id, None)

    def on_child_reloading(self, session_id: str) -> None:
        """The load of a session above the child replays it, if at all (SUBAGENT-30): its view
        goes, and the replay's announcement gives it a new one."""
        with self._lock:
            if self._sessions.pop(session_id, None) is not None:
                self.child_count.release(session_id)

    def _cancel_flag(self, session_id: str) -> threading.Event:
        """What an asking callback of the session waits on (set: its work is cancelled)."""
        with self._lock:
            return self._cancelled.setdefault(session_id, threading.Event())

    def on_close(self, reason: Optional[str]) -> None:
        """The connection ended: questions stop waiting, every terminal is killed and reaped."""
        with self._lock:
            sessions = list(self._sessions.values())
            flags = list(self._cancelled.values())
        for cancelled in flags:
            cancelled.set()
        for session in sessions:
            with session.view.lock:
                # spec SUBAGENT-28: no child's last state is live activity once disconnected.
                session.view.subagents.invalidate()
        self.terminals.close()  # no orphans: every terminal is killed and reaped

    # -- Baseline methods ---------------------------------------------------------------------

    def session_update(self, params: s.SessionNotification) -> None:
        """Merge one update into the session's view (messages, tool calls, plan, modes...)."""
        with self._lock:
            session = self._sessions.get(params.session_id)
        if session is None:
            # spec-gap unknown-session: updates for a session not opened here are dropped.
            log.warning("update for unknown session %r ignored", params.session_id)
            return
        session.view.apply(params.update)
        if isinstance(params.update, s.SubagentUpdate):
            self._register_child(params.session_id, session, params.update.session_id)
        if self._on_update is not None:
            self._on_update(params.session_id, params.update)

    def _register_child(self, parent_id: str, parent: _Session, child_id: str) -> None:
        """spec SUBAGENT-03 (provisional): an announced child gets a view; its updates go there."""
        with self._lock:
            if child_id in self._sessions:
                return
            tracked = self.child_count.take(child_id)
            if tracked:
                view = SessionView(child_id, max_kept=self.max_kept)
                view.parent_id = parent_id
                self._sessions[child_id] = _Session(roots=parent.roots, view=view)
        if not tracked:  # spec-gap remembered-bound: its own updates will be dropped, logged
            log.warning("child session %r not tracked: children at max_remembered", child_id)

    def session_request_permission(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionResponse:
        """Answer a permission request with the client's policy (``permissions``)."""
        # spec SUBAGENT-46: a request stays with the session it names (a child's in the
        # child's view, decided against the child's cancel), never its parent or a later turn.
        session = self._session(params.session_id)
        session.view.tool_call(params.tool_call)
        # spec TOOL-08, TOOL-09: the policy answers with an offered option or cancelled.
        return self.permissions.decide(params, self._cancel_flag(params.session_id))

    # -- Files ----------------------------------------------------------------------------------

    def fs_read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        """Read a UTF-8 file below the session's roots: whole (bounded), or ``line``/``limit``
        of it (spec FS-01, FS-02).
        """
        session = self._session(params.session_id)
        line = params.line if isinstance(params.line, int) else None
        limit = params.limit if isinstance(params.limit, int) else None
        # spec FS-04: the text from `line`, at most `limit` lines; FS-05: unsaved buffers.
        content = files.read_text(
            session.roots,
            params.path,
            line,
            limit,
            buffers=self._buffers,
            max_bytes=self._max_read_bytes,
        )
        return s.ReadTextFileResponse(content=content)

    def fs_write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        """Write a file below the session's roots (spec FS-05); missing parent directories
        are made, below a root only (spec-gap fs-write-mkdir).
        """
        session = self._session(params.session_id)
        files.write_text(session.roots, params.path, params.content)  # spec FS-07: created
        return s.WriteTextFileResponse()  # spec FS-08: an empty object

    # -- Terminals ----------------------------------------------------------------------------

    def terminal_create(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        """Start the command in a terminal of the session (no shell, own process group)."""
        session = self._session(params.session_id)
        cwd = params.cwd if isinstance(params.cwd, str) else session.roots.given[0]
        real_cwd = session.roots.directory(cwd)  # the command runs inside the roots too
        args = list(params.args) if isinstance(params.args, list) else []
        env = {v.name: v.value for v in params.env} if isinstance(params.env, list) else {}
        _check_argv(params.command, args, env)
        limit = params.output_byte_limit if isinstance(params.output_byte_limit, int) else None
        # spec TERM-03: the id comes back at once; the command runs on.
        terminal_id = self.terminals.create(
            params.session_id, params.command, args, env, real_cwd, limit
        )
        return s.CreateTerminalResponse(terminal_id=terminal_id)

    def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        """The terminal's output so far, truncated or not, and its exit status once it exited."""
        output, truncated, status = self.terminals.output(params.session_id, params.terminal_id)
        # spec TERM-09: exitStatus only once the command has exited.
        exit_status = (
            s.TerminalExitStatus(exit_code=status[0], signal=status[1]) if status else s.UNSET
        )
        return s.TerminalOutputResponse(output=output, truncated=truncated, exit_status=exit_status)

    def terminal_wait_for_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        """Wait for the command to exit; its exit code or signal name."""
        code, signal_name = self.terminals.wait_for_exit(params.session_id, params.terminal_id)
        # spec TERM-10, TERM-11: exitCode null when killed by a signal, signal null otherwise.
        return s.WaitForTerminalExitResponse(exit_code=code, signal=signal_name)

    def terminal_kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        """Stop the command and what it started; the terminal stays readable."""
        self.terminals.kill(params.session_id, params.terminal_id)  # spec TERM-12
        return s.KillTerminalResponse()

    def terminal_release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        """Kill the command if it runs and forget the terminal."""
        self.terminals.release(params.session_id, params.terminal_id)  # spec TERM-13, TERM-14
        return s.ReleaseTerminalResponse()

    # -- Elicitation --------------------------------------------------------------------------

    def elicitation_modes(self) -> Sequence[str]:
        # spec ELICIT-05: a mode is advertised only when a callback serves it.
        """The elicitation modes advertised: those a callback was given for (spec ELICIT-05)."""
        return tuple(mode for mode, callback in self._elicit.items() if callback is not None)

    def elicitation_create(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        """Ask the callback of the request's mode; a mode without one is refused with -32602."""
        mode = params.mode
        name = getattr(type(mode), "mode", None)
        callback = self._elicit.get(name) if isinstance(name, str) else None
        if callback is None or isinstance(mode, s.Unknown):  # an unknown mode has no callback
            # spec ELICIT-29: a mode we did not advertise (or an unknown one) is -32602, even
            # when no elicitation is advertised at all (spec-gap elicitation-mode-error).
            shown = name if name is not None else getattr(mode, "raw", {}).get("mode")
            raise RpcError(
                ErrorCode.INVALID_PARAMS,
                f"elicitation mode {shown!r} is not supported by this client",
            )
        scope = mode.scope
        session_id = getattr(scope, "session_id", None)
        if isinstance(session_id, str):
            self._session(session_id)  # not one of ours: -32002
            cancelled = self._cancel_flag(session_id)
        else:
            cancelled = threading.Event()
        answer = callback(params, cancelled)
        response = answer if isinstance(answer, s.CreateElicitationResponse) else None
        if response is None:
            if not isinstance(answer, _ACTIONS):
                raise TypeError(f"elicitation callback returned {answer!r}, not an action")
            response = s.CreateElicitationResponse(action=answer)
        if cancelled.is_set() and self._is_child(session_id):
            # spec SUBAGENT-45: the child's work was cancelled while it asked: the dismissed
            # question is answered cancel, whatever the dialog returned.
            response = s.CreateElicitationResponse(action=s.ElicitationCancelAction())
        if isinstance(mode, s.ElicitationUrlMode) and isinstance(
            response.action, s.ElicitationAcceptAction
        ):
            with self._lock:
                self._url_elicitations.add(mode.elicitation_id)  # spec ELICIT-25: kept opaque
        return response

    def _is_child(self, session_id: Any) -> bool:
        with self._lock:
            known = self._sessions.get(session_id) if isinstance(session_id, str) else None
            return known is not None and known.view.parent_id is not None

    def elicitation_complete(self, params: s.CompleteElicitationNotification) -> None:
        """A URL elicitation we accepted finished; unknown ids are ignored (spec ELICIT-28)."""
        with self._lock:
            known = params.elicitation_id in self._url_elicitations
            self._url_elicitations.discard(params.elicitation_id)
        if not known:
            # spec ELICIT-28: unknown or already completed ids are ignored.
            log.debug("elicitation/complete for unknown id %r ignored", params.elicitation_id)
            return
        if self._on_elicitation_complete is not None:
            self._on_elicitation_complete(params.elicitation_id)

    # -- Extensions ---------------------------------------------------------------------------

    def capability_meta(self) -> Optional[Dict[str, Any]]:
        # spec EXT-09, EXT-11: custom methods served are advertised under _meta, by namespace.
        """The ``clientCapabilities._meta`` advertising the custom methods served (spec EXT-09)."""
        return self._capability_meta

    def ext_method(self, method: str, params: Any) -> Any:
        """Serve a custom method with its registered handler; -32601 for others (spec EXT-08)."""
        handler = self._extensions.get(method)
        if handler is None:
            raise RpcError.method_not_found(method)  # spec EXT-08
        return handler(params)

    def ext_notification(self, method: str, params: Any) -> None:
        """Pass a custom notification to its handler; others are ignored (spec EXT-10)."""
        handler = self._extensions.get(method)
        if handler is not None:
            handler(params)  # spec EXT-10: others are ignored


def _check_argv(command: str, args: List[str], env: Dict[str, str]) -> None:
    # Refused here, as -32602, rather than failing inside the spawn: a NUL byte cannot be passed
    # to a program, and a lone surrogate (a \ud800 escape in the JSON) is no text.
    problems = []
    if not command or not _passable(command):
        problems.append("command is empty or has a NUL byte or a lone surrogate")
    if not all(_passable(a) for a in args):
        problems.append("an argument has a NUL byte or a lone surrogate")
    for name, value in env.items():
        if not name or "=" in name or not _passable(name) or not _passable(value):
            # Only the name is shown: a value may be a secret (spec_notes/threat-model.md).
            problems.append(f"environment variable {name!r} is not valid")
    if problems:
        raise RpcError(ErrorCode.INVALID_PARAMS, "; ".join(problems))


def _passable(text: str) -> bool:
    """True when ``text`` can be one argv or environment string: UTF-8, no NUL byte."""
    if "\0" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
