"""What a client knows of subagent sessions and of messages between sessions (PROVISIONAL).

Spec: v1/subagents.md; clauses SUBAGENT-03, SUBAGENT-15, SUBAGENT-26, SUBAGENT-27, SUBAGENT-28,
SUBAGENT-35, SUBAGENT-36, SUBAGENT-57, SUBAGENT-58, SUBAGENT-59 (shapes from the unstable schema of
2026-11-02). A parent's view keeps
its children (``SubagentBook``): each ``subagent_update`` patches one child (omitted: unchanged;
``null``: cleared; a value: replaced whole), and the state is a whole snapshot. Each session's
view keeps the messages between sessions it saw (``SessionMessages``): ``session_message`` is an
upsert by ``messageId``, ``session_message_chunk`` appends one block (a long message keeps
its head and its tail, ``_kept.KeptBlocks``). Plain data: the session view holds these, locks
them and charges them to its budget (``cost``). ``ChildCount`` counts what the children a
client tracks cost (spec-gap remembered-bound).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional

import attrs

from .. import schema as s
from .._core.subagents import CHILD_COST
from ..schema import UNSET
from ._kept import DEFAULT_MAX_KEPT, KeptBlocks, cost_of

__all__ = [
    "ChildCount",
    "ChildView",
    "SubagentBook",
    "SessionMessageView",
    "SessionMessages",
    "state_name",
    "describe_subagent_update",
]


class ChildCount:
    """What the children a client tracks cost together, counted as the rules count theirs
    (``CHILD_COST`` and the id each), within ``limit``; and how many went untracked."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cost = 0
        self.untracked = 0

    def take(self, child_id: str) -> bool:
        """Count one more child; False (and counted untracked) past the bound."""
        cost = CHILD_COST + sys.getsizeof(child_id)
        if self.cost + cost > self.limit:
            # spec-gap remembered-bound: past the bound a new child is not tracked.
            self.untracked += 1
            return False
        self.cost += cost
        return True

    def release(self, child_id: str) -> None:
        """A tracked child's session is gone (its parent is loaded again)."""
        self.cost -= CHILD_COST + sys.getsizeof(child_id)


#: States that confirm what the child is doing now (SUBAGENT-26: not ``unknown``; SUBAGENT-59:
#: nor a state this client does not recognise).
_CONFIRMED = frozenset({"running", "idle", "requires_action"})


def state_name(state: Any) -> Optional[str]:
    """The ``state`` tag of a work state: a known one, an unknown one kept raw, or None."""
    if isinstance(state, s.Unknown):
        value = state.raw.get("state")
        return value if isinstance(value, str) else None
    return getattr(type(state), "state", None) if state is not None else None


@attrs.define
class ChildView:
    """One child session as its parent's updates describe it."""

    session_id: str
    title: Optional[str] = None
    description: Optional[str] = None
    capabilities: Optional[s.SubagentSessionCapabilities] = None
    #: The last state snapshot (SUBAGENT-27), None when never given or cleared.
    state: Any = None
    #: True while the state is confirmed current: false after ``unknown`` (SUBAGENT-26).
    state_confirmed: bool = False
    cwd: Optional[str] = None
    additional_directories: Optional[List[str]] = None
    #: False for what a replay told, or what was known before a load, resume or lost connection,
    #: until the agent announces the child again: last known, neither live nor controllable.
    live: bool = True
    #: What each field given so far counts (``_kept``): an update is measured, never the rest.
    _costs: Dict[str, int] = attrs.field(factory=dict, init=False, repr=False, eq=False)

    @property
    def cost(self) -> int:
        """What its fields count in its parent view's bound (``_kept``)."""
        return len(self.session_id) + sum(self._costs.values())

    @property
    def can_cancel(self) -> bool:
        """spec SUBAGENT-15, SUBAGENT-20: cancel only with a non-null ``capabilities.cancel``
        (SUBAGENT-36: never on the strength of a replay or of what was known before it)."""
        caps = self.capabilities
        granted = caps is not None and isinstance(caps.cancel, s.SessionCancelCapabilities)
        return self.live and granted


class SubagentBook:
    """The children a parent session announced, by child session id, in announcement order.

    ``replaying`` is set while a ``session/load`` replays the parent: what its updates say of a
    child is kept as last known, never as live state or granted controls (SUBAGENT-36).
    """

    def __init__(self) -> None:
        self.children: Dict[str, ChildView] = {}
        self.replaying = False

    def invalidate(self) -> None:
        """spec SUBAGENT-28, SUBAGENT-35: after a load, a resume or a lost connection, what was
        known of each child is last known only, until the agent announces it again."""
        for child in self.children.values():
            child.live = False
            child.state_confirmed = False

    def apply(self, update: s.SubagentUpdate) -> ChildView:
        # spec SUBAGENT-03: the first update for an unknown id registers the child.
        child = self.children.setdefault(update.session_id, ChildView(update.session_id))
        # spec SUBAGENT-36: a replayed announcement is history; a later one is live again.
        child.live = not self.replaying
        # spec SUBAGENT-15: omitted = unchanged, null = cleared, a value replaces the field.
        for name in ("title", "description", "capabilities", "cwd", "additional_directories"):
            value = getattr(update, name)
            if value is not UNSET:
                setattr(child, name, value)
                child._costs[name] = cost_of(value)
        if update.state is not UNSET:
            # spec SUBAGENT-27: a whole snapshot; idle does not end the child.
            child.state = update.state
            child._costs["state"] = cost_of(update.state)
            # spec SUBAGENT-26, SUBAGENT-59: unknown (or null) is not confirmed activity; an
            # unrecognized state is kept whole and implies neither completion nor closure.
            child.state_confirmed = state_name(update.state) in _CONFIRMED
        if not child.live:
            child.state_confirmed = False  # spec SUBAGENT-36: a replayed state is not live
        return child


@attrs.define
class SessionMessageView:
    """One message between sessions: who sent it to whom, and its content so far."""

    message_id: str
    sender_session_id: Optional[str] = None
    recipient_session_id: Optional[str] = None
    sender_message_id: Optional[str] = None
    recipient_message_id: Optional[str] = None
    blocks: KeptBlocks = attrs.Factory(lambda: KeptBlocks(DEFAULT_MAX_KEPT))

    @property
    def cost(self) -> int:
        """What its ids and blocks count in its view's bound (``_kept``)."""
        ids = (self.sender_session_id, self.recipient_session_id)
        more = (self.sender_message_id, self.recipient_message_id, self.message_id)
        return cost_of(ids + more) + self.blocks.cost

    @property
    def text(self) -> str:
        return "".join(
            b.text if isinstance(b, s.TextContent) else f"[{b.type}]" for b in self.blocks
        )


class SessionMessages:
    """Messages between sessions seen on one session, by ``messageId``; each keeps at most
    ``max_kept`` counted characters (``_kept``)."""

    def __init__(self, max_kept: int = DEFAULT_MAX_KEPT) -> None:
        self.messages: Dict[str, SessionMessageView] = {}
        self.max_kept = max_kept

    def apply(self, update: Any) -> SessionMessageView:
        message = self.messages.get(update.message_id)
        if message is None:
            blocks = KeptBlocks(self.max_kept)
            message = self.messages[update.message_id] = SessionMessageView(
                update.message_id, blocks=blocks
            )
        if isinstance(update, s.SessionMessageChunk):
            # spec SUBAGENT-58: a chunk appends one block; participants come from upserts.
            message.blocks.append(update.content)
            return message
        # spec SUBAGENT-57: an upsert: omitted keeps, null clears, a value replaces.
        for name in (
            "sender_session_id",
            "recipient_session_id",
            "sender_message_id",
            "recipient_message_id",
        ):
            value = getattr(update, name)
            if value is not UNSET:
                setattr(message, name, value)
        if update.content is not UNSET:
            # spec SUBAGENT-57: null or [] clears the content; a non-empty array replaces it.
            message.blocks = KeptBlocks(self.max_kept, update.content or [])
        return message


def describe_subagent_update(update: Any) -> List[str]:
    """Lines that show a subagent update or a message between sessions to a person."""
    if isinstance(update, s.SubagentUpdate):
        parts = []
        if isinstance(update.title, str):
            parts.append(repr(update.title))
        if update.state is not UNSET:
            name = state_name(update.state) or "cleared"
            stop = getattr(update.state, "stop_reason", None)
            parts.append(f"state {name}" + (f" ({stop})" if isinstance(stop, str) else ""))
        return [f"[subagent {update.session_id}] " + (", ".join(parts) or "updated")]
    if isinstance(update, s.SessionMessageChunk):
        text = update.content.text if isinstance(update.content, s.TextContent) else "[block]"
        return [f"[message {update.message_id}] + {text}"]
    route = f"{update.sender_session_id or '?'} -> {update.recipient_session_id or '?'}"
    text = "".join(b.text for b in update.content or [] if isinstance(b, s.TextContent))
    return [f"[message {update.message_id}] {route}: {text}"]
