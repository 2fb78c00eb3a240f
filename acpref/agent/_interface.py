"""The ``Agent`` interface: one method per agent method of ACP v1, with working defaults.

Spec: overview.mdx (Agent methods), initialization.mdx, authentication.mdx, session-setup.mdx,
session-list.mdx, session-delete.mdx, session-modes.mdx, session-config-options.mdx,
prompt-turn.mdx, extensibility.mdx; ``spec_notes/spec/meta.json`` (method names).

Subclass ``Agent`` and override ``session_prompt`` at least. Method names are the keys of
meta.json's ``agentMethods`` (``session_new`` for ``session/new``); each takes the typed params
model and returns the typed result model. Everything else has a default that works on the
``SessionRegistry``: new sessions are created there, ``session/load`` replays their recorded
history, ``session/resume`` restores them without replay, list/delete/close act on it, modes and
config options are kept there. So a minimal agent supports every optional session method; one
that cannot (its conversation lives elsewhere) narrows ``capabilities()``.

Modes and the config option of category ``mode`` are kept in step whichever API changes them
(CONFIG-22, CONFIG-24): ``set_current_mode`` is the one place that does it.

The agent-side connection (``_connection``) enforces the protocol around these methods: it
negotiates the version, refuses what is not advertised, checks authentication, runs one turn per
session, and makes a cancelled turn end with ``stopReason: "cancelled"``. The implementer's code
does not need to repeat those rules.

What must not live here: wire I/O, threads, the rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional

import attrs

from .. import __version__
from .. import schema as s
from .._core import gate_open, wire_caps
from .._core.plan_operations import CAPABILITY as PLAN_OPERATIONS
from .._core.plan_operations import KINDS as PLAN_OPERATION_KINDS
from .._core.system_prompt import CAPABILITY as SYSTEM_PROMPT, mode_supported
from ..errors import RpcError
from ..methods import PROTOCOL_VERSION
from ..schema import UNSET
from ._sessions import InvalidCursor, Session, SessionRegistry

if TYPE_CHECKING:  # pragma: no cover
    from ._client import ClientHandle
    from ._turn import PromptTurn

__all__ = ["Agent"]


class Agent:
    """Base class of an ACP agent. ``client`` is the typed handle on the connected client."""

    #: Sent as ``agentInfo`` (spec INIT-05).
    info: s.Implementation = s.Implementation(name="acpref-agent", version=__version__)
    #: When True, session methods answer -32000 until ``authenticate`` succeeds (spec RPC-16).
    auth_required: bool = False
    #: Connect to the MCP servers each session names (spec SETUP-30, SETUP-36); False to leave
    #: ``mcpServers`` to the implementation.
    connect_mcp_servers: bool = True
    #: How long session/new, load and resume wait for the MCP servers to start and answer:
    #: one deadline for all of them together (spec-gap mcp-deadline).
    mcp_connect_timeout: float = 30.0
    #: What each MCP server may make the agent hold (an ``acpref.mcp.McpLimits``); None for its
    #: defaults (spec-gap mcp-bounds).
    mcp_limits: Optional[Any] = None

    def __init__(self, client: "ClientHandle", sessions: Optional[SessionRegistry] = None) -> None:
        self.client = client
        self.sessions = sessions if sessions is not None else SessionRegistry()
        #: What was sent as ``agentCapabilities`` in ``initialize`` (set by the agent side).
        self.advertised: s.AgentCapabilities = s.AgentCapabilities()

    # -- What to advertise -----------------------------------------------------------------------

    def capabilities(self) -> s.AgentCapabilities:
        """The capabilities sent in ``initialize`` (spec INIT-14); the defaults use the registry.

        ``auth.logout`` is advertised when there are authentication methods to log out of (AUTH-02).
        """
        # spec AUTH-02: logout is implemented, so it is advertised (an object) when there is
        # something to log out of.
        logout = s.LogoutCapabilities() if self.auth_methods() else UNSET
        # spec INIT-14: every capability stated, loadSession, prompt, MCP, session and auth.
        return s.AgentCapabilities(
            # spec INIT-19: load support is the top-level loadSession, never in sessionCapabilities.
            load_session=True,
            # spec INIT-16: image, audio and embedded context are opt-in; this agent takes none.
            prompt_capabilities=s.PromptCapabilities(
                image=False, audio=False, embedded_context=False
            ),
            # spec SETUP-30: stdio always; SETUP-31: streamable HTTP too; SSE (deprecated by
            # MCP) is not offered.
            mcp_capabilities=s.McpCapabilities(http=self.connect_mcp_servers, sse=False),
            session_capabilities=s.SessionCapabilities(
                list=s.SessionListCapabilities(),
                delete=s.SessionDeleteCapabilities(),
                resume=s.SessionResumeCapabilities(),
                close=s.SessionCloseCapabilities(),
                additional_directories=s.SessionAdditionalDirectoriesCapabilities(),
            ),
            auth=s.AgentAuthCapabilities(logout=logout),
        )

    def auth_methods(self) -> List[s.AuthMethod]:
        """The authentication methods sent in ``initialize`` (spec AUTH-01)."""
        return []

    def initial_modes(self, session: Session) -> Optional[s.SessionModeState]:
        """The modes a new session starts with (spec MODES-01); None for none."""
        return None

    def initial_config_options(self, session: Session) -> Optional[List[s.SessionConfigOption]]:
        """The config options a new session starts with (spec CONFIG-01); None for none."""
        return None

    # -- Initialization and authentication -------------------------------------------------------

    def initialize(self, params: s.InitializeRequest) -> s.InitializeResponse:
        """Answer ``initialize``. The connection fixes ``protocolVersion`` (INIT-07, INIT-08)."""
        return s.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=self.capabilities(),
            auth_methods=self.auth_methods(),  # spec AUTH-01: the methods, each with id and name
            agent_info=self.info,
        )

    def authenticate(self, params: s.AuthenticateRequest) -> s.AuthenticateResponse:
        """Run an agent-handled login (spec AUTH-07, AUTH-09); none is advertised by default."""
        raise RpcError.invalid_params(f"unknown authentication method {params.method_id!r}")

    def logout(self, params: s.LogoutRequest) -> s.LogoutResponse:
        """End the authenticated state (spec AUTH-16); reached only with ``auth.logout``."""
        return s.LogoutResponse()  # spec AUTH-16: an empty object

    # -- Sessions --------------------------------------------------------------------------------

    def session_new(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        """Create a session in the registry (spec SETUP-02: a unique id)."""
        system_prompt = self.accept_system_prompt(params.system_prompt)
        session = self.sessions.create(
            params.cwd,
            # spec SETUP-21: absent or [] means no extra root: cwd is the only one.
            additional_directories=_list(params.additional_directories),
            mcp_servers=_list(params.mcp_servers),
        )
        self.sessions.set_system_prompt(session, system_prompt)
        self.sessions.set_modes(session, self.initial_modes(session))
        self.sessions.set_config_options(session, self.initial_config_options(session))
        self.connect_mcp(session, _list(params.mcp_servers))
        # spec MODES-01, CONFIG-01: the session's modes and config options, when it has any.
        return s.NewSessionResponse(
            session_id=session.id,
            modes=_opt(session.modes),
            config_options=_opt(session.config_options),
        )

    def accept_system_prompt(self, prompt: Any) -> Optional[s.SystemPrompt]:
        """The client's ``systemPrompt`` if this agent can apply it, else an error (provisional).

        Called by session/new, load and resume before anything is created or reopened (spec
        SYSPROMPT-04: an error instead of a session). Omitted and ``null`` give None: the
        agent's default instructions on new (SYSPROMPT-13), the stored prompt on load and resume
        (SYSPROMPT-12). Supported: what ``capabilities()`` advertised, with text content
        (SYSPROMPT-06); override to support more block types.
        """
        if prompt is None or prompt is UNSET:
            return None
        caps = wire_caps(self.advertised)
        mode = getattr(prompt.mode, "value", prompt.mode)
        if not gate_open(SYSTEM_PROMPT, caps):
            raise RpcError.invalid_params(f"this agent does not advertise {SYSTEM_PROMPT}")
        if not mode_supported(mode, caps):
            # spec SYSPROMPT-04, SYSPROMPT-05: an unadvertised or unknown mode is an error, never
            # read as append or override.
            raise RpcError.invalid_params(f"systemPrompt mode {mode!r} is not supported")
        if not prompt.content:
            # spec SYSPROMPT-10: an empty content array is refused with -32602.
            raise RpcError.invalid_params("systemPrompt content is empty")
        for block in prompt.content:
            if not isinstance(block, s.TextContent):
                # spec SYSPROMPT-08: an error for a content block type it does not support.
                kind = getattr(block, "type", None) or "unknown"
                raise RpcError.invalid_params(f"systemPrompt content: {kind} blocks unsupported")
        return prompt

    def session_opened(self, session_id: str) -> None:
        """Hook: a session/new, load or resume response naming ``session_id`` is on the wire.

        The place to send ``available_commands_update`` (SLASH-01) and anything else that may
        only name a session the client already knows. Runs on its own thread, after the answer.
        """

    def session_load(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        """Reopen a session and replay its whole history before answering (SETUP-05, SETUP-07)."""
        session = self._reopen(params)
        # spec SETUP-05, SUBAGENT-34: everything replayed is sent before this answer.
        for notification in self.replay_notifications(session):
            self.client.session_update(notification)
        # spec SETUP-08: an object (modes and options, or {}), never null.
        return s.LoadSessionResponse(
            modes=_opt(session.modes), config_options=_opt(session.config_options)
        )

    def replay_notifications(self, session: Session) -> Iterator[s.SessionNotification]:
        """What ``session/load`` replays: the session's history, in order (spec SETUP-05).

        Override to replay what the registry does not record, such as a subagent's own
        history (SUBAGENT-30), or to leave out what can no longer be told truthfully
        (SUBAGENT-32). Everything yielded is sent before the load's answer.
        """
        plans_ok = self.client.supports(PLAN_OPERATIONS)
        for update in session.replay():
            if not plans_ok and getattr(update, "session_update", None) in PLAN_OPERATION_KINDS:
                continue  # spec PLANOP-01 (provisional): not to a client without the capability
            yield s.SessionNotification(session_id=session.id, update=update)

    def session_resume(self, params: s.ResumeSessionRequest) -> s.ResumeSessionResponse:
        """Reopen a session without replaying anything (spec SETUP-12)."""
        session = self._reopen(params)
        # spec SETUP-13: modes and config options when the session has them, else {}.
        return s.ResumeSessionResponse(
            modes=_opt(session.modes), config_options=_opt(session.config_options)
        )

    def _reopen(self, params: Any) -> Session:
        session = self.require_session(params.session_id)
        if _norm(params.cwd) != _norm(session.cwd):
            # spec SETUP-22 / spec-gap cwd-match: load and resume name the session's own cwd.
            raise RpcError.invalid_params(
                f"cwd {params.cwd!r} is not the session's cwd {session.cwd!r}"
            )
        system_prompt = self.accept_system_prompt(params.system_prompt)
        if system_prompt is not None:
            self.sessions.set_system_prompt(session, system_prompt)
        # spec SETUP-21, SETUP-22, SETUP-23: the roots are exactly those sent now; omitted means
        # none (cwd only).
        self.sessions.reopen(
            session,
            additional_directories=_list(params.additional_directories),
            # spec-gap resume-mcp-servers: a resume without mcpServers names no servers.
            mcp_servers=_list(params.mcp_servers),
        )
        # Connected after the context is restored and before a load's replay (the spec's
        # session setup diagram).
        self.connect_mcp(session, _list(params.mcp_servers))
        return session

    def session_close(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        """Free what the session holds (spec SETUP-16, SETUP-17); it stays loadable.

        The running turn has been cancelled and has ended before this is called. Override to
        release live resources (``session.live``: MCP connections, ...).
        """
        # spec SETUP-18: closing a session we do not know is an error (-32002).
        session = self.require_session(params.session_id)
        self._disconnect_mcp(session)
        session._live = None  # what was live goes (and no dict is made just to be emptied)
        self.sessions.close(session)  # what stays is a compact record, while nothing needs more
        return s.CloseSessionResponse()  # spec SETUP-17: an empty object

    def session_list(self, params: s.ListSessionsRequest) -> s.ListSessionsResponse:
        """One page of sessions (spec LIST-02 .. LIST-13)."""
        try:
            infos, next_cursor = self.sessions.list(
                # spec LIST-02: every param is optional; none gives the first page of all.
                cwd=params.cwd or None,
                cursor=params.cursor or None,
                with_directories=gate_open(
                    "sessionCapabilities.additionalDirectories", self.advertised
                ),
            )
        except InvalidCursor as exc:
            # spec LIST-12, spec-gap invalid-cursor: a cursor we did not issue is -32602.
            raise RpcError.invalid_params(str(exc)) from None
        return s.ListSessionsResponse(  # spec LIST-09: no match is an empty page, not an error
            sessions=infos, next_cursor=next_cursor if next_cursor else UNSET
        )

    def session_delete(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        """Forget a session; unknown ids succeed silently (spec DELETE-02, DELETE-04)."""
        session = self.sessions.get(params.session_id)
        if session is not None:
            self._disconnect_mcp(session)
        # spec DELETE-05: a hard delete: a later load or resume of the id is -32002.
        # spec DELETE-04: a session already gone, or never known, is deleted silently.
        self.sessions.delete(params.session_id)
        return s.DeleteSessionResponse()  # spec DELETE-02: an empty object

    def session_set_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
        """Switch mode, idle or mid-turn (spec MODES-03, MODES-05); the mode option follows."""
        # spec MODES-03: no check of a running turn: a mode change is taken idle or mid-turn.
        session = self.require_session(params.session_id)
        if session.modes is None:
            raise RpcError.invalid_params("the session has no modes")
        # The mode is one of availableModes: the protocol core refused any other before this
        # handler ran (MODES-04, acpref/_core).
        send = lambda update: self.client.update(session.id, update)  # noqa: E731
        self.set_current_mode(session, params.mode_id, send, announce_mode=False)
        return s.SetSessionModeResponse()  # spec MODES-05: an empty object

    def session_set_config_option(
        self, params: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        """Set one option and answer the complete list (spec CONFIG-16 .. CONFIG-19)."""
        # spec CONFIG-16: no check of a running turn: taken idle or mid-turn.
        session = self.require_session(params.session_id)
        options = list(session.config_options or [])
        for i, option in enumerate(options):
            if option.id == params.config_id:
                options[i] = _with_value(option, params.value)
                break
        else:
            raise RpcError.invalid_params(
                f"unknown config option {params.config_id!r}"
            )  # spec CONFIG-17
        self.sessions.set_config_options(session, options)
        mode_option = session.mode_option()
        if (
            mode_option is not None
            and mode_option.id == params.config_id
            and isinstance(params.value, str)
        ):
            send = lambda update: self.client.update(session.id, update)  # noqa: E731
            self.set_current_mode(session, params.value, send, announce_options=False)
        # spec CONFIG-19: the complete list, dependent changes included.
        return s.SetSessionConfigOptionResponse(config_options=list(session.config_options or []))

    def set_current_mode(
        self,
        session: Session,
        mode_id: str,
        send: Callable[[Any], None],
        *,
        announce_mode: bool = True,
        announce_options: bool = True,
    ) -> None:
        """Make ``mode_id`` current in the session's modes *and* its mode config option.

        spec CONFIG-22, CONFIG-24: an agent offering both keeps them in step whichever API
        changed them. ``send`` delivers the updates that tell the client (``turn.update`` inside
        a turn, ``client.update`` outside one): ``current_mode_update`` (MODES-06) when
        ``announce_mode``, the complete ``config_option_update`` (CONFIG-21) when
        ``announce_options`` and the option changed.
        """
        # spec CONFIG-22, CONFIG-24: the legacy modes and the mode option move together.
        modes = session.modes
        if modes is not None and mode_id in {m.id for m in modes.available_modes}:
            if modes.current_mode_id != mode_id:
                self.sessions.set_modes(session, attrs.evolve(modes, current_mode_id=mode_id))
            if announce_mode:
                # spec MODES-06: the agent's own change, told with currentModeId.
                send(s.CurrentModeUpdate(current_mode_id=mode_id))
        option = session.mode_option()
        if option is None or not isinstance(option.kind, s.SessionConfigSelect):
            return
        if option.kind.current_value == mode_id or mode_id not in _select_values(option.kind):
            return
        options = [
            _with_value(o, mode_id) if o is option else o for o in session.config_options or []
        ]
        self.sessions.set_config_options(session, options)
        if announce_options:
            # spec CONFIG-20: the agent's own change, announced;
            # spec CONFIG-21: with the complete list of options, not just the one that changed.
            send(s.ConfigOptionUpdate(config_options=options))

    # -- The prompt turn -------------------------------------------------------------------------

    def session_prompt(self, params: s.PromptRequest, turn: "PromptTurn") -> Any:
        """Run one prompt turn: stream updates with ``turn.update``; return how it ended.

        Return a ``PromptResponse``, a ``StopReason``, or None (``end_turn``). Check
        ``turn.cancelled`` (``is_set()``, ``wait(timeout)``, like a ``threading.Event``) while
        working; on cancellation return or raise as you like: the connection answers ``stopReason: "cancelled"`` (PROMPT-23, PROMPT-24).
        Raise ``RpcError`` to answer the prompt with that error instead.
        """
        raise RpcError.method_not_found("session/prompt")

    def session_cancel(self, params: s.CancelNotification) -> None:
        """Hook called after the running turn of the session has been flagged cancelled."""

    # -- Extensions ------------------------------------------------------------------------------

    def ext_method(self, method: str, params: Any) -> Any:
        """A custom ``_``-prefixed request (spec EXT-06); unknown ones get -32601 (EXT-08)."""
        raise RpcError.method_not_found(method)

    def ext_notification(self, method: str, params: Any) -> None:
        """A custom ``_``-prefixed notification; unknown ones are ignored (spec EXT-10)."""

    # -- Helpers for implementations -------------------------------------------------------------

    # -- MCP servers -----------------------------------------------------------------------------

    def connect_mcp(self, session: Session, servers: List[Any]) -> None:
        """Connect the MCP servers a session names; keep them in ``session.live["mcp"]``.

        Servers that fail to start or to answer within ``mcp_connect_timeout`` are left out:
        the session is set up without them (spec-gap mcp-failure); a server whose tool list was
        cut at a bound of ``mcp_limits`` is kept with the tools taken (spec-gap mcp-bounds).
        Both wait in ``session.live["mcp_notices"]``, as ``(title, text)`` pairs, for the
        implementation to tell the user (the echo agent sends them as notices, or says them in
        the next turn).
        """
        if not self.connect_mcp_servers:
            return
        # spec SETUP-23: a load or resume names the servers anew; the old ones go.
        self._disconnect_mcp(session)
        if not servers:
            return
        from ..mcp import McpManager, notices_for  # on first use: import acpref stays light

        manager = McpManager(**({} if self.mcp_limits is None else {"limits": self.mcp_limits}))
        session.live["mcp"] = manager
        # spec SETUP-36: connect to every server the client named (in parallel, bounded).
        outcomes = manager.connect(
            servers,
            http_allowed=gate_open("mcpCapabilities.http", self.advertised),
            sse_allowed=gate_open("mcpCapabilities.sse", self.advertised),
            timeout=self.mcp_connect_timeout,
            cwd=session.cwd,  # spec SETUP-26: the session's cwd, not this process's directory
        )
        # spec-gap mcp-failure: the session exists without the servers that failed; and
        # spec-gap mcp-bounds: with the tools taken from lists cut at a bound. Both are told.
        notices = notices_for(outcomes)
        if notices:
            session.live["mcp_notices"] = notices

    def mcp(self, session: Session) -> Any:
        """The session's ``acpref.mcp.McpManager``, or None when it names no servers."""
        return session.live.get("mcp")

    def _disconnect_mcp(self, session: Session) -> None:
        if session._live is None:  # nothing live yet (and no dict made just to look)
            return
        manager = session.live.pop("mcp", None)
        session.live.pop("mcp_notices", None)
        if manager is not None:
            manager.close()

    def connection_closed(self) -> None:
        """Hook: the ACP connection ended. Stops every session's MCP servers (no orphan)."""
        for session in self.sessions:
            self._disconnect_mcp(session)

    def require_session(self, session_id: str) -> Session:
        """The registry's session, or -32002 (spec RPC-17; spec-gap unknown-session)."""
        session = self.sessions.get(session_id)
        if session is None:
            # spec SCHEMA-23: -32002 "resource not found" covers a session (schema of 2026-11-02).
            raise RpcError.resource_not_found(f"unknown session {session_id!r}")
        return session


def _list(value: Any) -> List[Any]:
    return list(value) if isinstance(value, list) else []


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


def _norm(path: str) -> str:
    return path.rstrip("/\\") or path


def _with_value(option: s.SessionConfigOption, value: Any) -> s.SessionConfigOption:
    kind = option.kind
    if isinstance(kind, s.SessionConfigBoolean):
        if type(value) is not bool:
            raise RpcError.invalid_params(f"{option.id!r} is a boolean option")  # spec CONFIG-18
        return attrs.evolve(option, kind=attrs.evolve(kind, current_value=value))
    if isinstance(kind, s.SessionConfigSelect):
        if value not in _select_values(kind):
            raise RpcError.invalid_params(
                f"{value!r} is not a value of {option.id!r}"
            )  # spec CONFIG-17
        return attrs.evolve(option, kind=attrs.evolve(kind, current_value=value))
    raise RpcError.invalid_params(f"{option.id!r} cannot be set")


def _select_values(kind: s.SessionConfigSelect) -> set:
    values = set()
    for item in kind.options:
        if isinstance(item, s.SessionConfigSelectGroup):
            values |= {o.value for o in item.options}
        else:
            values.add(item.value)
    return values
