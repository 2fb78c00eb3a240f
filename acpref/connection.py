"""The JSON-RPC connection: reading as a role, requests on host threads, responses matched by id.

Spec: overview.mdx (Communication Model), transports.mdx, cancellation.mdx; clauses OVERVIEW-01,
OVERVIEW-08, OVERVIEW-09, RPC-01 .. RPC-20, TRANSPORT-01, TRANSPORT-04, TRANSPORT-05,
CANCEL-01 .. CANCEL-07, EXT-06 .. EXT-10. How it works, and each decision where the spec is
silent: spec_notes/connection.md.

How the threads divide the work (``acpref._threads`` explains why, with measurements):

* Reading is a role one thread holds at a time. A caller waiting for its own response reads
  until it comes; when nobody waits, one of the connection's host threads keeps watch and reads.
* Each inbound **request** runs on a host thread that does not hold the reading role, so a
  handler may call the peer and wait (a prompt handler asking ``session/request_permission``)
  without deadlock. A host that reads a request passes the role to another host and runs it
  (leader/follower). Past ``max_handlers`` running at once, requests queue; past ``max_queued``
  waiting, they are answered -32800 at once (spec RPC-15: a request aborted by a resource limit).
* Inbound **notifications** run on the thread that read them, at once: one after another in wire
  order, and all of those received before a response are handled before its caller gets it (the
  ``session/update``s of a turn are all delivered before ``prompt`` returns). A notification
  handler may call the peer, but must not block on anything else.
* Writes take one lock around the write of an already encoded line.

Bad input never stops the connection: an unparseable line is answered -32700 (``id: null``), an
invalid envelope -32600, an oversize line -32600, an unknown method -32601, a handler's crash
-32603; a notification is never answered, whatever its state (OVERVIEW-09). End of input, a dead
peer, or ``close()`` fail every pending request at once with ``ConnectionClosed``.

This layer knows JSON-RPC and the methods table, not the protocol's rules: the agent and client
sides wrap their handlers with those (``acpref._core``).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Protocol

from . import codec
from ._bounds import NO_ID, count_items, peek_envelope
from ._core import envelope
from ._threads import READ_EOF, READ_INTERRUPTED, READ_MORE, Crew, Flag, Waiter
from ._transport import (
    INTERRUPTED,
    OVERSIZE_HEAD,
    LineSplitter,
    Oversize,
    Stream,
    read_accepts_timeout,
)
from .errors import (
    ConnectionClosed,
    ErrorCode,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RequestTimeout,
    RpcError,
)
from .methods import CANCEL_REQUEST, METHODS, Method

__all__ = [
    "Connection",
    "RequestContext",
    "PendingRequest",
    "Handler",
    "Recorder",
    "Observer",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_ITEMS",
]

log = logging.getLogger("acpref.connection")

#: Default bound on one line: 64 MiB (peers broke at 64 KiB; the issue asks for >= 32 MiB).
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: Default bound on the JSON values of one message (``acpref._bounds.count_items``): what a line
#: may cost once decoded. 1 000 000 tiny values cost about 70 MiB decoded; without the bound a
#: line of 64 MiB could cost 1.5 GiB.
DEFAULT_MAX_ITEMS = 1_000_000

#: ``handler(params, ctx) -> result``: params and result are models for table methods, raw JSON
#: for extension methods. A notification handler's return value is ignored.
Handler = Callable[[Any, "RequestContext"], Any]
#: ``recorder(direction, line)``: direction is ``"in"`` or ``"out"``; ``line`` the exact bytes.
Recorder = Callable[[str, bytes], None]


class Observer(Protocol):
    """Sees every well-formed message in wire order, both ways: where the protocol rules plug in.

    ``on_receive`` runs on the reading thread before a message is dispatched; for a request, a
    returned ``RpcError`` is the answer and the handler never runs. ``on_send`` runs under the
    write lock just before a message is written, so its view of the order is the wire's; raising
    ``LocalProtocolError`` stops the message (a response is then replaced by a -32603 error).
    """

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]: ...

    def on_send(self, message: Dict[str, Any]) -> None: ...


_NO_ID = envelope.NO_ID  # a message without an "id" key (a notification), apart from "id": null


# Built once: json.dumps with options builds a new encoder on every call. NaN and Infinity are
# not JSON: never written (and a line holding one is a parse error, ``envelope.decode``).
# check_circular=False: a message is a tree made by the codec or a handler; a handler's circular
# value still fails (RecursionError, answered -32603 like any value that is not JSON), without a
# check that costs every message a seventh of its encoding.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_ASCII_ENCODER = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
)


_valid_id = envelope.valid_id  # spec RPC-02: a string, an integer or null


def _refusal(fault: envelope.Fault) -> RpcError:
    """The error that answers a line the envelope refuses, naming the clause."""
    assert fault.code is not None
    return RpcError(fault.code, f"{fault.message} [spec {fault.clause}]", {"clause": fault.clause})


class _NeverSet(Flag):
    """The ``cancelled`` flag of every notification: nothing cancels a notification.

    One shared instance, so that a notification (thousands a second in a busy turn) does not
    build a flag of its own.
    """

    def set(self) -> None:
        raise RuntimeError("a notification cannot be cancelled")


_NOT_CANCELLABLE = _NeverSet()


class RequestContext:
    """What a handler knows about the message it handles.

    ``cancelled`` (a ``Flag``: ``is_set()`` and ``wait(timeout)``, like a ``threading.Event``)
    is set when the peer cancels the request (``$/cancel_request``), or when the connection
    closes; for a notification it is never set. Handlers poll it or wait on it; cancellation is
    cooperative (a flag), never a thread kill.
    """

    __slots__ = (
        "id",
        "method",
        "connection",
        "cancelled",
        "answer_on_cancel",
        "is_notification",
        "_responded",
        "_lock",
    )

    def __init__(self, connection: "Connection", method: str, request_id: Any) -> None:
        self.connection = connection
        self.method = method
        #: The request id, or ``None`` for a notification (see ``is_notification``).
        self.id = None if request_id is _NO_ID else request_id
        #: True for a notification; a request may have ``id: null`` (spec RPC-02).
        self.is_notification = request_id is _NO_ID
        self.cancelled = _NOT_CANCELLABLE if self.is_notification else Flag()
        #: When True (the default), ``$/cancel_request`` answers the request -32800 at once and
        #: the handler's later result is dropped. A handler that answers a cancellation itself
        #: (a prompt turn ends with ``stopReason: "cancelled"``) sets it to False.
        self.answer_on_cancel = True
        self._responded = request_id is _NO_ID
        self._lock = threading.Lock()

    def _claim_response(self) -> bool:
        """True exactly once: the right to send this request's one response (RPC-06)."""
        with self._lock:
            if self._responded:
                return False
            self._responded = True
            return True


class PendingRequest:
    """An outgoing request waiting for its response."""

    __slots__ = ("id", "method", "_connection", "_result_type", "_waiter", "_response", "_error")

    def __init__(
        self, connection: "Connection", request_id: int, method: str, result_type: Any
    ) -> None:
        self.id = request_id
        self.method = method
        self._connection = connection
        self._result_type = result_type
        self._waiter = Waiter()
        self._response: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None

    def _resolve(self, response: Dict[str, Any]) -> None:
        self._response = response
        self._waiter.finish()

    def _fail(self, error: BaseException) -> None:
        self._error = error
        self._waiter.finish()

    @property
    def done(self) -> bool:
        return self._waiter.done

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait for the response without giving up on it (no cancel); True once it came.

        Like ``result``, the calling thread reads the stream itself meanwhile.
        """
        if not self._waiter.done:
            deadline = None if timeout is None else time.monotonic() + timeout
            self._connection._crew.wait(self._waiter, deadline)
        return self._waiter.done

    def result(self, timeout: Optional[float] = None) -> Any:
        """Wait for the response; return the typed result or raise ``RpcError`` & co.

        While it waits, the calling thread reads the stream itself whenever no other thread
        does (``acpref._threads``). On timeout the request is cancelled with
        ``$/cancel_request`` and ``RequestTimeout`` is raised; its late response, if any, is
        logged and dropped (spec RPC-08).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._waiter.done:
            self._connection._crew.wait(self._waiter, deadline)
        if not self._waiter.done:
            if self._connection._abandon(self):
                raise RequestTimeout(
                    f"{self.method} (id {self.id}) got no response within {timeout}s"
                )
            self._connection._crew.wait(self._waiter, None)  # it was answered meanwhile
        if self._error is not None:
            raise self._error
        response = self._response
        assert response is not None
        if "error" in response:
            raise RpcError.from_wire(response["error"])
        result = response["result"]
        if self._result_type is None:
            return result
        if result is None:
            # spec-gap result-null: the docs show `result: null` for session/load and
            # fs/write_text_file where the schema has an object (SETUP-09, FS-08): accept both.
            result = {}
        try:
            return codec.decode(result, self._result_type, root="result")
        except codec.DecodeError as exc:
            raise RemoteProtocolError(
                "OVERVIEW-01",
                f"the {self.method} result does not fit its schema: {exc}",
                data={"errors": exc.errors},
            ) from None

    def _withdraw(self, error: BaseException) -> None:
        """Stop waiting: ``$/cancel_request`` goes to the peer, and the wait fails with ``error``.

        For a request whose answer nothing needs any more; its late response, if any, is logged
        and dropped (spec RPC-08).
        """
        if self._connection._abandon(self):
            self._fail(error)

    def cancel(self) -> None:
        """Ask the peer to cancel this request (``$/cancel_request``, spec CANCEL-01).

        The request still gets its one response (a result, or error -32800) through ``result()``.
        """
        if not self.done:
            self._connection._send_cancel_request(self.id)


class Connection:
    """A JSON-RPC 2.0 peer over a byte stream: ACP's newline-delimited framing.

    ``handlers`` maps method names to ``handler(params, ctx)``; table methods get decoded params
    (lenient codec) and return a model, extension methods get raw JSON and return raw JSON.
    ``fallback`` (optional) gets ``(method, params, ctx)`` for methods not in ``handlers``; it
    raises ``RpcError.method_not_found`` for those it does not know either. ``methods`` is the
    table that types params and results (ACP's by default; another JSON-RPC protocol spoken
    with this class, such as MCP, passes its own or ``{}`` for raw JSON throughout), and
    ``cancel_method`` the notification that cancels a request (``None``: none is sent).
    At the end of input, ``on_end_of_input`` (optional) is called once, and requests already
    received get up to ``drain_timeout`` seconds to be answered before the connection closes.
    """

    def __init__(
        self,
        stream: Stream,
        handlers: Optional[Mapping[str, Handler]] = None,
        *,
        fallback: Optional[Callable[[str, Any, RequestContext], Any]] = None,
        name: str = "acpref",
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_handlers: int = 64,
        max_queued: int = 1024,
        recorder: Optional[Recorder] = None,
        observer: Optional[Observer] = None,
        on_close: Optional[Callable[["Connection"], None]] = None,
        on_end_of_input: Optional[Callable[["Connection"], None]] = None,
        drain_timeout: float = 5.0,
        methods: Mapping[str, Method] = METHODS,
        cancel_method: Optional[str] = CANCEL_REQUEST,
    ) -> None:
        self.name = name
        self._stream = stream
        self._handlers: Dict[str, Handler] = dict(handlers or {})
        self._fallback = fallback
        self._max_line_bytes = max_line_bytes
        self._max_items = max_items
        self._recorder = recorder
        self._observer = observer
        self._on_close = on_close
        self._on_eof_hook = on_end_of_input
        self._drain_timeout = drain_timeout
        self._methods = methods
        self._cancel_method = cancel_method

        self._ids = itertools.count(1)
        self._pending: Dict[Any, PendingRequest] = {}
        #: Why no response can come any more (end of input, a dead peer, close): set once, under
        #: ``_pending_lock``, when the pending requests are failed; new requests then fail at once.
        self._no_responses: Optional[str] = None
        self._pending_lock = threading.Lock()
        self._inbound: Dict[Any, RequestContext] = {}
        self._inbound_lock = threading.Condition()  # notified when a request is answered
        #: Answers being written now (their requests already left ``_inbound``, so that the peer
        #: may reuse the id as soon as it reads the answer); guarded by ``_inbound_lock``.
        self._answers_writing = 0
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._closing = False
        self._closer: Optional[threading.Thread] = None
        self._closed = threading.Event()
        self._close_reason: Optional[str] = None

        self._lines: Optional[Iterator[Any]] = None  # the one line splitter, advanced by the role
        self._read_takes_timeout = read_accepts_timeout(stream.read)
        self._crew = Crew(
            name,
            read_step=self._read_step,
            interrupt=getattr(stream, "interrupt", None),
            max_handlers=max_handlers,
            max_queued=max_queued,
        )
        self._started = False

    # -- Lifecycle -------------------------------------------------------------------------------

    def start(self) -> "Connection":
        """Start reading (a host thread keeps watch until a caller waits). Returns self."""
        if not self._started:
            self._started = True
            self._lines = iter(LineSplitter(self._read_chunk, self._max_line_bytes))
            self._crew.start()
        return self

    def set_handler(self, method: str, handler: Handler) -> None:
        self._handlers[method] = handler

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def close_reason(self) -> Optional[str]:
        return self._close_reason

    def wait_closed(self, timeout: Optional[float] = None) -> bool:
        """Block until the connection has closed (end of input, a dead peer, or ``close()``)."""
        return self._closed.wait(timeout)

    def close(self, reason: str = "closed by us") -> None:
        """Close now: fail pending requests, cancel running handlers, stop and join threads.

        Idempotent; safe to call from a handler thread (that thread is not joined).
        """
        with self._state_lock:
            if self._closing:
                already = True
            else:
                already = False
                self._closing = True
                self._close_reason = reason
                self._closer = threading.current_thread()
        if already:
            # Wait for the first close() to finish, unless we are one of the threads it joins
            # (a handler that closes on cancel) or that close itself (its on_close callback):
            # then waiting would stall it.
            me = threading.current_thread()
            if not self._is_own_thread() and me is not self._closer:
                self._closed.wait(10.0)
            return
        self._fail_pending(reason)
        with self._inbound_lock:
            running = list(self._inbound.values())
        for ctx in running:
            ctx.cancelled.set()
        self._stream.close()
        self._crew.stop()
        self._crew.join(5.0)
        if self._on_close is not None:
            try:
                self._on_close(self)  # before `closed`: what it frees is freed when waiters wake
            except Exception:  # noqa: BLE001
                log.exception("on_close callback failed")
        self._closed.set()

    def _is_own_thread(self) -> bool:
        return self._crew.owns(threading.current_thread())

    def __enter__(self) -> "Connection":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- Sending ---------------------------------------------------------------------------------

    def _write(self, message: Dict[str, Any], *, observe: bool = True) -> None:
        try:
            data = _ENCODER.encode(message).encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate cannot be UTF-8 (TRANSPORT-01): escape it as a \\u escape instead.
            data = _ASCII_ENCODER.encode(message).encode("ascii")
        # spec TRANSPORT-05: json.dumps escapes every newline inside strings, so the only raw
        # newline is the delimiter (TRANSPORT-04).
        if len(data) > self._max_line_bytes:
            # Bounds are the same on both sides (64 MiB by default): a line over ours would be
            # refused by a peer like us, and the request it answers left waiting. Refused here,
            # measured as encoded (a control character is six bytes there).
            raise _too_large("message", len(data), self._max_line_bytes)
        data += b"\n"
        if self._closed.is_set() or self._closing:
            raise ConnectionClosed(f"connection {self.name} is closed")
        try:
            with self._write_lock:
                if observe and self._observer is not None:
                    self._observe_send(message)  # may raise LocalProtocolError: nothing sent
                if self._recorder is not None:
                    self._recorder("out", data[:-1])  # in wire order: under the write lock
                self._stream.write(data)
        except (OSError, ValueError, TimeoutError) as exc:
            self._on_dead_peer(f"write failed: {exc}")
            raise ConnectionClosed(f"connection {self.name} closed: {exc}") from exc

    def _observe_send(self, message: Dict[str, Any]) -> None:
        try:
            self._observer.on_send(message)  # type: ignore[union-attr]
        except LocalProtocolError:
            raise
        except Exception:  # noqa: BLE001 - the rules' own bug must not swallow an answer
            # The rules refused nothing, they failed: the message goes out (a response whose
            # right to be sent is already claimed would otherwise never be sent, RPC-06).
            log.exception("%s: the rules failed on an outgoing message; sent anyway", self.name)

    def _observe_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        try:
            return self._observer.on_receive(message)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - the rules' own bug must not leave a request unanswered
            log.exception("%s: the rules failed on a received message", self.name)
            return RpcError(
                ErrorCode.INTERNAL_ERROR, "Internal error: the message could not be checked"
            )

    def request_async(self, method: str, params: Any = None) -> PendingRequest:
        """Send a request; return its ``PendingRequest`` at once."""
        row = self._methods.get(method)
        wire_params = codec.encode(params) if row is not None and params is not None else params
        request_id = next(self._ids)  # spec RPC-03: integer ids, never null or fractional
        pending = PendingRequest(self, request_id, method, row.result if row is not None else None)
        with self._pending_lock:
            if self._no_responses is not None:
                raise ConnectionClosed(self._no_responses)
            self._pending[request_id] = pending
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        # spec RPC-19: methods with no required params are sent {} rather than no params.
        message["params"] = wire_params if wire_params is not None else {}
        try:
            self._write(message)
        except BaseException:
            with self._pending_lock:
                self._pending.pop(request_id, None)
            raise
        return pending

    def request(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Send a request and wait for its typed result (or raise ``RpcError`` & co)."""
        return self.request_async(method, params).result(timeout)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (never answered, spec OVERVIEW-09)."""
        row = self._methods.get(method)
        wire_params = codec.encode(params) if row is not None and params is not None else params
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        message["params"] = wire_params if wire_params is not None else {}
        self._write(message)

    def _send_cancel_request(self, request_id: Any) -> None:
        if self._cancel_method is None:
            return  # a peer that cancels its own way (MCP); the caller sends that itself
        try:
            self.notify(self._cancel_method, {"requestId": request_id})
        except ConnectionClosed:
            pass

    def _abandon(self, pending: PendingRequest) -> bool:
        """Give up waiting (a timeout): cancel the request; False if it was answered meanwhile."""
        with self._pending_lock:
            still = self._pending.pop(pending.id, None)
        if still is None:
            return False
        self._send_cancel_request(pending.id)
        return True

    def _send_response(
        self, ctx: RequestContext, result: Any = None, error: Optional[RpcError] = None
    ) -> None:
        if not ctx._claim_response():
            return
        with self._inbound_lock:
            # No longer in flight (the peer may reuse the id once it reads the answer), but
            # being written: a drain after the end of input waits for it.
            self._answers_writing += 1
            if self._inbound.get(ctx.id) is ctx:
                del self._inbound[ctx.id]
        try:
            self._write_response(ctx, result, error)
        finally:
            with self._inbound_lock:
                self._answers_writing -= 1
                if self._no_responses is not None:  # draining after the end of input
                    self._inbound_lock.notify_all()

    def _write_response(self, ctx: RequestContext, result: Any, error: Optional[RpcError]) -> None:
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": ctx.id}
        if error is not None:
            message["error"] = error.to_wire()
        else:
            message["result"] = result
        try:
            self._write(message)
        except _TooLarge as exc:
            # Our handler's answer is over the line bound: the request fails, with the figures.
            log.warning("%s: %s answer refused: %s", self.name, ctx.method, exc.message)
            self._send_internal_error(ctx.id, exc.message, exc.data)
        except LocalProtocolError as exc:
            # Our own handler's answer breaks a rule: answer with the error that says which.
            log.error("%s: %s answer refused: %s", self.name, ctx.method, exc)
            self._send_internal_error(ctx.id, f"Internal error: {exc}", {"clause": exc.clause})
        except ConnectionClosed:
            log.debug("%s: response to %r not sent: connection closed", self.name, ctx.id)
        except (TypeError, ValueError, RecursionError) as exc:
            # The handler returned something that is not JSON (or nests too deep to write): our
            # own bug, answered -32603.
            log.error("%s: %s result is not JSON: %s", self.name, ctx.method, _short(exc))
            self._send_internal_error(ctx.id, "Internal error: the result is not JSON")

    def _send_internal_error(
        self, request_id: Any, message: str, data: Any = RpcError.NO_DATA
    ) -> None:
        """The -32603 that replaces an answer we could not send (RPC-06: exactly one answer)."""
        error = RpcError(ErrorCode.INTERNAL_ERROR, message, data)
        try:
            self._write(
                {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}, observe=False
            )
        except ConnectionClosed:
            pass

    def _send_error_raw(self, request_id: Any, error: RpcError, *, observe: bool = False) -> None:
        """Answer a line at the connection level (unparseable, invalid, refused by the rules).

        ``observe`` is False for lines the rules never saw (they could not be read as a
        message): their answer is not matched against any request there either.
        """
        try:
            self._write(
                {"jsonrpc": "2.0", "id": request_id, "error": error.to_wire()}, observe=observe
            )
        except ConnectionClosed:
            pass
        except LocalProtocolError as exc:  # pragma: no cover - an error answer breaks no rule
            log.error("%s: error answer refused: %s", self.name, exc)
        except (TypeError, ValueError, RecursionError) as exc:
            # Its data is not JSON (a value of the peer's echoed back): the answer goes without.
            log.error("%s: error data is not JSON: %s", self.name, _short(exc))
            self._send_error_raw(request_id, RpcError(error.code, error.message), observe=observe)

    # -- Receiving -------------------------------------------------------------------------------

    def _read_chunk(self, size: int) -> Optional[bytes]:
        # A caller that reads for its own answer may not block past its own timeout.
        if self._read_takes_timeout:
            return self._stream.read(size, self._crew.read_timeout())
        return self._stream.read(size)  # a stream of our user's that cannot wait with a timeout

    def _read_step(self) -> str:
        """Read one line (or event) and dispatch it; run by whichever thread holds the role."""
        assert self._lines is not None
        try:
            line = next(self._lines)
        except StopIteration:
            self._on_end_of_input("end of input")
            return READ_EOF
        except Exception as exc:  # noqa: BLE001 - a broken stream must still fail pending calls
            log.exception("%s: reading failed", self.name)
            self._on_end_of_input(f"reading failed: {exc}")
            return READ_EOF
        if line is INTERRUPTED:
            return READ_INTERRUPTED
        if isinstance(line, Oversize):
            self._on_oversize(line)
            return READ_MORE
        if self._recorder is not None:
            self._recorder("in", line)
        try:
            self._on_line(line)
        except Exception:  # noqa: BLE001 - one bad line must not stop the connection
            log.exception("%s: dispatching a line failed", self.name)
        return READ_MORE

    def _on_oversize(self, event: Oversize) -> None:
        if self._recorder is not None:
            self._recorder("in", b"")  # keep message indices aligned with the peer's view
        self._refuse_unread(
            event.head,
            f"message of {event.size} bytes exceeds the line limit of "
            f"{self._max_line_bytes} bytes",
            {"size": event.size, "limit": self._max_line_bytes},
        )

    def _refuse_unread(self, head: bytes, why: str, data: Dict[str, Any]) -> None:
        """A line refused before decoding (over a bound): fail what it belonged to, if known.

        spec-gap oversize-line: the envelope is read from the line's first bytes
        (``acpref._bounds.peek_envelope``). A request is answered -32600 under its id; a
        response to one of our requests fails that request (-32603 with the figures), so its
        caller never waits for an answer that was dropped; anything else is answered -32600
        with ``id: null``, and the connection goes on.
        """
        request_id, kind = peek_envelope(head)
        valid = request_id is not NO_ID and _valid_id(request_id)
        if kind == "response" and valid:
            with self._pending_lock:
                pending = self._pending.pop(request_id, None)
            if pending is not None:
                log.warning("%s: the answer to %s (id %r) refused: %s",
                            self.name, pending.method, request_id, why)
                pending._fail(RpcError(ErrorCode.INTERNAL_ERROR, f"the answer was refused: {why}", data))
                return
        if kind == "request" and valid:
            with self._inbound_lock:
                in_use = request_id in self._inbound
            if not in_use:
                self._send_error_raw(request_id, RpcError(ErrorCode.INVALID_REQUEST, why, data))
                return
        self._send_error_raw(None, RpcError(ErrorCode.INVALID_REQUEST, why, data))

    def _on_line(self, line: bytes) -> None:
        if not line or line.isspace():
            return  # blank lines between messages carry nothing
        if len(line) > self._max_items:
            items = count_items(line, self._max_items)
            if items > self._max_items:
                # What a line costs decoded is bounded as well as its bytes: refused unread.
                self._refuse_unread(
                    line[:OVERSIZE_HEAD],
                    f"message of about {items} JSON values exceeds the limit of "
                    f"{self._max_items} values",
                    {"items": items, "limit": self._max_items},
                )
                return
        value, unparsed = envelope.decode(line)
        if unparsed is not None:
            self._send_error_raw(None, _refusal(unparsed))  # spec RPC-10: -32700, id null
            return
        if type(value) is dict:
            self._on_message(value)
        else:
            self._refuse(envelope.inspect(value))  # a batch, or JSON that is no message

    def _refuse(self, env: envelope.Envelope) -> None:
        """Answer a line the envelope refuses (``Envelope.answer``), at the connection level."""
        answer = env.answer
        if answer is not None:
            reply_id, fault = answer
            self._send_error_raw(reply_id, _refusal(fault))

    def _on_message(self, message: Dict[str, Any]) -> None:
        env = envelope.inspect(message)
        kind = env.kind
        if kind is envelope.RESPONSE or (kind is envelope.INVALID and self._is_pending(env.id)):
            self._on_response(message, env)
            return
        refusal = env.refusal
        if refusal is not None:
            if kind is envelope.NOTIFICATION:
                # spec OVERVIEW-09: a notification is never answered, even a malformed one.
                log.warning("%s: dropped invalid notification: %s", self.name, refusal.message)
            else:
                self._refuse(env)
            return
        method: str = env.method
        if self._observer is not None:
            refused = self._observe_receive(message)
            if refused is not None:
                if kind is envelope.REQUEST:
                    self._send_error_raw(env.id, refused, observe=True)
                else:
                    log.warning("%s: dropped %s notification: %s", self.name, method, refused.message)
                return
        if kind is envelope.REQUEST:
            self._on_request(method, env.id, message.get("params"))
        else:
            self._on_notification(method, message.get("params"))

    def _on_request(self, method: str, request_id: Any, params: Any) -> None:
        ctx = RequestContext(self, method, request_id)
        with self._inbound_lock:
            duplicate = request_id in self._inbound
            if not duplicate:
                self._inbound[request_id] = ctx
        if duplicate:
            # spec-gap duplicate-id: a second request reusing an id still in flight is refused,
            # so that each id keeps exactly one answer to its first request.
            self._send_error_raw(
                request_id,
                RpcError(ErrorCode.INVALID_REQUEST, f"request id {request_id!r} is already in use"),
                observe=True,
            )
            return
        if not self._crew.submit(lambda: self._run_request(ctx, params)):
            # spec RPC-15 / CANCEL-07: aborted by a resource limit -> -32800.
            self._send_response(
                ctx,
                error=RpcError(
                    ErrorCode.REQUEST_CANCELLED, "too many requests in progress; try again"
                ),
            )

    def _run_request(self, ctx: RequestContext, params: Any) -> None:
        method = ctx.method
        row = self._methods.get(method)
        handler = self._handlers.get(method)
        try:
            if ctx.cancelled.is_set() and ctx.answer_on_cancel:
                raise RpcError.cancelled()
            if row is not None and row.is_notification:
                raise RpcError.method_not_found(method)  # a notification method sent as a request
            if handler is None:
                if self._fallback is None:
                    raise RpcError.method_not_found(method)  # spec RPC-12, EXT-08
                result = self._fallback(method, params, ctx)
            elif row is not None:
                # spec RPC-19: omitted or null params read as {}.
                typed = codec.decode({} if params is None else params, row.params, root="params")
                result = codec.encode(handler(typed, ctx))
            else:
                result = handler(params, ctx)
            self._send_response(ctx, result=result)
        except RpcError as exc:
            self._send_response(ctx, error=exc)
        except codec.DecodeError as exc:
            self._send_response(ctx, error=exc.to_rpc_error())  # spec RPC-13
        except LocalProtocolError as exc:
            # The handler itself broke a rule (our bug, not the peer's): spec RPC-14, -32603.
            log.error("%s: handler for %s broke a rule: %s", self.name, method, exc)
            self._send_response(
                ctx,
                error=RpcError(
                    ErrorCode.INTERNAL_ERROR, f"Internal error: {exc}", {"clause": exc.clause}
                ),
            )
        except ProtocolError as exc:
            self._send_response(ctx, error=exc.to_rpc_error())
        except ConnectionClosed:
            pass
        except Exception as exc:  # noqa: BLE001 - spec RPC-14: -32603, and the connection lives on
            log.exception("%s: handler for %s failed", self.name, method)
            self._send_response(
                ctx, error=RpcError(ErrorCode.INTERNAL_ERROR, f"Internal error: {_short(exc)}")
            )
        finally:
            self._forget_inbound(ctx)

    def _forget_inbound(self, ctx: RequestContext) -> None:
        with self._inbound_lock:
            if self._inbound.get(ctx.id) is ctx:
                del self._inbound[ctx.id]
                if self._no_responses is not None:  # draining after the end of input
                    self._inbound_lock.notify_all()

    def _on_notification(self, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST:
            self._on_cancel_request(params)
            return
        handler = self._handlers.get(method)
        row = self._methods.get(method)
        if row is not None and not row.is_notification:
            # spec OVERVIEW-01, OVERVIEW-09: a request method without an id is neither a request
            # (no answer could be correlated) nor a notification: dropped, never run. Bug found
            # by tests/test_fuzz.py: a session/load without an id ran, and replayed the history.
            log.warning("%s: dropped %s without an id (it is a request method)", self.name, method)
            return
        if handler is None and (self._fallback is None or row is not None):
            # spec EXT-10, CANCEL-02: unknown notifications (and unhandled `$/` ones) are ignored.
            log.debug("%s: ignored notification %s", self.name, method)
            return
        ctx = RequestContext(self, method, _NO_ID)
        # Run here, on the reading thread: in wire order, and before anything read after it.
        try:
            if handler is None:
                assert self._fallback is not None
                self._fallback(method, params, ctx)
            elif row is not None:
                handler(
                    codec.decode({} if params is None else params, row.params, root="params"), ctx
                )
            else:
                handler(params, ctx)
        except RpcError as exc:
            if exc.code != ErrorCode.METHOD_NOT_FOUND:
                log.warning("%s: %s notification failed: %s", self.name, method, exc)
        except (codec.DecodeError, ProtocolError) as exc:
            # spec OVERVIEW-09: never answered, only logged. spec NOTICE-09: one update that does
            # not decode (a malformed notice) is dropped; the session and connection go on.
            log.warning("%s: dropped %s notification: %s", self.name, method, exc)
        except ConnectionClosed:
            pass
        except Exception:  # noqa: BLE001 - a notification handler's crash is logged, not fatal
            log.exception("%s: %s notification handler failed", self.name, method)

    def _on_cancel_request(self, params: Any) -> None:
        request_id = params.get("requestId", _NO_ID) if isinstance(params, dict) else _NO_ID
        ctx = None
        if _valid_id(request_id):  # an object or array id is no key (and no request of ours)
            with self._inbound_lock:
                ctx = self._inbound.get(request_id)
        if ctx is None:
            # spec CANCEL-06: an unknown or finished request id is silently ignored.
            log.debug("%s: $/cancel_request for unknown id %r", self.name, request_id)
            return
        ctx.cancelled.set()
        if ctx.answer_on_cancel:
            # spec CANCEL-05: the request still gets exactly one response: -32800.
            self._send_response(ctx, error=RpcError.cancelled())

    def _is_pending(self, request_id: Any) -> bool:
        if not _valid_id(request_id):
            return False
        with self._pending_lock:
            return request_id in self._pending

    def _on_response(self, message: Dict[str, Any], env: envelope.Envelope) -> None:
        request_id = env.id
        with self._pending_lock:
            pending = self._pending.pop(request_id, None) if _valid_id(request_id) else None
        if pending is None:
            # spec RPC-08: a response to no outstanding request is logged and dropped.
            log.warning("%s: dropped a response for unknown id %r", self.name, request_id)
            return
        for fault in env.faults:
            if fault.code is not None:
                # spec RPC-05, RPC-09: the answer is unusable; its caller learns why.
                pending._fail(RemoteProtocolError(fault.clause, fault.message))
                return
            log.warning("%s: response %r: %s (%s); accepted",
                        self.name, request_id, fault.message, fault.clause)
        if self._observer is not None:
            self._observe_receive(message)  # a failure of the rules is logged; the answer stands
        pending._resolve(message)

    # -- Ending ----------------------------------------------------------------------------------

    def _fail_pending(self, reason: str) -> None:
        """No response can come any more: fail every pending request, and refuse new ones."""
        message = f"connection {self.name} closed: {reason}"
        with self._pending_lock:
            if self._no_responses is None:
                self._no_responses = message
            pending = list(self._pending.values())
            self._pending.clear()
        for p in pending:
            p._fail(ConnectionClosed(message))

    def _close_soon(self, reason: str) -> None:
        """Close on a thread of its own (the caller may be one that close() joins)."""
        if not self._closing:
            threading.Thread(
                target=self.close, args=(reason,), name=f"{self.name}-closer", daemon=True
            ).start()

    def _on_dead_peer(self, reason: str) -> None:
        # A write failed: nothing more can be sent. Fail our pending calls now; the reader
        # ends on its own (or close() stops it).
        self._fail_pending(reason)
        self._close_soon(reason)

    def _on_end_of_input(self, reason: str) -> None:
        # Nothing more will be read, so no pending request can be answered: fail them at once,
        # and any request sent from now on too.
        self._fail_pending(reason)
        self._crew.end_of_input()
        if self._on_eof_hook is not None:
            try:
                self._on_eof_hook(self)  # the agent side cancels its turns here
            except Exception:  # noqa: BLE001 - the drain and the close go on
                log.exception("%s: end-of-input hook failed", self.name)
        if not self._closing:
            threading.Thread(
                target=self._drain_then_close,
                args=(reason,),
                name=f"{self.name}-drain",
                daemon=True,
            ).start()

    def _drain_then_close(self, reason: str) -> None:
        # spec-gap end-of-input: requests already received are still served (the peer may be
        # waiting for them on its read side) for up to drain_timeout, then the connection closes.
        deadline = time.monotonic() + self._drain_timeout
        with self._inbound_lock:
            # Bug found (tests/test_fuzz.py): waiting for _inbound alone closed the stream under
            # an answer still being written (a large one blocks on the pipe), and it was lost.
            while (self._inbound or self._answers_writing) and not self._closing:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._inbound_lock.wait(remaining)
        self.close(reason)


class _TooLarge(RpcError):
    """A message of ours over the line bound: never written."""


def _too_large(what: str, size: int, limit: int) -> _TooLarge:
    return _TooLarge(
        ErrorCode.INTERNAL_ERROR,
        f"the {what} is {size} bytes once encoded, more than the line limit of {limit} bytes",
        {"size": size, "limit": limit},
    )


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
