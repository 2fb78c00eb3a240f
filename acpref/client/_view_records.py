"""The records a ``SessionView`` is made of: one per message, tool call, notice and compaction.

Spec: prompt-turn.mdx (Message IDs, Cancellation), tool-calls.mdx, session-notices.md,
session-compaction.md; clauses PROMPT-20, TOOL-03, TOOL-06, TOOL-18, TOOL-23, NOTICE-04,
NOTICE-08, COMPACT-05 .. COMPACT-08, COMPACT-15.

``views.SessionView`` decides which record an update belongs to and charges each to its bound
(``_kept``); a record folds its own updates in (``ToolCallView.merge``, ``CompactionView.patch``)
and says what keeping it counts (``cost``). These are re-exported by ``views`` (and
``Message``, ``ToolCallView`` by ``acpref.client``).

Plain data; nothing here does I/O or takes a lock (the view's lock covers them).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import attrs

from .. import schema as s
from ..schema import UNSET
from ._kept import DEFAULT_MAX_KEPT, OVERHEAD, KeptBlocks, cost_of

__all__ = ["ENTITY", "Message", "ToolCallView", "NoticeView", "CompactionView", "wire_string"]

#: What an entity of a view (a message, a tool call...) counts besides its content: the object,
#: its entries in the view's tables and in the budget.
ENTITY = 16 * OVERHEAD


@attrs.define
class Message:
    """One message: its role (``user``, ``agent``, ``thought``), id and content blocks (a long
    one keeps its head and its tail, ``KeptBlocks``)."""

    role: str
    message_id: Optional[str]
    blocks: KeptBlocks = attrs.Factory(lambda: KeptBlocks(DEFAULT_MAX_KEPT))

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
    #: The programmatic tool name (``read_file``), a secondary label beside the title (TOOL-19).
    name: Optional[str] = None
    kind: str = "other"  # spec TOOL-03: omitted kind is "other"
    status: str = "pending"  # spec TOOL-03: omitted status is "pending"
    content: List[Any] = attrs.Factory(list)
    locations: List[Any] = attrs.Factory(list)
    raw_input: Any = UNSET
    raw_output: Any = UNSET
    #: Set locally when we cancelled the turn while it was unfinished (spec PROMPT-20).
    cancelled: bool = False
    #: What each field given so far counts (``_kept``): an update is measured, never the rest.
    _costs: Dict[str, int] = attrs.field(factory=dict, init=False, repr=False, eq=False)

    @property
    def finished(self) -> bool:
        """True once the tool call is ``completed`` or ``failed``."""
        return self.status in ("completed", "failed")

    @property
    def cost(self) -> int:
        """What keeping it counts in its view's bound (``_kept``)."""
        return ENTITY + len(self.tool_call_id) + sum(self._costs.values())

    def _set(self, name: str, value: Any) -> None:
        setattr(self, name, value)
        self._costs[name] = cost_of(value)

    def merge(self, update: Any) -> None:
        """Apply a ``ToolCall`` or ``ToolCallUpdate``: given fields replace, absent ones stay.

        spec-gap tool-update-null: ``null`` for title, kind or status keeps the old value, and
        ``null`` content or locations clear the list (the schema allows null; the page is silent).
        """
        # spec TOOL-18: a string name sets or replaces it; omitted or null leaves it (v1 cannot
        # clear a name).
        for name in ("title", "name", "kind", "status"):
            value = getattr(update, name, UNSET)
            if value is not UNSET and value is not None:
                self._set(name, value.value if hasattr(value, "value") else value)
        for name in ("content", "locations"):
            value = getattr(update, name, UNSET)
            if value is not UNSET:
                self._set(name, list(value or ()))  # spec TOOL-06: arrays replaced whole
        for name in ("raw_input", "raw_output"):
            value = getattr(update, name, UNSET)
            # spec TOOL-23: omitted and null are the same: no value (on a tool call), the value
            # reported before left unchanged (on an update).
            if value is not UNSET and value is not None:
                self._set(name, value)


@attrs.define
class NoticeView:
    """A notice the user has not dismissed (spec NOTICE-08: dismissal is local, never sent).

    ``severity`` is the wire string: an unknown one is kept and shown generically (NOTICE-04).
    ``count`` says how many identical notices in a row it stands for (NOTICE-08 allows
    coalescing).
    """

    severity: str
    title: str
    description: Optional[str] = None
    count: int = 1


@attrs.define
class CompactionView:
    """A context compaction as it stands after every update so far (COMPACT-05 .. COMPACT-08).

    ``position`` is its place in the timeline: the number of messages before its first update
    (COMPACT-05). ``status`` is the wire string: an unknown one is kept as an opaque state, and no
    lifecycle is inferred from it (COMPACT-15).
    """

    compaction_id: str
    position: int
    status: str = "in_progress"
    #: The summary's blocks; a long one keeps its head and its tail (``KeptBlocks``).
    summary: KeptBlocks = attrs.Factory(lambda: KeptBlocks(DEFAULT_MAX_KEPT))
    error: Optional[str] = None
    meta: Optional[Dict[str, Any]] = None
    #: What the fields but the summary count (``_kept``), measured when an update sets them.
    _fields_cost: int = attrs.field(default=0, init=False, repr=False, eq=False)

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    @property
    def cost(self) -> int:
        """What keeping it counts in its view's bound (``_kept``)."""
        return ENTITY + len(self.compaction_id) + self.summary.cost + self._fields_cost

    def patch(self, update: Any) -> None:
        """Apply a ``CompactionUpdate`` or a ``CompactionSummaryChunk``."""
        if isinstance(update, s.CompactionSummaryChunk):
            # spec COMPACT-07: chunks append in receive order (after a replacement, COMPACT-08).
            self.summary.append(update.content)
            return
        # spec COMPACT-15: an unknown status is kept as an opaque state; nothing is inferred
        # from it (``finished`` is true only for the three terminal statuses).
        self.status = wire_string(update.status)
        # spec COMPACT-06: summary, error and _meta are patch fields: omitted keeps, null clears,
        # a value replaces; summary [] clears too. spec COMPACT-08: a concrete summary replaces
        # everything gathered from earlier updates and chunks.
        if update.summary is not UNSET:
            self.summary = KeptBlocks(self.summary.limit, update.summary or ())
        if update.error is not UNSET:
            self.error = update.error
        if update.meta is not UNSET:
            self.meta = update.meta
        self._fields_cost = cost_of((self.status, self.error, self.meta))


def wire_string(value: Any) -> str:
    """The wire string of an open enum value (a member, or an unknown string kept as is)."""
    return str(value.value) if hasattr(value, "value") else str(value)
