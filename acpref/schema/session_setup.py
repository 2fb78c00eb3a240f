"""Session setup: ``session/new``, ``session/load``, ``session/resume``, ``session/close``, MCP servers.

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
    value: str = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class NewSessionResponse:
    """Result of `session/new`: the new session id and its initial modes and options.

    Spec: session-setup.mdx
    """

    session_id: SessionId = field(required=True)
    modes: SessionModeState | None | Unset = field(default_on_error=True)
    config_options: List[SessionConfigOption] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class LoadSessionResponse:
    """Result of `session/load`, sent after the whole replay.

    Spec: session-setup.mdx
    """

    modes: SessionModeState | None | Unset = field(default_on_error=True)
    config_options: List[SessionConfigOption] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ResumeSessionResponse:
    """Result of `session/resume`.

    Spec: session-setup.mdx
    """

    modes: SessionModeState | None | Unset = field(default_on_error=True)
    config_options: List[SessionConfigOption] | None | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class CloseSessionResponse:
    """Result of `session/close`.

    Spec: session-setup.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class HttpHeader:
    """An HTTP header sent to an MCP server.

    Spec: session-setup.mdx
    """

    name: str = field(required=True)
    value: str = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class McpServerHttp:
    """An MCP server reached over streamable HTTP.

    Spec: session-setup.mdx
    """

    type: ClassVar[str] = "http"

    # spec SETUP-33: type "http", name, url and headers (an array of {name, value}), required.
    name: str = field(required=True)
    url: str = field(required=True)
    # spec SCHEMA-18, SCHEMA-19: null reads as [], an omitted key is still an error.
    headers: List[HttpHeader] = field(required=True, default_on_null=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class McpServerSse:
    """An MCP server reached over SSE (deprecated by MCP).

    Spec: session-setup.mdx
    """

    type: ClassVar[str] = "sse"

    # spec SETUP-34: type "sse", name, url and headers (an array of {name, value}), required.
    name: str = field(required=True)
    url: str = field(required=True)
    # spec SCHEMA-18, SCHEMA-19: null reads as [], an omitted key is still an error.
    headers: List[HttpHeader] = field(required=True, default_on_null=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class McpServerStdio:
    """An MCP server the agent spawns and talks to over stdio.

    Spec: session-setup.mdx
    """

    # spec SETUP-32: name, command (absolute: the rules check it), args and env, required.
    name: str = field(required=True)
    command: str = field(required=True)
    # spec SCHEMA-18, SCHEMA-19: null reads as [], an omitted key is still an error.
    args: List[str] = field(required=True, default_on_null=True)
    # spec-gap stdio-env: env is required, as in the schema ([] when empty).
    env: List[EnvVariable] = field(required=True, default_on_null=True)
    meta: Meta | Unset = field(default_on_error=True)


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
    additional_directories: List[str] | Unset = field(default_on_null=True)
    # spec SCHEMA-18 .. SCHEMA-21: null reads as []; omitted, or one malformed server, is -32602.
    mcp_servers: List[McpServer] = field(required=True, default_on_null=True)
    # spec SYSPROMPT-02 (provisional): only if the agent advertised the systemPrompt capability.
    system_prompt: SystemPrompt | None | Unset = field(provisional=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class LoadSessionRequest:
    """Params of `session/load`: reopen a session; the agent replays its history first.

    Spec: session-setup.mdx
    """

    # spec SCHEMA-18 .. SCHEMA-21: null reads as []; omitted, or one malformed server, is -32602.
    mcp_servers: List[McpServer] = field(required=True, default_on_null=True)
    cwd: str = field(required=True)
    additional_directories: List[str] | Unset = field(default_on_null=True)
    session_id: SessionId = field(required=True)
    # spec SYSPROMPT-02 (provisional): only if the agent advertised the systemPrompt capability.
    system_prompt: SystemPrompt | None | Unset = field(provisional=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ResumeSessionRequest:
    """Params of `session/resume`: reopen a session without replay.

    Spec: session-setup.mdx
    """

    session_id: SessionId = field(required=True)
    cwd: str = field(required=True)
    additional_directories: List[str] | Unset = field(default_on_null=True)
    mcp_servers: List[McpServer] | Unset = field(default_on_null=True)
    # spec SYSPROMPT-02 (provisional): only if the agent advertised the systemPrompt capability.
    system_prompt: SystemPrompt | None | Unset = field(provisional=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class CloseSessionRequest:
    """Params of `session/close`: cancel any work and free the session.

    Spec: session-setup.mdx
    """

    session_id: SessionId = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)
