"""Hostile and broken input, fuzzed: both sides of acpref over real pipes, fed what hypothesis makes.

Spec: overview.mdx (Error Handling), transports.mdx; clauses RPC-06 (one response per request),
RPC-10, RPC-11, OVERVIEW-09, TRANSPORT-01, TRANSPORT-04. What is answered how:
spec_notes/connection.md; the fuzz design and the figures: spec_notes/reliability.md.

Six targets, each run against a fresh side per case (``peers.reliability_sides.RawSide``): the
agent side (``AgentSideConnection`` serving a small ``Agent``) and the client side
(``ClientSideConnection`` serving the ``ReferenceClient``), each fed

* **random bytes**, and valid lines with random bytes flipped, cut out or put in;
* **random JSON**, and objects shaped like JSON-RPC messages with random members;
* **mutations of valid messages of every method** (``acpref.methods.METHODS``): keys dropped
  and renamed, values swapped for another type, huge values, deep nesting, broken envelopes,
  several messages per write cut at random points.

Every case checks four properties: nothing escapes (no ERROR log from acpref, no exception
leaving a thread), nothing hangs (the case ends within ``WAIT``), every request-shaped line is
answered exactly once (responses counted by id on the raw output once it has ended) and every
other line as many times as it calls for (``peers.line_answers.calls_for``: the answers with id
null counted), and the side is still usable afterwards (a valid request sent after the case is
answered with a result).

Cases per target: ``ACPREF_FUZZ_CASES`` (default 200; 5000 with ``ACPREF_LONG=1``). The number of
cases actually run is printed at the end of each target (``pytest -s`` shows it).
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peers.reliability_messages import (
    JSON,
    MESSAGE_LIKE,
    dumps,
    mutated,
    templates,
)
from peers.line_answers import NULL, calls_for
from peers.reliability_sides import (
    WAIT,
    RawSide,
    Watch,
    count_answers,
    expected_answers,
)

from acpref import codec
from acpref.methods import METHODS

LONG = os.environ.get("ACPREF_LONG") == "1"
CASES = int(os.environ.get("ACPREF_FUZZ_CASES", "5000" if LONG else "200"))
#: The line bound of the sides under fuzz: small, so that huge mutations cross it too.
LINE_BOUND = 256 * 1024

pytestmark = pytest.mark.timeout(3600 if LONG else 120)

FUZZ = settings(
    max_examples=CASES,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

SIDES = ["agent", "client"]
_RUN: Dict[str, int] = {}  # cases passed, per side
_CASE_DIRS = itertools.count()


def _run_case(
    kind: str, tmp: Path, build: Callable[[str, Path], List[bytes]], chunks: List[int]
) -> None:
    """Feed a fresh side the lines ``build(session_id, root)`` makes, cut at ``chunks``; check."""
    root = tmp / f"case-{next(_CASE_DIRS)}"
    root.mkdir()
    with Watch() as watch:
        side = RawSide(kind, root, max_line_bytes=LINE_BOUND)
        try:
            lines = build(side.setup(), root)
            data = b"".join(line + b"\n" for line in lines)
            start = 0
            for size in chunks:
                if start >= len(data):
                    break
                side.send(data[start : start + size])
                start += size
            side.send(data[start:] + b"\n")  # a stray partial line ends before the probe
            side.probe()  # still usable: a valid request answered with a result
            responses = side.finish()  # every answer, up to the end of the output
        finally:
            side.close()
            shutil.rmtree(root, ignore_errors=True)  # fuzzed writes may have left big files
    # spec RPC-06: every request-shaped line got exactly one response under its id, and no
    # response names an id we never sent.
    expected = expected_answers(lines, max_line_bytes=LINE_BOUND)
    got = count_answers(responses)
    extra = {k for k in got if k not in expected}
    assert all(got.get(k, 0) == n for k, n in expected.items()), (expected, got)
    assert all(got[k] == 1 for k in extra), got
    assert len(extra) == (3 if kind == "agent" else 1), extra  # the setup and the probe
    # spec RPC-10, RPC-11, OVERVIEW-09: as many answers with id null as lines that call for one
    # (a parse error, an invalid request, a request with id null), whatever was cut where; none
    # for a notification, a response or a blank line. Lines over the bound are counted by id
    # above, from what their ends show.
    wire = data.split(b"\n")  # the lines read, the stray one ended before the probe included
    if all(len(line) <= LINE_BOUND for line in wire):
        owed_null = sum(calls_for(line).answer == NULL for line in wire)
        assert sum(m.get("id", 0) is None for m in responses) == owed_null, wire
    assert watch.problems() == []
    _RUN[kind] = _RUN.get(kind, 0) + 1


#: Found by this suite in code outside it, and fixed: the rules' crashes on unhashable values,
#: and the agent side refusing its own answer or update under a race of session/load,
#: session/resume or session/close with another request of the same session (spec-gap
#: reopen-in-flight, close-in-flight). Any such record now fails the test.


def _no_thread_left(kind: str) -> None:
    prefix = f"fuzz-{kind}"
    for thread in threading.enumerate():
        if thread.name.startswith(prefix):
            thread.join(WAIT)
    assert [t.name for t in threading.enumerate() if t.name.startswith(prefix)] == []


def _report(kind: str, target: str, before: int) -> None:
    ran = _RUN.get(kind, 0) - before
    print(f"\nfuzz {kind} side, {target}: {ran} cases")
    assert ran >= min(CASES, 50)
    _no_thread_left(kind)


CHUNKS = st.lists(st.integers(1, 4096), max_size=8)


def test_templates_cover_every_method_and_are_valid() -> None:
    # The guard of the mutation target: a template per method, each valid for its schema.
    found = templates("sess-1", "/tmp/root")
    assert set(found) == set(METHODS)
    for method, params in found.items():
        codec.decode(params, METHODS[method].params, strict=True, root=method)


@pytest.mark.parametrize("kind", SIDES)
def test_RPC_06_fuzz_random_bytes(kind: str, tmp_path: Path) -> None:
    before = _RUN.get(kind, 0)
    valid = [dumps(_request(m, p)) for m, p in templates("s-1", str(tmp_path)).items()]

    @FUZZ
    @given(
        blob=st.binary(max_size=4096)
        | st.builds(
            _flip,
            st.sampled_from(valid),
            st.lists(st.tuples(st.integers(0, 10_000), st.binary(max_size=3)), max_size=6),
        ),
        chunks=CHUNKS,
    )
    def case(blob: bytes, chunks: List[int]) -> None:
        _run_case(kind, tmp_path, lambda sid, root: blob.split(b"\n"), chunks)

    case()
    _report(kind, "random bytes", before)


@pytest.mark.parametrize("kind", SIDES)
def test_RPC_06_fuzz_random_json(kind: str, tmp_path: Path) -> None:
    before = _RUN.get(kind, 0)

    @FUZZ
    @given(values=st.lists(JSON | MESSAGE_LIKE, min_size=1, max_size=5), chunks=CHUNKS)
    def case(values: List[Any], chunks: List[int]) -> None:
        _run_case(kind, tmp_path, lambda sid, root: [dumps(v) for v in values], chunks)

    case()
    _report(kind, "random JSON", before)


@pytest.mark.parametrize("kind", SIDES)
def test_RPC_06_fuzz_mutated_messages_of_every_method(kind: str, tmp_path: Path) -> None:
    before = _RUN.get(kind, 0)

    @FUZZ
    @given(data=st.data(), chunks=CHUNKS)
    def case(data: st.DataObject, chunks: List[int]) -> None:
        def build(sid: str, root: Path) -> List[bytes]:
            # Aimed at the live session and its files, so valid ones reach the handlers.
            found = templates(sid, str(root))
            lines = []
            for i in range(data.draw(st.integers(1, 4), label="messages")):
                method = data.draw(st.sampled_from(sorted(found)), label="method")
                message = _request(method, found[method], request_id=i + 1)
                if data.draw(st.booleans(), label="mutate"):
                    message = data.draw(mutated(message), label="mutated")
                lines.append(dumps(message))
            return lines

        _run_case(kind, tmp_path, build, chunks)

    case()
    _report(kind, "mutated messages", before)


def _request(method: str, params: Any, request_id: Any = 1) -> Dict[str, Any]:
    message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not METHODS[method].is_notification:
        message["id"] = request_id
    return message


def _flip(line: bytes, edits: List[Any]) -> bytes:
    """``line`` with bytes replaced at some offsets (a cut, an insertion, a flip)."""
    data = bytearray(line)
    for offset, new in edits:
        at = offset % (len(data) + 1)
        data[at : at + 1] = new
    return bytes(data)
