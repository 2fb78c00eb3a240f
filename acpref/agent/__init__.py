"""The agent side of ACP: implement ``Agent``, serve it with ``AgentSideConnection``.

A minimal agent::

    from acpref import schema as s
    from acpref.agent import Agent, serve_stdio

    class Hello(Agent):
        def session_prompt(self, params, turn):
            turn.update(s.AgentMessageChunk(content=s.TextContent(text="hello")))
            return s.PromptResponse(stop_reason="end_turn")

    serve_stdio(Hello)
"""

from ._connection import AgentSideConnection, ClientHandle, PromptTurn, TerminalHandle, serve_stdio
from ._interface import Agent
from ._sessions import DEFAULT_PAGE_SIZE, Session, SessionRegistry

__all__ = [
    "Agent",
    "AgentSideConnection",
    "ClientHandle",
    "PromptTurn",
    "TerminalHandle",
    "Session",
    "SessionRegistry",
    "DEFAULT_PAGE_SIZE",
    "serve_stdio",
]
