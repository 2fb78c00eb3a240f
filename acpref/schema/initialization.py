"""``initialize``: protocol version negotiation and capability exchange.

Spec: initialization.mdx; clauses INIT-01 .. INIT-21, SCHEMA-12 .. SCHEMA-14. Every capability is
optional and an omitted one means "unsupported" (INIT-11). The models keep exactly what was sent
(an absent flag is ``UNSET``); ``acpref._core.capabilities`` reads them with the schema's
defaults, in one place.
"""

from typing import List

import attrs

from ._base import Meta, Unset, field
from .authentication import AgentAuthCapabilities, AuthMethod
from .identifiers import ProtocolVersion
from .plan_operations import PlanCapabilities
from .session_compaction import CompactionCapabilities
from .session_notices import NoticeCapabilities
from .subagents import SubagentCapabilities
from .system_prompt import SessionSystemPromptCapabilities

__all__ = [
    "McpCapabilities",
    "PromptCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCloseCapabilities",
    "SessionDeleteCapabilities",
    "SessionListCapabilities",
    "SessionResumeCapabilities",
    "SessionCapabilities",
    "AgentCapabilities",
    "Implementation",
    "InitializeResponse",
    "AuthCapabilities",
    "BooleanConfigOptionCapabilities",
    "SessionConfigOptionsCapabilities",
    "ClientSessionCapabilities",
    "ElicitationFormCapabilities",
    "ElicitationUrlCapabilities",
    "ElicitationCapabilities",
    "FileSystemCapabilities",
    "ClientCapabilities",
    "InitializeRequest",
]


@attrs.frozen(kw_only=True)
class McpCapabilities:
    """MCP transports the agent can connect over besides stdio.

    Spec: initialization.mdx
    """

    http: bool | Unset = field(default_on_error=True)
    sse: bool | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class PromptCapabilities:
    """Content types the agent accepts in prompts beyond text and resource links.

    Spec: initialization.mdx
    """

    image: bool | Unset = field(default_on_error=True)
    audio: bool | Unset = field(default_on_error=True)
    embedded_context: bool | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionAdditionalDirectoriesCapabilities:
    """Present when the agent accepts `additionalDirectories`.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionCloseCapabilities:
    """Present when the agent supports `session/close`.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionDeleteCapabilities:
    """Present when the agent supports `session/delete`.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionListCapabilities:
    """Present when the agent supports `session/list`.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionResumeCapabilities:
    """Present when the agent supports `session/resume`.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionCapabilities:
    """Optional session methods the agent supports (each: an object means yes).

    Spec: initialization.mdx
    """

    list: SessionListCapabilities | None | Unset = field(default_on_error=True)
    delete: SessionDeleteCapabilities | None | Unset = field(default_on_error=True)
    additional_directories: SessionAdditionalDirectoriesCapabilities | None | Unset = field(
        default_on_error=True
    )
    resume: SessionResumeCapabilities | None | Unset = field(default_on_error=True)
    close: SessionCloseCapabilities | None | Unset = field(default_on_error=True)
    # spec SYSPROMPT-01 (provisional): {} is append mode; mode.override: {} adds override.
    system_prompt: SessionSystemPromptCapabilities | None | Unset = field(
        default_on_error=True, provisional=True
    )
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class AgentCapabilities:
    """What the agent supports beyond the baseline methods.

    Spec: initialization.mdx
    """

    load_session: bool | Unset = field(default_on_error=True)
    prompt_capabilities: PromptCapabilities | Unset = field(default_on_error=True)
    mcp_capabilities: McpCapabilities | Unset = field(default_on_error=True)
    session_capabilities: SessionCapabilities | Unset = field(default_on_error=True)
    auth: AgentAuthCapabilities | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class Implementation:
    """Name, optional title, and version of a client or agent implementation.

    Spec: initialization.mdx
    """

    name: str = field(required=True)
    title: str | None | Unset = field(default_on_error=True)
    version: str = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class InitializeResponse:
    """Result of `initialize`: the chosen version, the agent's capabilities, auth methods and info.

    Spec: initialization.mdx
    """

    protocol_version: ProtocolVersion = field(required=True, fmt="uint16")
    agent_capabilities: AgentCapabilities | Unset = field(default_on_error=True)
    # spec SCHEMA-14: omitted authMethods is [] (read so by ClientSideConnection.auth_methods).
    auth_methods: List[AuthMethod] | Unset = field(default_on_error=True, skip_invalid_items=True)
    agent_info: Implementation | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class AuthCapabilities:
    """Authentication flows the client can run.

    Spec: initialization.mdx
    """

    terminal: bool | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class BooleanConfigOptionCapabilities:
    """Present when the client supports boolean config options.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionConfigOptionsCapabilities:
    """Config option kinds the client supports beyond select.

    Spec: initialization.mdx
    """

    boolean: BooleanConfigOptionCapabilities | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ClientSessionCapabilities:
    """Session-related client capabilities.

    Spec: initialization.mdx
    """

    config_options: SessionConfigOptionsCapabilities | None | Unset = field(default_on_error=True)
    # spec NOTICE-01: {} advertises live `notice` updates; omitted or null, it is not advertised.
    notices: NoticeCapabilities | None | Unset = field(default_on_error=True)
    # spec COMPACT-01: {} advertises the whole compaction contract; omitted or null, unsupported.
    compaction: CompactionCapabilities | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ElicitationFormCapabilities:
    """Present when the client serves form-mode elicitation.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ElicitationUrlCapabilities:
    """Present when the client serves URL-mode elicitation.

    Spec: initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ElicitationCapabilities:
    """Elicitation modes the client serves (each: present and non-null means yes).

    Spec: initialization.mdx
    """

    form: ElicitationFormCapabilities | None | Unset = field(default_on_error=True)
    url: ElicitationUrlCapabilities | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class FileSystemCapabilities:
    """Which `fs/*` methods the client serves.

    Spec: initialization.mdx
    """

    read_text_file: bool | Unset = field(default_on_error=True)
    write_text_file: bool | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ClientCapabilities:
    """What the client supports: files, terminals, elicitation, boolean options, terminal auth.

    Spec: initialization.mdx
    """

    fs: FileSystemCapabilities | Unset = field(default_on_error=True)
    terminal: bool | Unset = field(default_on_error=True)
    session: ClientSessionCapabilities | None | Unset = field(default_on_error=True)
    auth: AuthCapabilities | Unset = field(default_on_error=True)
    elicitation: ElicitationCapabilities | None | Unset = field(default_on_error=True)
    # spec PLANOP-01 (provisional): {} opts in to plan_update and plan_removed.
    plan: PlanCapabilities | None | Unset = field(default_on_error=True, provisional=True)
    # spec SUBAGENT-01 (provisional): {} opts in to subagent sessions and session messages.
    subagents: SubagentCapabilities | None | Unset = field(default_on_error=True, provisional=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class InitializeRequest:
    """Params of `initialize`: the client's newest protocol version, capabilities and info.

    Spec: initialization.mdx
    """

    # spec SCHEMA-12: an integer 0..65535 (uint16); ACP v1 is 1.
    protocol_version: ProtocolVersion = field(required=True, fmt="uint16")
    client_capabilities: ClientCapabilities | Unset = field(default_on_error=True)
    client_info: Implementation | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)
