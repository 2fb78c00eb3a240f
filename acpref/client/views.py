"""What a UI needs to know about one session, kept up to date from the agent's updates.

Spec: prompt-turn.mdx (Agent Reports Output, Message IDs, Cancellation), tool-calls.mdx,
agent-plan.mdx, slash-commands.mdx, session-modes.mdx, session-config-options.mdx,
session-list.mdx (Updating Session Metadata); clauses PROMPT-08, PROMPT-20, PROMPT-27, TOOL-03,
TOOL-06, PLAN-05, SLASH-04, LIST-15, CONFIG-15, CONFIG-23.

``SessionView.apply`` takes one ``SessionUpdate`` and folds it into the view:

* chunks become ``Message``s: consecutive chunks of one kind with the same ``messageId`` are one
  message, a new ``messageId`` starts another (PROMPT-08);
* tool calls are ``ToolCallView``s merged field by field (TOOL-06), with ``other``/``pending``
  for an omitted kind/status (TOOL-03);
* the plan and the command list are replaced whole (PLAN-05, SLASH-04), and so are config
  options; the current mode follows ``current_mode_update``;
* ``session_info_update`` is partial: absent keeps, ``null`` clears (LIST-15).

A view is plain data behind one lock; nothing here does I/O.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import attrs

from .. import schema as s
from ..schema import UNSET
from .plans import PlanBook

__all__ = ["Message", "ToolCallView", "SessionView"]

_CHUNK_ROLES = {
    s.UserMessageChunk: "user",
    s.AgentMessageChunk: "agent",
    s.AgentThoughtChunk: "thought",
}


@attrs.define
class Message:
    """One message: its role (``user``, ``agent``, ``thought``), id and content blocks."""

    role: str
    message_id: Optional[str]
    blocks: List[Any] = attrs.Factory(list)

    @property
    def text(self) -> str:
        """The text of its text blocks, joined; other blocks are shown by kind."""
        return "".join(
            b.text if isinstance(b, s.TextContent) else f"[{b.type}]" for b in self.blocks
        )


@attrs.define
class ToolCallView:
    """A tool call as it stands after every update so far (spec TOOL-06)."""

    tool_call_id: str
    title: str = ""
    kind: str = "other"  # spec TOOL-03: omitted kind is "other"
    status: str = "pending"  # spec TOOL-03: omitted status is "pending"
    content: List[Any] = attrs.Factory(list)
    locations: List[Any] = attrs.Factory(list)
    raw_input: Any = UNSET
    raw_output: Any = UNSET
    #: Set locally when we cancelled the turn while it was unfinished (spec PROMPT-20).
    cancelled: bool = False

    @property
    def finished(self) -> bool:
        """True once the tool call is ``completed`` or ``failed``."""
        return self.status in ("completed", "failed")

    def merge(self, update: Any) -> None:
        """Apply a ``ToolCall`` or ``ToolCallUpdate``: given fields replace, absent ones stay.

        spec-gap tool-update-null: ``null`` for title, kind or status keeps the old value, and
        ``null`` content or locations clear the list (the schema allows null; the page is silent).
        """
        for name in ("title", "kind", "status"):
            value = getattr(update, name, UNSET)
            if value is not UNSET and value is not None:
                setattr(self, name, value.value if hasattr(value, "value") else value)
        for name in ("content", "locations"):
            value = getattr(update, name, UNSET)
            if value is not UNSET:
                setattr(self, name, list(value or ()))  # spec TOOL-06: arrays replaced whole
        for name in ("raw_input", "raw_output"):
            value = getattr(update, name, UNSET)
            if value is not UNSET:
                setattr(self, name, value)


class SessionView:
    """The state of one session as a UI shows it. Read attributes under ``lock`` (or copy)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.lock = threading.RLock()
        self.messages: List[Message] = []
        self.tool_calls: Dict[str, ToolCallView] = {}
        self.plan: List[s.PlanEntry] = []
        #: The plans of plan operations, by planId (provisional, PLANOP-05).
        self.plans = PlanBook()
        self.commands: List[s.AvailableCommand] = []
        self.modes: Optional[s.SessionModeState] = None
        self.current_mode: Optional[str] = None
        self.config_options: List[s.SessionConfigOption] = []
        self.title: Optional[str] = None
        self.updated_at: Optional[str] = None
        self.usage: Optional[s.UsageUpdate] = None
        #: Tool call ids of the turn in progress (for PROMPT-20).
        self._turn_tool_calls: List[str] = []

    # -- Updates ------------------------------------------------------------------------------

    def apply(self, update: Any) -> None:
        """Fold one ``SessionUpdate`` into the view. Unknown kinds are ignored."""
        with self.lock:
            role = _CHUNK_ROLES.get(type(update))
            if role is not None:
                self._chunk(role, update)
            elif isinstance(update, (s.ToolCall, s.ToolCallUpdate)):
                self.tool_call(update)
            elif isinstance(update, s.Plan):
                self.plan = list(update.entries)  # spec PLAN-05: replaced whole, never merged
            elif isinstance(update, (s.PlanUpdate, s.PlanRemoved)):
                self.plans.apply(update)  # spec PLANOP-05, PLANOP-06 (provisional)
            elif isinstance(update, s.AvailableCommandsUpdate):
                self.commands = list(update.available_commands)  # spec SLASH-04: replaced
            elif isinstance(update, s.CurrentModeUpdate):
                self.current_mode = update.current_mode_id
            elif isinstance(update, s.ConfigOptionUpdate):
                self.set_config_options(update.config_options)
            elif isinstance(update, s.SessionInfoUpdate):
                # spec LIST-15: absent = unchanged, null = cleared.
                if update.title is not UNSET:
                    self.title = update.title
                if update.updated_at is not UNSET:
                    self.updated_at = update.updated_at
            elif isinstance(update, s.UsageUpdate):
                self.usage = update

    def _chunk(self, role: str, chunk: Any) -> None:
        message_id = chunk.message_id if isinstance(chunk.message_id, str) else None
        if message_id is not None:
            # spec PROMPT-08: chunks with the same messageId are one message (even when thought
            # and reply chunks interleave); a new id starts a new message.
            for message in reversed(self.messages):
                if message.message_id == message_id and message.role == role:
                    message.blocks.append(chunk.content)
                    return
        else:
            # spec-gap chunk-without-id: a chunk without an id joins the last message if that
            # one is of its kind and has no id either.
            last = self.messages[-1] if self.messages else None
            if last is not None and last.role == role and last.message_id is None:
                last.blocks.append(chunk.content)
                return
        self.messages.append(Message(role=role, message_id=message_id, blocks=[chunk.content]))

    def tool_call(self, update: Any) -> ToolCallView:
        """Merge a tool call, an update, or the ``toolCall`` of a permission request."""
        with self.lock:
            view = self.tool_calls.get(update.tool_call_id)
            if view is None or isinstance(update, s.ToolCall):
                # A ToolCall (re)introduces the call; an update of an unknown id is kept too.
                # spec PROMPT-27: updates are accepted, also after a cancel.
                view = ToolCallView(tool_call_id=update.tool_call_id)
                self.tool_calls[update.tool_call_id] = view
                self._turn_tool_calls.append(update.tool_call_id)
            view.merge(update)
            return view

    def set_modes(self, modes: Any) -> None:
        """Take the session's modes and current mode (ignored unless a ``SessionModeState``)."""
        with self.lock:
            if isinstance(modes, s.SessionModeState):
                self.modes = modes
                self.current_mode = modes.current_mode_id

    def set_config_options(self, options: Any) -> None:
        """Take the session's config options (options of a kind we do not know are left out)."""
        with self.lock:
            if isinstance(options, list):
                # spec CONFIG-15: an option of a type we do not know is left out, not an error
                # (the codec drops malformed items already).
                self.config_options = [o for o in options if isinstance(o, s.SessionConfigOption)]

    def seed(self, response: Any) -> None:
        """Take modes and config options from a new/load/resume/set_config_option result."""
        modes = getattr(response, "modes", UNSET)
        if modes is not UNSET:
            self.set_modes(modes)
        options = getattr(response, "config_options", UNSET)
        if options is not UNSET:
            self.set_config_options(options)

    # -- Turns --------------------------------------------------------------------------------

    def begin_turn(self, prompt: List[Any]) -> None:
        """Record the user's prompt as a message and start a new turn."""
        with self.lock:
            self._turn_tool_calls = []
            self.messages.append(Message(role="user", message_id=None, blocks=list(prompt)))

    def cancel_turn(self) -> List[str]:
        """Mark the turn's unfinished tool calls cancelled (spec PROMPT-20); return their ids."""
        with self.lock:
            marked = []
            for tool_call_id in self._turn_tool_calls:
                view = self.tool_calls.get(tool_call_id)
                if view is not None and not view.finished:
                    view.cancelled = True
                    marked.append(tool_call_id)
            return marked

    def mode_ids(self) -> List[str]:
        """The ids of the modes the agent offers for this session."""
        with self.lock:
            return [m.id for m in self.modes.available_modes] if self.modes is not None else []

    def config_option(self, config_id: str) -> Optional[s.SessionConfigOption]:
        """The config option ``config_id``, or None."""
        with self.lock:
            for option in self.config_options:
                if option.id == config_id:
                    return option
            return None
