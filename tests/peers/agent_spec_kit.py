"""Fixtures and helpers shared by the clause-by-clause agent tests (``tests/test_agent_spec_*.py``).

Import the fixtures into a test module (``from agent_spec_kit import echo, local, shared``) and
pytest finds them there. ``shared`` is one echo-agent subprocess per test module (a client that
advertises everything); ``echo`` is that client for one test, which must leave no new finding
on the connection; ``local`` serves an agent in this process, for agents the echo agent is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, List

import pytest
from agent_client import FULL_CAPS, TestClient, allow_first, in_process, spawn_echo
from agent_scripted import Scripted

from acpref import schema as s
from acpref.errors import RpcError

__all__ = [
    "HISTORY",
    "shared",
    "echo",
    "local",
    "new_session",
    "error_code",
    "raw_updates",
    "tool_content",
    "raw_init",
    "prompt_raw",
    "scripted",
]

HISTORY = (
    s.UserMessageChunk,
    s.AgentMessageChunk,
    s.AgentThoughtChunk,
    s.ToolCall,
    s.ToolCallUpdate,
    s.Plan,
)


@pytest.fixture(scope="module")
def shared() -> Iterator[TestClient]:
    client = spawn_echo()
    yield client
    client.close()


@pytest.fixture
def echo(shared: TestClient) -> Iterator[TestClient]:
    """The shared echo client; the test must leave no new finding on its connection."""
    shared.permission = allow_first
    before = len(shared.findings)
    yield shared
    shared.permission = allow_first
    assert shared.findings[before:] == []


@pytest.fixture
def local() -> Iterator[Any]:
    """``local(agent_factory, caps=...) -> client``: an agent served in this process."""
    made: List[TestClient] = []

    def factory(agent: Any, *, caps: Any = FULL_CAPS, init: bool = True) -> TestClient:
        client = in_process(agent, caps=caps, initialize=init)
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


def new_session(client: TestClient, cwd: Path, **kwargs: Any) -> str:
    sid = client.new_session(str(cwd), **kwargs).session_id
    client.wait_commands(sid)
    return sid


def error_code(call: Any) -> int:
    with pytest.raises(RpcError) as info:
        call()
    return int(info.value.code)


def raw_updates(client: TestClient, sid: str) -> List[dict]:
    return [
        m["params"]["update"]
        for d, m in client.wire
        if d == "in" and m.get("method") == "session/update" and m["params"].get("sessionId") == sid
    ]


def tool_content(update: dict) -> List[dict]:
    """The content list of a raw tool_call / tool_call_update (chunks have a single block)."""
    content = (
        update.get("content") if update.get("sessionUpdate", "").startswith("tool_call") else None
    )
    return content if isinstance(content, list) else []


def raw_init(client: TestClient) -> dict:
    return next(
        m["result"]
        for d, m in client.wire
        if d == "in" and "protocolVersion" in m.get("result", {})
    )


def prompt_raw(client: TestClient, sid: str, blocks: List[dict]) -> Any:
    return client.request("session/prompt", {"sessionId": sid, "prompt": blocks})


def scripted(run: Any = None, **kwargs: Any) -> Any:
    return lambda client: Scripted(client, run, **kwargs)
