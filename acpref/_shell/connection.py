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

How the threads divide the work is ``acpref._shell.threads``'s (why, with measurements): reading
is a role one thread holds at a time (a caller waiting for its own answer, else a host thread);
an inbound **request** runs on a host thread that does not read, so its handler may call the
peer and wait; past ``max_handlers`` running, requests queue, and past ``max_queued`` waiting, or
``max_held_bytes`` of decoded params held by all of them (``acpref._shell.calls.InFlight``),
they are answered -32800 at once (spec RPC-15: aborted by a resource limit). An inbound
**notification** runs on the thread that read it, in wire order, before any response read after
it reaches its caller; its handler may call the peer, but must not block on anything else.
Writes take one lock around the write of an already encoded line (``acpref._shell.encoder``).

Bad input never stops the connection: an unparseable line is answered -32700 (``id: null``), an
invalid envelope -32600, a line over a bound -32600 or nested too deep -32700, unread
(``acpref._shell.refusals``), an unknown method -32601, a handler's crash -32603; a
notification is never answered, whatever its state (OVERVIEW-09). End of input, a dead peer, or
``close()`` fail every pending request at once with ``ConnectionClosed``.

This layer knows JSON-RPC and the methods table, not the protocol's rules: what a line is comes
from the protocol core (``acpref._core.envelope``), and the agent and client sides plug the
rules in as the observer (``acpref._shell.observer``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Collection, Dict, Iterator, Mapping, Optional, cast

from .. import codec
from .._bounds import (
    DEFAULT_MAX_HELD_BYTES,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE_BYTES,
    held_cost,
)
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
from .encoder import TooLarge, answer, call, encode_line
from .refusals import Unread, before_decoding, over_line_bound
from .threads import READ_EOF, READ_INTERRUPTED, READ_MORE, Crew
from .transport import INTERRUPTED, LineSplitter, Oversize, Stream, read_accepts_timeout

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
            already = self._closing
            if not already:
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
        try:
            self._write(call(method, wire_params, pending.id))
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
        self._write(call(method, wire_params))

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
        self._refuse_unread(over_line_bound(event, self._max_line_bytes))

    def _refuse_unread(self, unread: Unread) -> None:
        """A line refused before decoding (``acpref._shell.refusals``): fail what it belonged to.

        spec-gap oversize-line: what it was is read from the line's first and last bytes. A
        request is answered under its id; a response to one of our requests fails that request
        (-32603 with the figures), so its caller never waits for an answer that was dropped; any
        other response is dropped; anything else is answered with ``id: null``, and the
        connection goes on.
        """
        request_id, why, data = unread.id, unread.why, unread.data
        if unread.kind == "response":
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
        if unread.kind == "request" and request_id is not _NO_ID and _valid_id(request_id):
            if request_id not in self._inbound:
                self._send_error_raw(request_id, unread.error)
                return
        self._send_error_raw(None, unread.error)

    def _on_line(self, line: bytes) -> None:
        if envelope.blank(line):
            return  # spec-gap blank-line: carries no message, so nothing to answer
        unread = before_decoding(line, self._max_items)
        if unread is not None:
            self._refuse_unread(unread)  # over the item bound, or nested too deep: never decoded
            return
        value, unparsed = envelope.decode(line)
        if unparsed is not None:
            self._send_error_raw(None, unparsed.to_rpc_error())  # spec RPC-10: -32700, id null
            return
        if type(value) is dict:
            self._on_message(value, line)
        else:
            self._refuse(envelope.inspect(value))  # a batch, or JSON that is no message

    def _refuse(self, env: envelope.Envelope) -> None:
        """Answer a line the envelope refuses (``Envelope.answer``), at the connection level."""
        reply = env.answer
        if reply is not None:
            reply_id, fault = reply
            self._send_error_raw(reply_id, fault.to_rpc_error())

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
        # spec TRANSPORT-04, TRANSPORT-05: one line, ended by its only raw newline (encoder).
        data = encode_line(message, self._max_line_bytes)
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
            why = "Internal error: the message could not be checked"
            return RpcError(ErrorCode.INTERNAL_ERROR, why)

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
        # An answer we cannot send is replaced by a -32603 (RPC-06: exactly one answer).
        internal = ErrorCode.INTERNAL_ERROR
        try:
            self._write(answer(ctx.id, result, error))
        except TooLarge as exc:
            # Our handler's answer is over the line bound: the request fails, with the figures.
            log.warning("%s: %s answer refused: %s", self.name, ctx.method, exc.message)
            self._send_error_raw(ctx.id, RpcError(internal, exc.message, exc.data))
        except LocalProtocolError as exc:
            # Our own handler's answer breaks a rule: answer with the error that says which.
            log.error("%s: %s answer refused: %s", self.name, ctx.method, exc)
            why = f"Internal error: {exc}"
            self._send_error_raw(ctx.id, RpcError(internal, why, {"clause": exc.clause}))
        except ConnectionClosed:
            log.debug("%s: response to %r not sent: connection closed", self.name, ctx.id)
        except (TypeError, ValueError, RecursionError) as exc:
            # The handler returned something that is not JSON (or nests too deep to write): our
            # own bug, answered -32603.
            log.error("%s: %s result is not JSON: %s", self.name, ctx.method, _short(exc))
            self._send_error_raw(ctx.id, RpcError(internal, "Internal error: the result is not JSON"))

    def _send_error_raw(self, request_id: Any, error: RpcError, *, observe: bool = False) -> None:
        """Answer at the connection level: a line unparseable, invalid or refused by the rules,
        or a request whose own answer could not be sent.

        ``observe`` is False for lines the rules never saw (they could not be read as a
        message), and for an answer that replaces one the rules refused: not matched there.
        """
        try:
            self._write(answer(request_id, error=error), observe=observe)
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


def _which(request_id: Any) -> str:
    """A dropped response, named in the log by its id."""
    if request_id is _NO_ID:
        return "without an id"
    return f"for unknown id {request_id!r}"


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."
