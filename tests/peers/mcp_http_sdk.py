"""An MCP server of the official SDK (the ``mcp`` package), served over streamable HTTP in-process.

Test-only: the ``mcp`` package is a test extra, never imported by acpref. ``SdkHttpServer``
runs an ``MCPServer`` app with uvicorn on a background thread, on 127.0.0.1 and a free port,
and records every request it sees (method, path, headers) so that tests can check what acpref
sent. Tools: ``echo`` {"text"} and ``add`` {"a", "b"}.

``json_response=True`` makes the server answer requests with one JSON body; False (the SDK's
default) with an event stream.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Dict, List

import uvicorn
from mcp.server.mcpserver import MCPServer

__all__ = ["SdkHttpServer"]


def _app() -> MCPServer:
    app = MCPServer("acpref-test-http", log_level="WARNING")

    @app.tool()
    def echo(text: str) -> str:
        """Answer the text."""
        return text

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return app


class SdkHttpServer:
    """The SDK server on a thread; use as a context manager. ``seen`` lists requests received."""

    def __init__(self, *, json_response: bool = False) -> None:
        self.seen: List[Dict[str, Any]] = []
        starlette_app = _app().streamable_http_app(json_response=json_response)

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = {
                    k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
                }
                self.seen.append(
                    {"method": scope["method"], "path": scope["path"], "headers": headers}
                )
            await starlette_app(scope, receive, send)

        # Bound and listening before uvicorn starts: a client that connects early waits in the
        # backlog until the server (and the SDK's session manager, started in the app's
        # lifespan) is ready, so nobody has to poll for readiness.
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        config = uvicorn.Config(recording, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name="sdk-http-server",
            daemon=True,
        )

    def __enter__(self) -> "SdkHttpServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.should_exit = True
        self._thread.join(10.0)
        self._socket.close()
