"""What a reader opens to follow one prompt turn with a cancellation, measured by tracing it.

A client (``ClientSideConnection`` with a ``ReferenceClient``) and an agent
(``AgentSideConnection``) run in this process over two in-memory pipes. The agent streams one
chunk, then waits for the cancel; the client prompts, sees the chunk, cancels and reads the
``cancelled`` answer. Every Python function that runs in a module of ``acpref`` while the
turn runs (after ``initialize`` and ``session/new``, so that only the turn is counted) is
recorded, on every thread, with ``sys.setprofile`` / ``threading.setprofile``.

Printed: the modules a reader has to open (and their lines), with the layer of each; the same
without the schema and codec modules (the types every message uses, read once).

    python benchmarks/reading_path.py [--list]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from typing import Any, Dict, Set

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import acpref  # noqa: E402
from acpref import schema as s  # noqa: E402
from acpref._shell.transport import memory_pipe  # noqa: E402
from acpref.agent import Agent, AgentSideConnection  # noqa: E402
from acpref.client import Allow, ClientSideConnection, ReferenceClient  # noqa: E402
from acpref.testing._pairs import _Duplex  # noqa: E402

PACKAGE = os.path.dirname(os.path.abspath(acpref.__file__))


class _WaitsForCancel(Agent):
    def session_prompt(self, params: Any, turn: Any) -> Any:
        turn.update(s.AgentMessageChunk(content=s.TextContent(text="working")))
        turn.cancelled.wait(30)
        return s.StopReason.END_TURN  # the agent side answers cancelled whatever this says


def _pair() -> Any:
    to_agent_ours, to_agent_theirs = memory_pipe()
    to_client_theirs, to_client_ours = memory_pipe()
    agent = AgentSideConnection(
        _WaitsForCancel, _Duplex(to_agent_theirs, to_client_theirs), name="agent"
    )
    agent.start()
    client = ReferenceClient(permissions=Allow())
    conn = ClientSideConnection(client, _Duplex(to_client_ours, to_agent_ours))
    return agent, client, conn


def measure() -> Dict[str, int]:
    seen: Set[str] = set()
    recording = threading.Event()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and recording.is_set():
            path = frame.f_code.co_filename
            if path.startswith(PACKAGE) and "/testing/" not in path:  # not the harness
                seen.add(path)

    # Every thread of both sides is started after this (threading.setprofile reaches only
    # threads started later), and records only while the turn runs.
    threading.setprofile(profile)
    sys.setprofile(profile)
    agent, client, conn = _pair()
    conn.initialize(timeout=10)
    session = conn.new_session(os.getcwd())
    recording.set()
    try:
        turn = conn.session_prompt_async(
            s.PromptRequest(
                session_id=session.session_id, prompt=[s.TextContent(text="hi")]
            )
        )
        view = client.view(session.session_id)
        for _ in range(1000):  # the chunk is in the view before we cancel: wait on that fact
            if view.messages:
                break
            threading.Event().wait(0.01)
        turn.cancel()
        answer = turn.result(10)
        assert answer.stop_reason == s.StopReason.CANCELLED, answer
    finally:
        recording.clear()
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        conn.close()
        agent.close()
    out: Dict[str, int] = {}
    for path in sorted(seen):
        with open(path, encoding="utf-8") as f:
            out[os.path.relpath(path, os.path.dirname(PACKAGE))] = sum(1 for _ in f)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list every module opened")
    args = ap.parse_args()
    files = measure()
    types = {p: n for p, n in files.items() if "/schema/" in p or "codec" in p}
    if args.list:
        for path, lines in files.items():
            print(f"{lines:6d}  {path}")
    print(f"all modules run:          {len(files):3d} files, {sum(files.values()):6d} lines")
    rest = {p: n for p, n in files.items() if p not in types}
    print(f"without schema and codec: {len(rest):3d} files, {sum(rest.values()):6d} lines")


if __name__ == "__main__":
    main()
