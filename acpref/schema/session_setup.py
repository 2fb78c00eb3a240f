"""Session setup: ``session/new``, ``load``, ``resume`` and ``close``, and the MCP servers.

Spec: session-setup.mdx; clauses SETUP-01 .. SETUP-36, SCHEMA-06. ``cwd`` and every additional
directory are absolute paths. A stdio MCP server has no ``type`` key; http and sse servers are
tagged and allowed only when the agent advertised the transport (SETUP-35).
"""

from typing import ClassVar, List, Union

import attrs

from ._base import Meta, Unset, field, tagged_union
from .identifiers import SessionId
from .session_config_options import SessionConfigOption
from .session_modes import SessionModeState
from .system_prompt import SystemPrompt

__all__ = [
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
]


@attrs.frozen(kw_only=True)
class EnvVariable:
    """A name/value environment variable (MCP servers, terminals).

    Spec: session-setup.mdx
    """

    name: str = field(required=True)
    """The name of the environment variable."""
    value: str = field(required=True)
    """The value to set for the environment variable."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class NewSessionResponse:
    """Result of `session/new`: the new session id and its initial modes and options.

    Spec: session-setup.mdx
    """

    session_id: SessionId = field(required=True)
    """Unique identifier for the created session.

    Used in all subsequent requests for this conversation.
    """
    modes: SessionModeState | None | Unset = field(default_on_error=True)
    """Initial mode state if supported by the Agent."""
    config_options: List[SessionConfigOption] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Initial session configuration options if supported by the Agent."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class LoadSessionResponse:
    """Result of `session/load`, sent after the whole replay.

    Spec: session-setup.mdx
    """

    modes: SessionModeState | None | Unset = field(default_on_error=True)
    """Initial mode state if supported by the Agent."""
    config_options: List[SessionConfigOption] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Initial session configuration options if supported by the Agent."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ResumeSessionResponse:
    """Result of `session/resume`.

    Spec: session-setup.mdx
    """

    modes: SessionModeState | None | Unset = field(default_on_error=True)
    """Initial mode state if supported by the Agent."""
    config_options: List[SessionConfigOption] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Initial session configuration options if supported by the Agent."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class CloseSessionResponse:
    """Result of `session/close`.

    Spec: session-setup.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class HttpHeader:
    """An HTTP header sent to an MCP server.

    Spec: session-setup.mdx
    """

    name: str = field(required=True)
    """The name of the HTTP header."""
    value: str = field(required=True)
    """The value to set for the HTTP header."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class McpServerHttp:
    """An MCP server reached over streamable HTTP.

    Spec: session-setup.mdx
    """

    type: ClassVar[str] = "http"

    # spec SETUP-33: type "http", name, url and headers (an array of {name, value}), required.
    name: str = field(required=True)
    """Human-readable name identifying this MCP server."""
    url: str = field(required=True)
    """URL to the MCP server."""
    # spec SCHEMA-18, SCHEMA-19: null reads as [], an omitted key is still an error.
    headers: List[HttpHeader] = field(required=True, default_on_null=True)
    """HTTP headers to set when making requests to the MCP server."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class McpServerSse:
    """An MCP server reached over SSE (deprecated by MCP).

    Spec: session-setup.mdx
    """

    type: ClassVar[str] = "sse"

    # spec SETUP-34: type "sse", name, url and headers (an array of {name, value}), required.
    name: str = field(required=True)
    """Human-readable name identifying this MCP server."""
    url: str = field(required=True)
    """URL to the MCP server."""
    # spec SCHEMA-18, SCHEMA-19: null reads as [], an omitted key is still an error.
    headers: List[HttpHeader] = field(required=True, default_on_null=True)
    """HTTP headers to set when making requests to the MCP server."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class McpServerStdio:
    """An MCP server the agent spawns and talks to over stdio.

    Spec: session-setup.mdx
    """

    # spec SETUP-32: name, command (absolute: the rules check it), args and env, required.
    name: str = field(required=True)
    """Human-readable name identifying this MCP server."""
    command: str = field(required=True)
    """Absolute path to the MCP server executable."""
    # spec SCHEMA-18, SCHEMA-19: null reads as [], an omitted key is still an error.
    args: List[str] = field(required=True, default_on_null=True)
    """Command-line arguments to pass to the MCP server."""
    # spec-gap stdio-env: env is required, as in the schema ([] when empty).
    env: List[EnvVariable] = field(required=True, default_on_null=True)
    """Environment variables to set when launching the MCP server."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: An MCP server for the agent to connect to: stdio has no ``type``; http and sse are tagged.
#: Spec: session-setup.mdx (MCP Servers); SCHEMA-06.
McpServer = Union[McpServerHttp, McpServerSse, McpServerStdio]
tagged_union(McpServer, tag="type", untagged=McpServerStdio)


@attrs.frozen(kw_only=True)
class NewSessionRequest:
    """Params of `session/new`: working directory, MCP servers, extra roots.

    Spec: session-setup.mdx
    """

    cwd: str = field(required=True)
    """The working directory for this session. Must be an absolute path."""
    additional_directories: List[str] | Unset = field(default_on_null=True)
    """Additional workspace roots for this session. Each path must be absolute.

    These expand the session's filesystem scope without changing ``cwd``, which remains the base for
    relative paths. When omitted or empty, no additional roots are activated for the new session.
    """
    # spec SCHEMA-18 .. SCHEMA-21: null reads as []; omitted, or one malformed server, is -32602.
    mcp_servers: List[McpServer] = field(required=True, default_on_null=True)
    """List of MCP (Model Context Protocol) servers the agent should connect to."""
    # spec SYSPROMPT-02 (provisional): only if the agent advertised the systemPrompt capability.
    system_prompt: SystemPrompt | None | Unset = field(provisional=True)
    """UNSTABLE. This capability is not part of the spec yet, and may be removed or changed at any
    point.

    System-level instructions for the new session.

    Optional. Omitted and ``null`` are equivalent and mean the Agent uses its own default
    instructions. Clients MUST only send this when the Agent advertises
    ``sessionCapabilities.systemPrompt``.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class LoadSessionRequest:
    """Params of `session/load`: reopen a session; the agent replays its history first.

    Spec: session-setup.mdx
    """

    # spec SCHEMA-18 .. SCHEMA-21: null reads as []; omitted, or one malformed server, is -32602.
    mcp_servers: List[McpServer] = field(required=True, default_on_null=True)
    """List of MCP servers to connect to for this session."""
    cwd: str = field(required=True)
    """The working directory for this session. Must be an absolute path."""
    additional_directories: List[str] | Unset = field(default_on_null=True)
    """Additional workspace roots to activate for this session. Each path must be absolute.

    When omitted or empty, no additional roots are activated. When non-empty, this is the complete
    resulting additional-root list for the loaded session. It may differ from any previously used or
    reported list as long as the request ``cwd`` matches the session's ``cwd``.
    """
    session_id: SessionId = field(required=True)
    """The ID of the session to load."""
    # spec SYSPROMPT-02 (provisional): only if the agent advertised the systemPrompt capability.
    system_prompt: SystemPrompt | None | Unset = field(provisional=True)
    """UNSTABLE. This capability is not part of the spec yet, and may be removed or changed at any
    point.

    System-level instructions for the loaded session.

    Optional. Omitted and ``null`` are equivalent. The Agent may then keep a system prompt it stored
    with the session or use its default instructions. Clients MUST only send this when the Agent
    advertises ``sessionCapabilities.systemPrompt``, and SHOULD send the same value they used when
    the session was created.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ResumeSessionRequest:
    """Params of `session/resume`: reopen a session without replay.

    Spec: session-setup.mdx
    """

    session_id: SessionId = field(required=True)
    """The ID of the session to resume."""
    cwd: str = field(required=True)
    """The working directory for this session. Must be an absolute path."""
    additional_directories: List[str] | Unset = field(default_on_null=True)
    """Additional workspace roots to activate for this session. Each path must be absolute.

    When omitted or empty, no additional roots are activated. When non-empty, this is the complete
    resulting additional-root list for the resumed session. It may differ from any previously used
    or reported list as long as the request ``cwd`` matches the session's ``cwd``.
    """
    mcp_servers: List[McpServer] | Unset = field(default_on_null=True)
    """List of MCP servers to connect to for this session."""
    # spec SYSPROMPT-02 (provisional): only if the agent advertised the systemPrompt capability.
    system_prompt: SystemPrompt | None | Unset = field(provisional=True)
    """UNSTABLE. This capability is not part of the spec yet, and may be removed or changed at any
    point.

    System-level instructions for the resumed session.

    Optional. Omitted and ``null`` are equivalent. The Agent may then keep a system prompt it stored
    with the session or use its default instructions. Clients MUST only send this when the Agent
    advertises ``sessionCapabilities.systemPrompt``, and SHOULD send the same value they used when
    the session was created.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class CloseSessionRequest:
    """Params of `session/close`: cancel any work and free the session.

    Spec: session-setup.mdx
    """

    session_id: SessionId = field(required=True)
    """The ID of the session to close."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """

