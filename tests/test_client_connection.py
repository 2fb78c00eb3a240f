"""ClientSideConnection: initialize, refusals before sending, turns, cancellation, the process.

Spec: initialization.mdx, session-setup.mdx, session-list.mdx, prompt-turn.mdx (Cancellation),
transports.mdx; clauses INIT-01 .. INIT-13, SETUP-03 .. SETUP-35, LIST-01, DELETE-01, AUTH-03,
CONTENT-04, PROMPT-21, TRANSPORT-07, TRANSPORT-10. The agent is ``peers/client_agent.py``, in
this process over real pipes (``Pair``) or as a real subprocess (``spawn_agent``).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from peers.client_agent import DEFAULT_CAPS, ScriptedAgent
from peers.client_harness import (
    WAIT,
    Pair,
    call,
    join_new_threads,
    results_of,
    run_steps,
    spawn_agent,
)

from acpref import schema as s
from acpref.client import (
    AgentExited,
    Allow,
    Ask,
    ClientSideConnection,
    ReferenceClient,
    Reject,
    UnsupportedProtocolVersion,
)
from acpref.connection import Connection
from acpref.errors import LocalProtocolError

PERMISSION = call(
    "session/request_permission",
    toolCall={"toolCallId": "t1", "title": "Edit a file", "kind": "edit"},
    options=[
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
)


class Recorded:
    """A recorder: the raw lines each way, parsed."""

    def __init__(self) -> None:
        self.lines = []

    def __call__(self, direction: str, line: bytes) -> None:
        self.lines.append((direction, json.loads(line) if isinstance(line, bytes) and line else None))

    def sent(self, method: str):
        return [m for d, m in self.lines if d == "out" and m and m.get("method") == method]


@pytest.fixture
def cwd(tmp_path: Path) -> str:
    return str(tmp_path)


@pytest.fixture
def pairs():
    made = []

    def make(*args, **kwargs) -> Pair:
        made.append(Pair(*args, **kwargs))
        return made[-1]

    yield make
    for pair in made:
        pair.close()


@pytest.fixture
def spawned():
    made = []

    def make(client, *args, **kwargs):
        made.append(spawn_agent(client, *args, **kwargs))
        return made[-1]

    yield make
    for conn in made:
        conn.close()


# -- initialize -------------------------------------------------------------------------------


def test_INIT_01_nothing_before_initialize(pairs, cwd):
    recorded = Recorded()
    pair = pairs(initialize=False, recorder=recorded)
    with pytest.raises(LocalProtocolError) as info:
        pair.conn.new_session(cwd, timeout=WAIT)
    assert info.value.clause == "INIT-01"
    assert recorded.sent("session/new") == []


def test_INIT_02_03_12_initialize_carries_real_capabilities_and_info(pairs):
    # spec INIT-03, INIT-12: clientInfo, and fs/terminal support stated explicitly.
    # spec AUTH-06, OVERVIEW-05: auth.terminal false (no terminal login); what is served is said.
    recorded = Recorded()
    pair = pairs(ReferenceClient(), recorder=recorded)
    (init,) = recorded.sent("initialize")
    params = init["params"]
    assert params["protocolVersion"] == 1
    assert params["clientInfo"]["name"] == "acpref-client" and params["clientInfo"]["version"]
    assert params["clientCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "auth": {"terminal": False},
        # spec NOTICE-01, COMPACT-01: the reference client shows notices and keeps compactions.
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
        "plan": {},  # provisional PLANOP-01: the views keep plans by id
        "subagents": {},  # provisional SUBAGENT-01: children get views of their own
    }
    assert pair.conn.agent_info.name == "scripted-agent"


def test_ELICIT_05_elicitation_advertised_only_with_callbacks(pairs):
    recorded = Recorded()
    pairs(ReferenceClient(elicit_form=lambda r, c: s.ElicitationCancelAction()), recorder=recorded)
    caps = recorded.sent("initialize")[0]["params"]["clientCapabilities"]
    assert caps["elicitation"] == {"form": {}}


def test_INIT_09_unsupported_version_closes(spawned):
    conn = spawned(ReferenceClient(), "--version", "2")
    with pytest.raises(UnsupportedProtocolVersion) as info:
        conn.initialize(timeout=WAIT)
    assert info.value.agent_version == 2
    assert "version 2" in str(info.value)
    assert conn.closed
    assert conn.returncode is not None  # the agent was shut down, and its exit reported


# -- Refusals before sending ------------------------------------------------------------------


class _NoBooleans(ReferenceClient):
    supports_boolean_config = False


def _refusal(pairs, cwd, action, caps=None) -> LocalProtocolError:
    """``action(conn, cwd, sid)`` against an agent advertising ``caps`` (nothing by default): it
    must be refused before a byte is written. Returns the refusal."""
    recorded = Recorded()
    pair = pairs(_NoBooleans(), ScriptedAgent(caps={} if caps is None else caps), recorder=recorded)
    sid = pair.new_session(cwd)
    sent_before = len([d for d, _ in recorded.lines if d == "out"])
    with pytest.raises(LocalProtocolError) as info:
        action(pair.conn, cwd, sid)
    assert len([d for d, _ in recorded.lines if d == "out"]) == sent_before  # nothing was written
    return info.value


def _sent(pairs, cwd, action, method):
    """The ``method`` requests ``action(conn, cwd, sid)`` writes to an agent advertising all."""
    recorded = Recorded()
    pair = pairs(recorder=recorded)
    action(pair.conn, cwd, pair.new_session(cwd))
    return recorded.sent(method)


@pytest.mark.parametrize(
    "clause, action",
    [
        ("SETUP-03", lambda c, cwd, sid: c.load_session("sess-1", cwd)),
        ("SETUP-10", lambda c, cwd, sid: c.resume_session("sess-1", cwd)),
        ("SETUP-14", lambda c, cwd, sid: c.close_session(sid)),
        ("LIST-01", lambda c, cwd, sid: list(c.list_sessions())),
        ("DELETE-01", lambda c, cwd, sid: c.session_delete(s.DeleteSessionRequest(session_id=sid))),
        ("AUTH-03", lambda c, cwd, sid: c.logout()),
        ("SETUP-24", lambda c, cwd, sid: c.new_session(cwd, additional_directories=[cwd])),
        (
            "SETUP-35",
            lambda c, cwd, sid: c.new_session(
                cwd, mcp_servers=[s.McpServerHttp(name="h", url="http://x", headers=[])]
            ),
        ),
        (
            "PROMPT-03",
            lambda c, cwd, sid: c.prompt(sid, [s.ImageContent(data="AA==", mime_type="image/png")]),
        ),
        ("INIT-13", lambda c, cwd, sid: c.set_config_option(sid, "model", True)),
        (
            "SETUP-25",
            lambda c, cwd, sid: c.session_new(
                s.NewSessionRequest(cwd="relative/dir", mcp_servers=[])
            ),
        ),
    ],
)
def test_refused_before_sending(pairs, cwd, clause, action):
    # spec SETUP-03, SETUP-10, SETUP-14, LIST-01, DELETE-01, AUTH-03, SETUP-24, SETUP-35: refused
    # spec CONTENT-04, PROMPT-03, INIT-13, SETUP-25: refused before a byte is written
    refusal = _refusal(pairs, cwd, action)
    assert refusal.clause == clause
    assert f"[spec {clause}]" in str(refusal)


def test_AUTH_03_logout_only_with_a_non_null_auth_logout(pairs, cwd):
    refusal = _refusal(pairs, cwd, lambda c, cwd, sid: c.logout(), {"auth": {"logout": None}})
    assert refusal.clause == "AUTH-03" and "'auth.logout'" in str(refusal)
    assert len(_sent(pairs, cwd, lambda c, cwd, sid: c.logout(timeout=WAIT), "logout")) == 1


def test_SETUP_10_resume_only_with_a_non_null_resume_capability(pairs, cwd):
    def resume(c, cwd, sid):
        return c.resume_session(sid, cwd, timeout=WAIT)

    refusal = _refusal(pairs, cwd, resume, {"sessionCapabilities": {"resume": None}})
    assert refusal.clause == "SETUP-10" and "'sessionCapabilities.resume'" in str(refusal)
    assert len(_sent(pairs, cwd, resume, "session/resume")) == 1


def test_SETUP_14_close_only_with_a_non_null_close_capability(pairs, cwd):
    def close(c, cwd, sid):
        return c.close_session(sid, timeout=WAIT)

    refusal = _refusal(pairs, cwd, close, {"sessionCapabilities": {"close": None}})
    assert refusal.clause == "SETUP-14" and "'sessionCapabilities.close'" in str(refusal)
    assert len(_sent(pairs, cwd, close, "session/close")) == 1


def test_LIST_01_list_only_with_a_non_null_list_capability(pairs, cwd):
    def listing(c, cwd, sid):
        return list(c.list_sessions(timeout=WAIT))

    refusal = _refusal(pairs, cwd, listing, {"sessionCapabilities": {"list": None}})
    assert refusal.clause == "LIST-01" and "'sessionCapabilities.list'" in str(refusal)
    assert len(_sent(pairs, cwd, listing, "session/list")) == 1


def test_DELETE_01_delete_only_with_a_non_null_delete_capability(pairs, cwd):
    def delete(c, cwd, sid):
        return c.session_delete(s.DeleteSessionRequest(session_id=sid), timeout=WAIT)

    refusal = _refusal(pairs, cwd, delete, {"sessionCapabilities": {"delete": None}})
    assert refusal.clause == "DELETE-01" and "'sessionCapabilities.delete'" in str(refusal)
    assert len(_sent(pairs, cwd, delete, "session/delete")) == 1


def test_SETUP_24_additional_directories_only_when_advertised(pairs, cwd):
    def with_roots(c, cwd, sid):
        return c.new_session(cwd, additional_directories=[cwd], timeout=WAIT)

    refusal = _refusal(pairs, cwd, with_roots, {"sessionCapabilities": {"list": {}}})
    assert refusal.clause == "SETUP-24" and "not advertised" in str(refusal)
    *_, ours = _sent(pairs, cwd, with_roots, "session/new")  # after the pair's own session/new
    assert ours["params"]["additionalDirectories"] == [cwd]


def test_SETUP_20_relative_additional_directory_is_refused(pairs, cwd):
    def relative(c, cwd, sid):
        request = s.NewSessionRequest(cwd=cwd, mcp_servers=[], additional_directories=["lib"])
        return c.session_new(request, timeout=WAIT)

    refusal = _refusal(pairs, cwd, relative, DEFAULT_CAPS)  # additionalDirectories advertised
    assert refusal.clause == "SETUP-20" and "'lib' is not absolute" in str(refusal)


def test_PROMPT_03_only_content_types_the_agent_allows(pairs, cwd):
    # The default agent: image and audio false, embeddedContext true.
    resource = s.EmbeddedResource(resource=s.TextResourceContents(uri="file:///a.txt", text="a"))
    (prompt,) = _sent(
        pairs, cwd, lambda c, cwd, sid: c.prompt(sid, [resource], timeout=WAIT), "session/prompt"
    )
    assert prompt["params"]["prompt"][0]["type"] == "resource"
    for kind, block in (
        ("image", s.ImageContent(data="AA==", mime_type="image/png")),
        ("audio", s.AudioContent(data="AA==", mime_type="audio/wav")),
    ):
        refusal = _refusal(
            pairs, cwd, lambda c, cwd, sid, b=block: c.prompt(sid, [b], timeout=WAIT), DEFAULT_CAPS
        )
        assert refusal.clause == "PROMPT-03"  # CONTENT-04 is the same rule, without a keyword
        assert f"did not advertise promptCapabilities.{kind}" in str(refusal)


def test_LIST_11_cursor_is_echoed_untouched_and_never_made_up(pairs, cwd):
    recorded = Recorded()
    pair = pairs(recorder=recorded)
    first, second = pair.new_session(cwd), pair.new_session(cwd)
    assert [i.session_id for i in pair.conn.list_sessions(timeout=WAIT)] == [first, second]
    cursors = [m["params"].get("cursor") for m in recorded.sent("session/list")]
    assert cursors == [None, "page2"]  # the agent's nextCursor, byte for byte
    written = len(recorded.lines)
    with pytest.raises(LocalProtocolError) as info:
        pair.conn.session_list(s.ListSessionsRequest(cursor="page3"), timeout=WAIT)
    assert info.value.clause == "LIST-11"
    assert [d for d, _ in recorded.lines[written:] if d == "out"] == []


def test_SETUP_25_convenience_makes_paths_absolute(pairs, tmp_path, monkeypatch):
    recorded = Recorded()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "extra").mkdir()
    pair = pairs(recorder=recorded)
    pair.conn.new_session(".", additional_directories=["extra"], timeout=WAIT)
    params = recorded.sent("session/new")[0]["params"]
    # spec OVERVIEW-06, SETUP-20: relative paths are made absolute by the conveniences.
    assert params["cwd"] == str(tmp_path)
    assert params["additionalDirectories"] == [str(tmp_path / "extra")]
    assert params["mcpServers"] == []


# -- Sessions ---------------------------------------------------------------------------------


def test_SETUP_09_load_result_null_is_success_and_history_replayed_first(pairs, cwd):
    agent = ScriptedAgent(load_null=True)
    pair = pairs(ReferenceClient(), agent)
    sid = pair.new_session(cwd)
    pair.conn.prompt(sid, "remember me", timeout=WAIT)
    result = pair.conn.load_session(sid, cwd, timeout=WAIT)
    assert result == s.LoadSessionResponse()
    view = pair.client.view(sid)
    assert [(m.role, m.text) for m in view.messages] == [
        ("user", "remember me"),
        ("agent", "remember me"),
    ]


def test_list_sessions_follows_the_cursor(pairs, cwd):
    # spec LIST-10, LIST-11: nextCursor echoed back untouched; its absence ends the listing.
    pair = pairs()
    first, second = pair.new_session(cwd), pair.new_session(cwd)
    assert [info.session_id for info in pair.conn.list_sessions(timeout=WAIT)] == [first, second]


def test_modes_and_config_options_follow_results(pairs, cwd):
    pair = pairs()
    sid = pair.new_session(cwd)
    view = pair.client.view(sid)
    assert view.current_mode == "ask" and view.mode_ids() == ["ask", "code"]
    pair.conn.set_mode(sid, "code", timeout=WAIT)
    assert view.current_mode == "code"
    pair.conn.set_config_option(sid, "model", "large", timeout=WAIT)
    assert view.config_option("model").kind.current_value == "large"
    pair.conn.set_config_option(sid, "fast", True, timeout=WAIT)  # booleans: advertised (INIT-13)
    assert view.config_option("fast").kind.current_value is True


# -- Turns --------------------------------------------------------------------------------------


def _agent_that_wrote(marker: bytes):
    """A ScriptedAgent, and an Event set once it has written a line containing ``marker``."""
    wrote = threading.Event()

    def recorder(direction: str, line: bytes) -> None:
        if direction == "out" and marker in line:
            wrote.set()

    class Recording(ScriptedAgent):
        def serve(self, stream, name="scripted-agent"):
            self.conn = Connection(stream, self.handlers(), name=name, recorder=recorder)
            return self.conn.start()

    return Recording(), wrote


def test_prompt_returns_after_every_update_was_delivered(pairs, cwd):
    # spec PROMPT-08: the turn's chunks are one message, complete when prompt() returns.
    agent, answered = _agent_that_wrote(b'"stopReason"')

    class Slow(ReferenceClient):
        def session_update(self, params):
            # A slow UI: the first update is shown only once the turn's answer is on the wire,
            # so that every other update (and the answer) is queued up behind it.
            answered.wait(WAIT)
            super().session_update(params)

    pair = pairs(Slow(), agent)
    sid = pair.new_session(cwd)
    answer = pair.conn.prompt(sid, json.dumps({"steps": [{"chunks": 150}]}), timeout=WAIT)
    assert answer.stop_reason == s.StopReason.END_TURN
    view = pair.client.view(sid)
    (message,) = [m for m in view.messages if m.message_id == "m1"]
    assert message.text == "".join(f"c{n} " for n in range(150))  # all, in wire order
    assert results_of(pair.client, sid) == [None]


def test_permission_request_sees_the_updates_sent_before_it(pairs, cwd):
    titles = []

    agent, asked = _agent_that_wrote(b'"session/request_permission"')

    class Slow(ReferenceClient):
        def session_update(self, params):
            asked.wait(WAIT)  # the request is on the wire while the tool call is being handled
            super().session_update(params)

    def ask(request, cancelled):
        known = client.tool_call(request.session_id, request.tool_call.tool_call_id)
        titles.append(known.title if known is not None else None)
        return "yes"

    client = Slow(permissions=Ask(ask))
    pair = pairs(client, agent)
    sid = pair.new_session(cwd)
    tool = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Reported first"}
    bare = {**PERMISSION, "params": {**PERMISSION["params"], "toolCall": {"toolCallId": "t1"}}}
    run_steps(pair.conn, client, sid, [{"update": tool}, bare])
    assert titles == ["Reported first"]


def test_TOOL_08_policies_answer_with_offered_options(pairs, cwd):
    # spec OVERVIEW-04, TOOL-09: permission requests are served, by a standing policy here.
    allowed = pairs(ReferenceClient(permissions=Allow()))
    (result,) = run_steps(allowed.conn, allowed.client, allowed.new_session(cwd), [PERMISSION])
    assert result == {"result": {"outcome": {"outcome": "selected", "optionId": "yes"}}}
    rejected = pairs(ReferenceClient(permissions=Reject()))
    sid = rejected.new_session(cwd)
    (result,) = run_steps(rejected.conn, rejected.client, sid, [PERMISSION])
    assert result == {"result": {"outcome": {"outcome": "selected", "optionId": "no"}}}
    assert rejected.client.view(sid).tool_calls["t1"].title == "Edit a file"


def test_PROMPT_21_cancel_answers_a_pending_permission_cancelled(pairs, cwd):
    asked, release = threading.Event(), threading.Event()
    seen_cancel = []

    def ask(request, cancelled):
        asked.set()
        release.wait(WAIT)  # a user who does not answer, and does not watch `cancelled` either
        seen_cancel.append(cancelled.is_set())
        return "yes"

    pair = pairs(ReferenceClient(permissions=Ask(ask)))
    sid = pair.new_session(cwd)
    turn = pair.conn.prompt_async(sid, json.dumps({"steps": [PERMISSION, {"wait_cancel": WAIT}]}))
    assert asked.wait(WAIT)
    pair.conn.cancel(sid)
    answer = turn.result(WAIT)
    assert seen_cancel == []  # answered at once: the dialog is still open, its user silent
    release.set()
    assert answer.stop_reason == s.StopReason.CANCELLED
    permission, waited = results_of(pair.client, sid)
    assert permission == {"result": {"outcome": {"outcome": "cancelled"}}}
    assert waited is True
    assert not [f for f in pair.conn.rules.findings if f.is_violation]


def test_PROMPT_21_permission_after_cancel_is_cancelled_without_asking(pairs, cwd):
    asked = []
    pair = pairs(ReferenceClient(permissions=Ask(lambda r, c: asked.append(r) or "yes")))
    sid = pair.new_session(cwd)
    turn = pair.conn.prompt_async(sid, json.dumps({"steps": [{"wait_cancel": WAIT}, PERMISSION]}))
    pair.conn.cancel(sid)
    assert turn.result(WAIT).stop_reason == s.StopReason.CANCELLED
    _, permission = results_of(pair.client, sid)
    assert permission == {"result": {"outcome": {"outcome": "cancelled"}}}
    assert asked == []
    # The next turn asks again.
    (permission,) = run_steps(pair.conn, pair.client, sid, [PERMISSION])
    assert permission["result"]["outcome"]["optionId"] == "yes"


class _AllowsAsTheCancelComes:
    """A policy that decides "yes" the moment the cancel is on its way (``on_cancel`` set the
    event), and does not look at the event again: the answer races the session/cancel."""

    def __init__(self):
        self.asked = threading.Event()

    def decide(self, request, cancelled):
        self.asked.set()
        cancelled.wait(WAIT)
        return s.RequestPermissionResponse(outcome=s.SelectedPermissionOutcome(option_id="yes"))


def test_PROMPT_21_an_answer_decided_as_the_cancel_goes_out_never_follows_it(pairs, cwd):
    # The answer is either on the wire before session/cancel (then it was not pending) or it is
    # "cancelled", never "yes" after it: the desk writes decided answers first and holds new
    # ones until the rules recorded the cancel.
    policy = _AllowsAsTheCancelComes()
    pair = pairs(ReferenceClient(permissions=policy))
    sid = pair.new_session(cwd)
    outcomes = set()
    for _ in range(30):
        policy.asked.clear()
        turn = pair.conn.prompt_async(
            sid, json.dumps({"steps": [PERMISSION, {"wait_cancel": WAIT}]})
        )
        assert policy.asked.wait(WAIT)
        pair.conn.cancel(sid)
        assert turn.result(WAIT).stop_reason == s.StopReason.CANCELLED
        outcomes.add(results_of(pair.client, sid)[0]["result"]["outcome"]["outcome"])
    # (On this machine the cancel wins every time, so this guards no deadlock and no violation;
    # it does not force the narrow window the hold closes.)
    assert outcomes <= {"cancelled", "selected"}
    assert [f.clause for f in pair.conn.rules.findings if f.is_violation] == []


class _SeesTools(ReferenceClient):
    """A reference client that says when a tool call reached its view."""

    def __init__(self) -> None:
        super().__init__()
        self.tool_seen = threading.Event()

    def session_update(self, params):
        super().session_update(params)  # merged into the view first
        if isinstance(params.update, s.ToolCall):
            self.tool_seen.set()


def test_PROMPT_20_cancel_marks_unfinished_tool_calls(pairs, cwd):
    pair = pairs(_SeesTools())
    sid = pair.new_session(cwd)
    tool = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t9",
        "title": "Long job",
        "status": "in_progress",
    }
    turn = pair.conn.prompt_async(
        sid, json.dumps({"steps": [{"update": tool}, {"wait_cancel": WAIT}]})
    )
    assert pair.client.tool_seen.wait(WAIT)  # the tool call is in the view
    pair.conn.cancel(sid)
    turn.result(WAIT)
    assert pair.client.view(sid).tool_calls["t9"].cancelled is True


def test_extension_methods_and_notifications(pairs, cwd):
    # spec EXT-07, EXT-08, EXT-10: custom requests answered, unknown ones -32601, notes taken.
    notes = []
    client = ReferenceClient(
        extensions={"_acpref/echo": lambda p: {"echo": p}, "_acpref/note": notes.append}
    )
    pair = pairs(client)
    sid = pair.new_session(cwd)
    echo, unknown, _ = run_steps(
        pair.conn,
        client,
        sid,
        [
            {"call": "_acpref/echo", "params": {"x": 1}},
            {"call": "_acpref/unknown", "params": {}},
            {"notify": "_acpref/note", "params": {"n": 2}},
        ],
    )
    assert echo == {"result": {"echo": {"x": 1}}}
    assert unknown["error"]["code"] == -32601  # spec EXT-08
    assert notes == [{"n": 2}]


# -- The agent process ----------------------------------------------------------------------


def test_agent_dying_mid_turn_fails_the_prompt_at_once(spawned, cwd):
    conn = spawned(ReferenceClient())
    conn.initialize(timeout=WAIT)
    sid = conn.new_session(cwd, timeout=WAIT).session_id
    # AgentExited (not RequestTimeout): the agent's death failed the prompt.
    with pytest.raises(AgentExited) as info:
        conn.prompt(sid, json.dumps({"steps": [{"stderr": 20}, {"die": 3}]}), timeout=WAIT)
    assert info.value.returncode == 3
    assert "exited with status 3" in str(info.value)
    assert conn.wait_closed(WAIT)


def test_agent_flooding_stderr_does_not_hang(spawned):
    # spec TRANSPORT-07: stderr is drained (and forwarded line by line), never parsed as ACP.
    lines = []
    conn = spawned(
        ReferenceClient(),
        "--flood-stderr",
        str(4 << 20),
        on_stderr_line=lines.append,
        stderr_limit=1 << 16,
    )
    conn.initialize(timeout=WAIT)  # answered: the flood did not block the agent
    conn.close()  # waits (bounded) for the drain to reach the end of stderr
    assert conn.stderr.total >= 4 << 20  # all of it was read
    assert len(conn.stderr.text()) <= 1 << 16  # and only the last part kept
    assert len(lines) >= (4 << 20) // 65536  # forwarded line by line


def test_TRANSPORT_10_close_shuts_the_agent_down_and_reports_its_exit(spawned, cwd):
    conn = spawned(ReferenceClient())
    conn.initialize(timeout=WAIT)
    assert conn.close() == 0  # stdin closed: the agent ended on its own
    assert conn.closed and conn.process.returncode == 0


def test_TRANSPORT_10_shutdown_ladder_ends_a_stubborn_agent():
    import sys

    stubborn = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', file=sys.stderr, flush=True); time.sleep(60)"
    )
    ready = threading.Event()
    conn = ClientSideConnection.spawn(
        ReferenceClient(), [sys.executable, "-c", stubborn], on_stderr_line=lambda line: ready.set()
    )
    assert ready.wait(WAIT)
    assert conn.close(grace=0.2, term_grace=0.2) == -9  # stdin closed, SIGTERM ignored: SIGKILL
    assert conn.process is not None and conn.process.stopped_by == "SIGKILL"


def test_no_thread_outlives_a_closed_connection(cwd):
    before = set(threading.enumerate())
    pair = Pair(ReferenceClient(permissions=Allow()))
    sid = pair.new_session(cwd)
    run_steps(
        pair.conn,
        pair.client,
        sid,
        [PERMISSION, call("terminal/create", command="sleep", args=["30"])],
    )
    pair.close()
    assert join_new_threads(before) == []
