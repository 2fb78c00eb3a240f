"""The JSON-RPC connection: reading as a role, requests on host threads, responses matched by id.

Spec: overview.mdx (Communication Model), transports.mdx, cancellation.mdx; clauses OVERVIEW-01,
OVERVIEW-08, OVERVIEW-09, RPC-01 .. RPC-20, TRANSPORT-01, TRANSPORT-04, TRANSPORT-05,
CANCEL-01 .. CANCEL-07, EXT-06 .. EXT-10. How it works, and each decision where the spec is
silent: spec_notes/connection.md.

How the threads divide the work (``acpref._shell.threads`` explains why, with measurements):

* Reading is a role one thread holds at a time. A caller waiting for its own response reads
  until it comes; when nobody waits, one of the connection's host threads keeps watch and reads.
* Each inbound **request** runs on a host thread that does not hold the reading role, so a
  handler may call the peer and wait (a prompt handler asking ``session/request_permission``)
  without deadlock. A host that reads a request passes the role to another host and runs it
  (leader/follower). Past ``max_handlers`` running at once, requests queue; past ``max_queued``
  waiting, or past ``max_held_bytes`` of decoded params held by all of them together, they are
  answered -32800 at once (spec RPC-15: a request aborted by a resource limit).
* Inbound **notifications** run on the thread that read them, at once: one after another in wire
  order, and all of those received before a response are handled before its caller gets it (the
  ``session/update``s of a turn are all delivered before ``prompt`` returns). A notification
  handler may call the peer, but must not block on anything else.
* Writes take one lock around the write of an already encoded line.

The parts: this module holds the connection's lifecycle, its writing half and its ending;
``acpref._shell.inbound`` its reading half (the reader and dispatch); ``acpref._shell.calls`` a request as
each end holds it (``RequestContext``, ``PendingRequest``, re-exported here).

Bad input never stops the connection: an unparseable line is answered -32700 (``id: null``), an
invalid envelope -32600, an oversize line -32600, an unknown method -32601, a handler's crash
-32603; a notification is never answered, whatever its state (OVERVIEW-09). End of input, a dead
peer, or ``close()`` fail every pending request at once with ``ConnectionClosed``.

This layer knows JSON-RPC and the methods table, not the protocol's rules: what a line is comes
from the protocol core (``acpref._core.envelope``), and the agent and client sides plug the
rules in as the observer (``acpref._core``).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from typing import Any, Callable, Collection, Dict, Iterator, Mapping, Optional

from .. import codec
from ..errors import ConnectionClosed, ErrorCode, LocalProtocolError, RpcError
from ..methods import CANCEL_REQUEST, METHODS, Method
from .calls import Handler, Observer, PendingRequest, Recorder, RequestContext
from .inbound import Inbound, _short
from .threads import Crew
from .transport import LineSplitter, Stream, read_accepts_timeout

__all__ = [
    "Connection",
    "RequestContext",
    "PendingRequest",
    "Handler",
    "Recorder",
    "Observer",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_HELD_BYTES",
]

log = logging.getLogger("acpref.connection")

#: Default bound on one line: 64 MiB (peers broke at 64 KiB; the issue asks for >= 32 MiB).
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: Default bound on the JSON values of one message (``acpref._bounds.count_items``): what a line
#: may cost once decoded. 1 000 000 tiny values cost about 70 MiB decoded; without the bound a
#: line of 64 MiB could cost 1.5 GiB.
DEFAULT_MAX_ITEMS = 1_000_000
#: Default bound on what the requests received and not finished (running or waiting) cost at
#: once, decoded (``acpref._bounds.held_cost``): a message at both bounds above costs about
#: 160 MiB, so one is always taken alone, and thousands of ordinary ones fit together.
DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024

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


class Connection(Inbound):
    """A JSON-RPC 2.0 peer over a byte stream: ACP's newline-delimited framing.

    ``handlers`` maps method names to ``handler(params, ctx)``; table methods get decoded params
    (lenient codec) and return a model, extension methods get raw JSON and return raw JSON.
    ``fallback`` (optional) gets ``(method, params, ctx)`` for methods not in ``handlers``; it
    raises ``RpcError.method_not_found`` for those it does not know either. ``methods`` is the
    table that types params and results (ACP's by default; another JSON-RPC protocol spoken
    with this class, such as MCP, passes its own or ``{}`` for raw JSON throughout), and
    ``cancel_method`` the notification that cancels a request (``None``: none is sent).
    ``answers_own_cancel`` names the methods whose handlers answer a cancellation themselves,
    from the moment the request is read (their ``ctx.answer_on_cancel`` starts False, so a
    ``$/cancel_request`` that arrives before the handler starts is not answered -32800 for it).
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
        max_held_bytes: int = DEFAULT_MAX_HELD_BYTES,
        max_handlers: int = 64,
        max_queued: int = 1024,
        recorder: Optional[Recorder] = None,
        observer: Optional[Observer] = None,
        on_close: Optional[Callable[["Connection"], None]] = None,
        on_end_of_input: Optional[Callable[["Connection"], None]] = None,
        drain_timeout: float = 5.0,
        methods: Mapping[str, Method] = METHODS,
        cancel_method: Optional[str] = CANCEL_REQUEST,
        answers_own_cancel: Collection[str] = (),
    ) -> None:
        self.name = name
        self._stream = stream
        self._handlers: Dict[str, Handler] = dict(handlers or {})
        self._fallback = fallback
        self._max_line_bytes = max_line_bytes
        self._max_items = max_items
        self._max_held_bytes = max_held_bytes
        self._recorder = recorder
        self._observer = observer
        self._on_close = on_close
        self._on_eof_hook = on_end_of_input
        self._drain_timeout = drain_timeout
        self._methods, self._cancel_method = methods, cancel_method
        self._answers_own_cancel = frozenset(answers_own_cancel)

        self._ids = itertools.count(1)
        self._pending: Dict[Any, PendingRequest] = {}
        #: Why no response can come any more (end of input, a dead peer, close): set once, under
        #: ``_pending_lock``, when the pending requests are failed; new requests then fail at once.
        self._no_responses: Optional[str] = None
        self._pending_lock = threading.Lock()
        self._init_inbound()
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
        data += b"\n"  # spec TRANSPORT-04: one message per line, ended by a newline
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
        # spec OVERVIEW-11: the JSON-RPC 2.0 members, under their own names and meanings.
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
        # spec RPC-04: the request's id exactly as it was read, the same value and JSON type.
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


