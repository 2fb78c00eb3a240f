"""Exactly one answer per received line that calls for one, on the agent side and the client side.

Spec: JSON-RPC 2.0 (sections 2, 4.1, 5, 7), overview.mdx (Communication Model, Error Handling);
clauses OVERVIEW-01, OVERVIEW-09, RPC-04, RPC-06, RPC-08, RPC-10, RPC-11, RPC-20, TRANSPORT-01,
TRANSPORT-04; decisions blank-line, batch, no-method-id, response-without-id, oversize-line
(spec_notes/decisions.md). What each line calls for is the instrument's reading
(``peers.line_answers.calls_for``), written from the JSON-RPC sentences, not from acpref's code.

Two kinds of test, both judging one line at a time (``peers.line_answers.LineJudge``: the line,
then a probe request, and every answer read before the probe's belongs to the line):

* the named shapes: each bad line of issue 30 (blank and whitespace lines, ``\\r``, JSON that is
  no object, batches, responses with unknown, null, absent or unusable ids, notifications,
  invalid UTF-8, NUL bytes, lines at, over and across the line bound), against the agent side
  and the client side, each with a small line bound;
* the property: byte mutations (flips, insertions, deletions, truncations, duplications) of valid
  ACP messages and of the shapes, one line at a time to a real ``acpref echo`` process and to the
  client side, counting the answers of every line. Hypothesis draws them derandomized: the same
  lines every run. ``ACPREF_BAD_LINES`` sets the number of lines per side (default 300; 13 000
  with ``ACPREF_LONG=1``, the size of the run that found the extra answers).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from peers.line_answers import EchoAgent, LineJudge, Verdict, calls_for
from peers.reliability_sides import RawSide, Watch

from acpref.oracle import TranscriptRecorder, validate

LONG = os.environ.get("ACPREF_LONG") == "1"
LINES = int(os.environ.get("ACPREF_BAD_LINES", "13000" if LONG else "300"))
#: The line bound of the in-process sides: small, so that lines over it are cheap to send.
BOUND = 64 * 1024

#: A method no side knows: a request for it is answered -32601, a notification of it ignored.
NONE = "_acpref_test/none"


def _line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8")


def _request(request_id: Any, **more: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": NONE, **more}


def _padded(message: Dict[str, Any], size: int, member: str = "params") -> bytes:
    """``message`` with ``member`` (after the envelope) padded to make its line ``size`` long."""
    message = {**message, member: {"_meta": {"pad": ""}}}
    line = _line(message)
    return line.replace(b'"pad":""', b'"pad":"' + b"x" * (size - len(line)) + b'"')


def _id_last(request_id: int, size: int) -> bytes:
    """A request over the bound whose id comes after its payload (in the line's last bytes)."""
    line = _padded({"jsonrpc": "2.0", "method": NONE}, size)
    return line[:-1] + b',"id":' + str(request_id).encode() + b"}"


#: The shapes of issue 30: name -> the bytes of one line (without its newline).
SHAPES: Dict[str, bytes] = {
    "empty": b"",
    "spaces-and-tabs": b" \t  \t",
    "carriage-return": b"\r",
    "form-feed": b"\x0c",  # not JSON whitespace (RFC 8259, 2): not a blank line
    "vertical-tab-among-spaces": b" \x0b ",
    "request-ending-in-cr": _line(_request(11)) + b"\r",
    "request-with-a-newline-inside": _line(_request(12))[:20] + b"\n" + _line(_request(12))[20:],
    "number": b"5",
    "string": b'"a string"',
    "null": b"null",
    "true": b"true",
    "empty-batch": b"[]",
    "batch-of-one-request": b"[" + _line(_request(13)) + b"]",
    "batch-of-numbers": b"[1,2,3]",
    "empty-object": b"{}",
    "jsonrpc-only": b'{"jsonrpc":"2.0"}',
    "id-only": b'{"jsonrpc":"2.0","id":14}',
    "response-unknown-id": b'{"jsonrpc":"2.0","id":4242,"result":{}}',
    "error-response-unknown-id": b'{"jsonrpc":"2.0","id":4243,"error":{"code":-1,"message":"x"}}',
    "error-response-null-id": b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
    "response-id-not-an-id": b'{"jsonrpc":"2.0","id":{"a":1},"result":1}',
    "response-both-result-and-error": (
        b'{"jsonrpc":"2.0","id":4244,"result":1,"error":{"code":-1,"message":"x"}}'
    ),
    "response-without-id": b'{"jsonrpc":"2.0","result":{}}',
    "error-response-without-id": b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}',
    "response-without-id-or-jsonrpc": b'{"result":5}',
    "notification-unknown": _line({"jsonrpc": "2.0", "method": NONE}),
    "notification-malformed": b'{"jsonrpc":"1.0","method":"session/cancel","params":5}',
    "request-method-without-id": b'{"jsonrpc":"2.0","method":"session/list","params":{}}',
    "method-not-a-string-without-id": b'{"jsonrpc":"2.0","method":1,"params":"bar"}',
    "request-id-fractional": _line(_request(1.5)),
    "request-id-true": _line(_request(True)),
    "request-id-an-object": _line(_request({"a": 1})),
    "request-id-null": _line(_request(None)),
    "request-without-jsonrpc": _line({"id": 15, "method": NONE}),
    "request-params-an-array": _line(_request(16, params=[1])),
    "request-method-not-a-string": b'{"jsonrpc":"2.0","id":17,"method":5}',
    "invalid-utf8": _line(_request(18)).replace(b"2.0", b"2.0\xff"),
    "encoded-surrogate": _line(_request(19)).replace(b"2.0", b"2.0\xed\xa0\x80"),
    "nul-byte": _line(_request(20)).replace(b",", b",\x00", 1),
    "nul-only": b"\x00",
    "escaped-nul-in-a-string": _line(_request(21, params={"text": "\x00"})),
    "nan": _line(_request(22)).replace(b"}", b',"params":{"a":NaN}}'),
    "two-messages-on-one-line": _line(_request(23)) + _line(_request(24)),
    "byte-order-mark": b"\xef\xbb\xbf" + _line(_request(25)),
    "truncated": _line(_request(26))[:-1],
    "at-the-bound": _padded(_request(31), BOUND),
    "one-past-the-bound": _padded(_request(32), BOUND + 1),
    "far-over-the-bound": _padded(_request(33), 3 * BOUND),
    "over-the-bound-id-last": _id_last(34, 2 * BOUND),
    "over-the-bound-garbage": b"x" * (BOUND + 1),
    "over-the-bound-notification": _padded({"jsonrpc": "2.0", "method": NONE}, 2 * BOUND),
    "over-the-bound-response-unknown-id": _padded(
        {"jsonrpc": "2.0", "id": 4245}, 2 * BOUND, "result"
    ),
    "over-the-bound-response-without-id": _padded({"jsonrpc": "2.0"}, 2 * BOUND, "result"),
}

#: Shapes sent in several writes: name -> (the shape, the offsets where the writes are cut).
CUT: Dict[str, Tuple[str, Tuple[int, ...]]] = {
    "cut-at-the-bound": ("far-over-the-bound", (BOUND,)),
    "cut-one-before-the-bound": ("one-past-the-bound", (BOUND,)),
    "cut-in-small-pieces": ("over-the-bound-id-last", tuple(range(4096, 2 * BOUND, 4096))),
    "at-the-bound-cut-before-its-newline": ("at-the-bound", (BOUND,)),
}

#: The shapes the property mutates too (those far from any bound).
SMALL_SHAPES = [line for line in SHAPES.values() if len(line) < 1024]


# -- The sides ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judges(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], LineJudge]]:
    """One side of each kind with a small line bound, shared by the shape tests; each shape is
    judged on its own, so the sides' history does not change what a line calls for."""
    made: Dict[str, Tuple[RawSide, LineJudge]] = {}

    def judge_for(kind: str) -> LineJudge:
        if kind not in made:
            root = tmp_path_factory.mktemp(kind)
            side = RawSide(kind, root, max_line_bytes=BOUND)
            side.setup()
            made[kind] = (side, LineJudge(side, max_line_bytes=BOUND))
        return made[kind][1]

    yield judge_for
    for side, judge in made.values():
        assert judge.finish() == [], f"the {side.kind} side answered something late"
        side.close()


@pytest.fixture
def watch() -> Iterator[Watch]:
    with Watch() as w:
        yield w
    assert w.problems() == []


def _assert_one_answer_each(verdicts: List[Verdict]) -> None:
    bad = [v for v in verdicts if not v.ok]
    tally = Counter(
        (tuple(e.what for e in v.expected), len(v.wanted()), len(v.answers)) for v in bad
    )
    assert not bad, (
        f"{len(bad)} of {len(verdicts)} lines got other answers than they call for "
        f"((what the lines were), answers owed, answers got): {dict(tally)}; the first ones:\n"
        + "\n".join(str(v) for v in bad[:12])
    )


# -- The named shapes -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["agent", "client"])
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_RPC_06_OVERVIEW_09_each_bad_line_gets_the_answers_it_calls_for(
    judges: Any, watch: Watch, kind: str, name: str
) -> None:
    # spec-gap blank-line: a blank line gets nothing; a form feed is no JSON whitespace.
    # spec-gap response-without-id: no response is answered, whatever its id.
    # spec-gap batch: one -32600 for a whole batch; spec-gap no-method-id: -32600 with id null.
    verdict = judges(kind).judge(SHAPES[name])
    assert verdict.ok, str(verdict)


@pytest.mark.parametrize("kind", ["agent", "client"])
@pytest.mark.parametrize("name", sorted(CUT))
def test_RPC_06_a_line_cut_across_the_bound_gets_one_answer(
    judges: Any, watch: Watch, kind: str, name: str
) -> None:
    # spec-gap oversize-line: refused once, under its id when its ends show it; kept going.
    shape, cuts = CUT[name]
    verdict = judges(kind).judge(SHAPES[shape], cuts)
    assert verdict.ok, str(verdict)


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_oracle_blames_no_side_for_its_answers_to_bad_lines(
    tmp_path: Path, watch: Watch, kind: str
) -> None:
    # The oracle judges recorded traffic with the rules the sides obey: a side that answers each
    # bad line as it calls for is never blamed; the peer that sent the lines is.
    recorder = TranscriptRecorder(me=kind, keep=True)
    side = RawSide(kind, tmp_path, max_line_bytes=BOUND, recorder=recorder)
    try:
        side.setup()
        judge = LineJudge(side, max_line_bytes=BOUND)
        verdicts = [judge.judge(line) for line in SHAPES.values()]
        assert judge.finish() == []
    finally:
        side.close()
    _assert_one_answer_each(verdicts)
    assert recorder.records is not None
    # A line over the bound is recorded as an oversize event with its size; an empty line is a
    # line, recorded as one (not as an oversize event the side would owe an answer to).
    incoming = [r for r in recorder.records if r.sender != kind]
    oversize = [r.size for r in incoming if r.event == "oversize"]
    assert oversize and all(size is not None and size > BOUND for size in oversize), oversize
    assert any(r.raw == b"" for r in incoming if r.event is None), "the empty line was not kept"
    findings = validate(recorder.records).findings
    blamed = [(f.clause, f.message, f.index) for f in findings if f.blame.value == kind]
    assert blamed == [], "\n".join(map(str, blamed))
    assert {f.blame.value for f in findings} == {"agent" if kind == "client" else "client"}


def test_the_reading_of_each_shape() -> None:
    # The instrument's own reading, spelled out for the shapes whose answer is a decision.
    reading = {name: calls_for(line, BOUND) for name, line in SHAPES.items()}
    never = [n for n, e in reading.items() if e.answer is None]
    assert sorted(never) == [
        "carriage-return",
        "empty",
        "error-response-null-id",
        "error-response-unknown-id",
        "error-response-without-id",
        "notification-malformed",
        "notification-unknown",
        "over-the-bound-response-unknown-id",
        "over-the-bound-response-without-id",
        "request-method-without-id",
        "response-both-result-and-error",
        "response-id-not-an-id",
        "response-unknown-id",
        "response-without-id",
        "response-without-id-or-jsonrpc",
        "spaces-and-tabs",
    ]
    assert reading["form-feed"].code == reading["nul-only"].code == -32700
    assert reading["method-not-a-string-without-id"].answer == "null"  # JSON-RPC 2.0's example
    assert reading["over-the-bound-notification"].answer == "null"  # its id may be unseen
    assert reading["over-the-bound-id-last"].answer == "34"


# -- The property: byte mutations, one line at a time ---------------------------------------------


def _agent_lines(session_id: str, root: Path) -> List[bytes]:
    """What a client sends an agent: a message of each kind, valid."""
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    return [
        _line({"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}),
        _line({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}),
        _line({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode",
               "params": {"sessionId": session_id, "modeId": "default"}}),
        _line({"jsonrpc": "2.0", "id": 4, "method": "initialize",
               "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
        _line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}),
        _line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}),
        _line({"jsonrpc": "2.0", "id": 77, "result": {"outcome": {"outcome": "cancelled"}}}),
        _line({"jsonrpc": "2.0", "id": 78, "error": {"code": -32603, "message": "failed"}}),
    ]


def _client_lines(session_id: str, root: Path) -> List[bytes]:
    """What an agent sends a client: a message of each kind, valid, within the session's root."""
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    permission = {
        "sessionId": session_id,
        "toolCall": {"toolCallId": "call-1", "title": "edit"},
        "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}],
    }
    return [
        _line({"jsonrpc": "2.0", "method": "session/update",
               "params": {"sessionId": session_id, "update": chunk}}),
        _line({"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file",
               "params": {"sessionId": session_id, "path": str(root / "notes.txt")}}),
        _line({"jsonrpc": "2.0", "id": 2, "method": "fs/write_text_file",
               "params": {"sessionId": session_id, "path": str(root / "w.txt"), "content": "x"}}),
        _line({"jsonrpc": "2.0", "id": 3, "method": "session/request_permission",
               "params": permission}),
        _line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}),
        _line({"jsonrpc": "2.0", "id": 77, "result": {"sessionId": session_id}}),
        _line({"jsonrpc": "2.0", "id": 78, "error": {"code": -32603, "message": "failed"}}),
    ]


#: Where one byte changes what a message is: its envelope members' names.
_MEMBER = re.compile(rb'"(?:jsonrpc|id|method|params|result|error)"')


@st.composite
def _mutated(draw: Any, lines: List[bytes]) -> bytes:
    """One of ``lines`` with one to three byte edits, anywhere or in an envelope member's name.

    Offsets are drawn apart from the line (then taken modulo its length), so that the same edits
    are drawn every run, whatever the length of the paths and session ids in the lines.
    """
    line = bytearray(lines[draw(st.integers(0, len(lines) - 1), label="line")])
    marks = [m.start() + 1 for m in _MEMBER.finditer(line)]
    for _ in range(draw(st.integers(1, 3), label="edits")):
        in_member, n = draw(st.tuples(st.booleans(), st.integers(0, 1 << 16)), label="where")
        at = marks[n % len(marks)] if in_member and marks else n % (len(line) + 1)
        at = min(at, len(line))
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "duplicate"]))
        if op == "flip" and line:
            line[min(at, len(line) - 1)] = draw(st.integers(0, 255))
        elif op == "insert":
            line[at:at] = draw(st.binary(min_size=1, max_size=3))
        elif op == "delete":
            del line[at : at + draw(st.integers(1, 8))]
        elif op == "truncate":
            del line[at:]
        elif op == "duplicate":
            line[at:at] = line[at : at + draw(st.integers(1, 16))]
    return bytes(line)


def _measure(judge: LineJudge, lines: List[bytes]) -> Tuple[List[Verdict], Counter]:
    """Judge ``LINES`` mutations of ``lines``; every verdict, and what the lines were."""
    verdicts: List[Verdict] = []

    @settings(
        max_examples=LINES,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(blob=_mutated(lines))
    def case(blob: bytes) -> None:
        verdicts.append(judge.judge(blob))

    case()
    kinds = Counter(e.what for v in verdicts for e in v.expected)
    return verdicts, kinds


def _report(kind: str, verdicts: List[Verdict], kinds: Counter) -> None:
    wanted = sum(len(v.wanted()) for v in verdicts)
    got = sum(len(v.answers) for v in verdicts)
    nulls = sum(v.wanted().count("null") for v in verdicts), sum(
        v.got().count("null") for v in verdicts
    )
    print(
        f"\nbad lines, {kind}: {len(verdicts)} lines sent, {sum(kinds.values())} read; "
        f"{wanted} answers owed, {got} got; id null: {nulls[0]} owed, {nulls[1]} got; "
        f"{dict(kinds)}"
    )


@pytest.mark.timeout(3600 if LONG else 120)
def test_RPC_06_one_answer_per_mutated_line_from_a_real_echo_agent(tmp_path: Path) -> None:
    agent = EchoAgent(tmp_path)
    try:
        session_id = agent.setup()
        judge = LineJudge(agent)
        verdicts, kinds = _measure(judge, _agent_lines(session_id, tmp_path) + SMALL_SHAPES)
        late = judge.finish()
    finally:
        status = agent.close()
    _report("acpref echo", verdicts, kinds)
    assert len(verdicts) >= min(LINES, 100)
    _assert_one_answer_each(verdicts)
    assert late == []
    assert status == 0
    # Nothing escaped: no traceback, nothing logged at ERROR (a bad line is only a WARNING).
    assert not re.search(r" (ERROR|CRITICAL) |Traceback", agent.stderr()), agent.stderr()[-3000:]


@pytest.mark.timeout(3600 if LONG else 120)
def test_RPC_06_one_answer_per_mutated_line_on_the_client_side(
    tmp_path: Path, watch: Watch
) -> None:
    side = RawSide("client", tmp_path)
    try:
        session_id = side.setup()
        judge = LineJudge(side)
        verdicts, kinds = _measure(judge, _client_lines(session_id, tmp_path) + SMALL_SHAPES)
        late = judge.finish()
    finally:
        side.close()
    _report("client side", verdicts, kinds)
    assert len(verdicts) >= min(LINES, 100)
    _assert_one_answer_each(verdicts)
    assert late == []
