"""Exactly one answer per line that calls for one, under structural mutations (issue 34).

Spec: JSON-RPC 2.0 (sections 4.1, 5, 5.1), RFC 8259 (section 9: "An implementation may set
limits on the maximum depth of nesting"); clauses RPC-06, RPC-10, OVERVIEW-09; decision
nesting-bound (spec_notes/decisions.md). What each line calls for is the instrument's reading
(``peers.line_answers.calls_for``), written from the sentences, not from acpref's code.

The mutations (``peers.wide_mutations``): envelope member names changed whole or escaped,
nesting around and beyond the depth bound, two lines merged into one, a line cut in two,
members given twice, ids of every type; one to three such lines in one write. Each blob goes,
followed by a probe, to a real ``acpref echo`` process and to the client side over real pipes
(``peers.line_answers.LineJudge``: every answer read before the probe's belongs to the blob;
a request's own answer is waited for by id). Each blob's request ids are its own, so the
answers are also counted per id over the whole run. The blobs come from ``random.Random``
seeded by the case's number: the same on every run (``ACPREF_WIDE_CASES`` per side: 2 000;
20 000 with ``ACPREF_LONG=1``).

Found by it (before the fix, 6 000 blobs a side: 28 wrong at ``acpref echo``, 25 at the client
side), one cause: how deeply a line may nest was wherever the reading thread's stack ran out
(about 990 levels at ``acpref echo``, fewer on a thread reading for its own answer, more under
a raised recursion limit), while the instrument, like any other reader, parsed the same line;
so a request nested 991 deep was answered -32700 ``id: null`` and never under its id, and a
notification or response so deep was answered at all. Now a fixed bound
(``acpref._bounds.MAX_DEPTH``) is checked on the bytes before decoding: the same verdict on every
thread, every Python version, every recursion limit. The regression tests below keep the
minimal lines.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from peers.line_answers import NULL, EchoAgent, LineJudge, Verdict, calls_for
from peers.reliability_sides import RawSide, Watch, depth, id_key
from peers.wide_mutations import blob

from acpref._bounds import MAX_DEPTH, nesting
from acpref.oracle import TranscriptRecorder, validate

LONG = os.environ.get("ACPREF_LONG") == "1"
CASES = int(os.environ.get("ACPREF_WIDE_CASES", "20000" if LONG else "2000"))
SEED = "issue-34"


def _line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode("utf-8")


def _agent_lines(session_id: str, root: Path, ids: Iterator[int]) -> List[bytes]:
    """What a client sends an agent: a message of each kind, valid, with the ids ``ids``."""
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
    return [
        _line({"jsonrpc": "2.0", "id": next(ids), "method": "session/list", "params": {}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "method": "session/prompt", "params": prompt}),
        _line({"jsonrpc": "2.0", "id": next(ids), "method": "session/set_mode",
               "params": {"sessionId": session_id, "modeId": "default"}}),
        _line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}),
        _line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "result": {"outcome": {"outcome": "cancelled"}}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "error": {"code": -32603, "message": "failed"}}),
    ]


def _client_lines(session_id: str, root: Path, ids: Iterator[int]) -> List[bytes]:
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
        _line({"jsonrpc": "2.0", "id": next(ids), "method": "fs/read_text_file",
               "params": {"sessionId": session_id, "path": str(root / "notes.txt")}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "method": "fs/write_text_file",
               "params": {"sessionId": session_id, "path": str(root / "w.txt"), "content": "x"}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "method": "session/request_permission",
               "params": permission}),
        _line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "result": {"sessionId": session_id}}),
        _line({"jsonrpc": "2.0", "id": next(ids), "error": {"code": -32603, "message": "failed"}}),
    ]


def _run(judge: LineJudge, make: Any, session_id: str, root: Path) -> List[Verdict]:
    verdicts = []
    for case in range(CASES):
        rng = random.Random(f"{SEED}-{case}")
        ids = iter(range(100_000 + case * 10, 100_000 + case * 10 + 10))
        verdicts.append(judge.judge(blob(rng, make(session_id, root, ids))))
    return verdicts


def _assert_each_answered_as_owed(kind: str, verdicts: List[Verdict], late: List[Any]) -> None:
    bad = [(n, v) for n, v in enumerate(verdicts) if not v.ok]
    owed = Counter(a for v in verdicts for a in v.wanted() if a != NULL)
    got = Counter(k for v in verdicts for k in v.got() if k != NULL)
    kinds = Counter(e.what for v in verdicts for e in v.expected)
    print(f"\nwide mutations, {kind}: {len(verdicts)} blobs, {sum(kinds.values())} lines; "
          f"{sum(len(v.wanted()) for v in verdicts)} answers owed, "
          f"{sum(len(v.answers) for v in verdicts)} got; {dict(kinds)}")
    assert not bad, f"{len(bad)} blobs answered wrongly (case: blob, reading, answers):\n" + (
        "\n".join(f"{n}: {v}" for n, v in bad[:10])
    )
    # spec RPC-06: over the whole run, each id owed an answer got exactly as many.
    wrong = {k: (owed[k], got[k]) for k in owed.keys() | got.keys() if owed[k] != got[k]}
    assert got == owed, wrong
    assert late == []


@pytest.mark.timeout(3600 if LONG else 120)
def test_RPC_06_one_answer_per_line_owed_under_wide_mutations_from_a_real_echo_agent(
    tmp_path: Path,
) -> None:
    agent = EchoAgent(tmp_path)
    try:
        session_id = agent.setup()
        judge = LineJudge(agent)
        verdicts = _run(judge, _agent_lines, session_id, tmp_path)
        late = judge.finish()
    finally:
        status = agent.close()
    _assert_each_answered_as_owed("acpref echo", verdicts, late)
    assert status == 0
    assert not re.search(r" (ERROR|CRITICAL) |Traceback", agent.stderr()), agent.stderr()[-3000:]


@pytest.mark.timeout(3600 if LONG else 120)
def test_RPC_06_one_answer_per_line_owed_under_wide_mutations_on_the_client_side(
    tmp_path: Path,
) -> None:
    with Watch() as watch:
        side = RawSide("client", tmp_path)
        try:
            session_id = side.setup()
            judge = LineJudge(side)
            verdicts = _run(judge, _client_lines, session_id, tmp_path)
            late = judge.finish()
        finally:
            side.close()
    _assert_each_answered_as_owed("client side", verdicts, late)
    assert watch.problems() == []


def test_the_generator_is_the_same_on_every_run() -> None:
    ids = iter(range(10))
    lines = _agent_lines("s", Path("/r"), ids)
    first = [blob(random.Random(f"{SEED}-{n}"), lines) for n in range(50)]
    assert first == [blob(random.Random(f"{SEED}-{n}"), lines) for n in range(50)]


# -- The minimal lines of what it found -----------------------------------------------------------


def _nested(levels: int, inner: bytes = b"1") -> bytes:
    return b"[" * levels + inner + b"]" * levels


def _deep_request(request_id: int, total: int) -> bytes:
    """A request whose line nests ``total`` levels deep (its own object and params included)."""
    return (b'{"jsonrpc":"2.0","id":%d,"method":"session/list","params":{"_meta":{"x":' % request_id
            + _nested(total - 3) + b"}}}")


#: The reproducers (the lines before the deep one are issue 34's example: a response whose
#: ``id`` member was renamed, which is dropped unanswered).
RENAMED_ID_RESPONSE = b'{"jsonrpc":"2.0","iD":77,"result":{}}'


def test_the_depth_is_read_alike_by_the_receiver_and_the_instrument() -> None:
    cases = [
        _deep_request(1, MAX_DEPTH),
        _deep_request(1, MAX_DEPTH + 1),
        b'{"a":"' + b"[" * 600 + b'"}',  # brackets inside a string
        b'{"a":"\\"' + b"[" * 600 + b'"}',  # after an escaped quote
        b'{"a":"\\\\"' + b"[" * 600,  # after an escaped backslash: outside the string
        b'"unterminated' + b"[" * 600,
        b"]" * 10 + b"[" * 600,
        _nested(100_000),
    ]
    for line in cases:
        assert nesting(line) == (depth(line) if depth(line) > MAX_DEPTH else 0), line[:40]
    assert depth(_deep_request(1, MAX_DEPTH)) == MAX_DEPTH


@pytest.fixture(params=["agent", "client"])
def side(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tuple[RawSide, LineJudge]]:
    with Watch() as watch:
        raw = RawSide(request.param, tmp_path)
        try:
            raw.setup()
            judge = LineJudge(raw)
            yield raw, judge
            assert judge.finish() == []
        finally:
            raw.close()
    assert watch.problems() == []


def _answers(judge: LineJudge, line: bytes) -> Verdict:
    verdict = judge.judge(line)
    assert verdict.ok, str(verdict)
    return verdict


def test_RPC_10_a_request_one_level_over_the_bound_is_a_parse_error_on_every_reader(
    side: Tuple[RawSide, LineJudge],
) -> None:
    # spec-gap nesting-bound: 513 levels is more than acpref parses, whatever the stack of the
    # thread that reads it and whatever the recursion limit (hypothesis raises it, and Python
    # 3.12 counts the decoder's recursion apart). Before: parsed, and served under its id.
    raw, judge = side
    old = sys.getrecursionlimit()
    try:
        for limit in (old, 20_000):
            sys.setrecursionlimit(limit)
            verdict = _answers(judge, _deep_request(7, MAX_DEPTH + 1))
            (answer,) = verdict.answers
            assert answer["id"] is None and answer["error"]["code"] == -32700
            assert answer["error"]["data"] == {"clause": "RPC-10", "depth": MAX_DEPTH + 1,
                                               "limit": MAX_DEPTH}
    finally:
        sys.setrecursionlimit(old)


def test_RPC_06_a_request_at_the_bound_is_served_under_its_id(
    side: Tuple[RawSide, LineJudge],
) -> None:
    raw, judge = side
    verdict = _answers(judge, _deep_request(8, MAX_DEPTH))
    (answer,) = verdict.answers
    assert answer["id"] == 8


def test_RPC_06_issue_34_a_renamed_response_id_then_a_request_nested_too_deep(
    side: Tuple[RawSide, LineJudge],
) -> None:
    # Issue 34's example: the response answers nothing and is dropped; the request nested 991
    # deep (where the reading thread's stack ran out) gets one -32700 under null, and only that.
    raw, judge = side
    verdict = _answers(judge, RENAMED_ID_RESPONSE + b"\n" + _deep_request(9, 991))
    assert [(a["id"], a["error"]["code"]) for a in verdict.answers] == [(None, -32700)]
    assert calls_for(_deep_request(9, 991)).what == "too deep"


@pytest.mark.parametrize("what", ["notification", "response"])
def test_OVERVIEW_09_a_notification_or_response_too_deep_gets_one_parse_error(
    side: Tuple[RawSide, LineJudge], what: str
) -> None:
    # A line nested past the bound cannot be read as a notification or a response: it is one
    # parse error (JSON-RPC 5.1), answered once under null. Before: around 990 levels, parsed
    # on one thread (never answered) and refused on another (answered -32700).
    raw, judge = side
    if what == "notification":
        line = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"_meta":' + _nested(
            MAX_DEPTH - 1) + b"}}"
    else:
        line = b'{"jsonrpc":"2.0","id":4242,"result":{"_meta":' + _nested(MAX_DEPTH - 1) + b"}}"
    assert depth(line) == MAX_DEPTH + 1
    verdict = _answers(judge, line)
    assert [(a["id"], a["error"]["code"]) for a in verdict.answers] == [(None, -32700)]
    # One level less: a notification or a response to nothing, never answered.
    shallower = line.replace(b"[[", b"[", 1).replace(b"]]", b"]", 1)
    assert depth(shallower) == MAX_DEPTH
    assert _answers(judge, shallower).answers == []


@pytest.mark.parametrize("kind", ["agent", "client"])
def test_the_oracle_does_not_blame_a_side_for_refusing_a_line_too_deep(
    tmp_path: Path, kind: str
) -> None:
    # The oracle parses deeper than the bound: before, it read acpref's -32700 (id null) to a
    # request nested 600 deep as a response to no request (RPC-04, blamed on acpref's side).
    recorder = TranscriptRecorder(me=kind, keep=True)
    with Watch() as watch:
        raw = RawSide(kind, tmp_path, recorder=recorder)
        try:
            raw.setup()
            judge = LineJudge(raw)
            line = b'{"jsonrpc":"2.0","id":7,"method":"_x/y","params":{"_meta":' + _nested(
                600) + b"}}"
            verdict = _answers(judge, line)
            assert [a["id"] for a in verdict.answers] == [None]
            assert judge.finish() == []
        finally:
            raw.close()
    assert watch.problems() == []
    assert recorder.records is not None
    blamed = [(f.clause, f.message) for f in validate(recorder.records).findings
              if f.blame.value == kind]
    assert blamed == []
