"""No false blame across a crossing: a peer may write a message before it has read what the
other peer wrote just before it, since ACP runs over one stdio pipe each way.

Each direction of the pipe is ordered, but where the two are observed (the other side, a proxy,
the oracle's transcript) a message recorded after the other peer's may have been written before
that peer's message was read. The core knows what each side has provably read
(``ConnectionFacts.read``: answering a request proves everything sent before it was read). A rule
that blames a peer at MUST on what the other peer's message changed holds only where that peer
had provably read it; otherwise it is acpref's reading, a ``spec-gap``. Each test here writes the
messages in the crossing order, then with the read proven, where the MUST holds.

Spec: the clauses each test is named after; the pair: tests/pair.py; the oracle's view beside
it: ``Watched`` (tests/test_cascades.py).
"""

from __future__ import annotations

from typing import Any, Dict, List

from pair import A, C, err, note, ok, req
from test_cascades import CLIENT_CAPS, PROMPT, Watched, setup

from acpref._core import Finding, Party


def clauses(pair: Watched, party: Party) -> List[str]:
    """What the message sent after ``mark`` was blamed for, at any level: by the receiver and by
    the oracle (they must agree)."""
    step = pair.steps[pair.mark_step]  # type: ignore[attr-defined]
    received = [f.clause for f in step.received_findings if f.blame is party]
    seen = [f.clause for f in pair.oracle_findings[pair.mark :] if f.blame is party]
    assert received == seen, (received, seen)
    return received


def failed(findings: List[Finding], party: Party) -> List[str]:
    """The clauses of ``findings`` that fail ``party`` (MUST, MUST NOT)."""
    return [f.clause for f in findings if f.is_violation and f.blame is party]


def mark(pair: Watched) -> None:
    """The next message is the one ``clauses`` asks about."""
    pair.mark = len(pair.oracle_findings)  # type: ignore[attr-defined]
    pair.mark_step = len(pair.steps)  # type: ignore[attr-defined]


def read_by_client(pair: Watched, request_id: int = 90) -> None:
    """The agent asks the client something and the client answers: the client has read all the
    agent sent before (stdio is ordered)."""
    pair.agent_sends(req(request_id, "fs/read_text_file", {"sessionId": "s1", "path": "/p/a"}))
    pair.client_sends(ok(request_id, {"content": ""}))


def read_by_agent(pair: Watched, request_id: int = 90) -> None:
    """The client asks the agent something and the agent answers: the agent has read all the
    client sent before."""
    pair.client_sends(req(request_id, "_x/ping", {}))
    pair.agent_sends(err(request_id, -32601, "no"))


CHUNK: Dict[str, Any] = {"sessionUpdate": "agent_message_chunk",
                         "content": {"type": "text", "text": "late"}}  # fmt: skip


# -- prompt-turn.mdx: PROMPT-26 -----------------------------------------------------------------


def _answered_after_cancel(read_first: bool) -> Watched:
    """A turn cancelled by the client and answered end_turn by the agent, which had read the
    cancel (``read_first``) or not; then a late update of the turn."""
    pair = Watched(lax=[A])
    sid = setup(pair)
    pair.client_sends(req(2, "session/prompt", {"sessionId": sid, "prompt": PROMPT}))
    pair.client_sends(note("session/cancel", {"sessionId": sid}))
    if read_first:
        read_by_agent(pair)
    pair.agent_sends(ok(2, {"stopReason": "end_turn"}))
    mark(pair)
    pair.agent_sends(note("session/update", {"sessionId": sid, "update": CHUNK}))
    return pair


def test_PROMPT_26_a_turn_that_ended_before_the_agent_read_the_cancel_was_not_cancelled() -> None:
    # The agent answered end_turn before it read the cancel (spec-gap cancel-race): it sent
    # nothing "after receiving the session/cancel notification". Its late update is an ordinary
    # turn's (spec-gap content-after-turn), not PROMPT-26's.
    pair = _answered_after_cancel(read_first=False)
    assert clauses(pair, A) == ["spec-gap:content-after-turn"]
    assert failed(pair.oracle_findings, A) == []


def test_PROMPT_26_an_update_after_the_answer_to_a_cancel_the_agent_had_read() -> None:
    # It had read the cancel (it answered a request sent after it): the turn was cancelled, its
    # end_turn fails PROMPT-23, and its late update PROMPT-26.
    pair = _answered_after_cancel(read_first=True)
    assert clauses(pair, A) == ["PROMPT-26"]
    assert failed(pair.oracle_findings, A) == ["PROMPT-23", "PROMPT-26"]


# -- session-modes.mdx: MODES-04 -----------------------------------------------------------------


def _modes(*ids: str) -> Dict[str, Any]:
    return {"availableModes": [{"id": i, "name": i.upper()} for i in ids], "currentModeId": ids[0]}


def _set_mode_after_load(read_first: bool) -> Watched:
    """A session created with mode "a", loaded again with only "b" (the load's answer states the
    modes anew); then the client sets "a", having read that answer (``read_first``) or not."""
    pair = Watched(lax=[C])
    pair.client_sends(req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPS,
                                            "clientInfo": {"name": "c", "version": "1"}}))
    pair.agent_sends(ok(0, {"protocolVersion": 1, "agentCapabilities": {"loadSession": True},
                            "authMethods": [], "agentInfo": {"name": "a", "version": "1"}}))
    pair.client_sends(req(1, "session/new", {"cwd": "/p", "mcpServers": []}))
    pair.agent_sends(ok(1, {"sessionId": "s1", "modes": _modes("a")}))
    pair.client_sends(req(2, "session/load", {"sessionId": "s1", "cwd": "/p", "mcpServers": []}))
    pair.agent_sends(ok(2, {"modes": _modes("b")}))
    if read_first:
        read_by_client(pair)
    assert not any(s.findings for s in pair.steps), [s.findings for s in pair.steps]
    mark(pair)
    pair.client_sends(req(3, "session/set_mode", {"sessionId": "s1", "modeId": "a"}))
    return pair


def test_MODES_04_a_mode_of_the_modes_the_client_may_still_go_by_is_no_MUST() -> None:
    # The set_mode was written against the modes of session/new, before the client read the
    # load's answer (it answered no request of the agent since): the two crossed on the wire.
    pair = _set_mode_after_load(read_first=False)
    assert clauses(pair, C) == ["spec-gap:config-crossing"]
    assert failed(pair.oracle_findings, C) == []


def test_MODES_04_a_mode_the_agent_withdrew_before_the_client_read_it() -> None:
    pair = _set_mode_after_load(read_first=True)
    assert clauses(pair, C) == ["MODES-04"]
    assert failed(pair.oracle_findings, C) == ["MODES-04"]


# -- session-setup.mdx, prompt-turn.mdx: a failed load (PROMPT-01, SETUP-15) ----------------------


def _after_failed_load(read_first: bool, method: str, params: Dict[str, Any]) -> Watched:
    """The client loads a session of an earlier connection and, while the load is in flight
    (spec-gap reopen-in-flight), sends a request of it; the agent answers the load -32002. The
    request is recorded after that answer: read by the client first (``read_first``) or not."""
    pair = Watched(lax=[C])
    setup(pair, agent_caps={"loadSession": True, "sessionCapabilities": {"close": {}}})
    pair.client_sends(req(2, "session/load", {"sessionId": "old", "cwd": "/p", "mcpServers": []}))
    pair.agent_sends(err(2, -32002, "no such session"))
    if read_first:
        read_by_client(pair)
    assert not any(s.findings for s in pair.steps), [s.findings for s in pair.steps]
    mark(pair)
    pair.client_sends(req(3, method, {"sessionId": "old", **params}))
    return pair


CROSSING_FAILURE = [("session/prompt", {"prompt": PROMPT}, "PROMPT-01"),
                    ("session/close", {}, "SETUP-15")]  # fmt: skip


def test_PROMPT_01_SETUP_15_a_request_that_crossed_its_sessions_failed_load_is_no_MUST() -> None:
    # Written while the load was in flight, before the client read that it failed: the session
    # was being set up (reopen-in-flight), and the agent answers -32002 all the same.
    for method, params, _ in CROSSING_FAILURE:
        pair = _after_failed_load(False, method, params)
        assert clauses(pair, C) == ["spec-gap:reopen-failed-crossing"], method
        assert failed(pair.oracle_findings, C) == []
        refusal = pair.steps[pair.mark_step].refusal  # type: ignore[attr-defined]
        assert refusal is not None and refusal.code == -32002


def test_PROMPT_01_SETUP_15_a_request_of_a_session_whose_load_failed_and_was_read() -> None:
    for method, params, clause in CROSSING_FAILURE:
        pair = _after_failed_load(True, method, params)
        assert clauses(pair, C) == [clause], method
        assert failed(pair.oracle_findings, C) == [clause]
