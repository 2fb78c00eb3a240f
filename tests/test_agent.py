"""Tests of the agent side (``acpref.agent``): the rules enforced around an implementer's ``Agent``.

Spec: initialization.mdx, authentication.mdx, session-setup.mdx, prompt-turn.mdx,
cancellation.mdx, extensibility.mdx; decisions in spec_notes/agent.md.

Each test serves a small ``Agent`` subclass in this process (``in_process``: an
``AgentSideConnection`` over two real pipes) and drives it with the test client of
``tests/peers/agent_client.py``. The clause-by-clause tests against the echo agent are in
``test_agent_spec_*.py``; these cover the machinery: races between prompts, cancellations and
closes, the client handle's refusals, the hooks. No mocks; every wait has a timeout.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, Callable, List, Optional

import pytest

from acpref import schema as s
from acpref._core import Party
from acpref.agent import Agent, PromptTurn, TurnCancelled
from acpref.errors import ErrorCode, LocalProtocolError, RpcError

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import EMPTY_CAPS, FULL_CAPS, WAIT, TestClient, in_process  # noqa: E402
from agent_scripted import Modal, Run, Scripted  # noqa: E402


@pytest.fixture
def make(tmp_path: Path) -> Any:
    """``make(run=..., caps=..., agent_cls=..., **attrs) -> (client, agent)``, closed at the end."""
    made: List[TestClient] = []

    def factory(
        run: Optional[Run] = None,
        *,
        caps: Any = FULL_CAPS,
        agent_cls: type = Scripted,
        init: bool = True,
        **kwargs: Any,
    ):
        box: List[Agent] = []

        def build(client: Any) -> Agent:
            box.append(agent_cls(client, run, **kwargs))
            return box[0]

        side_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in ("max_handlers",)}
        client = in_process(build, caps=caps, initialize=init, **side_kwargs)
        made.append(client)
        return client, box[0]

    yield factory
    for client in made:
        client.close()


def _session(client: TestClient, cwd: Path) -> str:
    return client.new_session(str(cwd)).session_id


def _error_code(call: Callable[[], Any]) -> int:
    with pytest.raises(RpcError) as info:
        call()
    return int(info.value.code)


# -- initialize -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version", [1, 0, 2, 99, 65535, 70000, -1, "1", "2024-11-05", None, 1.5, True, [1]]
)
def test_any_requested_version_negotiates_to_1(make: Any, version: Any) -> None:
    client, _ = make(init=False)
    result = client.request("initialize", {"protocolVersion": version, "clientCapabilities": {}})
    assert result.protocol_version == 1  # spec INIT-07, INIT-08: never an error
    assert [f for f in client.findings if f.blame is Party.AGENT] == []


def test_initialize_without_params_still_answers(make: Any) -> None:
    client, _ = make(init=False)
    assert client.request("initialize", {}).protocol_version == 1


def test_client_capabilities_and_info_are_remembered(make: Any) -> None:
    client, agent = make()
    assert agent.client.capabilities == FULL_CAPS
    assert agent.client.info is not None and agent.client.info.name == "acpref-test-client"
    assert agent.client.supports("fs.readTextFile") and agent.client.supports("elicitation.url")
    assert agent.advertised.load_session is True


def test_terminal_auth_methods_are_withheld_from_clients_without_auth_terminal(make: Any) -> None:
    methods = [
        s.AuthMethodAgent(id="a", name="Agent login"),
        s.AuthMethodTerminal(id="t", name="Terminal login", args=["--login"]),
    ]
    client, _ = make(init=False, auth_methods=lambda: methods)
    result = client.initialize(EMPTY_CAPS)
    assert [m.id for m in result.auth_methods] == ["a"]  # spec AUTH-05
    client2, _ = make(init=False, auth_methods=lambda: methods)
    caps = s.ClientCapabilities(auth=s.AuthCapabilities(terminal=True))
    assert [m.id for m in client2.initialize(caps).auth_methods] == ["a", "t"]


def test_requests_before_initialize_are_refused(make: Any, tmp_path: Path) -> None:
    client, _ = make(init=False)
    assert (
        _error_code(lambda: client.new_session(str(tmp_path))) == ErrorCode.INVALID_REQUEST
    )  # INIT-01


# -- authentication -------------------------------------------------------------------------------


def _auth_agent(make: Any) -> Any:
    return make(
        auth_required=True,
        auth_methods=lambda: [s.AuthMethodAgent(id="login", name="Log in")],
        authenticate=lambda params: s.AuthenticateResponse(),
    )


def test_session_methods_need_authentication_first(make: Any, tmp_path: Path) -> None:
    client, _ = _auth_agent(make)
    for method, params in [
        ("session/new", s.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])),
        ("session/list", s.ListSessionsRequest()),
        ("session/delete", s.DeleteSessionRequest(session_id="sess_x")),
    ]:
        assert (
            _error_code(lambda m=method, p=params: client.request(m, p)) == ErrorCode.AUTH_REQUIRED
        )
    # spec AUTH-07: only an advertised method id.
    assert (
        _error_code(lambda: client.request("authenticate", s.AuthenticateRequest(method_id="nope")))
        == -32602
    )
    assert (
        client.request("authenticate", s.AuthenticateRequest(method_id="login"))
        == s.AuthenticateResponse()
    )
    sid = _session(client, tmp_path)
    assert client.prompt(sid, "hi").stop_reason == s.StopReason.END_TURN
    assert client.request("logout", s.LogoutRequest()) == s.LogoutResponse()
    assert _error_code(lambda: client.new_session(str(tmp_path))) == ErrorCode.AUTH_REQUIRED
    # spec-gap logout-sessions: existing sessions also need authentication again (AUTH-18).
    assert _error_code(lambda: client.prompt(sid, "hi")) == ErrorCode.AUTH_REQUIRED


def test_logout_is_refused_when_not_advertised(make: Any) -> None:
    client, _ = make()  # no auth methods, so no auth.logout
    assert (
        _error_code(lambda: client.request("logout", s.LogoutRequest()))
        == ErrorCode.METHOD_NOT_FOUND
    )


# -- sessions and the hooks -----------------------------------------------------------------------


def test_session_opened_runs_after_the_response_is_on_the_wire(make: Any, tmp_path: Path) -> None:
    client, agent = make()
    sid = _session(client, tmp_path)
    client.wait_for(lambda: client.updates_of(sid, s.AvailableCommandsUpdate), what="commands")
    inbound = client.inbound()
    answer = next(i for i, m in enumerate(inbound) if m.get("result", {}).get("sessionId") == sid)
    update = next(i for i, m in enumerate(inbound) if m.get("method") == "session/update")
    assert answer < update
    assert agent.opened == [sid]
    assert client.findings == []


def test_unknown_sessions_get_resource_not_found(make: Any, tmp_path: Path) -> None:
    client, _ = make()
    for method, params in [
        (
            "session/prompt",
            s.PromptRequest(session_id="sess_nope", prompt=[s.TextContent(text="x")]),
        ),
        ("session/set_mode", s.SetSessionModeRequest(session_id="sess_nope", mode_id="ask")),
        ("session/close", s.CloseSessionRequest(session_id="sess_nope")),
        (
            "session/load",
            s.LoadSessionRequest(session_id="sess_nope", cwd=str(tmp_path), mcp_servers=[]),
        ),
        (
            "session/resume",
            s.ResumeSessionRequest(session_id="sess_nope", cwd=str(tmp_path), mcp_servers=[]),
        ),
    ]:
        assert (
            _error_code(lambda m=method, p=params: client.request(m, p))
            == ErrorCode.RESOURCE_NOT_FOUND
        ), method
    # spec DELETE-04: deleting an unknown session succeeds silently.
    assert (
        client.request("session/delete", s.DeleteSessionRequest(session_id="sess_nope"))
        == s.DeleteSessionResponse()
    )


def test_set_mode_moves_the_mode_option_and_back(make: Any, tmp_path: Path) -> None:
    client, _ = make(agent_cls=Modal)
    sid = _session(client, tmp_path)
    client.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    # spec CONFIG-24: the mode option follows, announced with the complete list (CONFIG-21).
    update = client.wait_for(
        lambda: client.updates_of(sid, s.ConfigOptionUpdate), what="config update"
    )[-1]
    assert update.config_options[0].kind.current_value == "code"
    result = client.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="mode", value="ask"),
    )
    assert result.config_options[0].kind.current_value == "ask"
    modes = client.wait_for(lambda: client.updates_of(sid, s.CurrentModeUpdate), what="mode update")
    assert modes[-1].current_mode_id == "ask"
    assert client.findings == []


# -- prompt turns ---------------------------------------------------------------------------------


def test_a_second_prompt_on_a_busy_session_is_refused(make: Any, tmp_path: Path) -> None:
    release = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        release.wait(WAIT)
        return s.StopReason.END_TURN

    client, _ = make(run)
    sid = _session(client, tmp_path)
    first = client.prompt_async(sid, "one")
    second = client.prompt_async(sid, "two")
    with pytest.raises(RpcError) as info:
        second.result(WAIT)
    assert info.value.code == ErrorCode.INVALID_REQUEST  # spec-gap concurrent-prompt
    assert info.value.data["clause"] == "spec-gap:concurrent-prompt"
    release.set()
    assert first.result(WAIT).stop_reason == s.StopReason.END_TURN
    # ... and the session takes the next prompt once the first is answered.
    assert client.prompt(sid, "three").stop_reason == s.StopReason.END_TURN


def test_two_sessions_run_turns_at_once(make: Any, tmp_path: Path) -> None:
    both = threading.Barrier(2, timeout=WAIT)

    def run(params: Any, turn: PromptTurn) -> Any:
        both.wait()  # only returns when both turns are running together
        return s.StopReason.END_TURN

    client, _ = make(run)
    a, b = _session(client, tmp_path), _session(client, tmp_path)
    pa, pb = client.prompt_async(a, "a"), client.prompt_async(b, "b")
    assert pa.result(WAIT).stop_reason == pb.result(WAIT).stop_reason == s.StopReason.END_TURN


def test_cancel_read_before_the_handler_starts_still_cancels_the_turn(
    make: Any, tmp_path: Path
) -> None:
    """One handler thread, kept busy: the prompt waits in the queue while session/cancel is read."""
    busy, free = threading.Event(), threading.Event()
    seen: List[bool] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        seen.append(turn.cancelled.is_set())
        return s.StopReason.END_TURN  # ignores cancellation on purpose

    def hold(method: str, params: Any) -> Any:
        busy.set()
        free.wait(WAIT)
        return {}

    client, _ = make(run, max_handlers=1, ext_method=hold)
    sid = _session(client, tmp_path)
    blocker = client.request_async("_hold", {})
    assert busy.wait(WAIT)
    prompt = client.prompt_async(sid, "late")
    client.cancel(sid)
    # Wait until the agent has *read* the cancel (its turn flag is set), not just until we
    # wrote it: only then is "read before the handler starts" what this test exercises.
    client.wait_for(lambda: client.side._flags.is_cancelled(prompt.id))
    free.set()
    blocker.result(WAIT)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED  # spec PROMPT-23
    assert seen == [True]


def test_exception_after_cancel_becomes_cancelled(make: Any, tmp_path: Path) -> None:
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        turn.say("working")
        started.set()
        turn.cancelled.wait(WAIT)
        raise RuntimeError("aborted by a library")  # spec PROMPT-24

    client, _ = make(run)
    sid = _session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert client.findings == []


def test_exception_without_cancel_is_an_internal_error(make: Any, tmp_path: Path) -> None:
    def run(params: Any, turn: PromptTurn) -> Any:
        raise RuntimeError("a bug")

    client, _ = make(run)
    sid = _session(client, tmp_path)
    assert _error_code(lambda: client.prompt(sid, "go")) == ErrorCode.INTERNAL_ERROR
    # The failed turn freed its session: the next prompt runs (and fails the same way).
    assert _error_code(lambda: client.prompt(sid, "again")) == ErrorCode.INTERNAL_ERROR


def test_cancel_request_on_a_prompt_ends_it_cancelled(make: Any, tmp_path: Path) -> None:
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        started.set()
        turn.cancelled.wait(WAIT)
        return s.StopReason.END_TURN

    client, _ = make(run)
    sid = _session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    prompt.cancel()  # $/cancel_request (spec-gap cancel-request-prompt)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_cancel_after_the_turn_ended_changes_nothing(make: Any, tmp_path: Path) -> None:
    seen: List[bool] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        seen.append(turn.cancelled.is_set())
        return s.StopReason.END_TURN

    client, _ = make(run)
    sid = _session(client, tmp_path)
    assert client.prompt(sid, "one").stop_reason == s.StopReason.END_TURN
    client.cancel(sid)
    assert client.prompt(sid, "two").stop_reason == s.StopReason.END_TURN
    assert seen == [False, False]
    assert client.findings == []


def test_cancel_during_a_permission_request(make: Any, tmp_path: Path) -> None:
    asked = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        call_id = turn.new_tool_call_id()
        turn.update(s.ToolCall(tool_call_id=call_id, title="t", status=s.ToolCallStatus.PENDING))
        outcome = turn.request_permission(
            s.ToolCallUpdate(tool_call_id=call_id),
            [s.PermissionOption(option_id="ok", name="OK", kind=s.PermissionOptionKind.ALLOW_ONCE)],
        )
        assert isinstance(outcome, s.CancelledPermissionOutcome)
        return s.StopReason.CANCELLED

    client, _ = make(run)
    sid = _session(client, tmp_path)
    cancelled = threading.Event()

    def policy(params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        asked.set()
        assert cancelled.wait(WAIT)
        # spec PROMPT-21: the client answers pending permission requests "cancelled".
        return s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())

    client.permission = policy
    prompt = client.prompt_async(sid, "go")
    assert asked.wait(WAIT)
    client.cancel(sid)
    cancelled.set()
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert client.findings == []


def test_calls_through_a_cancelled_turn_are_not_sent(make: Any, tmp_path: Path) -> None:
    results: List[Any] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        turn.cancelled.wait(WAIT)
        try:
            turn.read_text_file(str(tmp_path / "x"))
        except TurnCancelled as exc:
            results.append(exc)
        results.append(turn.request_permission(s.ToolCallUpdate(tool_call_id="c"), []))
        raise TurnCancelled("stop")

    client, _ = make(run)
    sid = _session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert isinstance(results[0], TurnCancelled)
    assert isinstance(results[1], s.CancelledPermissionOutcome)
    assert not any(
        m.get("method") in ("fs/read_text_file", "session/request_permission")
        for m in client.inbound()
    )


def test_no_update_of_a_turn_after_its_response(make: Any, tmp_path: Path) -> None:
    turns: List[PromptTurn] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        turns.append(turn)
        turn.say("inside")
        return s.StopReason.END_TURN

    client, _ = make(run)
    sid = _session(client, tmp_path)
    client.prompt(sid, "go")
    count = len(client.inbound())
    with pytest.raises(LocalProtocolError) as info:
        turns[0].say("too late")  # spec-gap content-after-turn (PROMPT-26 after a cancel)
    assert info.value.clause == "spec-gap:content-after-turn"
    assert len(client.inbound()) == count


def test_terminal_wait_is_ended_by_a_kill_when_the_turn_is_cancelled(
    make: Any, tmp_path: Path
) -> None:
    created = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        terminal = turn.create_terminal(sys.executable, ["-c", "import time; time.sleep(60)"])
        created.set()
        try:
            exit_status = terminal.wait_for_exit()
        finally:
            terminal.release()
        assert exit_status.signal is not None
        return s.StopReason.END_TURN

    client, _ = make(run)
    sid = _session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert created.wait(WAIT)
    client.wait_for(
        lambda: any(m.get("method") == "terminal/wait_for_exit" for m in client.inbound())
    )
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert client.terminals.killed and client.terminals.released
    assert client.findings == []


# -- the client handle refuses what the client did not advertise ----------------------------------


@pytest.mark.parametrize(
    "call, clause",
    [
        (lambda turn, d: turn.read_text_file(d + "/x"), "FS-01"),
        (lambda turn, d: turn.write_text_file(d + "/x", "y"), "FS-02"),
        (lambda turn, d: turn.create_terminal("true"), "TERM-01"),
        (lambda turn, d: turn.elicit_form("q", s.ElicitationSchema(properties={})), "ELICIT-06"),
        (
            lambda turn, d: turn.elicit_url("q", "https://example.com", elicitation_id="e"),
            "ELICIT-06",
        ),
        (
            lambda turn, d: turn.client.update(
                turn.session_id,
                s.ConfigOptionUpdate(
                    config_options=[
                        s.SessionConfigOption(
                            id="b", name="B", kind=s.SessionConfigBoolean(current_value=True)
                        )
                    ]
                ),
            ),
            "CONFIG-05",
        ),
    ],
)
def test_unadvertised_client_methods_are_refused_before_sending(
    make: Any, tmp_path: Path, call: Any, clause: str
) -> None:
    raised: List[LocalProtocolError] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        try:
            call(turn, str(tmp_path))
        except LocalProtocolError as exc:
            raised.append(exc)
        call(turn, str(tmp_path))  # uncaught this time: the prompt answers -32603 naming the clause

    client, _ = make(run, caps=EMPTY_CAPS)
    sid = _session(client, tmp_path)
    client.wait_commands(sid)
    before = len(client.inbound())
    with pytest.raises(RpcError) as info:
        client.prompt(sid, "go")
    assert raised and raised[0].clause == clause
    assert info.value.code == ErrorCode.INTERNAL_ERROR
    assert info.value.data == {"clause": clause}
    assert [m for m in client.inbound()[before:] if "method" in m] == []  # nothing was sent
    assert client.findings == []


def test_boolean_option_for_a_client_without_support_is_an_internal_error(
    make: Any, tmp_path: Path
) -> None:
    boolean = [
        s.SessionConfigOption(id="b", name="B", kind=s.SessionConfigBoolean(current_value=False))
    ]
    client, _ = make(caps=EMPTY_CAPS, initial_config_options=lambda session: boolean)
    with pytest.raises(RpcError) as info:
        client.new_session(str(tmp_path))
    assert info.value.code == ErrorCode.INTERNAL_ERROR and "CONFIG-05" in info.value.message


# -- close and delete cancel a running turn -------------------------------------------------------


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
def test_close_and_delete_cancel_the_running_turn_first(
    make: Any, tmp_path: Path, method: str
) -> None:
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        started.set()
        turn.cancelled.wait(WAIT)
        turn.say("stopping")  # spec PROMPT-25: updates may follow the cancel, before the answer
        return s.StopReason.END_TURN

    client, _ = make(run)
    sid = _session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    params = (
        s.CloseSessionRequest(session_id=sid)
        if method == "session/close"
        else s.DeleteSessionRequest(session_id=sid)
    )
    assert client.request(method, params) is not None
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    inbound = client.inbound()
    prompt_answer = next(
        i for i, m in enumerate(inbound) if m.get("id") == prompt.id and "result" in m
    )
    closing = max(i for i, m in enumerate(inbound) if "result" in m)
    assert prompt_answer < closing  # spec SETUP-16: the turn ends before the session goes
    assert client.findings == []


# -- extensions -----------------------------------------------------------------------------------


def test_extension_requests_and_notifications(make: Any) -> None:
    heard: List[Any] = []
    got = threading.Event()
    client, _ = make(
        ext_method=lambda method, params: (
            {"method": method, "params": params}
            if method == "_acpref/known"
            else Agent.ext_method(None, method, params)
        ),  # type: ignore[arg-type]
        ext_notification=lambda method, params: (heard.append((method, params)), got.set()),
    )
    assert client.request("_acpref/known", {"a": 1}) == {
        "method": "_acpref/known",
        "params": {"a": 1},
    }
    assert (
        _error_code(lambda: client.request("_acpref/unknown", {})) == ErrorCode.METHOD_NOT_FOUND
    )  # EXT-08
    assert (
        _error_code(lambda: client.request("unknown/method", {})) == ErrorCode.METHOD_NOT_FOUND
    )  # EXT-05
    client.notify("_acpref/note", {"b": 2})
    assert got.wait(WAIT)  # spec EXT-10: unknown ones are ignored; this one is handled
    assert heard == [("_acpref/note", {"b": 2})]
