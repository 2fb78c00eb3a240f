"""The ``Agent`` interface: one method per agent method of ACP v1, with working defaults.

Spec: overview.mdx (Agent methods), initialization.mdx, authentication.mdx, session-setup.mdx,
session-list.mdx, session-delete.mdx, session-modes.mdx, session-config-options.mdx,
prompt-turn.mdx, extensibility.mdx; ``../shared/spec/meta.json`` (method names).

Subclass ``Agent`` and override ``session_prompt`` at least. Method names are the keys of
meta.json's ``agentMethods`` (``session_new`` for ``session/new``); each takes the typed params
model and returns the typed result model. Everything else has a default that works on the
``SessionRegistry``: new sessions are created there, ``session/load`` replays their recorded
history, ``session/resume`` restores them without replay, list/delete/close act on it, modes and
config options are kept there. So a minimal agent supports every optional session method; one
that cannot (its conversation lives elsewhere) narrows ``capabilities()``.

The agent-side connection (``_connection``) enforces the protocol around these methods: it
negotiates the version, refuses what is not advertised, checks authentication, runs one turn per
session, and makes a cancelled turn end with ``stopReason: "cancelled"``. The implementer's code
does not need to repeat those rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

import attrs

from .. import __version__
from .. import schema as s
from .._rules import gate_open
from ..errors import RpcError
from ..methods import PROTOCOL_VERSION
from ..schema import UNSET
from ._sessions import Session, SessionRegistry

if TYPE_CHECKING:  # pragma: no cover
    from ._connection import ClientHandle, PromptTurn

__all__ = ["Agent"]


class Agent:
    """Base class of an ACP agent. ``client`` is the typed handle on the connected client."""

    #: Sent as ``agentInfo`` (spec INIT-05).
    info: s.Implementation = s.Implementation(name="acpref-agent", version=__version__)
    #: When True, session methods answer -32000 until ``authenticate`` succeeds (spec RPC-16).
    auth_required: bool = False

    def __init__(self, client: "ClientHandle", sessions: Optional[SessionRegistry] = None) -> None:
        self.client = client
        self.sessions = sessions if sessions is not None else SessionRegistry()

    # -- What to advertise -----------------------------------------------------------------------

    def capabilities(self) -> s.AgentCapabilities:
        """The capabilities sent in ``initialize`` (spec INIT-14). The defaults work on the registry."""
        return s.AgentCapabilities(
            load_session=True,
            prompt_capabilities=s.PromptCapabilities(image=False, audio=False, embedded_context=False),
            mcp_capabilities=s.McpCapabilities(http=False, sse=False),
            session_capabilities=s.SessionCapabilities(
                list=s.SessionListCapabilities(),
                delete=s.SessionDeleteCapabilities(),
                resume=s.SessionResumeCapabilities(),
                close=s.SessionCloseCapabilities(),
                additional_directories=s.SessionAdditionalDirectoriesCapabilities(),
            ),
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
            auth_methods=self.auth_methods(),
            agent_info=self.info,
        )

    def authenticate(self, params: s.AuthenticateRequest) -> s.AuthenticateResponse:
        """Run an agent-handled login (spec AUTH-07, AUTH-09). No methods are advertised by default."""
        raise RpcError.invalid_params(f"unknown authentication method {params.method_id!r}")

    def logout(self, params: s.LogoutRequest) -> s.LogoutResponse:
        """End the authenticated state (spec AUTH-16). Only reached when ``auth.logout`` is advertised."""
        return s.LogoutResponse()

    # -- Sessions --------------------------------------------------------------------------------

    def session_new(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        """Create a session in the registry (spec SETUP-02: a unique id)."""
        session = self.sessions.create(
            params.cwd,
            additional_directories=_list(params.additional_directories),
            mcp_servers=_list(params.mcp_servers),
        )
        self.sessions.set_modes(session, self.initial_modes(session))
        self.sessions.set_config_options(session, self.initial_config_options(session))
        return s.NewSessionResponse(
            session_id=session.id, modes=_opt(session.modes), config_options=_opt(session.config_options)
        )

    def session_load(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        """Reopen a session and replay its whole history before answering (SETUP-05, SETUP-07)."""
        session = self._reopen(params)
        for update in list(session.history):
            self.client.session_update(s.SessionNotification(session_id=session.id, update=update))
        return s.LoadSessionResponse(modes=_opt(session.modes), config_options=_opt(session.config_options))

    def session_resume(self, params: s.ResumeSessionRequest) -> s.ResumeSessionResponse:
        """Reopen a session without replaying anything (spec SETUP-12)."""
        session = self._reopen(params)
        return s.ResumeSessionResponse(modes=_opt(session.modes), config_options=_opt(session.config_options))

    def _reopen(self, params: Any) -> Session:
        session = self.require_session(params.session_id)
        if _norm(params.cwd) != _norm(session.cwd):
            # spec SETUP-22 / spec-gap cwd-match: load and resume name the session's own cwd.
            raise RpcError.invalid_params(f"cwd {params.cwd!r} is not the session's cwd {session.cwd!r}")
        # spec SETUP-22, SETUP-23: the roots are exactly those sent now; omitted means none.
        self.sessions.reopen(
            session,
            additional_directories=_list(params.additional_directories),
            mcp_servers=_list(params.mcp_servers),
        )
        return session

    def session_close(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        """Free what the session holds on this connection (spec SETUP-16, SETUP-17)."""
        self.require_session(params.session_id)
        return s.CloseSessionResponse()

    def session_list(self, params: s.ListSessionsRequest) -> s.ListSessionsResponse:
        """One page of sessions (spec LIST-02 .. LIST-13)."""
        try:
            infos, next_cursor = self.sessions.list(
                cwd=params.cwd or None,
                cursor=params.cursor or None,
                with_directories=gate_open("sessionCapabilities.additionalDirectories", self.capabilities()),
            )
        except ValueError as exc:
            raise RpcError.invalid_params(str(exc)) from None  # spec LIST-12: invalid cursor
        return s.ListSessionsResponse(sessions=infos, next_cursor=next_cursor if next_cursor else UNSET)

    def session_delete(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        """Forget a session; unknown ids succeed silently (spec DELETE-02, DELETE-04)."""
        self.sessions.delete(params.session_id)
        return s.DeleteSessionResponse()

    def session_set_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
        """Switch mode, idle or mid-turn (spec MODES-03, MODES-05)."""
        session = self.require_session(params.session_id)
        modes = session.modes
        if modes is None or params.mode_id not in {m.id for m in modes.available_modes}:
            raise RpcError.invalid_params(f"unknown mode {params.mode_id!r}")  # spec MODES-04
        self.sessions.set_modes(session, attrs.evolve(modes, current_mode_id=params.mode_id))
        return s.SetSessionModeResponse()

    def session_set_config_option(self, params: s.SetSessionConfigOptionRequest) -> s.SetSessionConfigOptionResponse:
        """Set one option and answer the complete list (spec CONFIG-16 .. CONFIG-19)."""
        session = self.require_session(params.session_id)
        options = list(session.config_options or [])
        for i, option in enumerate(options):
            if option.id == params.config_id:
                options[i] = _with_value(option, params.value)
                break
        else:
            raise RpcError.invalid_params(f"unknown config option {params.config_id!r}")  # spec CONFIG-17
        self.sessions.set_config_options(session, options)
        return s.SetSessionConfigOptionResponse(config_options=options)

    # -- The prompt turn -------------------------------------------------------------------------

    def session_prompt(self, params: s.PromptRequest, turn: "PromptTurn") -> s.PromptResponse:
        """Run one prompt turn: stream updates with ``turn.update``; return the stop reason.

        Check ``turn.cancelled`` (a ``threading.Event``) while working; on cancellation return
        (or raise) as you like: the connection answers ``stopReason: "cancelled"`` (PROMPT-23/24).
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

    def require_session(self, session_id: str) -> Session:
        """The registry's session, or -32002 (spec RPC-17; spec-gap unknown-session)."""
        session = self.sessions.get(session_id)
        if session is None:
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
        values = set()
        for item in kind.options:
            if isinstance(item, s.SessionConfigSelectGroup):
                values |= {o.value for o in item.options}
            else:
                values.add(item.value)
        if value not in values:
            raise RpcError.invalid_params(f"{value!r} is not a value of {option.id!r}")  # spec CONFIG-17
        return attrs.evolve(option, kind=attrs.evolve(kind, current_value=value))
    raise RpcError.invalid_params(f"{option.id!r} cannot be set")
