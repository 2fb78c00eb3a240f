"""The agent side's MCP client: connect to the MCP servers a client names in ``mcpServers``.

Spec: session-setup.mdx, MCP Servers (SETUP-29 .. SETUP-36); the Model Context Protocol,
revision 2025-06-18 (lifecycle, tools, stdio and streamable HTTP transports). How acpref
realises it, and every decision where the spec is silent: spec_notes/mcp.md.

One session's servers, in five steps::

    from acpref.mcp import McpFailure, McpLimits, McpManager, notices_for

    manager = McpManager(limits=McpLimits())     # what one server may make the agent hold
    outcomes = manager.connect(params.mcp_servers, http_allowed=True, sse_allowed=False,
                               timeout=30.0, cwd=params.cwd)  # 1. all at once, one deadline
    failed = [o for o in outcomes if isinstance(o, McpFailure)]       # 2. tell the user
    for title, text in notices_for(outcomes): ...                     #    (and of lists cut)
    for server_name, tool in manager.tools():                         # 3. what there is
        ...
    result = manager.call("time", "get_current_time", {"timezone": "UTC"}, timeout=30.0)
    manager.close()                                                   # 5. no process left

Modules: ``_model`` (constants, limits, tools, results, failures, errors), ``_secrets`` (what
is never logged), ``_sse`` (event-stream framing), ``_stdio`` (spawned servers, on acpref's own
``Connection``), ``_http`` (streamable HTTP on ``http.client``), ``_client`` (one server: the
handshake and tools), ``_manager`` (a session's servers).

No MCP SDK is used: MCP over stdio is the newline-delimited JSON-RPC 2.0 that ACP speaks. What
must not live here: ACP wire I/O; the agent decides what to tell the client.
"""

from ._client import McpServerConnection
from ._manager import ConnectOutcome, McpManager, notices_for
from ._model import (
    MCP_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    McpError,
    McpFailure,
    McpLimits,
    McpServerEntry,
    McpTimeout,
    McpTool,
    McpTooLarge,
    McpToolResult,
)

__all__ = [
    "McpManager",
    "notices_for",
    "McpServerConnection",
    "McpServerEntry",
    "ConnectOutcome",
    "McpFailure",
    "McpLimits",
    "McpTool",
    "McpToolResult",
    "McpError",
    "McpTimeout",
    "McpTooLarge",
    "MCP_PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
]
