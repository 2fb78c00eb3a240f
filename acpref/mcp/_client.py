"""One MCP server, connected: the ``initialize`` handshake, its tools, and calls to them.

Spec: MCP 2025-06-18, Lifecycle (``initialize``, ``notifications/initialized``, version
negotiation), Server Features / Tools (``tools/list`` with pagination, ``tools/call``),
Utilities (cancellation with ``notifications/cancelled``, ``ping``). ACP: session-setup.mdx,
MCP Servers (SETUP-30, SETUP-31, SETUP-32 .. SETUP-34).

``McpServerConnection.open`` reaches one server named in ``mcpServers`` over its channel (stdio
or streamable HTTP), runs the handshake and lists the tools, all within one timeout, and stops
the server again if any of it fails. The channel is what differs between transports: it sends
raw JSON-RPC requests and notifications and knows how to end; everything MCP says about the
conversation lives here, once.

What must not live here: spawning, HTTP, process groups (``_stdio``, ``_http``); several servers
at once (``_manager``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Protocol, Tuple

from .. import __version__
from ..schema import McpServerHttp, McpServerSse, McpServerStdio
from ._http import HttpChannel
from ._model import (
    MCP_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    McpError,
    McpServerEntry,
    McpTimeout,
    McpTool,
    McpToolResult,
)
from ._secrets import Redactor
from ._stdio import StdioChannel

__all__ = ["McpServerConnection", "transport_of", "secrets_of"]

log = logging.getLogger("acpref.mcp")

#: Sent as ``clientInfo`` in ``initialize``.
CLIENT_INFO = {"name": "acpref", "version": __version__}
#: Bound on ``tools/list`` pages, against a server whose cursors never end.
_MAX_TOOL_PAGES = 100
#: The shutdown ladder for a server that failed to connect: it is not worth waiting for.
_QUICK_CLOSE = {"grace": 0.5, "term_grace": 1.0, "kill_wait": 2.0}


class _Channel(Protocol):
    """What a transport gives ``McpServerConnection``: raw JSON-RPC, and an end."""

    @property
    def pid(self) -> Optional[int]: ...

    @property
    def alive(self) -> bool: ...

    def set_protocol_version(self, version: str) -> None: ...

    def request(self, method: str, params: Any, timeout: float) -> Any: ...

    def notify(self, method: str, params: Any, timeout: float = 5.0) -> None: ...

    def close(
        self, *, grace: float = 2.0, term_grace: float = 2.0, kill_wait: float = 2.0
    ) -> Any: ...


def transport_of(server: Any) -> str:
    """``"stdio"``, ``"http"`` or ``"sse"``: how an ``mcpServers`` entry is reached."""
    if isinstance(server, McpServerHttp):
        return "http"
    if isinstance(server, McpServerSse):
        return "sse"
    return "stdio"


def secrets_of(server: Any) -> Iterable[str]:
    """The values that must never be logged: ``env`` values, header values."""
    if isinstance(server, McpServerStdio):
        return [v.value for v in server.env]
    return [h.value for h in getattr(server, "headers", [])]


class McpServerConnection:
    """A connected MCP server: what it said about itself, its tools, and calls to them."""

    def __init__(self, name: str, transport: str, channel: _Channel) -> None:
        #: The ``name`` the client gave the server in ``mcpServers``.
        self.name = name
        #: ``"stdio"`` or ``"http"``.
        self.transport = transport
        self._channel = channel
        #: The MCP revision agreed in ``initialize``.
        self.protocol_version: str = ""
        #: The server's ``serverInfo`` (name, version...) and ``capabilities``, as sent.
        self.server_info: Dict[str, Any] = {}
        self.capabilities: Dict[str, Any] = {}
        #: The server's ``instructions`` for the model, if it gave any.
        self.instructions: Optional[str] = None
        self._tools: Tuple[McpTool, ...] = ()
        self._close_lock = threading.Lock()  # guards _closed
        self._closed = False

    def __repr__(self) -> str:
        state = "live" if self.alive else "closed"
        return (
            f"<McpServerConnection {self.name!r} {self.transport} {len(self._tools)} tools {state}>"
        )

    # -- opening ---------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        server: McpServerEntry,
        *,
        timeout: float,
        cwd: Optional[str] = None,
        base_env: Optional[Mapping[str, str]] = None,
    ) -> "McpServerConnection":
        """Connect to one ``mcpServers`` entry: start it, shake hands, list its tools.

        Everything happens within ``timeout`` seconds (stopping a server that failed adds at
        most a few more); any failure raises ``McpError`` with the reason, and leaves no
        process behind. SSE servers raise at once: acpref does not support that transport.
        """
        deadline = time.monotonic() + timeout
        transport = transport_of(server)
        label = f"mcp:{server.name}"
        redact = Redactor(secrets_of(server))
        channel: _Channel
        if isinstance(server, McpServerSse):
            raise McpError(
                "the SSE transport (deprecated by MCP) is not supported by acpref; use HTTP"
            )
        if isinstance(server, McpServerHttp):
            channel = HttpChannel(server, label=label, redact=redact)
        elif isinstance(server, McpServerStdio):
            channel = StdioChannel.start(
                server,
                label=label,
                base_env=os.environ if base_env is None else base_env,
                cwd=cwd,
                redact=redact,
            )
        else:
            raise McpError(f"unknown kind of MCP server: {type(server).__name__}")
        connection = cls(server.name, transport, channel)
        try:
            connection._initialize(deadline)
            connection.list_tools(max(0.0, deadline - time.monotonic()))
        except BaseException:
            connection.close(**_QUICK_CLOSE)
            raise
        return connection

    def _initialize(self, deadline: float) -> None:
        """MCP lifecycle: ``initialize``, check the version, then ``notifications/initialized``."""
        params = {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        }
        result = self._request("initialize", params, deadline - time.monotonic())
        if not isinstance(result, dict):
            raise McpError("initialize answered something other than an object")
        version = result.get("protocolVersion")
        # spec-gap mcp-version: an older revision with the same tools methods is accepted;
        # anything else is refused (MCP: the client should then disconnect).
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise McpError(
                f"the server answered MCP version {version!r}; acpref speaks "
                f"{', '.join(SUPPORTED_PROTOCOL_VERSIONS)}"
            )
        self.protocol_version = version
        self.capabilities = _object(result.get("capabilities"))
        self.server_info = _object(result.get("serverInfo"))
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self._channel.set_protocol_version(version)
        self._channel.notify(
            "notifications/initialized", {}, timeout=max(0.1, min(5.0, deadline - time.monotonic()))
        )

    # -- what callers see -------------------------------------------------------------------------

    @property
    def tools(self) -> Tuple[McpTool, ...]:
        """The tools as last listed."""
        return self._tools

    @property
    def pid(self) -> Optional[int]:
        """The server's process (and process group) id; None for an HTTP server."""
        return self._channel.pid

    @property
    def alive(self) -> bool:
        """False once the server stopped, broke the connection, or was closed."""
        return not self._closed and self._channel.alive

    def list_tools(self, timeout: float) -> Tuple[McpTool, ...]:
        """List the server's tools again, following ``nextCursor`` (all within ``timeout``).

        A server that did not declare the ``tools`` capability has none and is not asked.
        """
        if "tools" not in self.capabilities:
            self._tools = ()
            return self._tools
        deadline = time.monotonic() + timeout
        tools: List[McpTool] = []
        seen = set()
        cursor: Optional[str] = None
        for _ in range(_MAX_TOOL_PAGES):
            params = {} if cursor is None else {"cursor": cursor}
            result = self._request("tools/list", params, deadline - time.monotonic())
            if not isinstance(result, dict) or not isinstance(result.get("tools", []), list):
                raise McpError("tools/list answered something other than a list of tools")
            for tool in filter(None, map(McpTool.from_wire, result.get("tools", []))):
                if tool.name in seen:
                    log.warning(
                        "mcp:%s: tool %r listed twice; the first one is kept", self.name, tool.name
                    )
                    continue
                seen.add(tool.name)
                tools.append(tool)
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                break
            cursor = next_cursor
        else:
            log.warning(
                "mcp:%s: tools/list still had pages after %d; stopped there",
                self.name,
                _MAX_TOOL_PAGES,
            )
        self._tools = tuple(tools)
        return self._tools

    def call_tool(
        self, tool: str, arguments: Optional[Mapping[str, Any]] = None, *, timeout: float
    ) -> McpToolResult:
        """Call ``tool`` with ``arguments``; wait up to ``timeout`` seconds for the result.

        A tool that failed comes back with ``is_error`` set (MCP: tool errors are results);
        a call that could not be made or answered raises ``McpError``.
        """
        params = {"name": tool, "arguments": dict(arguments or {})}
        return McpToolResult.from_wire(self._request("tools/call", params, timeout))

    def ping(self, timeout: float) -> None:
        """MCP ``ping``: raises ``McpError`` unless the server answers within ``timeout``."""
        self._request("ping", {}, timeout)

    def close(self, *, grace: float = 2.0, term_grace: float = 2.0, kill_wait: float = 2.0) -> None:
        """Stop the server (stdio: the whole process group) or end its HTTP session; idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._channel.close(grace=grace, term_grace=term_grace, kill_wait=kill_wait)

    # -- requests --------------------------------------------------------------------------------

    def _request(self, method: str, params: Any, timeout: float) -> Any:
        if self._closed:
            raise McpError(f"{method}: the connection to MCP server {self.name!r} is closed")
        if timeout <= 0:
            raise McpTimeout(f"{method}: no time left to ask")
        try:
            return self._channel.request(method, params, timeout)
        except McpTimeout as exc:
            # MCP cancellation: tell the server we gave up (never for initialize, which MCP
            # says must not be cancelled), so that it can stop the work. Best effort.
            if method != "initialize" and exc.request_id is not None:
                try:
                    self._channel.notify(
                        "notifications/cancelled",
                        {"requestId": exc.request_id, "reason": "timed out"},
                        timeout=2.0,
                    )
                except McpError:
                    pass
            raise


def _object(value: Any) -> Dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (lenient with what servers send)."""
    return value if isinstance(value, dict) else {}
