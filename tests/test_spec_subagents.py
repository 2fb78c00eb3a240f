"""Spec tests of subagent sessions (PROVISIONAL): one test per clause covered.

Spec: v1/subagents.md; clauses SUBAGENT-01 .. SUBAGENT-59, whose shapes come from the unstable
schema of 2026-11-02 (the feature was stabilized on 2026-11-20); the ``session`` tool-call content
comes from a draft page (spec-gap session-reference-content). The agent side is the echo agent
(``/subagent``) or a scripted agent that breaks the rules, in this process; the client side is the
reference client; rule cases go through the in-memory pair (tests/pair.py: both sides'
``ProtocolState``, no I/O) and the oracle, which grades each finding by the sentence it quotes
(decisions.md, provisional-features): the MUST rules fail a run. Clauses not covered:
spec_notes/subagents.md.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import attrs
import pytest

from acpref import codec
from acpref import schema as s
from acpref._core import Finding, Party, register
from acpref._shell.transport import FdStream
from acpref.agent import AgentSideConnection
from acpref.client import ClientSideConnection, ReferenceClient, SessionView
from acpref.echo import EchoAgent
from acpref.errors import LocalProtocolError
from acpref.oracle import validate

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import FULL_CAPS, TestClient, in_process  # noqa: E402
from agent_scripted import Scripted  # noqa: E402
from pair import Pair  # noqa: E402

pytestmark = pytest.mark.timeout(60)
WAIT = 10.0
SUB_CAPS = attrs.evolve(FULL_CAPS, subagents=s.SubagentCapabilities())
NO_CAPS = s.SubagentSessionCapabilities()  # {}: no mutation granted on the child


@pytest.fixture
def served() -> Iterator[Any]:
    made: List[TestClient] = []

    def factory(agent: Any = EchoAgent, caps: Any = SUB_CAPS) -> TestClient:
        client = in_process(agent, caps=caps)
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def pair() -> Iterator[Any]:
    made: List[Any] = []

    def factory() -> ClientSideConnection:
        a_in, c_out = os.pipe()
        c_in, a_out = os.pipe()
        side = AgentSideConnection(EchoAgent, FdStream(a_in, a_out, owns_fds=True)).start()
        conn = ClientSideConnection(ReferenceClient(), FdStream(c_in, c_out, owns_fds=True))
        made.append((conn, side))
        conn.initialize(timeout=WAIT)
        return conn

    yield factory
    for conn, side in made:
        conn.close()
        side.close()


def delegate(client: TestClient, cwd: Path, task: str = "find it") -> List[s.SessionNotification]:
    sid = client.new_session(str(cwd)).session_id
    client.wait_commands(sid)
    before = len(client.notifications)
    client.prompt(sid, f"/subagent {task}")
    return client.notifications[before:]


def kinds(notes: List[s.SessionNotification]) -> List[str]:
    return [n.update.session_update for n in notes]  # type: ignore[union-attr]


# -- Support and announcement ---------------------------------------------------------------------


def test_SUBAGENT_01_04_no_subagent_traffic_without_the_capability(
    served: Any, tmp_path: Path
) -> None:
    client = served(caps=FULL_CAPS)
    notes = delegate(client, tmp_path)
    assert kinds(notes) == ["agent_message_chunk"]  # spec SUBAGENT-04: delegated unseen
    assert client.findings == []


def test_SUBAGENT_01_02_agent_side_refuses_without_the_capability(
    served: Any, tmp_path: Path
) -> None:
    refused: List[str] = []

    def run(params: s.PromptRequest, turn: Any) -> Any:
        for update in (
            s.SubagentUpdate(session_id="sess_child"),
            s.ToolCall(
                tool_call_id="t",
                title="x",
                content=[s.SessionReference(session_id=params.session_id)],
            ),
        ):
            try:
                turn.update(update)
            except LocalProtocolError as exc:
                refused.append(exc.clause)
        return s.StopReason.END_TURN

    client = served(lambda c: Scripted(c, run), caps=FULL_CAPS)
    sid = client.new_session(str(tmp_path)).session_id
    client.prompt(sid, "go")
    assert refused == ["SUBAGENT-01", "SUBAGENT-02"]


def test_SUBAGENT_05_06_12_22_child_announced_first_running_then_idle(
    served: Any, tmp_path: Path
) -> None:
    client = served()
    notes = delegate(client, tmp_path)
    parent = notes[0].session_id
    first = notes[0].update
    assert isinstance(first, s.SubagentUpdate) and isinstance(first.state, s.RunningStateUpdate)
    child = first.session_id
    child_notes = [i for i, n in enumerate(notes) if n.session_id == child]
    assert child_notes and min(child_notes) > 0  # spec SUBAGENT-05: after the announcement
    last = [n.update for n in notes if isinstance(n.update, s.SubagentUpdate)][-1]
    assert isinstance(last.state, s.IdleStateUpdate) and last.state.stop_reason == "end_turn"
    assert all(n.session_id in (parent, child) for n in notes)
    assert client.findings == []


def test_SUBAGENT_05_unannounced_child_traffic_is_refused(served: Any, tmp_path: Path) -> None:
    refused: List[str] = []

    def run(params: s.PromptRequest, turn: Any) -> Any:
        try:
            turn.client.update("sess_unannounced", s.AgentMessageChunk(
                content=s.TextContent(text="x")))  # fmt: skip
        except LocalProtocolError as exc:
            refused.append(exc.clause)
        return s.StopReason.END_TURN

    client = served(lambda c: Scripted(c, run))
    sid = client.new_session(str(tmp_path)).session_id
    client.prompt(sid, "go")
    assert refused == ["SUBAGENT-05"]


def test_SUBAGENT_09_14_child_ids_are_fresh(served: Any, tmp_path: Path) -> None:
    client = served()
    children, parents = set(), set()
    for _ in range(3):
        notes = delegate(client, tmp_path)
        parents.add(notes[0].session_id)
        children.add(notes[0].update.session_id)  # type: ignore[union-attr]
    listed = {i.session_id for i in client.request("session/list", {}).sessions}
    assert len(children) == 3 and not children & (parents | listed)


def test_SUBAGENT_03_15_27_client_registers_and_patches_the_child(
    pair: Any, tmp_path: Path
) -> None:
    conn = pair()
    sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
    conn.prompt(sid, "/subagent look", timeout=WAIT)
    parent = conn.client.view(sid)  # type: ignore[attr-defined]
    (child,) = parent.subagents.children.values()
    # spec SUBAGENT-15: the second update (state only) kept the title and capabilities.
    assert child.title == "Echo helper" and child.capabilities == s.SubagentSessionCapabilities()
    assert isinstance(child.state, s.IdleStateUpdate) and child.state_confirmed
    assert not child.can_cancel  # spec SUBAGENT-18: {} grants no mutation
    # spec SUBAGENT-03: the child's own traffic is attributed to the child.
    child_view = conn.client.view(child.session_id)  # type: ignore[attr-defined]
    assert child_view.parent_id == sid
    assert [m.text for m in child_view.messages] == ["Working on: look"]


def test_SUBAGENT_15_26_null_clears_and_unknown_is_not_confirmed() -> None:
    view = SessionView("p")
    for wire in (
        {"sessionUpdate": "subagent_update", "sessionId": "c", "title": "T",
         "capabilities": {"cancel": {}}, "state": {"state": "running"}},
        {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "unknown"}},
    ):  # fmt: skip
        view.apply(codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification).update)
    child = view.subagents.children["c"]
    assert child.title == "T" and child.can_cancel and not child.state_confirmed
    clear = {"sessionUpdate": "subagent_update", "sessionId": "c", "capabilities": None,
             "title": None}  # fmt: skip
    view.apply(codec.decode({"sessionId": "p", "update": clear}, s.SessionNotification).update)
    assert child.title is None and not child.can_cancel


def test_SUBAGENT_59_unknown_state_kept_whole() -> None:
    wire = {"sessionUpdate": "subagent_update", "sessionId": "c",
            "state": {"state": "_paused", "why": "quota"}}  # fmt: skip
    update = codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification).update
    assert update.state == s.Unknown(raw={"state": "_paused", "why": "quota"})
    assert codec.encode(update, s.SessionUpdate) == wire
    view = SessionView("p")
    view.apply(update)
    assert not view.subagents.children["c"].state_confirmed


def test_SUBAGENT_57_58_session_message_upserts_and_chunks() -> None:
    view = SessionView("p")
    for wire in (
        {"sessionUpdate": "session_message_chunk", "messageId": "m",
         "content": {"type": "text", "text": "a"}},
        {"sessionUpdate": "session_message", "messageId": "m", "senderSessionId": "c"},
        {"sessionUpdate": "session_message_chunk", "messageId": "m",
         "content": {"type": "text", "text": "b"}},
    ):  # fmt: skip
        view.apply(codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification).update)
    message = view.session_messages.messages["m"]
    assert (message.sender_session_id, message.text) == ("c", "ab")
    for content, text in (([{"type": "text", "text": "z"}], "z"), ([], ""), (None, "")):
        wire = {"sessionUpdate": "session_message", "messageId": "m", "content": content}
        view.apply(codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification).update)
        assert message.text == text and message.sender_session_id == "c"


# -- Rules: the oracle ----------------------------------------------------------------------------


def prelude(caps: Any = None) -> List[Any]:
    caps = {"subagents": {}} if caps is None else caps
    messages = [
        ("client", {"id": 0, "method": "initialize", "params": {
            "protocolVersion": 1, "clientCapabilities": caps,
            "clientInfo": {"name": "t", "version": "1"}}}),
        ("agent", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {
            "loadSession": True, "sessionCapabilities": {"resume": {}, "close": {}}},
                                       "agentInfo": {"name": "a", "version": "1"}}}),
        ("client", {"id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}),
        ("agent", {"id": 1, "result": {"sessionId": "p"}}),
        ("client", {"id": 2, "method": "session/prompt", "params": {
            "sessionId": "p", "prompt": [{"type": "text", "text": "go"}]}}),
    ]  # fmt: skip
    return [(who, {"jsonrpc": "2.0", **m}) for who, m in messages]


def upd(sid: str, body: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": sid, "update": body}}  # fmt: skip


ANNOUNCE = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c"})


def state_after(*messages: Any, caps: Any = None, lax: Any = ()) -> Pair:
    """The in-memory pair after the prelude and ``messages``, which break nothing on either side."""
    return Pair(lax=lax).quietly([(Party(who), m) for who, m in prelude(caps) + list(messages)])


@pytest.mark.parametrize(
    ("before", "last", "clause", "blame"),
    [
        ([], upd("c", {"sessionUpdate": "agent_message_chunk",
                       "content": {"type": "text", "text": "x"}}), "SUBAGENT-05", "agent"),
        ([], upd("p", {"sessionUpdate": "session_message", "messageId": "m",
                       "recipientSessionId": "c"}), "SUBAGENT-05", "agent"),
        ([], upd("p", {"sessionUpdate": "subagent_update", "sessionId": "p"}),
         "SUBAGENT-09", "agent"),
        ([], upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c", "cwd": "rel"}),
         "SUBAGENT-16", "agent"),
        ([], upd("p", {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x",
                       "content": [{"type": "session", "sessionId": "nope"}]}),
         "SUBAGENT-53", "agent"),
        ([("agent", ANNOUNCE)], {"jsonrpc": "2.0", "id": 9, "method": "session/load",
          "params": {"sessionId": "c", "cwd": "/w", "mcpServers": []}}, "SUBAGENT-17", "client"),
        ([("agent", ANNOUNCE)], {"jsonrpc": "2.0", "id": 9, "method": "session/set_mode",
          "params": {"sessionId": "c", "modeId": "x"}}, "SUBAGENT-18", "client"),
        ([("agent", ANNOUNCE)], {"jsonrpc": "2.0", "method": "session/cancel",
          "params": {"sessionId": "c"}}, "SUBAGENT-18", "client"),
    ],
)  # fmt: skip
def test_SUBAGENT_05_09_16_17_18_53_rules(before: Any, last: Any, clause: str, blame: str) -> None:
    sender = Party(blame)  # each case blames the sender
    found = state_after(*before).check(sender, last)
    assert [(f.clause, f.blame.value) for f in found if f.clause == clause] == [(clause, blame)]
    assert all(by_its_sentence(f) and f.is_violation for f in found if f.clause == clause)
    # A MUST the sender breaks it does not send; one that is not acpref (lax) sends it, and
    # the receiver finds it.
    hit = next(f for f in found if f.clause == clause)
    step = state_after(*before).send(sender, last)
    assert clause in [f.clause for f in step.sent_findings]
    assert (step.stopped is not None) is hit.binding
    step = state_after(*before, lax={sender}).send(sender, last)
    assert [(f.clause, f.blame) for f in step.received_findings if f.clause == clause] == [
        (clause, sender)
    ]


def test_SUBAGENT_10_11_a_child_never_moves_to_another_parent() -> None:
    pair = state_after(("agent", ANNOUNCE))
    for state in (pair.agent, pair.client):  # a second parent, as both sides would know it
        state.sessions["q"] = attrs.evolve(state.sessions["p"], id="q")
    moved = upd("q", {"sessionUpdate": "subagent_update", "sessionId": "c"})
    assert [f.clause for f in pair.check(Party.AGENT, moved)] == ["SUBAGENT-10"]


def test_SUBAGENT_20_29_cancel_allowed_and_child_traffic_after_the_turn() -> None:
    cancellable = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c",
                            "capabilities": {"cancel": {}}})  # fmt: skip
    pair = state_after(
        ("agent", cancellable),
        ("agent", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
        # spec SUBAGENT-29: the child goes on after the parent's prompt response.
        ("agent", upd("c", {"sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": "still working"}})),
    )  # fmt: skip
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "c"}}
    assert pair.check(Party.CLIENT, cancel) == []


def test_SUBAGENT_01_an_unadvertised_subagent_update_fails_the_run() -> None:
    records = [{"from": who, "line": json.dumps(m)} for who, m in prelude({})]
    records.append({"from": "agent", "line": json.dumps(ANNOUNCE)})
    records.append({"from": "agent", "line": json.dumps(
        {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})})  # fmt: skip
    records.append({"from": "client", "event": "eof"})
    report = validate(records)
    assert [f.clause for f in report.violations] == ["SUBAGENT-01"], report.format_text()
    assert not report.ok


def test_SUBAGENT_54_a_reference_registers_nothing() -> None:
    client = ReferenceClient()
    client.on_session_open(_opened("p"))
    wire = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x",
            "content": [{"type": "session", "sessionId": "other"}]}  # fmt: skip
    client.session_update(codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification))
    assert client.session_ids == ["p"]  # no view for the referenced session
    (item,) = client.view("p").tool_calls["t"].content
    assert item == s.SessionReference(session_id="other")


def _opened(sid: str) -> Any:
    from acpref.client import OpenedSession

    return OpenedSession(session_id=sid, cwd="/w", additional_directories=(), how="new")


# -- Reconnection, errors, cancelling a child ------------------------------------------------------

ENDED = ("agent", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})
CANCELLABLE = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c",
                        "capabilities": {"cancel": {}}})  # fmt: skip
GRANDCHILD = upd("c", {"sessionUpdate": "subagent_update", "sessionId": "g", "capabilities": {}})


def reopen(method: str, request_id: int = 5) -> Any:
    params = {"sessionId": "p", "cwd": "/w", "mcpServers": []}
    return ("client", {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def answered(request_id: int = 5) -> Any:
    return ("agent", {"jsonrpc": "2.0", "id": request_id, "result": {}})


def chunk(sid: str) -> Dict[str, Any]:
    return upd(sid, {"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": "x"}})  # fmt: skip


def asks(sid: str, request_id: int = 50) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "session/request_permission",
            "params": {"sessionId": sid, "toolCall": {"toolCallId": "t"}, "options": [
                {"optionId": "ok", "name": "OK", "kind": "allow_once"}]}}  # fmt: skip


def by_its_sentence(f: Finding) -> bool:
    """A finding graded by the sentence it quotes; without one (SUBAGENT-21 is a definition),
    a warning on the unstable shape (provisional-features)."""
    quote = register.quote_of(f.clause)
    if quote is None:
        return f.level == "warning" and f.provisional
    return f.level == quote.level and not f.provisional


def clauses_of(pair: Pair, who: Party, message: Any) -> List[str]:
    found = pair.check(who, message)
    assert all(by_its_sentence(f) for f in found if "SUBAGENT" in f.clause)
    return [f.clause for f in found]


def test_SUBAGENT_24_an_error_stop_carries_the_error() -> None:
    pair = state_after(("agent", ANNOUNCE))
    stopped = {"state": "idle", "stopReason": "error"}
    bare = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c", "state": stopped})
    assert clauses_of(pair, Party.AGENT, bare) == ["SUBAGENT-24"]
    full = {**stopped, "error": {"code": -32603, "message": "the model failed"}}
    told = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c", "state": full})
    assert clauses_of(pair, Party.AGENT, told) == []


#: A request of the client and the agent's answer: the agent has read all the client sent
#: before it (``ConnectionFacts.read``), a session/load or session/resume included.
READ_IT = [
    ("client", {"jsonrpc": "2.0", "id": 6, "method": "_x/ping", "params": {}}),
    ("agent", {"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "no"}}),
]
USER = upd("p", {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "q"}})


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
def test_SUBAGENT_31_37_41_child_traffic_that_may_have_crossed_the_reopen_is_no_MUST(
    method: str,
) -> None:
    # The child's live chunk or request, written before the agent read the load or resume and
    # recorded after it (the two directions cross): no witness that the agent had read it.
    pair = state_after(("agent", ANNOUNCE), ENDED, reopen(method))
    gap = ["spec-gap:child-crossing-reopen"]
    assert clauses_of(pair, Party.AGENT, chunk("c")) == gap
    assert clauses_of(pair, Party.AGENT, asks("c")) == gap
    assert clauses_of(pair, Party.AGENT, GRANDCHILD) == gap


NEW_CHILD = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "k"})


@pytest.mark.parametrize(
    "child,announce", [("c", ANNOUNCE), ("k", NEW_CHILD)], ids=["again", "new"]
)
def test_SUBAGENT_37_a_request_of_a_child_announced_live_across_the_unread_load_is_no_MUST(
    child: str, announce: Any
) -> None:
    # The child's live announcement (again, or a new child's) and then its request, both written
    # before the agent read the load: the announcement is no witness that it had (it crossed
    # the load too), so the request is no replay's (SUBAGENT-37).
    pair = state_after(("agent", ANNOUNCE), ENDED, reopen("session/load"), ("agent", announce))
    assert clauses_of(pair, Party.AGENT, asks(child)) == ["spec-gap:child-crossing-reopen"]
    # Once the agent had read the load, the same request fails (SUBAGENT-37).
    pair.quietly([(Party(who), m) for who, m in READ_IT])
    assert clauses_of(pair, Party.AGENT, asks(child)) == ["SUBAGENT-37"]


@pytest.mark.parametrize("witness", [READ_IT, [("agent", USER)]], ids=["answer", "user-replay"])
def test_SUBAGENT_31_37_a_load_replays_the_announcement_first_and_reissues_no_request(
    witness: Any,
) -> None:
    # The agent had read the load: it answered a request sent after it, or replayed a user
    # message of the history.
    pair = state_after(("agent", ANNOUNCE), ENDED, reopen("session/load"), *witness)
    assert clauses_of(pair, Party.AGENT, chunk("c")) == ["SUBAGENT-31"]
    assert clauses_of(pair, Party.AGENT, asks("c")) == ["SUBAGENT-37"]
    for who, m in [("agent", ANNOUNCE), ("agent", chunk("c"))]:  # the replay, in order
        pair.quietly([(Party(who), m)])
    assert clauses_of(pair, Party.AGENT, asks("c")) == ["SUBAGENT-37"]  # still during the load


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
def test_SUBAGENT_38_40_41_continuing_children_are_announced_again_after_the_response(
    method: str,
) -> None:
    pair = state_after(("agent", CANCELLABLE), ENDED, reopen(method), answered())
    assert clauses_of(pair, Party.AGENT, chunk("c")) == ["SUBAGENT-41"]
    assert clauses_of(pair, Party.AGENT, asks("c")) == ["SUBAGENT-41"]
    message = upd("p", {"sessionUpdate": "session_message", "messageId": "m",
                        "recipientSessionId": "c"})  # fmt: skip
    assert clauses_of(pair, Party.AGENT, message) == ["SUBAGENT-38"]
    assert clauses_of(pair, Party.AGENT, ANNOUNCE) == ["SUBAGENT-40"]  # no capabilities
    pair.quietly([(Party.AGENT, CANCELLABLE)])  # reannounced whole
    for m in (chunk("c"), asks("c"), message):
        assert clauses_of(pair, Party.AGENT, m) == []


def test_SUBAGENT_41_nothing_of_a_child_before_the_resume_response() -> None:
    # spec SUBAGENT-41: a resume replays nothing, so the child's own traffic and requests
    # before its response are fresh: queued "until after the response and current
    # reannouncements". spec-gap resume-early-child-update: the parent's update of the child
    # then is no reannouncement (SUBAGENT-38: "After responding"), and no sentence forbids it.
    # acpref's agent does not send that update (it stops it); one that is not acpref does.
    pair = state_after(
        ("agent", CANCELLABLE), ENDED, reopen("session/resume"), *READ_IT, lax={Party.AGENT}
    )
    assert clauses_of(pair, Party.AGENT, chunk("c")) == ["SUBAGENT-41"]
    assert clauses_of(pair, Party.AGENT, asks("c")) == ["SUBAGENT-41"]
    assert clauses_of(pair, Party.AGENT, ANNOUNCE) == ["spec-gap:resume-early-child-update"]
    assert state_after(("agent", CANCELLABLE), ENDED, reopen("session/resume"), *READ_IT
                       ).agent_sends(ANNOUNCE).stopped is not None  # fmt: skip
    assert clauses_of(pair, Party.AGENT, GRANDCHILD) == ["SUBAGENT-41"]  # the child's traffic
    early = pair.agent_sends(CANCELLABLE)  # too early: sent, but it announces nothing again
    assert early.sent and early.clauses == ["spec-gap:resume-early-child-update"] * 2
    assert clauses_of(pair, Party.AGENT, chunk("c")) == ["SUBAGENT-41"]
    pair.quietly([(Party.AGENT, answered()[1])])
    assert clauses_of(pair, Party.AGENT, chunk("c")) == ["SUBAGENT-41"]  # still not announced
    pair.quietly([(Party.AGENT, CANCELLABLE)])
    assert clauses_of(pair, Party.AGENT, chunk("c")) == []


def test_SUBAGENT_38_39_grandchildren_after_their_parent_and_under_it() -> None:
    pair = state_after(
        ("agent", CANCELLABLE), ("agent", GRANDCHILD), ENDED, reopen("session/resume"), answered()
    )
    # spec SUBAGENT-38: the grandchild's announcement is traffic of its parent, not yet back.
    assert clauses_of(pair, Party.AGENT, GRANDCHILD) == ["SUBAGENT-38"]
    # spec SUBAGENT-39: nor does it come back under the root.
    moved = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "g", "capabilities": {}})
    assert clauses_of(pair, Party.AGENT, moved) == ["SUBAGENT-39"]
    pair.quietly([(Party.AGENT, CANCELLABLE)])
    pair.quietly([(Party.AGENT, GRANDCHILD)])


def permission_answer(outcome: Dict[str, Any], request_id: int = 50) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"outcome": outcome}}


SELECTED = {"outcome": "selected", "optionId": "ok"}
CANCEL_C = ("client", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "c"}})


#: An agent request after the ask and the client's answer: the client had read the ask
#: (stdio is ordered, ``ConnectionFacts.read``).
PROBED = [
    ("agent", {"jsonrpc": "2.0", "id": 51, "method": "_acpref/ping", "params": {}}),
    ("client", {"jsonrpc": "2.0", "id": 51, "error": {"code": -32601, "message": "unknown"}}),
]


def test_SUBAGENT_44_a_childs_permission_request_that_crossed_the_cancel_is_no_violation() -> None:
    # The child's request recorded before the client's cancel, but not provably read by it: it
    # may have crossed the cancel on the wire, so it was not pending (spec-gap
    # permission-crossing), and "selected" is no SUBAGENT-44 violation.
    pair = state_after(("agent", CANCELLABLE), ("agent", asks("c")), CANCEL_C)
    found = pair.check(Party.CLIENT, permission_answer(SELECTED))
    assert [(f.clause, f.level) for f in found] == [("spec-gap:permission-crossing", "spec-gap")]
    assert clauses_of(pair, Party.CLIENT, permission_answer({"outcome": "cancelled"})) == []
    pair = state_after(("agent", CANCELLABLE), ("agent", asks("c")), *PROBED, CANCEL_C)
    assert clauses_of(pair, Party.CLIENT, permission_answer(SELECTED)) == ["SUBAGENT-44"]


@pytest.mark.parametrize(
    "cancel",
    [
        CANCEL_C,
        ("client", {"jsonrpc": "2.0", "id": 7, "method": "session/close",
                    "params": {"sessionId": "p"}}),
    ],
)  # fmt: skip
def test_SUBAGENT_44_a_cancelled_childs_pending_permission_is_answered_cancelled(
    cancel: Any,
) -> None:
    # The probe answered before the cancel proves the client had read the ask: it was pending.
    before = [("agent", CANCELLABLE), ("agent", GRANDCHILD), ("agent", asks("g")), *PROBED, cancel]
    pair = state_after(*before)
    assert clauses_of(pair, Party.CLIENT, permission_answer(SELECTED)) == ["SUBAGENT-44"]
    assert clauses_of(pair, Party.CLIENT, permission_answer({"outcome": "cancelled"})) == []
    # Not cancelled: any answer is the user's.
    pair = state_after(("agent", CANCELLABLE), ("agent", asks("c")))
    assert clauses_of(pair, Party.CLIENT, permission_answer(SELECTED)) == []


def test_SUBAGENT_19_a_request_for_a_child_is_answered(tmp_path: Path) -> None:
    from acpref.client import Allow

    outcomes: List[Any] = []

    def run(params: s.PromptRequest, turn: Any) -> Any:
        child = "sess_child_asks"
        turn.update(s.SubagentUpdate(session_id=child, capabilities=NO_CAPS))
        turn.client.update(child, s.ToolCall(tool_call_id="t", title="Edit", kind=s.ToolKind.EDIT))
        option = s.PermissionOption(
            option_id="ok", name="OK", kind=s.PermissionOptionKind.ALLOW_ONCE
        )
        request = s.RequestPermissionRequest(
            session_id=child, tool_call=s.ToolCallUpdate(tool_call_id="t"), options=[option]
        )
        outcomes.append(turn.client.session_request_permission(request, timeout=WAIT).outcome)
        return s.StopReason.END_TURN

    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(
        lambda c: Scripted(c, run), FdStream(a_in, a_out, owns_fds=True)
    ).start()
    client = ReferenceClient(permissions=Allow())
    conn = ClientSideConnection(client, FdStream(c_in, c_out, owns_fds=True))
    try:
        conn.initialize(timeout=WAIT)  # the reference client advertises subagents
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        assert conn.prompt(sid, "go", timeout=WAIT).stop_reason == "end_turn"
        assert outcomes == [s.SelectedPermissionOutcome(option_id="ok")]
        assert [f.clause for f in conn.rules.findings + side.findings] == []
    finally:
        conn.close()
        side.close()


PING = ("client", {"jsonrpc": "2.0", "id": 90, "method": "_x/ping", "params": {}})
PONG = ("agent", {"jsonrpc": "2.0", "id": 90, "error": {"code": -32601, "message": "no"}})


def test_SUBAGENT_21_a_child_cancelled_after_the_agent_read_the_cancel_confirms_cancelled() -> None:
    idle = {"state": "idle", "stopReason": "end_turn"}
    ended = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c", "state": idle})
    confirmed = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c",
                          "state": {"state": "idle", "stopReason": "cancelled"}})  # fmt: skip
    # The agent answered a request sent after the cancel: it had read the cancel first.
    pair = state_after(("agent", CANCELLABLE), CANCEL_C, PING, PONG)
    assert clauses_of(pair, Party.AGENT, ended) == ["SUBAGENT-21"]
    assert clauses_of(pair, Party.AGENT, confirmed) == []
    # A request answered that was sent before the cancel proves nothing (a race).
    pair = state_after(("agent", CANCELLABLE), PING, CANCEL_C, PONG)
    assert clauses_of(pair, Party.AGENT, ended) == []
    # Asked the client, and the client answered after the cancel: the agent may have written
    # the idle pair before it read either (the two directions interleave): a race.
    answered = ("client", permission_answer({"outcome": "cancelled"}))
    pair = state_after(("agent", CANCELLABLE), ("agent", asks("c")), CANCEL_C, answered)
    assert clauses_of(pair, Party.AGENT, ended) == []
    # Nothing read after the cancel: its end may have crossed the cancel (a race).
    pair = state_after(("agent", CANCELLABLE), CANCEL_C)
    assert clauses_of(pair, Party.AGENT, ended) == []


def test_SUBAGENT_23_a_child_waiting_on_the_user_reports_requires_action() -> None:
    blocked = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c",
                        "state": {"state": "requires_action"}})  # fmt: skip
    running = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c",
                        "state": {"state": "running"}})  # fmt: skip
    answer = permission_answer(SELECTED)
    pair = state_after(("agent", CANCELLABLE), ("agent", running), ("agent", asks("c")))
    assert clauses_of(pair, Party.CLIENT, answer) == ["SUBAGENT-23"]
    # Reported while the request waited, or already the pair when it asked: fine.
    pair = state_after(
        ("agent", CANCELLABLE), ("agent", running), ("agent", asks("c")), ("agent", blocked)
    )
    assert clauses_of(pair, Party.CLIENT, answer) == []
    pair = state_after(("agent", CANCELLABLE), ("agent", blocked), ("agent", asks("c")))
    assert clauses_of(pair, Party.CLIENT, answer) == []
    # A child that reports no pair at all is not held to it.
    pair = state_after(("agent", CANCELLABLE), ("agent", asks("c")))
    assert clauses_of(pair, Party.CLIENT, answer) == []


def test_SUBAGENT_44_the_reference_client_cancels_a_grandchilds_pending_permission(
    tmp_path: Path,
) -> None:
    import threading

    from acpref.client import Ask

    asked = threading.Event()
    outcomes: List[Any] = []
    child, grandchild = "sess_child_c", "sess_child_g"

    def dialog(request: s.RequestPermissionRequest, cancelled: threading.Event) -> Any:
        asked.set()
        cancelled.wait(WAIT)  # the user does not answer: only the cancel ends it
        return "ok"

    def run(params: s.PromptRequest, turn: Any) -> Any:
        cancel = s.SessionCancelCapabilities()
        turn.update(s.SubagentUpdate(
            session_id=child, capabilities=s.SubagentSessionCapabilities(cancel=cancel)))
        turn.client.update(child, s.SubagentUpdate(
            session_id=grandchild, capabilities=s.SubagentSessionCapabilities(cancel=cancel)))
        option = s.PermissionOption(
            option_id="ok", name="OK", kind=s.PermissionOptionKind.ALLOW_ONCE
        )
        request = s.RequestPermissionRequest(
            session_id=grandchild, tool_call=s.ToolCallUpdate(tool_call_id="t"), options=[option]
        )
        outcomes.append(turn.client.session_request_permission(request, timeout=WAIT).outcome)
        return s.StopReason.END_TURN

    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(
        lambda c: Scripted(c, run), FdStream(a_in, a_out, owns_fds=True)
    ).start()
    conn = ClientSideConnection(
        ReferenceClient(permissions=Ask(dialog)), FdStream(c_in, c_out, owns_fds=True)
    )
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        turn = conn.prompt_async(sid, "go")
        assert asked.wait(WAIT)
        conn.cancel(child)  # the grandchild's work is cancelled with its parent's
        assert turn.result(WAIT).stop_reason == "end_turn"
        assert outcomes == [s.CancelledPermissionOutcome()]
        assert [f.clause for f in conn.rules.findings] == []
    finally:
        conn.close()
        side.close()


@pytest.mark.parametrize("new_work", ["child-reports-running", "parent-next-turn"])
def test_SUBAGENT_44_a_cancel_does_not_reach_a_childs_later_work(
    tmp_path: Path, new_work: str
) -> None:
    # After the cancel, the child's pending question was answered cancelled; a question of its
    # new work (it reports running again, or the parent's next turn) is the user's to answer.
    import threading

    from acpref.client import Ask

    asks_seen: List[Any] = []
    first_asked = threading.Event()
    outcomes: List[Any] = []
    child = "sess_child_later"
    cancel = s.SubagentSessionCapabilities(cancel=s.SessionCancelCapabilities())

    def dialog(request: s.RequestPermissionRequest, cancelled: threading.Event) -> Any:
        asks_seen.append(request)
        if len(asks_seen) == 1:
            first_asked.set()
            cancelled.wait(WAIT)  # the first question is ended by the cancel only
        return "ok"

    def ask(turn: Any) -> None:
        turn.update(s.SubagentUpdate(session_id=child, capabilities=cancel,
                                     state=s.RequiresActionStateUpdate()))  # fmt: skip
        option = s.PermissionOption(
            option_id="ok", name="OK", kind=s.PermissionOptionKind.ALLOW_ONCE
        )
        request = s.RequestPermissionRequest(
            session_id=child, tool_call=s.ToolCallUpdate(tool_call_id="t"), options=[option]
        )
        outcomes.append(turn.client.session_request_permission(request, timeout=WAIT).outcome)

    def run(params: s.PromptRequest, turn: Any) -> Any:
        if params.prompt[0].text == "first":  # type: ignore[union-attr]
            turn.update(s.SubagentUpdate(session_id=child, capabilities=cancel,
                                         state=s.RunningStateUpdate()))  # fmt: skip
            turn.client.update(child, s.ToolCall(tool_call_id="t", title="Edit"))
            ask(turn)  # cancelled
            if new_work == "parent-next-turn":
                return s.StopReason.CANCELLED
            turn.update(s.SubagentUpdate(session_id=child, capabilities=cancel,
                                         state=s.RunningStateUpdate()))  # fmt: skip
        ask(turn)
        return s.StopReason.END_TURN

    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(
        lambda c: Scripted(c, run), FdStream(a_in, a_out, owns_fds=True)
    ).start()
    conn = ClientSideConnection(
        ReferenceClient(permissions=Ask(dialog)), FdStream(c_in, c_out, owns_fds=True)
    )
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        turn = conn.prompt_async(sid, "first")
        assert first_asked.wait(WAIT)
        conn.cancel(child if new_work == "child-reports-running" else sid)
        turn.result(WAIT)
        if new_work == "parent-next-turn":
            conn.prompt(sid, "second", timeout=WAIT)
        ok = s.SelectedPermissionOutcome(option_id="ok")
        assert outcomes == [s.CancelledPermissionOutcome(), ok]
        assert [f.clause for f in conn.rules.findings + side.findings] == []
    finally:
        conn.close()
        side.close()


def test_SUBAGENT_35_36_28_replayed_or_stale_children_are_last_known_only(
    tmp_path: Path,
) -> None:
    # An agent that announces a cancellable child and never announces it again by itself.
    def run(params: s.PromptRequest, turn: Any) -> Any:
        cancel = s.SubagentSessionCapabilities(cancel=s.SessionCancelCapabilities())
        child = "sess_child_" + params.prompt[0].text  # type: ignore[union-attr]
        turn.update(s.SubagentUpdate(session_id=child, capabilities=cancel,
                                     state=s.RunningStateUpdate()))  # fmt: skip
        return s.StopReason.END_TURN

    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(
        lambda c: Scripted(c, run), FdStream(a_in, a_out, owns_fds=True)
    ).start()
    conn = ClientSideConnection(ReferenceClient(), FdStream(c_in, c_out, owns_fds=True))
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        conn.prompt(sid, "one", timeout=WAIT)
        (child,) = conn.client.view(sid).subagents.children.values()  # type: ignore[attr-defined]
        assert child.live and child.state_confirmed and child.can_cancel
        # spec SUBAGENT-35: a resume makes what was known of the child last known only.
        conn.resume_session(sid, str(tmp_path), timeout=WAIT)
        (child,) = conn.client.view(sid).subagents.children.values()  # type: ignore[attr-defined]
        assert not child.live and not child.state_confirmed and not child.can_cancel
        # A new announcement after it is live again.
        conn.prompt(sid, "two", timeout=WAIT)
        views = list(conn.client.view(sid).subagents.children.values())  # type: ignore[attr-defined]
        assert [c.live for c in views] == [False, True] and views[1].state_confirmed
        # spec SUBAGENT-28: once the connection is lost, nothing is confirmed live.
        conn.close()
        assert not any(c.state_confirmed or c.live for c in views)
    finally:
        conn.close()
        side.close()


def test_SUBAGENT_36_a_replayed_child_is_last_known_with_no_control() -> None:
    from acpref.client import OpenedSession

    client = ReferenceClient()
    client.on_session_open(OpenedSession(session_id="p", cwd="/w", additional_directories=(),
                                         how="load"))  # fmt: skip
    wire = {"sessionUpdate": "subagent_update", "sessionId": "c",
            "capabilities": {"cancel": {}}, "state": {"state": "running"}}  # fmt: skip
    replayed = codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification)
    client.session_update(replayed)
    client.on_session_open(OpenedSession(session_id="p", cwd="/w", additional_directories=(),
                                         how="load", response=s.LoadSessionResponse()))  # fmt: skip
    child = client.view("p").subagents.children["c"]
    assert isinstance(child.state, s.RunningStateUpdate)  # kept, as last known
    assert not child.live and not child.state_confirmed and not child.can_cancel
    client.session_update(replayed)  # announced again after the response: live
    assert child.live and child.state_confirmed and child.can_cancel


def test_SUBAGENT_36_a_replayed_cancel_capability_grants_no_cancel() -> None:
    book = SessionView("p").subagents
    caps = s.SubagentSessionCapabilities(cancel=s.SessionCancelCapabilities())
    book.replaying = True
    child = book.apply(s.SubagentUpdate(session_id="c", capabilities=caps,
                                        state=s.RunningStateUpdate()))  # fmt: skip
    assert child.capabilities == caps and not child.can_cancel and not child.state_confirmed
    book.replaying = False
    book.apply(s.SubagentUpdate(session_id="c", capabilities=caps))  # reannounced after it
    assert child.can_cancel


# -- The echo agent's children across a load or resume ---------------------------------------------


def _child_of(notes: List[s.SessionNotification]) -> str:
    return next(n.update.session_id for n in notes if isinstance(n.update, s.SubagentUpdate))


def _inbound_split(client: TestClient, request_id: Any) -> Any:
    """The session/update params received after our request ``request_id``: before its
    answer, and after it."""
    before: List[Dict[str, Any]] = []
    after: List[Dict[str, Any]] = []
    side = None
    with client._cond:
        wire = list(client.wire)
    for direction, message in wire:
        if direction == "out" and message.get("id") == request_id and "method" in message:
            side = before
        elif direction == "in" and message.get("id") == request_id and "method" not in message:
            side = after
        elif side is not None and direction == "in" and message.get("method") == "session/update":
            side.append(message["params"])
    return before, after


def _reannounced(client: TestClient, request_id: Any, child: str) -> Any:
    def found() -> Any:
        after = _inbound_split(client, request_id)[1]
        return [p["update"] for p in after if p["update"].get("sessionId") == child]

    return client.wait_for(found, what=f"the reannouncement of {child}")


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
def test_SUBAGENT_30_34_38_40_43_children_replayed_before_the_answer_then_announced_again(
    served: Any, tmp_path: Path, method: str
) -> None:
    client = served()
    notes = delegate(client, tmp_path)
    parent, child = notes[0].session_id, _child_of(notes)
    reopen = {"sessionId": parent, "cwd": str(tmp_path), "mcpServers": []}
    pending = client.request_async(method, reopen)
    pending.result(WAIT)
    (again,) = _reannounced(client, pending.id, child)
    before, after = _inbound_split(client, pending.id)
    replayed = [p for p in before if child in (p["sessionId"], p["update"].get("sessionId"))]
    if method == "session/load":
        # spec SUBAGENT-30, SUBAGENT-34: the child's announcement and its own traffic, all
        # before the answer, the announcement first (SUBAGENT-31).
        assert [p["update"]["sessionUpdate"] for p in replayed][:2] == [
            "subagent_update", "session_message"]  # fmt: skip
        assert [p["update"]["sessionUpdate"] for p in replayed if p["sessionId"] == child] == [
            "session_message", "agent_message_chunk"]  # fmt: skip
        refs = [p for p in before if p["update"].get("sessionUpdate") == "tool_call"]
        assert refs and refs[-1]["update"]["content"] == [{"type": "session", "sessionId": child}]
    else:
        assert replayed == []  # spec SETUP-12: a resume replays nothing
    # spec SUBAGENT-38, SUBAGENT-40, SUBAGENT-43: after the answer, on its parent, with its whole
    # capabilities and its current state.
    assert [p["sessionId"] for p in after if p["update"].get("sessionId") == child] == [parent]
    assert again["capabilities"] == {} and again["state"] == {
        "state": "idle", "stopReason": "end_turn"}  # fmt: skip
    assert client.findings == []


def test_SUBAGENT_32_33_42_a_child_not_restored_is_left_out_and_the_gap_is_told(
    tmp_path: Path,
) -> None:
    from agent_client import spawn_echo

    caps = attrs.evolve(
        SUB_CAPS, session=attrs.evolve(SUB_CAPS.session, notices=s.NoticeCapabilities())
    )
    state = str(tmp_path / "state")
    first = spawn_echo("--state-dir", state, caps=caps)
    try:
        notes = delegate(first, tmp_path)
        parent, child = notes[0].session_id, _child_of(notes)
    finally:
        first.close()
    # A new process: the child's history and runtime are gone, the parent's history is not.
    second = spawn_echo("--state-dir", state, caps=caps)
    try:
        reopen = {"sessionId": parent, "cwd": str(tmp_path), "mcpServers": []}
        pending = second.request_async("session/load", reopen)
        pending.result(WAIT)
        notice = second.wait_for(
            lambda: [u for u in second.updates_of(parent, s.Notice)], what="the gap notice"
        )
        before, after = _inbound_split(second, pending.id)
        # spec SUBAGENT-32: no reference to it, no traffic for it, no guessed parent.
        named = [(p["sessionId"], p["update"].get("sessionId"),
                  p["update"].get("recipientSessionId")) for p in before + after]  # fmt: skip
        assert not [n for n in named if child in n]
        calls = [p["update"] for p in before if p["update"]["sessionUpdate"] == "tool_call"]
        assert calls and calls[-1]["content"] == []
        # spec SUBAGENT-42: nothing says it failed, was cancelled or is orphaned.
        assert not [p for p in before + after if p["update"]["sessionUpdate"] == "subagent_update"]
        # spec SUBAGENT-33: the gap is made apparent, after the answer (a notice is no history).
        assert child in (notice[0].description or "")
        assert second.findings == []
    finally:
        second.close()


def test_SUBAGENT_30_the_reference_client_keeps_a_replayed_child_once(tmp_path: Path) -> None:
    import threading

    seen: List[Any] = []
    arrived = threading.Condition()

    def on_update(session_id: str, update: Any) -> None:
        with arrived:
            seen.append((session_id, update))
            arrived.notify_all()

    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(EchoAgent, FdStream(a_in, a_out, owns_fds=True)).start()
    client = ReferenceClient(on_update=on_update)
    conn = ClientSideConnection(client, FdStream(c_in, c_out, owns_fds=True))
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        conn.prompt(sid, "/subagent look", timeout=WAIT)
        (child,) = client.view(sid).subagents.children
        conn.load_session(sid, str(tmp_path), timeout=WAIT)
        with arrived:  # the announcement again, after the answer
            assert arrived.wait_for(lambda: len([u for i, u in seen if isinstance(
                u, s.SubagentUpdate) and u.session_id == child]) == 5, WAIT)  # fmt: skip
        # The replay rebuilt the child's view: its message once, not twice.
        assert [m.text for m in client.view(child).messages] == ["Working on: look"]
        (view,) = client.view(sid).subagents.children.values()
        assert view.live and view.state_confirmed  # announced again after the answer
        assert [f.clause for f in conn.rules.findings + side.findings] == []
    finally:
        conn.close()
        side.close()


# -- Requests of a child, against peers that do not cooperate --------------------------------------


def _rule_less_agent_pair(client: Any) -> Any:
    """The reference client joined to a scripted agent with no protocol rules (client_agent)."""
    from client_harness import Pair

    return Pair(client=client)


def _steps(pair: Any, sid: str, steps: List[Any]) -> List[Any]:
    from client_harness import run_steps

    return run_steps(pair.conn, pair.client, sid, steps)


def _announce_step(child: str) -> Dict[str, Any]:
    return {"notify": "session/update", "params": {"sessionId": "$sid", "update": {
        "sessionUpdate": "subagent_update", "sessionId": child, "capabilities": {}}}}  # fmt: skip


def _child_chunk_step(child: str, text: str) -> Dict[str, Any]:
    body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"notify": "session/update", "params": {"sessionId": child, "update": body}}


def test_SUBAGENT_07_08_early_child_traffic_is_reported_and_not_buffered(tmp_path: Path) -> None:
    pair = _rule_less_agent_pair(ReferenceClient())
    try:
        sid = pair.new_session(str(tmp_path))
        child = "sess_child_early"
        _steps(pair, sid, [_child_chunk_step(child, "too early"), _announce_step(child),
                           _child_chunk_step(child, "announced")])  # fmt: skip
        # spec SUBAGENT-08: the agent may not rely on a client buffering it: reported...
        early = [f for f in pair.conn.rules.findings if f.clause == "SUBAGENT-05"]
        assert len(early) == 1 and "sess_child_early" in early[0].message
        # ...and acpref's client does not (SUBAGENT-07 is a tolerance it does not take).
        assert [m.text for m in pair.client.view(child).messages] == ["announced"]
    finally:
        pair.close()
    # The agent side refuses to send it in the first place.
    refused: List[str] = []

    def run(params: s.PromptRequest, turn: Any) -> Any:
        try:
            turn.client.update(child, s.AgentMessageChunk(content=s.TextContent(text="x")))
        except LocalProtocolError as exc:
            refused.append(exc.clause)
        turn.update(s.SubagentUpdate(session_id=child, capabilities=NO_CAPS))
        return s.StopReason.END_TURN

    client = in_process(lambda c: Scripted(c, run), caps=SUB_CAPS)
    try:
        client.prompt(client.new_session(str(tmp_path)).session_id, "go")
        assert refused == ["SUBAGENT-05"]
    finally:
        client.close()


class _NoWrites(ReferenceClient):
    """A reference client that does not advertise fs.writeTextFile."""

    from acpref.client import Client as _Client

    fs_write_text_file = _Client.fs_write_text_file  # type: ignore[assignment]


def test_SUBAGENT_13_a_childs_requests_meet_the_parents_restrictions(tmp_path: Path) -> None:
    target = str(tmp_path / "f.txt")
    pair = _rule_less_agent_pair(_NoWrites())
    try:
        sid = pair.new_session(str(tmp_path))
        child = "sess_child_writer"
        write = {"call": "fs/write_text_file",
                 "params": {"sessionId": child, "path": target, "content": "x"}}  # fmt: skip
        results = _steps(pair, sid, [_announce_step(child), write])
        # spec SUBAGENT-13: fs.writeTextFile was not advertised: not for the child either.
        assert results[1]["error"]["code"] == -32601
        assert [f.clause for f in pair.conn.rules.findings] == ["FS-02"]
        assert not Path(target).exists()
    finally:
        pair.close()
    refused: List[str] = []

    def run(params: s.PromptRequest, turn: Any) -> Any:
        turn.update(s.SubagentUpdate(session_id=child, capabilities=NO_CAPS))
        try:
            turn.client.fs_write_text_file(
                s.WriteTextFileRequest(session_id=child, path=target, content="x"), timeout=WAIT
            )
        except LocalProtocolError as exc:
            refused.append(exc.clause)
        return s.StopReason.END_TURN

    caps = attrs.evolve(SUB_CAPS, fs=s.FileSystemCapabilities(read_text_file=True))
    client = in_process(lambda c: Scripted(c, run), caps=caps)
    try:
        client.prompt(client.new_session(str(tmp_path)).session_id, "go")
        assert refused == ["FS-02"] and not Path(target).exists()
    finally:
        client.close()


def test_SUBAGENT_48_a_childs_request_answered_twice_is_reported(tmp_path: Path) -> None:
    import queue
    import threading

    child = "sess_child_asks_once"
    answers: List[Any] = []

    def run(params: s.PromptRequest, turn: Any) -> Any:
        turn.update(s.SubagentUpdate(session_id=child, capabilities=NO_CAPS))
        option = s.PermissionOption(
            option_id="ok", name="OK", kind=s.PermissionOptionKind.ALLOW_ONCE
        )
        request = s.RequestPermissionRequest(
            session_id=child, tool_call=s.ToolCallUpdate(tool_call_id="t"), options=[option]
        )
        answers.append(turn.client.session_request_permission(request, timeout=WAIT).outcome)
        return s.StopReason.END_TURN

    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(
        lambda c: Scripted(c, run), FdStream(a_in, a_out, owns_fds=True)
    ).start()
    lines: "queue.Queue[Dict[str, Any]]" = queue.Queue()
    reader = os.fdopen(c_in, "rb")
    writer = os.fdopen(c_out, "wb", buffering=0)
    records: List[Dict[str, Any]] = []  # the transcript, for the oracle

    def read() -> None:
        for line in reader:
            records.append({"from": "agent", "line": line.decode().strip()})
            lines.put(json.loads(line))

    threading.Thread(target=read, daemon=True).start()

    def send(message: Dict[str, Any]) -> None:
        line = json.dumps({"jsonrpc": "2.0", **message})
        records.append({"from": "client", "line": line})
        writer.write(line.encode() + b"\n")

    def until(match: Any) -> Dict[str, Any]:
        while True:
            message = lines.get(timeout=WAIT)
            if match(message):
                return message

    try:
        send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1,
              "clientCapabilities": {"subagents": {}},
              "clientInfo": {"name": "raw", "version": "1"}}})  # fmt: skip
        until(lambda m: m.get("id") == 0)
        send({"id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}})
        sid = until(lambda m: m.get("id") == 1)["result"]["sessionId"]
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        send({"id": 2, "method": "session/prompt", "params": prompt})
        asked = until(lambda m: m.get("method") == "session/request_permission")
        assert asked["params"]["sessionId"] == child
        selected = {"outcome": {"outcome": "selected", "optionId": "ok"}}
        send({"id": asked["id"], "result": selected})
        until(lambda m: m.get("id") == 2)  # the turn ended on the first answer
        send({"id": asked["id"], "result": {"outcome": {"outcome": "cancelled"}}})
        send({"id": 3, "method": "session/close", "params": {"sessionId": sid}})
        until(lambda m: m.get("id") == 3)  # read after the second answer: it was seen
        # spec SUBAGENT-48: one response per request; the second is dropped by the agent side
        # (RPC-08) and reported by the oracle, which sees both directions.
        assert answers == [s.SelectedPermissionOutcome(option_id="ok")]
        assert side.findings == []
        report = validate(records + [{"from": "client", "event": "eof"}])
        assert [f.clause for f in report.findings] == ["RPC-06"] and not report.ok
    finally:
        writer.close()
        side.close()
        reader.close()


# -- The reference client cancelling a child's work ------------------------------------------------


def _scripted_pair(run: Any, client: Any) -> Any:
    a_in, c_out = os.pipe()
    c_in, a_out = os.pipe()
    side = AgentSideConnection(
        lambda c: Scripted(c, run), FdStream(a_in, a_out, owns_fds=True)
    ).start()
    conn = ClientSideConnection(client, FdStream(c_in, c_out, owns_fds=True))
    conn.initialize(timeout=WAIT)
    return conn, side


CANCEL_CAPS = s.SubagentSessionCapabilities(cancel=s.SessionCancelCapabilities())


def test_SUBAGENT_45_a_cancelled_childs_elicitation_is_answered_cancel(tmp_path: Path) -> None:
    import threading

    asked = threading.Event()
    actions: List[Any] = []
    child = "sess_child_asks_form"

    def form(request: s.CreateElicitationRequest, cancelled: threading.Event) -> Any:
        if not asked.is_set():
            asked.set()
            cancelled.wait(WAIT)  # the first dialog is dismissed by the cancel only
        return s.ElicitationAcceptAction(content={})  # what a careless dialog would return

    def run(params: s.PromptRequest, turn: Any) -> Any:
        turn.update(s.SubagentUpdate(session_id=child, capabilities=CANCEL_CAPS,
                                     state=s.RunningStateUpdate()))  # fmt: skip
        schema = codec.decode({"type": "object", "properties": {}}, s.ElicitationSchema)
        mode = s.ElicitationFormMode(
            requested_schema=schema, scope=s.ElicitationSessionScope(session_id=child)
        )
        actions.append(turn.elicit(s.CreateElicitationRequest(message="?", mode=mode)).action)
        return s.StopReason.END_TURN

    conn, side = _scripted_pair(run, ReferenceClient(elicit_form=form))
    try:
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        turn = conn.prompt_async(sid, "go")
        assert asked.wait(WAIT)
        conn.cancel(child)
        assert turn.result(WAIT).stop_reason == "end_turn"
        # spec SUBAGENT-45: dismissed, and answered with the cancel action.
        assert actions == [s.ElicitationCancelAction()]
        # spec-gap child-cancel-reach: new work of the child (running again) is asked anew.
        assert conn.prompt(sid, "again", timeout=WAIT).stop_reason == "end_turn"
        assert actions[1:] == [s.ElicitationAcceptAction(content={})]
        assert [f.clause for f in conn.rules.findings + side.findings] == []
    finally:
        conn.close()
        side.close()


def test_SUBAGENT_49_a_cancelled_childs_tool_calls_are_marked_and_still_updated(
    tmp_path: Path,
) -> None:
    import threading

    cancelled = threading.Event()
    child, grandchild = "sess_child_tools", "sess_child_tools_g"

    def run(params: s.PromptRequest, turn: Any) -> Any:
        turn.update(s.SubagentUpdate(session_id=child, capabilities=CANCEL_CAPS))
        turn.client.update(child, s.SubagentUpdate(session_id=grandchild, capabilities=CANCEL_CAPS))
        for sid in (child, grandchild):
            turn.client.update(sid, s.ToolCall(tool_call_id="t", title="Build",
                                               status=s.ToolCallStatus.IN_PROGRESS))  # fmt: skip
        assert cancelled.wait(WAIT)
        # spec SUBAGENT-49: a late update for a cancelled call is still the agent's to send.
        done = s.ToolCallUpdate(tool_call_id="t", status=s.ToolCallStatus.COMPLETED)
        turn.client.update(grandchild, done)
        return s.StopReason.END_TURN

    calls: List[str] = []
    arrived = threading.Condition()

    def on_update(session_id: str, update: Any) -> None:
        if isinstance(update, s.ToolCall):
            with arrived:
                calls.append(session_id)
                arrived.notify_all()

    client = ReferenceClient(on_update=on_update)
    conn, side = _scripted_pair(run, client)
    try:
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        turn = conn.prompt_async(sid, "go")
        # Once both tool calls are known, cancel the child (and so its child's work).
        with arrived:
            assert arrived.wait_for(lambda: len(calls) == 2, WAIT)
        views = (lambda: client.view(child), lambda: client.view(grandchild))
        conn.cancel(child)
        marked = [v().tool_calls["t"].cancelled for v in views]
        cancelled.set()
        assert turn.result(WAIT).stop_reason == "end_turn"
        assert marked == [True, True]
        late = client.view(grandchild).tool_calls["t"]
        assert late.status == "completed"  # applied, not dropped
        assert client.view(sid).tool_calls == {}  # the parent's own calls are not touched
    finally:
        cancelled.set()
        conn.close()
        side.close()


def test_SUBAGENT_46_a_childs_request_stays_with_the_child(tmp_path: Path) -> None:
    import threading

    from acpref.client import Ask

    asked: List[s.RequestPermissionRequest] = []
    waiting, decide, answered = threading.Event(), threading.Event(), threading.Event()
    outcomes: List[Any] = []
    child = "sess_child_keeps"

    def dialog(request: s.RequestPermissionRequest, cancelled: threading.Event) -> Any:
        asked.append(request)
        waiting.set()
        decide.wait(WAIT)  # the user answers after the parent's next turn
        return "ok"

    def ask_later(turn: Any) -> None:
        option = s.PermissionOption(
            option_id="ok", name="OK", kind=s.PermissionOptionKind.ALLOW_ONCE
        )
        request = s.RequestPermissionRequest(
            session_id=child, tool_call=s.ToolCallUpdate(tool_call_id="c1", title="Child edit"),
            options=[option],
        )
        outcomes.append(turn.client.session_request_permission(request, timeout=WAIT).outcome)
        answered.set()

    def run(params: s.PromptRequest, turn: Any) -> Any:
        if params.prompt[0].text == "first":  # type: ignore[union-attr]
            turn.update(s.SubagentUpdate(session_id=child, capabilities=NO_CAPS))
            # The child's work outlives the turn: it asks once the parent's turn has ended.
            turn.after_answer(lambda: threading.Thread(target=ask_later, args=(turn,)).start())
        return s.StopReason.END_TURN

    client = ReferenceClient(permissions=Ask(dialog))
    conn, side = _scripted_pair(run, client)
    try:
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        conn.prompt(sid, "first", timeout=WAIT)
        assert waiting.wait(WAIT)
        conn.prompt(sid, "second", timeout=WAIT)  # a later operation of the parent
        decide.set()
        assert answered.wait(WAIT)  # the answer reached the agent's thread
        # spec SUBAGENT-46: the request is the child's: shown under it, answered as asked, never
        # moved to the parent nor settled by the parent's later turn.
        assert [r.session_id for r in asked] == [child]
        assert outcomes == [s.SelectedPermissionOutcome(option_id="ok")]
        assert "c1" in client.view(child).tool_calls and "c1" not in client.view(sid).tool_calls
        assert [f.clause for f in conn.rules.findings + side.findings] == []
    finally:
        decide.set()
        conn.close()
        side.close()


def test_SUBAGENT_52_each_sessions_cost_is_shown_as_reported() -> None:
    from acpref._tools.terminal import Renderer

    client = ReferenceClient()
    client.on_session_open(_opened("p"))
    out: List[str] = []
    renderer = Renderer(out.append)
    for sid, body in (
        ("p", {"sessionUpdate": "subagent_update", "sessionId": "c"}),
        ("p", {"sessionUpdate": "usage_update", "used": 10, "size": 100,
               "cost": {"amount": 1.20, "currency": "USD"}}),
        ("c", {"sessionUpdate": "usage_update", "used": 5, "size": 100,
               "cost": {"amount": 0.30, "currency": "USD"}}),
    ):  # fmt: skip
        note = codec.decode({"sessionId": sid, "update": body}, s.SessionNotification)
        client.session_update(note)
        renderer.update(note.update)
    # spec SUBAGENT-52: 1.20 for the parent, 0.30 for the child; no total of 1.50, no 0.90.
    costs = [client.view(sid).usage.cost.amount for sid in ("p", "c")]  # type: ignore[union-attr]
    assert costs == [1.20, 0.30]
    text = "".join(out)
    assert "1.2 USD" in text and "0.3 USD" in text
    assert "1.5" not in text and "0.9" not in text


def test_SUBAGENT_55_a_completed_send_does_not_finish_the_child() -> None:
    view = SessionView("p")
    for wire in (
        {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "running"}},
        {"sessionUpdate": "tool_call", "toolCallId": "send", "title": "Send to helper",
         "status": "in_progress", "content": [{"type": "session", "sessionId": "c"}]},
        {"sessionUpdate": "tool_call_update", "toolCallId": "send", "status": "completed"},
    ):  # fmt: skip
        view.apply(codec.decode({"sessionId": "p", "update": wire}, s.SessionNotification).update)
    child = view.subagents.children["c"]
    # spec SUBAGENT-55: the send completed; the child is still running, as it last said.
    assert isinstance(child.state, s.RunningStateUpdate) and child.state_confirmed
    assert view.tool_calls["send"].status == "completed"


def test_SUBAGENT_56_references_are_shown_one_line_each_never_expanded() -> None:
    from acpref._tools.terminal import Renderer

    out: List[str] = []
    renderer = Renderer(out.append)
    # A cycle: the parent's call names the child, the child's call names the parent.
    for sid, other in (("p", "c"), ("c", "p")):
        wire = {"sessionUpdate": "tool_call", "toolCallId": f"t_{sid}", "title": "Messages",
                "content": [{"type": "session", "sessionId": other}]}  # fmt: skip
        note = codec.decode({"sessionId": sid, "update": wire}, s.SessionNotification)
        renderer.update(note.update)
    lines = "".join(out).splitlines()
    assert [line for line in lines if "[session" in line] == ["  [session c]", "  [session p]"]
    assert len(lines) == 4


def elicits(sid: str, request_id: int = 60) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create",
            "params": {"sessionId": sid, "mode": "form", "message": "?",
                       "requestedSchema": {"type": "object", "properties": {}}}}  # fmt: skip


def elicitation_answer(action: str, request_id: int = 60) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"action": action}}


def test_SUBAGENT_45_the_rules_report_a_cancelled_childs_elicitation_not_cancelled() -> None:
    caps = {"subagents": {}, "elicitation": {"form": {}}}
    # The probe answered before the cancel proves the client had read the elicitation.
    before = [("agent", CANCELLABLE), ("agent", GRANDCHILD), ("agent", elicits("g")), *PROBED]
    pair = state_after(*before, CANCEL_C, caps=caps)
    assert clauses_of(pair, Party.CLIENT, elicitation_answer("accept")) == ["SUBAGENT-45"]
    assert clauses_of(pair, Party.CLIENT, elicitation_answer("cancel")) == []
    # Without it, the elicitation may have crossed the cancel: not pending for the client
    # (spec-gap permission-crossing), and "accept" breaks no SHOULD.
    pair = state_after(*before[:-len(PROBED)], CANCEL_C, caps=caps)
    found = pair.check(Party.CLIENT, elicitation_answer("accept"))
    assert [(f.clause, f.level) for f in found] == [("spec-gap:permission-crossing", "spec-gap")]
    # Not cancelled: any answer is the user's.
    pair = state_after(("agent", CANCELLABLE), ("agent", elicits("c")), caps=caps)
    assert clauses_of(pair, Party.CLIENT, elicitation_answer("accept")) == []


REVOKE = upd("p", {"sessionUpdate": "subagent_update", "sessionId": "c", "capabilities": {}})
CANCEL_CHILD = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "c"}}


def test_SUBAGENT_18_a_cancel_that_crossed_the_withdrawal_of_cancel_is_no_MUST() -> None:
    # The client read the grant and wrote the cancel as the agent wrote the announcement that
    # withdraws it: recorded after it, the cancel may not have been written against it.
    pair = state_after(("agent", CANCELLABLE), ("agent", REVOKE))
    assert clauses_of(pair, Party.CLIENT, CANCEL_CHILD) == ["spec-gap:child-cancel-crossing"]
    # The client answered a request the agent sent after the withdrawal: it had read it.
    chosen = {"outcome": {"outcome": "selected", "optionId": "ok"}}
    answer = {"jsonrpc": "2.0", "id": 50, "result": chosen}
    for who, m in [("agent", asks("c")), ("client", answer)]:
        pair.quietly([(Party(who), m)])
    assert clauses_of(pair, Party.CLIENT, CANCEL_CHILD) == ["SUBAGENT-18"]
    # Granted again, then withdrawn again: the client may go by the new grant until it reads.
    pair.quietly([(Party.AGENT, CANCELLABLE), (Party.AGENT, REVOKE)])
    assert clauses_of(pair, Party.CLIENT, CANCEL_CHILD) == ["spec-gap:child-cancel-crossing"]


def test_SUBAGENT_18_a_child_that_never_granted_cancel_fails_at_MUST_without_a_witness() -> None:
    pair = state_after(("agent", ANNOUNCE), ("agent", REVOKE))
    assert clauses_of(pair, Party.CLIENT, CANCEL_CHILD) == ["SUBAGENT-18"]
