"""MCP over streamable HTTP, with the standard library only (``http.client``).

Spec: ACP session-setup.mdx, MCP Servers / HTTP Transport (SETUP-31, SETUP-33); MCP 2025-06-18,
Transports, Streamable HTTP. What acpref does of it:

* Every message we send is one POST of one JSON-RPC message, with ``Accept: application/json,
  text/event-stream``, ``Content-Type: application/json`` and the headers the client named.
* A request is answered either by one JSON body or by an event stream (``text/event-stream``)
  whose ``message`` events carry JSON-RPC messages: the server may send its own requests and
  notifications there before our response; we answer its requests (``ping``) with a POST of our
  own, ignore its notifications, and stop reading once our response has come.
* A notification or a response we send is accepted with 202.
* The ``Mcp-Session-Id`` the server gives in its ``initialize`` response is sent on every later
  request, with ``MCP-Protocol-Version``; ``close()`` DELETEs the session (best effort).
* Every exchange runs under one deadline: connect, send, and each read of the body are bounded
  by the time that is left of it; ``close()`` shuts the sockets of exchanges still under way, so
  that a server that trickles bytes (each read short, their sum endless) holds nothing past it.
* spec-gap mcp-bounds: a body, or one event of a stream, is bounded in bytes and in JSON values
  (``McpLimits.max_message_bytes``, ``max_message_items``), as a stdio line is.

Not supported, each said in the error a user sees: the GET stream for server-initiated messages
(acpref needs none: it declares no client capabilities), resuming a broken stream
(``Last-Event-ID``), a new session after the server forgot ours (HTTP 404), redirects, proxies,
and MCP authorization (OAuth): credentials travel in the ``headers`` the client names.

Never logged, never in a reason: header values. URLs appear without query or user info.
"""

from __future__ import annotations

import http.client
import itertools
import json
import logging
import re
import socket
import ssl
import threading
import time
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple
from urllib.parse import urlsplit

from .._bounds import MAX_DEPTH, count_items, nesting
from ..schema import McpServerHttp
from ._model import McpError, McpLimits, McpTimeout, McpTooLarge, server_request_answer
from ._secrets import Redactor, safe_url
from ._sse import SseParser, SseTooLarge

__all__ = ["HttpChannel"]

log = logging.getLogger("acpref.mcp")

#: Header names acpref sets itself: a client-named header of the same name is dropped.
_OURS = frozenset(
    {
        "accept",
        "content-type",
        "content-length",
        "transfer-encoding",
        "connection",
        "mcp-session-id",
        "mcp-protocol-version",
    }
)
#: RFC 9110 token characters: what a header name may hold.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: MCP: a session id holds only visible ASCII (0x21 .. 0x7E).
_SESSION_ID = re.compile(r"[\x21-\x7e]+")
_READ = 64 * 1024
#: How much of an error body is quoted in a reason.
_ERROR_BODY_QUOTE = 300
#: Bound on the DELETE that ends the session.
_DELETE_TIMEOUT = 2.0


def _remaining(deadline: float, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(what)
    return left


class HttpChannel:
    """One MCP server over streamable HTTP: raw JSON-RPC requests and notifications.

    Thread-safe: each exchange has an HTTP connection of its own.
    """

    def __init__(
        self,
        server: McpServerHttp,
        *,
        label: str,
        redact: Redactor,
        limits: McpLimits = McpLimits(),
    ) -> None:
        parts = urlsplit(server.url)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise McpError(f"{safe_url(server.url)!r} is not an http or https URL")
        self._label = label
        self._redact = redact
        self._url = safe_url(server.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = port
        self._target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._headers = _client_headers(server, label)
        self._max = limits.max_message_bytes
        self._max_items = limits.max_message_items
        self._ids = itertools.count(1)
        self._state_lock = threading.Lock()  # guards the ids, the session, the sockets, the flags
        #: The sockets of the exchanges under way: ``close()`` shuts them.
        self._sockets: Set[socket.socket] = set()
        self._session_id: Optional[str] = None
        self._protocol_version: Optional[str] = None
        self._dead: Optional[str] = None
        self._closed = False

    # -- what callers see -------------------------------------------------------------------------

    @property
    def pid(self) -> None:
        return None

    @property
    def alive(self) -> bool:
        return self._dead is None and not self._closed

    def set_protocol_version(self, version: str) -> None:
        """The negotiated MCP version, sent as ``MCP-Protocol-Version`` from now on."""
        with self._state_lock:
            self._protocol_version = version

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """POST a request; read its response (JSON or an event stream) within ``timeout``."""
        with self._state_lock:
            request_id = next(self._ids)
            gone = self._gone()
        if gone is not None:
            raise McpError(f"{method}: {gone}")
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        deadline = time.monotonic() + timeout
        try:
            return self._exchange(message, deadline)
        except TimeoutError:
            raise McpTimeout(
                f"{method} got no answer within {timeout:.1f}s", request_id=request_id
            ) from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._failed(method, exc) from None

    def notify(self, method: str, params: Any, timeout: float = 5.0) -> None:
        """POST a notification; the server accepts it with 202."""
        with self._state_lock:
            gone = self._gone()
        if gone is not None:
            raise McpError(f"{method}: {gone}")
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        try:
            self._post_only(message, time.monotonic() + timeout)
        except TimeoutError:
            raise McpTimeout(f"{method} was not accepted within {timeout:.1f}s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._failed(method, exc) from None

    def _failed(self, method: str, exc: BaseException) -> McpError:
        why = self._redact(str(exc) or type(exc).__name__)
        return McpError(f"{method}: HTTP exchange with {self._url} failed: {why}")

    def _gone(self) -> Optional[str]:
        """Why no request can be sent any more, or None. Called under ``_state_lock``."""
        if self._closed:
            return "the MCP server connection is closed"
        return self._dead

    def close(self, **_ignored: float) -> None:
        """End the MCP session with a DELETE (best effort, bounded); idempotent."""
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            session_id = self._session_id
            under_way = list(self._sockets)
        for sock in under_way:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # its reader wakes at once, with an error
            except OSError:
                pass  # it ended meanwhile
        if session_id is None:
            return
        deadline = time.monotonic() + _DELETE_TIMEOUT
        try:
            conn, sock, response = self._send("DELETE", None, deadline)
            try:
                # MCP: 405 means the server does not let clients end sessions; nothing to do.
                log.debug("%s: DELETE session answered HTTP %d", self._label, response.status)
            finally:
                self._done(conn, sock)
        except (OSError, http.client.HTTPException) as exc:
            log.debug("%s: DELETE session failed: %s", self._label, self._redact(str(exc)))

    # -- one exchange ----------------------------------------------------------------------------

    def _exchange(self, message: Dict[str, Any], deadline: float) -> Any:
        method = message["method"]
        conn, sock, response = self._send("POST", message, deadline)
        try:
            self._check_status(response, sock, deadline, method)
            if method == "initialize":
                self._take_session_id(response)
            if response.status == 202:
                raise McpError(f"the server accepted {method} (HTTP 202) without answering it")
            for incoming in self._messages(response, sock, deadline, method):
                if not isinstance(incoming, dict):
                    continue
                if "method" in incoming:
                    if "id" in incoming:
                        self._answer(incoming, deadline)
                    continue  # a notification: none that acpref uses
                if incoming.get("id") != message["id"]:
                    log.debug("%s: ignored a response for id %r", self._label, incoming.get("id"))
                    continue
                if "error" in incoming:
                    raise _error_from(method, incoming["error"], self._redact)
                if "result" in incoming:
                    return incoming["result"]
                raise McpError(f"the response to {method} has neither result nor error")
            raise McpError(f"the server's answer to {method} ended without a response")
        finally:
            self._done(conn, sock)

    def _post_only(self, message: Dict[str, Any], deadline: float) -> None:
        """POST a notification or a response: anything 2xx is accepted, the body is not read."""
        conn, sock, response = self._send("POST", message, deadline)
        try:
            what = message.get("method") or "response"
            self._check_status(response, sock, deadline, what)
        finally:
            self._done(conn, sock)

    def _answer(self, request: Dict[str, Any], deadline: float) -> None:
        """Answer a request the server sent on the event stream (ping), with a POST."""
        answer = server_request_answer(str(request.get("method")), request.get("params"))
        try:
            self._post_only({"jsonrpc": "2.0", "id": request["id"], **answer}, deadline)
        except (McpError, OSError, http.client.HTTPException) as exc:
            log.warning(
                "%s: could not answer the server's %s: %s", self._label, request.get("method"), exc
            )

    def _send(
        self, verb: str, message: Optional[Dict[str, Any]], deadline: float
    ) -> Tuple[http.client.HTTPConnection, socket.socket, http.client.HTTPResponse]:
        """Connect, send one request, read the status line and headers, all before ``deadline``."""
        timeout = _remaining(deadline, "connect")
        conn: http.client.HTTPConnection
        if self._https:
            conn = http.client.HTTPSConnection(
                self._host, self._port, timeout=timeout, context=ssl.create_default_context()
            )
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        sock: Optional[socket.socket] = None
        try:
            conn.connect()
            sock = conn.sock  # kept: http.client lets go of it once the response owns it
            assert sock is not None
            with self._state_lock:
                if self._closed and verb != "DELETE":
                    raise McpError("the MCP server connection is closed")
                self._sockets.add(sock)
            body = (
                None
                if message is None
                else json.dumps(message, separators=(",", ":")).encode("utf-8")
            )
            headers = self._headers_for(body)
            conn.putrequest(
                verb, self._target, skip_host=any(n.lower() == "host" for n, _ in headers)
            )
            for name, value in headers:
                conn.putheader(name, value)
            sock.settimeout(_remaining(deadline, "send"))
            conn.endheaders(body)
            sock.settimeout(_remaining(deadline, "response"))
            return conn, sock, conn.getresponse()
        except BaseException:
            self._done(conn, sock)
            raise

    def _done(self, conn: http.client.HTTPConnection, sock: Optional[socket.socket]) -> None:
        """The exchange is over: its socket is no longer one for ``close()`` to shut."""
        with self._state_lock:
            self._sockets.discard(sock)  # type: ignore[arg-type]
        conn.close()

    def _headers_for(self, body: Optional[bytes]) -> List[Tuple[str, str]]:
        with self._state_lock:
            session_id, version = self._session_id, self._protocol_version
        headers = list(self._headers)
        headers.append(("Accept", "application/json, text/event-stream"))
        if body is not None:
            headers.append(("Content-Type", "application/json"))
            headers.append(("Content-Length", str(len(body))))
        if session_id is not None:
            headers.append(("Mcp-Session-Id", session_id))
        if version is not None:
            headers.append(("MCP-Protocol-Version", version))
        return headers

    def _check_status(
        self, response: http.client.HTTPResponse, sock: socket.socket, deadline: float, what: str
    ) -> None:
        status = response.status
        if 200 <= status < 300:
            return
        if status == 404 and self._session_id is not None:
            with self._state_lock:
                self._dead = (
                    "the server no longer knows this MCP session (HTTP 404); "
                    "acpref does not start a new one"
                )
            raise McpError(f"{what}: {self._dead}")
        quoted = self._redact(self._read_some(response, sock, deadline)[:_ERROR_BODY_QUOTE])
        detail = f": {quoted}" if quoted else ""
        if status in (401, 403):
            raise McpError(
                f"{what}: the server refused the request (HTTP {status} {response.reason}); MCP "
                "authorization (OAuth) is not supported: credentials go in the server's headers"
                f"{detail}"
            )
        if 300 <= status < 400:
            raise McpError(
                f"{what}: the server redirects (HTTP {status}); acpref does not follow redirects"
            )
        raise McpError(f"{what}: HTTP {status} {response.reason}{detail}")

    def _take_session_id(self, response: http.client.HTTPResponse) -> None:
        session_id = response.getheader("Mcp-Session-Id")
        if session_id is None:
            return  # a stateless server
        if not _SESSION_ID.fullmatch(session_id):
            raise McpError("the server's Mcp-Session-Id holds characters other than visible ASCII")
        with self._state_lock:
            self._session_id = session_id

    # -- reading bodies ---------------------------------------------------------------------------

    def _messages(
        self, response: http.client.HTTPResponse, sock: socket.socket, deadline: float, what: str
    ) -> Iterator[Any]:
        """The JSON-RPC messages of a response body: one JSON value, or an event stream."""
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
        if kind == "application/json":
            body = self._read_all(response, sock, deadline)
            self._check_items(body, what)
            try:
                data = json.loads(body)
            except ValueError:
                raise McpError(f"the answer to {what} is not valid JSON") from None
            # A JSON array is a batch (MCP 2025-03-26); later revisions send one message.
            yield from data if isinstance(data, list) else [data]
        elif kind == "text/event-stream":
            parser = SseParser(self._max)
            while True:
                sock.settimeout(_remaining(deadline, "event stream"))
                chunk = response.read1(_READ)
                try:
                    events = parser.feed(chunk) if chunk else parser.finish()
                except SseTooLarge as exc:
                    raise McpTooLarge(
                        f"the answer to {what}: {exc} (max_message_bytes)"
                    ) from None
                for event in events:
                    if event.type != "message":
                        continue
                    self._check_items(event.data.encode("utf-8"), what)
                    try:
                        yield json.loads(event.data)
                    except ValueError:
                        log.warning("%s: skipped an event that is not JSON", self._label)
                if not chunk:
                    return
        else:
            raise McpError(
                f"the answer to {what} has content type {kind or 'none'!r}, "
                "not JSON or an event stream"
            )

    def _read_all(
        self, response: http.client.HTTPResponse, sock: socket.socket, deadline: float
    ) -> bytes:
        parts: List[bytes] = []
        size = 0
        while True:
            sock.settimeout(_remaining(deadline, "body"))
            chunk = response.read1(_READ)
            if not chunk:
                return b"".join(parts)
            size += len(chunk)
            if size > self._max:
                raise McpTooLarge(
                    f"a response body passed the bound of {self._max} bytes (max_message_bytes)"
                )
            parts.append(chunk)

    def _check_items(self, data: bytes, what: str) -> None:
        """Refuse a message of more JSON values than the bound, or nested deeper than the
        connection's bound (``MAX_DEPTH``, as on stdio), before it is decoded."""
        depth = nesting(data, MAX_DEPTH)
        if depth:
            raise McpTooLarge(
                f"the answer to {what} is nested {depth} levels deep, more than the limit of "
                f"{MAX_DEPTH}"
            )
        if len(data) > self._max_items:
            items = count_items(data, self._max_items)
            if items > self._max_items:
                raise McpTooLarge(
                    f"the answer to {what} held about {items} JSON values, over the bound of "
                    f"{self._max_items} (max_message_items)"
                )

    def _read_some(
        self, response: http.client.HTTPResponse, sock: socket.socket, deadline: float
    ) -> str:
        """The start of an error body, for a reason; empty if it cannot be read in time."""
        try:
            sock.settimeout(min(1.0, _remaining(deadline, "error body")))
            return response.read1(4096).decode("utf-8", "replace").strip()
        except (OSError, http.client.HTTPException):
            return ""


def _client_headers(server: McpServerHttp, label: str) -> List[Tuple[str, str]]:
    """The client-named headers, checked; those acpref sets itself are dropped (names logged).

    Checked here, naming only the header: ``http.client`` would quote a bad value in its error.
    """
    headers: List[Tuple[str, str]] = []
    for header in server.headers:
        name, value = header.name, header.value
        if not _TOKEN.fullmatch(name):
            raise McpError(f"header name {name!r} is not a valid HTTP header name")
        if any(c in value for c in "\r\n\0"):
            raise McpError(f"the value of header {name!r} holds a line break or NUL")
        try:
            value.encode("latin-1")
        except UnicodeEncodeError:
            raise McpError(f"the value of header {name!r} is not Latin-1 text") from None
        if name.lower() in _OURS:
            log.debug("%s: header %s is set by acpref; the client's value is not used", label, name)
            continue
        headers.append((name, value))
    log.debug("%s: sending header names %s", label, [n for n, _ in headers])
    return headers


def _error_from(method: str, error: Any, redact: Redactor) -> McpError:
    if isinstance(error, dict) and type(error.get("code")) is int:
        message = redact(str(error.get("message", "")))
        return McpError(f"{method} failed: {message} ({error['code']})", code=error["code"])
    return McpError(f"{method} failed with a malformed error object")
