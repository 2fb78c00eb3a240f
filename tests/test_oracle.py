"""The oracle on written-out transcripts: each layer, each bookkeeping decision, the report.

Spec: transports.mdx, overview.mdx, extensibility.mdx, and the rules of every page through
``acpref._core``. Tests are named after the clause they prove; the transcripts are built message
by message so that each shows one thing.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any, List, Tuple

import pytest

from acpref._shell.framing import LineFramer, LineSplitter, Oversize
from acpref.oracle import (
    Record,
    Report,
    TranscriptRecorder,
    Validator,
    read_transcript,
    validate,
)
from acpref.oracle import dumps as dump_transcript

C, A = "client", "agent"

INIT = [
    (
        C,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientCapabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        },
    ),
    (
        A,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": True},
                "agentInfo": {"name": "a", "version": "1"},
                "authMethods": [],
            },
        },
    ),
    (
        C,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        },
    ),
    (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
]
PROMPT = (
    C,
    {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "session/prompt",
        "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
    },
)
END_TURN = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn"}})
CANCEL = (C, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})


def _records(*messages: Tuple[str, Any], eof: bool = True) -> List[dict]:
    out = []
    for sender, message in [*INIT, *messages]:
        if isinstance(message, bytes):
            out.append({"from": sender, "ts": 0, "b64": base64.b64encode(message).decode()})
        else:
            out.append(
                {
                    "from": sender,
                    "ts": 0,
                    "line": message if isinstance(message, str) else json.dumps(message),
                }
            )
    if eof:
        out.append({"from": C, "ts": 0, "event": "eof"})
    return out


def _found(*messages: Tuple[str, Any], eof: bool = True) -> List[Tuple[str, str, int]]:
    report = validate(_records(*messages, eof=eof))
    return [(f.clause, f.blame.value, f.index) for f in report.findings]


def test_clean_transcript_has_no_findings() -> None:
    assert _found(PROMPT, END_TURN) == []


# -- the line -------------------------------------------------------------------------------------


def test_TRANSPORT_01_non_utf8_line() -> None:
    assert _found((A, b'{"jsonrpc":"2.0","method":"_x","params":{"t":"caf\xe9"}}')) == [
        ("TRANSPORT-01", A, 4)
    ]


def test_TRANSPORT_08_log_line_on_agent_stdout() -> None:
    assert _found((A, "Starting agent...")) == [("TRANSPORT-08", A, 4)]


def test_TRANSPORT_09_log_line_on_agent_stdin() -> None:
    assert _found((C, "hello?")) == [("TRANSPORT-09", C, 4)]


def test_TRANSPORT_05_message_cut_by_raw_newlines_is_one_finding() -> None:
    pretty = json.dumps({"jsonrpc": "2.0", "method": "_x/y", "params": {"a": 1}}, indent=2).split(
        "\n"
    )
    found = _found(*[(A, line) for line in pretty])
    assert found == [("TRANSPORT-05", A, 4)]


def test_TRANSPORT_08_09_two_messages_on_one_line_are_not_a_valid_ACP_message() -> None:
    # "The agent MUST NOT write anything to its `stdout` that is not a valid ACP message": the
    # line holds two; no newline is embedded in either (TRANSPORT-05 is not what it breaks).
    line = json.dumps({"jsonrpc": "2.0", "method": "_x", "params": {}}) * 2
    assert _found((A, line)) == [("TRANSPORT-08", A, 4)]
    assert _found((C, line)) == [("TRANSPORT-09", C, 4)]
    (finding,) = validate(_records((A, line))).findings
    assert "more than one JSON value on one line" in finding.message


def test_OVERVIEW_01_batch() -> None:
    assert _found((A, [{"jsonrpc": "2.0", "method": "_x", "params": {}}])) == [
        ("OVERVIEW-01", A, 4)
    ]


def test_blank_line_is_not_judged() -> None:
    assert _found((A, "")) == []


# -- the envelope ---------------------------------------------------------------------------------


def test_RPC_01_missing_jsonrpc() -> None:
    assert _found(PROMPT, (A, {"id": 5, "result": {"stopReason": "end_turn"}})) == [
        ("RPC-01", A, 5)
    ]


def test_RPC_02_float_request_id_and_RPC_03_null_id() -> None:
    float_id = (C, {"jsonrpc": "2.0", "id": 1.5, "method": "session/list", "params": {}})
    assert ("RPC-02", C, 4) in _found(float_id, eof=False)
    null_id = (C, {"jsonrpc": "2.0", "id": None, "method": "_x", "params": {}})
    answer = (A, {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "no"}})
    assert _found(null_id, answer) == [("RPC-03", C, 4)]


def test_RPC_04_wrong_response_id() -> None:
    wrong = (A, {"jsonrpc": "2.0", "id": 6, "result": {"stopReason": "end_turn"}})
    assert _found(PROMPT, wrong, END_TURN) == [("RPC-04", A, 5)]


def test_RPC_04_same_value_other_json_type() -> None:
    as_string = (A, {"jsonrpc": "2.0", "id": "5", "result": {"stopReason": "end_turn"}})
    assert ("RPC-04", A, 5) in _found(PROMPT, as_string, END_TURN)


def test_RPC_05_both_result_and_error() -> None:
    both = (
        A,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"stopReason": "end_turn"},
            "error": {"code": 1, "message": "x"},
        },
    )
    assert ("RPC-05", A, 5) in _found(PROMPT, both)


def test_RPC_05_neither_result_nor_error() -> None:
    assert ("RPC-05", A, 5) in _found(PROMPT, (A, {"jsonrpc": "2.0", "id": 5}), END_TURN)


def test_RPC_06_answered_twice() -> None:
    assert _found(PROMPT, END_TURN, END_TURN) == [("RPC-06", A, 6)]


def test_RPC_06_second_answer_found_whatever_the_order_of_the_ids() -> None:
    # The rules keep answered integer ids as runs of consecutive ids: answers out of order, a
    # gap that an answer closes, and string ids must still find every second answer.
    ids: List[Any] = [7, 3, 5, 4, 6, 10, "x", 2]
    NEW = {"cwd": "/tmp", "mcpServers": []}
    opened = [(C, {"jsonrpc": "2.0", "id": i, "method": "session/new", "params": NEW}) for i in ids]
    answers = [
        (A, {"jsonrpc": "2.0", "id": i, "result": {"sessionId": f"s-{i}"}})
        for i in (5, 3, 10, 4, "x", 7, 6, 2)
    ]
    again = [
        (A, {"jsonrpc": "2.0", "id": i, "result": {"sessionId": f"t-{i}"}})
        for i in (4, 10, "x", 2, 8)
    ]
    first = 4 + len(opened) + len(answers)  # the index of the first second answer
    found = _found(*opened, *answers, *again)
    assert [f for f in found if f[0].startswith("RPC")] == [
        ("RPC-06", A, first),
        ("RPC-06", A, first + 1),
        ("RPC-06", A, first + 2),
        ("RPC-06", A, first + 3),
        ("RPC-04", A, first + 4),  # 8 was never asked: no request in flight, none answered
    ]


def test_RPC_06_never_answered_only_when_the_transcript_ended_cleanly() -> None:
    assert _found(PROMPT) == [("RPC-06", A, 4)]
    assert _found(PROMPT, eof=False) == []


def test_spec_gap_stopped_agent_owes_nothing_once_its_client_stopped_it() -> None:
    # spec-gap stopped-agent: the client closed the agent's input, then stopped the process
    # that had not ended: the prompt still in flight is not "never answered".
    stopped = [*_records(PROMPT), {"from": C, "ts": 0, "event": "stop"}]
    assert validate(stopped).findings == []


def test_RPC_09_malformed_error_is_one_finding() -> None:
    bad = (A, {"jsonrpc": "2.0", "id": 5, "error": {"code": "oops", "message": "x"}})
    assert _found(PROMPT, bad) == [("RPC-09", A, 5)]


def test_RPC_10_null_id_error_after_unreadable_line_is_due() -> None:
    parse_error = (
        A,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    )
    assert _found((C, "{not json"), parse_error) == [("TRANSPORT-09", C, 4)]


def test_OVERVIEW_09_answering_a_notification() -> None:
    answer = (A, {"jsonrpc": "2.0", "id": None, "result": None})
    assert _found(CANCEL, answer) == [("OVERVIEW-09", A, 5)]


def test_OVERVIEW_09_client_answering_an_update() -> None:
    update = (
        A,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s1",
                "update": {"sessionUpdate": "available_commands_update", "availableCommands": []},
            },
        },
    )
    assert _found(update, (C, {"jsonrpc": "2.0", "id": 77, "result": {}})) == [
        ("OVERVIEW-09", C, 5)
    ]


def test_RPC_04_wrong_id_while_a_request_waits_is_not_OVERVIEW_09() -> None:
    update = (
        A,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s1",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "x"},
                },
            },
        },
    )
    ask = (
        A,
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s1",
                "toolCall": {"toolCallId": "t"},
                "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
            },
        },
    )
    wrong = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 10,
            "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
        },
    )
    right = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 9,
            "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
        },
    )
    assert _found(PROMPT, update, ask, wrong, right, END_TURN) == [("RPC-04", C, 7)]


# -- the shape ------------------------------------------------------------------------------------


def test_PROMPT_17_stop_reason_is_a_string_and_required() -> None:
    for result in ({"stopReason": 5}, {}):
        answer = (A, {"jsonrpc": "2.0", "id": 5, "result": result})
        assert _found(PROMPT, answer) == [("PROMPT-17", A, 5)]


def test_PROMPT_17_an_undefined_stop_reason_fails_unless_newer_spec() -> None:
    # spec-gap undefined-value: judged against the carried spec, "done" is no StopReason; for a
    # peer built on a newer spec (newer_spec), a warning.
    answer = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "done"}})
    report = validate(_records(PROMPT, answer))
    assert [(f.clause, f.level) for f in report.findings] == [("PROMPT-17", "MUST")]
    newer = validate(_records(PROMPT, answer), newer_spec=True)
    assert [(f.clause, f.level) for f in newer.findings] == [("PROMPT-17", "warning")]
    assert newer.violations == []


def test_SCHEMA_03_mode_id_is_one_finding() -> None:
    update = (
        A,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s1",
                "update": {"sessionUpdate": "current_mode_update", "modeId": "x"},
            },
        },
    )
    assert _found(update) == [("SCHEMA-03", A, 4)]


def test_EXT_04_custom_root_field() -> None:
    answer = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn", "acme": 1}})
    assert _found(PROMPT, answer) == [("EXT-04", A, 5)]


def test_EXT_02_refusing_a_request_for_its_meta() -> None:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [], "_meta": 5},
        },
    )
    refusal = (A, {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "bad _meta"}})
    assert ("EXT-02", A, 5) in _found(prompt, refusal)


def test_EXT_03_traceparent_must_be_w3c() -> None:
    def with_meta(meta: dict) -> Tuple[str, dict]:
        return (
            C,
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": [], "_meta": meta},
            },
        )

    assert ("EXT-03", C, 4) in _found(with_meta({"traceparent": "my-trace"}), END_TURN)
    good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert _found(with_meta({"traceparent": good, "tracestate": "a=b"}), END_TURN) == []


def test_warnings_are_kept_apart_from_violations() -> None:
    report = validate(
        _records(
            (C, {"jsonrpc": "2.0", "id": None, "method": "_x", "params": {}}),
            (A, {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "no"}}),
        )
    )
    assert report.ok
    assert [f.clause for f in report.warnings] == ["RPC-03"]
    assert report.violations == []


# -- the rules, through the oracle ----------------------------------------------------------------


def test_PROMPT_26_update_after_the_prompt_response() -> None:
    late = (
        A,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s1",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "x"},
                },
            },
        },
    )
    # spec PROMPT-26: a cancelled turn's updates come before its answer ("it MUST ensure that it
    # does so before responding"); after an ordinary answer no sentence says so (spec-gap).
    cancelled = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "cancelled"}})
    assert _found(PROMPT, CANCEL, cancelled, late) == [("PROMPT-26", A, 7)]
    assert _found(PROMPT, END_TURN, late) == [("spec-gap:content-after-turn", A, 6)]


def test_INIT_01_session_before_initialize() -> None:
    records = [{"from": C, "ts": 0, "line": json.dumps(INIT[2][1])}]
    assert [(f.clause, f.blame.value) for f in validate(records).findings] == [("INIT-01", C)]


def _handshake(requested: int, answer: dict) -> List[Tuple[str, str, int]]:
    params = {**INIT[0][1]["params"], "protocolVersion": requested}
    records = [
        {"from": C, "ts": 0, "line": json.dumps({**INIT[0][1], "params": params})},
        {"from": A, "ts": 0, "line": json.dumps({"jsonrpc": "2.0", "id": 0, "result": answer})},
        {"from": C, "ts": 0, "event": "eof"},
    ]
    return [(f.clause, f.blame.value, f.index) for f in validate(records).findings]


#: An initialize answer of version 2, in the shape of a newer draft (claude-agent-acp 0.101).
_V2_ANSWER = {
    "protocolVersion": 2,
    "info": {"name": "a", "version": "1"},
    "capabilities": {"session": {"delete": {}}},
    "authMethods": [],
}


def test_INIT_06_08_an_answer_in_another_version_is_judged_by_its_version_only() -> None:
    # spec INIT-08: asked for an unknown version, the agent answers its newest, 2; the rest of
    # the answer is version 2's (INIT-06): no v1 shape finding, no INIT-05 for a missing agentInfo.
    assert _handshake(65000, _V2_ANSWER) == []
    # spec INIT-07: asked for 1, which it should support, the same answer is wrong: that alone.
    assert _handshake(1, _V2_ANSWER) == [("INIT-07", A, 1)]


# -- the report and the incremental validator -----------------------------------------------------


def test_report_api() -> None:
    report = validate(_records(PROMPT, (A, "log line"), END_TURN))
    assert isinstance(report, Report)
    assert report.messages == 7
    assert not report.ok
    assert report.clauses() == ["TRANSPORT-08"]
    assert [f.clause for f in report.blamed("agent")] == ["TRANSPORT-08"]
    assert report.blamed("client") == []
    data = report.to_json()
    assert data["ok"] is False and data["violations"][0]["clause"] == "TRANSPORT-08"
    assert data["violations"][0]["index"] == 5 and data["violations"][0]["blame"] == "agent"
    assert "TRANSPORT-08" in report.format_text()


def test_validator_feed_returns_findings_as_they_come() -> None:
    validator = Validator()
    for record in read_transcript(_records(PROMPT)):
        validator.feed(record)
    found = validator.feed(Record(sender=A, ts=0, raw=b"oops"))
    assert [f.clause for f in found] == ["TRANSPORT-08"]
    assert [f.clause for f in validator.finish().findings] == ["TRANSPORT-08", "RPC-06"]


# -- transcripts ----------------------------------------------------------------------------------


def test_transcript_round_trip_keeps_bytes_exactly(tmp_path: Any) -> None:
    path = tmp_path / "t.jsonl"
    recorder = TranscriptRecorder(path, me="client")
    raw = [
        b'{"jsonrpc":"2.0","method":"_x","params":{"t":"\\u00e9\xc3\xa9"}}',
        b"\xff\xfe not utf-8",
    ]
    recorder("out", raw[0])
    recorder("in", raw[1])
    recorder.eof("client")
    recorder.close()
    records = read_transcript(path)
    assert [r.raw for r in records if r.is_message] == raw
    assert records[-1].event == "eof"
    assert read_transcript(io.StringIO(dump_transcript(records))) == records


@pytest.mark.parametrize(
    "chunks,lines",
    [
        ([b"a\nb", b"c\n"], [b"a", b"bc"]),
        ([b"\n\n"], [b"", b""]),
        ([b"abc"], [b"abc"]),  # the unterminated last line, at the end of input
        ([b"0123456789\n"], [b"0123456789"]),  # exactly the bound: kept
        ([b"0123456789AB\nx\n"], [Oversize(12, b"0123456789AB", b"0123456789AB"), b"x"]),
        ([b"01234", b"56789AB\nx"], [Oversize(12, b"0123456789AB", b"0123456789AB"), b"x"]),
        ([b"0123456789ABC"], [Oversize(13, b"0123456789ABC", b"0123456789ABC")]),
    ],
)
def test_the_recorder_cuts_lines_like_the_receiving_connection(
    chunks: List[bytes], lines: List[Any]
) -> None:
    # One framing rule (acpref._shell.framing.LineFramer) for the recorder, the proxy's judge and the
    # live connection (LineSplitter over reads): the same bytes give the same lines.
    framer = LineFramer(max_line_bytes=10)
    out: List[Any] = []
    for chunk in chunks:
        out.extend(framer.feed(chunk))
    out.extend(framer.end())
    assert out == lines
    reads = iter(chunks)
    assert list(LineSplitter(lambda size: next(reads, b""), 10)) == lines


def test_validate_cli_exit_status_and_json(tmp_path: Any) -> None:
    import subprocess
    import sys

    def run(*args: str) -> "subprocess.CompletedProcess[str]":
        argv = [sys.executable, "-m", "acpref", "validate", *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=30)

    clean, broken = tmp_path / "clean.jsonl", tmp_path / "broken.jsonl"
    clean.write_text("\n".join(json.dumps(r) for r in _records(PROMPT, END_TURN)) + "\n")
    broken.write_text(
        "\n".join(json.dumps(r) for r in _records(PROMPT, (A, "log"), END_TURN)) + "\n"
    )
    assert run(str(clean)).returncode == 0
    result = run(str(broken))
    assert result.returncode == 1 and "TRANSPORT-08" in result.stdout
    data = json.loads(run(str(broken), "--json").stdout)
    assert data["violations"][0]["clause"] == "TRANSPORT-08"
    assert run(str(tmp_path / "missing.jsonl")).returncode == 2


def test_duplicate_id_refusal_does_not_consume_the_original_request() -> None:
    # spec-gap duplicate-id: the client reuses id 5 while its prompt runs; the agent refuses the
    # duplicate under id 5 and later answers the prompt under id 5: only the client is to blame.
    duplicate = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        },
    )
    refusal = (A, {"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "id in use"}})
    assert _found(PROMPT, duplicate, refusal, END_TURN) == [("spec-gap:duplicate-id", C, 5)]
