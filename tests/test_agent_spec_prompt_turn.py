"""Spec tests of the agent side for prompt-turn.mdx, content.mdx, tool-calls.mdx, agent-plan.mdx,
slash-commands.mdx: one test per clause, named after it.

Clauses: the PROMPT, CONTENT, TOOL, PLAN, SLASH clauses of clauses.tsv whose side is ``agent``
or ``both``. Most tests drive the echo agent as a subprocess (one per module, a fresh session
per test, no new finding allowed); the others serve a small scripted agent, or the echo agent
with other client capabilities, in this process. Fixtures and helpers:
``tests/peers/agent_spec_kit.py``. Clauses not tested, and why: spec_notes/agent.md.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import Any, List

import pytest

from acpref import codec
from acpref import schema as s
from acpref._core.values import is_absolute_path
from acpref.agent import PromptTurn
from acpref.echo import COMMANDS
from acpref.errors import ErrorCode, LocalProtocolError, RpcError

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (  # noqa: E402
    WAIT,
    TestClient,
    allow_first,
    reject_first,
    spawn_echo,
)
from agent_scripted import Scripted  # noqa: E402
from agent_spec_kit import (  # noqa: E402
    echo,
    error_code,
    local,
    new_session,
    prompt_raw,
    raw_updates,
    scripted,
    shared,
    tool_content,
)

__all__ = ["echo", "local", "shared"]  # the fixtures, for pytest


# == prompt-turn.mdx ==============================================================================


def test_PROMPT_06_updates_name_the_prompt_session(echo: TestClient, tmp_path: Path) -> None:
    a, b = new_session(echo, tmp_path), new_session(echo, tmp_path)
    pa, pb = echo.prompt_async(a, "/stream 20"), echo.prompt_async(b, "/stream 20")
    pa.result(WAIT), pb.result(WAIT)
    assert [u.content.text for u in echo.updates_of(a, s.AgentMessageChunk)] == [
        f"chunk {i}/20 " for i in range(1, 21)
    ]
    assert [u.content.text for u in echo.updates_of(b, s.AgentMessageChunk)] == [
        f"chunk {i}/20 " for i in range(1, 21)
    ]


def test_PROMPT_07_message_ids_per_message(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, [s.TextContent(text="a"), s.TextContent(text="b")])
    echo.prompt(sid, "c")
    ids = [u.message_id for u in echo.updates_of(sid, s.AgentMessageChunk)]
    assert ids[0] == ids[1] != ids[2]


def test_PROMPT_09_usage_update(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/stream 4")
    raw = [u for u in raw_updates(echo, sid) if u["sessionUpdate"] == "usage_update"]
    assert len(raw) == 1 and codec.decode(raw[0], s.SessionUpdate, strict=True)


def test_PROMPT_10_usage_update_fields(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/stream 4")
    usage = [u for u in raw_updates(echo, sid) if u["sessionUpdate"] == "usage_update"][0]
    assert type(usage["used"]) is int and type(usage["size"]) is int
    assert re.fullmatch(r"[A-Z]{3}", usage["cost"]["currency"]) and "amount" in usage["cost"]


def test_PROMPT_11_simple_prompt_ends_the_turn(echo: TestClient, tmp_path: Path) -> None:
    assert echo.prompt(new_session(echo, tmp_path), "hi").stop_reason == s.StopReason.END_TURN


def test_PROMPT_12_agent_may_stop_early(local: Any, tmp_path: Path) -> None:
    client = local(scripted(lambda p, t: s.StopReason.MAX_TOKENS))
    assert client.prompt(new_session(client, tmp_path), "hi").stop_reason == s.StopReason.MAX_TOKENS


def test_PROMPT_13_permission_before_running(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/tool")
    inbound = [m for m in echo.inbound() if m.get("params", {}).get("sessionId") == sid]
    ask = next(i for i, m in enumerate(inbound) if m.get("method") == "session/request_permission")
    running = next(
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "session/update"
        and m["params"]["update"].get("status") == "in_progress"
    )
    assert ask < running


def test_PROMPT_14_in_progress_after_permission(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/tool")
    call_id = echo.updates_of(sid, s.ToolCall)[0].tool_call_id
    updates = [u for u in echo.updates_of(sid, s.ToolCallUpdate) if u.tool_call_id == call_id]
    assert updates[0].status == s.ToolCallStatus.IN_PROGRESS


def test_PROMPT_15_progress_updates_while_running(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/tool")
    updates = echo.updates_of(sid, s.ToolCallUpdate)
    assert any(u.status == s.ToolCallStatus.IN_PROGRESS and u.content for u in updates)


@pytest.mark.parametrize("policy", [allow_first, reject_first])
def test_PROMPT_16_tool_calls_end_completed_or_failed(
    echo: TestClient, tmp_path: Path, policy: Any
) -> None:
    echo.permission = policy
    sid = new_session(echo, tmp_path)
    for prompt in ("/tool", "/write t.txt x", f"/run {sys.executable} -V"):
        echo.prompt(sid, prompt)
    final = {}
    for u in echo.updates(sid):
        if isinstance(u, (s.ToolCall, s.ToolCallUpdate)) and u.status is not s.UNSET:
            final[u.tool_call_id] = u.status
    assert len(final) == 3 and set(final.values()) <= {
        s.ToolCallStatus.COMPLETED,
        s.ToolCallStatus.FAILED,
    }


def test_PROMPT_17_stop_reasons_are_from_the_enum(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    pending = echo.prompt_async(sid, "hi")
    pending.result(WAIT)
    assert next(m for m in echo.inbound() if m.get("id") == pending.id)["result"]["stopReason"] in {
        r.value for r in s.StopReason
    }


def test_PROMPT_22_cancel_stops_a_long_tool_quickly(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    prompt = echo.prompt_async(sid, f"/run {sys.executable} -c 'import time; time.sleep(60)'")
    echo.wait_for(
        lambda: any(isinstance(u, s.ToolCallUpdate) and u.content for u in echo.updates(sid))
    )
    echo.cancel(sid)
    assert prompt.result(5).stop_reason == s.StopReason.CANCELLED  # well before the 60 s sleep
    assert echo.terminals.killed


def test_PROMPT_23_a_cancelled_turn_is_answered_cancelled_whatever_the_agent_returns(
    local: Any, tmp_path: Path
) -> None:
    # The agent's code does not cooperate: it sees the cancel and still returns end_turn. The
    # agent side answers the original session/prompt with stopReason "cancelled" all the same.
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        started.set()
        assert turn.cancelled.wait(WAIT)
        return s.StopReason.END_TURN

    client = local(scripted(run))
    sid = new_session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    answer = next(m for d, m in client.wire if d == "in" and m.get("id") == prompt.id)
    assert answer["result"]["stopReason"] == "cancelled"


def test_echo_wait_is_cancelled_mid_turn(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid))
    echo.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_PROMPT_24_abort_exception_becomes_cancelled(local: Any, tmp_path: Path) -> None:
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        started.set()
        turn.cancelled.wait(WAIT)
        raise ConnectionAbortedError("the model API aborted")

    client = local(scripted(run))
    sid = new_session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED  # a result, not an error


def test_PROMPT_24_a_cancelled_turn_whose_handler_returns_no_stop_reason_is_cancelled(
    local: Any, tmp_path: Path
) -> None:
    # The handler returns something that is no stop reason after the cancel: still a result
    # with stopReason "cancelled", never a JSON-RPC error (without the cancel it is -32603).
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        if params.prompt[0].text == "go":
            started.set()
            assert turn.cancelled.wait(WAIT)
        return "not a stop reason"

    client = local(scripted(run))
    sid = new_session(client, tmp_path)
    with pytest.raises(RpcError) as refused:  # not cancelled: the handler's fault is the answer
        client.prompt(sid, "plain")
    assert refused.value.code == ErrorCode.INTERNAL_ERROR
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    answer = next(m for d, m in client.wire if d == "in" and m.get("id") == prompt.id)
    assert answer["result"]["stopReason"] == "cancelled"


def test_PROMPT_24_a_prompt_queued_behind_a_load_cancelled_twice_is_answered_cancelled(
    local: Any, tmp_path: Path
) -> None:
    # The prompt waits behind a session/load of its session (its handler has not started) when
    # the client sends session/cancel and then $/cancel_request of it: the turn is cancelled,
    # so its one answer is stopReason "cancelled", not the connection's -32800 (an error).
    loading, hold = threading.Event(), threading.Event()

    class SlowLoad(Scripted):
        def session_load(self, params: s.LoadSessionRequest) -> s.LoadSessionResponse:
            loading.set()
            hold.wait(WAIT)
            return super().session_load(params)

    client = local(lambda handle: SlowLoad(handle, ext_method=lambda method, params: {}))
    sid = new_session(client, tmp_path)
    load = client.request_async(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    assert loading.wait(WAIT)
    prompt = client.prompt_async(sid, "go")
    client.cancel(sid)
    prompt.cancel()
    client.request("_fence", {})  # answered in wire order: both cancels were read before it
    hold.set()
    load.result(WAIT)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    answers = [m for d, m in client.wire if d == "in" and m.get("id") == prompt.id]
    assert [a.get("result", {}).get("stopReason") for a in answers] == ["cancelled"], answers


def test_PROMPT_25_updates_after_cancel_before_the_answer(local: Any, tmp_path: Path) -> None:
    started = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        started.set()
        turn.cancelled.wait(WAIT)
        turn.update(
            s.ToolCall(
                tool_call_id=turn.new_tool_call_id(),
                title="cleanup",
                status=s.ToolCallStatus.COMPLETED,
            )
        )
        turn.say("stopped")
        return s.StopReason.CANCELLED

    client = local(scripted(run))
    sid = new_session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert started.wait(WAIT)
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert client.text_of(sid) == "stopped" and client.findings == []


def test_PROMPT_26_no_update_after_the_answer(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    for prompt in ("/stream 10", "/tool", "hi", "/stream 3"):
        echo.prompt(sid, prompt)
    echo.request(
        "session/list", s.ListSessionsRequest()
    )  # a fence: answered after anything sent before
    inbound = echo.inbound()
    last_answer = max(i for i, m in enumerate(inbound) if "stopReason" in (m.get("result") or {}))
    turn_content = {
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
    }
    late = [
        m
        for m in inbound[last_answer:]
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == sid
        and m["params"]["update"]["sessionUpdate"] in turn_content
    ]
    assert late == []
    assert "PROMPT-26" not in echo.clauses()  # the witness checked every turn in wire order


# == content.mdx ==================================================================================


@pytest.mark.parametrize(
    "block, clause",
    [
        ({"type": "video", "data": "x"}, "CONTENT-01"),
        ({"type": "image", "data": "aGk="}, "CONTENT-06"),
        ({"type": "resource", "resource": {"uri": "file:///a"}}, "CONTENT-07"),
        ({"type": "resource_link", "uri": "file:///a"}, "CONTENT-08"),
    ],
)
def test_CONTENT_01_06_07_08_malformed_blocks_are_invalid_params(
    echo: TestClient, tmp_path: Path, block: dict, clause: str
) -> None:
    sid = new_session(echo, tmp_path)
    assert error_code(lambda: prompt_raw(echo, sid, [block])) == ErrorCode.INVALID_PARAMS, clause
    assert echo.prompt(sid, "still fine").stop_reason == s.StopReason.END_TURN


def test_CONTENT_02_text_prompt(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    assert (
        prompt_raw(echo, sid, [{"type": "text", "text": "plain"}]).stop_reason
        == s.StopReason.END_TURN
    )


def test_CONTENT_04_unadvertised_blocks_are_refused(local: Any, tmp_path: Path) -> None:
    client = local(scripted())
    sid = new_session(client, tmp_path)
    for block in (
        s.ImageContent(data="aGk=", mime_type="image/png"),
        s.AudioContent(data="aGk=", mime_type="audio/wav"),
        s.EmbeddedResource(resource=s.TextResourceContents(uri="file:///a", text="x")),
    ):
        assert error_code(lambda b=block: client.prompt(sid, [b])) == ErrorCode.INVALID_PARAMS


def test_CONTENT_09_resource_link_is_baseline(local: Any, tmp_path: Path) -> None:
    client = local(
        scripted(
            capabilities=lambda: s.AgentCapabilities(prompt_capabilities=s.PromptCapabilities())
        )
    )
    sid = new_session(client, tmp_path)
    assert (
        client.prompt(sid, [s.ResourceLink(uri="file:///a", name="a")]).stop_reason
        == s.StopReason.END_TURN
    )


# == tool-calls.mdx ===============================================================================


def test_TOOL_01_tool_call_before_its_updates(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/tool")
    echo.prompt(sid, "/write a.txt b")
    seen: set = set()
    for u in echo.updates(sid):
        if isinstance(u, s.ToolCall):
            assert u.title
            seen.add(u.tool_call_id)
        elif isinstance(u, s.ToolCallUpdate):
            assert u.tool_call_id in seen


def test_TOOL_02_tool_call_ids_unique_across_restarts(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    first = spawn_echo("--state-dir", state)
    try:
        sid = new_session(first, tmp_path)
        first.prompt(sid, "/tool")
        ids = [u.tool_call_id for u in first.updates_of(sid, s.ToolCall)]
    finally:
        first.close()
    second = spawn_echo("--state-dir", state)
    try:
        second.request(
            "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        )
        second.prompt(sid, "/tool")
        live = [u.tool_call_id for u in second.updates_of(sid, s.ToolCall)]
        assert live[0] == ids[0] and len(set(live)) == 2  # the replayed one, then a new one
        assert second.findings == []
    finally:
        second.close()


def test_TOOL_04_kinds_on_the_wire(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/mode code")
    kinds = [u["kind"] for u in raw_updates(echo, sid) if u["sessionUpdate"] == "tool_call"]
    assert kinds == ["switch_mode"]
    with pytest.raises(codec.DecodeError):
        codec.decode({"toolCallId": "c", "title": "t", "kind": "compile"}, s.ToolCall, strict=True)


def test_TOOL_05_updates_name_known_tool_calls(local: Any, tmp_path: Path) -> None:
    refused: List[str] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        try:
            turn.update(
                s.ToolCallUpdate(tool_call_id="never_announced", status=s.ToolCallStatus.COMPLETED)
            )
        except LocalProtocolError as exc:
            refused.append(exc.clause)

    client = local(scripted(run))
    client.prompt(new_session(client, tmp_path), "go")
    assert refused == ["TOOL-05"]


def test_TOOL_07_permission_request_shape(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/tool")
    raw = [
        m["params"]
        for m in echo.inbound()
        if m.get("method") == "session/request_permission" and m["params"]["sessionId"] == sid
    ]
    assert raw and codec.decode(raw[0], s.RequestPermissionRequest, strict=True)


def test_TOOL_10_option_ids_unique(local: Any, tmp_path: Path) -> None:
    refused: List[str] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        option = s.PermissionOption(
            option_id="same", name="x", kind=s.PermissionOptionKind.ALLOW_ONCE
        )
        turn.update(s.ToolCall(tool_call_id="c1", title="t"))
        try:
            turn.request_permission(s.ToolCallUpdate(tool_call_id="c1"), [option, option])
        except LocalProtocolError as exc:
            refused.append(exc.clause)

    client = local(scripted(run))
    client.prompt(new_session(client, tmp_path), "go")
    assert refused == ["spec-gap:unique-option-ids"]  # refused live, reported as a gap
    options = [o.option_id for p in client.permission_requests for o in p.options]
    assert options == []


def test_TOOL_11_statuses_on_the_wire(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/tool")
    statuses = {
        u.get("status")
        for u in raw_updates(echo, sid)
        if u["sessionUpdate"].startswith("tool_call")
    }
    assert statuses - {None} <= {"pending", "in_progress", "completed", "failed"}


def test_TOOL_12_content_kinds(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/write d.txt x")
    echo.prompt(sid, "/tool")
    echo.prompt(sid, f"/run {sys.executable} -V")
    types = {c["type"] for u in raw_updates(echo, sid) for c in tool_content(u)}
    assert types == {"diff", "content", "terminal"}


def test_TOOL_13_diff_paths_absolute_and_new_files_without_old_text(
    echo: TestClient, tmp_path: Path
) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/write brand-new.txt hello")
    diff = [c for u in raw_updates(echo, sid) for c in tool_content(u) if c.get("type") == "diff"][
        0
    ]
    assert (
        is_absolute_path(diff["path"])
        and diff.get("oldText") is None
        and diff["newText"] == "hello"
    )


def test_TOOL_14_terminal_embedded_before_release(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, f"/run {sys.executable} -V")
    inbound = echo.inbound()
    embed = next(
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == sid
        and any(c.get("type") == "terminal" for c in tool_content(m["params"]["update"]))
    )
    release = next(
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "terminal/release" and m["params"]["sessionId"] == sid
    )
    assert embed < release


def test_TOOL_15_locations_are_absolute(local: Any, echo: TestClient, tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("x", encoding="utf-8")
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/read r.txt")
    locations = [loc for u in raw_updates(echo, sid) for loc in u.get("locations") or []]
    assert locations and all(is_absolute_path(loc["path"]) for loc in locations)
    refused: List[str] = []

    def run(params: Any, turn: PromptTurn) -> Any:
        try:
            turn.update(
                s.ToolCall(
                    tool_call_id="c", title="t", locations=[s.ToolCallLocation(path="relative.txt")]
                )
            )
        except LocalProtocolError as exc:
            refused.append(exc.clause)

    client = local(scripted(run))
    client.prompt(new_session(client, tmp_path), "go")
    assert refused == ["TOOL-15"]


# == agent-plan.mdx ===============================================================================


def _plans(client: TestClient, tmp_path: Path) -> List[s.Plan]:
    sid = new_session(client, tmp_path)
    client.prompt(sid, "/stream 3")
    return client.updates_of(sid, s.Plan)


def test_PLAN_01_plan_updates(echo: TestClient, tmp_path: Path) -> None:
    assert _plans(echo, tmp_path)


def test_PLAN_02_entries_have_content_priority_status(echo: TestClient, tmp_path: Path) -> None:
    for plan in _plans(echo, tmp_path):
        assert all(
            e.content
            and isinstance(e.priority, s.PlanEntryPriority)
            and isinstance(e.status, s.PlanEntryStatus)
            for e in plan.entries
        )


def test_PLAN_03_plans_follow_progress(echo: TestClient, tmp_path: Path) -> None:
    plans = _plans(echo, tmp_path)
    done = [sum(e.status == s.PlanEntryStatus.COMPLETED for e in p.entries) for p in plans]
    assert done == sorted(done) and done[-1] == len(plans[-1].entries)


def test_PLAN_04_every_update_is_complete(echo: TestClient, tmp_path: Path) -> None:
    plans = _plans(echo, tmp_path)
    for earlier, later in zip(plans, plans[1:]):
        assert {e.content for e in earlier.entries} <= {e.content for e in later.entries}


def test_PLAN_06_entries_may_change(echo: TestClient, tmp_path: Path) -> None:
    plans = _plans(echo, tmp_path)
    assert len({len(p.entries) for p in plans}) > 1


# == slash-commands.mdx ===========================================================================


def test_SLASH_01_commands_after_session_setup(echo: TestClient, tmp_path: Path) -> None:
    pending = echo.request_async(
        "session/new", s.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
    )
    sid = pending.result(WAIT).session_id
    echo.wait_commands(sid)
    inbound = echo.inbound()
    answer = next(i for i, m in enumerate(inbound) if m.get("id") == pending.id)
    update = next(
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "session/update" and m["params"]["sessionId"] == sid
    )
    assert answer < update


def test_SLASH_02_commands_have_name_and_description(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    raw = [u for u in raw_updates(echo, sid) if u["sessionUpdate"] == "available_commands_update"][
        0
    ]
    for command in raw["availableCommands"]:
        assert command["name"] and command["description"]
        assert set(command.get("input", {"hint": ""})) == {"hint"}


def test_SLASH_03_commands_again_after_load(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    echo.wait_for(lambda: len(echo.updates_of(sid, s.AvailableCommandsUpdate)) == 2)
    assert echo.updates_of(sid, s.AvailableCommandsUpdate)[-1].available_commands


def test_SLASH_06_command_with_other_blocks(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(
        sid, [s.TextContent(text="/help"), s.ImageContent(data="aGk=", mime_type="image/png")]
    )
    assert all(f"/{name}" in echo.text_of(sid) for name in COMMANDS)
