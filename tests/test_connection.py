"""Tests of ``acpref.connection`` and ``acpref._shell.transport`` over real pipes and real processes.

Spec: overview.mdx (Communication Model, Error Handling), transports.mdx, cancellation.mdx,
extensibility.mdx; decisions where the spec is silent: spec_notes/connection.md.

Three shapes of test:

* a **pair**: two ``Connection``s joined by two ``os.pipe()``s, each end an ``FdStream``;
* a **raw peer**: one ``Connection``, with the test writing raw bytes to its input and reading
  the raw lines of its output (to prove exactly what goes on the wire);
* a **process**: a ``Connection`` to ``tests/peers/wire_peer.py`` started with ``sys.executable``.

No mocks of our own code; every wait has a timeout (events, futures, joins), never sleep-polling.
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import sys
import threading
import time
import uuid
from typing import Any, Dict, List, Optional, Tuple

import pytest

from acpref._shell.transport import FdStream, LineSplitter, StreamClosed, memory_pipe, spawn
from acpref.connection import Connection
from acpref.errors import ConnectionClosed, ErrorCode, RemoteProtocolError, RequestTimeout, RpcError

#: The bound on any single wait: long enough for a loaded CI machine, short enough to fail fast.
WAIT = 5.0
PEER_SCRIPT = pathlib.Path(__file__).parent / "peers" / "wire_peer.py"


# -- Helpers --------------------------------------------------------------------------------------


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _request(request_id: Any, method: str = "_ping", params: Any = None) -> Dict[str, Any]:
    message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _ping(params: Any, ctx: Any) -> str:
    return "pong"


def _join_new_threads(before: set, timeout: float = WAIT) -> List[threading.Thread]:
    """Join every thread started since ``before``; return those still alive after ``timeout``."""
    deadline = time.monotonic() + timeout
    alive = []
    for thread in set(threading.enumerate()) - before:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            alive.append(thread)
    return alive


class Lines:
    """Raw lines read by a daemon thread into a queue, for reads with a timeout."""

    def __init__(self, read_lines: Any) -> None:
        self._queue: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(read_lines,), daemon=True)
        self._thread.start()

    def _pump(self, read_lines: Any) -> None:
        try:
            for line in read_lines():
                self._queue.put(line)
        finally:
            self._queue.put(None)  # end of output

    def next(self, timeout: float = WAIT) -> Dict[str, Any]:
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message within {timeout}s") from None
        assert line is not None, "the connection's output ended"
        return json.loads(line)

    def rest(self, timeout: float = WAIT) -> List[Dict[str, Any]]:
        """Every message up to the end of output."""
        out = []
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"output did not end within {timeout}s") from None
            if line is None:
                return out
            out.append(json.loads(line))

    def join(self, timeout: float = WAIT) -> None:
        self._thread.join(timeout)


class RawPeer:
    """The far end of one ``Connection``, as bytes: the test writes its input, reads its output."""

    def __init__(
        self,
        handlers: Optional[Dict[str, Any]] = None,
        *,
        write_timeout: float = 30.0,
        **connection_kwargs: Any,
    ) -> None:
        in_r, self._in_w = os.pipe()
        out_r, out_w = os.pipe()
        self._out_r = out_r
        stream = FdStream(in_r, out_w, write_timeout=write_timeout, owns_fds=True)
        all_handlers = {"_ping": _ping, **(handlers or {})}
        connection_kwargs.setdefault("name", _unique("raw"))
        self.conn = Connection(stream, all_handlers, **connection_kwargs).start()
        self.out = Lines(self._read_output)

    def _read_output(self) -> Any:
        with os.fdopen(self._out_r, "rb") as f:
            yield from f

    def send(self, data: bytes) -> None:
        _write_all(self._in_w, data)

    def send_json(self, *messages: Dict[str, Any]) -> None:
        self.send(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def next(self, timeout: float = WAIT) -> Dict[str, Any]:
        return self.out.next(timeout)

    def assert_nothing_before_ping(self, request_id: Any = "sentinel") -> None:
        """Send a ping; the next output must be its answer, so nothing else was written.

        The reader handles lines in order and writes its own error answers inline, so an answer
        to anything sent before the ping would come out before the ping's answer.
        """
        self.send_json(_request(request_id))
        assert self.next() == {"jsonrpc": "2.0", "id": request_id, "result": "pong"}

    def end_input(self) -> None:
        if self._in_w >= 0:
            os.close(self._in_w)
            self._in_w = -1

    def close(self) -> None:
        self.conn.close()
        self.end_input()
        self.out.join()


@pytest.fixture
def raw_peer():
    """``raw_peer(handlers, **kwargs)`` makes a ``RawPeer``; all are closed after the test."""
    peers: List[RawPeer] = []

    def make(handlers: Optional[Dict[str, Any]] = None, **kwargs: Any) -> RawPeer:
        peers.append(RawPeer(handlers, **kwargs))
        return peers[-1]

    yield make
    for peer in peers:
        peer.close()


@pytest.fixture
def pair():
    """``pair(a_handlers, b_handlers, a_kwargs, b_kwargs)``: two Connections over two pipes."""
    made: List[Connection] = []

    def make(
        a_handlers: Optional[Dict[str, Any]] = None,
        b_handlers: Optional[Dict[str, Any]] = None,
        a_kwargs: Optional[Dict[str, Any]] = None,
        b_kwargs: Optional[Dict[str, Any]] = None,
    ) -> Tuple[Connection, Connection]:
        a_in, b_out = os.pipe()
        b_in, a_out = os.pipe()
        a_kwargs = {"name": _unique("a"), **(a_kwargs or {})}
        b_kwargs = {"name": _unique("b"), **(b_kwargs or {})}
        a = Connection(FdStream(a_in, a_out, owns_fds=True), a_handlers, **a_kwargs)
        b = Connection(FdStream(b_in, b_out, owns_fds=True), b_handlers, **b_kwargs)
        made.extend((a, b))
        return a.start(), b.start()

    yield make
    for conn in made:
        conn.close()


class Recorded:
    """A ``recorder`` that keeps the messages a connection sent and received."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.lines: List[Tuple[str, bytes]] = []

    def __call__(self, direction: str, line: bytes) -> None:
        with self._lock:
            self.lines.append((direction, line))

    def messages(self, direction: str) -> List[Dict[str, Any]]:
        with self._lock:
            return [
                json.loads(line)
                for d, line in self.lines
                if d == direction and isinstance(line, bytes) and line
            ]

    def responses_to(self, direction: str, request_id: Any) -> List[Dict[str, Any]]:
        return [
            m for m in self.messages(direction) if "method" not in m and m.get("id") == request_id
        ]


# -- Concurrency: RPC-07 ---------------------------------------------------------------------------


def test_RPC_07_concurrent_requests_in_both_directions_from_eight_threads(pair):
    def tag(side: str):
        return lambda params, ctx: {"by": side, "echo": params}

    a, b = pair({"_tag": tag("a")}, {"_tag": tag("b")})
    per_thread = 100
    start = threading.Barrier(16)
    failures: List[str] = []

    def caller(conn: Connection, side: str, thread_no: int) -> None:
        try:
            start.wait(WAIT)
            pending = [
                (i, conn.request_async("_tag", {"from": side, "thread": thread_no, "i": i}))
                for i in range(per_thread)
            ]
            for i, p in pending:
                got = p.result(WAIT)
                want = {
                    "by": "b" if side == "a" else "a",
                    "echo": {"from": side, "thread": thread_no, "i": i},
                }
                if got != want:
                    failures.append(f"{side}/{thread_no}/{i}: {got!r}")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(f"{side}/{thread_no}: {exc!r}")

    threads = [
        threading.Thread(target=caller, args=(conn, side, n))
        for conn, side in ((a, "a"), (b, "b"))
        for n in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 4)
    assert not any(t.is_alive() for t in threads), "a caller thread hung"
    assert failures == []


def test_RPC_07_nested_calls_back_and_forth_do_not_deadlock(pair):
    # Each handler calls the peer while its own request is pending: depth 10 needs five
    # handlers waiting at once on each side.
    def countdown(params: Any, ctx: Any) -> List[str]:
        n = params["n"]
        if n == 0:
            return [ctx.connection.name]
        below = ctx.connection.request("_countdown", {"n": n - 1}, timeout=WAIT)
        return [ctx.connection.name] + below

    a, b = pair({"_countdown": countdown}, {"_countdown": countdown})
    chain = a.request("_countdown", {"n": 10}, timeout=WAIT)
    assert chain == [b.name, a.name] * 5 + [b.name]


def test_two_requests_arriving_together_each_get_a_handler(raw_peer):
    # Bug found: with one idle worker, two requests arriving back to back were both queued for
    # it, so the second waited behind the first (a deadlock when the first waits for it).
    release = threading.Event()

    def wait_for_release(params: Any, ctx: Any) -> bool:
        return release.wait(WAIT)

    def do_release(params: Any, ctx: Any) -> bool:
        release.set()
        return True

    peer = raw_peer({"_wait": wait_for_release, "_release": do_release})
    for round_no in range(20):
        release.clear()
        peer.assert_nothing_before_ping(f"warm-{round_no}")  # leaves one idle worker
        peer.send_json(_request(1, "_wait"), _request(2, "_release"))
        got = {m["id"]: m["result"] for m in (peer.next(), peer.next())}
        assert got == {1: True, 2: True}


# -- Notifications: order and the barrier ----------------------------------------------------------


def test_notifications_are_handled_in_wire_order(pair):
    seen: List[int] = []
    last = threading.Event()

    def note(params: Any, ctx: Any) -> None:
        seen.append(params["i"])
        if params["i"] == 999:
            last.set()

    a, b = pair(None, {"_note": note})
    for i in range(1000):
        a.notify("_note", {"i": i})
    assert last.wait(WAIT)
    assert seen == list(range(1000))


def test_notifications_keep_wire_order_while_the_reading_role_changes_hands(pair):
    # acpref._shell.threads: whoever reads, one thread reads at a time. A caller of b takes the role
    # from the watching host (interrupting it) and gives it back when answered, again and again,
    # while a streams notifications: a host reads between the calls (the caller waits until 20
    # more were handled, which only a host can do then), and the caller reads during them.
    total = 2000
    seen: List[int] = []
    handled = threading.Condition()
    errors: List[BaseException] = []

    def note(params: Any, ctx: Any) -> None:
        with handled:
            seen.append(params["i"])
            handled.notify_all()

    def grown(by: int) -> bool:
        mark = len(seen)
        return handled.wait_for(lambda: len(seen) >= min(mark + by, total), WAIT)

    def call_in_a_loop() -> None:
        try:
            while True:
                b.request("_ping", timeout=WAIT)
                with handled:
                    assert grown(20)
                    if len(seen) == total:
                        return
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    a, b = pair({"_ping": _ping}, {"_note": note})
    caller = threading.Thread(target=call_in_a_loop, name="b-caller")
    sender = threading.Thread(target=lambda: [a.notify("_note", {"i": i}) for i in range(total)])
    sender.start()
    try:
        with handled:
            assert grown(100)  # read by hosts: nobody calls yet
        caller.start()
        with handled:
            assert handled.wait_for(lambda: len(seen) == total, WAIT)
    finally:
        sender.join(WAIT)
        if caller.ident is not None:
            caller.join(WAIT)
    assert errors == []
    assert seen == list(range(total))


def test_request_returns_only_after_the_notifications_sent_before_its_response(pair):
    # The session/update notifications of a turn are handled before session/prompt returns.
    handled: List[int] = []
    answered = threading.Event()

    def b_wrote(direction: str, line: bytes) -> None:
        if direction == "out" and b'"result"' in line:
            answered.set()

    def progress(params: Any, ctx: Any) -> None:
        if params["i"] == 0:
            # A slow handler: it ends only once the response is on the wire behind it.
            assert answered.wait(WAIT)
        handled.append(params["i"])

    def emit(params: Any, ctx: Any) -> int:
        for i in range(params["n"]):
            ctx.connection.notify("_progress", {"i": i})
        return params["n"]

    a, b = pair({"_progress": progress}, {"_emit": emit}, None, {"recorder": b_wrote})
    for n in (1, 50, 300):
        handled.clear()
        answered.clear()
        assert a.request("_emit", {"n": n}, timeout=WAIT) == n
        assert handled == list(range(n))


def test_result_timeout_holds_while_another_thread_runs_a_slow_notification(pair):
    # Notifications run on the thread that read them (acpref._shell.threads). When a host is busy
    # in a slow notification handler, a caller's timeout still ends its wait on time; the
    # response read later is dropped (RPC-08) and the connection goes on.
    stuck, entered, left = threading.Event(), threading.Event(), threading.Event()

    def slow(params: Any, ctx: Any) -> None:
        entered.set()
        stuck.wait(WAIT)
        left.set()

    def emit(params: Any, ctx: Any) -> str:
        ctx.connection.notify("_slow")
        return "done"

    a, b = pair({"_slow": slow}, {"_emit": emit, "_ping": _ping})
    pending = a.request_async("_emit")
    assert entered.wait(WAIT)  # a host of `a` read the notification and is stuck in it
    with pytest.raises(RequestTimeout):
        pending.result(0.3)
    # The wait ended on its own timeout while the handler was still stuck, not after it.
    assert not left.is_set()
    stuck.set()
    assert a.request("_ping", timeout=WAIT) == "pong"


def test_a_notification_handler_may_call_the_peer(pair):
    # Its thread holds the reading role, so its own wait reads (nested) until the answer.
    answers = []

    def hello(params: Any, ctx: Any) -> None:
        answers.append(ctx.connection.request("_echo", {"from": "hello"}, timeout=WAIT))

    def emit(params: Any, ctx: Any) -> str:
        ctx.connection.notify("_hello")
        return "done"

    a, b = pair({"_hello": hello}, {"_emit": emit, "_echo": lambda params, ctx: params})
    assert a.request("_emit", timeout=WAIT) == "done"
    assert answers == [{"from": "hello"}]  # handled before the response was handed over


def test_an_answer_read_by_a_notification_handlers_call_waits_for_the_handler(pair):
    # A host reads `_hello` and runs it; its call reads, nested, the answer to `_emit` (written
    # before the answer to `_echo`). That answer is held back until the handler returns, so the
    # caller never sees it before the notification read ahead of it has been handled.
    echoed, release = threading.Event(), threading.Event()
    answers = []

    def hello(params: Any, ctx: Any) -> None:
        answer = ctx.connection.request("_echo", {"from": "hello"}, timeout=WAIT)
        echoed.set()
        assert release.wait(WAIT)
        answers.append(answer)

    def emit(params: Any, ctx: Any) -> str:
        ctx.connection.notify("_hello")
        return "done"

    emitted = threading.Event()

    def b_wrote(direction: str, line: bytes) -> None:
        if direction == "out" and b'"done"' in line:
            emitted.set()

    def echo(params: Any, ctx: Any) -> Any:
        # b's host may write this answer before the emitting host writes its own: wait until
        # the answer to `_emit` is on the wire ahead of it.
        assert emitted.wait(WAIT)
        return params

    a, b = pair({"_hello": hello}, {"_emit": emit, "_echo": echo}, None, {"recorder": b_wrote})
    pending = a.request_async("_emit")  # nobody waits on it yet: a host reads
    assert echoed.wait(WAIT)  # the answer to `_emit` has been read by now (wire order)
    assert not pending.done  # ... and is held back while `_hello` runs
    release.set()
    assert pending.result(WAIT) == "done"
    assert answers == [{"from": "hello"}]


# -- Error paths, byte by byte ---------------------------------------------------------------------


def _error_code(message: Dict[str, Any]) -> int:
    assert "result" not in message, message
    return message["error"]["code"]


@pytest.mark.parametrize(
    "line",
    [b'{"jsonrpc":"2.0","id":1,"method":"_ping"\xff}', b"\xc3\x28", b"\xed\xa0\x80"],
    ids=["stray-byte", "bad-continuation", "encoded-surrogate"],
)
def test_TRANSPORT_01_RPC_10_invalid_utf8_gets_parse_error_with_null_id(raw_peer, line):
    # spec RPC-10: a line that is not UTF-8 is unparseable.
    peer = raw_peer()
    peer.send(line + b"\n")
    answer = peer.next()
    assert answer["id"] is None and _error_code(answer) == ErrorCode.PARSE_ERROR
    peer.assert_nothing_before_ping()


@pytest.mark.parametrize(
    "line",
    [b"{bad json", b'{"jsonrpc":"2.0","id":1,"method":"_ping"', b"NaN", b'{"a":Infinity}'],
)
def test_RPC_10_unparseable_line_gets_parse_error_with_null_id(raw_peer, line):
    peer = raw_peer()
    peer.send(line + b"\n")
    answer = peer.next()
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] is None and _error_code(answer) == ErrorCode.PARSE_ERROR
    peer.assert_nothing_before_ping()


@pytest.mark.parametrize("request_id", [7, "seven", None])
def test_RPC_01_RPC_11_missing_jsonrpc_with_an_id_gets_invalid_request_with_that_id(
    raw_peer, request_id
):
    # spec RPC-11: -32600 under the request's id, which can be read.
    peer = raw_peer()
    peer.send_json({"id": request_id, "method": "_ping"})
    peer.send_json({"jsonrpc": "1.0", "id": request_id, "method": "_ping"})
    for _ in range(2):
        answer = peer.next()
        assert answer["id"] == request_id and type(answer["id"]) is type(request_id)
        assert _error_code(answer) == ErrorCode.INVALID_REQUEST
    peer.assert_nothing_before_ping()


@pytest.mark.parametrize("bad_id", [1.5, 1.0, True, False, {}, [1]])
def test_RPC_02_bad_id_type_gets_invalid_request_with_null_id(raw_peer, bad_id):
    peer = raw_peer()
    peer.send_json({"jsonrpc": "2.0", "id": bad_id, "method": "_ping"})
    answer = peer.next()
    assert answer["id"] is None and _error_code(answer) == ErrorCode.INVALID_REQUEST


def test_RPC_04_ids_are_echoed_with_their_json_type(raw_peer):
    peer = raw_peer()
    peer.send_json(_request(1), _request("1"))
    answers = [peer.next(), peer.next()]
    assert sorted((type(m["id"]).__name__, m["id"]) for m in answers) == [("int", 1), ("str", "1")]


@pytest.mark.parametrize(
    "message",
    [
        {"method": "_note"},  # no jsonrpc
        {"jsonrpc": "1.0", "method": "_note"},
        {"jsonrpc": "2.0", "method": "_note", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": "session/update", "params": "not an object"},
    ],
)
def test_OVERVIEW_09_notification_with_a_bad_envelope_gets_no_answer(raw_peer, message):
    handled = []
    peer = raw_peer({"_note": lambda params, ctx: handled.append(params)})
    peer.send_json(message)
    peer.assert_nothing_before_ping()
    assert handled == []


@pytest.mark.parametrize("params", [[1, 2], "text", 5, True])
def test_RPC_02_params_not_an_object_gets_invalid_params(raw_peer, params):
    peer = raw_peer()
    peer.send_json(_request(3, "_ping", params))
    answer = peer.next()
    assert answer["id"] == 3 and _error_code(answer) == ErrorCode.INVALID_PARAMS


def test_RPC_19_null_params_read_as_an_empty_object(raw_peer):
    peer = raw_peer({"_show": lambda params, ctx: params})
    peer.send_json({"jsonrpc": "2.0", "id": 1, "method": "_show", "params": None})
    assert peer.next() == {"jsonrpc": "2.0", "id": 1, "result": None}


@pytest.mark.parametrize("method", ["no/such_method", "_acme/unknown", "session/update"])
def test_RPC_12_EXT_08_unknown_method_gets_method_not_found(raw_peer, method):
    # spec EXT-08: an unknown extension request gets -32601 too. session/update is a
    # notification in the methods table: as a request it is not found.
    peer = raw_peer()
    peer.send_json(_request(4, method, {}))
    answer = peer.next()
    assert answer["id"] == 4 and _error_code(answer) == ErrorCode.METHOD_NOT_FOUND


@pytest.mark.parametrize("method", ["_acme/unknown_note", "no/such_note", "session/update"])
def test_EXT_10_unknown_notification_is_ignored(raw_peer, method):
    peer = raw_peer()
    peer.send_json({"jsonrpc": "2.0", "method": method, "params": {}})
    peer.assert_nothing_before_ping()


def _crash(params: Any, ctx: Any) -> None:
    raise KeyError("boom")


def _circular(params: Any, ctx: Any) -> Any:
    loop: Dict[str, Any] = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize(
    "handler",
    [
        _crash,
        lambda params, ctx: {1, 2},  # a result that is not JSON
        # The encoder does not look for cycles (a cost to every message); a cycle still fails.
        _circular,
    ],
    ids=["crash", "not-json", "circular"],
)
def test_RPC_14_failing_handler_gets_internal_error_and_the_connection_lives_on(raw_peer, handler):
    peer = raw_peer({"_fail": handler})
    peer.send_json(_request(5, "_fail"))
    answer = peer.next()
    assert answer["id"] == 5 and _error_code(answer) == ErrorCode.INTERNAL_ERROR
    peer.send_json(_request(6))
    assert peer.next() == {"jsonrpc": "2.0", "id": 6, "result": "pong"}


@pytest.mark.parametrize("batch", [[], [_request(1), _request(2)]], ids=["empty", "two"])
def test_RPC_20_batch_array_gets_one_invalid_request(raw_peer, batch):
    # spec-gap batch: ACP defines no batches (RPC-20 makes them optional); the whole array is
    # refused with one -32600 (id null), and none of its requests runs.
    peer = raw_peer()
    peer.send_json(batch)  # type: ignore[arg-type]
    answer = peer.next()
    assert answer["id"] is None and _error_code(answer) == ErrorCode.INVALID_REQUEST
    peer.assert_nothing_before_ping()


@pytest.mark.parametrize(
    "message",
    [5, "text", None, {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "id": 5}, {"jsonrpc": "2.0", "method": 5}],
)
def test_RPC_11_json_that_is_no_message_gets_invalid_request_with_null_id(raw_peer, message):
    # spec RPC-11: an object whose method is not a string is neither a request nor a
    # notification (JSON-RPC 2.0's own example answers it -32600 under null).
    # spec-gap no-method-id: {"id": 5} without method, result or error is answered with id null,
    # not 5: the id may be one of the peer's own request ids (a broken response), and an error
    # under it would look like the answer to that request.
    peer = raw_peer()
    peer.send(json.dumps(message).encode() + b"\n")
    answer = peer.next()
    assert answer["id"] is None and _error_code(answer) == ErrorCode.INVALID_REQUEST


def test_duplicate_in_flight_id_is_refused_and_the_first_request_still_answered(raw_peer):
    # spec-gap duplicate-id: a request reusing an id still in flight is refused with -32600
    # under that id; the first request keeps its own answer.
    release = threading.Event()
    peer = raw_peer({"_wait": lambda params, ctx: release.wait(WAIT)})
    peer.send_json(_request(1, "_wait"))
    peer.send_json(_request(1, "_wait"))
    refusal = peer.next()
    assert refusal["id"] == 1 and _error_code(refusal) == ErrorCode.INVALID_REQUEST
    release.set()
    assert peer.next() == {"jsonrpc": "2.0", "id": 1, "result": True}


def test_oversize_line_is_refused_under_its_id_and_the_next_line_is_answered(raw_peer):
    # spec-gap oversize-line: the line is dropped as it arrives (never buffered whole); its id is
    # read from its first bytes, so the request gets its -32600; the connection goes on.
    peer = raw_peer(max_line_bytes=1024)
    big = json.dumps(_request(1, "_ping", {"pad": "x" * 4000})).encode()
    peer.send(big + b"\n" + json.dumps(_request(2)).encode() + b"\n")
    answer = peer.next()
    assert answer["id"] == 1 and _error_code(answer) == ErrorCode.INVALID_REQUEST
    assert answer["error"]["data"]["limit"] == 1024
    assert peer.next() == {"jsonrpc": "2.0", "id": 2, "result": "pong"}
    # The same line cut into writes smaller than the bound, and a line of exactly the bound.
    for start in range(0, len(big), 700):
        peer.send(big[start : start + 700])
    peer.send(b"\n")
    answer = peer.next()
    assert answer["id"] == 1 and _error_code(answer) == ErrorCode.INVALID_REQUEST
    exact = json.dumps(_request(3, "_ping", {"pad": ""}), separators=(",", ":")).encode()
    exact = exact.replace(b'"pad":""', b'"pad":"' + b"y" * (1024 - len(exact)) + b'"')
    assert len(exact) == 1024
    peer.send(exact + b"\n")
    assert peer.next() == {"jsonrpc": "2.0", "id": 3, "result": "pong"}
    # An id after the payload is read from the line's last bytes.
    late = {"jsonrpc": "2.0", "method": "_ping", "params": {"pad": "x" * 4000}, "id": 4}
    peer.send(json.dumps(late).encode() + b"\n")
    answer = peer.next()
    assert answer["id"] == 4 and _error_code(answer) == ErrorCode.INVALID_REQUEST
    # An id only inside the payload is no id: id null.
    inner = {"jsonrpc": "2.0", "method": "_ping", "params": {"pad": "x" * 4000, "id": 5}}
    peer.send(json.dumps(inner).encode() + b"\n")
    answer = peer.next()
    assert answer["id"] is None and _error_code(answer) == ErrorCode.INVALID_REQUEST


def test_RPC_08_response_for_an_unknown_id_is_dropped(raw_peer):
    peer = raw_peer()
    peer.send_json({"jsonrpc": "2.0", "id": 999, "result": "stray"})
    peer.send_json({"jsonrpc": "2.0", "id": "x", "error": {"code": -1, "message": "stray"}})
    peer.assert_nothing_before_ping()
    # And our own requests still resolve.
    pending = peer.conn.request_async("_anything")
    request = peer.next()
    assert request["method"] == "_anything"
    peer.send_json({"jsonrpc": "2.0", "id": request["id"], "result": 42})
    assert pending.result(WAIT) == 42


@pytest.mark.parametrize(
    "members, clause",
    [
        ({"result": 1, "error": {"code": -1, "message": "m"}}, "RPC-05"),
        ({}, "RPC-05"),
        ({"error": {"code": "x", "message": "m"}}, "RPC-09"),
        ({"error": {"code": -1}}, "RPC-09"),
    ],
    ids=["both", "neither", "code-not-int", "no-message"],
)
def test_RPC_05_RPC_09_malformed_response_fails_that_call(raw_peer, members, clause):
    # Bug found ("neither"): a response with neither result nor error was answered -32600 and
    # the call it answered waited forever.
    # spec RPC-09: an error object needs an integer code and a string message.
    peer = raw_peer()
    pending = peer.conn.request_async("_anything")
    request = peer.next()
    peer.send_json({"jsonrpc": "2.0", "id": request["id"], **members})
    with pytest.raises(RemoteProtocolError) as caught:
        pending.result(WAIT)
    assert caught.value.clause == clause
    peer.assert_nothing_before_ping()  # a response is never answered


def test_RPC_18_unknown_error_code_reaches_the_caller(raw_peer):
    peer = raw_peer()
    pending = peer.conn.request_async("_anything")
    request = peer.next()
    error = {"code": -31999, "message": "custom", "data": [1]}
    peer.send_json({"jsonrpc": "2.0", "id": request["id"], "error": error})
    with pytest.raises(RpcError) as caught:
        pending.result(WAIT)
    assert (caught.value.code, caught.value.message, caught.value.data) == (-31999, "custom", [1])


def test_TRANSPORT_04_a_line_split_into_one_byte_writes(raw_peer):
    peer = raw_peer()
    line = json.dumps(_request("split", "_ping", {"text": "é\\n"})).encode() + b"\n"
    for i in range(len(line)):
        peer.send(line[i : i + 1])
    assert peer.next() == {"jsonrpc": "2.0", "id": "split", "result": "pong"}


def test_TRANSPORT_04_many_messages_in_one_write(raw_peer):
    peer = raw_peer()
    peer.send(b"\n".join(json.dumps(_request(i)).encode() for i in range(200)) + b"\n\n")
    answers = [peer.next() for _ in range(200)]
    assert sorted(m["id"] for m in answers) == list(range(200))
    assert all(m["result"] == "pong" for m in answers)


def test_final_line_without_newline_at_end_of_input_is_still_processed(raw_peer):
    # spec-gap end-of-input: requests received before the end of input are still answered
    # (the peer may have closed only its writing side), then the connection closes.
    peer = raw_peer()
    peer.send(json.dumps(_request("last")).encode())
    peer.end_input()
    assert peer.out.rest() == [{"jsonrpc": "2.0", "id": "last", "result": "pong"}]
    assert peer.conn.wait_closed(WAIT)


def test_TRANSPORT_05_newlines_inside_strings_never_reach_the_wire_raw(raw_peer):
    peer = raw_peer({"_echo": lambda params, ctx: params})
    peer.send_json(_request(1, "_echo", {"text": "a\nb\r\n\u2028"}))
    assert peer.next()["result"] == {"text": "a\nb\r\n\u2028"}


# -- Cancellation ----------------------------------------------------------------------------------


def test_CANCEL_05_cancelled_request_gets_exactly_one_response(pair):
    started, saw_cancel = threading.Event(), []

    def wait_for_cancel(params: Any, ctx: Any) -> str:
        started.set()
        saw_cancel.append(ctx.cancelled.wait(WAIT))
        return "late result"

    a_record, b_record = Recorded(), Recorded()
    # One handler thread on b: its ping below runs only after the cancelled handler returned
    # and its (dropped) late result was dealt with.
    a, b = pair(
        None,
        {"_wait": wait_for_cancel, "_ping": _ping},
        {"recorder": a_record},
        {"recorder": b_record, "max_handlers": 1},
    )
    pending = a.request_async("_wait")
    assert started.wait(WAIT)
    pending.cancel()
    with pytest.raises(RpcError) as caught:
        pending.result(WAIT)
    assert caught.value.code == ErrorCode.REQUEST_CANCELLED
    assert a.request("_ping", timeout=WAIT) == "pong"
    assert saw_cancel == [True]
    assert [m["method"] for m in a_record.messages("out")] == ["_wait", "$/cancel_request", "_ping"]
    assert len(b_record.responses_to("out", pending.id)) == 1
    assert len(a_record.responses_to("in", pending.id)) == 1


def test_CANCEL_05_cancel_of_a_queued_request_answers_it_once(raw_peer):
    release = threading.Event()
    ran: List[Any] = []

    def wait(params: Any, ctx: Any) -> bool:
        ran.append(ctx.id)
        return release.wait(WAIT)

    peer = raw_peer({"_wait": wait}, max_handlers=1)
    peer.send_json(_request(1, "_wait"), _request(2, "_wait"))
    peer.send_json({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}})
    answer = peer.next()
    assert answer["id"] == 2 and _error_code(answer) == ErrorCode.REQUEST_CANCELLED
    release.set()
    assert peer.next() == {"jsonrpc": "2.0", "id": 1, "result": True}
    peer.assert_nothing_before_ping()  # one handler thread: the ping runs after request 2
    assert ran == [1]  # the cancelled request's handler never ran


def test_CANCEL_05_handler_that_answers_a_cancel_itself_sends_the_one_response(raw_peer):
    # A prompt turn ends with stopReason "cancelled" rather than -32800: answer_on_cancel=False.
    started = threading.Event()

    def turn(params: Any, ctx: Any) -> Dict[str, str]:
        ctx.answer_on_cancel = False
        started.set()
        ctx.cancelled.wait(WAIT)
        return {"stopReason": "cancelled"}

    peer = raw_peer({"_turn": turn}, max_handlers=1)
    peer.send_json(_request(1, "_turn"))
    assert started.wait(WAIT)
    peer.send_json({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})
    assert peer.next() == {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}
    peer.assert_nothing_before_ping()


def test_RPC_02_request_with_null_id_stays_a_request_after_its_cancel(raw_peer):
    # Bug found: RequestContext.is_notification turned True for a request with id null once
    # it had been answered (here: -32800 on cancel), while its handler was still running.
    started, kinds = threading.Event(), []

    def wait(params: Any, ctx: Any) -> None:
        kinds.append(ctx.is_notification)
        started.set()
        ctx.cancelled.wait(WAIT)
        kinds.append(ctx.is_notification)

    peer = raw_peer({"_wait": wait}, max_handlers=1)
    peer.send_json(_request(None, "_wait"))
    assert started.wait(WAIT)
    peer.send_json({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": None}})
    answer = peer.next()
    assert answer["id"] is None and _error_code(answer) == ErrorCode.REQUEST_CANCELLED
    peer.assert_nothing_before_ping()  # one handler thread: the handler has returned
    assert kinds == [False, False]


@pytest.mark.parametrize(
    "params",
    [
        {"requestId": 999},
        {"requestId": 1},
        {"requestId": "1"},
        {},
        None,
        {"requestId": 1.5},
        {"requestId": {"id": 1}},
        {"requestId": [1]},
    ],
    ids=["unknown", "finished", "other-type", "no-id", "no-params", "float", "object", "array"],
)
def test_CANCEL_06_cancel_request_for_unknown_or_finished_id_is_ignored(raw_peer, params):
    peer = raw_peer()
    peer.send_json(_request(1))
    assert peer.next() == {"jsonrpc": "2.0", "id": 1, "result": "pong"}
    cancel: Dict[str, Any] = {"jsonrpc": "2.0", "method": "$/cancel_request"}
    if params is not None:
        cancel["params"] = params
    peer.send_json(cancel)
    peer.assert_nothing_before_ping()


def test_CANCEL_05_RPC_06_race_of_cancel_and_result_still_one_response_per_request():
    # spec RPC-06: every request gets exactly one response.
    # The handler answers at once while $/cancel_request arrives: whichever wins, each request
    # gets exactly one response (a result or -32800). In-process pipes, many rounds.
    ours, theirs = memory_pipe()
    conn = Connection(ours, {"_ping": _ping}, name=_unique("race"), max_handlers=1).start()
    out = Lines(lambda: LineSplitter(theirs.read, 1 << 20))
    rounds = 300
    try:
        for i in range(rounds):
            theirs.write(json.dumps(_request(i)).encode() + b"\n")
            cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": i}}
            theirs.write(json.dumps(cancel).encode() + b"\n")
        theirs.write(json.dumps(_request("end")).encode() + b"\n")
        counts: Dict[Any, int] = {}
        outcomes = {"result": 0, "cancelled": 0}
        while True:
            message = out.next()
            counts[message["id"]] = counts.get(message["id"], 0) + 1
            if message["id"] == "end":
                break
            if "result" in message:
                outcomes["result"] += 1
            else:
                assert message["error"]["code"] == ErrorCode.REQUEST_CANCELLED
                outcomes["cancelled"] += 1
    finally:
        conn.close()
    # With one handler thread, "end" is answered after every earlier handler finished.
    assert counts == {**{i: 1 for i in range(rounds)}, "end": 1}
    assert sum(outcomes.values()) == rounds


def test_request_timeout_raises_and_sends_cancel_request(pair):
    started, cancelled = threading.Event(), threading.Event()

    def wait(params: Any, ctx: Any) -> str:
        started.set()
        if ctx.cancelled.wait(WAIT):
            cancelled.set()
        return "late"

    record = Recorded()
    a, b = pair(None, {"_wait": wait}, {"recorder": record})
    t0 = time.monotonic()
    with pytest.raises(RequestTimeout):
        a.request("_wait", timeout=0.2)
    assert time.monotonic() - t0 >= 0.2  # not given up early (no upper bound: hosts are slow)
    assert cancelled.wait(WAIT)
    sent = record.messages("out")
    assert sent[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": sent[0]["id"]},
    }
    # The late -32800 is dropped (RPC-08) and the connection goes on.
    b.set_handler("_ping", _ping)
    assert a.request("_ping", timeout=WAIT) == "pong"


# -- The end of a connection -----------------------------------------------------------------------


def test_peer_process_dying_mid_request_fails_every_pending_call():
    process = spawn([sys.executable, str(PEER_SCRIPT)])
    started = threading.Semaphore(0)
    conn = Connection(
        FdStream(process.popen.stdout.fileno(), process.popen.stdin.fileno()),
        {"_started": lambda params, ctx: started.release()},
        name=_unique("to-peer"),
    ).start()
    try:
        assert conn.request("_echo", {"x": [1, "é"]}, timeout=WAIT) == {"x": [1, "é"]}
        sleepers = [conn.request_async("_sleep", {"seconds": 30}) for _ in range(5)]
        for _ in sleepers:
            assert started.acquire(timeout=WAIT)
        dying = conn.request_async("_die", {"code": 7})
        # Each fails with ConnectionClosed (the peer's death), not RequestTimeout: the sleepers
        # would have answered after 30 s.
        for pending in sleepers + [dying]:
            with pytest.raises(ConnectionClosed):
                pending.result(WAIT)
        assert conn.wait_closed(WAIT)
        with pytest.raises(ConnectionClosed):
            conn.request("_echo", timeout=WAIT)
    finally:
        conn.close()
        assert process.shutdown(grace=WAIT) == 7


def test_nested_calls_with_a_peer_process():
    conn_name = _unique("to-peer")
    process = spawn([sys.executable, str(PEER_SCRIPT)])
    conn = Connection(
        FdStream(process.popen.stdout.fileno(), process.popen.stdin.fileno()),
        {"_double": lambda params, ctx: params["n"] * 2},
        name=conn_name,
    ).start()
    try:
        got = conn.request("_call_back", {"method": "_double", "params": {"n": 21}}, timeout=WAIT)
        assert got == 42
    finally:
        conn.close()
        assert process.shutdown(grace=WAIT) == 0  # stdin closed: the peer ends on its own


def test_end_of_input_fails_pending_calls(raw_peer):
    peer = raw_peer()
    pendings = [peer.conn.request_async("_never_answered") for _ in range(3)]
    for _ in pendings:
        peer.next()
    peer.end_input()
    for pending in pendings:
        with pytest.raises(ConnectionClosed):
            pending.result(WAIT)
    assert peer.conn.wait_closed(WAIT)


def test_a_request_sent_after_end_of_input_fails_at_once(raw_peer):
    # Bug found: while requests received before the end of input were still being served, a
    # new outgoing request was sent and waited drain_timeout for an answer that cannot come.
    release, started, served = threading.Event(), threading.Event(), threading.Event()

    def busy(params: Any, ctx: Any) -> bool:
        started.set()
        try:
            return release.wait(WAIT)
        finally:
            served.set()

    peer = raw_peer({"_busy": busy}, drain_timeout=WAIT)
    peer.send_json(_request(1, "_busy"))
    assert started.wait(WAIT)
    probe = peer.conn.request_async("_probe")
    assert peer.next()["method"] == "_probe"
    peer.end_input()
    with pytest.raises(ConnectionClosed):
        probe.result(WAIT)  # the end of input was seen
    with pytest.raises(ConnectionClosed):
        peer.conn.request("_anything", timeout=WAIT)
    # It failed while the drain still ran (the request received before the end is still being
    # served): the bug made it wait for the drain to end.
    assert not served.is_set()
    release.set()
    assert peer.out.rest() == [{"jsonrpc": "2.0", "id": 1, "result": True}]


def test_close_is_idempotent_and_leaves_no_thread_behind(pair):
    before = set(threading.enumerate())
    notes = threading.Event()
    a, b = pair({"_ping": _ping}, {"_ping": _ping, "_note": lambda params, ctx: notes.set()})
    for _ in range(5):
        a.request_async("_ping")
    assert a.request("_ping", timeout=WAIT) == "pong"
    assert b.request("_ping", timeout=WAIT) == "pong"
    a.notify("_note")
    assert notes.wait(WAIT)
    a.close()
    a.close()
    assert a.closed and b.wait_closed(WAIT)  # b saw the end of its input
    b.close()
    # The reader, dispatcher and handler threads are joined by close() itself.
    mine = [t for t in threading.enumerate() if t.name.startswith((a.name, b.name))]
    assert [t.name for t in mine if t.name.endswith(("-reader", "-notifications"))] == []
    assert _join_new_threads(before) == []
    with pytest.raises(ConnectionClosed):
        a.request("_ping")
    with pytest.raises(ConnectionClosed):
        a.notify("_note")


def test_close_from_a_handler_thread(pair):
    before = set(threading.enumerate())

    def close_me(params: Any, ctx: Any) -> str:
        ctx.connection.close("asked to")
        return "closed"

    a, b = pair(None, {"_close": close_me})
    with pytest.raises(ConnectionClosed):
        a.request("_close", timeout=WAIT)
    assert b.wait_closed(WAIT) and b.close_reason == "asked to"
    assert a.wait_closed(WAIT)
    assert _join_new_threads(before) == []


def test_close_while_a_handler_also_closes_does_not_stall(pair):
    # Bug found: close() cancels the running handlers; a handler that then called close()
    # itself waited for the first close(), which was joining that very handler: a 5 s stall.
    # A fact instead of a time: when close() returns, the handler's own close() has returned
    # too (with the bug, close() gave up joining the handler, which was still stuck in it).
    started, finished = threading.Event(), threading.Event()

    def close_on_cancel(params: Any, ctx: Any) -> None:
        started.set()
        ctx.cancelled.wait(WAIT)
        ctx.connection.close("handler saw cancel")
        finished.set()

    a, b = pair(None, {"_wait": close_on_cancel})
    a.request_async("_wait")
    assert started.wait(WAIT)
    b.close()
    assert finished.is_set()


def test_close_before_start_and_context_manager(pair):
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    conn = Connection(FdStream(in_r, out_w, owns_fds=True), name=_unique("unstarted"))
    conn.close()
    conn.close()
    assert conn.closed
    with Connection(FdStream(out_r, in_w, owns_fds=True), name=_unique("with")) as conn2:
        assert not conn2.closed
    assert conn2.closed


def test_peer_that_stops_reading_fails_a_large_write_within_the_write_timeout():
    before = set(threading.enumerate())
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()  # nobody reads out_r: the pipe fills up
    conn = Connection(
        FdStream(in_r, out_w, write_timeout=0.3, owns_fds=True), name=_unique("stuck")
    ).start()
    try:
        small = conn.request_async("_small")  # fits in the pipe
        errors: "queue.Queue[BaseException]" = queue.Queue()

        def keep_notifying() -> None:
            try:
                while True:
                    conn.notify("_note", {"pad": "n" * 1000})
            except ConnectionClosed as exc:
                errors.put(exc)

        notifiers = [threading.Thread(target=keep_notifying) for _ in range(3)]
        for t in notifiers:
            t.start()
        with pytest.raises(ConnectionClosed) as caught:
            conn.request_async("_big", {"text": "x" * (4 << 20)})
        with pytest.raises(ConnectionClosed):
            small.result(WAIT)
        for t in notifiers:
            t.join(WAIT)
        assert not any(t.is_alive() for t in notifiers)
        assert errors.qsize() == 3
        assert conn.wait_closed(WAIT)
        # The first write to time out names the cause; the others see a closed connection.
        causes = [str(caught.value)] + [str(errors.get()) for _ in range(3)]
        assert any("peer read nothing for 0.3s" in c for c in causes), causes
    finally:
        conn.close()
        os.close(in_w)
        os.close(out_r)
    assert _join_new_threads(before) == []


def test_close_during_a_blocked_write_never_writes_into_a_reused_descriptor():
    # Bug found: FdStream.close() closed its descriptors at once, under a writer blocked on a
    # full pipe; the writer woke up later and wrote the rest of its line into whatever file had
    # been opened since under the same descriptor number.
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.set_blocking(out_w, False)
    try:
        while True:
            os.write(out_w, b"f" * 65536)  # fill the pipe: the next write must wait
    except BlockingIOError:
        pass
    stream = FdStream(in_r, out_w, write_timeout=WAIT, owns_fds=True)
    outcome: "queue.Queue[BaseException]" = queue.Queue()

    def write() -> None:
        try:
            stream.write(b"w" * 100_000)
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.put(exc)

    writer = threading.Thread(target=write)
    writer.start()
    stream.close()
    new_r, new_w = os.pipe()  # takes the lowest free descriptor numbers
    try:
        writer.join(WAIT)
        assert not writer.is_alive()
        # Woken by close() (StreamClosed), not by its own write timeout (WAIT, TimeoutError).
        assert isinstance(outcome.get(timeout=WAIT), StreamClosed)
        os.set_blocking(new_r, False)
        with pytest.raises(BlockingIOError):
            os.read(new_r, 10)  # nothing arrived in the new pipe
    finally:
        for fd in (new_r, new_w, in_w, out_r):
            os.close(fd)


# -- The worker bound ------------------------------------------------------------------------------


def test_worker_bound_queues_requests_and_nested_calls_still_work_at_the_bound(pair):
    gate = threading.Event()
    lock = threading.Lock()
    running = {"now": 0, "max": 0}
    four_running = threading.Event()

    def work(params: Any, ctx: Any) -> Any:
        # A peer call while b is at its bound: answered, since responses never wait for a
        # handler thread.
        echoed = ctx.connection.request("_echo", params, timeout=WAIT)
        with lock:
            running["now"] += 1
            running["max"] = max(running["max"], running["now"])
            if running["now"] == 4:
                four_running.set()
        gate.wait(WAIT)
        with lock:
            running["now"] -= 1
        return echoed["i"]

    all_read = threading.Event()
    read = []

    def b_read(direction: str, line: bytes) -> None:
        if direction == "in" and b'"_work"' in line:
            read.append(line)
            if len(read) == 50:
                all_read.set()

    a, b = pair(
        {"_echo": lambda params, ctx: params},
        {"_work": work},
        None,
        {"max_handlers": 4, "recorder": b_read},
    )
    pendings = [a.request_async("_work", {"i": i}) for i in range(4)]
    assert four_running.wait(WAIT)
    # The rest arrive while four run and nobody calls: a host keeping watch reads them all,
    # past the bound, and queues them (it read the last one, so it queued the others).
    pendings += [a.request_async("_work", {"i": i}) for i in range(4, 50)]
    assert all_read.wait(WAIT)
    # Four hosts run requests; at most one more keeps watch (acpref._shell.threads).
    b_hosts = [t for t in threading.enumerate() if t.name.startswith(f"{b.name}-host-")]
    assert 4 <= len(b_hosts) <= 5, [t.name for t in b_hosts]
    assert all(not p.done for p in pendings)
    gate.set()
    assert [p.result(WAIT) for p in pendings] == list(range(50))
    # The bound is on requests running at once (never more than four), not on which hosts run
    # them: a host that kept watch may take a queued request while a runner is between two.
    assert running["max"] == 4


def test_RPC_15_requests_beyond_max_queued_get_request_cancelled_at_once(raw_peer):
    gate = threading.Event()
    peer = raw_peer({"_wait": lambda params, ctx: gate.wait(WAIT)}, max_handlers=2, max_queued=3)
    peer.send_json(*[_request(i, "_wait") for i in range(1, 11)])
    refused = [peer.next() for _ in range(5)]  # while the gate holds the others: at once
    assert sorted(m["id"] for m in refused) == [6, 7, 8, 9, 10]
    assert all(_error_code(m) == ErrorCode.REQUEST_CANCELLED for m in refused)
    gate.set()
    done = [peer.next() for _ in range(5)]
    assert sorted(m["id"] for m in done) == [1, 2, 3, 4, 5]
    assert all(m["result"] is True for m in done)
