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


@attrs.frozen(kw_only=True)
class SessionCancelCapabilities:
    """``{}``: the child accepts ``session/cancel`` with its own session id (SUBAGENT-20).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SubagentSessionCapabilities:
    """The mutations a client may invoke on one child session (SUBAGENT-18: only these).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    cancel: SessionCancelCapabilities | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class Usage:
    """Token counts of a piece of work (still marked UNSTABLE inside the unstable schema).

    Provisional (unstable schema of 2026-11-02): reported on an idle state. Spec: v1/subagents.md.
    """

    total_tokens: int = field(required=True, fmt="uint64")
    input_tokens: int = field(required=True, fmt="uint64")
    output_tokens: int = field(required=True, fmt="uint64")
    thought_tokens: int | None | Unset = field(default_on_error=True, fmt="uint64")
    cached_read_tokens: int | None | Unset = field(default_on_error=True, fmt="uint64")
    cached_write_tokens: int | None | Unset = field(default_on_error=True, fmt="uint64")
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ErrorStopReason:
    """The extra field of an idle state whose ``stopReason`` is ``error``.

    Provisional (unstable schema of 2026-11-02): agents SHOULD include the error (SUBAGENT-24).
    Spec: v1/subagents.md.
    """

    error: Error | None | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class RunningStateUpdate:
    """Child foreground work is running (SUBAGENT-22). Provisional. Spec: v1/subagents.md."""

    state: ClassVar[str] = "running"

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class IdleStateUpdate:
    """Child foreground work stopped; idle does not end the child (SUBAGENT-22, SUBAGENT-27).

    Provisional (unstable schema of 2026-11-02). ``stop_reason`` is a stop reason string
    (``cancelled`` confirms a cancel, SUBAGENT-21) or absent/null when unknown (SUBAGENT-23);
    ``error`` goes with ``stopReason: "error"`` (SUBAGENT-24). Spec: v1/subagents.md.
    """

    state: ClassVar[str] = "idle"

    stop_reason: str | None | Unset = field(default_on_error=True)
    error: Error | None | Unset = field(default_on_error=True)
    usage: Usage | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class RequiresActionStateUpdate:
    """Child work is blocked on the user (SUBAGENT-23). Provisional. Spec: v1/subagents.md."""

    state: ClassVar[str] = "requires_action"

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class UnknownStateUpdate:
    """Observability of child work is lost (SUBAGENT-25, SUBAGENT-26).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    state: ClassVar[str] = "unknown"

    meta: Meta | Unset = field(default_on_error=True)


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
    title: str | None | Unset = field(default_on_error=True)
    description: str | None | Unset = field(default_on_error=True)
    capabilities: SubagentSessionCapabilities | None | Unset = field(default_on_error=True)
    state: StateUpdate | None | Unset = field(default_on_error=True)
    # spec SUBAGENT-16 (provisional): cwd and every additional directory are absolute.
    cwd: str | None | Unset = field()
    additional_directories: List[str] | None | Unset = field()
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionMessage:
    """Session update: an upsert of a message sent between sessions, keyed by ``messageId``.

    Provisional (unstable schema of 2026-11-02). Omitted fields keep their value, ``null``
    clears; ``content`` ``null`` or ``[]`` clears, a non-empty array replaces (SUBAGENT-57).
    Spec: v1/subagents.md.
    """

    session_update: ClassVar[str] = "session_message"

    message_id: MessageId = field(required=True)
    sender_session_id: SessionId | None | Unset = field(default_on_error=True)
    recipient_session_id: SessionId | None | Unset = field(default_on_error=True)
    sender_message_id: MessageId | None | Unset = field(default_on_error=True)
    recipient_message_id: MessageId | None | Unset = field(default_on_error=True)
    content: List[ContentBlock] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionMessageChunk:
    """Session update: one content block appended to a message between sessions (SUBAGENT-58).

    Provisional (unstable schema of 2026-11-02). Spec: v1/subagents.md.
    """

    session_update: ClassVar[str] = "session_message_chunk"

    message_id: MessageId = field(required=True)
    content: ContentBlock = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


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
    meta: Meta | Unset = field(default_on_error=True)
