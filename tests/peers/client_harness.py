"""Helpers for the client's tests: a scripted agent joined to a ClientSideConnection.

* ``Pair``: the agent (``client_agent.ScriptedAgent``) in this process, over two real pipes.
* ``spawn_agent``: the agent as a subprocess (``python client_agent.py ...``).
* ``run_steps``: send a scripted prompt and return the results the agent recorded.

Every wait is bounded by ``WAIT``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from client_agent import ScriptedAgent  # noqa: E402

from acpref._shell.transport import FdStream  # noqa: E402
from acpref.client import ClientSideConnection, ReferenceClient  # noqa: E402

WAIT = 10.0
AGENT_SCRIPT = HERE / "client_agent.py"


class Pair:
    """A ClientSideConnection talking to an in-process ScriptedAgent over two os.pipe()s."""

    def __init__(
        self,
        client: Optional[Any] = None,
        agent: Optional[ScriptedAgent] = None,
        *,
        initialize: bool = True,
        **kwargs: Any,
    ) -> None:
        a_in, c_out = os.pipe()
        c_in, a_out = os.pipe()
        self.agent = agent if agent is not None else ScriptedAgent()
        self.agent_conn = self.agent.serve(FdStream(a_in, a_out, owns_fds=True))
        self.client = client if client is not None else ReferenceClient()
        self.conn = ClientSideConnection(
            self.client, FdStream(c_in, c_out, owns_fds=True), **kwargs
        )
        if initialize:
            self.conn.initialize(timeout=WAIT)

    def new_session(self, cwd: str, **kwargs: Any) -> str:
        return self.conn.new_session(cwd, timeout=WAIT, **kwargs).session_id

    def close(self) -> None:
        self.conn.close()
        self.agent_conn.close()


def spawn_agent(client: Any, *args: str, **kwargs: Any) -> ClientSideConnection:
    return ClientSideConnection.spawn(client, [sys.executable, str(AGENT_SCRIPT), *args], **kwargs)


def run_steps(
    conn: ClientSideConnection,
    client: ReferenceClient,
    session_id: str,
    steps: Sequence[Any],
    timeout: float = WAIT,
) -> List[Any]:
    """Run a scripted prompt; return the agent's recorded results (one per step)."""
    conn.prompt(session_id, json.dumps({"steps": list(steps)}), timeout=timeout)
    return results_of(client, session_id)


def results_of(client: ReferenceClient, session_id: str) -> List[Any]:
    view = client.view(session_id)
    with view.lock:
        last = [m for m in view.messages if m.message_id == "results"][-1]
        # Each turn appends to the same "results" message id: take the last chunk.
        return json.loads(last.blocks[-1].text)


def join_new_threads(before: set, timeout: float = WAIT) -> List[threading.Thread]:
    """Join the threads started since ``before``; return those still alive after ``timeout``."""
    deadline = time.monotonic() + timeout
    alive = []
    for thread in set(threading.enumerate()) - before:
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            alive.append(thread)
    return alive


def call(method: str, **params: Any) -> dict:
    """A ``call`` step in the current session."""
    return {"call": method, "params": {"sessionId": "$sid", **params}}
