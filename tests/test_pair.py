"""The in-memory pair (tests/pair.py) passes a message through both sides' rules as the live
sides do: the sender stops what breaks its own MUST rule, the receiver refuses a request that
breaks one, and both states stay in step. A lax sender (a peer that is not acpref) sends it
anyway, so the receiver's side of a rule can be tested.

Spec: INIT-01 (a request before initialize), RPC-06 (every request is answered), SETUP-25 (an
absolute cwd).
"""

from __future__ import annotations

from acpref._core.state import Step as CoreStep
from pair import A, C, Pair, ok, req

INIT = req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {},
                             "clientInfo": {"name": "c", "version": "1"}})
INIT_OK = ok(0, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": [],
                 "agentInfo": {"name": "a", "version": "1"}})


def test_a_clean_handshake_finds_nothing_on_either_side() -> None:
    pair = Pair()
    steps = pair.exchange((C, INIT), (A, INIT_OK))
    assert all(s.sent and not s.findings for s in steps)
    assert pair.client.initialized and pair.agent.initialized
    assert pair.finish() == {C: [], A: []}


def test_INIT_01_the_sender_stops_a_request_before_initialize() -> None:
    pair = Pair()
    step = pair.client_sends(req(1, "session/new", {"cwd": "/p", "mcpServers": []}))
    assert step.stopped is not None and step.stopped.clause == "INIT-01"
    assert step.sent_findings[0].clause == "INIT-01" and step.sent_findings[0].blame is C
    assert step.received_findings == [] and pair.findings[A] == []
    assert not pair.client.outstanding[C]  # not recorded: it was never sent


def test_INIT_01_the_receiver_refuses_it_and_the_refusal_answers_the_request() -> None:
    # A client with no rules of its own (it records nothing): only the agent's rules judge.
    pair = Pair()
    pair.states[C].step = lambda *a, **k: CoreStep([])  # type: ignore[method-assign]
    step = pair.client_sends(req(1, "session/new", {"cwd": "/p", "mcpServers": []}))
    assert step.sent and step.refusal is not None and step.refusal.code == -32600
    assert [f.clause for f in step.received_findings] == ["INIT-01"]
    answer = pair.steps[-1]
    assert answer.sender is A and answer.message["error"]["code"] == -32600
    # spec RPC-06: the refused request was answered; nothing is left owed on the agent's side.
    assert pair.finish()[A] == []


def test_RPC_06_a_request_never_answered_is_found_at_the_end_on_both_sides() -> None:
    pair = Pair()
    pair.client_sends(INIT)
    ends = pair.finish()
    assert [f.clause for f in ends[C]] == ["RPC-06"] == [f.clause for f in ends[A]]


def test_SETUP_25_a_lax_sender_sends_what_acprefs_would_stop_and_the_receiver_refuses_it() -> None:
    relative = req(1, "session/new", {"cwd": "p", "mcpServers": []})
    strict = Pair().handshake()
    assert strict.check(C, relative)[0].index == 2  # its place on the wire, were it sent
    assert strict.client_sends(relative).stopped is not None and len(strict.wire) == 2
    lax = Pair(lax={C}).handshake()
    step = lax.client_sends(relative)
    assert step.sent and [f.clause for f in step.sent_findings] == ["SETUP-25"]
    assert [(f.clause, f.blame, f.index) for f in step.received_findings] == [("SETUP-25", C, 2)]
    assert step.refusal is not None and step.refusal.code == -32602
    assert [sender for sender, _ in lax.wire] == [C, A, C, A]  # the refusal answered it
    assert lax.finish() == {C: [], A: []}
