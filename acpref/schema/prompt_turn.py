"""The prompt turn: ``session/prompt``, ``session/update``, ``session/cancel``.

Spec: prompt-turn.mdx; clauses PROMPT-01 .. PROMPT-27, SCHEMA-01, SCHEMA-02. The agent streams
``session/update`` notifications while a turn runs and answers ``session/prompt`` with a stop
reason once the turn is over; a cancelled turn ends with ``stopReason: "cancelled"``, never an
error (PROMPT-24).
"""

from typing import ClassVar, List, Union

import attrs

from ._base import (
    Meta,
    Unknown,
    Unset,
    WireEnum,
    field,
    tagged_union,
)
from .agent_plan import Plan
from .content import ContentBlock
from .identifiers import MessageId, SessionId
from .plan_operations import PlanRemoved, PlanUpdate
from .session_compaction import CompactionSummaryChunk, CompactionUpdate
from .session_config_options import ConfigOptionUpdate
from .session_list import SessionInfoUpdate
from .session_modes import CurrentModeUpdate
from .session_notices import Notice
from .slash_commands import AvailableCommandsUpdate
from .subagents import SessionMessage, SessionMessageChunk, SubagentUpdate
from .tool_calls import ToolCall, ToolCallUpdate

__all__ = [
    "StopReason",
    "PromptResponse",
    "ContentChunk",
    "Cost",
    "UsageUpdate",
    "UserMessageChunk",
    "AgentMessageChunk",
    "AgentThoughtChunk",
    "SessionUpdate",
    "SessionNotification",
    "PromptRequest",
    "CancelNotification",
]


# spec PROMPT-17: a turn ends with one of these, and with nothing else.
class StopReason(WireEnum):
    """Why a prompt turn ended.

    Spec: prompt-turn.mdx
    """

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    MAX_TURN_REQUESTS = "max_turn_requests"
    REFUSAL = "refusal"
    CANCELLED = "cancelled"


@attrs.frozen(kw_only=True)
class PromptResponse:
    """Result of `session/prompt`: why the turn stopped.

    Spec: prompt-turn.mdx
    """

    stop_reason: StopReason = field(required=True)
    """Indicates why the agent stopped processing the turn."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ContentChunk:
    """A streamed piece of a message: one content block and an optional message id.

    Spec: prompt-turn.mdx
    """

    # spec SCHEMA-02: one ContentBlock (not an array), and an optional messageId.
    content: ContentBlock = field(required=True)
    """A single item of content."""
    message_id: MessageId | None | Unset = field(default_on_error=True)
    """A unique identifier for the message this chunk belongs to.

    All chunks belonging to the same message share the same ``messageId``. A change in ``messageId``
    indicates a new message has started.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Cost:
    """A cumulative cost: ``amount`` in the unit ``currency``.

    ``currency`` is an ISO 4217 currency code ("USD", "EUR") for money, or another unit such as
    "credits" (spec SCHEMA-22, relaxing PROMPT-10's ISO-only wording): never validated against
    ISO 4217. Spec: prompt-turn.mdx
    """

    amount: float = field(required=True)
    """Total cumulative cost for session."""
    # spec SCHEMA-22: the unit of amount: ISO 4217 for money, or another unit ("credits").
    currency: str = field(required=True)
    """Unit of ``amount``: an ISO 4217 currency code (e.g., "USD", "EUR") for money, or another unit
    such as "credits".
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class UsageUpdate:
    """Session update: context tokens used, context size, and cost.

    Spec: prompt-turn.mdx
    """

    session_update: ClassVar[str] = "usage_update"

    # spec PROMPT-10: used and size are required, non-null, non-negative integers.
    used: int = field(required=True, fmt="uint64")
    """Tokens currently in context."""
    size: int = field(required=True, fmt="uint64")
    """Total context window size in tokens."""
    cost: Cost | None | Unset = field(default_on_error=True)
    """Cumulative session cost (optional)."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class UserMessageChunk(ContentChunk):
    """Session update: a chunk of the user's message (sent while replaying history on load).

    Spec: prompt-turn.mdx, session-setup.mdx (Loading Sessions); SCHEMA-02.
    """

    session_update: ClassVar[str] = "user_message_chunk"


@attrs.frozen(kw_only=True)
class AgentMessageChunk(ContentChunk):
    """Session update: a chunk of the agent's reply.

    Spec: prompt-turn.mdx (Agent Reports Output); SCHEMA-02.
    """

    session_update: ClassVar[str] = "agent_message_chunk"


@attrs.frozen(kw_only=True)
class AgentThoughtChunk(ContentChunk):
    """Session update: a chunk of the agent's reasoning.

    Spec: prompt-turn.mdx (Agent Reports Output); SCHEMA-02.
    """

    session_update: ClassVar[str] = "agent_thought_chunk"


#: One session update, tagged by ``sessionUpdate``: the 14 stable kinds, or ``Unknown``. Spec:
#: prompt-turn.mdx; SCHEMA-01, SCHEMA-24. The three chunk kinds share the schema's ``ContentChunk``
#: shape, so each has its own subclass here to carry its tag.
# spec SCHEMA-24: {sessionId, update}; update.sessionUpdate is one of these 14 tags (SCHEMA-01's
# 11, plus notice, compaction_update and compaction_summary_chunk).
# spec-gap forward-compatible: the schema's oneOf is closed, but a newer v1 peer sends
# kinds this version does not define (notice was one): such an update is kept raw (``Unknown``),
# forwarded unchanged and ignored by a client; the oracle fails it (spec-gap undefined-value:
# OVERVIEW-01), or warns with --newer-spec.
SessionUpdate = Union[
    UserMessageChunk,
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCall,
    ToolCallUpdate,
    Plan,
    PlanUpdate,  # provisional: plan operations (PLANOP-01)
    PlanRemoved,  # provisional: plan operations (PLANOP-01)
    SubagentUpdate,  # provisional: subagent sessions (SUBAGENT-01)
    SessionMessage,  # provisional: subagent sessions (SUBAGENT-01)
    SessionMessageChunk,  # provisional: subagent sessions (SUBAGENT-01)
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    ConfigOptionUpdate,
    SessionInfoUpdate,
    UsageUpdate,
    Notice,
    CompactionUpdate,
    CompactionSummaryChunk,
    Unknown,
]
tagged_union(SessionUpdate, tag="sessionUpdate", keep_unknown=True)


@attrs.frozen(kw_only=True)
class SessionNotification:
    """Params of `session/update`: one update about a session.

    Spec: prompt-turn.mdx
    """

    # spec SCHEMA-01: {sessionId, update}, the update tagged by sessionUpdate.
    session_id: SessionId = field(required=True)
    """The ID of the session this update pertains to."""
    update: SessionUpdate = field(required=True)
    """The actual update content."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class PromptRequest:
    """Params of `session/prompt`: the user's message as content blocks.

    Spec: prompt-turn.mdx
    """

    # spec PROMPT-02: sessionId and prompt (an array of ContentBlock), both required.
    session_id: SessionId = field(required=True)
    """The ID of the session to send this user message to."""
    prompt: List[ContentBlock] = field(required=True)
    """The blocks of content that compose the user's message.

    As a baseline, the Agent MUST support ``text`` and ``resource_link`` content blocks, while other
    variants are optionally enabled via ``PromptCapabilities``.

    The Client MUST adapt its interface according to ``PromptCapabilities``.

    The client MAY include referenced pieces of context as either ``resource`` or ``resource_link``
    content blocks.

    When available, ``resource`` is preferred as it avoids extra round-trips and allows the message
    to include pieces of context from sources the agent may not have access to.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class CancelNotification:
    """Params of `session/cancel`: stop the session's running turn.

    Spec: prompt-turn.mdx
    """

    session_id: SessionId = field(required=True)
    """The ID of the session to cancel operations for."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
