"""The agent side of ACP: implement ``Agent``, serve it with ``AgentSideConnection``.

A minimal agent::

    from acpref import schema as s
    from acpref.agent import Agent, serve_stdio

    class Hello(Agent):
        def session_prompt(self, params, turn):
            turn.update(s.AgentMessageChunk(content=s.TextContent(text="hello")))
            return s.PromptResponse(stop_reason="end_turn")

    serve_stdio(Hello)

**Where to start reading**, in the order a prompt turn and its cancellation travel:

1. ``_interface`` — ``Agent``, the base class: one method per agent method, with defaults.
2. ``_connection`` — ``AgentSideConnection``: the protocol enforced around the agent, one
   handler per method (``_on_session_prompt``, ``_on_session_cancel``...).
3. ``_requests`` — what the agent side tracks of the requests it serves, in wire order, as the
   protocol core's effects say: ``TurnFlags`` (each turn's ``cancelled`` flag, made as the
   prompt is read, set as the cancel is read), the session's requests in flight, the jobs that
   follow an answer, and the observer that carries the effects out.
4. ``_turn`` — ``PromptTurn``, what ``session_prompt`` streams into and calls the client
   through; ``_client`` — ``ClientHandle``, the typed calls to the client.
5. ``_sessions`` — ``SessionRegistry``, what the agent remembers of its sessions (a turn
   records its prompt and updates there), and ``_session``, one ``Session``.

Beside them, not on a turn's way: ``_session_files`` (the sessions on disk, with a
``state_dir``), ``_session_cursors`` (``session/list`` cursors), ``_closed`` (a closed session
kept compact).
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
