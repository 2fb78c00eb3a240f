"""Clause tests for overview.mdx: one test per clause, named after it.

Clauses: OVERVIEW-02, OVERVIEW-03, OVERVIEW-08, OVERVIEW-11. The agent is the echo agent (a
subprocess, or served in this process over an in-memory transport to send raw lines), or a
minimal ``Agent`` subclass; a rule alone is asked on the in-memory pair (tests/pair.py: both
sides' ``ProtocolState``, no I/O); every wait is bounded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from acpref import schema as s
from acpref._core import Party
from acpref.agent import Agent
from acpref.echo import AUTH_METHOD_ID, EchoAgent
from acpref.errors import ErrorCode, RpcError
from acpref.oracle import validate
from acpref.testing import memory_pair

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import WAIT, TestClient, in_process, spawn_echo  # noqa: E402
from pair import A, C, Pair, err, ok, req  # noqa: E402
from spec_wire import clauses_of, records  # noqa: E402


@pytest.fixture
def echo() -> Iterator[TestClient]:
    client = spawn_echo()
    yield client
    client.close()


class _Minimal(Agent):
    """The least an agent can be: only session_prompt, and nothing optional advertised."""

    def capabilities(self) -> s.AgentCapabilities:
        return s.AgentCapabilities()

    def session_prompt(self, params: s.PromptRequest, turn: Any) -> Any:
        turn.say("ok")
        return s.StopReason.END_TURN


def _code(call: Any) -> int:
    with pytest.raises(RpcError) as info:
        call()
    return int(info.value.code)


def test_OVERVIEW_02_baseline_methods_are_implemented(echo: TestClient, tmp_path: Path) -> None:
    # initialize already ran (spawn_echo); the others must not be "method not found".
    echo.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    sid = echo.new_session(str(tmp_path)).session_id
    turn = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid), what="the turn to start")
    echo.cancel(sid)
    assert turn.result(WAIT).stop_reason == s.StopReason.CANCELLED
    errors = [m["error"] for d, m in echo.wire if d == "in" and "error" in m]
    assert all(e["code"] != ErrorCode.METHOD_NOT_FOUND for e in errors)


def test_OVERVIEW_02_a_minimal_agent_has_every_baseline_method(tmp_path: Path) -> None:
    client = in_process(lambda c: _Minimal(c))
    try:
        # authenticate exists (an unknown method id is bad params, not a missing method).
        assert (
            _code(lambda: client.request("authenticate", s.AuthenticateRequest(method_id="x")))
            == ErrorCode.INVALID_PARAMS
        )
        sid = client.new_session(str(tmp_path)).session_id
        client.cancel(sid)  # a notification with no turn running: accepted, no answer
        assert client.prompt(sid, "hi").stop_reason == s.StopReason.END_TURN
        assert [f for f in client.findings if f.blame is Party.AGENT] == []
    finally:
        client.close()


def test_OVERVIEW_03_optional_methods_only_when_advertised(tmp_path: Path) -> None:
    client = in_process(lambda c: _Minimal(c))
    try:
        sid = client.new_session(str(tmp_path)).session_id
        load = s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        assert _code(lambda: client.request("session/load", load)) == ErrorCode.METHOD_NOT_FOUND
        assert (
            _code(lambda: client.request("logout", s.LogoutRequest()))
            == ErrorCode.METHOD_NOT_FOUND
        )
        # set_mode has no gate: it exists, and a session without modes refuses the mode id.
        set_mode = s.SetSessionModeRequest(session_id=sid, mode_id="x")
        assert _code(lambda: client.request("session/set_mode", set_mode)) == (
            ErrorCode.INVALID_PARAMS
        )
    finally:
        client.close()


def test_OVERVIEW_03_advertised_optional_methods_work(echo: TestClient, tmp_path: Path) -> None:
    sid = echo.new_session(str(tmp_path)).session_id
    echo.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    echo.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    echo.request("logout", s.LogoutRequest())
    assert [f for f in echo.findings if f.is_violation] == []


def test_OVERVIEW_08_results_and_errors_have_their_members(
    echo: TestClient, tmp_path: Path
) -> None:
    sid = echo.new_session(str(tmp_path)).session_id
    with pytest.raises(RpcError):
        echo.prompt(sid, "/error")
    with pytest.raises(RpcError):
        echo.prompt("no-such-session", "hi")
    responses = [m for d, m in echo.wire if d == "in" and "method" not in m]
    assert len(responses) >= 4
    failures = [m for m in responses if "error" in m]
    assert len(failures) == 2
    for m in responses:
        assert ("result" in m) != ("error" in m)
    for m in failures:
        assert type(m["error"]["code"]) is int and isinstance(m["error"]["message"], str)


def _set_mode_asked() -> Pair:
    return Pair().handshake().quietly([
        (C, req(1, "session/new", {"cwd": "/work", "mcpServers": []})),
        (A, ok(1, {"sessionId": "s1"})),
        (C, req(7, "session/set_mode", {"sessionId": "s1", "modeId": "m"})),
    ])  # fmt: skip


def test_OVERVIEW_08_an_error_without_integer_code_is_a_violation() -> None:
    bad = {"jsonrpc": "2.0", "id": 7, "error": {"code": "-32602", "message": "no"}}
    step = _set_mode_asked().agent_sends(bad)
    # An error answer is never stopped (RPC-06): sent, and found on both sides.
    assert step.sent and "RPC-09" in clauses_of(step.sent_findings)
    assert next(f for f in step.received_findings if f.clause == "RPC-09").blame is A
    assert _set_mode_asked().agent_sends(err(7, -32602)).findings == []


def test_OVERVIEW_11_renamed_envelope_members_are_no_message() -> None:
    driver = memory_pair(lambda c: EchoAgent(c), timeout=WAIT)
    try:
        driver.initialize()
        since = driver.sink.received_count
        driver.send_raw({"jsonrpc": "2.0", "ID": 5, "Method": "session/list", "Params": {}})
        answer = driver.wait_response(None, since=since)
        assert answer["error"]["code"] == ErrorCode.INVALID_REQUEST
        assert "result" not in answer
    finally:
        report = driver.close()
    assert "OVERVIEW-01" in report.clauses()


def test_OVERVIEW_11_the_oracle_reads_only_jsonrpc_member_names() -> None:
    good = records(("client", req(1, "session/list")), ("agent", ok(1, {"sessions": []})))
    renamed = records(("client", {"jsonrpc": "2.0", "Id": 1, "METHOD": "x"}))
    assert "OVERVIEW-01" not in validate(good).clauses()
    assert "OVERVIEW-01" in validate(renamed).clauses()
