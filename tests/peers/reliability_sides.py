"""acpref's two sides under test, fed raw bytes over real pipes: the fuzz and edge-case harness.

Used by ``tests/test_fuzz*.py``, ``tests/test_security*.py`` and ``tests/test_load*.py``.

``RawSide("agent", root)`` is an ``AgentSideConnection`` serving ``SmallAgent`` (or ``agent``);
``RawSide("client", root)`` is a ``ClientSideConnection`` serving a ``ReferenceClient`` whose
terminals can find no program (``PATH`` is a directory that does not exist), so that no fuzzed
``terminal/create`` ever runs anything. In both, the test is the peer: it writes raw bytes to
the side's input and reads the raw lines of its output (a thread keeps every line).
``setup()`` brings the side to a useful state through the wire (``initialize`` and one session),
so that mutated messages reach the handlers rather than the "not initialized" rule.

``finish()`` ends the input and reads the output to its end: the connection serves what it
received, closes, and its output ends. Counting the responses in that complete output is how a
test proves "every request answered exactly once" without guessing how long to wait.

``Watch`` captures what must never happen in the library: a log record at ERROR or above
from an ``acpref`` logger, and an exception that escaped a thread (``threading.excepthook``).

Every wait is bounded (``WAIT``).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

from acpref import schema as s
from acpref._bounds import MAX_DEPTH, peek_envelope
from acpref._shell.transport import OVERSIZE_HEAD, FdStream
from acpref.agent import Agent, AgentSideConnection
from acpref.client import Allow, ClientSideConnection, ReferenceClient

WAIT = float(os.environ.get("ACPREF_TEST_WAIT", "10"))

#: What ``initialize`` from our fake client advertises: everything a client may serve.
CLIENT_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
#: What our fake agent answers to the reference client's ``initialize``.
AGENT_INIT_RESULT = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
        "mcpCapabilities": {"http": False, "sse": False},
        "sessionCapabilities": {"list": {}, "close": {}, "resume": {}, "delete": {}},
    },
    "authMethods": [],
    "agentInfo": {"name": "raw-agent", "version": "0"},
}


class SmallAgent(Agent):
    """An agent whose turns say one thing and end; it connects no MCP server by itself.

    A prompt ``ask`` first asks the client's permission for a tool call (and so stays in flight
    until the client answers); ``read PATH`` reads a file through the client first.
    """

    connect_mcp_servers = False  # a fuzzed session/new must never start a process

    def session_prompt(self, params: s.PromptRequest, turn: Any) -> Any:
        first = params.prompt[0] if params.prompt else None
        text = first.text if isinstance(first, s.TextContent) else ""
        if text == "ask":
            call_id = turn.new_tool_call_id()
            turn.update(s.ToolCall(tool_call_id=call_id, title="edit a file"))
            option = s.PermissionOption(
                option_id="yes", name="Yes", kind=s.PermissionOptionKind.ALLOW_ONCE
            )
            outcome = turn.request_permission(s.ToolCallUpdate(tool_call_id=call_id), [option])
            turn.say(f"permission: {type(outcome).__name__}")
        elif text.startswith("read "):
            turn.say(turn.read_text_file(text[5:]))
        turn.say("ok")
        return s.StopReason.END_TURN


def encode_line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def id_key(value: Any) -> str:
    """A key for a JSON id that keeps its type (``1``, ``1.0`` and ``true`` are different ids)."""
    return json.dumps(value)


class Output:
    """Every line a side writes, read by a daemon thread; parsed lines are kept in order."""

    def __init__(self, fd: int) -> None:
        self._cond = threading.Condition()
        self.messages: List[Dict[str, Any]] = []
        self.raw: List[bytes] = []
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._pump, args=(fd,), daemon=True)
        self._thread.start()

    def _pump(self, fd: int) -> None:
        try:
            with os.fdopen(fd, "rb") as f:
                for line in f:
                    with self._cond:
                        self.raw.append(line)
                        self.messages.append(json.loads(line))
                        self._cond.notify_all()
        finally:
            with self._cond:
                self.ended.set()
                self._cond.notify_all()

    def wait_for(self, predicate: Any, timeout: float = WAIT) -> Dict[str, Any]:
        """The first message (from the start) that satisfies ``predicate``; AssertionError if none."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for m in self.messages:
                    if predicate(m):
                        return m
                remaining = deadline - time.monotonic()
                if self.ended.is_set() or remaining <= 0:
                    raise AssertionError(
                        f"no matching message within {timeout}s; got {self.messages[-5:]!r}"
                    )
                self._cond.wait(remaining)

    def wait_until(self, condition: Any, timeout: float = WAIT) -> None:
        """Wait until ``condition()`` (checked on each new line) is true; AssertionError if not."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not condition():
                remaining = deadline - time.monotonic()
                if self.ended.is_set() or remaining <= 0:
                    raise AssertionError(f"condition not met within {timeout}s")
                self._cond.wait(remaining)

    def response(self, request_id: Any, timeout: float = WAIT) -> Dict[str, Any]:
        key = id_key(request_id)
        return self.wait_for(
            lambda m: "method" not in m and "id" in m and id_key(m["id"]) == key, timeout
        )

    def request(self, method: str, timeout: float = WAIT) -> Dict[str, Any]:
        return self.wait_for(lambda m: m.get("method") == method and "id" in m, timeout)

    def join(self, timeout: float = WAIT) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def responses(self) -> List[Dict[str, Any]]:
        with self._cond:
            return [m for m in self.messages if "method" not in m]


class RawSide:
    """One side of acpref over two real pipes, the test being its peer (see the module doc)."""

    def __init__(
        self,
        kind: str,
        root: Path,
        *,
        max_line_bytes: Optional[int] = None,
        client: Optional[ReferenceClient] = None,
        agent: Any = None,
        write_timeout: float = WAIT,
        **side_kwargs: Any,
    ) -> None:
        assert kind in ("agent", "client")
        self.kind = kind
        self.root = root
        in_r, self._in_w = os.pipe()
        out_r, out_w = os.pipe()
        stream = FdStream(in_r, out_w, owns_fds=True, write_timeout=write_timeout)
        self.out = Output(out_r)
        self.session_id: Optional[str] = None
        # The test's own request ids: strings no fuzzed message carries (those are at most 4
        # characters long, or ids of other shapes), so that no answer is mistaken for another.
        self._ids = (f"harness-{n}" for n in itertools.count(1))
        if kind == "agent":
            self.agent_side = AgentSideConnection(
                agent or SmallAgent,
                stream,
                name="fuzz-agent",
                max_line_bytes=max_line_bytes,
                **side_kwargs,
            ).start()
            self.connection = self.agent_side.connection
            self.client = None
        else:
            if max_line_bytes is not None:
                side_kwargs["max_line_bytes"] = max_line_bytes
            self.client = client or ReferenceClient(
                permissions=Allow(),
                terminal_env={"PATH": str(root / "no-such-dir")},  # nothing can be found
                kill_grace=0.5,
            )
            self.client_side = ClientSideConnection(
                self.client, stream, name="fuzz-client", **side_kwargs
            )
            self.connection = self.client_side.connection

    # -- writing ----------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in_w, view) :]

    def send_json(self, *messages: Any) -> None:
        self.send(b"".join(encode_line(m) for m in messages))

    def next_id(self) -> str:
        return next(self._ids)

    def end_input(self) -> None:
        if self._in_w >= 0:
            os.close(self._in_w)
            self._in_w = -1

    # -- bringing the side to a session -----------------------------------------------------

    def setup(self) -> str:
        """``initialize`` and one session, through the wire; returns the session id."""
        (self.root / "notes.txt").write_text("one\ntwo\nthree\n")
        (self.root / "probe.txt").write_text("probe\n")
        if self.kind == "agent":
            self.call("initialize", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS})
            got = self.call("session/new", {"cwd": str(self.root), "mcpServers": []})
            self.session_id = got["result"]["sessionId"]
        else:
            done: "queue.Queue[Any]" = queue.Queue()

            def open_session() -> None:
                try:
                    self.client_side.initialize(timeout=WAIT)
                    done.put(self.client_side.new_session(str(self.root), timeout=WAIT))
                except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                    done.put(exc)

            threading.Thread(target=open_session, daemon=True).start()
            init = self.out.request("initialize")
            self.send_json({"jsonrpc": "2.0", "id": init["id"], "result": AGENT_INIT_RESULT})
            new = self.out.request("session/new")
            self.send_json({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": "s-1"}})
            got = done.get(timeout=WAIT)
            if isinstance(got, BaseException):
                raise got
            self.session_id = got.session_id
        return self.session_id

    def call(self, method: str, params: Any, timeout: float = WAIT) -> Dict[str, Any]:
        """Send one request and wait for its response (the raw message)."""
        request_id = self.next_id()
        self.send_json({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return self.out.response(request_id, timeout)

    def probe(self, timeout: float = WAIT) -> Dict[str, Any]:
        """A valid request the side must still answer with a result: it is usable."""
        if self.kind == "agent":
            answer = self.call("session/list", {}, timeout)
            assert "result" in answer, answer
        else:
            path = str(self.root / "probe.txt")
            answer = self.call(
                "fs/read_text_file", {"sessionId": self.session_id, "path": path}, timeout
            )
            assert answer.get("result") == {"content": "probe\n"}, answer
        return answer

    def finish(self, timeout: float = WAIT) -> List[Dict[str, Any]]:
        """End the input; the side serves what it has, closes, and its output ends."""
        self.end_input()
        assert self.out.ended.wait(timeout), f"{self.kind} side did not close within {timeout}s"
        assert self.connection.wait_closed(timeout)
        return self.out.responses()

    def close(self) -> None:
        self.end_input()
        if self.kind == "agent":
            self.agent_side.close()
        else:
            self.client_side.close()
        self.out.join()


# -- What the library must never do -------------------------------------------------------------


class Watch(logging.Handler):
    """Collects acpref's log records at ERROR and above, and exceptions escaping a thread."""

    def __init__(self, level: int = logging.ERROR) -> None:
        super().__init__(level)
        self.records: List[logging.LogRecord] = []
        self.thread_errors: List[Tuple[str, BaseException]] = []
        self._old_hook: Any = None
        self._lock_records = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self._lock_records:
            self.records.append(record)

    def _hook(self, args: Any) -> None:
        name = args.thread.name if args.thread is not None else "?"
        with self._lock_records:
            self.thread_errors.append((name, args.exc_value))

    def __enter__(self) -> "Watch":
        logger = logging.getLogger("acpref")
        self._old_level = logger.level
        if logger.getEffectiveLevel() > self.level:
            logger.setLevel(self.level)
        logger.addHandler(self)
        self._old_hook = threading.excepthook
        threading.excepthook = self._hook
        return self

    def __exit__(self, *exc: Any) -> None:
        logging.getLogger("acpref").removeHandler(self)
        logging.getLogger("acpref").setLevel(self._old_level)
        threading.excepthook = self._old_hook

    def problems(self, known: Optional[Any] = None) -> List[str]:
        """What went wrong, as text; records for which ``known(record)`` is true are left out."""
        with self._lock_records:
            records = [r for r in self.records if known is None or not known(r)]
            out = []
            for r in records:
                out.append(f"{r.name} {r.levelname}: {r.getMessage()}")
                if r.exc_info:
                    out.append(logging.Formatter().formatException(r.exc_info))
            out += [f"thread {name}: {exc!r}" for name, exc in self.thread_errors]
            return out


def crash_site(record: logging.LogRecord) -> Optional[Tuple[str, int, str]]:
    """Where the exception of a record was raised: (acpref file, line, exception), or None."""
    if not record.exc_info or record.exc_info[1] is None:
        return None
    exc = record.exc_info[1]
    site = None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if "/acpref/" in filename:
            site = (filename.split("/acpref/", 1)[1], tb.tb_lineno)
        tb = tb.tb_next
    if site is None:
        return None
    return (site[0], site[1], f"{type(exc).__name__}: {exc}")


def expected_answers(
    lines: Iterable[bytes], max_line_bytes: Optional[int] = None
) -> Dict[str, int]:
    """How many responses each id must get, from the lines a test sent.

    A line that parses as a JSON object with both ``method`` and a string, integer or null
    ``id`` is a request (well formed or not): it gets exactly one response under its id
    (spec RPC-06, RPC-11). A null id shares its key with the answers to unparseable lines, so
    it is left out (``null`` key). A line over ``max_line_bytes`` is answered under its id when
    its first or last 4 KiB show it is a request (spec-gap oversize-line), else ``id: null``.
    """
    counts: Dict[str, int] = {}
    for line in lines:
        if max_line_bytes is not None and len(line) > max_line_bytes:
            request_id, kind = peek_envelope(line[:OVERSIZE_HEAD], line[-OVERSIZE_HEAD:])
            if kind == "request" and request_id is not None and type(request_id) in (str, int):
                key = id_key(request_id)
                counts[key] = counts.get(key, 0) + 1
            continue
        if depth(line) > MAX_DEPTH:
            continue  # spec-gap nesting-bound: a parse error, answered under null
        message = _parse_shallow(line)
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue
        request_id = message["id"]
        if request_id is None or type(request_id) not in (str, int):
            continue
        key = id_key(request_id)
        counts[key] = counts.get(key, 0) + 1
    return counts


def depth(line: bytes) -> int:
    """The most arrays and objects open at once in ``line``, outside strings (a string runs
    from a quote to the next one not escaped, or to the end of the line), read byte by byte."""
    most = level = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # a backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            level += 1
            most = max(most, level)
        elif byte in b"]}":
            level -= 1
    return most


_UNPARSEABLE = object()


def _parse_shallow(line: bytes) -> Any:
    """Parse ``line`` as acpref does, on a fresh thread (as deep a stack as a host thread's)."""
    box: List[Any] = [_UNPARSEABLE]

    def parse() -> None:
        try:
            box[0] = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            pass

    thread = threading.Thread(target=parse)
    thread.start()
    thread.join()
    return box[0]


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def count_answers(responses: Iterable[Dict[str, Any]]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for m in responses:
        if "id" in m and m["id"] is not None:
            key = id_key(m["id"])
            counts[key] = counts.get(key, 0) + 1
    return counts
