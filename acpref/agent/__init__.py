"""The agent side of ACP: implement ``Agent``, serve it with ``AgentSideConnection``.

A minimal agent::

    from acpref import schema as s
    from acpref.agent import Agent, serve_stdio

    class Hello(Agent):
        def session_prompt(self, params, turn):
            turn.update(s.AgentMessageChunk(content=s.TextContent(text="hello")))
            return s.PromptResponse(stop_reason="end_turn")

    serve_stdio(Hello)

Modules: ``_interface`` (the ``Agent`` base class), ``_connection`` (``AgentSideConnection``:
the protocol enforced around the agent), ``_client`` (``ClientHandle``: typed calls to the
client), ``_turn`` (``PromptTurn``, the turn table), ``_sessions`` (``SessionRegistry``).
"""

from ._client import ClientHandle
from ._connection import AgentSideConnection, serve_stdio
from ._interface import Agent
from ._sessions import DEFAULT_PAGE_SIZE, InvalidCursor, Session, SessionRegistry
from ._turn import PromptTurn, TerminalHandle, TurnCancelled

__all__ = [
    "Agent",
    "AgentSideConnection",
    "ClientHandle",
    "PromptTurn",
    "TerminalHandle",
    "TurnCancelled",
    "Session",
    "SessionRegistry",
    "InvalidCursor",
    "DEFAULT_PAGE_SIZE",
    "serve_stdio",
]
