"""Tool calls: reports of what the agent does, their content, and permission requests.

Spec: tool-calls.mdx; clauses TOOL-01 .. TOOL-15, SCHEMA-04. A ``ToolCall`` introduces a tool
call; a ``ToolCallUpdate`` changes some of its fields (absent fields stay as they were, TOOL-06).
``session/request_permission`` asks the user; its outcome is ``selected`` or ``cancelled``.
"""

from typing import ClassVar, List, Union

import attrs

from ._base import (
    JsonValue,
    Meta,
    Unset,
    WireEnum,
    field,
    tagged_union,
)
from .content import ContentBlock
from .subagents import SessionReference
from .identifiers import PermissionOptionId, SessionId, TerminalId, ToolCallId

__all__ = [
    "PermissionOptionKind",
    "PermissionOption",
    "Content",
    "Diff",
    "Terminal",
    "ToolCallContent",
    "ToolCallLocation",
    "ToolCallStatus",
    "ToolKind",
    "ToolCallUpdate",
    "RequestPermissionRequest",
    "ToolCall",
    "SelectedPermissionOutcome",
    "CancelledPermissionOutcome",
    "RequestPermissionOutcome",
    "RequestPermissionResponse",
]


class PermissionOptionKind(WireEnum):
    """The flavour of a permission option (a display hint).

    Spec: tool-calls.mdx
    """

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"


@attrs.frozen(kw_only=True)
class PermissionOption:
    """One choice offered to the user in a permission request.

    Spec: tool-calls.mdx
    """

    # spec TOOL-10: "required: optionId, name, kind" (PermissionOption).
    option_id: PermissionOptionId = field(required=True)
    """Unique identifier for this permission option."""
    name: str = field(required=True)
    """Human-readable label to display to the user."""
    kind: PermissionOptionKind = field(required=True)
    """Hint about the nature of this permission option."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Content:
    """Tool call content that is an ordinary content block.

    Spec: tool-calls.mdx
    """

    type: ClassVar[str] = "content"

    content: ContentBlock = field(required=True)
    """The actual content block."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Diff:
    """Tool call content that shows a file change.

    Spec: tool-calls.mdx
    """

    type: ClassVar[str] = "diff"

    path: str = field(required=True)
    """The absolute file path being modified."""
    old_text: str | None | Unset = field(default_on_error=True)
    """The original content (omitted or ``null`` for new files)."""
    new_text: str = field(required=True)
    """The new content after modification."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Terminal:
    """Tool call content that embeds a client terminal by id.

    Spec: tool-calls.mdx
    """

    type: ClassVar[str] = "terminal"

    terminal_id: TerminalId = field(required=True)
    """Identifier of the terminal instance to embed in the content stream."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: What a tool call produced, tagged by ``type``. Spec: tool-calls.mdx (Content); TOOL-12.
# spec TOOL-12: content {content}, diff {path, newText, oldText?} or terminal {terminalId}.
# spec SUBAGENT-02 (provisional): SessionReference, the draft page's session reference.
ToolCallContent = Union[Content, Diff, Terminal, SessionReference]
tagged_union(ToolCallContent, tag="type")


@attrs.frozen(kw_only=True)
class ToolCallLocation:
    """A file (and optional 1-based line) a tool call is working on.

    Spec: tool-calls.mdx
    """

    path: str = field(required=True)
    """The absolute file path being accessed or modified."""
    line: int | None | Unset = field(default_on_error=True, fmt="uint32")
    """Optional 1-based line number within the file."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


class ToolCallStatus(WireEnum):
    """Where a tool call is in its lifecycle.

    Spec: tool-calls.mdx
    """

    # spec TOOL-11: these four statuses and no other (the codec refuses any other string).
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    FAILED = "failed"


class ToolKind(WireEnum):
    """What kind of work a tool call does (a display hint).

    Spec: tool-calls.mdx
    """

    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    # spec TOOL-04, spec-gap switch-mode-kind: switch_mode is a kind (the schema's list).
    SWITCH_MODE = "switch_mode"
    OTHER = "other"


@attrs.frozen(kw_only=True)
class ToolCallUpdate:
    """A change to a known tool call: every field but the id is optional and replaces the old value.

    Spec: tool-calls.mdx
    """

    session_update: ClassVar[str] = "tool_call_update"

    tool_call_id: ToolCallId = field(required=True)
    """The ID of the tool call being updated."""
    # spec TOOL-18: a string sets or replaces the name; omitted or null leaves it unchanged (v1
    # cannot clear a name).
    name: str | None | Unset = field(default_on_error=True)
    """Update the programmatic name of the tool being invoked.

    This field is optional. Omitting it or sending ``null`` both mean that the existing name is left
    unchanged.
    """
    kind: ToolKind | None | Unset = field(default_on_error=True)
    """Update the tool kind."""
    status: ToolCallStatus | None | Unset = field(default_on_error=True)
    """Update the execution status."""
    title: str | None | Unset = field(default_on_error=True)
    """Update the human-readable title."""
    content: List[ToolCallContent] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Replace the content collection."""
    locations: List[ToolCallLocation] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Replace the locations collection."""
    # spec SCHEMA-15: rawInput and rawOutput are any JSON value, passed through untouched.
    raw_input: JsonValue | Unset = field(default_on_error=True)
    """Update the raw input."""
    raw_output: JsonValue | Unset = field(default_on_error=True)
    """Update the raw output."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class RequestPermissionRequest:
    """Params of `session/request_permission`: ask the user before a tool call runs.

    Spec: tool-calls.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    tool_call: ToolCallUpdate = field(required=True)
    """Details about the tool call requiring permission."""
    options: List[PermissionOption] = field(required=True)
    """Available permission options for the user to choose from."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ToolCall:
    """A tool call the agent reports when the model asks for one.

    Spec: tool-calls.mdx
    """

    session_update: ClassVar[str] = "tool_call"

    tool_call_id: ToolCallId = field(required=True)
    """Unique identifier for this tool call within the session."""
    title: str = field(required=True)
    """Human-readable title describing what the tool is doing."""
    # spec TOOL-18: the programmatic tool name (``read_file``); omitted or null means none.
    name: str | None | Unset = field(default_on_error=True)
    """Programmatic name of the tool being invoked.

    This field is optional. Omitting it or sending ``null`` both mean that no tool name is
    available.
    """
    kind: ToolKind | Unset = field(default_on_error=True)
    """The category of tool being invoked. Helps clients choose appropriate icons and UI treatment.
    """
    status: ToolCallStatus | Unset = field(default_on_error=True)
    """Current execution status of the tool call."""
    content: List[ToolCallContent] | Unset = field(default_on_error=True, skip_invalid_items=True)
    """Content produced by the tool call."""
    locations: List[ToolCallLocation] | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """File locations affected by this tool call. Enables "follow-along" features in clients."""
    raw_input: JsonValue | Unset = field(default_on_error=True)
    """Raw input parameters sent to the tool."""
    raw_output: JsonValue | Unset = field(default_on_error=True)
    """Raw output returned by the tool."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SelectedPermissionOutcome:
    """The user chose one of the offered options.

    Spec: tool-calls.mdx
    """

    outcome: ClassVar[str] = "selected"

    option_id: PermissionOptionId = field(required=True)
    """The ID of the option the user selected."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class CancelledPermissionOutcome:
    """The prompt turn was cancelled before the user chose (the ``cancelled`` outcome).

    Not a ``$defs`` entry of its own: the schema writes it inline in ``RequestPermissionOutcome``.
    Spec: tool-calls.mdx (Requesting Permission); PROMPT-21, SCHEMA-04.
    """

    outcome: ClassVar[str] = "cancelled"


#: Outcome of a permission request, tagged by ``outcome``. Spec: tool-calls.mdx; SCHEMA-04.
RequestPermissionOutcome = Union[CancelledPermissionOutcome, SelectedPermissionOutcome]
tagged_union(RequestPermissionOutcome, tag="outcome")


@attrs.frozen(kw_only=True)
class RequestPermissionResponse:
    """Result of `session/request_permission`: the outcome chosen.

    Spec: tool-calls.mdx
    """

    # spec SCHEMA-04: the outcome nests under result.outcome, tagged by its own "outcome" key.
    outcome: RequestPermissionOutcome = field(required=True)
    """The user's decision on the permission request."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
