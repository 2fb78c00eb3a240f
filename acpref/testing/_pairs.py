"""In-memory pairs: an agent in this process, and an ``AgentDriver`` talking to it.

``memory_pair(agent)`` serves an ``acpref.agent.Agent`` (or a factory of one) with an
``AgentSideConnection`` over two in-memory pipes (``_transport.memory_pipe``), and returns the
driver that plays its client: the same recorded, oracle-judged connection as with a process,
without one. Each direction is its own pipe, so that ending our output (the client's end of the
connection) still lets the agent finish what it was sending.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Union

from .._shell.transport import memory_pipe
from ..agent import Agent, AgentSideConnection, ClientHandle
from ._driver import AgentDriver

__all__ = ["memory_pair", "AgentUnderTest"]

#: What ``memory_pair`` serves: an agent, or a factory that builds one on its client handle.
AgentUnderTest = Union[Agent, Callable[[ClientHandle], Agent]]


# spec TRANSPORT-13: this transport's setup and exchange are documented in the module doc and
# in spec_notes/transports.md (Other transports).
class _Duplex:
    """Reads from one in-memory pipe and writes to another: each direction closes alone."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self._reader = reader
        self._writer = writer

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]:
        return self._reader.read(size, timeout)

    def interrupt(self) -> None:
        self._reader.interrupt()

    def write(self, data: bytes) -> None:
        self._writer.write(data)

    def close_output(self) -> None:
        self._writer.close()

    def close(self) -> None:
        self._writer.close()
        self._reader.close()


def memory_pair(
    agent: AgentUnderTest,
    *,
    transcript: Union[str, "os.PathLike[str]", None] = None,
    timeout: float = 10.0,
    newer_spec: bool = False,
) -> AgentDriver:
    """Serve ``agent`` in this process; return the driver connected to it.

    ``driver.agent_side`` is the ``AgentSideConnection``; ``driver.close()`` ends both and
    returns the oracle's report.
    """
    # spec TRANSPORT-11: a custom transport: two in-memory pipes instead of a process's stdio.
    to_agent_ours, to_agent_theirs = memory_pipe()
    to_client_theirs, to_client_ours = memory_pipe()
    agent_stream = _Duplex(reader=to_agent_theirs, writer=to_client_theirs)
    client_stream = _Duplex(reader=to_client_ours, writer=to_agent_ours)
    # spec TRANSPORT-12: the same connection (framing, JSON-RPC, rules, lifecycle) as over stdio:
    # only the byte channel differs.
    side = AgentSideConnection(agent, agent_stream, name="agent-in-memory")
    driver = AgentDriver(
        client_stream,
        transcript=transcript,
        timeout=timeout,
        newer_spec=newer_spec,
        name="agent-in-memory",
        close_output=client_stream.close_output,
    )
    driver.agent_side = side
    side.start()
    return driver
