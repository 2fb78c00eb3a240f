"""Tests of ``acpref.mcp`` with stdio servers: real subprocesses, real pipes, no mocks.

Spec: session-setup.mdx, MCP Servers (SETUP-29 .. SETUP-36); MCP 2025-06-18 lifecycle, tools,
stdio transport; decisions where the spec is silent: spec_notes/mcp.md.

Servers: ``mcp-server-time`` (a real MCP server built on the official SDK, a test extra) and
``tests/peers/mcp_scripted.py`` (a hand-written one that misbehaves on demand). Every wait is
bounded: connect and call timeouts, and the manager's own bounded shutdown ladder.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, List

import pytest
from peers.mcp_procs import group_members, has_proc, is_running, read_pid

from acpref import schema as s
from acpref.mcp import (
    McpError,
    McpFailure,
    McpManager,
    McpServerConnection,
    McpTimeout,
)

SCRIPT = str(Path(__file__).parent / "peers" / "mcp_scripted.py")
#: A connect timeout for servers that answer: generous for a loaded CI machine.
CONNECT = 15.0


def _time_server_argv() -> List[str]:
    script = Path(sys.executable).parent / "mcp-server-time"
    if script.exists():
        return [str(script)]
    found = shutil.which("mcp-server-time")
    if found:
        return [found]
    pytest.importorskip("mcp_server_time", reason="mcp-server-time is a test extra")
    return [sys.executable, "-m", "mcp_server_time"]


def stdio(name: str, argv: List[str], **env: str) -> s.McpServerStdio:
    return s.McpServerStdio(
        name=name,
        command=argv[0],
        args=list(argv[1:]),
        env=[s.EnvVariable(name=k, value=v) for k, v in env.items()],
    )


def scripted(name: str, mode: str, *options: str, **env: str) -> s.McpServerStdio:
    return stdio(name, [sys.executable, SCRIPT, mode, *options], **env)


def assert_gone(pid: int) -> None:
    """The process and every member of its group have ended (close() reaped the leader)."""
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    if has_proc():
        assert group_members(pid) == []


@pytest.fixture
def manager():
    m = McpManager()
    yield m
    m.close()


# -- the real server ------------------------------------------------------------------------------


def test_SETUP_30_time_server_over_stdio_lists_and_calls_tools(manager: McpManager) -> None:
    # spec SETUP-30: every agent connects to stdio servers.
    [outcome] = manager.connect(
        [stdio("time", _time_server_argv())], http_allowed=False, sse_allowed=False, timeout=CONNECT
    )
    assert isinstance(outcome, McpServerConnection), outcome
    assert outcome.transport == "stdio"
    assert outcome.protocol_version == "2025-06-18"
    assert outcome.server_info.get("name") == "mcp-time"
    names = {tool.name for _, tool in manager.tools()}
    assert {"get_current_time", "convert_time"} <= names
    tool = next(t for _, t in manager.tools() if t.name == "get_current_time")
    assert "timezone" in tool.input_schema["properties"]

    result = manager.call("time", "get_current_time", {"timezone": "Europe/Paris"}, timeout=10.0)
    assert not result.is_error
    assert result.structured_content["timezone"] == "Europe/Paris"
    assert "Europe/Paris" in result.text()

    # A tool error is a result the model can see; an unknown tool is an error from the server.
    with pytest.raises(McpError) as caught:
        manager.call("time", "no_such_tool", {}, timeout=10.0)
    assert caught.value.code is not None

    pid = outcome.pid
    assert pid is not None and is_running(pid)
    manager.close()
    assert_gone(pid)
    assert not outcome.alive
    manager.close()  # idempotent


def test_SETUP_36_every_server_is_connected_in_parallel(
    manager: McpManager, tmp_path: Path
) -> None:
    servers = [
        stdio("time", _time_server_argv()),
        scripted("one", "serve"),
        scripted("two", "serve"),
    ]
    outcomes = manager.connect(servers, http_allowed=False, sse_allowed=False, timeout=CONNECT)
    # spec SETUP-36: one outcome per server, in order, each connected.
    assert [o.name for o in outcomes] == ["time", "one", "two"]
    assert all(isinstance(o, McpServerConnection) for o in outcomes), outcomes
    assert set(manager.servers) == {"time", "one", "two"}
    pids = [o.pid for o in outcomes if isinstance(o, McpServerConnection)]
    manager.close()
    for pid in pids:
        assert pid is not None
        assert_gone(pid)


# -- the scripted server: the protocol in detail --------------------------------------------------


def test_handshake_pagination_and_server_requests(manager: McpManager) -> None:
    [outcome] = manager.connect(
        [scripted("scripted", "serve")], http_allowed=False, sse_allowed=False, timeout=CONNECT
    )
    assert isinstance(outcome, McpServerConnection), outcome
    # tools/list follows nextCursor over three pages.
    assert [t.name for t in outcome.tools] == [
        "echo",
        "getenv",
        "cwd",
        "log",
        "slow",
        "child",
        "die",
    ]
    assert outcome.instructions == "Use the echo tool."
    assert (
        manager.call("scripted", "echo", {"text": "héllo\nworld"}, timeout=5.0).text()
        == "héllo\nworld"
    )

    log = manager.call("scripted", "log", timeout=5.0).structured_content["received"]
    initialize = log[0]["initialize"]
    assert initialize["protocolVersion"] == "2025-06-18"
    assert initialize["clientInfo"]["name"] == "acpref"
    assert initialize["capabilities"] == {}
    answers = {entry["answer_to"]: entry for entry in log if "answer_to" in entry}
    assert answers["ping"]["result"] == {}  # MCP ping: an empty result
    assert answers["roots/list"]["error"]["code"] == -32601  # no roots capability declared
    notifications = [entry["notification"] for entry in log if "notification" in entry]
    assert notifications == ["notifications/initialized"]


def test_an_older_protocol_version_is_accepted(manager: McpManager) -> None:
    [outcome] = manager.connect(
        [scripted("old", "serve", "--version", "2025-03-26")],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    assert isinstance(outcome, McpServerConnection), outcome
    assert outcome.protocol_version == "2025-03-26"


def test_an_unknown_protocol_version_is_refused_and_the_server_stopped(
    manager: McpManager, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    [outcome] = manager.connect(
        [scripted("future", "serve", "--version", "2099-01-01", MCP_PIDFILE=str(pidfile))],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    assert isinstance(outcome, McpFailure)
    assert "2099-01-01" in outcome.reason
    assert_gone(read_pid(pidfile))
    assert manager.failures == [outcome]


def test_env_overlays_the_base_environment_and_cwd_is_used(tmp_path: Path) -> None:
    # spec-gap mcp-env: the base environment, then the client's variables over it.
    base = {"PATH": os.environ.get("PATH", ""), "INHERITED": "from-agent", "OVERRIDDEN": "agent"}
    with McpManager(base_env=base) as manager:
        [outcome] = manager.connect(
            [scripted("env", "serve", OVERRIDDEN="client", ADDED="client-too")],
            http_allowed=False,
            sse_allowed=False,
            timeout=CONNECT,
            cwd=str(tmp_path),
        )
        assert isinstance(outcome, McpServerConnection), outcome
        names = ["INHERITED", "OVERRIDDEN", "ADDED", "HOME"]
        values = manager.call("env", "getenv", {"names": names}, timeout=5.0).structured_content
        assert values == {
            "INHERITED": "from-agent",
            "OVERRIDDEN": "client",
            "ADDED": "client-too",
            "HOME": None,
        }
        # spec-gap mcp-cwd: the server starts in the cwd it was given (the session's).
        assert manager.call("env", "cwd", timeout=5.0).text() == os.path.realpath(tmp_path)


# -- servers that fail ---------------------------------------------------------------------------


def test_a_server_that_exits_at_start_is_a_failure_with_its_stderr(manager: McpManager) -> None:
    outcomes = manager.connect(
        [scripted("broken", "fail"), scripted("fine", "serve")],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    broken, fine = outcomes
    # spec-gap mcp-failure: the other servers (and the session) go on without it.
    assert isinstance(broken, McpFailure)
    assert isinstance(fine, McpServerConnection)
    assert broken.transport == "stdio" and broken.clause is None
    assert "exited with status 1" in broken.reason
    assert "boom" in broken.reason
    assert [name for name, _ in manager.tools()] == ["fine"] * 7


def test_a_command_that_does_not_exist_is_a_failure(manager: McpManager, tmp_path: Path) -> None:
    [outcome] = manager.connect(
        [stdio("ghost", [str(tmp_path / "no-such-server")])],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    assert isinstance(outcome, McpFailure)
    assert "cannot start" in outcome.reason


def test_a_server_that_never_answers_times_out_and_is_killed(
    manager: McpManager, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    [outcome] = manager.connect(
        [scripted("mute", "silent", MCP_PIDFILE=str(pidfile))],
        http_allowed=False,
        sse_allowed=False,
        timeout=1.0,
    )
    elapsed = time.monotonic() - started
    assert isinstance(outcome, McpFailure)
    assert "not connected within 1.0s: no answer to initialize yet" in outcome.reason
    # The timeout was honoured (test_mcp_hostile.py bounds it from above, with a margin).
    assert elapsed >= 1.0
    # spec-gap mcp-deadline: the server is stopped on a thread of its own; close waits for it.
    manager.close()
    assert_gone(read_pid(pidfile))


@pytest.mark.skipif(not has_proc(), reason="needs /proc to see the process group")
def test_a_stubborn_forking_server_is_killed_whole(manager: McpManager, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    [outcome] = manager.connect(
        [scripted("stubborn", "stubborn", MCP_PIDFILE=str(pidfile))],
        http_allowed=False,
        sse_allowed=False,
        timeout=1.0,
    )
    assert isinstance(outcome, McpFailure)
    # spec-gap mcp-process-group: SIGTERM ignored by both, so SIGKILL to the group (on a
    # thread of its own, spec-gap mcp-deadline, which close waits for).
    manager.close()
    assert_gone(read_pid(pidfile))


@pytest.mark.skipif(not has_proc(), reason="needs /proc to see the process group")
def test_close_stops_the_children_a_server_left_behind(manager: McpManager) -> None:
    [outcome] = manager.connect(
        [scripted("forker", "serve", "--fork")],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    assert isinstance(outcome, McpServerConnection), outcome
    child = manager.call("forker", "child", timeout=5.0).structured_content["pid"]
    assert outcome.pid is not None and child in group_members(outcome.pid)
    manager.close()
    # The server exits on the end of its stdin; its child (a sleep) is swept with SIGKILL.
    assert not is_running(child)
    assert_gone(outcome.pid)


def test_a_call_that_times_out_is_cancelled(manager: McpManager) -> None:
    [outcome] = manager.connect(
        [scripted("slow", "serve")], http_allowed=False, sse_allowed=False, timeout=CONNECT
    )
    assert isinstance(outcome, McpServerConnection), outcome
    with pytest.raises(McpTimeout):
        manager.call("slow", "slow", {"seconds": 2}, timeout=0.3)
    log = manager.call("slow", "log", timeout=5.0).structured_content["received"]
    cancelled = [e["params"] for e in log if e.get("notification") == "notifications/cancelled"]
    assert len(cancelled) == 1 and cancelled[0]["reason"] == "timed out"
    assert manager.call("slow", "echo", {"text": "still here"}, timeout=5.0).text() == "still here"


def test_a_server_that_dies_mid_session(manager: McpManager) -> None:
    [outcome] = manager.connect(
        [scripted("mortal", "serve")], http_allowed=False, sse_allowed=False, timeout=CONNECT
    )
    assert isinstance(outcome, McpServerConnection), outcome
    with pytest.raises(McpError) as caught:
        manager.call("mortal", "die", timeout=5.0)
    assert "exited with status 3" in caught.value.reason
    assert not outcome.alive
    assert manager.tools() == []
    with pytest.raises(McpError):
        manager.call("mortal", "echo", {"text": "x"}, timeout=5.0)
    with pytest.raises(McpError, match="no connected MCP server"):
        manager.call("nobody", "echo", timeout=5.0)


# -- what the manager refuses --------------------------------------------------------------------


def test_SETUP_35_transports_the_agent_did_not_advertise_are_refused(manager: McpManager) -> None:
    http = s.McpServerHttp(name="web", url="http://127.0.0.1:9/mcp", headers=[])
    sse = s.McpServerSse(name="old", url="http://127.0.0.1:9/sse", headers=[])
    outcomes = manager.connect([http, sse], http_allowed=False, sse_allowed=False, timeout=CONNECT)
    # spec SETUP-35: no http entry unless mcpCapabilities.http, no sse unless .sse.
    assert [(o.name, o.clause) for o in outcomes] == [("web", "SETUP-35"), ("old", "SETUP-35")]
    assert "mcpCapabilities.http" in outcomes[0].reason
    assert "mcpCapabilities.sse" in outcomes[1].reason
    assert manager.failures == outcomes


def test_sse_servers_are_not_supported_even_when_allowed(manager: McpManager) -> None:
    sse = s.McpServerSse(name="old", url="http://127.0.0.1:9/sse", headers=[])
    [outcome] = manager.connect([sse], http_allowed=True, sse_allowed=True, timeout=CONNECT)
    assert isinstance(outcome, McpFailure)
    assert "SSE transport (deprecated by MCP) is not supported" in outcome.reason


def test_duplicate_names_and_a_closed_manager(manager: McpManager) -> None:
    outcomes = manager.connect(
        [scripted("same", "serve"), scripted("same", "serve")],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    assert isinstance(outcomes[0], McpServerConnection)
    assert isinstance(outcomes[1], McpFailure) and "same name" in outcomes[1].reason
    manager.close()
    with pytest.raises(McpError, match="closed"):
        manager.connect([scripted("late", "serve")], http_allowed=False, sse_allowed=False)


# -- secrets --------------------------------------------------------------------------------------


def test_env_values_never_reach_the_logs(manager: McpManager, caplog: Any) -> None:
    secret = "s3cr3t-env-value-4242"
    caplog.set_level(logging.DEBUG, logger="acpref")
    outcomes = manager.connect(
        # "fail" writes $SECRET to its stderr: the reason and the logs must mask it.
        [scripted("leaky", "fail", SECRET=secret), scripted("ok", "serve", API_KEY=secret)],
        http_allowed=False,
        sse_allowed=False,
        timeout=CONNECT,
    )
    leaky, ok = outcomes
    assert isinstance(leaky, McpFailure) and isinstance(ok, McpServerConnection)
    assert "boom: ***" in leaky.reason
    values = manager.call("ok", "getenv", {"names": ["API_KEY"]}, timeout=5.0).structured_content
    assert values == {"API_KEY": secret}  # the server got it...
    manager.close()
    logged = [record.getMessage() for record in caplog.records]
    assert any("env names ['API_KEY']" in line for line in logged)  # ...names are logged...
    assert any("boom" in line for line in logged)
    assert not [line for line in logged if secret in line]  # ...values never
    assert secret not in caplog.text
    assert secret not in json.dumps([str(o) for o in outcomes])
