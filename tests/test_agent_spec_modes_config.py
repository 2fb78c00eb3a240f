"""Spec tests of the agent side for session-modes.mdx, session-config-options.mdx: one test per
clause, named after it.

Clauses: the MODES, CONFIG clauses of clauses.tsv whose side is ``agent`` or ``both``. Most
tests drive the echo agent as a subprocess (one per module, a fresh session per test, no new
finding allowed); the others serve a small scripted agent, or the echo agent with other client
capabilities, in this process. Fixtures and helpers: ``tests/peers/agent_spec_kit.py``. Clauses
not tested, and why: spec_notes/agent.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from acpref import schema as s
from acpref.echo import EchoAgent

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (  # noqa: E402
    EMPTY_CAPS,
    WAIT,
    TestClient,
)
from agent_spec_kit import (  # noqa: E402
    echo,
    local,
    new_session,
    raw_updates,
    shared,
)

__all__ = ["echo", "local", "shared"]  # the fixtures, for pytest


# == session-modes.mdx ============================================================================


def test_MODES_01_modes_in_setup_results(echo: TestClient, tmp_path: Path) -> None:
    modes = echo.new_session(str(tmp_path)).modes
    assert [m.id for m in modes.available_modes] == ["ask", "code"]


def test_MODES_02_current_mode_is_available(echo: TestClient, tmp_path: Path) -> None:
    modes = echo.new_session(str(tmp_path)).modes
    assert modes.current_mode_id in [m.id for m in modes.available_modes]


def test_MODES_03_set_mode_during_a_turn(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid))
    assert (
        echo.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
        == s.SetSessionModeResponse()
    )
    echo.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_MODES_05_set_mode_answers_empty_object(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    pending = echo.request_async(
        "session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code")
    )
    pending.result(WAIT)
    assert next(m for m in echo.inbound() if m.get("id") == pending.id)["result"] == {}


def test_MODES_06_agent_switch_sends_current_mode_update(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/mode code")
    updates = [u for u in raw_updates(echo, sid) if u["sessionUpdate"] == "current_mode_update"]
    assert updates == [{"sessionUpdate": "current_mode_update", "currentModeId": "code"}]


def test_MODES_07_mode_switch_tool_asks_permission_first(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/mode code")
    asked = [p for p in echo.permission_requests if p.session_id == sid]
    assert asked[0].tool_call.kind == s.ToolKind.SWITCH_MODE
    inbound = echo.inbound()
    ask = next(
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "session/request_permission" and m["params"]["sessionId"] == sid
    )
    switch = next(
        i
        for i, m in enumerate(inbound)
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == sid
        and m["params"]["update"]["sessionUpdate"] == "current_mode_update"
    )
    assert ask < switch


# == session-config-options.mdx ===================================================================


def test_CONFIG_01_options_in_setup_results(echo: TestClient, tmp_path: Path) -> None:
    options = echo.new_session(str(tmp_path)).config_options
    assert [o.id for o in options] == ["mode", "model", "brave_mode"]


def test_CONFIG_03_option_shapes(echo: TestClient, tmp_path: Path) -> None:
    pending = echo.request_async(
        "session/new", s.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
    )
    pending.result(WAIT)
    for option in next(m for m in echo.inbound() if m.get("id") == pending.id)["result"][
        "configOptions"
    ]:
        assert {"id", "name", "type", "currentValue"} <= set(option)
        assert ("options" in option) == (option["type"] == "select")


def test_CONFIG_04_current_values_are_valid(echo: TestClient, tmp_path: Path) -> None:
    for option in echo.new_session(str(tmp_path)).config_options:
        if isinstance(option.kind, s.SessionConfigSelect):
            assert option.kind.current_value in [v.value for v in option.kind.options]
        else:
            assert type(option.kind.current_value) is bool


def test_CONFIG_05_no_boolean_options_without_support(local: Any, tmp_path: Path) -> None:
    client = local(EchoAgent, caps=EMPTY_CAPS)
    sid = new_session(client, tmp_path)
    client.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="brave_mode", value="on"),
    )
    client.prompt(sid, "/mode code")
    payloads = [m for d, m in client.wire if d == "in"]
    assert '"boolean"' not in repr(payloads).replace("'", '"')


def test_CONFIG_06_boolean_falls_back_to_a_select(local: Any, tmp_path: Path) -> None:
    client = local(EchoAgent, caps=EMPTY_CAPS)
    brave = [o for o in client.new_session(str(tmp_path)).config_options if o.id == "brave_mode"][0]
    assert [v.value for v in brave.kind.options] == ["off", "on"]


def test_CONFIG_07_categories(echo: TestClient, tmp_path: Path) -> None:
    options = echo.new_session(str(tmp_path)).config_options
    assert [o.category for o in options[:2]] == [
        s.SessionConfigOptionCategory.MODE,
        s.SessionConfigOptionCategory.MODEL,
    ]


def test_CONFIG_08_options_work_without_categories(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    result = echo.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="model", value="echo-2"),
    )
    assert {o.id: o.kind.current_value for o in result.config_options}["model"] == "echo-2"


def test_CONFIG_10_no_unreserved_custom_categories(echo: TestClient, tmp_path: Path) -> None:
    for option in echo.new_session(str(tmp_path)).config_options:
        assert (
            option.category is s.UNSET
            or isinstance(option.category, s.SessionConfigOptionCategory)
            or option.category.startswith("_")
        )


def test_CONFIG_13_most_important_first(echo: TestClient, tmp_path: Path) -> None:
    assert echo.new_session(str(tmp_path)).config_options[0].id == "mode"


def test_CONFIG_14_works_without_setting_anything(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    assert (
        echo.prompt(sid, "/write x.txt y").stop_reason == s.StopReason.END_TURN
    )  # default: ask mode


def test_CONFIG_16_set_option_during_a_turn(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    prompt = echo.prompt_async(sid, "/wait")
    echo.wait_for(lambda: "Waiting" in echo.text_of(sid))
    echo.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="model", value="echo-2"),
    )
    echo.cancel(sid)
    assert prompt.result(WAIT).stop_reason == s.StopReason.CANCELLED


def test_CONFIG_19_set_option_answers_the_complete_list(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    result = echo.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="mode", value="code"),
    )
    assert [o.id for o in result.config_options] == ["mode", "model", "brave_mode"]


def test_CONFIG_20_agent_changes_options_itself(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/mode code")
    assert echo.updates_of(sid, s.ConfigOptionUpdate)


def test_CONFIG_21_option_update_is_complete(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.prompt(sid, "/mode code")
    assert [o.id for o in echo.updates_of(sid, s.ConfigOptionUpdate)[-1].config_options] == [
        "mode",
        "model",
        "brave_mode",
    ]


def test_CONFIG_22_modes_and_a_mode_option_both(echo: TestClient, tmp_path: Path) -> None:
    result = echo.new_session(str(tmp_path))
    assert (
        result.modes is not s.UNSET
        and result.config_options[0].category == s.SessionConfigOptionCategory.MODE
    )


def test_CONFIG_24_modes_and_option_stay_in_step(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    echo.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
    assert (
        echo.updates_of(sid, s.ConfigOptionUpdate)[-1].config_options[0].kind.current_value
        == "code"
    )
    echo.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="mode", value="ask"),
    )
    assert echo.updates_of(sid, s.CurrentModeUpdate)[-1].current_mode_id == "ask"
    resumed = echo.request(
        "session/resume", s.ResumeSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    assert resumed.modes.current_mode_id == resumed.config_options[0].kind.current_value == "ask"
