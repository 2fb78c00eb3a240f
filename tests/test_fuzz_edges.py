"""Named edge cases of hostile input, for the agent side and the client side alike.

Spec: overview.mdx (Error Handling), transports.mdx, cancellation.mdx, initialization.mdx;
clauses in the test names. The bare ``Connection`` has its own tests of most of these
(tests/test_connection.py); here they go through ``AgentSideConnection`` and
``ClientSideConnection`` with their rules, handlers and turns, over real pipes
(``peers.reliability_sides.RawSide``). Each test also checks that the side is still usable
afterwards and that nothing was logged at ERROR or escaped a thread.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from peers.reliability_sides import WAIT, RawSide, Watch

from acpref import schema as s
from acpref.client import Ask, ReferenceClient
from acpref.errors import RemoteProtocolError

SIDES = ["agent", "client"]
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, CANCELLED = -32700, -32600, -32602, -32800


@pytest.fixture
def watch() -> Iterator[Watch]:
    with Watch() as w:
        yield w
    assert w.problems() == []


@pytest.fixture
def make(tmp_path: Path, watch: Watch) -> Iterator[Any]:
    made: List[RawSide] = []

    def build(kind: str, **kwargs: Any) -> RawSide:
        root = tmp_path / f"{kind}-{len(made)}"
        root.mkdir()
        side = RawSide(kind, root, **kwargs)
        made.append(side)
        side.setup()
        return side

    yield build
    for side in made:
        side.close()


def valid_request(side: RawSide, request_id: Any) -> Dict[str, Any]:
    """A valid request for the side (answered with a result)."""
    if side.kind == "agent":
        return {"jsonrpc": "2.0", "id": request_id, "method": "session/list", "params": {}}
    params = {"sessionId": side.session_id, "path": str(side.root / "probe.txt")}
    return {"jsonrpc": "2.0", "id": request_id, "method": "fs/read_text_file", "params": params}


def answer_of(side: RawSide, request_id: Any) -> Dict[str, Any]:
    return side.out.response(request_id)


def error_code(message: Dict[str, Any]) -> int:
    assert "error" in message, message
    return message["error"]["code"]


def answers_to(side: RawSide, request_id: Any) -> List[Dict[str, Any]]:
    key = json.dumps(request_id)
    return [m for m in side.out.responses() if json.dumps(m.get("id")) == key]


# -- Framing and encoding ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SIDES)
@pytest.mark.parametrize(
    "bad",
    [b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80"],
    ids=["ff-fe", "overlong-slash", "encoded-surrogate", "lone-continuation"],
)
def test_TRANSPORT_01_RPC_10_invalid_utf8_is_a_parse_error(make: Any, kind: str, bad: bytes):
    side = make(kind)
    line = json.dumps(valid_request(side, 1)).encode().replace(b'"2.0"', b'"2.0' + bad + b'"')
    side.send(line + b"\n")
    side.probe()
    # spec TRANSPORT-01, RPC-10: not UTF-8, so not a message: -32700 with id null.
    (parse_error,) = answers_to(side, None)
    assert error_code(parse_error) == PARSE_ERROR
    assert answers_to(side, 1) == []


@pytest.mark.parametrize("kind", SIDES)
def test_TRANSPORT_04_a_line_in_one_byte_writes(make: Any, kind: str):
    side = make(kind)
    for byte in json.dumps(valid_request(side, 7)).encode() + b"\n":
        side.send(bytes([byte]))
    assert "result" in answer_of(side, 7)
    side.probe()
    assert len(answers_to(side, 7)) == 1


@pytest.mark.parametrize("kind", SIDES)
def test_TRANSPORT_04_many_messages_in_one_write(make: Any, kind: str):
    side = make(kind)
    side.send_json(*[valid_request(side, i) for i in range(1, 301)])
    for i in range(1, 301):
        assert "result" in answer_of(side, i)
    side.probe()
    assert all(len(answers_to(side, i)) == 1 for i in range(1, 301))


@pytest.mark.parametrize("kind", SIDES)
def test_final_line_without_newline_is_served_at_end_of_input(make: Any, kind: str):
    side = make(kind)
    side.send(json.dumps(valid_request(side, 9)).encode())  # no newline, then the end
    answers = side.finish()
    assert [m for m in answers if m.get("id") == 9][0]["result"]


@pytest.mark.parametrize("kind", SIDES)
@pytest.mark.parametrize("shape", ["array", "object", "inside-params"])
def test_RPC_10_json_nested_a_hundred_thousand_levels_deep(make: Any, kind: str, shape: str):
    side = make(kind)
    depth = 100_000
    if shape == "array":
        line = b"[" * depth + b"]" * depth
    elif shape == "object":
        line = b'{"a":' * depth + b"1" + b"}" * depth
    else:
        inner = b"[" * depth + b"]" * depth
        line = b'{"jsonrpc":"2.0","id":3,"method":"session/list","params":{"x":' + inner + b"}}"
    side.send(line + b"\n")
    side.probe()
    # spec RPC-10: too deep to parse is unparseable: -32700, id null; nothing crashed.
    (answer,) = answers_to(side, None)
    assert error_code(answer) == PARSE_ERROR
    assert answers_to(side, 3) == []


# -- Numbers and ids ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", [10**400, -(10**400), "1e400", "-1e400", 2**64, 1.0, "1"])
def test_INIT_08_huge_protocol_version_negotiates_version_1(make: Any, version: Any):
    side = make("agent")
    text = version if isinstance(version, str) and "e" in version else json.dumps(version)
    line = (
        '{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":%s,'
        '"clientCapabilities":{}}}' % text
    )
    side.send(line.encode() + b"\n")
    # spec INIT-08: a version of any other value or shape is answered with ours, never an error.
    assert answer_of(side, 5)["result"]["protocolVersion"] == 1
    side.probe()


def test_a_number_of_five_thousand_digits_is_a_parse_error(make: Any):
    side = make("agent")
    line = '{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":%s}}' % (
        "9" * 5000
    )
    side.send(line.encode() + b"\n")
    side.probe()
    # Python refuses to read integers of more than 4300 digits: not JSON we can read, -32700.
    (answer,) = answers_to(side, None)
    assert error_code(answer) == PARSE_ERROR


@pytest.mark.parametrize(
    "line, limit, expected",
    [
        ("1e400", None, INVALID_PARAMS),  # spec OVERVIEW-07: inf is not a 1-based line number
        # spec SCHEMA-21: line and limit are uint32 without x-deserialize-default-on-error since
        # the schema of 2026-11-02: a value out of range is invalid params, never "absent".
        (str(10**400), None, INVALID_PARAMS),
        ("1", str(10**400), INVALID_PARAMS),
        ("-" + str(10**400), None, INVALID_PARAMS),  # spec OVERVIEW-07: lines are 1-based
        ("1", "1e400", INVALID_PARAMS),  # the same for limit
        ("1", "2", "probe\n"),
    ],
)
def test_OVERVIEW_07_huge_numbers_as_line_and_limit(make: Any, line: str, limit: Any, expected):
    side = make("client")
    path = json.dumps(str(side.root / "probe.txt"))
    extra = f',"limit":{limit}' if limit is not None else ""
    side.send(
        (
            '{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":'
            f'{{"sessionId":"{side.session_id}","path":{path},"line":{line}{extra}}}}}\n'
        ).encode()
    )
    answer = answer_of(side, 4)
    if isinstance(expected, int):
        assert error_code(answer) == expected
    else:
        assert answer["result"] == {"content": expected}
    side.probe()


def test_huge_output_byte_limit_is_bounded_by_the_client(make: Any):
    side = make("client")
    request = (
        '{"jsonrpc":"2.0","id":%d,"method":"terminal/create","params":'
        f'{{"sessionId":"{side.session_id}","command":"no-such-program",'
        '"outputByteLimit":%s}}\n'
    )
    # spec SCHEMA-21: outputByteLimit lost x-deserialize-default-on-error: out of uint64 range is
    # invalid params (it used to read as absent).
    side.send((request % (4, 10**400)).encode())
    assert error_code(answer_of(side, 4)) == INVALID_PARAMS
    side.send((request % (5, 2**64 - 1)).encode())
    terminal_id = answer_of(side, 5)["result"]["terminalId"]
    # The client's own cap applies whatever the agent asks (spec-gap terminal-output-cap).
    assert side.client.terminals.snapshot(terminal_id) is not None
    side.probe()


@pytest.mark.parametrize("kind", SIDES)
def test_RPC_02_RPC_04_every_id_shape(make: Any, kind: str):
    side = make(kind)
    good = [0, -1, 2**63, 2**64 + 7, -(2**70), "id", "", "0", None]
    bad = [1.5, 1.0, -0.0, True, False]
    for request_id in good + bad:
        side.send_json(valid_request(side, request_id))
    side.out.wait_for(lambda m: len(answers_to(side, None)) == 1 + len(bad))
    side.probe()
    for request_id in good[:-1]:
        # spec RPC-04: answered under the very id, of the same JSON type.
        answer_of(side, request_id)
        (answer,) = answers_to(side, request_id)
        assert type(answer["id"]) is type(request_id) and "result" in answer, answer
    # spec RPC-02: a null id is allowed (RPC-03 discourages it): served as a request.
    assert len([m for m in answers_to(side, None) if "result" in m]) == 1
    # spec RPC-02, RPC-11: a number with a fraction or a boolean is no id: -32600, id null.
    refused = [m for m in answers_to(side, None) if "error" in m]
    assert len(refused) == len(bad)
    assert all(error_code(m) == INVALID_REQUEST for m in refused)


@pytest.mark.parametrize("kind", SIDES)
def test_OVERVIEW_09_a_request_method_without_an_id_is_never_run(make: Any, kind: str):
    # Bug found by tests/test_fuzz.py: a session/load without an id was run (as a notification),
    # and replayed the session's history; a write without an id would have written the file.
    side = make(kind)
    if kind == "agent":
        params = {"sessionId": side.session_id, "prompt": [{"type": "text", "text": "hi"}]}
        side.call("session/prompt", params)  # some history that a load would replay
        side.send_json({"jsonrpc": "2.0", "method": "session/prompt", "params": params})
        side.send_json(
            {
                "jsonrpc": "2.0",
                "method": "session/load",
                "params": {"sessionId": side.session_id, "cwd": str(side.root), "mcpServers": []},
            }
        )
    else:
        path = str(side.root / "written-by-a-notification.txt")
        params = {"sessionId": side.session_id, "path": path, "content": "x"}
        side.send_json({"jsonrpc": "2.0", "method": "fs/write_text_file", "params": params})
    before = len(side.out.messages)
    probe = side.probe()
    # spec OVERVIEW-09: never answered; and not run: nothing was written, no turn streamed.
    assert side.out.messages[before:] == [probe]
    assert not (side.root / "written-by-a-notification.txt").exists()


# -- Requests in flight: duplicates, cancels, broken responses -----------------------------------


def _held_request(side: RawSide, request_id: Any) -> Dict[str, Any]:
    """Start a request that stays in flight until ``release``; return the side's own request.

    Agent side: a prompt whose turn asks permission (the returned message is that question).
    Client side: a permission question whose policy waits for an event.
    """
    if side.kind == "agent":
        params = {"sessionId": side.session_id, "prompt": [{"type": "text", "text": "ask"}]}
        side.send_json(
            {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}
        )
        return side.out.request("session/request_permission")
    params = {
        "sessionId": side.session_id,
        "toolCall": {"toolCallId": "call-1", "title": "edit"},
        "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
    }
    side.send_json(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/request_permission",
            "params": params,
        }
    )
    assert side.asked.wait(WAIT)
    return {}


def _release(side: RawSide, question: Dict[str, Any]) -> None:
    if side.kind == "agent":
        outcome = {"outcome": {"outcome": "selected", "optionId": "yes"}}
        side.send_json({"jsonrpc": "2.0", "id": question["id"], "result": outcome})
    else:
        side.release.set()


def _holding(make: Any, kind: str) -> RawSide:
    if kind == "agent":
        return make("agent")
    asked, release = threading.Event(), threading.Event()

    def ask(request: s.RequestPermissionRequest, cancelled: threading.Event) -> str:
        asked.set()
        release.wait(WAIT)
        return "yes"

    side = make("client", client=ReferenceClient(permissions=Ask(ask)))
    side.asked, side.release = asked, release
    return side


@pytest.mark.parametrize("kind", SIDES)
def test_duplicate_request_id_from_the_peer_is_refused_and_the_first_answered(make, kind):
    side = _holding(make, kind)
    question = _held_request(side, 50)
    side.send_json(valid_request(side, 50))  # the same id, while the first is in flight
    # spec-gap duplicate-id: the second is refused under that id; the first keeps its answer.
    refusal = answer_of(side, 50)
    assert error_code(refusal) == INVALID_REQUEST and "duplicate-id" in json.dumps(refusal)
    _release(side, question)
    side.out.wait_for(lambda m: m.get("id") == 50 and "result" in m)
    assert len(answers_to(side, 50)) == 2
    side.send_json(valid_request(side, 50))  # answered: the id may be used again
    side.out.wait_for(lambda m: len(answers_to(side, 50)) == 3)
    assert "result" in answers_to(side, 50)[-1]
    side.probe()


@pytest.mark.parametrize("kind", SIDES)
def test_CANCEL_06_cancel_request_for_unknown_and_finished_ids_is_ignored(make: Any, kind: str):
    side = make(kind)
    side.send_json(valid_request(side, 11))
    assert "result" in answer_of(side, 11)
    before = len(side.out.messages)
    for request_id in [11, 999, "nope", None, 1.5, [1], {"a": 1}, 2**80]:
        side.send_json(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request_id}}
        )
    side.send_json({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {}})
    side.send_json({"jsonrpc": "2.0", "method": "$/cancel_request", "params": [11]})
    # spec CANCEL-06, OVERVIEW-09: nothing answers a notification; the next output is the probe's.
    probe = side.probe()
    assert side.out.messages[before] == probe


@pytest.mark.parametrize("kind", SIDES)
def test_CANCEL_05_cancel_request_of_a_request_in_flight(make: Any, kind: str):
    side = _holding(make, kind)
    question = _held_request(side, 60)
    side.send_json({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 60}})
    if kind == "agent":
        # spec-gap cancel-request-prompt: the turn is cancelled; the prompt answers "cancelled".
        _release(side, question)
        assert answer_of(side, 60)["result"] == {"stopReason": "cancelled"}
    else:
        # spec CANCEL-05: answered -32800 at once, though the question is still open.
        assert error_code(answer_of(side, 60)) == CANCELLED
        _release(side, question)
    side.probe()
    assert len(answers_to(side, 60)) == 1


def test_RPC_05_response_with_both_result_and_error_fails_the_agents_call(make: Any):
    side = make("agent")
    question = _held_request(side, 70)
    side.send_json(
        {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"outcome": {"outcome": "cancelled"}},
            "error": {"code": -32000, "message": "both"},
        }
    )
    # spec RPC-05: exactly one of result and error; the agent's call fails with
    # RemoteProtocolError, and the turn's prompt is answered with that error, once.
    answer = answer_of(side, 70)
    assert "RPC-05" in json.dumps(answer["error"]), answer
    side.probe()
    assert len(answers_to(side, 70)) == 1


def test_RPC_05_response_with_both_result_and_error_fails_the_clients_call(make: Any):
    side = make("client")
    turn = side.client_side.prompt_async(side.session_id, "hello")
    request = side.out.request("session/prompt")
    side.send_json(
        {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": {"stopReason": "end_turn"},
            "error": {"code": -32000, "message": "both"},
        }
    )
    with pytest.raises(RemoteProtocolError) as caught:
        turn.result(WAIT)
    assert caught.value.clause == "RPC-05"
    side.probe()


# -- Oversize lines -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SIDES)
def test_oversize_line_is_answered_and_the_connection_kept(make: Any, kind: str):
    bound = 64 * 1024
    side = make(kind, max_line_bytes=bound)
    request = valid_request(side, 21)
    request["_meta"] = {"pad": ""}
    fixed = len(json.dumps(request))
    request["_meta"]["pad"] = "x" * (bound - fixed)  # exactly the bound: served
    at_bound = json.dumps(request).encode()
    assert len(at_bound) == bound
    side.send(at_bound + b"\n")
    assert "result" in answer_of(side, 21)
    over = valid_request(side, 22)
    over["_meta"] = {"pad": "y" * (10 * bound)}
    data = json.dumps(over).encode() + b"\n"
    for start in range(0, len(data), 4096):  # arriving in pieces, as from a real peer
        side.send(data[start : start + 4096])
    side.probe()
    # spec-gap oversize-line: -32600 under its id (read from the line's first bytes) with the
    # sizes; the next line is read as usual.
    (refusal,) = answers_to(side, 22)
    assert error_code(refusal) == INVALID_REQUEST
    assert refusal["error"]["data"] == {"size": len(data) - 1, "limit": bound}
    assert answers_to(side, None) == []
    # An id after the payload is read from the line's last bytes: -32600 under it.
    late = {k: v for k, v in valid_request(side, 23).items() if k != "id"}
    late["_meta"] = {"pad": "z" * (2 * bound)}
    late["id"] = 23
    side.send(json.dumps(late).encode() + b"\n")
    side.probe()
    (refusal,) = answers_to(side, 23)
    assert refusal["error"]["data"]["limit"] == bound
    # An id only inside the payload is no id: -32600 with id null.
    inner = {k: v for k, v in valid_request(side, 24).items() if k != "id"}
    inner["_meta"] = {"pad": "w" * (2 * bound), "id": 24}
    side.send(json.dumps(inner).encode() + b"\n")
    side.probe()
    (refusal,) = answers_to(side, None)
    assert refusal["error"]["data"]["limit"] == bound
    assert answers_to(side, 24) == []


# -- The shapes of issue 17: many tiny values, escapes that grow a line, lines without end --------

LONG = os.environ.get("ACPREF_LONG") == "1"


@pytest.mark.parametrize("kind", SIDES)
@pytest.mark.parametrize("value", ["{}", "[]", "0", '""', "null"])
def test_many_tiny_values_are_refused_before_decoding(make: Any, kind: str, value: str):
    # What a line costs decoded is bounded by max_items: refused under its id, never decoded.
    side = make(kind, max_items=50_000)
    count = 4_000_000 if LONG else 60_000
    request = valid_request(side, 31)
    request["params"]["_meta"] = {"v": "@"}
    line = json.dumps(request).encode().replace(b'"@"', b"[" + b",".join([value.encode()] * count) + b"]")
    side.send(line + b"\n")
    refusal = answer_of(side, 31)
    assert error_code(refusal) == INVALID_REQUEST
    assert refusal["error"]["data"]["limit"] == 50_000
    side.probe()
    # Commas, brackets and braces inside strings are not values: served.
    inside = valid_request(side, 32)
    inside["params"]["_meta"] = {"text": ",[{" * 60_000}
    side.send(json.dumps(inside).encode() + b"\n")
    assert "result" in answer_of(side, 32)


def test_escapes_that_grow_an_answer_over_the_bound_fail_the_request(make: Any):
    # The client side's answer to a read of control characters is six times the file once
    # JSON-encoded: over the line bound, it is refused with its figures, never written.
    bound = 64 * 1024
    side = make("client", max_line_bytes=bound)
    path = side.root / "controls.txt"
    path.write_bytes(b"\x01" * (bound // 3))
    params = {"sessionId": side.session_id, "path": str(path)}
    side.send_json({"jsonrpc": "2.0", "id": 41, "method": "fs/read_text_file", "params": params})
    refusal = answer_of(side, 41)
    assert error_code(refusal) == -32603
    assert refusal["error"]["data"]["limit"] == bound
    assert refusal["error"]["data"]["size"] > bound
    side.probe()


@pytest.mark.parametrize("kind", SIDES)
def test_a_huge_line_without_newline_until_the_end_of_input(make: Any, kind: str):
    bound = 64 * 1024
    side = make(kind, max_line_bytes=bound)
    side.probe()
    head = json.dumps(valid_request(side, 51)).encode()[:-1] + b', "_pad": "'
    side.send(head)
    piece = b"x" * (1 << 20)
    for _ in range(256 if LONG else 16):  # 16 MiB (256 MiB long), never a newline
        side.send(piece)
    responses = side.finish()
    refusals = [m for m in responses if m.get("id") == 51]
    assert len(refusals) == 1 and error_code(refusals[0]) == INVALID_REQUEST
    assert refusals[0]["error"]["data"]["size"] > 16 * (1 << 20)
