"""A hand-written streamable-HTTP MCP server (standard library only) that tests can steer.

Test-only, for ``tests/test_mcp_http.py``: the cases the SDK server does not produce on demand.
``RawHttpServer`` serves on 127.0.0.1 (a free port) from a background thread and records every
request (``seen``: verb, headers, JSON body). Behaviour by message:

* ``initialize``: a JSON body, with ``Mcp-Session-Id: raw-session-1``.
* a notification, or a response of the client: 202. The response to ``srv-ping`` releases the
  ``tools/list`` stream below.
* ``tools/list``: an event stream that starts with a comment, then sends the client a ``ping``
  request (id ``srv-ping``), waits for its answer (POSTed back), then a notification and the
  response, written in pieces cut mid-line, with bare-CR line endings.
* ``tools/call`` ``echo``: a JSON array (a batch, as MCP 2025-03-26 allowed) holding the result.
* ``tools/call`` ``slow``: an event stream that never sends anything (until the server stops).
* ``DELETE``: 200.

With ``hold`` set, ``initialize`` is never answered and the exchange is held open until the
server stops: ``"stream"`` starts an event stream and sends a keep-alive comment every 0.1 s;
``"trickle"`` sends the status line, then one byte of a header every 0.1 s (so that no read of
the client ever waits long); ``hung_up`` is set once the client has hung up on it.

With ``pages=(N, SIZE)``, ``tools/list`` is answered with a JSON body of N tools (SIZE bytes of
description each, names never seen before) and a ``nextCursor``, for ever; with ``events``
too, each page is an event of an event stream instead.

With ``token`` set, a request without ``Authorization: Bearer <token>`` gets 401, and the body
quotes the Authorization header it got (to check that acpref masks it in its reasons).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["RawHttpServer", "SESSION_ID"]

SESSION_ID = "raw-session-1"


class RawHttpServer:
    """Use as a context manager; ``url`` is the MCP endpoint."""

    def __init__(
        self,
        *,
        token: Optional[str] = None,
        hold: Optional[str] = None,
        pages: Optional[Tuple[int, int]] = None,
        events: bool = False,
        nested: int = 0,
    ) -> None:
        self.seen: List[Dict[str, Any]] = []
        self.token = token
        self.hold = hold
        self.pages = pages
        self.events = events
        #: Answer tools/list with one tool whose inputSchema is nested this deep (0: never).
        self.nested = nested
        self.ping_answered = threading.Event()
        self.stopping = threading.Event()
        #: Set when the client hangs up on an exchange held open (``hold``).
        self.hung_up = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # no stderr noise
                pass

            def do_DELETE(self) -> None:
                owner.seen.append(
                    {"verb": "DELETE", "headers": dict(self.headers.items()), "body": None}
                )
                self._empty(200)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                owner.seen.append(
                    {"verb": "POST", "headers": dict(self.headers.items()), "body": body}
                )
                if owner.token is not None:
                    got = self.headers.get("Authorization", "")
                    if got != f"Bearer {owner.token}":
                        data = f"bad credentials: {got}".encode()
                        self.send_response(401)
                        self.send_header("Content-Type", "text/plain")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                        return
                if not isinstance(body, dict):
                    self._empty(400)
                    return
                method = body.get("method")
                if method is None or "id" not in body:
                    if body.get("id") == "srv-ping":
                        owner.ping_answered.set()
                    self._empty(202)
                elif method == "initialize" and owner.hold is not None:
                    self._hold(owner.hold)
                elif method == "initialize":
                    result = {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "1"},
                    }
                    self._json({"jsonrpc": "2.0", "id": body["id"], "result": result}, session=True)
                elif method == "tools/list" and owner.nested:
                    self._nested_page(body["id"], owner.nested)
                elif method == "tools/list" and owner.pages is not None:
                    self._endless_page(body["id"], body["params"].get("cursor"), *owner.pages)
                elif method == "tools/list":
                    self._tools_list(body["id"])
                elif method == "tools/call" and body["params"]["name"] == "slow":
                    self._events_start()
                    owner.stopping.wait(30.0)
                elif method == "tools/call":
                    text = body["params"]["arguments"].get("text", "")
                    result = {"content": [{"type": "text", "text": text}]}
                    self._json([{"jsonrpc": "2.0", "id": body["id"], "result": result}])
                else:
                    self._json(
                        {
                            "jsonrpc": "2.0",
                            "id": body["id"],
                            "error": {"code": -32601, "message": "nope"},
                        }
                    )

            def _empty(self, status: int) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _json(self, message: Any, session: bool = False) -> None:
                data = json.dumps(message).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if session:
                    self.send_header("Mcp-Session-Id", SESSION_ID)
                self.end_headers()
                self.wfile.write(data)

            def _endless_page(self, request_id: Any, cursor: Any, count: int, size: int) -> None:
                number = int(cursor or 0)
                tools = [
                    {"name": f"p{number}-{i}", "description": "d" * size, "inputSchema": {}}
                    for i in range(count)
                ]
                result = {"tools": tools, "nextCursor": str(number + 1)}
                message = {"jsonrpc": "2.0", "id": request_id, "result": result}
                if not owner.events:
                    self._json(message)
                    return
                self._events_start()
                self.wfile.write(b"data: " + json.dumps(message).encode() + b"\n\n")

            def _nested_page(self, request_id: Any, depth: int) -> None:
                # Written by hand: json.dumps itself cannot write what it cannot nest.
                schema = b"[" * depth + b"]" * depth
                data = (
                    b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode()
                    + b', "result": {"tools": [{"name": "deep", "inputSchema": ' + schema + b"}]}}"
                )
                if owner.events:
                    self._events_start()
                    self.wfile.write(b"data: " + data + b"\n\n")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _hold(self, how: str) -> None:
                if how == "stream":
                    self._events_start()
                else:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                try:
                    while not owner.stopping.wait(0.1):
                        self.wfile.write(b": keep-alive\n\n" if how == "stream" else b"z")
                        self.wfile.flush()
                except OSError:
                    owner.hung_up.set()  # the client gave up

            def _events_start(self) -> None:
                # HTTP/1.0 and no length: the body ends when the server closes the connection.
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.flush()

            def _tools_list(self, request_id: Any) -> None:
                self._events_start()
                self.wfile.write(b": keep-alive\r\n\r\n")
                ping = {"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}
                self.wfile.write(
                    b"event: message\r\ndata: " + json.dumps(ping).encode() + b"\r\n\r\n"
                )
                self.wfile.flush()
                if not owner.ping_answered.wait(10.0):
                    return
                note = {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "x"},
                }
                result = {
                    "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
                    "nextCursor": None,
                }
                response = json.dumps(
                    {"jsonrpc": "2.0", "id": request_id, "result": result}
                ).encode()
                self.wfile.write(b"data: " + json.dumps(note).encode() + b"\r\r")
                half = len(response) // 2
                for piece in (b"data: " + response[:half], response[half:] + b"\r", b"\r"):
                    self.wfile.write(piece)
                    self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/mcp"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="raw-http-server", daemon=True
        )

    def bodies(self, method: str) -> List[Dict[str, Any]]:
        """The recorded POSTs whose JSON-RPC method is ``method``."""
        return [
            s
            for s in self.seen
            if isinstance(s["body"], dict) and s["body"].get("method") == method
        ]

    def __enter__(self) -> "RawHttpServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)
