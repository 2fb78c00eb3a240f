"""The lifecycle tables of acpref/_core/lifecycle.py: the rules follow them, and the committed
diagrams (spec_notes/lifecycles.md) are drawn from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from acpref._core import Party, ProtocolState
from acpref._core.lifecycle import SESSION, TURN, SessionEvent, SessionPhase, TurnEvent, TurnPhase

REPO = Path(__file__).resolve().parent.parent
A, C = Party.AGENT, Party.CLIENT
CWD = "/work/project"


def _req(i: Any, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def _note(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _ok(i: Any, result: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result}


def _state() -> ProtocolState:
    state = ProtocolState()
    state.observe(C, _req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    caps = {"loadSession": True, "sessionCapabilities": {"resume": {}, "close": {}, "delete": {}}}
    state.observe(A, _ok(0, {"protocolVersion": 1, "agentCapabilities": caps}))
    return state


def _clauses(findings: List[Any]) -> List[str]:
    return [f.clause for f in findings]


def test_the_committed_diagrams_are_drawn_from_the_tables() -> None:
    drawn = subprocess.run(
        [sys.executable, "-m", "acpref", "spec", "--lifecycles"],
        capture_output=True, text=True, timeout=60, check=True, cwd=REPO,
    ).stdout
    committed = (REPO / "spec_notes" / "lifecycles.md").read_text(encoding="utf-8")
    assert drawn == committed, "run: acpref spec --lifecycles > spec_notes/lifecycles.md"
    for table in (SESSION, TURN):
        for row in table.rows:
            assert f"| {row.source.value} | {row.event.value} | {row.target.value} |" in drawn


def test_every_phase_is_reachable_and_every_row_is_unique() -> None:
    for table, phases in ((SESSION, SessionPhase), (TURN, TurnPhase)):
        reached = {table.initial}
        for _ in phases:
            reached |= {r.target for r in table.rows if r.source in reached}
        assert reached == set(phases), table.name
        keys = [(r.source, r.event) for r in table.rows]
        assert len(keys) == len(set(keys))


def test_a_session_walks_its_table_through_load_resume_and_close() -> None:
    state = _state()
    state.observe(C, _req(1, "session/load", {"sessionId": "s", "cwd": CWD, "mcpServers": []}))
    assert state.sessions["s"].phase is SessionPhase.LOADING
    state.observe(C, _req(2, "session/resume", {"sessionId": "s", "cwd": CWD, "mcpServers": []}))
    assert state.sessions["s"].phase is SessionPhase.LOADING  # the load may still replay
    state.observe(A, _ok(1, {}))
    assert state.sessions["s"].phase is SessionPhase.RESUMING
    state.observe(A, _ok(2, {}))
    assert state.sessions["s"].phase is SessionPhase.ACTIVE
    state.observe(C, _req(3, "session/close", {"sessionId": "s"}))
    state.observe(A, _ok(3, {}))
    assert "s" not in state.sessions  # UNKNOWN: no record
    assert SESSION.row(SessionPhase.ACTIVE, SessionEvent.CLOSED).target is SessionPhase.UNKNOWN


def test_an_event_with_no_row_is_what_a_rule_reports() -> None:
    state = _state()
    assert not SESSION.allows(SessionPhase.UNKNOWN, SessionEvent.CLOSE_SENT)
    found = state.observe(C, _req(1, "session/close", {"sessionId": "nope"}))
    assert _clauses(found) == ["SETUP-15"]
    state.observe(C, _req(2, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(2, {"sessionId": "s"}))
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
    assert state.observe(C, _req(3, "session/prompt", prompt)) == []
    assert state.sessions["s"].turn_phase is TurnPhase.RUNNING
    assert not TURN.allows(TurnPhase.RUNNING, TurnEvent.PROMPT_SENT)
    found = state.observe(C, _req(4, "session/prompt", prompt))
    assert _clauses(found) == ["spec-gap:concurrent-prompt"]


@pytest.mark.parametrize(
    "cancel,clause",
    [
        (_note("session/cancel", {"sessionId": "s"}), "PROMPT-23"),
        (_req(9, "session/close", {"sessionId": "s"}), "SETUP-16"),
    ],
)
def test_a_cancelled_turn_owes_the_clause_of_its_row(cancel: Dict[str, Any], clause: str) -> None:
    state = _state()
    state.observe(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(1, {"sessionId": "s"}))
    state.observe(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []}))
    state.observe(C, cancel)
    s = state.sessions["s"]
    assert s.turn_phase is TurnPhase.CANCEL_REQUESTED
    assert s.cancel_clause == clause
    # the agent answers a request sent after the cancel: it has read it, "cancelled" is due
    _read_after(state)
    found = state.observe(A, _ok(2, {"stopReason": "end_turn"}))
    assert clause in _clauses(found)
    assert s.turn_phase is TurnPhase.CANCEL_ENDED


def _chunk(sid: str = "s") -> Dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    return _note("session/update", {"sessionId": sid, "update": update})


@pytest.mark.parametrize(
    "last,phase,clause",
    [
        ("turn", TurnPhase.ENDED, "spec-gap:content-after-turn"),
        ("cancelled", TurnPhase.CANCEL_ENDED, "PROMPT-26"),
        ("load", TurnPhase.REPLAYED, "SETUP-07"),
        ("resume", TurnPhase.NO_TURN, "spec-gap:content-outside-turn"),
        ("new", TurnPhase.NO_TURN, "spec-gap:content-outside-turn"),
    ],
)
def test_between_turns_the_turn_table_names_what_a_stray_update_breaks(
    last: str, phase: TurnPhase, clause: str
) -> None:
    state = _state()
    state.observe(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(1, {"sessionId": "s"}))
    if last == "turn":
        state.observe(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []}))
        state.observe(A, _ok(2, {"stopReason": "end_turn"}))
    elif last == "cancelled":
        state.observe(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []}))
        state.observe(C, _note("session/cancel", {"sessionId": "s"}))
        state.observe(A, _ok(2, {"stopReason": "cancelled"}))
    elif last in ("load", "resume"):
        params = {"sessionId": "s", "cwd": CWD, "mcpServers": []}
        state.observe(C, _req(2, f"session/{last}", params))
        state.observe(A, _ok(2, {}))
    assert state.sessions["s"].turn_phase is phase
    assert TURN.refusal(phase, TurnEvent.CONTENT) == clause
    assert _clauses(state.observe(A, _chunk())) == [clause]


def test_a_failed_reopen_keeps_a_session_set_up_before_and_drops_its_own_record() -> None:
    state = _state()
    state.observe(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(1, {"sessionId": "s"}))
    failed = {"code": -32002, "message": "no such session"}
    for i, sid in ((2, "s"), (3, "other")):
        state.observe(C, _req(i, "session/load", {"sessionId": sid, "cwd": CWD, "mcpServers": []}))
        assert state.sessions[sid].phase is SessionPhase.LOADING
        state.observe(A, {"jsonrpc": "2.0", "id": i, "error": failed})
    assert state.sessions["s"].phase is SessionPhase.ACTIVE
    assert SESSION.row(SessionPhase.LOADING, SessionEvent.REOPEN_FAILED_KEPT) is not None
    assert "other" not in state.sessions  # UNKNOWN again: its record was the load's own


def test_a_refused_event_has_no_row_and_every_refusal_is_drawn() -> None:
    drawn = (REPO / "spec_notes" / "lifecycles.md").read_text(encoding="utf-8")
    for table in (SESSION, TURN):
        for phase, event, clause in table.refusals:
            assert not table.allows(phase, event)
            assert f"| {phase.value} | {event.value} | {clause} |" in drawn


# -- The decisions the live agent asks the core for (read from the same state) -------------------


def _running(state: ProtocolState) -> None:
    state.observe(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(1, {"sessionId": "s"}))
    state.observe(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []}))


@pytest.mark.parametrize(
    "message,clause,ending",
    [
        (_note("session/cancel", {"sessionId": "s"}), "PROMPT-22", False),
        (_req(9, "session/close", {"sessionId": "s"}), "SETUP-16", True),
        (_req(9, "session/delete", {"sessionId": "s"}), "spec-gap:delete-active", True),
        (_note("$/cancel_request", {"requestId": 2}), "spec-gap:cancel-request-prompt", False),
        (_note("$/cancel_request", {"requestId": 77}), None, False),
        (_note("session/cancel", {"sessionId": "other"}), None, False),
    ],
)
def test_which_turn_a_message_stops_is_read_from_the_turn_table(
    message: Dict[str, Any], clause: Any, ending: bool
) -> None:
    from acpref._core.effects import TurnStops

    state = _state()
    _running(state)
    stops = [e for e in state.step(C, message).effects if isinstance(e, TurnStops)]
    assert [e.clause for e in stops] == ([clause] if clause else [])
    for stop in stops:
        assert stop.session_id == "s" and stop.request_id == 2 and stop.ending is ending
    state.observe(A, _ok(2, {"stopReason": "cancelled"}))
    again = dict(message, id=10) if "id" in message else message
    # no turn runs any more: nothing to stop
    assert not [e for e in state.step(C, again).effects if isinstance(e, TurnStops)]


def test_a_prompt_read_while_its_session_closes_is_stopped_at_once() -> None:
    from acpref._core.effects import TurnStops

    state = _state()
    _running(state)
    state.observe(C, _req(3, "session/close", {"sessionId": "s"}))
    state.observe(A, _ok(2, {"stopReason": "cancelled"}))
    prompt = _req(4, "session/prompt", {"sessionId": "s", "prompt": []})
    stops = [e for e in state.step(C, prompt).effects if isinstance(e, TurnStops)]
    assert stops == [TurnStops("s", 4, True, "spec-gap:close-in-flight")]


def test_the_order_of_a_sessions_answers_and_the_cancelled_answers() -> None:
    from acpref._core.cancellation import CancelReply, reply_to_cancel_request
    from acpref._core.prompt_turn import prompt_answer
    from acpref._core.session_setup import answered_after

    for other in ("session/prompt", "session/load", "session/set_mode"):
        for earlier in (True, False):
            assert answered_after("session/close", other, earlier=earlier)
    assert not answered_after("session/close", "session/delete", earlier=True)
    assert answered_after("session/load", "session/prompt", earlier=True)
    assert not answered_after("session/load", "session/prompt", earlier=False)
    assert answered_after("session/prompt", "session/resume", earlier=True)
    assert not answered_after("session/prompt", "session/set_mode", earlier=True)
    assert reply_to_cancel_request(False, False) is CancelReply.IGNORE
    assert reply_to_cancel_request(True, False) is CancelReply.ANSWER_CANCELLED
    assert reply_to_cancel_request(True, True) is CancelReply.HANDLER_ANSWERS
    assert prompt_answer(True, "end_turn") == "cancelled"
    assert prompt_answer(True, None) == "cancelled"
    assert prompt_answer(False, "end_turn") == "end_turn"
    assert prompt_answer(False, None) is None


# -- The other ways a running turn is asked to stop: delete, $/cancel_request, end of input -------


def _prompt_running(state: ProtocolState) -> None:
    state.observe(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(1, {"sessionId": "s"}))
    state.observe(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []}))


def _read_after(state: ProtocolState) -> None:
    """The agent answers a request sent now: the wire shows it read all that came before."""
    state.observe(C, _req(50, "_x/ping", {}))
    state.observe(A, {"jsonrpc": "2.0", "id": 50, "error": {"code": -32601, "message": "no"}})


@pytest.mark.parametrize(
    "stop",
    [_req(9, "session/delete", {"sessionId": "s"}), _note("$/cancel_request", {"requestId": 2})],
)
def test_a_turn_asked_to_stop_but_not_cancelled_owes_no_cancelled_answer(
    stop: Dict[str, Any]
) -> None:
    # spec-gap delete-active, cancel-request-prompt: DELETE-05 leaves an active session's delete
    # to the agent, CANCEL-05 allows any result: "end_turn" breaks nothing (not PROMPT-23).
    state = _state()
    _prompt_running(state)
    state.observe(C, stop)
    s = state.sessions["s"]
    assert s.turn_phase is TurnPhase.STOP_REQUESTED and s.cancel_clause is None
    assert s.turn_phase.running and s.turn_phase.stopped
    assert state.observe(A, _chunk()) == []  # its pending updates may still come (CANCEL-04)
    _read_after(state)  # it had read the stop: still no "cancelled" is due
    assert state.observe(A, _ok(2, {"stopReason": "end_turn"})) == []
    assert s.turn_phase is TurnPhase.ENDED


def test_CANCEL_05_an_error_to_a_cancel_request_is_a_support_gap_a_later_cancel_is_PROMPT_23() -> None:
    state = _state()
    _prompt_running(state)
    state.observe(C, _note("$/cancel_request", {"requestId": 2}))
    wrong = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "boom"}}
    # spec CANCEL-05 binds a receiver that supports $/cancel_request: spec-gap
    # cancel-request-support, since the wire does not show whether this one does.
    assert _clauses(state.observe(A, wrong)) == ["spec-gap:cancel-request-support"]
    state = _state()
    _prompt_running(state)
    state.observe(C, _note("$/cancel_request", {"requestId": 2}))
    state.observe(C, _note("session/cancel", {"sessionId": "s"}))
    s = state.sessions["s"]
    assert s.turn_phase is TurnPhase.CANCEL_REQUESTED and s.cancel_clause == "PROMPT-23"
    _read_after(state)
    assert "PROMPT-23" in _clauses(state.observe(A, _ok(2, {"stopReason": "end_turn"})))


def test_a_delete_answered_drops_the_session_and_an_unknown_ones_delete_is_no_fault() -> None:
    assert SESSION.allows(SessionPhase.UNKNOWN, SessionEvent.DELETE_SENT)  # DELETE-04
    state = _state()
    assert state.observe(C, _req(1, "session/delete", {"sessionId": "never"})) == []
    _prompt_running(state)
    state.observe(C, _req(9, "session/delete", {"sessionId": "s"}))
    state.observe(A, _ok(2, {"stopReason": "cancelled"}))
    state.observe(A, _ok(9, {}))
    assert "s" not in state.sessions and "s" in state.deleted


def test_the_end_of_input_stops_every_running_turn_and_no_other() -> None:
    state = _state()
    _prompt_running(state)
    state.observe(C, _req(3, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(3, {"sessionId": "idle"}))
    state.observe(C, _req(4, "session/new", {"cwd": CWD, "mcpServers": []}))
    state.observe(A, _ok(4, {"sessionId": "cancelled"}))
    state.observe(C, _req(5, "session/prompt", {"sessionId": "cancelled", "prompt": []}))
    state.observe(C, _note("session/cancel", {"sessionId": "cancelled"}))
    stops = state.end_of_input()
    assert sorted((t.session_id, t.ending, t.clause) for t in stops) == [
        ("cancelled", True, "spec-gap:end-of-input"),
        ("s", True, "spec-gap:end-of-input"),
    ]
    assert state.sessions["s"].turn_phase is TurnPhase.STOP_REQUESTED
    assert state.sessions["cancelled"].turn_phase is TurnPhase.CANCEL_REQUESTED
    assert state.sessions["idle"].turn_phase is TurnPhase.NO_TURN
    # a turn stopped by the end of input owes no "cancelled" (acpref's agent answers it anyway)
    assert state.observe(A, _ok(2, {"stopReason": "end_turn"})) == []
