"""The JSON-RPC envelope (``acpref._core.envelope``), the one verdict the connection, the oracle and
the rules read: what a decoded line is, and each fault with its clause and its answer."""

from __future__ import annotations

import itertools
from typing import Any, Dict

import pytest

from acpref._core import envelope
from acpref._core.envelope import NO_ID
from acpref.errors import ErrorCode

_OK_ERROR = {"code": -32000, "message": "m"}


@pytest.mark.parametrize(
    "value, kind, clauses, answer",
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "m"}, "request", [], None),
        ({"jsonrpc": "2.0", "method": "m"}, "notification", [], None),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "response", [], None),
        ({"jsonrpc": "2.0", "id": None, "method": "m"}, "request", ["RPC-03"], None),
        ({"id": 1, "method": "m"}, "request", ["RPC-01"], (1, ErrorCode.INVALID_REQUEST)),
        ({"method": "m"}, "notification", ["RPC-01"], None),  # spec OVERVIEW-09: never answered
        ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, "request", ["RPC-02"], (None, -32600)),
        ({"jsonrpc": "2.0", "id": 2, "method": 5}, "request", ["RPC-02"], (2, -32600)),
        ({"jsonrpc": "2.0", "method": 5}, "invalid", ["RPC-02"], (None, -32600)),
        ({"jsonrpc": "2.0", "id": 3, "method": "m", "params": [1]}, "request", ["RPC-02"],
         (3, ErrorCode.INVALID_PARAMS)),
        ({"jsonrpc": "2.0", "id": 4, "result": 1, "error": _OK_ERROR}, "response", ["RPC-05"],
         None),
        ({"jsonrpc": "2.0", "id": 4, "error": {"code": "x"}}, "response", ["RPC-09"], None),
        ({"id": 4, "result": 1}, "response", ["RPC-01"], None),
        ({"jsonrpc": "2.0", "id": 5}, "invalid", ["RPC-05"], (None, -32600)),
        # spec-gap response-without-id: a response is never answered, even one without an id.
        ({"jsonrpc": "2.0", "result": {}}, "response", ["RPC-04"], None),
        ({"jsonrpc": "2.0", "error": _OK_ERROR}, "response", ["RPC-04"], None),
        ({"result": 1}, "response", ["RPC-01", "RPC-04"], None),
        ({"jsonrpc": "2.0"}, "invalid", ["OVERVIEW-01"], (None, -32600)),
        ([], "batch", ["OVERVIEW-01"], (None, -32600)),
        (7, "invalid", ["RPC-11"], (None, -32600)),
    ],
)
def test_what_a_value_is_and_what_is_wrong_with_it(value, kind, clauses, answer) -> None:
    env = envelope.inspect(value)
    assert env.kind == kind
    assert [f.clause for f in env.faults] == clauses
    got = env.answer
    assert (None if got is None else (got[0], got[1].code)) == answer


def test_a_blank_line_holds_json_whitespace_only() -> None:
    # spec-gap blank-line: space, tab and carriage return (RFC 8259), not form feed or NUL.
    assert all(envelope.blank(line) for line in (b"", b" ", b"\t \r", b"\r"))
    assert not any(envelope.blank(line) for line in (b"\x0c", b" \x0b ", b"\x00", b"\x85"))


def test_RPC_10_an_unparseable_line_is_a_parse_error() -> None:
    for line in (b"{bad", b"\xff", b"NaN"):
        value, fault = envelope.decode(line)
        assert value is None and fault is not None
        assert (fault.clause, fault.code) == ("RPC-10", ErrorCode.PARSE_ERROR)
    assert envelope.decode(b'{"a": 1}') == ({"a": 1}, None)


def test_the_quick_path_for_sound_messages_agrees_with_the_full_inspection() -> None:
    # inspect() answers the sound messages without looking for faults; over every combination
    # of envelope members it must say exactly what the full inspection says.
    members = {
        "jsonrpc": [NO_ID, "2.0", "1.0"],
        "id": [NO_ID, None, 1, "a", 1.5, True, [1]],
        "method": [NO_ID, "m", 5, None],
        "params": [NO_ID, None, {}, [1]],
        "result": [NO_ID, 1, None],
        "error": [NO_ID, _OK_ERROR, {"code": "x"}],
    }
    for values in itertools.product(*members.values()):
        message: Dict[str, Any] = {k: v for k, v in zip(members, values) if v is not NO_ID}
        quick, full = envelope.inspect(message), envelope._inspect(message)
        assert (quick.kind, repr(quick.id), repr(quick.method), quick.faults) == (
            full.kind,
            repr(full.id),
            repr(full.method),
            full.faults,
        ), message
