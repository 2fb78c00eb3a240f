"""Session compaction: the agent reports a context compaction as one id-addressed entity.

Spec: spec_notes/spec/v1/session-compaction.md (stable since 2026-10-09; schema of 2026-11-02);
clauses COMPACT-01 .. COMPACT-15. ``compaction_update`` is an upsert of the entity named by
``compactionId`` (its first notification fixes its place in the timeline; later ones patch it);
``compaction_summary_chunk`` appends one content block to its summary. Both are sent only to a
client that advertised ``clientCapabilities.session.compaction`` (COMPACT-01), and a compaction is
part of replay (COMPACT-14).
"""

from typing import ClassVar, List

import attrs

from ._base import Meta, Unset, WireEnum, field
from .content import ContentBlock
from .identifiers import CompactionId

__all__ = [
    "CompactionCapabilities",
    "CompactionStatus",
    "CompactionUpdate",
    "CompactionSummaryChunk",
]


@attrs.frozen(kw_only=True)
class CompactionCapabilities:
    """Client support for ID-addressed context compaction updates.

    Spec: session-compaction.md (``clientCapabilities.session.compaction: {}``).
    """


class CompactionStatus(WireEnum):
    """Lifecycle state of a context compaction.

    Open: fields typed with it also accept any other string, kept as the plain string. Values
    beginning with ``_`` are reserved for implementation-specific extensions; other unknown values
    are reserved for future ACP statuses (spec COMPACT-15: an opaque generic state, no lifecycle
    inferred from it). Spec: session-compaction.md.
    """

    #: Compaction has started and has not finished.
    IN_PROGRESS = "in_progress"
    #: Compaction finished successfully.
    COMPLETED = "completed"
    #: Compaction finished unsuccessfully.
    FAILED = "failed"
    #: Compaction was cancelled before it finished.
    CANCELLED = "cancelled"


@attrs.frozen(kw_only=True)
class CompactionUpdate:
    """A context compaction upsert.

    The first notification fixes the compaction's timeline position. Later updates with the same
    ID patch that entity in place. Agents MUST only send this update when the Client advertised
    the ``session.compaction`` Client capability. ``summary``, ``error`` and ``_meta`` have patch
    semantics: omission (``UNSET``) leaves the stored value unchanged, ``null`` (``None``) clears
    it, and a concrete value replaces it; ``summary: []`` also clears the summary.
    Spec: session-compaction.md; COMPACT-04 .. COMPACT-08.
    """

    session_update: ClassVar[str] = "compaction_update"

    compaction_id: CompactionId = field(required=True)
    """The Agent-owned ID of this compaction, unique within the session."""
    status: CompactionStatus | str = field(required=True)
    """Current lifecycle status."""
    summary: List[ContentBlock] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Complete replacement user-displayable summary content for the compaction."""
    error: str | None | Unset = field(default_on_error=True)
    """Human-readable error details for the compaction."""
    meta: Meta | Unset = field(default_on_error=True)
    """Extensible metadata patch for this compaction."""


@attrs.frozen(kw_only=True)
class CompactionSummaryChunk:
    """A content block appended to a compaction's summary.

    A first-seen ID creates an in-progress compaction. Chunks append in receive order. Agents
    MUST only send this update when the Client advertised the ``session.compaction`` Client
    capability. Spec: session-compaction.md; COMPACT-04, COMPACT-07, COMPACT-08.
    """

    session_update: ClassVar[str] = "compaction_summary_chunk"

    compaction_id: CompactionId = field(required=True)
    """ID of the compaction whose summary receives this content."""
    content: ContentBlock = field(required=True)
    """One content block to append."""
    meta: Meta | Unset = field(default_on_error=True)
    """Metadata scoped to this chunk. Omission and ``null`` both mean absent."""
