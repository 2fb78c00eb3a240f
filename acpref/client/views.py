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
* ``session_info_update`` is partial: absent keeps, ``null`` clears (LIST-15);
* a ``notice`` is a live event, kept (bounded) in ``notices`` until the user dismisses it,
  never a message of the history (NOTICE-06, NOTICE-08);
* a compaction is one ``CompactionView`` at the place of its first update, patched in place
  (COMPACT-05 .. COMPACT-08); the messages before it stay (COMPACT-13).

What a view keeps is bounded by ``max_kept`` counted characters (``_kept``): a message, a
compaction summary or a message between sessions keeps its head and its tail, the middle
dropped and shown as ``[... N characters dropped ...]``; messages, compactions, tool calls,
plans, children, messages between sessions and notices are charged to the view's ``Budget``,
and past the bound the one updated least recently is forgotten (``forgotten`` counts them).

The records a view is made of (``Message``, ``ToolCallView``, ``NoticeView``,
``CompactionView``, each folding its own updates) are ``_view_records``, re-exported here. A view
is plain data behind one lock; nothing here does I/O.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import Any, Dict, List, Optional, Tuple

from .. import schema as s
from ..schema import UNSET
from ._kept import DEFAULT_MAX_KEPT, Budget, KeptBlocks, cost_of
from ._view_records import ENTITY, CompactionView, Message, NoticeView, ToolCallView, wire_string
from .plans import PlanBook
from .subagents import SessionMessages, SubagentBook

__all__ = ["Message", "ToolCallView", "NoticeView", "CompactionView", "SessionView"]

#: How many notices a view keeps (the oldest go first): notices are live events, not history.
MAX_NOTICES = 50

_CHUNK_ROLES = {
    s.UserMessageChunk: "user",
    s.AgentMessageChunk: "agent",
    s.AgentThoughtChunk: "thought",
}


class SessionView:
    """The state of one session as a UI shows it. Read attributes under ``lock`` (or copy)."""

    def __init__(self, session_id: str, *, max_kept: int = DEFAULT_MAX_KEPT) -> None:
        self.session_id = session_id
        self.lock = threading.RLock()
        #: What the view holds, counted, within ``max_kept`` (``_kept``).
        self._kept = Budget(max_kept)
        self.messages: List[Message] = []
        #: The last message of each (role, messageId): a chunk finds its message in O(1).
        self._by_id: Dict[Tuple[str, str], Message] = {}
        #: Messages forgotten so far (``_kept``): a compaction's position counts them.
        self._forgotten_messages = 0
        self.tool_calls: Dict[str, ToolCallView] = {}
        self.plan: List[s.PlanEntry] = []
        #: The plans of plan operations, by planId (provisional, PLANOP-05).
        self.plans = PlanBook()
        #: Children this session announced, and messages between sessions (provisional).
        self.subagents = SubagentBook()
        self.session_messages = SessionMessages(self._stream_limit)
        #: For a child session (SUBAGENT-03): the parent that announced it.
        self.parent_id: Optional[str] = None
        self.commands: List[s.AvailableCommand] = []
        self.modes: Optional[s.SessionModeState] = None
        self.current_mode: Optional[str] = None
        self.config_options: List[s.SessionConfigOption] = []
        self.title: Optional[str] = None
        self.updated_at: Optional[str] = None
        self.usage: Optional[s.UsageUpdate] = None
        #: Notices not dismissed yet, oldest first (at most ``MAX_NOTICES``).
        self.notices: List[NoticeView] = []
        #: Compactions by id, in the order they appeared.
        self.compactions: Dict[str, CompactionView] = {}
        #: Tool call ids of the turn in progress (for PROMPT-20), in order.
        self._turn_tool_calls: Dict[str, None] = {}

    @property
    def _stream_limit(self) -> int:
        """What one stream may keep: the view's bound, but what its entity costs besides."""
        return max(0, self._kept.limit - ENTITY)

    @property
    def max_kept(self) -> int:
        """The bound of what the view keeps, in counted characters (``_kept``)."""
        return self._kept.limit

    @property
    def forgotten(self) -> int:
        """How many messages, tool calls, plans, compactions... the view forgot to stay within
        ``max_kept``, the least recently updated first."""
        return self._kept.forgotten

    # -- Updates ------------------------------------------------------------------------------

    def apply(self, update: Any) -> None:
        """Fold one ``SessionUpdate`` into the view.

        spec-gap forward-compatible: an update kind this version does not define (``Unknown``)
        is ignored, as a client that does not know it must.
        """
        with self.lock:
            role = _CHUNK_ROLES.get(type(update))
            if role is not None:
                self._chunk(role, update)
            elif isinstance(update, (s.ToolCall, s.ToolCallUpdate)):
                self.tool_call(update)
            elif isinstance(update, s.Plan):
                self.plan = list(update.entries)  # spec PLAN-05: replaced whole, never merged
            elif isinstance(update, (s.PlanUpdate, s.PlanRemoved)):
                self._plan_operation(update)
            elif isinstance(update, s.SubagentUpdate):
                # spec SUBAGENT-15 (provisional); spec SUBAGENT-55: a child's state changes by
                # its own updates only, never by a tool call naming it (a completed send).
                child = self.subagents.apply(update)
                forget_child = partial(self.subagents.children.pop, child.session_id, None)
                self._kept.charge(("child", child.session_id), ENTITY + child.cost, forget_child)
            elif isinstance(update, (s.SessionMessage, s.SessionMessageChunk)):
                message = self.session_messages.apply(update)  # spec SUBAGENT-57, SUBAGENT-58
                key = message.message_id
                forget_message = partial(self.session_messages.messages.pop, key, None)
                self._kept.charge(("session_message", key), ENTITY + message.cost, forget_message)
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
                # spec SUBAGENT-52: this session's usage as its agent reported it; a parent's and
                # its children's costs are never added up or subtracted into another figure.
                self.usage = update
            elif isinstance(update, s.Notice):
                self._notice(update)
            elif isinstance(update, (s.CompactionUpdate, s.CompactionSummaryChunk)):
                self.compaction(update)

    def _plan_operation(self, update: Any) -> None:
        self.plans.apply(update)  # spec PLANOP-05, PLANOP-06 (provisional)
        if isinstance(update, s.PlanRemoved):
            self._kept.release(("plan", update.plan_id))
            return
        plan_id = update.plan.plan_id
        forget = partial(self.plans.plans.pop, plan_id, None)
        self._kept.charge(("plan", plan_id), ENTITY + cost_of(update.plan), forget)

    def _notice(self, notice: Any) -> None:
        # spec NOTICE-07: even severity "error" changes nothing but what is shown: no request
        # fails, no turn stops, the session state stays.
        description = notice.description if isinstance(notice.description, str) else None
        # spec NOTICE-04: an unknown severity string is kept as sent, shown generically.
        shown = NoticeView(wire_string(notice.severity), notice.title, description)
        last = self.notices[-1] if self.notices else None
        if last is not None and (last.severity, last.title, last.description) == (
            shown.severity,
            shown.title,
            shown.description,
        ):
            last.count += 1  # spec NOTICE-08: repeated notices may be coalesced
            return
        self.notices.append(shown)
        for old in self.notices[:-MAX_NOTICES]:
            self._kept.release(("notice", id(old)))
        del self.notices[:-MAX_NOTICES]
        cost = ENTITY + cost_of((shown.title, shown.description))
        self._kept.charge(("notice", id(shown)), cost, partial(_remove, self.notices, shown))

    def dismiss_notices(self) -> None:
        """The user dismissed the notices: local only, nothing goes on the wire (NOTICE-08)."""
        with self.lock:
            for notice in self.notices:
                self._kept.release(("notice", id(notice)))
            self.notices.clear()

    def compaction(self, update: Any) -> CompactionView:
        """Fold a compaction update or summary chunk into its entity (made on first sight)."""
        with self.lock:
            view = self.compactions.get(update.compaction_id)
            if view is None:
                # spec COMPACT-05: the first notification fixes the place in the timeline;
                # spec COMPACT-07: a first-seen id, even from a chunk, is an in-progress one.
                position = self._forgotten_messages + len(self.messages)
                view = CompactionView(
                    update.compaction_id, position, summary=KeptBlocks(self._stream_limit)
                )
                self.compactions[update.compaction_id] = view
            # spec COMPACT-13: a compaction discards nothing: the messages before it stay
            # (only the view's own bound forgets what was updated least recently, ``_kept``).
            view.patch(update)
            forget = partial(self.compactions.pop, view.compaction_id, None)
            self._kept.charge(("compaction", view.compaction_id), view.cost, forget)
            return view

    def _chunk(self, role: str, chunk: Any) -> None:
        message_id = chunk.message_id if isinstance(chunk.message_id, str) else None
        if message_id is not None:
            # spec PROMPT-08: chunks with the same messageId are one message (even when thought
            # and reply chunks interleave); a new id starts a new message.
            message = self._by_id.get((role, message_id))
        else:
            # spec-gap chunk-without-id: a chunk without an id joins the last message if that
            # one is of its kind and has no id either.
            last = self.messages[-1] if self.messages else None
            same = last is not None and last.role == role and last.message_id is None
            message = last if same else None
        if message is not None:
            message.blocks.append(chunk.content)
        else:
            message = self._add_message(role, message_id, [chunk.content])
        self._charge_message(message)

    def _add_message(self, role: str, message_id: Optional[str], blocks: List[Any]) -> Message:
        message = Message(role, message_id, KeptBlocks(self._stream_limit, blocks))
        self.messages.append(message)
        if message_id is not None:
            self._by_id[(role, message_id)] = message
        return message

    def _charge_message(self, message: Message) -> None:
        cost = ENTITY + len(message.message_id or "") + message.blocks.cost
        self._kept.charge(("message", id(message)), cost, partial(self._forget, message))

    def _forget(self, message: Message) -> None:
        """The budget let ``message`` go: the least recently updated, usually the first."""
        _remove(self.messages, message)
        self._forgotten_messages += 1
        key = (message.role, message.message_id or "")
        if self._by_id.get(key) is message:
            del self._by_id[key]

    def tool_call(self, update: Any) -> ToolCallView:
        """Merge a tool call, an update, or the ``toolCall`` of a permission request."""
        with self.lock:
            view = self.tool_calls.get(update.tool_call_id)
            if view is None or isinstance(update, s.ToolCall):
                # A ToolCall (re)introduces the call; an update of an unknown id is kept too.
                # spec PROMPT-27: updates are accepted, also after a cancel.
                view = ToolCallView(tool_call_id=update.tool_call_id)
                self.tool_calls[update.tool_call_id] = view
                self._turn_tool_calls[update.tool_call_id] = None
            view.merge(update)
            forget = partial(self._forget_tool, view)
            self._kept.charge(("tool_call", view.tool_call_id), view.cost, forget)
            return view

    def _forget_tool(self, view: ToolCallView) -> None:
        if self.tool_calls.get(view.tool_call_id) is view:
            del self.tool_calls[view.tool_call_id]
            self._turn_tool_calls.pop(view.tool_call_id, None)

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
            self._turn_tool_calls = {}
            self._charge_message(self._add_message("user", None, list(prompt)))

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


def _remove(items: List[Any], item: Any) -> None:
    """Remove ``item`` itself from ``items`` (not an equal one); the first is found at once."""
    for i, known in enumerate(items):
        if known is item:
            del items[i]
            return
