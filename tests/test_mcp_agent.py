"""The integration of ``acpref.mcp`` into an agent, end to end: a client, the agent, real servers.

Spec: session-setup.mdx, MCP Servers (SETUP-29 .. SETUP-36), tool-calls.mdx (TOOL-01,
PROMPT-16); decisions: spec_notes/mcp.md (spec-gap mcp-failure).

The agent is the echo agent (the ``Agent`` base class connects the servers; ``/mcp`` shows
and calls them), served in this process by ``AgentSideConnection`` over two pipes; the client is the agent tests'
``TestClient``, whose witness judges every message both ways with the protocol rules. The MCP
servers are real subprocesses: ``mcp-server-time`` and ``tests/peers/mcp_scripted.py``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from peers.agent_client import FULL_CAPS, in_process
from peers.mcp_procs import group_members, has_proc

from acpref import schema as s
from acpref.echo import EchoAgent

SCRIPT = str(Path(__file__).parent / "peers" / "mcp_scripted.py")
WAIT_CLOSE = 15.0
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"

pytestmark = pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time is a test extra")


def stdio(name: str, *argv: str) -> s.McpServerStdio:
    return s.McpServerStdio(name=name, command=argv[0], args=list(argv[1:]), env=[])


@pytest.fixture
def pair() -> Iterator[Any]:
    agent_box = []

    def build(client: Any) -> EchoAgent:
        agent_box.append(EchoAgent(client))
        return agent_box[0]

    client = in_process(build, caps=FULL_CAPS)
    yield client, agent_box[0]
    client.close()
    client.side.wait_closed(WAIT_CLOSE)


def _pids(agent: EchoAgent, session_id: str) -> list:
    manager = agent.sessions.get(session_id).live["mcp"]
    return [server.pid for server in manager.servers.values()]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return not has_proc() or group_members(pid) == []
    return False


def test_session_with_mcp_servers_lists_and_calls_tools(pair: Any, tmp_path: Path) -> None:
    client, agent = pair
    assert client.init.agent_capabilities.mcp_capabilities == s.McpCapabilities(
        http=True, sse=False
    )
    servers = [
        stdio("time", str(TIME_SERVER)),
        stdio("broken", sys.executable, SCRIPT, "fail"),
    ]
    # spec-gap mcp-failure: session/new succeeds without the server that failed.
    sid = client.new_session(str(tmp_path), mcp_servers=servers).session_id
    client.wait_commands(sid)

    client.prompt(sid, "/mcp")
    text = client.text_of(sid)
    # The failure is told once, at the start of the first turn.
    assert "MCP server 'broken' (stdio): the server exited with status 1" in text
    assert "time (stdio, MCP 2025-06-18): 2 tools" in text
    assert "get_current_time: Get current time in a specific timezone" in text

    # Brave mode: no permission question (the ask path is the echo agent's own, tested there).
    client.request(
        "session/set_config_option",
        s.SetSessionConfigOptionRequest(session_id=sid, config_id="brave_mode", value=True),
    )
    response = client.prompt(sid, '/mcp time get_current_time {"timezone": "Asia/Tokyo"}')
    assert response.stop_reason == s.StopReason.END_TURN
    calls = client.updates_of(sid, s.ToolCall)
    assert [c.title for c in calls] == ["time: get_current_time"]
    updates = [
        u
        for u in client.updates_of(sid, s.ToolCallUpdate)
        if u.tool_call_id == calls[0].tool_call_id
    ]
    assert [u.status for u in updates] == [s.ToolCallStatus.IN_PROGRESS, s.ToolCallStatus.COMPLETED]
    shown = updates[-1].content[0].content.text
    assert json.loads(shown)["timezone"] == "Asia/Tokyo"
    assert updates[-1].raw_output["structuredContent"]["timezone"] == "Asia/Tokyo"

    # A tool the server does not have: the call fails, visibly, and the turn ends normally.
    client.prompt(sid, "/mcp time no_such_tool {}")
    last = client.updates_of(sid, s.ToolCallUpdate)[-1]
    assert last.status == s.ToolCallStatus.FAILED

    # session/close stops the servers.
    pids = _pids(agent, sid)
    client.request("session/close", s.CloseSessionRequest(session_id=sid))
    assert all(_gone(pid) for pid in pids)
    assert client.findings == []


def test_load_reconnects_and_connection_end_stops_everything(pair: Any, tmp_path: Path) -> None:
    client, agent = pair
    first = [stdio("one", sys.executable, SCRIPT, "serve")]
    sid = client.new_session(str(tmp_path), mcp_servers=first).session_id
    client.wait_commands(sid)
    old = _pids(agent, sid)
    # spec SETUP-23: load names the servers anew; the old ones are stopped, the new started.
    again = [stdio("two", sys.executable, SCRIPT, "serve")]
    client.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=again)
    )
    assert all(_gone(pid) for pid in old)
    assert set(agent.sessions.get(sid).live["mcp"].servers) == {"two"}
    new = _pids(agent, sid)
    client.close()
    # The agent side closes on the end of its input and stops every server as it does.
    assert client.side.wait_closed(WAIT_CLOSE)
    assert all(_gone(pid) for pid in new)
