"""Clause tests for elicitation.mdx: one test (or more) per clause, named after it.

Clauses: ELICIT-01, 03, 04, 06 .. 11, 13, 15 .. 17, 21 .. 27, 29 .. 32, 35, 37. Each side is tried
live where acpref has it: the agent side (the echo agent, or a small ``Agent`` that runs one
function per prompt, served in this process over in-memory pipes and driven by
``acpref.testing.memory_pair``, whose transcript the oracle judges at the end), the reference
client (``client_harness.Pair``: a ``ClientSideConnection`` and a scripted agent over real pipes),
and ``acpref client`` in a pseudo-terminal (what the user is shown). The oracle
(``acpref.oracle.validate``) is given transcripts that break each rule. Every wait is bounded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from peers.client_harness import Pair, run_steps
from peers.spec_wire import WAIT, note, ok, records, req
from test_cli_client import Terminal, script

from acpref import codec
from acpref import schema as s
from acpref.agent import Agent, PromptTurn, SessionRegistry
from acpref.client import ReferenceClient
from acpref.echo import EchoAgent
from acpref.errors import LocalProtocolError, RpcError
from acpref.oracle import Report, validate
from acpref.testing import memory_pair

FORM_ONLY = {"elicitation": {"form": {}}}
URL_ONLY = {"elicitation": {"url": {}}}
BOTH = {"elicitation": {"form": {}, "url": {}}}
HEURISTIC = "spec-gap:elicitation-secret-heuristics"


# -- The agent side: an agent that runs one function per prompt -----------------------------------


class _Runs(Agent):
    """Each prompt runs ``run(turn)``; what it returns is said back (a refusal, an answer...)."""

    def __init__(self, client: Any, run: Callable[[PromptTurn], Any], sessions: Any = None) -> None:
        super().__init__(client, sessions)
        self.run = run

    def session_prompt(self, params: s.PromptRequest, turn: PromptTurn) -> Any:
        said = self.run(turn)
        if said is not None:
            turn.say(str(said))
        return s.StopReason.END_TURN


def _refused(call: Callable[[], Any]) -> str:
    """The clause a local refusal names ('' when the call went through)."""
    try:
        call()
    except LocalProtocolError as exc:
        return exc.clause
    return ""


class _Session:
    """A driver, initialized with ``caps``, and one session; ``close()`` gives the oracle's report."""

    def __init__(self, agent: Any, caps: Dict[str, Any], cwd: Path) -> None:
        self.driver = memory_pair(agent, timeout=WAIT)
        self.driver.initialize(client_capabilities=caps)
        self.sid = self.driver.new_session(str(cwd))

    def prompt(self, text: str = "go") -> str:
        turn = self.driver.prompt(self.sid, text)
        assert turn.stop_reason == "end_turn"
        return turn.text

    def elicitations(self) -> List[Any]:
        return [p for method, p in self.driver.agent_requests if method == "elicitation/create"]

    def inbound(self, method: str) -> List[Dict[str, Any]]:
        """Every message of ``method`` the agent sent, as on the wire."""
        received = [m for _, m in self.driver.sink.received()]
        return [m for m in received if isinstance(m, dict) and m.get("method") == method]

    def close(self) -> Report:
        return self.driver.close()


@pytest.fixture
def session(tmp_path: Path):
    """``session(agent, caps)``: a driven session, closed at the end of the test."""
    made: List[_Session] = []

    def start(agent: Any, caps: Dict[str, Any] = BOTH) -> _Session:
        made.append(_Session(agent, caps, tmp_path))
        return made[-1]

    yield start
    for one in made:
        one.driver.close()


def _runs(run: Callable[[PromptTurn], Any]) -> Callable[[Any], Agent]:
    return lambda client: _Runs(client, run)


def _echo(client: Any) -> Agent:
    return EchoAgent(client)


def _form(**props: Any) -> s.ElicitationSchema:
    return codec.decode({"type": "object", "properties": props}, s.ElicitationSchema)


def _warnings(report: Report, clause: str) -> List[str]:
    return [f.message for f in report.warnings + report.gaps if f.clause == clause]


# -- Transcripts for the oracle -------------------------------------------------------------------


def _started(caps: Dict[str, Any]) -> List[Any]:
    """initialize with ``caps``, session/new, and a prompt (id 2) left in flight."""
    init = {
        "protocolVersion": 1,
        "clientCapabilities": caps,
        "clientInfo": {"name": "c", "version": "1"},
    }
    answer = {
        "protocolVersion": 1,
        "agentCapabilities": {},
        "agentInfo": {"name": "a", "version": "1"},
    }
    prompt = {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]}
    return [
        ("client", req(0, "initialize", init)),
        ("agent", ok(0, {**answer, "authMethods": []})),
        ("client", req(1, "session/new", {"cwd": "/work", "mcpServers": []})),
        ("agent", ok(1, {"sessionId": "s1"})),
        ("client", req(2, "session/prompt", prompt)),
    ]


def _judge(caps: Dict[str, Any], *messages: Any) -> Report:
    """The oracle's report of a session where the agent's turn (prompt 2) holds ``messages``."""
    end = ("agent", ok(2, {"stopReason": "end_turn"}))
    return validate(records(*_started(caps), *messages, end))


def _form_request(i: Any, **params: Any) -> Dict[str, Any]:
    body = {"sessionId": "s1", "mode": "form", "message": "Tell me", "requestedSchema": {}}
    return req(i, "elicitation/create", {**body, **params})


def _url_request(i: Any, **params: Any) -> Dict[str, Any]:
    body = {
        "sessionId": "s1",
        "mode": "url",
        "message": "Open it",
        "elicitationId": "e1",
        "url": "https://example.com/consent",
    }
    return req(i, "elicitation/create", {**body, **params})


# -- Checking support -----------------------------------------------------------------------------


def test_ELICIT_06_unadvertised_mode_refused_before_sending(session) -> None:
    refusals: List[str] = []

    def run(turn: PromptTurn) -> None:
        refusals.append(
            _refused(lambda: turn.elicit_url("Open", "https://example.com/x", elicitation_id="e1"))
        )

    one = session(_runs(run), FORM_ONLY)
    one.prompt()
    assert refusals == ["ELICIT-06"]
    assert one.elicitations() == []  # nothing reached the client
    assert one.close().ok


def test_ELICIT_06_oracle_reports_an_unadvertised_mode() -> None:
    report = _judge(FORM_ONLY, ("agent", _url_request(9)), ("client", ok(9, {"action": "cancel"})))
    assert [f.clause for f in report.blamed("agent")] == ["ELICIT-06"]
    assert (
        "ELICIT-06"
        not in _judge(
            BOTH, ("agent", _url_request(9)), ("client", ok(9, {"action": "cancel"}))
        ).clauses()
    )


@pytest.mark.parametrize(
    "command, mode", [("/form", "form elicitation"), ("/url", "URL elicitation")]
)
def test_ELICIT_07_echo_falls_back_to_saying_what_is_missing(
    session, command: str, mode: str
) -> None:
    one = session(_echo, {})
    text = one.prompt(command)
    assert f"did not advertise {mode}" in text and "Nothing was sent" in text
    assert one.elicitations() == []
    assert one.close().ok


# -- Creating an elicitation ----------------------------------------------------------------------


def test_ELICIT_08_a_request_without_mode_is_reported() -> None:
    no_mode = req(
        9, "elicitation/create", {"sessionId": "s1", "message": "Tell me", "requestedSchema": {}}
    )
    report = _judge(FORM_ONLY, ("agent", no_mode), ("client", ok(9, {"action": "cancel"})))
    assert "ELICIT-08" in [f.clause for f in report.violations]
    # Live: a request without a mode cannot even be built (there is no default mode).
    with pytest.raises(TypeError):
        s.CreateElicitationRequest(message="Tell me")  # type: ignore[call-arg]
    with pytest.raises(codec.DecodeError):
        codec.decode({"sessionId": "s1", "message": "Tell me"}, s.CreateElicitationRequest)


def test_ELICIT_08_the_agent_side_always_names_the_mode(session) -> None:
    def run(turn: PromptTurn) -> None:
        turn.elicit_form("Tell me", _form(name={"type": "string"}))
        turn.elicit_url("Open", "https://example.com/x", elicitation_id="e1")

    one = session(_runs(run), BOTH)
    one.prompt()
    assert [m["params"]["mode"] for m in one.inbound("elicitation/create")] == ["form", "url"]
    assert all(m["params"]["message"] for m in one.inbound("elicitation/create"))
    assert one.close().ok


def test_ELICIT_09_request_scope_names_a_request_in_flight(session) -> None:
    def run(turn: PromptTurn) -> str:
        # A request-scoped elicitation names a client request in flight: this very prompt.
        live = s.ElicitationRequestScope(request_id=turn.request_id)
        mode = s.ElicitationFormMode(requested_schema=_form(), scope=live)
        turn.elicit(s.CreateElicitationRequest(message="Outside a session", mode=mode))
        stale = s.ElicitationRequestScope(request_id=424242)
        mode = s.ElicitationFormMode(requested_schema=_form(), scope=stale)
        return _refused(lambda: turn.elicit(s.CreateElicitationRequest(message="?", mode=mode)))

    one = session(_runs(run), FORM_ONLY)
    assert one.prompt() == "ELICIT-09"  # the stale request id was refused, not sent
    (params,) = [m["params"] for m in one.inbound("elicitation/create")]
    assert "requestId" in params and "sessionId" not in params
    assert one.close().ok


def test_ELICIT_09_form_from_a_turn_is_scoped_to_its_session(session) -> None:
    one = session(_runs(lambda turn: turn.elicit_form("Tell me", _form())), FORM_ONLY)
    one.prompt()
    (params,) = [m["params"] for m in one.inbound("elicitation/create")]
    assert params["sessionId"] == one.sid and "requestId" not in params
    assert one.close().ok


def test_ELICIT_09_oracle_reports_a_bad_scope() -> None:
    cancel = ("client", ok(9, {"action": "cancel"}))
    assert (
        "ELICIT-09"
        in _judge(FORM_ONLY, ("agent", _form_request(9, sessionId="zz")), cancel).clauses()
    )
    stale = {"requestId": 77, "mode": "form", "message": "Tell me", "requestedSchema": {}}
    assert (
        "ELICIT-09"
        in _judge(FORM_ONLY, ("agent", req(9, "elicitation/create", stale)), cancel).clauses()
    )
    in_flight = {**stale, "requestId": 2}  # the prompt, still running
    assert _judge(FORM_ONLY, ("agent", req(9, "elicitation/create", in_flight)), cancel).ok


def test_ELICIT_10_elicitations_are_bound_to_their_connection(session) -> None:
    # One agent program serving two connections (one session registry): an elicitation asked in
    # a turn of connection A reaches A only, and its id means nothing on connection B.
    registry = SessionRegistry()
    asked: List[str] = []

    def ask(turn: PromptTurn) -> str:
        answer = turn.elicit_url("Open", "https://example.com/a", elicitation_id="shared-id")
        asked.append(type(answer.action).__name__)
        return "asked"

    def complete_elsewhere(turn: PromptTurn) -> str:
        return _refused(lambda: turn.complete_elicitation("shared-id"))

    a = session(lambda c: _Runs(c, ask, registry), URL_ONLY)
    a.driver.elicitation = lambda p: s.CreateElicitationResponse(action=s.ElicitationAcceptAction())
    b = session(lambda c: _Runs(c, complete_elsewhere, registry), URL_ONLY)
    assert a.prompt() == "asked" and asked == ["ElicitationAcceptAction"]
    assert b.elicitations() == []  # B never saw A's elicitation
    # spec ELICIT-27: B may not be told A's elicitation completed: refused, nothing sent.
    assert b.prompt() == "ELICIT-27"
    assert b.inbound("elicitation/complete") == []
    assert a.close().ok and b.close().ok


def test_ELICIT_11_nested_form_fields_refused_and_reported(session) -> None:
    nested = {"type": "object", "properties": {"city": {"type": "string"}}}

    def run(turn: PromptTurn) -> str:
        return _refused(lambda: turn.elicit_form("Where?", _form(address=nested)))

    one = session(_runs(run), FORM_ONLY)
    assert one.prompt() == "ELICIT-11"
    assert one.elicitations() == []
    assert one.close().ok
    report = _judge(
        FORM_ONLY,
        (
            "agent",
            _form_request(9, requestedSchema={"type": "object", "properties": {"a": nested}}),
        ),
        ("client", ok(9, {"action": "cancel"})),
    )
    assert "ELICIT-11" in [f.clause for f in report.violations]


# -- Form mode ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, said",
    [
        ({"name": "Ada", "echoes": 2}, "Hello Ada! Hello Ada!"),
        ({"name": "", "echoes": 2}, "name needs at least 1 characters"),
        ({"name": "Ada", "echoes": 9}, "echoes must be at most 5"),
        ({"name": "Ada", "colour": "mauve"}, "colour must be one of red, green, blue"),
        ({"echoes": 1}, "name is required"),
    ],
)
def test_ELICIT_13_echo_validates_the_answers_again(
    session, content: Dict[str, Any], said: str
) -> None:
    one = session(_echo, FORM_ONLY)
    # A client that skips its own check (ELICIT-12): the agent checks again.
    one.driver.elicitation = lambda p: {"action": "accept", "content": content}
    text = one.prompt("/form")
    assert said in text
    if "Hello" not in said:
        assert "not using them" in text and "Hello" not in text
    one.close()


def test_ELICIT_15_secret_fields_are_flagged_as_a_heuristic_warning(session) -> None:
    def run(turn: PromptTurn) -> None:
        turn.elicit_form("Log in", _form(user={"type": "string"}, password={"type": "string"}))

    one = session(_runs(run), FORM_ONLY)
    one.prompt()
    assert len(one.elicitations()) == 1  # only a warning: the request was sent
    report = one.close()
    assert report.ok
    assert _warnings(report, HEURISTIC) == [
        "ELICIT-15: form field 'password' looks like a secret or credential"
    ]


def test_ELICIT_15_32_echo_form_asks_nothing_secret_and_links_nothing(session) -> None:
    # spec ELICIT-32: no finding at all, so no link in the echo agent's form either.
    one = session(_echo, FORM_ONLY)
    one.driver.elicitation = lambda p: s.CreateElicitationResponse(
        action=s.ElicitationCancelAction()
    )
    one.prompt("/form")
    assert len(one.elicitations()) == 1
    report = one.close()
    assert report.findings == []


def test_ELICIT_15_oracle_flags_secret_names_by_name_and_title() -> None:
    schema = {
        "type": "object",
        "properties": {
            "apiKey": {"type": "string"},
            "code": {"type": "string", "title": "Recovery code"},
            "tokenBudget": {"type": "integer"},  # not a secret
            "email": {"type": "string", "format": "email"},  # profile data is allowed
        },
    }
    report = _judge(
        FORM_ONLY,
        ("agent", _form_request(9, requestedSchema=schema)),
        ("client", ok(9, {"action": "decline"})),
    )
    assert report.ok
    assert sorted(_warnings(report, HEURISTIC)) == [
        "ELICIT-15: form field 'apiKey' looks like a secret or credential",
        "ELICIT-15: form field 'code' looks like a secret or credential",
    ]


def test_ELICIT_16_echo_never_falls_back_to_a_form_for_a_url(session) -> None:
    one = session(_echo, FORM_ONLY)
    text = one.prompt("/url")
    assert "did not advertise URL elicitation" in text
    assert one.elicitations() == []  # no form instead
    assert one.close().ok


# -- URL mode -------------------------------------------------------------------------------------


def test_ELICIT_17_url_mode_carries_an_id_and_a_uri(session) -> None:
    def run(turn: PromptTurn) -> str:
        return _refused(lambda: turn.elicit_url("Open", "not a uri", elicitation_id="e1"))

    one = session(_runs(run), URL_ONLY)
    assert one.prompt() == "ELICIT-17"
    assert one.elicitations() == []
    assert one.close().ok
    cancel = ("client", ok(9, {"action": "cancel"}))
    assert "ELICIT-17" in _judge(URL_ONLY, ("agent", _url_request(9, url="nope")), cancel).clauses()
    no_id = _url_request(9)
    del no_id["params"]["elicitationId"]
    assert not _judge(URL_ONLY, ("agent", no_id), cancel).ok  # the request does not decode


# -- Responses ------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_ELICIT_21_content_with_decline_or_cancel_is_ignored(session, action: str) -> None:
    one = session(_echo, FORM_ONLY)
    one.driver.elicitation = lambda p: {"action": action, "content": {"name": "Eve"}}
    text = one.prompt("/form")
    assert ("declined" if action == "decline" else "dismissed") in text and "Eve" not in text
    report = one.close()
    assert report.findings == []  # not an unknown key (EXT-04): the spec says to ignore it


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("content", [{"name": "Eve"}, None, "junk"])
def test_ELICIT_21_codec_drops_content_of_decline_and_cancel(strict: bool, content: Any) -> None:
    for action, cls in (
        ("decline", s.ElicitationDeclineAction),
        ("cancel", s.ElicitationCancelAction),
    ):
        decoded = codec.decode(
            {"action": action, "content": content}, s.CreateElicitationResponse, strict=strict
        )
        assert decoded.action == cls()
        assert codec.encode(decoded) == {"action": action}
    if strict:  # other unknown keys are still reported
        with pytest.raises(codec.DecodeError):
            codec.decode(
                {"action": "decline", "other": 1}, s.CreateElicitationResponse, strict=True
            )


def test_ELICIT_21_oracle_accepts_decline_with_content_and_null_content() -> None:
    for answer in (
        {"action": "decline", "content": {"a": 1}},
        {"action": "cancel", "content": None},
        {"action": "accept", "content": None},
    ):
        report = _judge(FORM_ONLY, ("agent", _form_request(9)), ("client", ok(9, answer)))
        assert report.findings == [], answer


@pytest.mark.parametrize("answer", [{"action": "accept"}, {"action": "accept", "content": None}])
def test_ELICIT_21_omitted_and_null_content_read_the_same(session, answer: Dict[str, Any]) -> None:
    one = session(_echo, FORM_ONLY)
    one.driver.elicitation = lambda p: answer
    assert "name is required" in one.prompt("/form")
    assert one.close().ok


def test_ELICIT_23_echo_presumes_nothing(session) -> None:
    one = session(_echo, FORM_ONLY)
    one.driver.elicitation = lambda p: s.CreateElicitationResponse(
        action=s.ElicitationDeclineAction()
    )
    assert "declined" in one.prompt("/form")
    one.driver.elicitation = lambda p: s.CreateElicitationResponse(
        action=s.ElicitationCancelAction()
    )
    assert "dismissed" in one.prompt("/form")

    def fail(params: Any) -> Any:
        raise RpcError(-32603, "the dialog crashed")

    one.driver.elicitation = fail
    # A failed elicitation fails the operation that needed it: the prompt answers an error.
    with pytest.raises(RpcError):
        one.driver.prompt(one.sid, "/form")
    assert one.close().ok


# -- URL completion -------------------------------------------------------------------------------


def test_ELICIT_24_url_ids_unique_while_outstanding(session) -> None:
    def run(turn: PromptTurn) -> str:
        turn.elicit_url(
            "Open", "https://example.com/a", elicitation_id="e1"
        )  # accepted: outstanding
        again = _refused(
            lambda: turn.elicit_url("Open", "https://example.com/b", elicitation_id="e1")
        )
        turn.complete_elicitation("e1")  # no longer outstanding: the id may be used again
        reused = _refused(
            lambda: turn.elicit_url("Open", "https://example.com/c", elicitation_id="e1")
        )
        return f"{again}|{reused}"

    one = session(_runs(run), URL_ONLY)
    one.driver.elicitation = lambda p: s.CreateElicitationResponse(
        action=s.ElicitationAcceptAction()
    )
    assert one.prompt() == "ELICIT-24|"
    assert len(one.elicitations()) == 2
    assert one.close().ok
    accept = ok(9, {"action": "accept"})
    report = _judge(
        URL_ONLY,
        ("agent", _url_request(9)),
        ("client", accept),
        ("agent", _url_request(10)),
        ("client", ok(10, {"action": "accept"})),
    )
    assert "ELICIT-24" in [f.clause for f in report.violations]


def test_ELICIT_24_26_echo_urls_have_fresh_ids_and_complete(session) -> None:
    # spec ELICIT-26: each accepted URL elicitation is completed, with its own id.
    one = session(_echo, URL_ONLY)
    one.driver.elicitation = lambda p: s.CreateElicitationResponse(
        action=s.ElicitationAcceptAction()
    )
    one.prompt("/url")
    one.prompt("/url")
    ids = [m["params"]["elicitationId"] for m in one.inbound("elicitation/create")]
    completed = [m["params"]["elicitationId"] for m in one.inbound("elicitation/complete")]
    assert len(set(ids)) == 2 and completed == ids
    assert one.close().findings == []


def test_ELICIT_26_no_completion_after_a_decline(session) -> None:
    one = session(_echo, URL_ONLY)
    one.driver.elicitation = lambda p: s.CreateElicitationResponse(
        action=s.ElicitationDeclineAction()
    )
    assert "declined" in one.prompt("/url")
    assert one.inbound("elicitation/complete") == []
    assert one.close().ok


def test_ELICIT_25_reference_client_keeps_ids_opaque(tmp_path: Path) -> None:
    completed: List[str] = []
    pair = Pair(
        ReferenceClient(
            elicit_url=lambda r, c: s.ElicitationAcceptAction(),
            on_elicitation_complete=completed.append,
        )
    )
    try:
        sid = pair.new_session(str(tmp_path))
        odd = " ../É?#%00 {x} " + "z" * 300  # any string, compared whole, never parsed
        url = {
            "message": "Open",
            "mode": "url",
            "sessionId": "$sid",
            "elicitationId": odd,
            "url": "https://x.test/",
        }
        run_steps(
            pair.conn,
            pair.client,
            sid,
            [
                {"call": "elicitation/create", "params": url},
                {"notify": "elicitation/complete", "params": {"elicitationId": odd.strip()}},
                {"notify": "elicitation/complete", "params": {"elicitationId": odd.upper()}},
                {"notify": "elicitation/complete", "params": {"elicitationId": odd}},
            ],
        )
        assert completed == [odd]
    finally:
        pair.close()


def test_ELICIT_27_completion_only_for_an_id_sent_on_this_connection(session) -> None:
    one = session(
        _runs(lambda turn: _refused(lambda: turn.complete_elicitation("never-sent"))), URL_ONLY
    )
    assert one.prompt() == "ELICIT-27"
    assert one.inbound("elicitation/complete") == []
    assert one.close().ok
    report = _judge(URL_ONLY, ("agent", note("elicitation/complete", {"elicitationId": "zz"})))
    assert [f.clause for f in report.violations] == ["ELICIT-27"]
    known = _judge(
        URL_ONLY,
        ("agent", _url_request(9)),
        ("client", ok(9, {"action": "accept"})),
        ("agent", note("elicitation/complete", {"elicitationId": "e1"})),
    )
    assert known.findings == []
    # The sentence asks for the original id, sent to this client: a declined elicitation's id,
    # or one completed before, is still that (the client ignores them, ELICIT-28).
    again = _judge(
        URL_ONLY,
        ("agent", _url_request(9)),
        ("client", ok(9, {"action": "decline"})),
        ("agent", note("elicitation/complete", {"elicitationId": "e1"})),
        ("agent", note("elicitation/complete", {"elicitationId": "e1"})),
    )
    assert again.findings == []


def test_ELICIT_29_no_elicitation_at_all_is_still_invalid_params(tmp_path: Path) -> None:
    # spec-gap elicitation-mode-error: -32602 (ELICIT-29), not RPC-12's -32601, even for a client
    # that advertised no elicitation.
    pair = Pair(ReferenceClient())
    try:
        sid = pair.new_session(str(tmp_path))
        form = {"message": "?", "mode": "form", "sessionId": "$sid", "requestedSchema": {}}
        (answer,) = run_steps(
            pair.conn, pair.client, sid, [{"call": "elicitation/create", "params": form}]
        )
        assert answer["error"]["code"] == -32602
    finally:
        pair.close()
    wrong = (
        "client",
        {"jsonrpc": "2.0", "id": 9, "error": {"code": -32601, "message": "Method not found"}},
    )
    assert [f.clause for f in _judge({}, ("agent", _form_request(9)), wrong).blamed("client")] == [
        "ELICIT-29"
    ]
    right = ("client", {"jsonrpc": "2.0", "id": 9, "error": {"code": -32602, "message": "no"}})
    assert [f.clause for f in _judge({}, ("agent", _form_request(9)), right).blamed("client")] == []


# -- URL security ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, what",
    [
        ("https://example.com/cb?access_token=abc", "the query parameter 'access_token'"),
        ("https://bob:hunter2@example.com/", "a password in the URL's user part"),
        (
            "https://example.com/u?who=ada%40example.org",
            "an email address in the query parameter 'who'",
        ),
    ],
)
def test_ELICIT_30_credentials_in_the_url_are_flagged(session, url: str, what: str) -> None:
    one = session(_runs(lambda turn: turn.elicit_url("Open", url, elicitation_id="e1")), URL_ONLY)
    one.prompt()
    assert len(one.elicitations()) == 1  # a heuristic: warned, not refused
    report = one.close()
    assert report.ok and _warnings(report, HEURISTIC) == [
        f"ELICIT-30: the elicitation URL carries {what}"
    ]


def test_ELICIT_30_31_echo_url_is_https_and_carries_only_an_id(session) -> None:
    # spec ELICIT-31: https, and no finding (no ELICIT-31 warning) for the echo agent's URL.
    one = session(_echo, URL_ONLY)
    one.prompt("/url")
    (params,) = [m["params"] for m in one.inbound("elicitation/create")]
    assert (
        params["url"]
        == f"https://example.com/acpref-echo/consent?elicitation={params['elicitationId']}"
    )
    assert one.close().findings == []


@pytest.mark.parametrize(
    "url, warned",
    [
        ("http://example.com/consent", True),
        ("ftp://example.com/consent", True),
        ("http://localhost:8080/consent", False),  # development
        ("http://127.0.0.1/consent", False),
        ("https://example.com/consent", False),
    ],
)
def test_ELICIT_31_plain_http_outside_development_is_warned(url: str, warned: bool) -> None:
    report = _judge(
        URL_ONLY, ("agent", _url_request(9, url=url)), ("client", ok(9, {"action": "decline"}))
    )
    assert report.ok and bool(_warnings(report, "ELICIT-31")) is warned


def test_ELICIT_32_links_in_a_form_are_warned(session) -> None:
    schema = _form(
        plan={
            "type": "string",
            "title": "Plan",
            "oneOf": [{"const": "pro", "title": "Pro, see www.example.com/pro"}],
        }
    )
    one = session(
        _runs(lambda turn: turn.elicit_form("Read https://example.com/terms first", schema)),
        FORM_ONLY,
    )
    one.prompt()
    assert len(one.elicitations()) == 1
    report = one.close()
    assert report.ok
    (message,) = _warnings(report, "ELICIT-32")
    assert "message" in message and "field 'plan' title" in message


# -- The client CLI: what the user is shown --------------------------------------------------------

FORM = {
    "message": "Which colour? (see https://evil.example/colours)",
    "mode": "form",
    "sessionId": "$sid",
    "requestedSchema": {
        "type": "object",
        "properties": {"n": {"type": "integer", "title": "Number", "minimum": 1, "maximum": 3}},
        "required": ["n"],
    },
}
URL = {
    "message": "Please authorise access to your repositories.",
    "mode": "url",
    "sessionId": "$sid",
    "elicitationId": "e1",
    "url": "https://login.example.com/authorize?elicitation=e1",
}


@pytest.fixture
def terminal(tmp_path: Path):
    made: List[Terminal] = []

    def start(*args: str) -> Terminal:
        made.append(Terminal(list(args), tmp_path))
        made[-1].expect("Scripted Agent> ")
        return made[-1]

    yield start
    for t in made:
        t.close()


def test_ELICIT_01_04_form_names_the_agent_and_offers_decline_and_cancel(terminal) -> None:
    t = terminal()
    t.send(script({"call": "elicitation/create", "params": FORM}))
    shown = t.expect("Number: ")
    # spec ELICIT-04: the request's message is shown (and ELICIT-01: who asks).
    assert "[question from Scripted Agent] Which colour?" in shown
    assert "decline or cancel" in shown  # named before the first field
    t.send(b"2\n")
    assert "decline (d) or cancel (c)" in t.expect("? ")
    t.send(b"d\n")
    assert '{"result": {"action": "decline"}}' in t.expect("Scripted Agent> ")
    t.send(script({"call": "elicitation/create", "params": FORM}))
    t.expect("Number: ")
    t.send(b"2\n")
    t.expect("? ")
    t.send(b"c\n")  # cancel is typed: Enter would send the answers
    assert '{"result": {"action": "cancel"}}' in t.expect("Scripted Agent> ")


def test_ELICIT_03_url_host_shown_and_consent_asked_first(terminal) -> None:
    # spec ELICIT-01, ELICIT-04: who asks and why, and decline and cancel, for URLs too.
    t = terminal()
    t.send(script({"call": "elicitation/create", "params": URL}))
    shown = t.expect("accept (a), decline (d) or cancel (Enter)? ")
    assert "[question from Scripted Agent] Please authorise access" in shown
    assert "host: LOGIN.EXAMPLE.COM" in shown and f"URL:  {URL['url']}" in shown
    assert '"result"' not in shown  # nothing answered (nothing done) before the user chooses
    t.send(b"d\n")
    assert '{"result": {"action": "decline"}}' in t.expect("Scripted Agent> ")


def test_ELICIT_22_form_answers_that_do_not_fit_cannot_be_sent(terminal) -> None:
    # spec ELICIT-12: checked against the schema before the answer is sent.
    t = terminal()
    t.send(script({"call": "elicitation/create", "params": FORM}))
    t.expect("Number: ")
    t.send(b"9\n")
    review = t.expect("? ")
    assert "n must be at most 3" in review and "send (s)" not in review
    t.send(b"e\n")
    t.expect("Number (default 9): ")
    t.send(b"3\n")
    assert "send (s)" in t.expect("? ")
    t.send(b"s\n")
    assert '{"result": {"action": "accept", "content": {"n": 3}}}' in t.expect("Scripted Agent> ")


def test_ELICIT_35_cli_opens_nothing_itself(terminal, tmp_path: Path, monkeypatch) -> None:
    # Every way a program opens a URL on this machine is a trap that leaves a mark.
    traps = tmp_path / "bin"
    traps.mkdir()
    opened = tmp_path / "opened"
    for name in (
        "xdg-open",
        "open",
        "sensible-browser",
        "x-www-browser",
        "www-browser",
        "firefox",
        "gio",
    ):
        trap = traps / name
        trap.write_text(f'#!/bin/sh\necho "$0 $*" >> {opened}\n')
        trap.chmod(0o755)
    monkeypatch.setenv("PATH", f"{traps}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BROWSER", str(traps / "firefox"))
    t = terminal()
    t.send(script({"call": "elicitation/create", "params": URL}))
    shown = t.expect("cancel (Enter)? ")
    assert "acpref never opens it for you" in shown and "in your browser" in shown
    t.send(b"a\n")
    assert '{"result": {"action": "accept"}}' in t.expect("Scripted Agent> ")
    t.send(b"\x04")
    assert t.wait() == 0
    assert not opened.exists()  # accepted, and still nothing opened: the user opens it


def test_ELICIT_37_urls_in_form_text_are_plain_text(terminal) -> None:
    t = terminal()
    t.send(script({"call": "elicitation/create", "params": FORM}))
    shown = t.expect("Number: ")
    assert "(see https://evil.example/colours)" in shown
    assert "\x1b]8;" not in shown and "\x1b[" not in shown  # no hyperlink, no markup at all
    t.send(b"\x03")  # Ctrl-C: cancel
    assert '"cancel"' in t.expect("Scripted Agent> ")
