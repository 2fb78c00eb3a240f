"""The MCP servers ``check-agent`` passes in ``mcpServers``, and what each was sent.

* stdio: ``_mcp_probe.py`` run by the agent; it reports over a Unix socket this side listens on.
* HTTP (when the agent advertises ``mcpCapabilities.http``): a streamable-HTTP MCP server in this
  process on 127.0.0.1, answering each POSTed request with a JSON body (no SSE stream: GET is
  405, which the MCP transport allows).

Both record every message the agent sent, in order, so that the scenario can tell whether the
agent started the server, initialized it (``initialize`` then ``notifications/initialized``), and
what else it asked.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

from ._mcp_probe import answer

__all__ = ["McpProbe"]

PROBE_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mcp_probe.py")


class _Log:
    """What one server was sent, with waiting; for the stdio probe, also its processes: each
    one that connected (``opened``) and each whose socket then closed (``ended``: it exited)."""

    def __init__(self) -> None:
        self.items: List[Any] = []
        self.opened = 0
        self.ended = 0
        self._cond = threading.Condition()

    def add(self, item: Any) -> None:
        with self._cond:
            self.items.append(item)
            self._cond.notify_all()

    def count(self, *, opened: int = 0, ended: int = 0) -> None:
        """A probe process connected (``opened``), or its socket closed (``ended``)."""
        with self._cond:
            self.opened += opened
            self.ended += ended
            self._cond.notify_all()

    def wait(self, predicate: Callable[[List[Any]], bool], timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.items), timeout)

    def wait_started(self, timeout: float) -> bool:
        """Wait until a probe process has connected (at most ``timeout`` s)."""
        with self._cond:
            return self._cond.wait_for(lambda: self.opened > 0, timeout)

    def wait_stopped(self, timeout: float) -> bool:
        """Wait until every probe process that connected has ended (at most ``timeout`` s)."""
        with self._cond:
            return self._cond.wait_for(lambda: 0 < self.opened == self.ended, timeout)

    def pids(self) -> List[Any]:
        """The pid each probe process reported when it started."""
        with self._cond:
            return [
                m["started"].get("pid")
                for m in self.items
                if isinstance(m, dict) and isinstance(m.get("started"), dict)
            ]

    def methods(self) -> List[str]:
        with self._cond:
            return [m["method"] for m in self.items if isinstance(m, dict) and "method" in m]

    @property
    def started(self) -> bool:
        with self._cond:
            return bool(self.items)


def initialized(items: List[Any]) -> bool:
    """The MCP handshake went through: ``initialize``, then ``notifications/initialized``."""
    methods = [m.get("method") for m in items if isinstance(m, dict)]
    return "initialize" in methods and "notifications/initialized" in methods[
        methods.index("initialize") :
    ]


class McpProbe:
    """A stdio probe and, with ``http=True``, an HTTP one; a context manager.

    ``name`` names the stdio server in ``mcpServers``; each probe listens on a socket of its own,
    so two probes differ in their arguments too (an agent that shares one server process between
    sessions by name or by command line cannot take one for the other).
    """

    def __init__(self, *, http: bool = False, name: str = "acpref-probe") -> None:
        self.name = name
        self._dir = tempfile.mkdtemp(prefix="acpref-mcp-")
        self.address = os.path.join(self._dir, "probe.sock")
        self.stdio = _Log()
        self.http: Optional[_Log] = _Log() if http else None
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.address)
        self._listener.listen(4)
        self._threads = [threading.Thread(target=self._accept, name="mcp-probe", daemon=True)]
        self._httpd: Optional[ThreadingHTTPServer] = None
        if self.http is not None:
            self._httpd = _http_server(self.http)
            self._threads.append(
                threading.Thread(
                    target=self._httpd.serve_forever, name="mcp-probe-http", daemon=True
                )
            )
        for thread in self._threads:
            thread.start()

    def servers(self) -> List[Dict[str, Any]]:
        """The ``mcpServers`` entries (SETUP-32, SETUP-33 shapes)."""
        entries: List[Dict[str, Any]] = [
            {
                "name": self.name,
                "command": sys.executable,
                "args": [PROBE_SCRIPT, self.address],
                "env": [{"name": "ACPREF_PROBE", "value": "1"}],
            }
        ]
        if self._httpd is not None:
            port = self._httpd.server_address[1]
            entries.append(
                {
                    "type": "http",
                    "name": "acpref-probe-http",
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "headers": [{"name": "X-Acpref-Probe", "value": "1"}],
                }
            )
        return entries

    def logs(self) -> Dict[str, _Log]:
        out = {"stdio": self.stdio}
        if self.http is not None:
            out["http"] = self.http
        return out

    def wait_initialized(self, timeout: float) -> bool:
        """Wait until every server went through the MCP handshake (at most ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        return all(
            log.wait(initialized, max(0.0, deadline - time.monotonic()))
            for log in self.logs().values()
        )

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        """One probe process's reports, until its socket closes: the process has exited (the
        kernel closes a dead process's sockets), whether at the end of its input or killed."""
        self.stdio.count(opened=1)
        try:
            with conn, conn.makefile("rb") as lines:
                for line in lines:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue
                    self.stdio.add(item)
        except OSError:
            pass
        finally:
            self.stdio.count(ended=1)

    def close(self) -> None:
        self._listener.close()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> "McpProbe":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _http_server(log: _Log) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"null")
            except ValueError:
                self.send_response(400)
                self.end_headers()
                return
            if not log.items:
                log.add({"started": {"header": self.headers.get("X-Acpref-Probe")}})
            messages = body if isinstance(body, list) else [body]
            answers = []
            for message in messages:
                log.add(message)
                response = answer(message) if isinstance(message, dict) else None
                if response is not None:
                    answers.append(response)
            if not answers:
                self.send_response(202)
                self.end_headers()
                return
            data = json.dumps(answers if isinstance(body, list) else answers[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Mcp-Session-Id", "acpref-probe")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(405)  # no server-initiated stream
            self.end_headers()

        def do_DELETE(self) -> None:  # noqa: N802
            self.send_response(200)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server
