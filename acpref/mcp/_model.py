"""What an MCP client deals in: protocol constants, tools, tool results, failures, errors.

Spec: the Model Context Protocol (modelcontextprotocol.io), revision 2025-06-18: lifecycle
(``initialize``), tools (``tools/list``, ``tools/call``), utilities (``ping``, cancellation).
ACP only says which servers to reach (session-setup.mdx, MCP Servers; SETUP-29 .. SETUP-36).

Plain values built from wire JSON, leniently: a server's extra fields are kept in ``raw``, and a
malformed tool is skipped rather than failing the whole server. ``McpLimits`` says what one
server may make acpref hold, and ``decoded_size`` counts it. Nothing here
does I/O or knows about threads or transports.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import attrs

from ..schema import McpServerHttp, McpServerSse, McpServerStdio

__all__ = [
    "MCP_PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "McpServerEntry",
    "McpError",
    "McpTimeout",
    "McpTooLarge",
    "McpLimits",
    "McpFailure",
    "McpTool",
    "McpToolResult",
    "server_request_answer",
    "decoded_size",
]

#: The MCP revision acpref offers in ``initialize``.
MCP_PROTOCOL_VERSION = "2025-06-18"

#: Revisions acpref accepts when the server answers another one: the tools methods it uses
#: (``tools/list`` with cursors, ``tools/call`` with ``content`` and ``isError``) are the same in
#: all three. A server answering anything else is refused (MCP lifecycle: the client SHOULD
#: disconnect when it does not support the server's version).
SUPPORTED_PROTOCOL_VERSIONS: Tuple[str, ...] = ("2025-06-18", "2025-03-26", "2024-11-05")


#: One ``mcpServers`` entry (``acpref.schema.McpServer``, spelled out for type checkers).
McpServerEntry = Union[McpServerHttp, McpServerSse, McpServerStdio]


class McpError(Exception):
    """An MCP server could not be reached, or did not answer as MCP says.

    ``reason`` is a sentence for people (never holding an ``env`` or header value); ``code`` is
    the JSON-RPC error code when the server answered with an error; ``clause`` names the ACP
    clause that refused the server, when one did (``"SETUP-35"``).
    """

    def __init__(
        self, reason: str, *, code: Optional[int] = None, clause: Optional[str] = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.clause = clause


class McpTimeout(McpError):
    """No answer within the caller's timeout. ``request_id`` is the unanswered request's id."""

    def __init__(self, reason: str, *, request_id: Any = None) -> None:
        super().__init__(reason)
        self.request_id = request_id


class McpTooLarge(McpError):
    """A message from the server was over a bound of ``McpLimits``; nothing of it was kept."""


_MiB = 1024 * 1024


@attrs.frozen(kw_only=True)
class McpLimits:
    """What one MCP server may make acpref hold: spec-gap mcp-bounds (spec_notes/mcp.md).

    MCP sets no bound on a server's messages nor on its list of tools, so a server could make
    the agent hold anything it sends. Each server of a session has these bounds of its own.
    """

    #: One message from the server, as it came: a stdio line, an HTTP body, one event of a
    #: stream. It bounds a ``tools/list`` page and a ``tools/call`` result alike.
    max_message_bytes: int = 16 * _MiB
    #: The JSON values of one message, counted before it is decoded
    #: (``acpref._bounds.count_items``): what a message may cost once decoded.
    max_message_items: int = 250_000
    #: Tools kept from ``tools/list``, all pages together.
    max_tools: int = 1000
    #: What the kept tools cost decoded, all pages together (``decoded_size``).
    max_tool_bytes: int = 8 * _MiB
    #: ``tools/list`` pages asked for.
    max_tool_pages: int = 100


@attrs.frozen
class McpFailure:
    """A server named in ``mcpServers`` that acpref did not (or no longer) connect to.

    ``transport`` is ``"stdio"``, ``"http"`` or ``"sse"``; ``clause`` is set when an ACP
    clause refused the server (``"SETUP-35"``: a transport the agent did not advertise).
    """

    name: str
    transport: str
    reason: str
    clause: Optional[str] = None

    def __str__(self) -> str:
        cited = f" [spec {self.clause}]" if self.clause else ""
        return f"MCP server {self.name!r} ({self.transport}): {self.reason}{cited}"


@attrs.frozen
class McpTool:
    """One tool a server offers (MCP ``Tool``): its name, description and input JSON Schema."""

    name: str
    description: Optional[str] = None
    title: Optional[str] = None
    input_schema: Dict[str, Any] = attrs.field(factory=dict)
    #: The tool as the server sent it (annotations, outputSchema, _meta...).
    raw: Dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @classmethod
    def from_wire(cls, data: Any) -> Optional["McpTool"]:
        """The tool, or None when ``data`` has no string ``name`` (the caller counts those)."""
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return None
        description = data.get("description")
        title = data.get("title")
        schema = data.get("inputSchema")
        return cls(
            name=data["name"],
            description=description if isinstance(description, str) else None,
            title=title if isinstance(title, str) else None,
            input_schema=schema if isinstance(schema, dict) else {},
            raw=data,
        )


@attrs.frozen
class McpToolResult:
    """What ``tools/call`` answered (MCP ``CallToolResult``).

    ``is_error`` is the *tool's* failure (MCP: reported in the result so that the model sees
    it); a failure to call the tool at all raises ``McpError`` instead.
    """

    content: List[Dict[str, Any]] = attrs.field(factory=list)
    is_error: bool = False
    #: ``structuredContent``, or None when the server sent none.
    structured_content: Any = None
    raw: Dict[str, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @classmethod
    def from_wire(cls, data: Any) -> "McpToolResult":
        if not isinstance(data, dict):
            raise McpError(f"tools/call answered {type(data).__name__}, not an object")
        content = data.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        return cls(
            content=blocks,
            is_error=data.get("isError") is True,
            structured_content=data.get("structuredContent"),
            raw=data,
        )

    def text(self) -> str:
        """The text blocks joined by newlines; other blocks are named by their type."""
        parts = []
        for block in self.content:
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                parts.append(f"[{block.get('type', 'unknown')} content]")
        return "\n".join(parts)


def decoded_size(value: Any) -> int:
    """What a decoded JSON value holds in memory, in bytes: ``sys.getsizeof`` of each object in
    it. An object that appears in several places (a key ``json.loads`` shared, a small integer)
    is counted at each: the figure is never below the truth.
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total


def server_request_answer(method: str, params: Any) -> Mapping[str, Any]:
    """The answer to a request a *server* sends us: ``{"result": ...}`` or ``{"error": ...}``.

    acpref declares no client capabilities (no roots, sampling or elicitation), so it answers
    ``ping`` (MCP utilities: ``{}`` promptly) and refuses everything else with -32601.
    """
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}
