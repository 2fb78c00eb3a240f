"""The JSON-RPC connection: one peer over a byte stream, reading as a role, answers matched by id.

Spec: overview.mdx (Communication Model, Error Handling), transports.mdx, cancellation.mdx;
clauses OVERVIEW-01, OVERVIEW-08, OVERVIEW-09, RPC-01 .. RPC-20, TRANSPORT-01, TRANSPORT-04,
TRANSPORT-05, CANCEL-01 .. CANCEL-07, EXT-06 .. EXT-10. How it works, and each decision where the
spec is silent: spec_notes/connection.md.

One object, one file. ``Connection`` is what a message meets between the stream and the
handlers, in the order a message travels: **calling** the peer (a request is opened, written,
waited for), **reading** (a line in, its bounds and its envelope judged), what is read, by kind
(a **request** admitted and run on a host thread, a **notification** run here in wire order, a
**response** waking its caller), **writing** (one encoded line under one lock, the one answer
of each request), and the **ending** (end of input, a dead peer, ``close``). What it holds apart
owns its own state and lock, and is set by nobody else: the two books of ``acpref._shell.calls``
(``Outstanding``, our requests waiting for their answers; ``InFlight``, the peer's requests not
answered yet and what they hold decoded), the threads (``acpref._shell.threads.Crew``) and the
line splitter (``acpref._shell.framing``).

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

Bad input never stops the connection: an unparseable line is answered -32700 (``id: null``), an
invalid envelope -32600, an oversize line -32600, an unknown method -32601, a handler's crash
-32603; a notification is never answered, whatever its state (OVERVIEW-09). End of input, a dead
peer, or ``close()`` fail every pending request at once with ``ConnectionClosed``.

This layer knows JSON-RPC and the methods table, not the protocol's rules: what a line is comes
from the protocol core (``acpref._core.envelope``), and the agent and client sides plug the
rules in as the observer (``acpref._shell.observer``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Callable, Collection, Dict, Iterator, Mapping, Optional, cast

from .. import codec
from .._bounds import MAX_DEPTH, count_items, held_cost, nesting, peek_envelope
from .._core import envelope
from .._core.cancellation import CancelReply, reply_to_cancel_request
from ..errors import (
    ConnectionClosed,
    ErrorCode,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    RpcError,
)
from ..methods import CANCEL_REQUEST, METHODS, Method
from .calls import (
    Handler,
    InFlight,
    Observer,
    Outstanding,
    Peer,
    PendingRequest,
    Recorder,
    RequestContext,
)
from .threads import READ_EOF, READ_INTERRUPTED, READ_MORE, Crew
from .transport import (
    INTERRUPTED,
    OVERSIZE_HEAD,
    LineSplitter,
    Oversize,
    Stream,
    read_accepts_timeout,
)

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

_NO_ID = envelope.NO_ID  # a message without an "id" key (a notification), apart from "id": null
_valid_id = envelope.valid_id  # spec RPC-02: a string, an integer or null


class Connection:
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
        self._recorder = recorder
        self._observer = observer
        self._on_close = on_close
        self._on_eof_hook = on_end_of_input
        self._drain_timeout = drain_timeout
        self._methods, self._cancel_method = methods, cancel_method
        self._answers_own_cancel = frozenset(answers_own_cancel)

        #: This connection as its handlers' contexts name it (``RequestContext.connection``).
        self._peer = cast(Peer, self)
        self._calls = Outstanding()  # our requests, waiting for their answers
        self._inbound = InFlight(max_held_bytes)  # the peer's requests, not answered yet
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

    # -- Lifecycle ---------------------------------------------------------------------------------

    def start(self) -> "Connection":
        """Start reading (a host thread keeps watch until a caller waits). Returns self."""
        if not self._started:
            self._started = True
            # A recording stream (acpref.testing) records the lines we frame: cut once.
            recorder = getattr(self._stream, "framed_by_reader", None)
            seen = recorder() if recorder is not None else None
            self._lines = iter(LineSplitter(self._read_chunk, self._max_line_bytes, seen))
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
        for ctx in self._inbound.running():
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

    # -- Calling the peer --------------------------------------------------------------------------

    def request_async(self, method: str, params: Any = None) -> PendingRequest:
        """Send a request; return its ``PendingRequest`` at once."""
        row = self._methods.get(method)
        wire_params = codec.encode(params) if row is not None and params is not None else params
        pending = self._calls.open(self, method, row.result if row is not None else None)
        # spec OVERVIEW-11: the JSON-RPC 2.0 members, under their own names and meanings.
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": pending.id, "method": method}
        # spec RPC-19: methods with no required params are sent {} rather than no params.
        message["params"] = wire_params if wire_params is not None else {}
        try:
            self._write(message)
        except BaseException:
            self._calls.take(pending.id)
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
        if self._calls.take(pending.id) is None:
            return False
        self._send_cancel_request(pending.id)
        return True

    # -- Reading: one line, on whichever thread holds the reading role -----------------------------

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
            self._recorder("in", event)  # its size: message indices stay aligned with the peer's
        self._refuse_unread(
            event.head,
            event.tail,
            f"message of {event.size} bytes exceeds the line limit of "
            f"{self._max_line_bytes} bytes",
            {"size": event.size, "limit": self._max_line_bytes},
        )

    def _refuse_unread(self, head: bytes, tail: bytes, why: str, data: Dict[str, Any]) -> None:
        """A line refused before decoding (over a bound): fail what it belonged to, if known.

        spec-gap oversize-line: the envelope is read from the line's first and last bytes
        (``acpref._bounds.peek_envelope``). A request is answered -32600 under its id; a
        response to one of our requests fails that request (-32603 with the figures), so its
        caller never waits for an answer that was dropped; any other response is dropped;
        anything else is answered -32600 with ``id: null``, and the connection goes on.
        """
        request_id, kind = peek_envelope(head, tail)
        valid = request_id is not _NO_ID and _valid_id(request_id)
        if kind == "response":
            pending = self._calls.take(request_id)
            if pending is not None:
                log.warning("%s: the answer to %s (id %r) refused: %s",
                            self.name, pending.method, request_id, why)
                refused = RpcError(ErrorCode.INTERNAL_ERROR, f"the answer was refused: {why}", data)
                pending._refuse(refused)
            else:
                # spec-gap response-without-id: a response is never answered (RPC-08: dropped).
                log.warning("%s: dropped a response %s: %s", self.name, _which(request_id), why)
            return
        if kind == "request" and valid:
            if request_id not in self._inbound:
                self._send_error_raw(request_id, RpcError(ErrorCode.INVALID_REQUEST, why, data))
                return
        self._send_error_raw(None, RpcError(ErrorCode.INVALID_REQUEST, why, data))

    def _on_line(self, line: bytes) -> None:
        if envelope.blank(line):
            return  # spec-gap blank-line: carries no message, so nothing to answer
        if len(line) > self._max_items:
            items = count_items(line, self._max_items)
            if items > self._max_items:
                # What a line costs decoded is bounded as well as its bytes: refused unread.
                self._refuse_unread(
                    line[:OVERSIZE_HEAD],
                    line[-OVERSIZE_HEAD:],
                    f"message of about {items} JSON values exceeds the limit of "
                    f"{self._max_items} values",
                    {"items": items, "limit": self._max_items},
                )
                return
        depth = nesting(line, MAX_DEPTH)
        if depth:
            # spec RPC-10: -32700, id null. spec-gap nesting-bound: nested deeper than MAX_DEPTH
            # is more than this receiver parses (RFC 8259, 9), the same for every reader.
            why = f"Parse error: nested {depth} levels deep, more than the limit of {MAX_DEPTH}"
            data = {"clause": "RPC-10", "depth": depth, "limit": MAX_DEPTH}
            error = RpcError(ErrorCode.PARSE_ERROR, f"{why} [spec RPC-10]", data)
            self._send_error_raw(None, error)
            return
        value, unparsed = envelope.decode(line)
        if unparsed is not None:
            self._send_error_raw(None, _refusal(unparsed))  # spec RPC-10: -32700, id null
            return
        if type(value) is dict:
            self._on_message(value, line)
        else:
            self._refuse(envelope.inspect(value))  # a batch, or JSON that is no message

    def _refuse(self, env: envelope.Envelope) -> None:
        """Answer a line the envelope refuses (``Envelope.answer``), at the connection level."""
        answer = env.answer
        if answer is not None:
            reply_id, fault = answer
            self._send_error_raw(reply_id, _refusal(fault))

    def _on_message(self, message: Dict[str, Any], line: bytes) -> None:
        env = envelope.inspect(message)
        kind = env.kind
        if kind is envelope.RESPONSE or (kind is envelope.INVALID and env.id in self._calls):
            self._on_response(message, env)
            return
        refusal = env.refusal if env.faults else None  # nearly every message is sound
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
                    log.warning(
                        "%s: dropped %s notification: %s", self.name, method, refused.message
                    )
                return
        if kind is envelope.REQUEST:
            self._on_request(method, env.id, message.get("params"), held_cost(line))
        else:
            self._on_notification(method, message.get("params"))

    # -- A request received: admitted, run on a host thread, answered once -------------------------

    def _on_request(self, method: str, request_id: Any, params: Any, cost: int) -> None:
        ctx = RequestContext(self._peer, method, request_id)
        # Decided as the request is read, before any $/cancel_request of it can be (CANCEL-05:
        # _on_cancel_request asks the core whether the handler answers).
        ctx.answer_on_cancel = method not in self._answers_own_cancel
        refused = self._inbound.admit(ctx, cost)  # a duplicate id, or over max_held_bytes
        if refused is not None:
            self._send_error_raw(request_id, refused, observe=True)
            return
        if not self._crew.submit(lambda: self._run_held(ctx, params, cost)):
            self._inbound.release(cost)
            # spec RPC-15 / CANCEL-07: aborted by a resource limit -> -32800.
            self._send_response(
                ctx,
                error=RpcError(
                    ErrorCode.REQUEST_CANCELLED, "too many requests in progress; try again"
                ),
            )

    def _run_held(self, ctx: RequestContext, params: Any, cost: int) -> None:
        try:
            self._run_request(ctx, params)
        finally:
            self._inbound.release(cost)  # the handler is done with its params

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
            self._inbound.forget(ctx)

    # -- A notification received: run here, in wire order ------------------------------------------

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
        ctx = RequestContext(self._peer, method, _NO_ID)
        # Run here, on the reading thread: in wire order, and before anything read after it.
        outermost = not self._crew.holding
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
        finally:
            if outermost and self._crew.holding:
                self._crew.notification_done()  # answers its calls read for others go out now

    def _on_cancel_request(self, params: Any) -> None:
        request_id = params.get("requestId", _NO_ID) if isinstance(params, dict) else _NO_ID
        ctx = None
        if _valid_id(request_id):  # an object or array id is no key (and no request of ours)
            ctx = self._inbound.get(request_id)
        # What to do is the protocol core's decision (CANCEL-05, CANCEL-06: _core/cancellation).
        reply = reply_to_cancel_request(
            ctx is not None, ctx is not None and not ctx.answer_on_cancel
        )
        if reply is CancelReply.IGNORE:
            log.debug("%s: $/cancel_request for unknown id %r", self.name, request_id)
            return
        assert ctx is not None, "the core answers only a request in flight"
        ctx.cancelled.set()
        if reply is CancelReply.ANSWER_CANCELLED:
            self._send_response(ctx, error=RpcError.cancelled())

    # -- A response received: its caller wakes -----------------------------------------------------

    def _on_response(self, message: Dict[str, Any], env: envelope.Envelope) -> None:
        request_id = env.id
        pending = self._calls.take(request_id)
        if pending is None:
            # spec RPC-08: a response to no outstanding request is logged and dropped, never
            # answered (spec-gap response-without-id: nor one without an id).
            log.warning("%s: dropped a response %s", self.name, _which(request_id))
            return
        for fault in env.faults:
            if fault.code is not None:
                # spec RPC-05, RPC-09: the answer is unusable; its caller learns why.
                pending._refuse(RemoteProtocolError(fault.clause, fault.message))
                return
            log.warning("%s: response %r: %s (%s); accepted",
                        self.name, request_id, fault.message, fault.clause)
        if self._observer is not None:
            self._observe_receive(message)  # a failure of the rules is logged; the answer stands
        pending._resolve(message)

    # -- Writing -----------------------------------------------------------------------------------

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

    def _send_response(
        self, ctx: RequestContext, result: Any = None, error: Optional[RpcError] = None
    ) -> None:
        if not ctx._claim_response():
            return
        # No longer in flight (the peer may reuse the id once it reads the answer), but being
        # written: a drain after the end of input waits for it.
        self._inbound.answering(ctx)
        try:
            self._write_response(ctx, result, error)
        finally:
            self._inbound.answered()

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

    # -- Ending ------------------------------------------------------------------------------------

    def _fail_pending(self, reason: str) -> None:
        """No response can come any more: fail every pending request, and refuse new ones."""
        self._calls.fail_all(f"connection {self.name} closed: {reason}")

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
        self._inbound.drain(deadline, lambda: self._closing)
        self.close(reason)


class _TooLarge(RpcError):
    """A message of ours over the line bound: never written."""


def _too_large(what: str, size: int, limit: int) -> _TooLarge:
    return _TooLarge(
        ErrorCode.INTERNAL_ERROR,
        f"the {what} is {size} bytes once encoded, more than the line limit of {limit} bytes",
        {"size": size, "limit": limit},
    )


def _refusal(fault: envelope.Fault) -> RpcError:
    """The error that answers a line the envelope refuses, naming the clause."""
    assert fault.code is not None
    return RpcError(fault.code, f"{fault.message} [spec {fault.clause}]", {"clause": fault.clause})


def _which(request_id: Any) -> str:
    """A dropped response, named in the log by its id."""
    if request_id is _NO_ID:
        return "without an id"
    return f"for unknown id {request_id!r}"


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
