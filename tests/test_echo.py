"""Tests of the echo agent (``acpref echo``), run as a real subprocess and driven over its pipes.

Spec: every page the echo agent exercises; its commands are listed in spec_notes/echo-agent.md.
The test client is ``tests/peers/agent_client.py`` (``Connection`` + ``acpref.schema``): it serves
fs requests from real files and terminals with real subprocesses, and a witness judges every
message both ways with the protocol rules, so "no finding" means the agent stayed clean.

Most tests share one echo process with a client that advertises everything (one fresh session
each); those that need other capabilities or flags start their own.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from acpref import schema as s
from acpref.echo import AUTH_METHOD_ID, COMMANDS
from acpref.errors import ErrorCode, RpcError

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (
    EMPTY_CAPS,
    WAIT,
    TestClient,
    allow_first,
    reject_first,
    spawn_echo,
)  # noqa: E402


@pytest.fixture(scope="module")
def echo() -> Iterator[TestClient]:
    client = spawn_echo()
    yield client
    client.close()


@pytest.fixture
def fresh(echo: TestClient) -> Iterator[TestClient]:
    """The shared client with default policies, and no new finding by the end of the test."""
    echo.permission = allow_first
    before = len(echo.findings)
    yield echo
    assert echo.findings[before:] == []
    echo.permission = allow_first


def _session(client: TestClient, cwd: Path, **kwargs: Any) -> str:
    sid = client.new_session(str(cwd), **kwargs).session_id
    client.wait_commands(sid)
    return sid


def _last_text(client: TestClient, sid: str) -> str:
    chunks = client.updates_of(sid, s.AgentMessageChunk)
    last_id = chunks[-1].message_id
    return "".join(c.content.text for c in chunks if c.message_id == last_id)


def _tool_updates(client: TestClient, sid: str, call_id: str) -> List[Any]:
    return [
        u
        for u in client.updates(sid)
        if isinstance(u, (s.ToolCall, s.ToolCallUpdate)) and u.tool_call_id == call_id
    ]


# -- the command line -----------------------------------------------------------------------------


def test_help_lists_every_command_and_option() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "acpref", "echo", "--help"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    ).stdout
    for name in COMMANDS:
        assert f"/{name}" in out
    for option in ("--state-dir", "--require-auth", "--log-level"):
        assert option in out


def test_commands_are_documented_in_spec_notes() -> None:
    notes = (Path(__file__).parent.parent / "spec_notes" / "echo-agent.md").read_text(
        encoding="utf-8"
    )
    for name in COMMANDS:
        assert f"`/{name}" in notes, name


# -- echoing and the commands ---------------------------------------------------------------------


def test_prompt_is_echoed_as_one_message(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    image = s.ImageContent(data="aGk=", mime_type="image/png")
    result = fresh.prompt(sid, [s.TextContent(text="hello"), image, s.TextContent(text=" world")])
    assert result.stop_reason == s.StopReason.END_TURN
    chunks = fresh.updates_of(sid, s.AgentMessageChunk)
    assert [c.content for c in chunks] == [
        s.TextContent(text="hello"),
        image,
        s.TextContent(text=" world"),
    ]
    assert len({c.message_id for c in chunks}) == 1 and chunks[0].message_id


def test_available_commands_follow_session_setup(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    names = [c.name for c in fresh.updates_of(sid, s.AvailableCommandsUpdate)[0].available_commands]
    assert names == list(COMMANDS)


def test_help(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/help")
    text = _last_text(fresh, sid)
    assert all(f"/{name}" in text for name in COMMANDS) and "Mode: ask" in text


def test_stream(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    assert fresh.prompt(sid, "/stream 20").stop_reason == s.StopReason.END_TURN
    chunks = [u for u in fresh.updates_of(sid, s.AgentMessageChunk)]
    assert [c.content.text for c in chunks] == [f"chunk {i}/20 " for i in range(1, 21)]
    assert len({c.message_id for c in chunks}) == 1
    assert fresh.updates_of(sid, s.AgentThoughtChunk)
    plans = fresh.updates_of(sid, s.Plan)
    assert len(plans) >= 4 and all(
        e.status == s.PlanEntryStatus.COMPLETED for e in plans[-1].entries
    )
    assert len(plans[-1].entries) > len(plans[0].entries)  # spec PLAN-06: an entry was added
    assert fresh.updates_of(sid, s.SessionInfoUpdate)[0].title == "Echo: streamed 20 chunks"
    usage = fresh.updates_of(sid, s.UsageUpdate)[0]
    assert usage.size == 200_000 and usage.cost.currency == "USD"
    listed = fresh.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    assert [i.title for i in listed.sessions] == ["Echo: streamed 20 chunks"]


def test_stream_rejects_a_non_number(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/stream lots")
    assert "not 'lots'" in _last_text(fresh, sid)


@pytest.mark.parametrize(
    "policy, final",
    [(allow_first, s.ToolCallStatus.COMPLETED), (reject_first, s.ToolCallStatus.FAILED)],
)
def test_tool(fresh: TestClient, tmp_path: Path, policy: Any, final: s.ToolCallStatus) -> None:
    fresh.permission = policy
    sid = _session(fresh, tmp_path)
    assert fresh.prompt(sid, "/tool x").stop_reason == s.StopReason.END_TURN
    call = fresh.updates_of(sid, s.ToolCall)[0]
    updates = _tool_updates(fresh, sid, call.tool_call_id)
    assert updates[0] is call and call.status == s.ToolCallStatus.PENDING
    assert updates[-1].status == final
    asked = [p for p in fresh.permission_requests if p.session_id == sid]
    assert asked[0].tool_call.tool_call_id == call.tool_call_id
    if final == s.ToolCallStatus.COMPLETED:
        assert updates[1].status == s.ToolCallStatus.IN_PROGRESS


def test_read_relative_to_cwd(fresh: TestClient, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("some notes", encoding="utf-8")
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/read notes.txt")
    assert "some notes" in _last_text(fresh, sid)
    call = fresh.updates_of(sid, s.ToolCall)[0]
    assert call.kind == s.ToolKind.READ and call.locations[0].path == str(tmp_path / "notes.txt")
    assert _tool_updates(fresh, sid, call.tool_call_id)[-1].status == s.ToolCallStatus.COMPLETED


def test_read_a_missing_file_fails_the_tool_call(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/read missing.txt")
    call = fresh.updates_of(sid, s.ToolCall)[0]
    assert _tool_updates(fresh, sid, call.tool_call_id)[-1].status == s.ToolCallStatus.FAILED
    assert "-32002" in _last_text(fresh, sid)


def test_read_outside_the_roots_is_refused(fresh: TestClient, tmp_path: Path) -> None:
    inside = tmp_path / "project"
    inside.mkdir()
    sid = _session(fresh, inside)
    fresh.prompt(sid, "/read ../secret.txt")
    assert "outside this session's roots" in _last_text(fresh, sid)
    assert not [
        m
        for m in fresh.inbound()
        if m.get("method") == "fs/read_text_file" and m["params"]["sessionId"] == sid
    ]


def test_write_shows_a_diff_and_asks_in_ask_mode(fresh: TestClient, tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/write out.txt new text")
    assert target.read_text(encoding="utf-8") == "new text"
    call = fresh.updates_of(sid, s.ToolCall)[0]
    assert call.kind == s.ToolKind.EDIT
    assert call.content == [s.Diff(path=str(target), old_text="old", new_text="new text")]
    assert [p for p in fresh.permission_requests if p.session_id == sid]
    assert _tool_updates(fresh, sid, call.tool_call_id)[-1].status == s.ToolCallStatus.COMPLETED


def test_write_a_new_file_in_code_mode_asks_nothing(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    fresh.prompt(sid, '/write "sub dir.txt" hello')
    assert (tmp_path / "sub dir.txt").read_text(encoding="utf-8") == "hello"
    call = fresh.updates_of(sid, s.ToolCall)[0]
    assert call.content[0].old_text is None  # spec TOOL-13: a new file
    assert not [p for p in fresh.permission_requests if p.session_id == sid]


def test_write_rejected_leaves_the_file_alone(fresh: TestClient, tmp_path: Path) -> None:
    fresh.permission = reject_first
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/write x.txt nope")
    assert not (tmp_path / "x.txt").exists()
    call = fresh.updates_of(sid, s.ToolCall)[0]
    assert _tool_updates(fresh, sid, call.tool_call_id)[-1].status == s.ToolCallStatus.FAILED


def test_brave_mode_skips_the_question(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="brave_mode", value=True),
    )
    fresh.prompt(sid, "/write y.txt bold")
    assert (tmp_path / "y.txt").read_text(encoding="utf-8") == "bold"
    assert not [p for p in fresh.permission_requests if p.session_id == sid]


@pytest.mark.parametrize(
    "code, status", [(0, s.ToolCallStatus.COMPLETED), (3, s.ToolCallStatus.FAILED)]
)
def test_run(fresh: TestClient, tmp_path: Path, code: int, status: s.ToolCallStatus) -> None:
    sid = _session(fresh, tmp_path)
    script = f"import os, sys; print(os.getcwd()); sys.exit({code})"
    fresh.prompt(sid, f"/run {sys.executable} -c '{script}'")
    text = _last_text(fresh, sid)
    assert f"exited with status {code}" in text and str(tmp_path) in text  # spec SETUP-26
    call = fresh.updates_of(sid, s.ToolCall)[0]
    updates = _tool_updates(fresh, sid, call.tool_call_id)
    terminal_id = updates[1].content[0].terminal_id
    assert updates[-1].status == status and updates[-1].raw_output["exitCode"] == code
    assert terminal_id in fresh.terminals.released


def test_run_cancelled_kills_and_releases(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    prompt = fresh.prompt_async(sid, f"/run {sys.executable} -c 'import time; time.sleep(60)'")
    fresh.wait_for(
        lambda: any(isinstance(u, s.ToolCallUpdate) and u.content for u in fresh.updates(sid)),
        what="terminal",
    )
    fresh.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    call = fresh.updates_of(sid, s.ToolCall)[0]
    terminal_id = _tool_updates(fresh, sid, call.tool_call_id)[1].content[0].terminal_id
    assert terminal_id in fresh.terminals.killed and terminal_id in fresh.terminals.released


def test_form(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/form")
    assert _last_text(fresh, sid).startswith("Hello Ada! Hello Ada!")
    request = [e for e in fresh.elicitations if getattr(e.mode.scope, "session_id", None) == sid][0]
    assert (
        isinstance(request.mode, s.ElicitationFormMode)
        and "name" in request.mode.requested_schema.required
    )


@pytest.mark.parametrize(
    "action, text",
    [(s.ElicitationDeclineAction(), "declined"), (s.ElicitationCancelAction(), "dismissed")],
)
def test_form_declined_or_dismissed(
    fresh: TestClient, tmp_path: Path, action: Any, text: str
) -> None:
    fresh.elicit = lambda params: s.CreateElicitationResponse(action=action)
    try:
        sid = _session(fresh, tmp_path)
        fresh.prompt(sid, "/form")
        assert text in _last_text(fresh, sid)
    finally:
        from agent_client import accept_form

        fresh.elicit = accept_form


def test_url_then_complete(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/url")
    request = [e for e in fresh.elicitations if getattr(e.mode.scope, "session_id", None) == sid][0]
    assert isinstance(request.mode, s.ElicitationUrlMode) and request.mode.url.startswith(
        "https://"
    )
    fresh.wait_for(
        lambda: request.mode.elicitation_id in fresh.completed_elicitations,
        what="elicitation/complete",
    )


def test_wait_until_cancelled(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    prompt = fresh.prompt_async(sid, "/wait")
    fresh.wait_for(lambda: "still waiting (1)" in fresh.text_of(sid), what="a heartbeat")
    fresh.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_error(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    with pytest.raises(RpcError) as info:
        fresh.prompt(sid, "/error")
    assert info.value.code == ErrorCode.INTERNAL_ERROR and info.value.data == {"command": "/error"}
    assert fresh.prompt(sid, "after").stop_reason == s.StopReason.END_TURN


def test_ext_calls_the_client_and_answers_ping(fresh: TestClient, tmp_path: Path) -> None:
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/ext marco")
    assert ("_acpref/echo", {"text": "marco"}) in fresh.ext_calls
    assert any(m == "_acpref/notice" and p["text"] == "marco" for m, p in fresh.ext_calls)
    assert '"echoed"' in _last_text(fresh, sid)
    assert fresh.request("_acpref/ping", {"n": 1}) == {"pong": True, "params": {"n": 1}}


@pytest.mark.parametrize("policy, mode", [(allow_first, "code"), (reject_first, "ask")])
def test_mode_switch_by_the_agent(
    fresh: TestClient, tmp_path: Path, policy: Any, mode: str
) -> None:
    fresh.permission = policy
    sid = _session(fresh, tmp_path)
    fresh.prompt(sid, "/mode code")
    call = fresh.updates_of(sid, s.ToolCall)[0]
    assert call.kind == s.ToolKind.SWITCH_MODE
    updates = fresh.updates_of(sid, s.CurrentModeUpdate)
    assert [u.current_mode_id for u in updates] == (["code"] if mode == "code" else [])
    if mode == "code":
        options = fresh.updates_of(sid, s.ConfigOptionUpdate)[-1].config_options
        assert options[0].kind.current_value == "code"  # spec CONFIG-24


# -- what the echo agent does for a client that advertised nothing --------------------------------


def test_bare_client_gets_explanations_not_calls(tmp_path: Path) -> None:
    client = spawn_echo(caps=EMPTY_CAPS)
    try:
        sid = _session(client, tmp_path)
        for prompt, needle in [
            ("/read a.txt", "fs.readTextFile"),
            ("/write a.txt x", "fs.writeTextFile"),
            ("/run true", "clientCapabilities.terminal"),
            ("/form", "elicitation.form"),
            ("/url", "elicitation.url"),
            ("/ext hi", "did not call it"),
        ]:
            assert client.prompt(sid, prompt).stop_reason == s.StopReason.END_TURN
            assert needle in _last_text(client, sid)
        sent = {m.get("method") for m in client.inbound()}
        assert not sent & {
            "fs/read_text_file",
            "fs/write_text_file",
            "terminal/create",
            "elicitation/create",
            "_acpref/echo",
        }
        # spec CONFIG-05, CONFIG-06: brave_mode as a select for a client without booleans.
        options = client.new_session(str(tmp_path)).config_options
        brave = [o for o in options if o.id == "brave_mode"][0]
        assert isinstance(brave.kind, s.SessionConfigSelect) and brave.kind.current_value == "off"
        assert client.findings == []
    finally:
        client.close()


# -- flags ----------------------------------------------------------------------------------------


def test_require_auth(tmp_path: Path) -> None:
    client = spawn_echo("--require-auth")
    try:
        with pytest.raises(RpcError) as info:
            client.new_session(str(tmp_path))
        assert info.value.code == ErrorCode.AUTH_REQUIRED
        client.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
        sid = _session(client, tmp_path)
        assert client.prompt(sid, "hi").stop_reason == s.StopReason.END_TURN
        client.request("logout", s.LogoutRequest())
        with pytest.raises(RpcError) as info:
            client.new_session(str(tmp_path))
        assert info.value.code == ErrorCode.AUTH_REQUIRED
        assert client.findings == []
    finally:
        client.close()


def test_state_dir_keeps_sessions_across_restarts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    work = tmp_path / "work"
    work.mkdir()
    first = spawn_echo("--state-dir", str(state))
    try:
        sid = _session(first, work)
        for i in range(3):
            first.prompt(sid, f"turn {i}")
        first.prompt(sid, "/tool")
        first.prompt(sid, "/stream 2")
        first.prompt(sid, f"/run {sys.executable} -c 'print(6 * 7)'")
        before = first.updates(sid)
    finally:
        first.close()
    second = spawn_echo("--state-dir", str(state))
    try:
        listed = second.request("session/list", s.ListSessionsRequest())
        assert [i.session_id for i in listed.sessions] == [sid]
        assert listed.sessions[0].title == "Echo: streamed 2 chunks"
        second.request(
            "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(work), mcp_servers=[])
        )
        replayed = second.updates(sid)
        history = (
            s.UserMessageChunk,
            s.AgentMessageChunk,
            s.AgentThoughtChunk,
            s.ToolCall,
            s.ToolCallUpdate,
            s.Plan,
        )
        sent_agent = [u for u in before if isinstance(u, history)]
        got_agent = [
            u for u in replayed if isinstance(u, history) and not isinstance(u, s.UserMessageChunk)
        ]
        # spec-gap replay-terminal: the released terminal comes back as its output, in text.
        terminal = [
            i
            for i, u in enumerate(sent_agent)
            if isinstance(u, s.ToolCallUpdate)
            and u.content
            and isinstance(u.content[0], s.Terminal)
        ]
        assert len(terminal) == 1 and "42" in got_agent[terminal[0]].content[0].content.text
        del sent_agent[terminal[0]], got_agent[terminal[0]]
        assert got_agent == sent_agent
        users = [u.content.text for u in replayed if isinstance(u, s.UserMessageChunk)]
        assert users[:5] == ["turn 0", "turn 1", "turn 2", "/tool", "/stream 2"] and len(users) == 6
        assert second.prompt(sid, "still here").stop_reason == s.StopReason.END_TURN
        assert second.findings == []
    finally:
        second.close()


def test_a_full_session_stays_clean(tmp_path: Path) -> None:
    """Every method and command once, on a fresh process: no finding, either side."""
    (tmp_path / "r.txt").write_text("read me", encoding="utf-8")
    extra = tmp_path / "extra"
    extra.mkdir()
    client = spawn_echo("--require-auth")
    try:
        client.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
        sid = _session(client, tmp_path, additional_directories=[str(extra)])
        for prompt in [
            "hi",
            "/help",
            "/stream 5",
            "/tool",
            "/read r.txt",
            "/write w.txt x",
            f"/run {sys.executable} -V",
            "/form",
            "/url",
            "/ext",
            "/mode code",
        ]:
            assert client.prompt(sid, prompt).stop_reason == s.StopReason.END_TURN, prompt
        with pytest.raises(RpcError):
            client.prompt(sid, "/error")
        waiting = client.prompt_async(sid, "/wait")
        client.wait_for(lambda: "still waiting" in client.text_of(sid))
        client.cancel(sid)
        assert waiting.result(WAIT).stop_reason == s.StopReason.CANCELLED
        client.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="ask"))
        client.request(
            "session/set_config_option",
            s.SetSessionConfigOptionRequest(session_id=sid, config_id="model", value="echo-2"),
        )
        page = client.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
        assert page.sessions[0].additional_directories == [str(extra)]
        client.request(
            "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        )
        client.request(
            "session/resume",
            s.ResumeSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[]),
        )
        client.request("session/close", s.CloseSessionRequest(session_id=sid))
        client.request("session/delete", s.DeleteSessionRequest(session_id=sid))
        client.request("logout", s.LogoutRequest())
        assert client.findings == []
        assert client.witness.state.finish() == []
    finally:
        client.close()
    assert "broke" not in client.process.stderr.text()  # type: ignore[attr-defined]


def test_stdout_carries_only_protocol_messages(tmp_path: Path) -> None:
    client = spawn_echo()
    try:
        sid = _session(client, tmp_path)
        client.prompt(sid, "/stream 3")
        assert client.lines and client.unparsable_lines() == []  # spec TRANSPORT-08
    finally:
        client.close()


def test_two_concurrent_turns_in_two_sessions(fresh: TestClient, tmp_path: Path) -> None:
    a, b = _session(fresh, tmp_path), _session(fresh, tmp_path)
    pa = fresh.prompt_async(a, "/wait")
    pb = fresh.prompt_async(b, "/stream 50")
    assert pb.result(WAIT).stop_reason == s.StopReason.END_TURN
    fresh.cancel(a)
    assert pa.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_command_list_goes_out_before_the_first_turn(tmp_path: Path) -> None:
    # The echo agent is deterministic: its command list follows the session/new answer on a
    # thread of its own, and a prompt waits for it, however the threads are scheduled. Here the
    # announcing thread is held until the prompt has arrived (the race it used to lose).
    import threading

    from acpref.echo import EchoAgent
    from acpref.testing import memory_pair

    prompt_arrived = threading.Event()

    class LateAnnouncer(EchoAgent):
        def session_opened(self, session_id: str) -> None:
            prompt_arrived.wait(10)
            super().session_opened(session_id)

        def session_prompt(self, params: Any, turn: Any) -> Any:
            prompt_arrived.set()
            return super().session_prompt(params, turn)

    driver = memory_pair(LateAnnouncer)
    try:
        driver.initialize()
        session = driver.new_session(str(tmp_path))
        driver.prompt(session, "hi")
        kinds = [type(u).__name__ for u in driver.updates(session)]
    finally:
        driver.close()
    assert kinds.index("AvailableCommandsUpdate") < kinds.index("AgentMessageChunk"), kinds
