"""The identifier types of every page, gathered here so that pages can share them.

Spec: schema.json. Each is a plain ``str`` (or ``int``) on the wire and opaque to the side that
did not mint it; the comment on each names the page that defines it.
"""

from typing import Union

__all__ = [
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
]


#: A JSON-RPC request id: an integer, a string, or (discouraged, spec RPC-03) ``null``.
#: Spec: overview.mdx; RPC-02, RPC-04.
RequestId = Union[int, str, None]


#: Opaque id of one conversation session, chosen by the agent. Spec: session-setup.mdx
SessionId = str


#: Id of a tool call, unique within its session. Spec: tool-calls.mdx
ToolCallId = str


#: Id of a client terminal, returned by terminal/create. Spec: terminals.mdx
TerminalId = str


#: Id of one option offered in a permission request. Spec: tool-calls.mdx
PermissionOptionId = str


#: Id of a URL-mode elicitation, unique among those outstanding on a connection.
#: Spec: elicitation.mdx
ElicitationId = str


#: The major protocol version, an integer from 0 to 65535 (ACP v1 is 1). Spec: initialization.mdx
ProtocolVersion = int


#: Id of an advertised authentication method. Spec: authentication.mdx
AuthMethodId = str


#: Id of a session mode. Spec: session-modes.mdx
SessionModeId = str


#: Id of a session config option. Spec: session-config-options.mdx
SessionConfigId = str


#: Id of one value of a select config option. Spec: session-config-options.mdx
SessionConfigValueId = str


#: Id of a group of select values. Spec: session-config-options.mdx
SessionConfigGroupId = str


#: Opaque id shared by the chunks of one message. Spec: prompt-turn.mdx
MessageId = str


#: Unique identifier for a context compaction within a session, chosen by the agent and never
#: reused for another compaction (spec COMPACT-04). Spec: session-compaction.md
CompactionId = str
