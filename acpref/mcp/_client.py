"""One MCP server, connected: the ``initialize`` handshake, its tools, and calls to them.

Spec: MCP 2025-06-18, Lifecycle (``initialize``, ``notifications/initialized``, version
negotiation), Server Features / Tools (``tools/list`` with pagination, ``tools/call``),
Utilities (cancellation with ``notifications/cancelled``, ``ping``). ACP: session-setup.mdx,
MCP Servers (SETUP-30, SETUP-31, SETUP-32 .. SETUP-34).

``McpServerConnection.open`` reaches one server named in ``mcpServers`` over its channel (stdio
or streamable HTTP), runs the handshake and lists the tools, all within one timeout, and stops
the server again if any of it fails (``start`` and ``handshake`` are its two halves, for a
caller that must be able to stop the server while it starts). What a server may make it keep
is bounded by ``McpLimits``: a list of tools cut at a bound is kept, and says why. The channel
is what differs between transports: it sends raw JSON-RPC requests and notifications and knows
how to end; everything MCP says about the conversation lives here, once.

What must not live here: spawning, HTTP, process groups (``_stdio``, ``_http``); several servers
at once (``_manager``).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Protocol, Set, Tuple

from .. import __version__
from ..schema import McpServerHttp, McpServerSse, McpServerStdio
from ._http import HttpChannel
from ._model import (
    MCP_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    McpError,
    McpLimits,
    McpServerEntry,
    McpTimeout,
    McpTool,
    McpTooLarge,
    McpToolResult,
    decoded_size,
)
from ._secrets import Redactor
from ._stdio import StdioChannel

__all__ = ["McpServerConnection", "transport_of", "secrets_of", "QUICK_CLOSE"]

log = logging.getLogger("acpref.mcp")

#: Sent as ``clientInfo`` in ``initialize``.
CLIENT_INFO = {"name": "acpref", "version": __version__}
#: The shutdown ladder for a server that failed to connect: it is not worth waiting for.
QUICK_CLOSE = {"grace": 0.5, "term_grace": 1.0, "kill_wait": 2.0}


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

    def __init__(
        self, name: str, transport: str, channel: _Channel, limits: McpLimits = McpLimits()
    ) -> None:
        #: The ``name`` the client gave the server in ``mcpServers``.
        self.name = name
        #: ``"stdio"`` or ``"http"``.
        self.transport = transport
        self._channel = channel
        self._limits = limits
        #: The MCP revision agreed in ``initialize``.
        self.protocol_version: str = ""
        #: The server's ``serverInfo`` (name, version...) and ``capabilities``, as sent.
        self.server_info: Dict[str, Any] = {}
        self.capabilities: Dict[str, Any] = {}
        #: The server's ``instructions`` for the model, if it gave any.
        self.instructions: Optional[str] = None
        self._tools: Tuple[McpTool, ...] = ()
        #: Why the tools as last listed are not the server's whole list (the bound that stopped
        #: the listing, and how many tools were kept), or None.
        self.tools_cut: Optional[str] = None
        #: The method of the last request sent that got no answer (``"initialize"``...), if any.
        self.waiting_for: Optional[str] = None
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
        limits: McpLimits = McpLimits(),
    ) -> "McpServerConnection":
        """Connect to one ``mcpServers`` entry: start it, shake hands, list its tools.

        Everything happens within ``timeout`` seconds (stopping a server that failed adds at
        most a few more); any failure raises ``McpError`` with the reason, and leaves no
        process behind. SSE servers raise at once: acpref does not support that transport.
        """
        deadline = time.monotonic() + timeout
        connection = cls.start(server, cwd=cwd, base_env=base_env, limits=limits)
        connection.handshake(deadline)
        return connection

    @classmethod
    def start(
        cls,
        server: McpServerEntry,
        *,
        cwd: Optional[str] = None,
        base_env: Optional[Mapping[str, str]] = None,
        limits: McpLimits = McpLimits(),
    ) -> "McpServerConnection":
        """The server started (a stdio one spawned), not yet spoken to: ``handshake`` next."""
        transport = transport_of(server)
        label = f"mcp:{server.name}"
        redact = Redactor(secrets_of(server))
        channel: _Channel
        if isinstance(server, McpServerSse):
            raise McpError(
                "the SSE transport (deprecated by MCP) is not supported by acpref; use HTTP"
            )
        if isinstance(server, McpServerHttp):
            channel = HttpChannel(server, label=label, redact=redact, limits=limits)
        elif isinstance(server, McpServerStdio):
            channel = StdioChannel.start(
                server,
                label=label,
                base_env=os.environ if base_env is None else base_env,
                cwd=cwd,
                redact=redact,
                limits=limits,
            )
        else:
            raise McpError(f"unknown kind of MCP server: {type(server).__name__}")
        return cls(server.name, transport, channel, limits)

    def handshake(self, deadline: float) -> None:
        """``initialize``, then ``tools/list``, before ``deadline`` (a ``time.monotonic()``).

        On failure the server is stopped (quickly: it is not worth waiting for) and
        ``McpError`` raised.
        """
        try:
            self._initialize(deadline)
            self.list_tools(max(0.0, deadline - time.monotonic()))
        except BaseException:
            self.close(**QUICK_CLOSE)
            raise

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
        spec-gap mcp-bounds: the listing stops at the first bound of ``McpLimits`` it reaches
        (tools, their decoded bytes, pages, one page's size); the tools taken until then are
        kept, and ``tools_cut`` says which bound stopped it and how many tools were kept.
        """
        if "tools" not in self.capabilities:
            self._tools, self.tools_cut = (), None
            return self._tools
        deadline = time.monotonic() + timeout
        limits = self._limits
        listing = _Listing(limits)
        cursor: Optional[str] = None
        for page in range(1, limits.max_tool_pages + 1):
            params = {} if cursor is None else {"cursor": cursor}
            try:
                result = self._request("tools/list", params, deadline - time.monotonic())
            except McpTooLarge as exc:
                listing.cut = f"page {page} of tools/list was refused: {exc.reason}"
                break
            if not isinstance(result, dict) or not isinstance(result.get("tools", []), list):
                raise McpError("tools/list answered something other than a list of tools")
            listing.take(result.get("tools", []))
            next_cursor = result.get("nextCursor")
            del result  # the page goes now: only the tools taken from it stay
            if listing.cut is not None:
                break
            if not isinstance(next_cursor, str) or not next_cursor:
                break
            cursor = next_cursor
        else:
            listing.cut = (
                f"tools/list still had pages after {limits.max_tool_pages} "
                "(the bound max_tool_pages)"
            )
        listing.log_skipped(self.name)
        self._tools = tuple(listing.tools)
        self.tools_cut = (
            None if listing.cut is None else f"{listing.cut}; {len(self._tools)} tools kept"
        )
        if self.tools_cut is not None:
            log.warning("mcp:%s: %s", self.name, self.tools_cut)
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
        self.waiting_for = method
        try:
            result = self._channel.request(method, params, timeout)
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
        self.waiting_for = None
        return result


class _Listing:
    """The tools taken from ``tools/list`` pages so far, within the bounds of ``McpLimits``."""

    def __init__(self, limits: McpLimits) -> None:
        self._limits = limits
        self.tools: List[McpTool] = []
        self._names: Set[str] = set()
        self._bytes = 0
        #: The bound that stopped the listing, in words; None while it goes on.
        self.cut: Optional[str] = None
        self._malformed = 0
        self._twice = 0

    def take(self, page: List[Any]) -> None:
        """Take the page's tools in order, until a bound is reached (then ``cut`` says which)."""
        limits = self._limits
        for data in page:
            tool = McpTool.from_wire(data)
            if tool is None:
                self._malformed += 1
                continue
            if tool.name in self._names:
                self._twice += 1  # the first one listed is kept
                continue
            if len(self.tools) >= limits.max_tools:
                self.cut = f"tools/list passed the bound of {limits.max_tools} tools (max_tools)"
                return
            # spec-gap mcp-bounds: counted as held in memory, not as sent on the wire.
            cost = sys.getsizeof(tool) + decoded_size(tool.raw)
            if self._bytes + cost > limits.max_tool_bytes:
                self.cut = (
                    f"tools/list passed the bound of {limits.max_tool_bytes} bytes of tools, "
                    "counted decoded (max_tool_bytes)"
                )
                return
            self.tools.append(tool)
            self._names.add(tool.name)
            self._bytes += cost

    def log_skipped(self, server: str) -> None:
        if self._malformed:
            log.warning("mcp:%s: skipped %d malformed tools", server, self._malformed)
        if self._twice:
            log.warning(
                "mcp:%s: %d tools were listed again under a name already taken; "
                "the first of each was kept",
                server,
                self._twice,
            )


def _object(value: Any) -> Dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (lenient with what servers send)."""
    return value if isinstance(value, dict) else {}
