"""The echo agent: a deterministic ACP agent, no model, that supports every agent capability.

Spec: every page; this is the agent the rest of acpref (the reference client, the demo, the
conformance checks) is tried against. spec_notes/echo-agent.md lists what it does.

It echoes each prompt back as ``agent_message_chunk``s sharing one ``messageId``, and runs the
slash commands listed in ``_menu`` when a prompt starts with one (SLASH-05, SLASH-06). Sessions,
history, ``session/load``, resume, close, list and delete are the ``Agent`` defaults over the
``SessionRegistry`` (persisted with ``--state-dir``). Modes ``ask`` and ``code`` are mirrored by
the config option ``mode`` (CONFIG-22, CONFIG-24); the option ``model`` is a select; ``brave_mode``
is a boolean for clients that advertise ``session.configOptions.boolean`` and an on/off select
for the others (CONFIG-05, CONFIG-06). In ``ask`` mode, unless brave mode is on, ``/write`` and
``/run`` ask permission first.

What must not live here: the commands themselves (``_menu`` lists them, each in its module),
the command line (``acpref._cli.echo``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, Iterator, List, Optional

import attrs

from .. import __version__
from .. import schema as s
from ..agent import Agent, ClientHandle, PromptTurn, Session, SessionRegistry
from ..errors import RpcError
from ._commands import Invocation
from ._menu import COMMANDS, available_commands
from ._subagents import Children
from . import _system_prompt

__all__ = ["EchoAgent", "AUTH_METHOD_ID", "PING_METHOD"]

log = logging.getLogger("acpref.echo")

#: The agent-handled authentication method (AUTH-04): always succeeds, asks for nothing.
AUTH_METHOD_ID = "echo-login"
#: The extension request the echo agent answers (EXT-06), advertised in agentCapabilities._meta.
PING_METHOD = "_acpref/ping"

# The initial settings of every session. Models are frozen, so sessions share these objects
# (a change replaces an option, never mutates it): ten thousand sessions hold one copy.
_MODES = [
    s.SessionMode(
        id="ask", name="Ask", description="Ask permission before writing files or running commands"
    ),
    s.SessionMode(
        id="code", name="Code", description="Write files and run commands without asking"
    ),
]
_MODE_STATE = s.SessionModeState(current_mode_id="ask", available_modes=_MODES)
_MODE_OPTION = s.SessionConfigOption(
    id="mode",
    name="Session mode",
    description="Mirrors the session's mode",
    category=s.SessionConfigOptionCategory.MODE,
    kind=s.SessionConfigSelect(
        current_value="ask",
        options=[
            s.SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
            for m in _MODES
        ],
    ),
)
_MODEL_OPTION = s.SessionConfigOption(
    id="model",
    name="Model",
    category=s.SessionConfigOptionCategory.MODEL,
    kind=s.SessionConfigSelect(
        current_value="echo-1",
        options=[
            s.SessionConfigSelectOption(value="echo-1", name="Echo 1", description="Repeats you"),
            s.SessionConfigSelectOption(
                value="echo-2", name="Echo 2", description="Repeats you, too"
            ),
        ],
    ),
)


def _brave(kind: Any) -> s.SessionConfigOption:
    return s.SessionConfigOption(
        id="brave_mode", name="Brave mode", description="Skip confirmation prompts", kind=kind
    )


_ON_OFF = [
    s.SessionConfigSelectOption(value="off", name="Off"),
    s.SessionConfigSelectOption(value="on", name="On"),
]
_BRAVE_BOOLEAN = {on: _brave(s.SessionConfigBoolean(current_value=on)) for on in (False, True)}
_BRAVE_SELECT = {
    on: _brave(s.SessionConfigSelect(current_value="on" if on else "off", options=_ON_OFF))
    for on in (False, True)
}


class EchoAgent(Agent):
    """The echo agent. ``require_auth`` makes session methods need ``authenticate`` first;
    ``mcp_timeout`` is the one deadline of a session's MCP servers (``mcp_connect_timeout``)."""

    info = s.Implementation(name="acpref-echo", title="acpref echo agent", version=__version__)

    def __init__(
        self,
        client: ClientHandle,
        sessions: Optional[SessionRegistry] = None,
        *,
        require_auth: bool = False,
        mcp_timeout: Optional[float] = None,
    ) -> None:
        super().__init__(client, sessions)
        self.auth_required = require_auth
        if mcp_timeout is not None:
            self.mcp_connect_timeout = mcp_timeout
        #: Per session: set once its command list is on the wire (see ``session_prompt``).
        self._announced: Dict[str, threading.Event] = {}
        self._announced_lock = threading.Lock()
        #: What the children of ``/subagent`` sent: replayed by a load, announced again after it.
        self.children = Children()

    # -- what it advertises ----------------------------------------------------------------------

    def capabilities(self) -> s.AgentCapabilities:
        # spec INIT-14: every capability stated explicitly; each one really supported.
        return s.AgentCapabilities(
            load_session=True,
            # spec INIT-16: image, audio and embedded resources are all accepted (and echoed).
            prompt_capabilities=s.PromptCapabilities(image=True, audio=True, embedded_context=True),
            # spec SETUP-30, SETUP-31: stdio and HTTP MCP servers (connected by Agent; /mcp).
            mcp_capabilities=s.McpCapabilities(http=True, sse=False),
            session_capabilities=s.SessionCapabilities(
                list=s.SessionListCapabilities(),
                delete=s.SessionDeleteCapabilities(),
                resume=s.SessionResumeCapabilities(),
                close=s.SessionCloseCapabilities(),
                additional_directories=s.SessionAdditionalDirectoriesCapabilities(),
                # spec SYSPROMPT-01 (provisional): append and override (shown by /system).
                system_prompt=_system_prompt.CAPABILITIES,
            ),
            # spec AUTH-02: logout is implemented, so auth.logout is advertised, as an object.
            auth=s.AgentAuthCapabilities(logout=s.LogoutCapabilities()),
            # spec EXT-09, EXT-11, INIT-22: custom capabilities under _meta, namespaced by key.
            meta={"acpref": {"ping": True}},
        )

    def auth_methods(self) -> List[s.AuthMethod]:
        # spec AUTH-04: an agent-handled method (no type on the wire), completed by authenticate.
        return [
            s.AuthMethodAgent(
                id=AUTH_METHOD_ID,
                name="Echo login",
                description="Always succeeds; asks for and keeps nothing.",
            )
        ]

    def authenticate(self, params: s.AuthenticateRequest) -> s.AuthenticateResponse:
        if params.method_id != AUTH_METHOD_ID:
            raise RpcError.invalid_params(f"unknown authentication method {params.method_id!r}")
        return s.AuthenticateResponse()  # spec AUTH-09

    def initial_modes(self, session: Session) -> Optional[s.SessionModeState]:
        return _MODE_STATE

    def initial_config_options(self, session: Session) -> Optional[List[s.SessionConfigOption]]:
        # spec CONFIG-13, CONFIG-14: the most important option first; each has a current value.
        # spec CONFIG-22: the modes (initial_modes) and a "mode" option, both, kept in step.
        return [_MODE_OPTION, _MODEL_OPTION, self._brave_option(False)]

    def _brave_option(self, on: bool) -> s.SessionConfigOption:
        if self.client.supports("session.configOptions.boolean"):
            return _BRAVE_BOOLEAN[on]
        # spec CONFIG-05, CONFIG-06: no boolean for this client; the same setting as a select.
        return _BRAVE_SELECT[on]

    def brave(self, session: Session) -> bool:
        for option in session.config_options or []:
            if option.id == "brave_mode":
                return option.kind.current_value in (True, "on")
        return False

    def asks_permission(self, session: Session) -> bool:
        """True when /write and /run ask first: ``ask`` mode and brave mode off."""
        mode = session.modes.current_mode_id if session.modes is not None else "ask"
        return mode == "ask" and not self.brave(session)

    # -- sessions --------------------------------------------------------------------------------

    def _fit_options(self, session_id: str) -> None:
        """Re-shape ``brave_mode`` for this client: a stored session may come from another one."""
        session = self.sessions.get(session_id)
        if session is None or session.config_options is None:
            return
        fitted = [
            self._brave_option(self.brave(session)) if o.id == "brave_mode" else o
            for o in session.config_options
        ]
        self.sessions.set_config_options(session, fitted)

    def session_load(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
        self._fit_options(params.session_id)
        return super().session_load(params)

    def session_resume(self, params: s.ResumeSessionRequest) -> s.ResumeSessionResponse:
        self._fit_options(params.session_id)
        return super().session_resume(params)

    def replay_notifications(self, session: Session) -> Iterator[s.SessionNotification]:
        # The children's own history is put back in place (provisional, _subagents.Children).
        return self.children.replayed(self, session.id, super().replay_notifications(session))

    def _announcement(self, session_id: str, *, opening: bool = False) -> threading.Event:
        """The flag a first turn waits on: set once the session's command list is sent. An
        event exists only while a list is on its way; after, one shared set event stands in."""
        with self._announced_lock:
            event = self._announced.get(session_id)
            if event is None or (opening and event is _ANNOUNCED):
                event = self._announced[session_id] = threading.Event()
            return event

    def session_opened(self, session_id: str) -> None:
        # spec SLASH-01, SLASH-03: the commands, right after the session is set up, and again
        # (a new list) after every load or resume.
        announced = self._announcement(session_id, opening=True)
        announced.clear()
        try:
            self.client.update(
                session_id, s.AvailableCommandsUpdate(available_commands=available_commands())
            )
            self._tell_mcp(session_id)
        finally:
            announced.set()
            with self._announced_lock:
                if self._announced.get(session_id) is announced:
                    self._announced[session_id] = _ANNOUNCED
        # After a load or resume answer: its children again, and any gap in their replay.
        self.children.reopened(self, session_id)

    def session_close(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        answer = super().session_close(params)
        with self._announced_lock:
            self._announced.pop(params.session_id, None)  # a load announces it again
        return answer

    def session_delete(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        answer = super().session_delete(params)
        with self._announced_lock:
            self._announced.pop(params.session_id, None)
        return answer

    # -- the prompt turn -------------------------------------------------------------------------

    def session_prompt(self, params: s.PromptRequest, turn: PromptTurn) -> Any:
        session = self.require_session(params.session_id)
        # Deterministic order: the command list (sent after the session/new, load or resume
        # answer, on a thread of its own) goes out before anything of the first turn, so two
        # runs of one scenario send the same messages in the same order.
        self._announcement(params.session_id).wait(_ANNOUNCE_WAIT)
        self._tell_mcp(params.session_id, turn)
        blocks = list(params.prompt)
        first = blocks[0] if blocks else None
        if isinstance(first, s.TextContent) and first.text.startswith("/"):
            name, _, args = first.text[1:].partition(" ")
            found = COMMANDS.get(name.strip())
            if found is not None:
                # spec SLASH-05, SLASH-06: a command is prompt text; other blocks may come along.
                return found.run(
                    Invocation(agent=self, turn=turn, session=session, args=args, extra=blocks[1:])
                )
        return self._echo(blocks, turn)

    def _tell_mcp(self, session_id: str, turn: Optional[PromptTurn] = None) -> None:
        """Tell the user of the session's MCP servers that failed or whose tools were cut.

        spec-gap mcp-failure, mcp-bounds: as notices, right after the session is set up, to a
        client that takes them (NOTICE-01, NOTICE-10); to any other client, as an agent message
        at the start of the next turn (NOTICE-02; content outside a turn would break a rule).
        """
        session = self.sessions.get(session_id)
        if session is None or not session.mcp_servers:
            return
        takes_notices = self.client.supports("session.notices")
        if not takes_notices and turn is None:
            return  # kept for the next turn
        notices = session.live.pop("mcp_notices", None)
        if not notices:
            return
        if takes_notices:
            for title, text in notices:
                notice = s.Notice(severity=s.NoticeSeverity.WARNING, title=title, description=text)
                self.client.update(session_id, notice)
        elif turn is not None:
            lines = "\n".join(text for _, text in notices)
            turn.say(f"Some MCP servers of this session are not connected, or not whole:\n{lines}")

    def _echo(self, blocks: List[Any], turn: PromptTurn) -> s.StopReason:
        """Send the prompt back, block by block, as one agent message (PROMPT-06, PROMPT-07)."""
        message_id = turn.new_message_id()
        for block in blocks:
            if turn.cancelled.is_set():
                return s.StopReason.CANCELLED
            # spec CONTENT-02: text (and every advertised block type) is taken and echoed.
            turn.update(s.AgentMessageChunk(content=_plain(block), message_id=message_id))
        return s.StopReason.END_TURN

    # -- extensions ------------------------------------------------------------------------------

    def ext_method(self, method: str, params: Any) -> Any:
        if method == PING_METHOD:
            return {"pong": True, "params": params}
        return super().ext_method(method, params)  # spec EXT-08: -32601

    def ext_notification(self, method: str, params: Any) -> None:
        log.info("ignored custom notification %s", method)  # spec EXT-10


#: How long a turn waits for its session's command list to be sent (it normally is already).
_ANNOUNCE_WAIT = 5.0
#: The announcement of a session whose command list has been sent: set, shared by all.
_ANNOUNCED = threading.Event()
_ANNOUNCED.set()


def _plain(block: Any) -> Any:
    """The block as sent back: unchanged but for its ``_meta``, which was the client's (EXT-02)."""
    if attrs.has(type(block)) and getattr(block, "meta", s.UNSET) is not s.UNSET:
        return attrs.evolve(block, meta=s.UNSET)
    return block
