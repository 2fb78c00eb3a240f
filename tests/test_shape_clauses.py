"""Which clause a required field missing (or malformed) is filed under: the page's MUST.

Spec: the pages whose MUST sentence names a field of a message (initialization.mdx,
session-setup.mdx, session-list.mdx, session-modes.mdx, session-config-options.mdx,
tool-calls.mdx, authentication.mdx) and the schema's ``required`` lists quoted for them
(acpref/_core/quotes.tsv). A field of that list missing breaks that sentence at MUST, not
OVERVIEW-01's generic "a valid ACP message" nor a definition's spec-gap (SCHEMA-12).
Transcripts built here, judged by ``validate`` (acpref/oracle/_shape_clauses.py).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Tuple

import pytest

from acpref._core.register import level_of
from acpref.oracle import validate

C, A = "client", "agent"

INIT_PARAMS = {
    "protocolVersion": 1,
    "clientCapabilities": {},
    "clientInfo": {"name": "c", "version": "1"},
}
INIT_RESULT = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "sessionCapabilities": {"close": {}, "list": {}},
    },
    "agentInfo": {"name": "a", "version": "1"},
    "authMethods": [{"id": "login", "name": "Log in"}],
}
NEW = {"cwd": "/tmp", "mcpServers": []}
MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask"}],
}


def _without(value: Dict[str, Any], key: str) -> Dict[str, Any]:
    return {k: v for k, v in value.items() if k != key}


def _transcript(
    *,
    init: Optional[Dict[str, Any]] = None,
    init_result: Optional[Dict[str, Any]] = None,
    new: Optional[Dict[str, Any]] = None,
    new_result: Optional[Dict[str, Any]] = None,
    then: Tuple[Tuple[str, Dict[str, Any]], ...] = (),
) -> List[dict]:
    """A handshake and a session, with one part replaced, then ``then``."""
    messages = [
        (C, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init or INIT_PARAMS}),
        (A, {"jsonrpc": "2.0", "id": 0, "result": init_result or INIT_RESULT}),
        (C, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new or NEW}),
        (A, {"jsonrpc": "2.0", "id": 1, "result": new_result or {"sessionId": "s1"}}),
        *then,
    ]
    records = [{"from": s, "ts": 0, "line": json.dumps(m)} for s, m in messages]
    return records + [{"from": C, "ts": 0, "event": "eof"}]


def _request(
    sender: str, rid: int, method: str, params: Dict[str, Any]
) -> Tuple[str, Dict[str, Any]]:
    return sender, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _answer(sender: str, rid: int, result: Any) -> Tuple[str, Dict[str, Any]]:
    return sender, {"jsonrpc": "2.0", "id": rid, "result": result}


PERMISSION = {
    "sessionId": "s1",
    "toolCall": {"toolCallId": "t1"},
    "options": [{"optionId": "allow", "name": "Allow"}],  # no kind
}

#: (case, transcript, the clause it breaks, who is blamed, the field named in the finding)
CASES = [
    ("INIT-02", _transcript(init=_without(INIT_PARAMS, "protocolVersion")), C, "protocolVersion"),
    ("INIT-02", _transcript(init={**INIT_PARAMS, "protocolVersion": "1"}), C, "protocolVersion"),
    (
        "INIT-04",
        _transcript(init_result=_without(INIT_RESULT, "protocolVersion")),
        A,
        "protocolVersion",
    ),
    (
        "INIT-04",
        _transcript(init_result={**INIT_RESULT, "protocolVersion": -1}),
        A,
        "protocolVersion",
    ),
    (
        "AUTH-01",
        _transcript(init_result={**INIT_RESULT, "authMethods": [{"id": "login"}]}),
        A,
        "authMethods[0].name",
    ),
    ("SETUP-01", _transcript(new=_without(NEW, "cwd")), C, "cwd"),
    ("SETUP-02", _transcript(new_result={"modes": MODES}), A, "sessionId"),
    (
        "SETUP-32",
        _transcript(new={**NEW, "mcpServers": [{"name": "fs", "command": "/bin/fs", "env": []}]}),
        C,
        "mcpServers[0].args",
    ),
    (
        "SETUP-33",
        _transcript(
            new={**NEW, "mcpServers": [{"type": "http", "name": "web", "url": "http://x/mcp"}]}
        ),
        C,
        "mcpServers[0].headers",
    ),
    (
        "SETUP-04",
        _transcript(
            then=(
                _request(C, 2, "session/load", {"sessionId": "s1", "mcpServers": []}),
                _answer(A, 2, {}),
            )
        ),
        C,
        "cwd",
    ),
    (
        "CONFIG-19",
        _transcript(
            then=(
                _request(
                    C,
                    2,
                    "session/set_config_option",
                    {"sessionId": "s1", "configId": "model", "value": "fast"},
                ),
                _answer(A, 2, {}),
            )
        ),
        A,
        "configOptions",
    ),
    (
        "SETUP-15",
        _transcript(then=(_request(C, 2, "session/close", {}), _answer(A, 2, {}))),
        C,
        "sessionId",
    ),
    (
        "LIST-02",
        _transcript(then=(_request(C, 2, "session/list", {}), _answer(A, 2, {}))),
        A,
        "sessions",
    ),
    (
        "MODES-04",
        _transcript(
            then=(_request(C, 2, "session/set_mode", {"sessionId": "s1"}), _answer(A, 2, {}))
        ),
        C,
        "modeId",
    ),
    (
        "AUTH-07",
        _transcript(then=(_request(C, 2, "authenticate", {}), _answer(A, 2, {}))),
        C,
        "methodId",
    ),
    (
        "TOOL-10",
        _transcript(
            then=(
                _request(A, 7, "session/request_permission", PERMISSION),
                _answer(C, 7, {"outcome": {"outcome": "cancelled"}}),
            )
        ),
        A,
        "options[0].kind",
    ),
]


@pytest.mark.parametrize(
    "clause, records, blamed, field", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES]
)
def test_a_required_field_the_page_names_is_filed_under_the_pages_MUST(
    clause: str, records: List[dict], blamed: str, field: str
) -> None:
    report = validate(records)
    mine = [f for f in report.findings if f.clause == clause and f.blame.value == blamed]
    # Once: where a rule of the page sees the same field missing, the shape's finding (which
    # names the path) stands for both.
    assert len(mine) == 1 and field in mine[0].message, report.format_text()
    assert level_of(clause) in ("MUST", "MUST NOT") and not report.ok
    # Filed once, under the page's sentence: not again as "not a valid ACP message", nor as
    # the definition SCHEMA-12 (spec-gap).
    others = [f for f in report.findings if f.clause in ("OVERVIEW-01", "SCHEMA-12")]
    assert not others, report.format_text()


def _must(report: Any, blamed: str) -> List[str]:
    """The clauses of the MUST findings blamed on one side, in order."""
    return [
        f.clause
        for f in report.findings
        if f.blame.value == blamed and f.level in ("MUST", "MUST NOT")
    ]


# -- One sentence broken, one finding ----------------------------------------------------------


@pytest.mark.parametrize("method", ["session/new", "session/load", "session/resume"])
def test_SETUP_25_a_cwd_that_is_no_string_is_filed_once_under_SETUP_25(method: str) -> None:
    # spec SETUP-25: the cwd is there (SETUP-01's / SETUP-04's required list is met) and is no
    # absolute path: the shape (a number, not a string) and the rule (not absolute) are one
    # sentence broken.
    params = {"sessionId": "s1", "cwd": 5, "mcpServers": []}
    if method == "session/new":
        params.pop("sessionId")
    caps = INIT_RESULT["agentCapabilities"]
    resumable = {**caps, "sessionCapabilities": {**caps["sessionCapabilities"], "resume": {}}}
    report = validate(
        _transcript(
            init_result={**INIT_RESULT, "agentCapabilities": resumable},
            then=(_request(C, 2, method, params), (A, _error(2, -32602))),
        )
    )
    assert _must(report, C) == ["SETUP-25"], report.format_text()
    assert "params.cwd" in next(f for f in report.findings if f.clause == "SETUP-25").message
    # A cwd left out is the required list's: SETUP-01, once.
    report = validate(_transcript(new=_without(NEW, "cwd")))
    assert _must(report, C) == ["SETUP-01"], report.format_text()


def test_CONFIG_18_a_boolean_option_set_to_a_string_is_filed_once_under_CONFIG_18() -> None:
    # spec CONFIG-18: "For `boolean` options, this must be a boolean": type "boolean" with the
    # string "true" breaks that sentence; the strict shape and the rule (which knows the option
    # is boolean) say so once, not also as OVERVIEW-01's "a valid ACP message".
    option = {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": False}
    caps = {**INIT_PARAMS, "clientCapabilities": {"session": {"configOptions": {"boolean": {}}}}}
    params = {"sessionId": "s1", "configId": "fast", "type": "boolean", "value": "true"}
    report = validate(
        _transcript(
            init=caps,
            new_result={"sessionId": "s1", "configOptions": [option]},
            then=(_request(C, 2, "session/set_config_option", params), (A, _error(2, -32602))),
        )
    )
    assert _must(report, C) == ["CONFIG-18"], report.format_text()
    assert "params.value" in next(f for f in report.findings if f.clause == "CONFIG-18").message


def _error(rid: int, code: int) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "Invalid params"}}


# -- RPC-07: two answers swapped are one finding ----------------------------------------------

LISTED = {"sessions": [{"sessionId": "s1", "cwd": "/tmp"}]}


def _crossed(first: Any, second: Any, method: str = "session/list", params: Any = None) -> Any:
    """session/new (id 2) and session/list (id 3: or ``method``) in flight together, answered
    in that order."""
    return validate(
        _transcript(
            then=(
                _request(C, 2, "session/new", NEW),
                _request(C, 3, method, params or {}),
                _answer(A, 2, first),
                _answer(A, 3, second),
            )
        )
    )


def test_RPC_07_results_swapped_between_two_requests_in_flight_are_one_finding() -> None:
    # spec RPC-07: each answer carries the other's result: the ids were swapped. Filed once,
    # at the first, and not as SETUP-02 / LIST-02, the shapes each breaks under the wrong id.
    report = _crossed(LISTED, {"sessionId": "s2"})
    assert _must(report, A) == ["RPC-07"], report.format_text()
    assert [f.index for f in report.findings if f.clause == "RPC-07"] == [6]
    assert not [f for f in report.findings if f.clause == "EXT-04"], report.format_text()
    # In the other order of arrival, the same.
    report = _crossed({"sessionId": "s2"}, LISTED)
    assert _must(report, A) == [], report.format_text()  # each under its own id: conforming


def test_RPC_07_a_malformed_result_that_fits_no_other_request_keeps_its_shape_clause() -> None:
    # A session/new answer without a sessionId that is no session/list result either is a
    # shape broken (SETUP-02), not a swap; nor is {} (every all-optional result's shape).
    report = _crossed({"modes": MODES}, LISTED)
    assert _must(report, A) == ["SETUP-02"], report.format_text()
    report = _crossed({}, {}, "session/close", {"sessionId": "s1"})
    assert _must(report, A) == ["SETUP-02"], report.format_text()
    # Only half a swap: session/new answered with the list's result, and the list too: the
    # first answer is still the list's, under the wrong id, the second fits its own request.
    report = _crossed(LISTED, LISTED)
    assert _must(report, A) == ["RPC-07"], report.format_text()
