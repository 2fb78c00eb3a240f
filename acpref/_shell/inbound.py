"""The reading half of a connection: a line in, its envelope judged, the message dispatched.

Spec: overview.mdx (Communication Model, Error Handling), transports.mdx, cancellation.mdx;
clauses OVERVIEW-01, OVERVIEW-09, RPC-05 .. RPC-15, RPC-19, TRANSPORT-01, CANCEL-02, CANCEL-05,
CANCEL-06, EXT-08, EXT-10. Part of the threaded shell: ``Inbound`` is the half of
``acpref.connection.Connection`` that runs on whichever thread holds the reading role.

What a line is, and what is wrong with it, is the protocol core's verdict
(``acpref._core.envelope``); this half carries it out: a refused line is answered at once, a
request goes to a host thread, a notification runs here in wire order, a response wakes its
caller. Answers are written by the other half (``Connection._send_response``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Dict, FrozenSet, Iterator, Mapping, Optional, cast

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
from ..methods import CANCEL_REQUEST, Method
from .calls import Handler, Observer, Peer, PendingRequest, Recorder, RequestContext
from .threads import READ_EOF, READ_INTERRUPTED, READ_MORE, Crew
from .transport import INTERRUPTED, OVERSIZE_HEAD, Oversize, Stream

log = logging.getLogger("acpref.connection")

_NO_ID = envelope.NO_ID  # a message without an "id" key (a notification), apart from "id": null
_valid_id = envelope.valid_id  # spec RPC-02: a string, an integer or null


class Inbound:
    """Reading and dispatch; mixed into ``Connection``, which sets these up and writes."""

    # Set by Connection.__init__ (see there).
    name: str
    _stream: Stream
    _handlers: Dict[str, Handler]
    _fallback: Optional[Callable[[str, Any, RequestContext], Any]]
    _methods: Mapping[str, Method]
    _recorder: Optional[Recorder]
    _observer: Optional[Observer]
    _max_line_bytes: int
    _max_items: int
    _max_held_bytes: int
    _answers_own_cancel: FrozenSet[str]
    _read_takes_timeout: bool
    _crew: Crew
    _lines: Optional[Iterator[Any]]
    _pending: Dict[Any, PendingRequest]
    _pending_lock: threading.Lock
    _no_responses: Optional[str]
    # Written by Connection.
    _write: Callable[..., None]
    _send_response: Callable[..., None]
    _observe_receive: Callable[[Dict[str, Any]], Optional[RpcError]]
    _on_end_of_input: Callable[[str], None]

    def _init_inbound(self) -> None:
        #: This connection as its handlers' contexts name it (``RequestContext.connection``).
        self._peer = cast(Peer, self)
        #: Requests received and not answered yet, by id.
        self._inbound: Dict[Any, RequestContext] = {}
        self._inbound_lock = threading.Condition()  # notified when a request is answered
        #: Answers being written now (their requests already left ``_inbound``, so that the peer
        #: may reuse the id as soon as it reads the answer); guarded by ``_inbound_lock``.
        self._answers_writing = 0
        #: What the requests received and not finished cost decoded (``acpref._bounds.held_cost``,
        #: bounded by ``max_held_bytes``); guarded by ``_inbound_lock``.
        self._held_bytes = 0


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
            with self._pending_lock:
                pending = self._pending.pop(request_id, None) if valid else None
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
            with self._inbound_lock:
                in_use = request_id in self._inbound
            if not in_use:
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
        if kind is envelope.RESPONSE or (kind is envelope.INVALID and self._is_pending(env.id)):
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

    def _on_request(self, method: str, request_id: Any, params: Any, cost: int) -> None:
        ctx = RequestContext(self._peer, method, request_id)
        # Decided as the request is read, before any $/cancel_request of it can be (CANCEL-05:
        # _on_cancel_request asks the core whether the handler answers).
        ctx.answer_on_cancel = method not in self._answers_own_cancel
        with self._inbound_lock:
            duplicate = request_id in self._inbound
            held = self._held_bytes
            # One request alone is always taken (its line and values are bounded already).
            over = held > 0 and held + cost > self._max_held_bytes
            if not duplicate and not over:
                self._inbound[request_id] = ctx
                self._held_bytes = held + cost
        if over and not duplicate:
            # spec RPC-15 / CANCEL-07: aborted by a resource limit -> -32800. What the requests
            # held at once cost decoded is bounded, whatever each one's size on the wire.
            self._send_error_raw(
                request_id,
                RpcError(
                    ErrorCode.REQUEST_CANCELLED,
                    f"the requests in progress hold about {held} bytes; with this one's about "
                    f"{cost} that passes the limit of {self._max_held_bytes}; try again",
                    {"held": held, "cost": cost, "limit": self._max_held_bytes},
                ),
                observe=True,
            )
            return
        if duplicate:
            # spec-gap duplicate-id: a second request reusing an id still in flight is refused,
            # so that each id keeps exactly one answer to its first request.
            self._send_error_raw(
                request_id,
                RpcError(ErrorCode.INVALID_REQUEST, f"request id {request_id!r} is already in use"),
                observe=True,
            )
            return
        if not self._crew.submit(lambda: self._run_held(ctx, params, cost)):
            self._release(cost)
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
            self._release(cost)  # the handler is done with its params

    def _release(self, cost: int) -> None:
        with self._inbound_lock:
            self._held_bytes -= cost

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
            with self._inbound_lock:
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
