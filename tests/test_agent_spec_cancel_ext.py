"""Spec tests of the agent side for cancellation.mdx, extensibility.mdx: one test per clause, named
after it.

Clauses: the CANCEL, EXT clauses of clauses.tsv whose side is ``agent`` or ``both``. Most tests
drive the echo agent as a subprocess (one per module, a fresh session per test, no new finding
allowed); the others serve a small scripted agent, or the echo agent with other client
capabilities, in this process. Fixtures and helpers: ``tests/peers/agent_spec_kit.py``. Clauses
not tested, and why: spec_notes/agent.md.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from acpref import codec
from acpref import schema as s
from acpref._core import Party
from acpref.agent import PromptTurn
from acpref.echo import EchoAgent
from acpref.errors import ErrorCode

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (  # noqa: E402
    WAIT,
    TestClient,
    in_process,
    strict_problems,
)
from agent_spec_kit import (  # noqa: E402
    echo,
    error_code,
    local,
    new_session,
    raw_init,
    scripted,
    shared,
)

__all__ = ["echo", "local", "shared"]  # the fixtures, for pytest


# == cancellation.mdx =============================================================================


def test_CANCEL_01_cancel_request_for_a_prompt(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid))
    prompt.cancel()
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_CANCEL_02_unknown_dollar_notifications_are_ignored(
    echo: TestClient, tmp_path: Path
) -> None:
    echo.notify("$/unknown_thing", {"x": 1})
    echo.notify("$/cancel_request", {"requestId": 987654})
    assert echo.prompt(new_session(echo, tmp_path), "alive").stop_reason == s.StopReason.END_TURN
    echo.witness.findings[:] = [f for f in echo.witness.findings if f.blame is not Party.CLIENT]


def test_CANCEL_03_nested_work_is_aborted(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    prompt = echo.prompt_async(sid, f"/run {sys.executable} -c 'import time; time.sleep(60)'")
    echo.wait_for(
        lambda: any(isinstance(u, s.ToolCallUpdate) and u.content for u in echo.updates(sid))
    )
    killed = len(echo.terminals.killed)
    prompt.cancel()
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert len(echo.terminals.killed) == killed + 1


def test_CANCEL_04_updates_may_precede_the_cancelled_answer(
    echo: TestClient, tmp_path: Path
) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid))
    prompt.cancel()
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert echo.updates_of(sid, s.AgentMessageChunk)


def test_CANCEL_05_one_response_result_or_32800(local: Any) -> None:
    hold = threading.Event()
    client = local(scripted(ext_method=lambda method, params: hold.wait(WAIT) and {}))
    pending = client.request_async("_slow", {})
    pending.cancel()
    assert error_code(lambda: pending.result(WAIT)) == ErrorCode.REQUEST_CANCELLED
    hold.set()
    client.request(
        "_fence", {}
    )  # the cancelled handler has returned by now; its result was dropped
    answers = [m for m in client.inbound() if m.get("id") == pending.id]
    assert len(answers) == 1


def test_CANCEL_06_no_answer_to_cancel_request(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid))
    count = len(echo.inbound())
    prompt.cancel()
    prompt.result(WAIT)
    later = echo.inbound()[count:]
    assert not [m for m in later if "error" in m or ("result" in m and m.get("id") != prompt.id)]


def test_CANCEL_06_cancel_request_for_an_unknown_id_is_ignored_silently(
    local: Any, caplog: Any
) -> None:
    # The client cancels ids the agent never saw (and one of the wrong shape): no answer, no
    # error logged, and the connection goes on.
    client = local(scripted(ext_method=lambda method, params: {"ok": True}))
    count = len(client.inbound())
    with caplog.at_level(logging.WARNING):
        for target in (424242, "nope", None, {"an": "object"}):
            client.notify("$/cancel_request", {"requestId": target})
        assert client.request("_fence", {}) == {"ok": True}
    later = client.inbound()[count:]
    assert [m.get("result") for m in later] == [{"ok": True}]  # only the fence was answered
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


def test_CANCEL_07_requests_beyond_the_limits_are_answered_32800(tmp_path: Path) -> None:
    busy, free = threading.Event(), threading.Event()

    def hold(method: str, params: Any) -> Any:
        busy.set()
        free.wait(WAIT)
        return {}

    client = in_process(scripted(ext_method=hold), max_handlers=1, max_queued=1)
    try:
        first = client.request_async("_hold", {})
        assert busy.wait(WAIT)
        queued = client.request_async("_hold", {})
        refused = client.request_async("_hold", {})  # past the agent's own limit: aborted
        assert error_code(lambda: refused.result(WAIT)) == ErrorCode.REQUEST_CANCELLED
        free.set()
        assert first.result(WAIT) == {} and queued.result(WAIT) == {}
    finally:
        client.close()


def test_CANCEL_08_cancel_cascades_to_client_requests(local: Any, tmp_path: Path) -> None:
    asked = threading.Event()
    release = threading.Event()

    def run(params: Any, turn: PromptTurn) -> Any:
        turn.read_text_file(str(tmp_path / "slow.txt"))
        return s.StopReason.END_TURN

    client = local(scripted(run))
    original = client.connection._handlers["fs/read_text_file"]

    def slow_read(params: Any, ctx: Any) -> Any:
        asked.set()
        ctx.cancelled.wait(WAIT)
        release.set()
        return original(params, ctx)

    client.connection.set_handler("fs/read_text_file", slow_read)
    sid = new_session(client, tmp_path)
    prompt = client.prompt_async(sid, "go")
    assert asked.wait(WAIT)
    client.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED
    assert release.wait(WAIT)  # the client saw its fs request cancelled
    assert any(m.get("method") == "$/cancel_request" for m in client.inbound())


# == extensibility.mdx ============================================================================


def test_EXT_01_meta_everywhere_is_fine(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    result = echo.request(
        "session/prompt",
        {
            "sessionId": sid,
            "prompt": [{"type": "text", "text": "m", "_meta": {"k": 1}}],
            "_meta": {"trace": "x"},
        },
    )
    assert result.stop_reason == s.StopReason.END_TURN


def test_EXT_02_malformed_meta_is_ignored(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    result = echo.request(
        "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "m"}], "_meta": 5}
    )
    assert result.stop_reason == s.StopReason.END_TURN
    assert (
        echo.updates_of(sid, s.AgentMessageChunk)[-1].content.meta is s.UNSET
    )  # not echoed back as ours


def test_EXT_03_reserved_meta_keys_unused(echo: TestClient) -> None:
    meta = raw_init(echo)["agentCapabilities"]["_meta"]
    assert not {"traceparent", "tracestate", "baggage"} & set(meta)


def test_EXT_04_no_custom_root_keys(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    for prompt in (
        "/stream 2",
        f"/run {sys.executable} -V",
        "/write e.txt x",
        "/read e.txt",
        "/ext",
    ):
        echo.prompt(sid, prompt)
    assert strict_problems(echo) == []


def test_EXT_05_reserved_names_without_underscore(echo: TestClient) -> None:
    assert error_code(lambda: echo.request("acpref/ping", {})) == ErrorCode.METHOD_NOT_FOUND
    echo.witness.findings[:] = [
        f for f in echo.witness.findings if f.clause != "EXT-05"
    ]  # our own probe


def test_EXT_06_custom_request_answered(echo: TestClient) -> None:
    assert echo.request("_acpref/ping", {}) == {"pong": True, "params": {}}


def test_EXT_07_custom_request_answered_under_its_id(echo: TestClient) -> None:
    pending = echo.request_async("_acpref/ping", {"n": 7})
    pending.result(WAIT)
    assert [m["result"] for m in echo.inbound() if m.get("id") == pending.id] == [
        {"pong": True, "params": {"n": 7}}
    ]


def test_EXT_08_unknown_custom_request(echo: TestClient) -> None:
    assert error_code(lambda: echo.request("_acpref/nope", {})) == ErrorCode.METHOD_NOT_FOUND


def test_EXT_09_custom_methods_only_when_advertised(local: Any, tmp_path: Path) -> None:
    caps = s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=True))
    client = local(EchoAgent, caps=caps)
    sid = new_session(client, tmp_path)
    client.prompt(sid, "/ext")
    assert not [m for m in client.inbound() if m.get("method") == "_acpref/echo"]


def test_EXT_10_unknown_custom_notification(echo: TestClient, tmp_path: Path) -> None:
    count = len(echo.inbound())
    echo.notify("_acpref/whatever", {"a": 1})
    assert echo.prompt(new_session(echo, tmp_path), "alive").stop_reason == s.StopReason.END_TURN
    assert not [m for m in echo.inbound()[count:] if "error" in m]


def test_EXT_11_custom_capabilities_under_meta(echo: TestClient) -> None:
    caps = codec.decode(raw_init(echo)["agentCapabilities"], s.AgentCapabilities)
    assert caps.meta == {"acpref": {"ping": True}}


def test_help_of_the_spec_tests_covers_the_cli(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "acpref.echo", "--help"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    ).stdout
    assert "/stream" in out
