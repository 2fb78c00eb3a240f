"""Subagent sessions: agent-created child sessions, their state, and messages between sessions.

Spec: v1/subagents.md (PROVISIONAL); clauses SUBAGENT-01 .. SUBAGENT-59. The feature was
stabilized on 2026-11-20, after the stable schema of 2026-11-02; these shapes are those of
``schema.unstable.json`` of 2026-11-02, except ``SessionReference`` (the ``session`` tool-call
content), which is in neither schema file and comes from the draft tool-calls page (spec-gap
session-reference-content). Every type here is provisional until a stable schema confirms it
(spec_notes/decisions.md, provisional-features).

A client opts in with ``clientCapabilities.subagents: {}`` (SUBAGENT-01). The agent then
announces each child on its parent with a ``subagent_update`` (SUBAGENT-05) that later patches
the child's title, capabilities, cwd and work state (SUBAGENT-15); the child's own updates carry
its ``sessionId``; ``session_message`` and ``session_message_chunk`` report messages between
sessions (SUBAGENT-57, SUBAGENT-58).
"""

from typing import ClassVar, List, Union

import attrs

from ._base import Meta, Unknown, Unset, field, tagged_union
from .content import ContentBlock
from .identifiers import MessageId, SessionId
from .jsonrpc import Error

__all__ = [
    "SubagentCapabilities",
    "SessionCancelCapabilities",
    "SubagentSessionCapabilities",
    "Usage",
    "ErrorStopReason",
    "RunningStateUpdate",
    "IdleStateUpdate",
    "RequiresActionStateUpdate",
    "UnknownStateUpdate",
    "StateUpdate",
    "SubagentUpdate",
    "SessionMessage",
    "SessionMessageChunk",
    "SessionReference",
]

#: What makes these types provisional (read by ``acpref.schema.PROVISIONAL_PAGES``).
PROVISIONAL = "subagents: stabilized 2026-11-20; shape from schema.unstable.json of 2026-11-02"


@attrs.frozen(kw_only=True)
class SubagentCapabilities:
    """Client capability ``clientCapabilities.subagents: {}``: the client understands subagents.

    Provisional (unstable schema of 2026-11-02). The client advertises it before the agent sends
    subagent updates or session-directed messages (SUBAGENT-01, SUBAGENT-03).
    Spec: v1/subagents.md.
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionCancelCapabilities:
    """``{}``: the child accepts ``session/cancel`` with its own session id (SUBAGENT-20).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SubagentSessionCapabilities:
    """The mutations a client may invoke on one child session (SUBAGENT-18: only these).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    cancel: SessionCancelCapabilities | None | Unset = field(default_on_error=True)
    """Permits the client to cancel this child's current work without ending the session. Omitted or
    ``null`` means unsupported. An object (including ``{}``) means supported.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Usage:
    """Token counts of a piece of work (still marked UNSTABLE inside the unstable schema).

    Provisional (unstable schema of 2026-11-02): reported on an idle state. Spec: v1/subagents.md.
    """

    total_tokens: int = field(required=True, fmt="uint64")
    """Sum of all token types across session."""
    input_tokens: int = field(required=True, fmt="uint64")
    """Total input tokens across all turns."""
    output_tokens: int = field(required=True, fmt="uint64")
    """Total output tokens across all turns."""
    thought_tokens: int | None | Unset = field(default_on_error=True, fmt="uint64")
    """Total thought/reasoning tokens."""
    cached_read_tokens: int | None | Unset = field(default_on_error=True, fmt="uint64")
    """Total cache read tokens."""
    cached_write_tokens: int | None | Unset = field(default_on_error=True, fmt="uint64")
    """Total cache write tokens."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ErrorStopReason:
    """The extra field of an idle state whose ``stopReason`` is ``error``.

    Provisional (unstable schema of 2026-11-02): agents SHOULD include the error (SUBAGENT-24).
    Spec: v1/subagents.md.
    """

    error: Error | None | Unset = field(default_on_error=True)
    """The failure, as a JSON-RPC error object.

    Optional. Omitted or ``null`` both mean the agent is not reporting failure details. Agents
    SHOULD include it.
    """


@attrs.frozen(kw_only=True)
class RunningStateUpdate:
    """Child foreground work is running (SUBAGENT-22). Provisional. Spec: v1/subagents.md."""

    state: ClassVar[str] = "running"

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP for additional metadata. Implementations MUST NOT make
    assumptions about values at these keys. Optional. Omitted and ``null`` mean no metadata for this
    state snapshot.
    """


@attrs.frozen(kw_only=True)
class IdleStateUpdate:
    """Child foreground work stopped; idle does not end the child (SUBAGENT-22, SUBAGENT-27).

    Provisional (unstable schema of 2026-11-02). ``stop_reason`` is a stop reason string
    (``cancelled`` confirms a cancel, SUBAGENT-21) or absent/null when unknown (SUBAGENT-23);
    ``error`` goes with ``stopReason: "error"`` (SUBAGENT-24). Spec: v1/subagents.md.
    """

    state: ClassVar[str] = "idle"

    stop_reason: str | None | Unset = field(default_on_error=True)
    """Why foreground work stopped. The value selects one of this type's variants, which may add
    fields of their own.

    Optional. Omitted or ``null`` both mean the agent is not reporting a stop reason; a malformed
    value is treated the same way.
    """
    error: Error | None | Unset = field(default_on_error=True)
    """The failure, as a JSON-RPC error object.

    Optional. Omitted or ``null`` both mean the agent is not reporting failure details. Agents
    SHOULD include it.
    """
    usage: Usage | None | Unset = field(default_on_error=True)
    """UNSTABLE. Token usage for completed foreground work.

    Optional. Omitted or ``null`` means not reported.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP for additional metadata. Implementations MUST NOT make
    assumptions about values at these keys. Optional. Omitted and ``null`` mean no metadata for this
    state snapshot.
    """


@attrs.frozen(kw_only=True)
class RequiresActionStateUpdate:
    """Child work is blocked on the user (SUBAGENT-23). Provisional. Spec: v1/subagents.md."""

    state: ClassVar[str] = "requires_action"

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP for additional metadata. Implementations MUST NOT make
    assumptions about values at these keys. Optional. Omitted and ``null`` mean no metadata for this
    state snapshot.
    """


@attrs.frozen(kw_only=True)
class UnknownStateUpdate:
    """Observability of child work is lost (SUBAGENT-25, SUBAGENT-26).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    state: ClassVar[str] = "unknown"

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP for additional metadata. Implementations MUST NOT make
    assumptions about values at these keys. Optional. Omitted and ``null`` mean no metadata for this
    state snapshot.
    """


#: A child's work state, a whole-object snapshot tagged by ``state`` (SUBAGENT-27); an unknown
#: state is kept whole, tag and payload (SUBAGENT-59). Provisional. Spec: v1/subagents.md.
StateUpdate = Union[
    RunningStateUpdate, IdleStateUpdate, RequiresActionStateUpdate, UnknownStateUpdate, Unknown
]
tagged_union(StateUpdate, tag="state", keep_unknown=True)


@attrs.frozen(kw_only=True)
class SubagentUpdate:
    """Session update on the parent: announces a child session, then patches it.

    Provisional (unstable schema of 2026-11-02). The first one for an unknown ``sessionId``
    announces the child and precedes all its traffic (SUBAGENT-05). Only ``sessionId`` is
    required; an omitted field keeps its value, ``null`` clears it (SUBAGENT-15).
    Spec: v1/subagents.md.
    """

    session_update: ClassVar[str] = "subagent_update"

    session_id: SessionId = field(required=True)
    """The opaque session ID identifying the child in all ACP messages."""
    title: str | None | Unset = field(default_on_error=True)
    """The parent's human-readable display title for this child. It need not be unique.

    Omitted means unchanged. ``null`` clears it. If unset, the Client chooses a fallback
    presentation.
    """
    description: str | None | Unset = field(default_on_error=True)
    """The parent's human-readable description of the child's role or purpose.

    Omitted means unchanged. ``null`` clears it. If unset, the Client chooses a fallback
    presentation. This is current display metadata, not the history of instructions sent to the
    child.
    """
    capabilities: SubagentSessionCapabilities | None | Unset = field(default_on_error=True)
    """Client-initiated session mutations permitted for this subagent session.

    Omitted means unchanged. ``null`` clears the capability set and disables child mutations. If
    never supplied, no session mutations are permitted. Read-only operations retain their normal
    protocol semantics and capability requirements. A concrete object replaces the whole capability
    set.
    """
    state: StateUpdate | None | Unset = field(default_on_error=True)
    """Current state snapshot for the child session.

    Omitted means unchanged. ``null`` clears the current activity without asserting idle or sending
    an ``unknown`` snapshot. A concrete state replaces the previous state object wholesale. If never
    supplied, the current activity is unset/unconfirmed.
    """
    # spec SUBAGENT-16 (provisional): cwd and every additional directory are absolute.
    cwd: str | None | Unset = field()
    """The child's working directory. Must be an absolute path.

    Optional and nullable. Omitted means unchanged. ``null`` clears the reported value. While unset,
    the child inherits its immediate parent's effective working directory. Clients use this value
    for the child's root set and as the default terminal working directory.
    """
    additional_directories: List[str] | None | Unset = field()
    """Additional workspace roots for the child. Each path must be absolute.

    Optional and nullable. Omitted means unchanged. ``null`` clears the reported value. While unset,
    the child inherits its immediate parent's effective additional directories, independently of
    ``cwd``. A concrete array replaces the whole list. ``[]`` reports no additional directories.
    Clients use these values for the child's root set.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionMessage:
    """Session update: an upsert of a message sent between sessions, keyed by ``messageId``.

    Provisional (unstable schema of 2026-11-02). Omitted fields keep their value, ``null``
    clears; ``content`` ``null`` or ``[]`` clears, a non-empty array replaces (SUBAGENT-57).
    Spec: v1/subagents.md.
    """

    session_update: ClassVar[str] = "session_message"

    message_id: MessageId = field(required=True)
    """Identifier of this message within the enclosing session's transcript."""
    sender_session_id: SessionId | None | Unset = field(default_on_error=True)
    """The sending session.

    Omitted leaves the stored value unchanged. ``null`` clears it. A value replaces it.
    """
    recipient_session_id: SessionId | None | Unset = field(default_on_error=True)
    """The receiving session.

    Omitted leaves the stored value unchanged. ``null`` clears it. A value replaces it.
    """
    sender_message_id: MessageId | None | Unset = field(default_on_error=True)
    """On an incoming view, the ``messageId`` of the same message's outgoing view in the sender's
    transcript.

    Omitted leaves the stored value unchanged. ``null`` clears it. A value replaces it. It can
    arrive after the message starts streaming.
    """
    recipient_message_id: MessageId | None | Unset = field(default_on_error=True)
    """On an outgoing view, the ``messageId`` of the same message's incoming view in the recipient's
    transcript.

    Omitted leaves the stored value unchanged. ``null`` clears it. A value replaces it. It can
    arrive after the message starts streaming.
    """
    content: List[ContentBlock] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Omitted leaves content unchanged. ``null`` or ``[]`` clears it. A non-empty array replaces
    all content.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """Omitted leaves metadata unchanged. ``null`` removes it.

    Implementations MUST NOT make assumptions about values in ``_meta``.
    """


@attrs.frozen(kw_only=True)
class SessionMessageChunk:
    """Session update: one content block appended to a message between sessions (SUBAGENT-58).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    session_update: ClassVar[str] = "session_message_chunk"

    message_id: MessageId = field(required=True)
    """Identifier of this message within the enclosing session's transcript."""
    content: ContentBlock = field(required=True)
    """A single content block appended to the message."""
    meta: Meta | Unset = field(default_on_error=True)
    """Optional and nullable chunk-scoped metadata. Omitted or ``null`` means none.

    Implementations MUST NOT make assumptions about values in ``_meta``.
    """


@attrs.frozen(kw_only=True)
class SessionReference:
    """Tool-call content ``session``: a display-only reference to a session the client knows.

    Provisional, and in **neither** schema file: the shape is the draft tool-calls page's
    "Session References" (spec-gap session-reference-content). Sent only to a client that
    advertised ``subagents`` (SUBAGENT-02), naming a known session (SUBAGENT-53); it registers,
    grants or changes nothing (SUBAGENT-54). Spec: v1/subagents.md.
    """

    type: ClassVar[str] = "session"

    session_id: SessionId = field(required=True)
    """The session referred to: one the client already knows. The reference only displays it; it
    grants or changes nothing.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
