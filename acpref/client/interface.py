"""The ``Client`` interface: what an editor implements to serve an ACP agent.

Spec: overview.mdx (Client methods), initialization.mdx (Client Capabilities); clauses
OVERVIEW-04, OVERVIEW-05, INIT-12, INIT-13, ELICIT-05, EXT-08, EXT-10.

One method per client method of meta.json (``clientMethods``), named after its key, taking the
typed params model and returning the typed result model. ``session_request_permission`` and
``session_update`` are baseline (OVERVIEW-04) and must be implemented; every other method is
optional, and its default raises ``RpcError.method_not_found``. The capabilities sent in
``initialize`` are derived from what a subclass overrides (``capabilities``), so a client never
advertises a method it does not serve (INIT-12).

The ``on_*`` methods are local hooks, not protocol methods: ``ClientSideConnection`` calls them
to tell the client what it did (a session opened, a turn cancelled, the connection closed). Some
run on the thread reading the stream, in wire order: they must be quick and never block.

What must not live here: I/O, threads, the protocol's rules (``acpref._core``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import attrs

from .. import __version__
from .. import schema as s
from ..errors import RpcError
from .permissions import reject

__all__ = ["Client", "OpenedSession", "CLIENT_INFO"]

#: The ``clientInfo`` acpref sends unless a client names itself (spec INIT-03, INIT-20).
CLIENT_INFO = s.Implementation(
    name="acpref-client", title="acpref reference client", version=__version__
)

#: The five terminal methods: a client serves all of them or none (``terminal`` is one flag).
_TERMINAL_METHODS = (
    "terminal_create",
    "terminal_output",
    "terminal_release",
    "terminal_wait_for_exit",
    "terminal_kill",
)


@attrs.frozen(kw_only=True)
class OpenedSession:
    """A session the agent set up for us, with the roots we sent for it.

    ``how`` is ``"new"``, ``"load"`` or ``"resume"``. ``response`` is the typed result, or
    ``None`` when a load or resume request is about to be sent (the agent may replay history
    before it answers, so the client learns of the session first).
    """

    session_id: str
    cwd: str
    additional_directories: Tuple[str, ...] = ()
    how: str = "new"
    response: Any = None

    @property
    def roots(self) -> Tuple[str, ...]:
        """The directories the session may touch: cwd first (spec SETUP-19), then the others."""
        # spec SETUP-19: cwd stays the primary root; the others are added, never replace it.
        return (self.cwd, *self.additional_directories)


class Client:
    """Serves an agent's requests. Subclass it; ``ReferenceClient`` is a ready one.

    Handlers run on the connection's worker threads (requests) or its notification thread
    (``session_update``, ``elicitation_complete``, extension notifications, in wire order).
    """

    #: ``clientInfo`` sent in ``initialize`` (spec INIT-03).
    client_info: s.Implementation = CLIENT_INFO
    #: True when the client renders boolean config options (spec INIT-13: advertised as
    #: ``session.configOptions.boolean``; without it the client never sends boolean values).
    supports_boolean_config: bool = False
    #: True when the client shows ``notice`` updates (spec NOTICE-01: advertised as
    #: ``session.notices``; without it the agent sends none).
    supports_notices: bool = False
    #: True when the client keeps compactions (spec COMPACT-01: advertised as
    #: ``session.compaction``, the whole contract of COMPACT-05 .. COMPACT-08).
    supports_compaction: bool = False
    #: True when the client tracks plans by id (provisional PLANOP-01: advertised as
    #: ``plan: {}``; the agent then sends plan_update and plan_removed, not the legacy plan).
    supports_plan_operations: bool = False
    #: True when the client registers announced child sessions (provisional SUBAGENT-01,
    #: SUBAGENT-03: advertised as ``subagents: {}``).
    supports_subagents: bool = False

    # -- Baseline methods ---------------------------------------------------------------------
    # spec OVERVIEW-04: session/request_permission and session/update are always served.

    def session_request_permission(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionResponse:
        """Ask the user whether a tool call may run. Override it; the default rejects.

        spec-gap default-permission: a client that asks nobody rejects (a reject option if one
        is offered, else the ``cancelled`` outcome); it never allows on its own.
        """
        return reject(params)

    def session_update(self, params: s.SessionNotification) -> None:
        """Take one streamed update about a session (a notification; no answer)."""

    # -- Optional methods (spec OVERVIEW-05): advertised only when overridden -------------------

    def fs_read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        """Read a text file for the agent (spec FS-01); advertised as ``fs.readTextFile`` only
        when overridden. The default answers -32601.
        """
        raise RpcError.method_not_found("fs/read_text_file")

    def fs_write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        """Write a text file for the agent (spec FS-05); advertised as ``fs.writeTextFile`` only
        when overridden. The default answers -32601.
        """
        raise RpcError.method_not_found("fs/write_text_file")

    def terminal_create(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        """Start a command and answer its terminal id at once (spec TERM-03); advertised as
        ``terminal`` only when overridden. The default answers -32601.
        """
        raise RpcError.method_not_found("terminal/create")

    def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        """A terminal's output so far, whether it was truncated, and its exit status once it
        exited (spec TERM-09). The default answers -32601.
        """
        raise RpcError.method_not_found("terminal/output")

    def terminal_release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        """Kill the command if it still runs and forget the terminal (spec TERM-13). The
        default answers -32601.
        """
        raise RpcError.method_not_found("terminal/release")

    def terminal_wait_for_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        """Answer once the command has exited, with its exit code or signal (spec TERM-11).
        The default answers -32601.
        """
        raise RpcError.method_not_found("terminal/wait_for_exit")

    def terminal_kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        """Stop the command; the terminal stays readable (spec TERM-12). The default answers
        -32601.
        """
        raise RpcError.method_not_found("terminal/kill")

    def elicitation_create(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        """Ask the user for structured input or to visit a URL (spec ELICIT-01); advertised
        only when overridden. The default answers -32601.
        """
        raise RpcError.method_not_found("elicitation/create")

    def elicitation_complete(self, params: s.CompleteElicitationNotification) -> None:
        """A URL elicitation finished out of band (a notification). Unknown ids are ignored."""

    # -- Extensions (spec EXT-06 .. EXT-10) -----------------------------------------------------

    def ext_method(self, method: str, params: Any) -> Any:
        """A custom ``_``-prefixed request: raw JSON in, raw JSON out (spec EXT-08: -32601)."""
        raise RpcError.method_not_found(method)

    def ext_notification(self, method: str, params: Any) -> None:
        """A custom ``_``-prefixed notification: ignored by default (spec EXT-10)."""

    # -- What we advertise ---------------------------------------------------------------------

    def capability_meta(self) -> Optional[dict]:
        """Custom capabilities, sent as ``clientCapabilities._meta`` (spec EXT-09, EXT-11).

        Namespaced by key, e.g. ``{"acpref": {"echo": True}}`` for a custom method served.
        """
        return None

    def elicitation_modes(self) -> Sequence[str]:
        """The elicitation modes served (``"form"``, ``"url"``); none unless overridden."""
        return ()

    def capabilities(self) -> s.ClientCapabilities:
        """The ``clientCapabilities`` of ``initialize``, derived from what this client serves.

        Spec INIT-12: fs and terminal support are stated explicitly (``false`` too);
        ELICIT-05: ``elicitation`` is sent only with the modes served, and each mode is an
        object; INIT-13: ``session.configOptions.boolean`` only when booleans are rendered.
        """
        # spec OVERVIEW-05: an optional method is advertised only when it is served.
        terminal = all(self._overrides(name) for name in _TERMINAL_METHODS)
        caps: dict = {
            "fs": s.FileSystemCapabilities(
                read_text_file=self._overrides("fs_read_text_file"),
                write_text_file=self._overrides("fs_write_text_file"),
            ),
            "terminal": terminal,
            # spec AUTH-06: auth.terminal only for a client that can rerun the agent in a
            # terminal; acpref does not.
            "auth": s.AuthCapabilities(terminal=False),
        }
        modes = set(self.elicitation_modes()) if self._overrides("elicitation_create") else set()
        if modes:
            # spec ELICIT-05: a mode is supported only when its field is a non-null object.
            caps["elicitation"] = s.ElicitationCapabilities(
                form=s.ElicitationFormCapabilities() if "form" in modes else s.UNSET,
                url=s.ElicitationUrlCapabilities() if "url" in modes else s.UNSET,
            )
        session: dict = {}
        if self.supports_boolean_config:
            # spec INIT-13: boolean options are advertised by a non-null object.
            session["config_options"] = s.SessionConfigOptionsCapabilities(
                boolean=s.BooleanConfigOptionCapabilities()
            )
        if self.supports_notices:
            session["notices"] = s.NoticeCapabilities()  # spec NOTICE-01: {} opts in
        if self.supports_compaction:
            session["compaction"] = s.CompactionCapabilities()  # spec COMPACT-01: {} opts in
        if session:
            caps["session"] = s.ClientSessionCapabilities(**session)
        if self.supports_plan_operations:
            caps["plan"] = s.PlanCapabilities()  # spec PLANOP-01 (provisional)
        if self.supports_subagents:
            caps["subagents"] = s.SubagentCapabilities()  # spec SUBAGENT-01 (provisional)
        meta = self.capability_meta()
        if meta:
            # spec EXT-11, INIT-22: custom capabilities live in _meta; every other key is one the
            # schema defines (the models have no others).
            caps["meta"] = meta
        return s.ClientCapabilities(**caps)

    def _overrides(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(Client, name)

    # -- Local hooks (not protocol methods) -----------------------------------------------------

    def on_session_open(self, session: OpenedSession) -> None:
        """A session was set up (or is about to be loaded/resumed) with these roots.

        For ``session/new`` and for the answers to load/resume, this runs on the reading thread
        before any later message is handled: requests for the session find it registered.
        """

    def on_prompt(self, params: s.PromptRequest) -> None:
        """A prompt is about to be sent (a UI shows the user's message)."""

    def on_agent_result(self, method: str, params: Any, result: Any) -> None:
        """The agent answered one of our requests with a result (typed), in wire order.

        Runs on the reading thread: record state (a mode set, new config options), never block.
        """

    def on_cancel(self, session_id: str) -> None:
        """We cancelled the session's work: stop asking the user anything for it.

        Called as the rules record our session/cancel or session/close, before it is written, for
        the session it names and then every child announced below it (spec-gap
        child-cancel-reach); not for one the rules refuse to send. Runs under the connection's
        write lock: quick, never blocking, never sending.
        """

    def on_cancel_lifted(self, session_id: str) -> None:
        """An earlier cancel no longer reaches the session's work: its next prompt is being sent,
        a child reported ``running``, or the session was closed or deleted. Quick, as
        ``on_cancel``."""

    def on_child_reloading(self, session_id: str) -> None:
        """A load of a session above this child is being sent: the agent replays the child's
        history with it, if at all (SUBAGENT-30); what the client shows of the child is the
        replay's to rebuild. Called for every child the rules know below the loaded session,
        under the write lock, as ``on_cancel``."""

    def on_close(self, reason: Optional[str]) -> None:
        """The connection closed: free everything (terminals are killed and reaped here)."""
