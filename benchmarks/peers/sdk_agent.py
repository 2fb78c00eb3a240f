"""The official Python SDK's bench agent: the peers' echo agent (see ``__init__``) on ``acp``.

Written against the SDK's public API only (``acp.run_agent``, the ``Agent`` protocol, the
``session_update`` / ``read_text_file`` calls of the connection ``on_connect`` hands over), the
way its README's example agent is. Sessions are kept in a dict, as the SDK leaves that to agents.
Run with the interpreter of ``benchmarks/.venv-sdk``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from acp import (
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    update_agent_message_text,
)
from acp.schema import AgentCapabilities, Implementation

_BIG_TEXT = {}


class BenchAgent:
    def __init__(self) -> None:
        self._conn: Any = None
        self._sessions: dict = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs
    ):
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="sdk-bench-agent", version="1"),
        )

    async def new_session(self, cwd: str, mcp_servers=None, **kwargs):
        session_id = f"sess_{len(self._sessions) + 1}"
        self._sessions[session_id] = {"cwd": cwd, "history": []}
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list, **kwargs):
        text = getattr(prompt[0], "text", "")
        word, _, arg = text.partition(" ")
        if word == "stream":
            for _ in range(int(arg)):
                await self._conn.session_update(session_id, update_agent_message_text("token "))
        elif word == "read":
            await self._conn.read_text_file(session_id=session_id, path=arg)
        elif word == "big":
            size = int(arg)
            if size not in _BIG_TEXT:
                sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
                from _shared import big_text

                _BIG_TEXT[size] = big_text(size)
            await self._conn.session_update(session_id, update_agent_message_text(_BIG_TEXT[size]))
        else:
            await self._conn.session_update(session_id, update_agent_message_text(text))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs) -> None:
        pass


if __name__ == "__main__":
    asyncio.run(run_agent(BenchAgent()))
