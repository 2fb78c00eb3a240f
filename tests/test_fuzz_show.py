"""Every transcript the oracle reads is drawn: ``acpref show``'s layout and page, fuzzed.

Spec: none (the report page, spec_notes/oracle.md "The report page"). The rule under test: what
``acpref validate`` can read, the page can draw, without a traceback and never as an empty page;
what cannot be drawn in full is drawn cut and marked (a lone surrogate as its ``\\uXXXX`` escape,
nesting beyond a depth as a placeholder, a raw line past ``RAW_LIMIT`` with the count of what is
cut).

Each case is a transcript: a valid handshake, session and prompt, then one to six messages of
either party, each a valid message of a method of ``acpref.methods.METHODS`` mutated the ways
``tests/test_fuzz.py`` mutates them (keys dropped and renamed, values swapped for hostile ones:
lone surrogates, control characters, huge numbers; huge values; nesting up to 800 levels or
100,000), or random JSON. Checked per case: the oracle judges it, the layout is built with the
oracle's report, the oracle's text report and every string of the layout are UTF-8 as they are
(peer text was made inert: no lone surrogate reaches a terminal or the page), and the page is
written, non-empty and UTF-8.

Cases: ``ACPREF_FUZZ_CASES`` (default 200; 5000 with ``ACPREF_LONG=1``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peers.reliability_messages import JSON, MESSAGE_LIKE, dumps, mutated, templates

from acpref._tools.show_html import _data, render_html, write_page
from acpref.oracle import Record
from acpref.oracle._show import build_layout
from acpref.oracle._validate import Validator

LONG = os.environ.get("ACPREF_LONG") == "1"
CASES = int(os.environ.get("ACPREF_FUZZ_CASES", "5000" if LONG else "200"))

pytestmark = pytest.mark.timeout(3600 if LONG else 120)

FUZZ = settings(max_examples=CASES, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

SESSION = "s-1"
SETUP: List[Any] = [
    ("client", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {},
                           "clientInfo": {"name": "c", "version": "1"}}}),
    ("agent", {"jsonrpc": "2.0", "id": 0,
               "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": [],
                          "agentInfo": {"name": "a", "version": "1"}}}),
    ("client", {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []}}),
    ("agent", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": SESSION}}),
    ("client", {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": "hi"}]}}),
]


def _draw(records: List[Record], tmp: Path) -> None:
    validator = Validator()
    for record in records:
        validator.feed(record)
    report = validator.finish()
    report.format_text().encode("utf-8")  # what `acpref validate` prints is UTF-8 as it is
    layout = build_layout(records, report)
    # Every string of the layout is UTF-8 as it is: nothing relies on the writer's escaping.
    json.dumps(_data(layout, [""] * len(layout.findings), None), ensure_ascii=False).encode()
    page = tmp / "page.html"
    write_page(str(page), render_html([("case", layout)], title="case", out_path=str(page)))
    text = page.read_bytes().decode("utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")


def _transcript(lines: List[Any]) -> List[Record]:
    records = [
        Record(sender=sender, ts=float(i), raw=json.dumps(m).encode())
        for i, (sender, m) in enumerate(SETUP)
    ]
    for sender, line in lines:
        records.append(Record(sender=sender, ts=float(len(records)), raw=line))
    records.append(Record(sender="client", ts=float(len(records)), event="eof"))
    return records


def test_fuzz_mutated_messages_of_every_method_are_drawn(tmp_path: Path) -> None:
    found: Dict[str, Any] = templates(SESSION, str(tmp_path))
    done = [0]

    @FUZZ
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        lines = []
        for i in range(data.draw(st.integers(1, 6), label="messages")):
            sender = data.draw(st.sampled_from(["agent", "client"]), label="sender")
            if data.draw(st.booleans(), label="random"):
                message = data.draw(JSON | MESSAGE_LIKE, label="json")
            else:
                method = data.draw(st.sampled_from(sorted(found)), label="method")
                message = {"jsonrpc": "2.0", "id": 10 + i, "method": method,
                           "params": found[method]}
                message = data.draw(mutated(message), label="mutated")
            lines.append((sender, dumps(message)))
        _draw(_transcript(lines), tmp_path)
        done[0] += 1

    case()
    print(f"\nshow fuzz: {done[0]} transcripts drawn")


@pytest.mark.parametrize(
    "line",
    [
        # A lone surrogate, spelled as JSON allows, in a chunk's text, a session id, a label.
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":'
        b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\\ud800"}}}}',
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"\\udfff","update":'
        b'{"sessionUpdate":"tool_call","toolCallId":"t","title":"\\ud800\\u202e"}}}',
        b'{"jsonrpc":"2.0","id":"\\ud800","error":{"code":"\\udc00","message":"\\ud800"}}',
        # 100,000 levels: in params, as a whole message, as an id.
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","x":'
        + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"}}",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"jsonrpc":"2.0","id":' + b"[" * 100_000 + b"]" * 100_000 + b',"result":{}}',
        # Deep but decodable, where labels read values.
        b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":'
        + b"[" * 500 + b"]" * 500 + b',"mcpServers":[]}}',
    ],
    ids=["chunk", "session-and-title", "answer", "deep-params", "deep-array", "deep-id",
         "deep-cwd"],
)
def test_the_shapes_of_issue_30_are_drawn(tmp_path: Path, line: bytes) -> None:
    for sender in ("agent", "client"):
        _draw(_transcript([(sender, line)]), tmp_path)


def test_a_finding_that_quotes_a_lone_surrogate_prints(tmp_path: Path) -> None:
    # Found by the fuzz target above: RPC-06 names the method of a request never answered, and
    # the request's row is labelled with it.
    line = dumps({"jsonrpc": "2.0", "id": 10, "method": "\ud800", "params": {}})
    records = _transcript([("agent", line)])
    records.append(Record(sender="agent", ts=99.0, event="eof"))
    _draw(records, tmp_path)


@pytest.mark.parametrize("kind", [{}, ["image"]])
def test_a_content_block_whose_type_is_not_a_string_is_judged(tmp_path: Path, kind: Any) -> None:
    # Found by the fuzz target above (3000 cases): the oracle looked the type up in a table.
    line = dumps({"jsonrpc": "2.0", "id": 10, "method": "session/prompt",
                  "params": {"sessionId": SESSION, "prompt": [{"type": kind, "text": "x"}]}})
    _draw(_transcript([("client", line)]), tmp_path)


def test_a_request_with_an_array_id_and_a_bad_meta_is_judged(tmp_path: Path) -> None:
    # Found by the fuzz target above: the oracle kept such a request by its id, which an array
    # cannot be (a TypeError out of `acpref validate`); RPC-02 judges the id.
    line = dumps({"jsonrpc": "2.0", "id": [], "method": "session/new",
                  "params": {"cwd": "/tmp", "mcpServers": [], "_meta": 5}})
    _draw(_transcript([("client", line)]), tmp_path)
