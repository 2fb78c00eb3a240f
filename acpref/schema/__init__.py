"""Every type of the ACP v1 schema, one module per spec page, all reachable from here.

Spec: schema.json (``spec_notes/spec/schema.json``); the parity test (tests/test_schema_parity.py)
proves that every ``$defs`` entry has a model here with the same name, property names, required
set, enum values and union tags.

Conventions (see ``_base``): frozen ``attrs`` classes with keyword-only snake_case fields; an
optional field absent on the wire is ``UNSET``, a ``null`` one is ``None``; ``_meta`` is the
``meta`` field; each variant of a tagged union carries its tag as a class constant
(``TextContent.type == "text"``); unions are ``typing.Union`` aliases registered in ``UNIONS``.

Pages are imported on first use (PEP 562): ``schema.InitializeRequest`` imports the
``initialization`` page (and the pages it builds on), nothing else. Building the ~180 classes of
every page takes about half of an agent's start-up otherwise (benchmarks/README.md), and a
process that only answers ``initialize``, or validates a few messages, needs a handful of them.
``_PAGES`` names what each page defines; importing a page checks that it still says so.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict, List, Tuple

from ._base import UNIONS, UNSET, JsonObject, JsonValue, Meta, Unknown, Unset, is_set

#: Each page of the spec, with the names it defines (its ``__all__``).
_PAGES: Dict[str, Tuple[str, ...]] = {
    "agent_plan": (
        "PlanEntryPriority",
        "PlanEntryStatus",
        "PlanEntry",
        "Plan",
    ),
    "authentication": (
        "LogoutCapabilities",
        "AgentAuthCapabilities",
        "AuthMethodAgent",
        "AuthMethodTerminal",
        "AuthMethod",
        "AuthenticateResponse",
        "LogoutResponse",
        "AuthenticateRequest",
        "LogoutRequest",
    ),
    "cancellation": ("CancelRequestNotification",),
    "content": (
        "Role",
        "Annotations",
        "AudioContent",
        "BlobResourceContents",
        "TextResourceContents",
        "EmbeddedResourceResource",
        "EmbeddedResource",
        "ImageContent",
        "ResourceLink",
        "TextContent",
        "ContentBlock",
    ),
    "elicitation": (
        "ElicitationSessionScope",
        "ElicitationRequestScope",
        "ElicitationScope",
        "ElicitationFormMode",
        "ElicitationUrlMode",
        "ElicitationMode",
        "CreateElicitationRequest",
        "ElicitationContentValue",
        "ElicitationAcceptAction",
        "ElicitationDeclineAction",
        "ElicitationCancelAction",
        "ElicitationAction",
        "CreateElicitationResponse",
        "CompleteElicitationNotification",
    ),
    "elicitation_form": (
        "StringFormat",
        "EnumOption",
        "StringPropertySchema",
        "NumberPropertySchema",
        "IntegerPropertySchema",
        "BooleanPropertySchema",
        "StringMultiSelectItems",
        "TitledMultiSelectItems",
        "MultiSelectItems",
        "MultiSelectPropertySchema",
        "ElicitationPropertySchema",
        "ElicitationSchemaType",
        "ElicitationSchema",
    ),
    "extensibility": (
        "ExtRequest",
        "ExtResponse",
        "ExtNotification",
    ),
    "file_system": (
        "WriteTextFileRequest",
        "ReadTextFileRequest",
        "WriteTextFileResponse",
        "ReadTextFileResponse",
    ),
    "identifiers": (
        "RequestId",
        "SessionId",
        "ToolCallId",
        "TerminalId",
        "PermissionOptionId",
        "ElicitationId",
        "ProtocolVersion",
        "AuthMethodId",
        "SessionModeId",
        "SessionConfigId",
        "SessionConfigValueId",
        "SessionConfigGroupId",
        "MessageId",
        "CompactionId",
    ),
    "initialization": (
        "McpCapabilities",
        "PromptCapabilities",
        "AgentCapabilities",
        "Implementation",
        "InitializeResponse",
        "AuthCapabilities",
        "ElicitationFormCapabilities",
        "ElicitationUrlCapabilities",
        "ElicitationCapabilities",
        "FileSystemCapabilities",
        "ClientCapabilities",
        "InitializeRequest",
    ),
    "jsonrpc": (
        "ErrorCode",
        "Error",
        "AgentRequest",
        "ClientRequest",
        "AgentNotification",
        "ClientNotification",
        "ResultResponse",
        "ErrorResponse",
        "AgentResponse",
        "ClientResponse",
    ),
    "plan_operations": (
        "PlanId",
        "PlanCapabilities",
        "PlanItems",
        "PlanMarkdown",
        "PlanFile",
        "PlanUpdateContent",
        "PlanUpdate",
        "PlanRemoved",
    ),
    "prompt_turn": (
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
    ),
    "session_capabilities": (
        "SessionListCapabilities",
        "SessionDeleteCapabilities",
        "SessionResumeCapabilities",
        "SessionCloseCapabilities",
        "SessionAdditionalDirectoriesCapabilities",
        "SessionCapabilities",
        "BooleanConfigOptionCapabilities",
        "SessionConfigOptionsCapabilities",
        "ClientSessionCapabilities",
    ),
    "session_compaction": (
        "CompactionCapabilities",
        "CompactionStatus",
        "CompactionUpdate",
        "CompactionSummaryChunk",
    ),
    "session_config_options": (
        "SessionConfigOptionCategory",
        "SessionConfigSelectOption",
        "SessionConfigSelectGroup",
        "SessionConfigSelectOptions",
        "SessionConfigSelect",
        "SessionConfigBoolean",
        "SessionConfigKind",
        "SessionConfigOption",
        "SetSessionConfigOptionRequest",
        "SetSessionConfigOptionResponse",
        "ConfigOptionUpdate",
    ),
    "session_delete": (
        "DeleteSessionResponse",
        "DeleteSessionRequest",
    ),
    "session_list": (
        "SessionInfo",
        "ListSessionsResponse",
        "SessionInfoUpdate",
        "ListSessionsRequest",
    ),
    "session_modes": (
        "SessionMode",
        "SessionModeState",
        "SetSessionModeResponse",
        "CurrentModeUpdate",
        "SetSessionModeRequest",
    ),
    "session_notices": (
        "NoticeSeverity",
        "NoticeCapabilities",
        "Notice",
    ),
    "session_setup": (
        "EnvVariable",
        "NewSessionResponse",
        "LoadSessionResponse",
        "ResumeSessionResponse",
        "CloseSessionResponse",
        "HttpHeader",
        "McpServerHttp",
        "McpServerSse",
        "McpServerStdio",
        "McpServer",
        "NewSessionRequest",
        "LoadSessionRequest",
        "ResumeSessionRequest",
        "CloseSessionRequest",
    ),
    "slash_commands": (
        "UnstructuredCommandInput",
        "AvailableCommandInput",
        "AvailableCommand",
        "AvailableCommandsUpdate",
    ),
    "subagents": (
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
    ),
    "system_prompt": (
        "SystemPromptMode",
        "SystemPrompt",
        "SessionSystemPromptOverrideCapabilities",
        "SessionSystemPromptModeCapabilities",
        "SessionSystemPromptCapabilities",
    ),
    "terminals": (
        "CreateTerminalRequest",
        "TerminalOutputRequest",
        "ReleaseTerminalRequest",
        "WaitForTerminalExitRequest",
        "KillTerminalRequest",
        "CreateTerminalResponse",
        "TerminalExitStatus",
        "TerminalOutputResponse",
        "ReleaseTerminalResponse",
        "WaitForTerminalExitResponse",
        "KillTerminalResponse",
    ),
    "tool_calls": (
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
    ),
}

#: The pages of features stabilized after the stable schema of 2026-11-02, whose shapes come from
#: ``schema.unstable.json`` and draft pages: every type they define is provisional (each page's
#: ``PROVISIONAL`` says why), as are the ``field(provisional=True)`` fields of stable types.
#: Findings on their clauses are graded by their sentence; the unstable shape alone is a warning
#: (spec_notes/decisions.md, provisional-features).
PROVISIONAL_PAGES: Tuple[str, ...] = ("system_prompt", "plan_operations", "subagents")

_PAGE_OF = {name: page for page, names in _PAGES.items() for name in names}

__all__ = [
    "UNIONS",
    "UNSET",
    "JsonObject",
    "JsonValue",
    "Meta",
    "Unknown",
    "Unset",
    "is_set",
    "PROVISIONAL_PAGES",
    *_PAGE_OF,
]


def __getattr__(name: str) -> Any:
    """Import the page that defines ``name`` (or the page ``name`` itself) on first use."""
    page = _PAGE_OF.get(name, name if name in _PAGES else None)
    if page is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{page}")
    if set(module.__all__) != set(_PAGES[page]):
        raise ImportError(f"acpref.schema._PAGES is out of date for the page {page!r}")
    for exported in module.__all__:  # the whole page at once: later lookups are plain globals
        globals()[exported] = getattr(module, exported)
    return module if name == page else globals()[name]


def __dir__() -> List[str]:
    return sorted({*globals(), *__all__, *_PAGES})


if TYPE_CHECKING:  # for type checkers and editors: every name, as if imported eagerly
    from .agent_plan import *  # noqa: F403
    from .authentication import *  # noqa: F403
    from .cancellation import *  # noqa: F403
    from .content import *  # noqa: F403
    from .elicitation import *  # noqa: F403
    from .elicitation_form import *  # noqa: F403
    from .extensibility import *  # noqa: F403
    from .file_system import *  # noqa: F403
    from .identifiers import *  # noqa: F403
    from .initialization import *  # noqa: F403
    from .jsonrpc import *  # noqa: F403
    from .plan_operations import *  # noqa: F403
    from .prompt_turn import *  # noqa: F403
    from .session_compaction import *  # noqa: F403
    from .session_capabilities import *  # noqa: F403
    from .session_config_options import *  # noqa: F403
    from .session_delete import *  # noqa: F403
    from .session_list import *  # noqa: F403
    from .session_modes import *  # noqa: F403
    from .session_notices import *  # noqa: F403
    from .session_setup import *  # noqa: F403
    from .slash_commands import *  # noqa: F403
    from .subagents import *  # noqa: F403
    from .system_prompt import *  # noqa: F403
    from .terminals import *  # noqa: F403
    from .tool_calls import *  # noqa: F403
