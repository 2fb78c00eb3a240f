"""How many answers each line a peer receives calls for, and how many it got: the instrument of
``tests/test_bad_lines.py``.

Spec: JSON-RPC 2.0 (sections 4, 4.1, 5, 5.1 and the examples of section 7), overview.mdx
(Communication Model, Error Handling); clauses OVERVIEW-01, OVERVIEW-09, RPC-06, RPC-08, RPC-10,
RPC-11, RPC-20. The reading, and acpref's decisions where JSON-RPC is silent:
spec_notes/connection.md (What is answered how) and spec_notes/decisions.md.

``calls_for(line)`` says what one line received calls for, written from the JSON-RPC sentences
and not from acpref's code (it must be able to disagree with it):

* a line that is not UTF-8 JSON: one answer, -32700 with ``id: null`` (JSON-RPC 5.1, RPC-10);
* valid JSON that is not an object (a number, a string, ``null``, ``true``, an array: a batch,
  which ACP defines none of): one answer, -32600 with ``id: null`` (spec-gap batch, RPC-11);
* an object with a ``method`` member and an ``id`` member: a request, however broken: one answer,
  under its id when that is a string, an integer or null (RPC-02), else under ``null``
  (JSON-RPC 5: "If there was an error in detecting the id ... it MUST be Null");
* an object with a string ``method`` and no ``id``: a notification, never answered, even a
  malformed one (JSON-RPC 4.1 "The Server MUST NOT reply to a Notification", OVERVIEW-09);
* an object with a ``method`` that is not a string and no ``id``: no Request object at all, so
  no notification either: one answer, -32600 ``id: null`` (JSON-RPC 7's own example,
  ``{"jsonrpc": "2.0", "method": 1, "params": "bar"}``);
* an object with a ``result`` or an ``error`` member and no ``method``: a Response object, whose
  handler is the Client role (JSON-RPC 2); no rpc call was made, so it is never answered, whatever
  its id (present, absent, unknown, of a wrong type): RPC-08, spec-gap response-without-id;
* any other object (``{}``, ``{"jsonrpc": "2.0", "id": 5}``): not a valid Request object, one
  answer, -32600 with ``id: null`` (RPC-11, spec-gap no-method-id);
* a blank line (nothing, or only JSON whitespace: space, tab, ``\\r``): nothing (spec-gap
  blank-line);
* a line nested deeper than the receiver parses (``acpref._bounds.MAX_DEPTH``, 512 arrays and
  objects open at once, counted outside strings): one answer, -32700 with ``id: null``, as any
  line it cannot parse (RFC 8259, 9 lets a parser bound nesting; spec-gap nesting-bound);
* a line over the receiver's bound, which it refuses unread: one -32600 answer, unless it is a
  response (spec-gap oversize-line; see ``calls_for``).

``LineJudge(side)`` sends lines one at a time to a side (``EchoAgent``, an ``acpref echo``
process, or ``peers.reliability_sides.RawSide``), each followed by a valid request with a fresh
id (the probe), and takes every answer read before the probe's as the line's: the side reads its
input in order and answers a refused line on the thread that read it, so those answers are
written before the probe is even read. A request's own answer may come later (it runs on a
thread of its own), so the judge also waits for the answers still owed, by id. Whatever the line
got too many shows up in its own window, or in the next line's (an answer that came very late),
or at the end of the input (``LineJudge.finish``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional

from peers.reliability_sides import WAIT, Output, depth, encode_line, id_key

from acpref._bounds import MAX_DEPTH

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
NULL = id_key(None)

#: JSON's own whitespace (RFC 8259, 2): what a blank line may hold.
_JSON_WS = b" \t\r"


class Expect(NamedTuple):
    """What one line calls for: ``answer`` is the id key of its one answer, None for none."""

    what: str
    answer: Optional[str] = None
    code: Optional[int] = None  # the error code the answer must carry, when it must be one


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def calls_for(line: bytes, max_line_bytes: Optional[int] = None) -> Expect:
    """What one received line (without its ``\\n``) calls for; see the module doc.

    With ``max_line_bytes``, a longer line is refused unread (spec-gap oversize-line): one
    -32600 answer, under the request's id (the shapes tried put it where the receiver sees it,
    in the line's first or last bytes), else ``null``; a response is not answered.
    """
    if max_line_bytes is not None and len(line) > max_line_bytes:
        whole = calls_for(line)
        if whole.what == "response":
            return Expect("oversize response")
        if whole.what == "request" and whole.answer != NULL:
            return Expect("oversize request", whole.answer, INVALID_REQUEST)
        return Expect("oversize", NULL, INVALID_REQUEST)
    if not line.strip(_JSON_WS):
        return Expect("blank")
    if depth(line) > MAX_DEPTH:
        # RFC 8259, 9: a receiver may bound nesting; what it cannot parse is a parse error
        # (JSON-RPC 5.1: "An error occurred on the server while parsing"). spec-gap nesting-bound.
        return Expect("too deep", NULL, PARSE_ERROR)
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Expect("parse error", NULL, PARSE_ERROR)
    if isinstance(value, list):
        return Expect("batch", NULL, INVALID_REQUEST)
    if not isinstance(value, dict):
        return Expect("not an object", NULL, INVALID_REQUEST)
    if "method" in value:
        if "id" in value:
            request_id = value["id"]
            readable = request_id is None or type(request_id) in (str, int)
            return Expect("request", id_key(request_id) if readable else NULL)
        if isinstance(value["method"], str):
            return Expect("notification")
        return Expect("invalid request", NULL, INVALID_REQUEST)
    if "result" in value or "error" in value:
        return Expect("response")
    return Expect("invalid request", NULL, INVALID_REQUEST)


def wire_lines(blob: bytes) -> List[bytes]:
    """The lines a receiver reads from ``blob + b"\\n"``: a mutation may have put a newline in."""
    return blob.split(b"\n")


class Verdict(NamedTuple):
    """One blob sent, what its lines called for, and the answers it got."""

    blob: bytes
    expected: List[Expect]
    answers: List[Dict[str, Any]]

    def wanted(self) -> List[str]:
        return sorted(e.answer for e in self.expected if e.answer is not None)

    def got(self) -> List[str]:
        return sorted(id_key(m.get("id")) for m in self.answers)

    @property
    def ok(self) -> bool:
        """Each answer owed came once, with the error code it must carry, and nothing else."""
        left = list(self.answers)
        # The answers that must carry a given code first, then those that may carry any.
        for e in sorted(self.expected, key=lambda e: e.code is None):
            if e.answer is None:
                continue
            for m in left:
                error = m.get("error")
                code = error.get("code") if isinstance(error, dict) else None
                if id_key(m.get("id")) == e.answer and (e.code is None or code == e.code):
                    left.remove(m)
                    break
            else:
                return False
        return not left

    def __str__(self) -> str:
        shown = [json.dumps(m)[:300] for m in self.answers]
        return f"{self.blob[:300]!r}: calls for {list(self.expected)}, got {shown}"


class LineJudge:
    """Sends lines one at a time to ``side`` and attributes each answer to its line.

    ``side`` has ``send(bytes)``, ``out`` (a ``peers.reliability_sides.Output``), ``kind``
    (``"agent"`` or ``"client"``) and, for a client, ``session_id`` and ``root``.
    """

    def __init__(self, side: Any, max_line_bytes: Optional[int] = None) -> None:
        self.side = side
        self.max_line_bytes = max_line_bytes  # the side's line bound, when it is small
        self._seen = len(side.out.messages)  # messages before this index belong to the setup
        self._probes = 0

    def probe_request(self, request_id: str) -> Dict[str, Any]:
        """A valid request the side answers with a result (and never by a side request)."""
        if self.side.kind == "agent":
            return {"jsonrpc": "2.0", "id": request_id, "method": "session/list", "params": {}}
        params = {"sessionId": self.side.session_id, "path": str(self.side.root / "probe.txt")}
        return {"jsonrpc": "2.0", "id": request_id, "method": "fs/read_text_file", "params": params}

    def judge(self, blob: bytes, cuts: Iterable[int] = ()) -> Verdict:
        """Send ``blob`` and a newline (in separate writes at the offsets ``cuts``), then the
        probe; return what its lines called for and the answers they got."""
        expected = [calls_for(line, self.max_line_bytes) for line in wire_lines(blob)]
        self._probes += 1
        probe = f"line-judge-probe-{self._probes}"
        data = blob + b"\n"
        start = 0
        for cut in sorted(cuts):
            self.side.send(data[start:cut])
            start = cut
        self.side.send(data[start:] + encode_line(self.probe_request(probe)))
        answers: List[Dict[str, Any]] = []
        probe_key = id_key(probe)
        # A refusal is written on the thread that read the line, before the probe is read; only
        # a request is answered from a thread of its own, possibly after the probe's answer.
        # Every answer owed is waited for, by id: a request with id null may be answered after
        # the probe, and the line's parse errors (id null too) must not stand in for it.
        late = Counter(e.answer for e in expected if e.answer)
        deadline = time.monotonic() + WAIT
        probed = False
        while not probed or late:
            message = self._next(deadline)
            if message is None:
                assert probed, f"after {blob[:300]!r}: no answer to the probe within {WAIT}s"
                break  # an answer owed never came: the verdict says so
            if "method" in message:
                self._serve(message)
                continue
            key = id_key(message.get("id"))
            if key == probe_key and not probed:
                assert "result" in message, f"the probe after {blob[:300]!r} failed: {message}"
                probed = True
                continue
            answers.append(message)
            if late[key] > 0:
                late[key] -= 1
                if not late[key]:
                    del late[key]
        return Verdict(blob, expected, answers)

    def finish(self) -> List[Dict[str, Any]]:
        """End the side's input and return the answers read after the last line's (none, for a
        side that answers each line once)."""
        self.side.end_input()
        assert self.side.out.ended.wait(WAIT), "the side's output did not end"
        with self.side.out._cond:
            rest = self.side.out.messages[self._seen :]
        self._seen += len(rest)
        return [m for m in rest if "method" not in m]

    def _next(self, deadline: float) -> Optional[Dict[str, Any]]:
        """The side's next message, or None if none comes by ``deadline``."""
        out = self.side.out
        with out._cond:
            while len(out.messages) <= self._seen:
                remaining = deadline - time.monotonic()
                if out.ended.is_set() or remaining <= 0:
                    return None
                out._cond.wait(remaining)
            message = out.messages[self._seen]
            self._seen += 1
            return message

    def _serve(self, message: Dict[str, Any]) -> None:
        """A request or notification of the side's own: a request is refused at once, so that
        no handler of the side waits for the test."""
        if "id" in message:
            refusal = {"code": -32601, "message": "the test serves no requests"}
            self.side.send(encode_line({"jsonrpc": "2.0", "id": message["id"], "error": refusal}))


class EchoAgent:
    """``acpref echo`` in a process group of its own, over two pipes; the test is its client."""

    kind = "agent"

    def __init__(self, root: Path) -> None:
        self.root = root
        in_r, self._in_w = os.pipe()
        out_r, out_w = os.pipe()
        self._stderr = open(root / "echo-stderr.log", "wb")  # the OS drains it: never fills
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "acpref", "echo"],
            stdin=in_r,
            stdout=out_w,
            stderr=self._stderr,
            cwd=root,
            start_new_session=True,
        )
        os.close(in_r)
        os.close(out_w)
        self.out = Output(out_r)
        self.session_id = ""

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in_w, view) :]

    def end_input(self) -> None:
        if self._in_w >= 0:
            os.close(self._in_w)
            self._in_w = -1

    def setup(self) -> str:
        """``initialize`` and one session; returns the session id."""
        self.send(encode_line({"jsonrpc": "2.0", "id": "setup-1", "method": "initialize",
                               "params": {"protocolVersion": 1, "clientCapabilities": {}}}))
        assert "result" in self.out.response("setup-1")
        self.send(encode_line({"jsonrpc": "2.0", "id": "setup-2", "method": "session/new",
                               "params": {"cwd": str(self.root), "mcpServers": []}}))
        self.session_id = self.out.response("setup-2")["result"]["sessionId"]
        return self.session_id

    def stderr(self) -> str:
        return (self.root / "echo-stderr.log").read_text("utf-8", "replace")

    def close(self) -> int:
        """End its input; stop its group if it does not exit by itself. Returns its status."""
        self.end_input()
        try:
            status = self.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            status = -1
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # whatever it left in its group
        except ProcessLookupError:
            pass
        self.proc.wait(WAIT)
        self._stderr.close()
        self.out.join()
        return status
