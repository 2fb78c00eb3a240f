"""Spec tests of the agent side for session-setup.mdx, session-list.mdx, session-delete.mdx: one
test per clause, named after it.

Clauses: the SETUP, LIST, DELETE clauses of clauses.tsv whose side is ``agent`` or ``both``.
Most tests drive the echo agent as a subprocess (one per module, a fresh session per test, no
new finding allowed); the others serve a small scripted agent, or the echo agent with other
client capabilities, in this process. Fixtures and helpers: ``tests/peers/agent_spec_kit.py``.
Clauses not tested, and why: spec_notes/agent.md.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from acpref import codec
from acpref import schema as s
from acpref._core import Party
from acpref._core.values import is_absolute_path, is_iso8601
from acpref.echo import EchoAgent
from acpref.errors import ErrorCode

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (  # noqa: E402
    WAIT,
    TestClient,
    in_process,
    spawn_echo,
)
from agent_spec_kit import (  # noqa: E402
    HISTORY,
    echo,
    error_code,
    local,
    new_session,
    raw_updates,
    shared,
)

__all__ = ["echo", "local", "shared"]  # the fixtures, for pytest


# == session-setup.mdx ============================================================================


def test_SETUP_02_session_ids_are_unique(echo: TestClient, tmp_path: Path) -> None:
    ids = {echo.new_session(str(tmp_path)).session_id for _ in range(100)}
    assert len(ids) == 100


def test_SETUP_05_load_replays_the_conversation(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "question one")
    echo.prompt(sid, "/tool")
    echo.prompt(sid, "/stream 2")
    live = [u for u in echo.updates(sid) if isinstance(u, HISTORY)]
    count = len(echo.notifications)
    echo.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    replay = [
        n.update
        for n in echo.notifications[count:]
        if n.session_id == sid and isinstance(n.update, HISTORY)
    ]
    assert [u for u in replay if not isinstance(u, s.UserMessageChunk)] == live
    assert [u.content.text for u in replay if isinstance(u, s.UserMessageChunk)] == [
        "question one",
        "/tool",
        "/stream 2",
    ]


def test_SETUP_06_replayed_message_ids_are_unique_per_message(
    echo: TestClient, tmp_path: Path
) -> None:
    sid = new_session(echo, tmp_path)
    for text in ("a", "b", "/stream 3", "c"):
        echo.prompt(sid, text)
    count = len(echo.notifications)
    echo.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    replay = [
        n.update
        for n in echo.notifications[count:]
        if isinstance(n.update, (s.UserMessageChunk, s.AgentMessageChunk, s.AgentThoughtChunk))
    ]
    runs = [
        u.message_id
        for i, u in enumerate(replay)
        if i == 0 or u.message_id != replay[i - 1].message_id
    ]
    assert len(runs) == len(set(runs))  # one contiguous run per message id


def test_SETUP_07_load_replays_history_before_response(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    for i in range(25):
        echo.prompt(sid, f"turn {i}")
    echo.prompt(sid, "/stream 30")
    pending = echo.request_async(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    pending.result(WAIT)
    inbound = echo.inbound()
    answer = next(i for i, m in enumerate(inbound) if m.get("id") == pending.id)
    start = max(
        i
        for i, m in enumerate(inbound[:answer])
        if m.get("id") is not None and "result" in m or i == 0
    )
    replayed = [m for m in inbound[start:answer] if m.get("method") == "session/update"]
    users = [m for m in replayed if m["params"]["update"]["sessionUpdate"] == "user_message_chunk"]
    assert [u["params"]["update"]["content"]["text"] for u in users][:25] == [
        f"turn {i}" for i in range(25)
    ]
    after = [
        m
        for m in inbound[answer:]
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] != "available_commands_update"
    ]
    assert after == []


def test_SETUP_08_load_result_is_an_object(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    pending = echo.request_async(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    pending.result(WAIT)
    answer = next(m for m in echo.inbound() if m.get("id") == pending.id)
    assert (
        isinstance(answer["result"], dict) and answer["result"]["modes"]["currentModeId"] == "ask"
    )


def test_SETUP_12_resume_sends_no_replay(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "remember me")
    before = len(echo.updates(sid))
    echo.request(
        "session/resume", s.ResumeSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    echo.wait_for(
        lambda: len(echo.updates_of(sid, s.AvailableCommandsUpdate)) == 2, what="the commands"
    )
    # Only the commands, sent after the answer (SLASH-01): no history.
    assert [type(u) for u in echo.updates(sid)[before:]] == [s.AvailableCommandsUpdate]


def test_SETUP_13_resume_result_has_modes_and_options(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    result = echo.request(
        "session/resume", s.ResumeSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    assert result.modes.current_mode_id == "ask" and [o.id for o in result.config_options][:2] == [
        "mode",
        "model",
    ]


def test_SETUP_16_close_cancels_the_running_turn(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "still waiting" in echo.text_of(sid), what="the turn to run")
    close = echo.request_async("session/close", s.CloseSessionRequest(session_id=sid))
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    close.result(WAIT)
    inbound = echo.inbound()
    assert next(i for i, m in enumerate(inbound) if m.get("id") == prompt.id) < next(
        i for i, m in enumerate(inbound) if m.get("id") == close.id
    )


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
def test_SETUP_16_close_ends_a_turn_waiting_on_a_permission_the_client_never_answers(
    tmp_path: Path, method: str
) -> None:
    # spec SETUP-16: the close cancels the work as session/cancel would, then frees the session.
    # The client owes "cancelled" to a permission request only after its own session/cancel
    # (PROMPT-21); after a close it owes nothing, and this client never answers. The agent
    # withdraws the request ($/cancel_request, CANCEL-08) and ends the turn "cancelled" at once,
    # instead of waiting for an answer that will not come.
    client = spawn_echo()
    asked, released = threading.Event(), threading.Event()

    def never(params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        asked.set()
        released.wait(WAIT)  # holds the answer until the test is done
        return s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())

    client.permission = never
    try:
        sid = new_session(client, tmp_path)
        prompt = client.prompt_async(sid, "/tool")
        assert asked.wait(WAIT)
        ask = next(
            m for m in client.inbound() if m.get("method") == "session/request_permission"
        )
        params = {"sessionId": sid}
        end = client.request_async(method, params)
        assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
        assert end.result(WAIT) is not None  # answered at once, with its result (SETUP-17)
        withdrawn = [
            m["params"]["requestId"]
            for m in client.inbound()
            if m.get("method") == "$/cancel_request"
        ]
        assert withdrawn == [ask["id"]]
        released.set()
        # The late answer is dropped (RPC-08): the connection goes on.
        other = new_session(client, tmp_path)
        assert client.prompt(other, "hello").stop_reason == s.StopReason.END_TURN
        assert [f for f in client.findings if f.blame is Party.AGENT] == []
    finally:
        released.set()
        client.close()


@contextlib.contextmanager
def _close_waiting(tmp_path: Path, method: str, params: Any) -> Iterator[Tuple[Any, ...]]:
    """session/close arrives while ``method`` of its session is being handled (held at a gate).

    Yields the client, the session id, the pending ``method`` and close, and the gate.
    """
    gate, entered = threading.Event(), threading.Event()

    class Slow(EchoAgent):
        def session_set_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
            entered.set()
            gate.wait(WAIT)
            return super().session_set_mode(params)  # sends the mode option's update

        def session_set_config_option(
            self, params: s.SetSessionConfigOptionRequest
        ) -> s.SetSessionConfigOptionResponse:
            entered.set()
            gate.wait(WAIT)
            return super().session_set_config_option(params)

    client = in_process(Slow)
    try:
        sid = new_session(client, tmp_path)
        other = client.request_async(method, params(sid))
        assert entered.wait(WAIT)
        close = client.request_async("session/close", s.CloseSessionRequest(session_id=sid))
        assert not close.wait(0.3), "close answered while a request of its session was running"
        yield client, sid, other, close, gate
        gate.set()
        other.result(WAIT)  # answered with its result, not -32603
        close.result(WAIT)
        answers = [m.get("id") for m in client.inbound() if "method" not in m]
        assert answers.index(other.id) < answers.index(close.id)
        assert client.clauses() == []
    finally:
        gate.set()
        client.close()


def _set_mode(sid: str) -> s.SetSessionModeRequest:
    return s.SetSessionModeRequest(session_id=sid, mode_id="code")


def test_SETUP_16_close_answers_after_the_other_requests_of_its_session(tmp_path: Path) -> None:
    # spec-gap close-in-flight: a request of the session still being handled when session/close
    # arrives finishes first, updates included (they name a session the client still has).
    with _close_waiting(tmp_path, "session/set_mode", _set_mode):
        pass
    with _close_waiting(
        tmp_path,
        "session/set_config_option",
        lambda sid: s.SetSessionConfigOptionRequest(
            session_id=sid, config_id="model", value="echo-2"
        ),
    ):
        pass


def test_SETUP_16_close_answers_after_a_request_of_its_session_read_after_it(
    tmp_path: Path,
) -> None:
    # spec-gap close-in-flight: a close is answered after every other request of its session,
    # read before or after it (the core's Waits effect names the close in ``before``).
    gates = {"mode": threading.Event(), "config": threading.Event()}
    entered = {"mode": threading.Event(), "config": threading.Event()}

    class Slow(EchoAgent):
        def session_set_mode(self, params: s.SetSessionModeRequest) -> s.SetSessionModeResponse:
            entered["mode"].set()
            gates["mode"].wait(WAIT)
            return super().session_set_mode(params)

        def session_set_config_option(
            self, params: s.SetSessionConfigOptionRequest
        ) -> s.SetSessionConfigOptionResponse:
            entered["config"].set()
            gates["config"].wait(WAIT)
            return super().session_set_config_option(params)

    client = in_process(Slow)
    try:
        sid = new_session(client, tmp_path)
        first = client.request_async("session/set_mode", _set_mode(sid))
        assert entered["mode"].wait(WAIT)
        close = client.request_async("session/close", s.CloseSessionRequest(session_id=sid))
        later = client.request_async(
            "session/set_config_option",
            s.SetSessionConfigOptionRequest(session_id=sid, config_id="model", value="echo-2"),
        )
        assert entered["config"].wait(WAIT)  # it runs: it waits for no close
        gates["mode"].set()
        first.result(WAIT)
        assert not close.wait(0.3), "close answered while a request read after it was running"
        gates["config"].set()
        later.result(WAIT)
        close.result(WAIT)
        answers = [m.get("id") for m in client.inbound() if "method" not in m]
        assert answers.index(first.id) < answers.index(later.id) < answers.index(close.id)
        assert client.clauses() == []
    finally:
        for gate in gates.values():
            gate.set()
        client.close()


def test_SETUP_16_prompt_while_close_waits_is_cancelled_at_once(tmp_path: Path) -> None:
    # spec-gap close-in-flight: a turn that starts while the session is being closed is
    # cancelled as it starts, as a running turn is when the close arrives.
    with _close_waiting(tmp_path, "session/set_mode", _set_mode) as (client, sid, *_):
        prompt = client.prompt_async(sid, "/wait")  # waits until cancelled
        assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_SETUP_16_two_closes_of_a_session_do_not_wait_for_each_other(
    echo: TestClient, tmp_path: Path
) -> None:
    # spec-gap close-in-flight: a close waits for the session's other requests, not for another
    # close (both would wait forever); the first ends the session, the second finds none.
    sid = new_session(echo, tmp_path)
    first, second = (
        echo.request_async("session/close", s.CloseSessionRequest(session_id=sid)) for _ in range(2)
    )
    assert first.result(WAIT) is not None
    assert error_code(lambda: second.result(WAIT)) == ErrorCode.RESOURCE_NOT_FOUND
    echo.witness.findings[:] = [f for f in echo.witness.findings if f.clause != "SETUP-15"]


def test_SETUP_17_close_answers_empty_object(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    pending = echo.request_async("session/close", s.CloseSessionRequest(session_id=sid))
    pending.result(WAIT)
    assert next(m for m in echo.inbound() if m.get("id") == pending.id)["result"] == {}


def test_SETUP_18_close_of_unknown_session_is_an_error(echo: TestClient) -> None:
    assert (
        error_code(
            lambda: echo.request("session/close", s.CloseSessionRequest(session_id="sess_none"))
        )
        == ErrorCode.RESOURCE_NOT_FOUND
    )
    echo.witness.findings[:] = [
        f for f in echo.witness.findings if f.clause != "SETUP-15"
    ]  # our own probe


def test_SETUP_19_relative_paths_resolve_against_cwd_only(echo: TestClient, tmp_path: Path) -> None:
    cwd, extra = tmp_path / "cwd", tmp_path / "extra"
    cwd.mkdir()
    extra.mkdir()
    (cwd / "same.txt").write_text("from cwd", encoding="utf-8")
    (extra / "same.txt").write_text("from extra", encoding="utf-8")
    sid = new_session(echo, cwd, additional_directories=[str(extra)])
    echo.prompt(sid, "/read same.txt")
    assert "from cwd" in echo.text_of(sid) and "from extra" not in echo.text_of(sid)


def test_SETUP_21_no_additional_directories_means_cwd_only(
    echo: TestClient, tmp_path: Path
) -> None:
    cwd, other = tmp_path / "cwd", tmp_path / "other"
    cwd.mkdir()
    other.mkdir()
    (other / "f.txt").write_text("x", encoding="utf-8")
    sid = new_session(echo, cwd, additional_directories=[])
    echo.prompt(sid, f"/read {other / 'f.txt'}")
    assert "outside this session's roots ['" + str(cwd) + "']" in echo.text_of(sid)


def test_SETUP_23_load_without_roots_does_not_restore_them(
    echo: TestClient, tmp_path: Path
) -> None:
    cwd, extra = tmp_path / "cwd", tmp_path / "extra"
    cwd.mkdir()
    extra.mkdir()
    (extra / "f.txt").write_text("x", encoding="utf-8")
    sid = new_session(echo, cwd, additional_directories=[str(extra)])
    echo.request("session/load", s.LoadSessionRequest(session_id=sid, cwd=str(cwd), mcp_servers=[]))
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(cwd)))
    assert [i.additional_directories for i in page.sessions if i.session_id == sid] == [[]]
    echo.prompt(sid, f"/read {extra / 'f.txt'}")
    assert "outside this session's roots" in echo.text_of(sid)


def test_SETUP_26_session_cwd_not_process_cwd(tmp_path: Path) -> None:
    elsewhere, work = tmp_path / "elsewhere", tmp_path / "work"
    elsewhere.mkdir()
    work.mkdir()
    import os

    here = os.getcwd()
    os.chdir(elsewhere)
    try:
        client = spawn_echo()
    finally:
        os.chdir(here)
    try:
        sid = new_session(client, work)
        client.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
        client.prompt(sid, f"/run {sys.executable} -c 'import os; print(os.getcwd())'")
        assert str(work) in client.text_of(sid)
        assert client.terminals.created[0].cwd == str(work)
    finally:
        client.close()


def test_SETUP_27_cwd_is_a_root(echo: TestClient, tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("inside", encoding="utf-8")
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, f"/read {tmp_path / 'in.txt'}")
    assert "inside" in echo.text_of(sid)


def test_SETUP_28_writes_outside_the_roots_are_refused(echo: TestClient, tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    sid = new_session(echo, cwd)
    echo.prompt(sid, f"/write {tmp_path / 'escape.txt'} nope")
    assert not (tmp_path / "escape.txt").exists() and "not writing" in echo.text_of(sid)


# == session-list.mdx =============================================================================


def test_LIST_02_empty_params_give_the_first_page(echo: TestClient, tmp_path: Path) -> None:
    new_session(echo, tmp_path)
    assert echo.request("session/list", {}).sessions


def test_LIST_04_cwd_filter(echo: TestClient, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = new_session(echo, tmp_path / "a")
    new_session(echo, tmp_path / "b")
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path / "a")))
    assert [i.session_id for i in page.sessions] == [a]


def test_LIST_05_session_info_shape(echo: TestClient, tmp_path: Path) -> None:
    new_session(echo, tmp_path)
    pending = echo.request_async("session/list", s.ListSessionsRequest())
    pending.result(WAIT)
    raw = next(m for m in echo.inbound() if m.get("id") == pending.id)["result"]
    codec.decode(raw, s.ListSessionsResponse, strict=True)
    assert all(is_absolute_path(i["cwd"]) and i["sessionId"] for i in raw["sessions"])


def test_LIST_06_updated_at_is_iso8601(echo: TestClient, tmp_path: Path) -> None:
    new_session(echo, tmp_path)
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    assert all(is_iso8601(i.updated_at) for i in page.sessions)


def test_LIST_07_additional_directories_as_last_set(echo: TestClient, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    sid = new_session(echo, tmp_path, additional_directories=[str(a), str(b)])
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    assert page.sessions[0].additional_directories == [str(a), str(b)]
    echo.request(
        "session/resume",
        s.ResumeSessionRequest(
            session_id=sid, cwd=str(tmp_path), additional_directories=[str(b)], mcp_servers=[]
        ),
    )
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    assert page.sessions[0].additional_directories == [str(b)]


def test_LIST_09_no_match_is_an_empty_page(echo: TestClient, tmp_path: Path) -> None:
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path / "unused")))
    assert page.sessions == [] and page.next_cursor is s.UNSET


def test_LIST_12_invalid_cursor_is_an_error(echo: TestClient) -> None:
    assert (
        error_code(lambda: echo.request("session/list", s.ListSessionsRequest(cursor="garbage")))
        == ErrorCode.INVALID_PARAMS
    )
    echo.witness.findings[:] = [
        f for f in echo.witness.findings if f.clause != "LIST-11"
    ]  # our own probe


def test_LIST_13_pages_are_bounded(local: Any, tmp_path: Path) -> None:
    client = local(EchoAgent)
    made = {client.new_session(str(tmp_path)).session_id for _ in range(120)}
    seen: List[str] = []
    cursor: Any = s.UNSET
    while True:
        page = client.request("session/list", s.ListSessionsRequest(cursor=cursor))
        assert len(page.sessions) <= 50
        seen += [i.session_id for i in page.sessions]
        if page.next_cursor is s.UNSET:
            break
        cursor = page.next_cursor
    assert sorted(seen) == sorted(made)
    assert client.findings == []


def test_LIST_14_session_info_update_sets_a_title(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/stream 1")
    assert echo.updates_of(sid, s.SessionInfoUpdate)[0].title == "Echo: streamed 1 chunks"


def test_LIST_16_session_info_update_carries_no_session_fields(
    echo: TestClient, tmp_path: Path
) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/stream 1")
    info = [u for u in raw_updates(echo, sid) if u["sessionUpdate"] == "session_info_update"]
    assert info and all(not {"sessionId", "cwd", "additionalDirectories"} & set(u) for u in info)


def test_LIST_17_listing_changes_nothing(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    before = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    count = len(echo.notifications)
    after = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    assert (
        before == after
        and len(echo.notifications) == count
        and sid in [i.session_id for i in after.sessions]
    )


# == session-delete.mdx ===========================================================================


def test_DELETE_02_delete_answers_empty_object(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    pending = echo.request_async("session/delete", s.DeleteSessionRequest(session_id=sid))
    pending.result(WAIT)
    assert next(m for m in echo.inbound() if m.get("id") == pending.id)["result"] == {}


def test_DELETE_03_deleted_sessions_are_not_listed(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.request("session/delete", s.DeleteSessionRequest(session_id=sid))
    page = echo.request("session/list", s.ListSessionsRequest(cwd=str(tmp_path)))
    assert sid not in [i.session_id for i in page.sessions]


def test_DELETE_04_deleting_twice_succeeds(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    for _ in range(2):
        assert (
            echo.request("session/delete", s.DeleteSessionRequest(session_id=sid))
            == s.DeleteSessionResponse()
        )
    assert (
        echo.request("session/delete", s.DeleteSessionRequest(session_id="sess_never"))
        == s.DeleteSessionResponse()
    )


def test_DELETE_05_deleted_session_cannot_be_loaded(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.request("session/delete", s.DeleteSessionRequest(session_id=sid))
    load = s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    assert (
        error_code(lambda: echo.request("session/load", load)) == ErrorCode.RESOURCE_NOT_FOUND
    )  # hard delete
