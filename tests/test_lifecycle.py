"""The lifecycle tables of acpref/_core/lifecycle.py: the rules follow them, and the committed
diagrams (spec_notes/lifecycles.md) are drawn from them.

The rules are driven on the in-memory pair (tests/pair.py: the client's and the agent's
``ProtocolState``, no I/O); both sides walk the same rows, so each phase is read from both.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from acpref._core import Party
from acpref._core.facts import SessionState
from acpref._core.lifecycle import SESSION, TURN, SessionEvent, SessionPhase, TurnEvent, TurnPhase
from pair import Pair, Step

REPO = Path(__file__).resolve().parent.parent
A, C = Party.AGENT, Party.CLIENT
CWD = "/work/project"


def _req(i: Any, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def _note(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _ok(i: Any, result: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result}


CAPS = {"loadSession": True, "sessionCapabilities": {"resume": {}, "close": {}, "delete": {}}}


def _pair(**kw: Any) -> Pair:
    return Pair(**kw).handshake(agent_capabilities=CAPS)


def _session(pair: Pair, sid: str = "s") -> SessionState:
    """The session as the agent's rules keep it; the client's, which saw the same wire, agree."""
    a, c = pair.agent.sessions[sid], pair.client.sessions[sid]
    assert (a.phase, a.turn_phase, a.cancel_clause) == (c.phase, c.turn_phase, c.cancel_clause)
    return a


def _clauses(findings: List[Any]) -> List[str]:
    return [f.clause for f in findings]


def _found(step: Step) -> List[str]:
    """The clauses the sender's rules found (the receiver's find the same, if it was sent)."""
    if step.sent:
        assert _clauses(step.received_findings) == _clauses(step.sent_findings)
    return _clauses(step.sent_findings)


def _prompt_running(pair: Pair, new_id: int = 1) -> None:
    pair.quietly([
        (C, _req(new_id, "session/new", {"cwd": CWD, "mcpServers": []})),
        (A, _ok(new_id, {"sessionId": "s"})),
        (C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []})),
    ])  # fmt: skip


def _read_after(pair: Pair) -> None:
    """The agent answers a request sent now: the wire shows it read all that came before."""
    pair.quietly([
        (C, _req(50, "_x/ping", {})),
        (A, {"jsonrpc": "2.0", "id": 50, "error": {"code": -32601, "message": "no"}}),
    ])  # fmt: skip


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
    pair = _pair()
    pair.quietly([(C, _req(1, "session/load", {"sessionId": "s", "cwd": CWD, "mcpServers": []}))])
    assert _session(pair).phase is SessionPhase.LOADING
    pair.quietly([(C, _req(2, "session/resume", {"sessionId": "s", "cwd": CWD, "mcpServers": []}))])
    assert _session(pair).phase is SessionPhase.LOADING  # the load may still replay
    pair.quietly([(A, _ok(1, {}))])
    assert _session(pair).phase is SessionPhase.RESUMING
    pair.quietly([(A, _ok(2, {}))])
    assert _session(pair).phase is SessionPhase.ACTIVE
    pair.quietly([(C, _req(3, "session/close", {"sessionId": "s"})), (A, _ok(3, {}))])
    assert "s" not in pair.agent.sessions and "s" not in pair.client.sessions  # UNKNOWN
    assert SESSION.row(SessionPhase.ACTIVE, SessionEvent.CLOSED).target is SessionPhase.UNKNOWN


def test_an_event_with_no_row_is_what_a_rule_reports() -> None:
    pair = _pair()
    assert not SESSION.allows(SessionPhase.UNKNOWN, SessionEvent.CLOSE_SENT)
    step = pair.client_sends(_req(1, "session/close", {"sessionId": "nope"}))
    assert _found(step) == ["SETUP-15"] and step.stopped is not None  # the client never sends it
    pair.quietly([(C, _req(2, "session/new", {"cwd": CWD, "mcpServers": []})),
                  (A, _ok(2, {"sessionId": "s"}))])  # fmt: skip
    prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}
    pair.quietly([(C, _req(3, "session/prompt", prompt))])
    assert _session(pair).turn_phase is TurnPhase.RUNNING
    assert not TURN.allows(TurnPhase.RUNNING, TurnEvent.PROMPT_SENT)
    step = pair.client_sends(_req(4, "session/prompt", prompt))
    assert _found(step) == ["spec-gap:concurrent-prompt"] and step.stopped is not None


@pytest.mark.parametrize(
    "cancel,clause",
    [
        (_note("session/cancel", {"sessionId": "s"}), "PROMPT-23"),
        (_req(9, "session/close", {"sessionId": "s"}), "SETUP-16"),
    ],
)
def test_a_cancelled_turn_owes_the_clause_of_its_row(cancel: Dict[str, Any], clause: str) -> None:
    # acpref's agent does not send "end_turn" then; one that is not acpref (lax) does.
    for lax in (set(), {A}):
        pair = _pair(lax=lax)
        _prompt_running(pair)
        pair.quietly([(C, cancel)])
        s = _session(pair)
        assert s.turn_phase is TurnPhase.CANCEL_REQUESTED
        assert s.cancel_clause == clause
        # the agent answers a request sent after the cancel: it has read it, "cancelled" is due
        _read_after(pair)
        step = pair.agent_sends(_ok(2, {"stopReason": "end_turn"}))
        assert clause in _found(step)
        if not lax:
            assert step.stopped is not None  # not sent: the turn still waits for "cancelled"
            assert _session(pair).turn_phase is TurnPhase.CANCEL_REQUESTED
    assert next(f for f in step.received_findings if f.clause == clause).blame is A
    assert _session(pair).turn_phase is TurnPhase.CANCEL_ENDED


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
    pair = _pair()
    pair.quietly([(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []})),
                  (A, _ok(1, {"sessionId": "s"}))])  # fmt: skip
    if last == "turn":
        pair.quietly([(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []})),
                      (A, _ok(2, {"stopReason": "end_turn"}))])  # fmt: skip
    elif last == "cancelled":
        pair.quietly([(C, _req(2, "session/prompt", {"sessionId": "s", "prompt": []})),
                      (C, _note("session/cancel", {"sessionId": "s"})),
                      (A, _ok(2, {"stopReason": "cancelled"}))])  # fmt: skip
    elif last in ("load", "resume"):
        params = {"sessionId": "s", "cwd": CWD, "mcpServers": []}
        pair.quietly([(C, _req(2, f"session/{last}", params)), (A, _ok(2, {}))])
    assert _session(pair).turn_phase is phase
    assert TURN.refusal(phase, TurnEvent.CONTENT) == clause
    step = pair.agent_sends(_chunk())
    assert _found(step) == [clause] and step.sent_findings[0].blame is A
    # A MUST the agent breaks it does not send; a decision of acpref's it only reports.
    assert step.sent is not step.sent_findings[0].binding


def test_a_failed_reopen_keeps_a_session_set_up_before_and_drops_its_own_record() -> None:
    pair = _pair()
    pair.quietly([(C, _req(1, "session/new", {"cwd": CWD, "mcpServers": []})),
                  (A, _ok(1, {"sessionId": "s"}))])  # fmt: skip
    failed = {"code": -32002, "message": "no such session"}
    for i, sid in ((2, "s"), (3, "other")):
        params = {"sessionId": sid, "cwd": CWD, "mcpServers": []}
        pair.quietly([(C, _req(i, "session/load", params))])
        assert _session(pair, sid).phase is SessionPhase.LOADING
        pair.quietly([(A, {"jsonrpc": "2.0", "id": i, "error": failed})])
    assert _session(pair).phase is SessionPhase.ACTIVE
    assert SESSION.row(SessionPhase.LOADING, SessionEvent.REOPEN_FAILED_KEPT) is not None
    # UNKNOWN again: its record was the load's own
    assert "other" not in pair.agent.sessions and "other" not in pair.client.sessions


def test_a_refused_event_has_no_row_and_every_refusal_is_drawn() -> None:
    drawn = (REPO / "spec_notes" / "lifecycles.md").read_text(encoding="utf-8")
    for table in (SESSION, TURN):
        for phase, event, clause in table.refusals:
            assert not table.allows(phase, event)
            assert f"| {phase.value} | {event.value} | {clause} |" in drawn


# -- The decisions the live agent asks the core for (read from the same state) -------------------


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

    # The client's message reaches the agent even where the client's rules find fault with it.
    pair = _pair(lax={C})
    _prompt_running(pair)
    step = pair.client_sends(message)
    stops = [e for e in step.received_effects if isinstance(e, TurnStops)]
    assert [e.clause for e in stops] == ([clause] if clause else [])
    for stop in stops:
        assert stop.session_id == "s" and stop.request_id == 2 and stop.ending is ending
    pair.agent_sends(_ok(2, {"stopReason": "cancelled"}))
    again = dict(message, id=10) if "id" in message else message
    # no turn runs any more: nothing to stop
    assert not [e for e in pair.client_sends(again).received_effects if isinstance(e, TurnStops)]


def test_a_prompt_read_while_its_session_closes_is_stopped_at_once() -> None:
    from acpref._core.effects import TurnStops

    pair = _pair(lax={C})
    _prompt_running(pair)
    pair.quietly([(C, _req(3, "session/close", {"sessionId": "s"})),
                  (A, _ok(2, {"stopReason": "cancelled"}))])  # fmt: skip
    step = pair.client_sends(_req(4, "session/prompt", {"sessionId": "s", "prompt": []}))
    stops = [e for e in step.received_effects if isinstance(e, TurnStops)]
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


@pytest.mark.parametrize(
    "stop",
    [_req(9, "session/delete", {"sessionId": "s"}), _note("$/cancel_request", {"requestId": 2})],
)
def test_a_turn_asked_to_stop_but_not_cancelled_owes_no_cancelled_answer(
    stop: Dict[str, Any]
) -> None:
    # spec-gap delete-active, cancel-request-prompt: DELETE-05 leaves an active session's delete
    # to the agent, CANCEL-05 allows any result: "end_turn" breaks nothing (not PROMPT-23).
    pair = _pair()
    _prompt_running(pair)
    pair.quietly([(C, stop)])
    s = _session(pair)
    assert s.turn_phase is TurnPhase.STOP_REQUESTED and s.cancel_clause is None
    assert s.turn_phase.running and s.turn_phase.stopped
    pair.quietly([(A, _chunk())])  # its pending updates may still come (CANCEL-04)
    _read_after(pair)  # it had read the stop: still no "cancelled" is due
    pair.quietly([(A, _ok(2, {"stopReason": "end_turn"}))])
    assert _session(pair).turn_phase is TurnPhase.ENDED


def test_CANCEL_05_an_error_to_a_cancel_request_is_a_support_gap_a_later_cancel_is_PROMPT_23() -> None:
    pair = _pair()
    _prompt_running(pair)
    pair.quietly([(C, _note("$/cancel_request", {"requestId": 2}))])
    wrong = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "boom"}}
    # spec CANCEL-05 binds a receiver that supports $/cancel_request: spec-gap
    # cancel-request-support, since the wire does not show whether this one does.
    step = pair.agent_sends(wrong)
    assert _found(step) == ["spec-gap:cancel-request-support"] and step.sent  # an error answer
    pair = _pair()
    _prompt_running(pair)
    pair.quietly([(C, _note("$/cancel_request", {"requestId": 2})),
                  (C, _note("session/cancel", {"sessionId": "s"}))])  # fmt: skip
    s = _session(pair)
    assert s.turn_phase is TurnPhase.CANCEL_REQUESTED and s.cancel_clause == "PROMPT-23"
    _read_after(pair)
    step = pair.agent_sends(_ok(2, {"stopReason": "end_turn"}))
    assert "PROMPT-23" in _found(step) and step.stopped is not None


def test_a_delete_answered_drops_the_session_and_an_unknown_ones_delete_is_no_fault() -> None:
    assert SESSION.allows(SessionPhase.UNKNOWN, SessionEvent.DELETE_SENT)  # DELETE-04
    pair = _pair()
    pair.quietly([(C, _req(1, "session/delete", {"sessionId": "never"}))])
    _prompt_running(pair, new_id=10)
    pair.quietly([(C, _req(9, "session/delete", {"sessionId": "s"})),
                  (A, _ok(2, {"stopReason": "cancelled"})), (A, _ok(9, {}))])  # fmt: skip
    for state in (pair.agent, pair.client):
        assert "s" not in state.sessions and "s" in state.deleted


def test_the_end_of_input_stops_every_running_turn_and_no_other() -> None:
    pair = _pair()
    _prompt_running(pair)
    pair.quietly([
        (C, _req(3, "session/new", {"cwd": CWD, "mcpServers": []})),
        (A, _ok(3, {"sessionId": "idle"})),
        (C, _req(4, "session/new", {"cwd": CWD, "mcpServers": []})),
        (A, _ok(4, {"sessionId": "cancelled"})),
        (C, _req(5, "session/prompt", {"sessionId": "cancelled", "prompt": []})),
        (C, _note("session/cancel", {"sessionId": "cancelled"})),
    ])  # fmt: skip
    stops = pair.agent.end_of_input()  # the agent's input ends
    assert sorted((t.session_id, t.ending, t.clause) for t in stops) == [
        ("cancelled", True, "spec-gap:end-of-input"),
        ("s", True, "spec-gap:end-of-input"),
    ]
    agent = pair.agent.sessions
    assert agent["s"].turn_phase is TurnPhase.STOP_REQUESTED
    assert agent["cancelled"].turn_phase is TurnPhase.CANCEL_REQUESTED
    assert agent["idle"].turn_phase is TurnPhase.NO_TURN
    # a turn stopped by the end of input owes no "cancelled" (acpref's agent answers it anyway)
    assert pair.agent_sends(_ok(2, {"stopReason": "end_turn"})).sent_findings == []
