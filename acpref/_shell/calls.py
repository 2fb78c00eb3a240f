"""A request as each end of a connection holds it: ``RequestContext`` and ``PendingRequest``.

Spec: overview.mdx (Communication Model), cancellation.mdx; clauses RPC-06, RPC-08, RPC-19,
CANCEL-01, CANCEL-05. Part of the threaded shell (``acpref.connection``, which re-exports both):

* ``RequestContext``: what a handler knows of the request it handles, with its ``cancelled``
  flag and the one right to answer it (exactly one response, RPC-06);
* ``PendingRequest``: an outgoing request waiting for its response. Its caller reads the stream
  itself while it waits (``acpref._shell.threads``), and gets the typed result or the error.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Protocol, Union

from .. import codec
from .._core import envelope
from ..errors import ConnectionClosed, ErrorCode, RemoteProtocolError, RequestTimeout, RpcError
from .framing import Oversize
from .threads import Crew, Flag, Waiter

__all__ = [
    "Handler",
    "InFlight",
    "Observer",
    "Outstanding",
    "PendingRequest",
    "Peer",
    "Recorder",
    "RequestContext",
]

#: ``handler(params, ctx) -> result``: params and result are models for table methods, raw JSON
#: for extension methods. A notification handler's return value is ignored.
Handler = Callable[[Any, "RequestContext"], Any]
#: ``recorder(direction, line)``: direction is ``"in"`` or ``"out"``; ``line`` the exact bytes,
#: or, for an incoming line over the bound (never held), its ``Oversize`` (its size, its ends).
Recorder = Callable[[str, Union[bytes, Oversize]], None]


class Observer(Protocol):
    """Sees every well-formed message in wire order, both ways: where the protocol rules plug in.

    ``on_receive`` runs on the reading thread before a message is dispatched; for a request, a
    returned ``RpcError`` is the answer and the handler never runs. ``on_send`` runs under the
    write lock just before a message is written, so its view of the order is the wire's; raising
    ``LocalProtocolError`` stops the message (a response is then replaced by a -32603 error).
    """

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]: ...

    def on_send(self, message: Dict[str, Any]) -> None: ...


class Peer(Protocol):
    """The connection as a handler sees it (``RequestContext.connection``): a
    ``acpref.connection.Connection``, to call the peer back on."""

    name: str

    def request(
        self, method: str, params: Any = None, *, timeout: Optional[float] = None
    ) -> Any: ...

    def request_async(self, method: str, params: Any = None) -> "PendingRequest": ...

    def notify(self, method: str, params: Any = None) -> None: ...

    def close(self, reason: str = ...) -> None: ...


class _Owner(Protocol):
    """What a pending request needs of its connection (``Connection`` is one)."""

    _crew: Crew

    def _abandon(self, pending: "PendingRequest") -> bool: ...

    def _send_cancel_request(self, request_id: Any) -> None: ...

_NO_ID = envelope.NO_ID  # a message without an "id" key (a notification), apart from "id": null
_valid_id = envelope.valid_id  # spec RPC-02: a string, an integer or null


class _NeverSet(Flag):
    """The ``cancelled`` flag of every notification: nothing cancels a notification.

    One shared instance, so that a notification (thousands a second in a busy turn) does not
    build a flag of its own.
    """

    def set(self) -> None:
        raise RuntimeError("a notification cannot be cancelled")


_NOT_CANCELLABLE = _NeverSet()

#: The lock of every notification's context: a notification has no response to claim
#: (``_claim_response`` is False from the start), so nothing contends for it.
_NO_RESPONSE_LOCK = threading.Lock()


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
        "_held",
    )

    def __init__(self, connection: Peer, method: str, request_id: Any) -> None:
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
        self._responded = self.is_notification
        self._lock = _NO_RESPONSE_LOCK if self.is_notification else threading.Lock()
        #: What its params cost decoded while it is in progress (``InFlight``), 0 once released.
        self._held = 0

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
        self, connection: _Owner, request_id: int, method: str, result_type: Any
    ) -> None:
        self.id = request_id
        self.method = method
        self._connection = connection
        self._result_type = result_type
        self._waiter = Waiter()
        self._response: Optional[Dict[str, Any]] = None
        self._error: Optional[BaseException] = None

    def _resolve(self, response: Dict[str, Any]) -> None:
        """The answer, read from the stream by the thread that holds the reading role."""
        self._response = response
        self._connection._crew.finish(self._waiter)

    def _refuse(self, error: BaseException) -> None:
        """An unusable answer, read from the stream: the wait fails with ``error``."""
        self._error = error
        self._connection._crew.finish(self._waiter)

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
        does (``acpref._shell.threads``). On timeout the request is cancelled with
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


class Outstanding:
    """The book of our requests that wait for their answers, by id (the ids are ours).

    ``Connection.request_async`` opens a request here, the response that answers it takes it
    out (``take``), and when no response can come any more (end of input, a dead peer,
    ``close``) ``fail_all`` fails every one at once and every request opened later.
    """

    __slots__ = ("_ids", "_by_id", "_lock", "ended")

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._by_id: Dict[Any, PendingRequest] = {}
        self._lock = threading.Lock()
        #: Why no response can come any more: set once, when the requests are failed.
        self.ended: Optional[str] = None

    def open(self, owner: _Owner, method: str, result_type: Any) -> PendingRequest:
        """A new request, waiting; ``ConnectionClosed`` once no answer can come."""
        request_id = next(self._ids)  # spec RPC-03: integer ids, never null or fractional
        pending = PendingRequest(owner, request_id, method, result_type)
        with self._lock:
            if self.ended is not None:
                raise ConnectionClosed(self.ended)
            self._by_id[request_id] = pending
        return pending

    def take(self, request_id: Any) -> Optional[PendingRequest]:
        """The request ``request_id`` answers, no longer waiting; None if there is none."""
        if not _valid_id(request_id):  # an object or array id is no key (and no id of ours)
            return None
        with self._lock:
            return self._by_id.pop(request_id, None)

    def __contains__(self, request_id: Any) -> bool:
        if not _valid_id(request_id):
            return False
        with self._lock:
            return request_id in self._by_id

    def fail_all(self, message: str) -> None:
        """No response can come any more: fail every waiting request, and refuse new ones."""
        with self._lock:
            if self.ended is None:
                self.ended = message
            pending = list(self._by_id.values())
            self._by_id.clear()
        for p in pending:
            p._fail(ConnectionClosed(message))


class InFlight:
    """The book of the peer's requests received and not answered yet, by id.

    It also bounds what they hold together once decoded (``acpref._bounds.held_cost``, at most
    ``max_held_bytes``), and lets the end of input wait until they are answered (``drain``). An
    answer being written has left the book (the peer may reuse its id as soon as it reads the
    answer) but is still counted, so that a drain does not close the stream under it.
    """

    __slots__ = ("_by_id", "_lock", "_writing", "_held", "_max_held", "_draining")

    def __init__(self, max_held_bytes: int) -> None:
        self._by_id: Dict[Any, RequestContext] = {}
        self._lock = threading.Condition()  # notified when a request is answered, while draining
        self._writing = 0  # answers being written now
        self._held = 0  # what the requests received and not yet answered (or ended) cost decoded
        self._max_held = max_held_bytes
        self._draining = False

    def admit(self, ctx: RequestContext, cost: int) -> Optional[RpcError]:
        """Take ``ctx`` in, holding ``cost`` bytes; or the error that refuses it."""
        request_id = ctx.id
        with self._lock:
            duplicate = request_id in self._by_id
            held = self._held
            # One request alone is always taken (its line and values are bounded already).
            over = held > 0 and held + cost > self._max_held
            if not duplicate and not over:
                self._by_id[request_id] = ctx
                self._held = held + cost
                ctx._held = cost
                return None
        if over and not duplicate:
            # spec RPC-15 / CANCEL-07: aborted by a resource limit -> -32800. What the requests
            # held at once cost decoded is bounded, whatever each one's size on the wire.
            return RpcError(
                ErrorCode.REQUEST_CANCELLED,
                f"the requests in progress hold about {held} bytes; with this one's about "
                f"{cost} that passes the limit of {self._max_held}; try again",
                {"held": held, "cost": cost, "limit": self._max_held},
            )
        # spec-gap duplicate-id: a second request reusing an id still in flight is refused,
        # so that each id keeps exactly one answer to its first request.
        return RpcError(ErrorCode.INVALID_REQUEST, f"request id {request_id!r} is already in use")

    def _release(self, ctx: RequestContext) -> None:
        """No longer in progress: what ``ctx`` held is let go (once). Called with the lock held,
        as its answer goes out or its handler ends, whichever is first: a peer that reads the
        answer and sends the next request finds the room it made."""
        self._held -= ctx._held
        ctx._held = 0

    def get(self, request_id: Any) -> Optional[RequestContext]:
        with self._lock:
            return self._by_id.get(request_id)

    def __contains__(self, request_id: Any) -> bool:
        with self._lock:
            return request_id in self._by_id

    def running(self) -> List[RequestContext]:
        with self._lock:
            return list(self._by_id.values())

    def answering(self, ctx: RequestContext) -> None:
        """``ctx``'s answer is being written: out of the book, counted until ``answered``."""
        with self._lock:
            self._writing += 1
            self._release(ctx)
            if self._by_id.get(ctx.id) is ctx:
                del self._by_id[ctx.id]

    def answered(self) -> None:
        with self._lock:
            self._writing -= 1
            if self._draining:
                self._lock.notify_all()

    def forget(self, ctx: RequestContext) -> None:
        """``ctx``'s handler has returned (answered or not: a cancelled one may never be)."""
        with self._lock:
            self._release(ctx)
            if self._by_id.get(ctx.id) is ctx:
                del self._by_id[ctx.id]
                if self._draining:
                    self._lock.notify_all()

    def drain(self, deadline: float, stop: Callable[[], bool]) -> None:
        """Wait until every request is answered and written, ``stop()`` or the deadline."""
        with self._lock:
            self._draining = True
            # Bug found (tests/test_fuzz.py): waiting for the requests alone closed the stream
            # under an answer still being written (a large one blocks on the pipe), and it was
            # lost.
            while (self._by_id or self._writing) and not stop():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._lock.wait(remaining)
