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
