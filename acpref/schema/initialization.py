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
from .session_capabilities import ClientSessionCapabilities, SessionCapabilities
from .subagents import SubagentCapabilities

__all__ = [
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
]


@attrs.frozen(kw_only=True)
class McpCapabilities:
    """MCP transports the agent can connect over besides stdio.

    Spec: initialization.mdx
    """

    http: bool | Unset = field(default_on_error=True)
    """Agent supports ``http`` MCP servers."""
    sse: bool | Unset = field(default_on_error=True)
    """Agent supports ``sse`` MCP servers."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class PromptCapabilities:
    """Content types the agent accepts in prompts beyond text and resource links.

    Spec: initialization.mdx
    """

    image: bool | Unset = field(default_on_error=True)
    """Agent supports ``image`` content blocks."""
    audio: bool | Unset = field(default_on_error=True)
    """Agent supports ``audio`` content blocks."""
    embedded_context: bool | Unset = field(default_on_error=True)
    """Agent supports embedded context in ``session/prompt`` requests.

    When enabled, the Client is allowed to include ``resource`` content blocks in prompt requests
    for pieces of context that are referenced in the message.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AgentCapabilities:
    """What the agent supports beyond the baseline methods.

    Spec: initialization.mdx
    """

    load_session: bool | Unset = field(default_on_error=True)
    """Whether the agent supports ``session/load``."""
    prompt_capabilities: PromptCapabilities | Unset = field(default_on_error=True)
    """Prompt capabilities supported by the agent."""
    mcp_capabilities: McpCapabilities | Unset = field(default_on_error=True)
    """MCP capabilities supported by the agent."""
    session_capabilities: SessionCapabilities | Unset = field(default_on_error=True)
    """Session lifecycle and prompt capabilities advertised by the agent."""
    auth: AgentAuthCapabilities | Unset = field(default_on_error=True)
    """Authentication-related capabilities supported by the agent."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Implementation:
    """Name, optional title, and version of a client or agent implementation.

    Spec: initialization.mdx
    """

    name: str = field(required=True)
    """Intended for programmatic or logical use, but can be used as a display name fallback if title
    isn't present.
    """
    title: str | None | Unset = field(default_on_error=True)
    """Intended for UI and end-user contexts and optimized to be human-readable and easily
    understood.

    If not provided, the name should be used for display.
    """
    version: str = field(required=True)
    """Version of the implementation. Can be displayed to the user or used for debugging or metrics
    purposes. (e.g. "1.0.0").
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class InitializeResponse:
    """Result of `initialize`: the chosen version, the agent's capabilities, auth methods and info.

    Spec: initialization.mdx
    """

    protocol_version: ProtocolVersion = field(required=True, fmt="uint16")
    """The protocol version the client specified if supported by the agent, or the latest protocol
    version supported by the agent.

    The client should disconnect, if it doesn't support this version.
    """
    agent_capabilities: AgentCapabilities | Unset = field(default_on_error=True)
    """Capabilities supported by the agent."""
    # spec SCHEMA-14: omitted authMethods is [] (read so by ClientSideConnection.auth_methods).
    auth_methods: List[AuthMethod] | Unset = field(default_on_error=True, skip_invalid_items=True)
    """Authentication methods supported by the agent."""
    agent_info: Implementation | None | Unset = field(default_on_error=True)
    """Information about the Agent name and version sent to the Client.

    Note: in future versions of the protocol, this will be required.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AuthCapabilities:
    """Authentication flows the client can run.

    Spec: initialization.mdx
    """

    terminal: bool | Unset = field(default_on_error=True)
    """Whether the client supports ``terminal`` authentication methods.

    The client should set this to ``true`` only when it can reproduce the configured agent
    invocation in an interactive terminal. When ``true``, the agent may include ``terminal`` entries
    in its authentication methods.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ElicitationFormCapabilities:
    """Present when the client serves form-mode elicitation.

    Spec: initialization.mdx, elicitation.mdx (Capabilities)
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class ElicitationUrlCapabilities:
    """Present when the client serves URL-mode elicitation.

    Spec: initialization.mdx, elicitation.mdx (Capabilities)
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class ElicitationCapabilities:
    """Elicitation modes the client serves (each: present and non-null means yes).

    Spec: initialization.mdx, elicitation.mdx (Capabilities)
    """

    form: ElicitationFormCapabilities | None | Unset = field(default_on_error=True)
    """Whether the client supports form-based elicitation.

    Optional. Omitted and ``null`` are equivalent and mean form support is not advertised. Supplying
    ``{}`` explicitly advertises form support.
    """
    url: ElicitationUrlCapabilities | None | Unset = field(default_on_error=True)
    """Whether the client supports URL-based elicitation.

    Optional. Omitted or ``null`` both mean the client does not advertise support. Supplying ``{}``
    means the client supports URL-based elicitation.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class FileSystemCapabilities:
    """Which `fs/*` methods the client serves.

    Spec: initialization.mdx
    """

    read_text_file: bool | Unset = field(default_on_error=True)
    """Whether the Client supports ``fs/read_text_file`` requests."""
    write_text_file: bool | Unset = field(default_on_error=True)
    """Whether the Client supports ``fs/write_text_file`` requests."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ClientCapabilities:
    """What the client supports: files, terminals, elicitation, boolean options, terminal auth.

    Spec: initialization.mdx
    """

    fs: FileSystemCapabilities | Unset = field(default_on_error=True)
    """File system capabilities supported by the client. Determines which file operations the agent
    can request.
    """
    terminal: bool | Unset = field(default_on_error=True)
    """Whether the Client support all ``terminal/*`` methods."""
    session: ClientSessionCapabilities | None | Unset = field(default_on_error=True)
    """Session-related capabilities supported by the client.

    Optional. Omitted or ``null`` both mean the client does not advertise any session-related
    extensions.
    """
    auth: AuthCapabilities | Unset = field(default_on_error=True)
    """Authentication capabilities supported by the client. Determines which authentication method
    types the agent may include in its ``InitializeResponse``.
    """
    elicitation: ElicitationCapabilities | None | Unset = field(default_on_error=True)
    """Elicitation capabilities supported by the client. Determines which elicitation modes the
    agent may use.

    Optional. Omitted or ``null`` both mean the client does not advertise elicitation support.
    """
    # spec PLANOP-01 (provisional): {} opts in to plan_update and plan_removed.
    plan: PlanCapabilities | None | Unset = field(default_on_error=True, provisional=True)
    """UNSTABLE. This capability is not part of the spec yet, and may be removed or changed at any
    point.

    Whether the client supports ``plan_update`` and ``plan_removed`` session updates.

    Optional. Omitted or ``null`` both mean the client does not advertise support. Supplying ``{}``
    means the client can receive both update types.
    """
    # spec SUBAGENT-01 (provisional): {} opts in to subagent sessions and session messages.
    subagents: SubagentCapabilities | None | Unset = field(default_on_error=True, provisional=True)
    """UNSTABLE. This capability is not part of the spec yet, and may be removed or changed at any
    point.

    Whether the client understands exposed subagent sessions.

    Optional and nullable. Omitted or ``null`` both mean the client does not advertise support.
    Supplying ``{}`` means the client understands child associations, work-state snapshots,
    session-directed messages, and restricted-session semantics.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class InitializeRequest:
    """Params of `initialize`: the client's newest protocol version, capabilities and info.

    Spec: initialization.mdx
    """

    # spec SCHEMA-12: an integer 0..65535 (uint16); ACP v1 is 1.
    protocol_version: ProtocolVersion = field(required=True, fmt="uint16")
    """The latest protocol version supported by the client."""
    client_capabilities: ClientCapabilities | Unset = field(default_on_error=True)
    """Capabilities supported by the client."""
    client_info: Implementation | None | Unset = field(default_on_error=True)
    """Information about the Client name and version sent to the Agent.

    Note: in future versions of the protocol, this will be required.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
