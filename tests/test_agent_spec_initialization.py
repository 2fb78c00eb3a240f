"""Spec tests of the agent side for initialization.mdx: one test per clause, named after it.

Clauses: the INIT clauses of clauses.tsv whose side is ``agent`` or ``both``. Most tests drive
the echo agent as a subprocess (one per module, a fresh session per test, no new finding
allowed); the others serve a small scripted agent, or the echo agent with other client
capabilities, in this process. Fixtures and helpers: ``tests/peers/agent_spec_kit.py``. Clauses
not tested, and why: spec_notes/agent.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, List

import pytest

from acpref import schema as s
from acpref.agent import PromptTurn
from acpref.echo import EchoAgent
from acpref.errors import ErrorCode

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (  # noqa: E402
    EMPTY_CAPS,
    FULL_CAPS,
    TestClient,
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


# == initialization.mdx ===========================================================================


def test_INIT_04_result_has_version_and_capabilities(echo: TestClient) -> None:
    result = raw_init(echo)
    assert type(result["protocolVersion"]) is int and isinstance(result["agentCapabilities"], dict)


def test_INIT_05_agent_info_with_name_and_version(echo: TestClient) -> None:
    info = raw_init(echo)["agentInfo"]
    assert info["name"] == "acpref-echo" and info["version"] and info["title"]


def test_INIT_06_everything_sent_is_v1(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    for prompt in ("hi", "/stream 3", "/tool", "/mode code", "/form", "/url"):
        echo.prompt(sid, prompt)
    assert strict_problems(echo) == []


def test_INIT_07_version_1_answers_1(local: Any) -> None:
    client = local(EchoAgent, init=False)
    assert client.initialize(version=1).protocol_version == 1


@pytest.mark.parametrize("version", [99, 2, 0])
def test_INIT_08_unknown_version_answers_1(local: Any, version: int) -> None:
    client = local(EchoAgent, init=False)
    assert client.initialize(version=version).protocol_version == 1  # not an error


def test_INIT_10_any_combination_of_client_capabilities(local: Any, tmp_path: Path) -> None:
    combos = [
        EMPTY_CAPS,
        s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=True)),
        s.ClientCapabilities(fs=s.FileSystemCapabilities(write_text_file=True), terminal=True),
        s.ClientCapabilities(
            elicitation=s.ElicitationCapabilities(form=s.ElicitationFormCapabilities())
        ),
        s.ClientCapabilities(
            elicitation=s.ElicitationCapabilities(url=s.ElicitationUrlCapabilities()), session=None
        ),
        FULL_CAPS,
    ]
    (tmp_path / "f.txt").write_text("x", encoding="utf-8")
    for caps in combos:
        client = local(EchoAgent, caps=caps)
        sid = new_session(client, tmp_path)
        for prompt in (
            "/read f.txt",
            "/write g.txt y",
            f"/run {sys.executable} -V",
            "/form",
            "/url",
            "/ext",
        ):
            assert client.prompt(sid, prompt).stop_reason == s.StopReason.END_TURN
        assert client.findings == [], caps


def test_INIT_11_nothing_advertised_nothing_called(local: Any, tmp_path: Path) -> None:
    client = local(EchoAgent, caps=EMPTY_CAPS)
    sid = new_session(client, tmp_path)
    for prompt in ("/read a", "/write a b", "/run true", "/form", "/url"):
        client.prompt(sid, prompt)
    methods = {m.get("method") for m in client.inbound()}
    assert not {m for m in methods if m and m.split("/")[0] in ("fs", "terminal", "elicitation")}


def test_INIT_13_null_session_capability_means_no_booleans(local: Any, tmp_path: Path) -> None:
    client = local(EchoAgent, caps={"session": {"configOptions": None}}, init=False)
    client.request(
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": {"session": {"configOptions": None}}},
    )
    options = client.new_session(str(tmp_path)).config_options
    assert all(not isinstance(o.kind, s.SessionConfigBoolean) for o in options)


def test_INIT_14_each_capability_stated(echo: TestClient) -> None:
    caps = raw_init(echo)["agentCapabilities"]
    assert {
        "loadSession",
        "promptCapabilities",
        "mcpCapabilities",
        "sessionCapabilities",
        "auth",
    } <= set(caps)


def test_INIT_15_text_and_resource_link_always_accepted(local: Any, tmp_path: Path) -> None:
    client = local(scripted(capabilities=lambda: s.AgentCapabilities()))
    sid = new_session(client, tmp_path)
    blocks = [s.TextContent(text="see"), s.ResourceLink(uri="file:///a.txt", name="a.txt")]
    assert client.prompt(sid, blocks).stop_reason == s.StopReason.END_TURN


def test_INIT_16_image_accepted_when_advertised(echo: TestClient, tmp_path: Path) -> None:
    sid = new_session(echo, tmp_path)
    assert (
        echo.prompt(sid, [s.ImageContent(data="aGk=", mime_type="image/png")]).stop_reason
        == s.StopReason.END_TURN
    )


def test_INIT_17_baseline_turn_with_no_capabilities(local: Any, tmp_path: Path) -> None:
    def run(params: Any, turn: PromptTurn) -> Any:
        turn.say("hello")
        return s.StopReason.END_TURN

    client = local(scripted(run, capabilities=lambda: s.AgentCapabilities()))
    sid = new_session(client, tmp_path)
    assert client.prompt(sid, "hi").stop_reason == s.StopReason.END_TURN
    assert client.text_of(sid) == "hello"
    client.cancel(sid)  # session/cancel is baseline too


def test_INIT_18_session_capabilities_gate_methods(local: Any, tmp_path: Path) -> None:
    caps = s.AgentCapabilities(
        session_capabilities=s.SessionCapabilities(list=None, close=s.SessionCloseCapabilities())
    )
    client = local(scripted(capabilities=lambda: caps))
    sid = new_session(client, tmp_path)
    assert (
        error_code(lambda: client.request("session/list", s.ListSessionsRequest()))
        == ErrorCode.METHOD_NOT_FOUND
    )
    assert (
        client.request("session/close", s.CloseSessionRequest(session_id=sid))
        == s.CloseSessionResponse()
    )


def test_INIT_19_load_only_with_top_level_load_session(local: Any, tmp_path: Path) -> None:
    client = local(scripted(capabilities=lambda: s.AgentCapabilities(load_session=False)))
    sid = new_session(client, tmp_path)
    load = s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    assert error_code(lambda: client.request("session/load", load)) == ErrorCode.METHOD_NOT_FOUND


def test_INIT_20_client_info_is_kept(local: Any) -> None:
    box: List[Any] = []
    local(lambda c: box.append(EchoAgent(c)) or box[0])
    assert box[0].client.info == s.Implementation(name="acpref-test-client", version="0")
