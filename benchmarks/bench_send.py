"""The agent's sending side, part by part: what one streamed update costs, and where.

Usage::

    python benchmarks/bench_send.py                  # best-of timing of each part, in µs
    python benchmarks/bench_send.py --callgrind      # instructions per call, under valgrind
    PYTHONPATH=/work/wt-base python benchmarks/bench_send.py --callgrind   # another acpref

The bench agent (``peers/acpref_agent.py``) is served in this process over a pipe (its input)
and a file (its output: a write never waits for a reader). One ``session/prompt`` then runs,
on the agent's handler thread, each part of the send path ``--count`` times in a row: the whole
``turn.update``, and its steps (building the models, ``codec.encode``, the JSON text, the
protocol core's ``observe``, the write, the registry's ``record``). cProfile sees only the main
thread, and wall figures swing with the machine's load; so the parts are measured inside the
handler thread, either as the best of many short batches (``perf_counter``) or, with
``--callgrind``, as instructions counted by valgrind (the same on an idle machine and a busy
one): collection is on only inside ``collections.deque``'s C loop that consumes each part's
calls (``--toggle-collect=consume_iterator``), one dump per part.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from typing import Any, Callable, Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))


def serve_and_measure(count: int, batch: int, timed: bool) -> Dict[str, Any]:
    """Serve the bench agent in-process; run the parts in one prompt turn; their figures."""
    sys.path.insert(0, os.path.join(HERE, "peers"))
    import acpref_agent  # noqa: E402

    import acpref.codec as codec
    import acpref._shell.connection as connection
    from acpref import schema as s
    from acpref._shell.transport import FdStream
    from acpref.agent import AgentSideConnection
    from acpref.agent._client import check_update

    done = threading.Event()
    results: Dict[str, Any] = {}

    class Agent(acpref_agent.BenchAgent):
        def session_prompt(self, params: Any, turn: Any) -> Any:
            try:
                results.update(run_parts(turn))
            finally:
                done.set()
            return s.StopReason.END_TURN

    def run_parts(turn: Any) -> Dict[str, Any]:
        conn = turn._connection
        observer = conn._observer  # the agent side's, which hands messages to the rules
        rules = observer.rules
        chunk = s.AgentMessageChunk(content=s.TextContent(text="token "))
        note = s.SessionNotification(session_id=turn.session_id, update=chunk)
        message = {"jsonrpc": "2.0", "method": "session/update", "params": codec.encode(note)}
        data = connection._ENCODER.encode(message).encode("utf-8") + b"\n"
        parts: List[Tuple[str, Callable[[Any], Any]]] = [
            ("turn.update", lambda _: turn.update(
                s.AgentMessageChunk(content=s.TextContent(text="token "))
            )),
            ("models", lambda _: s.SessionNotification(
                session_id=turn.session_id,
                update=s.AgentMessageChunk(content=s.TextContent(text="token ")),
            )),
            ("check_update", lambda _: check_update(chunk)),
            ("codec.encode", lambda _: codec.encode(note)),
            ("json text", lambda _: connection._ENCODER.encode(message).encode("utf-8")),
            ("connection.notify", lambda _: conn.notify("session/update", note)),
            ("observer.on_send", lambda _: observer.on_send(message)),
            ("core observe", lambda _: rules.state.observe(rules.me, message, refuse=rules._stops)),
            ("stream.write", lambda _: conn._stream.write(data)),
            ("registry.record", lambda _: turn._registry.record(turn.session, chunk)),
            ("nothing", lambda _: None),
        ]
        out: Dict[str, Any] = {"parts": [name for name, _ in parts]}
        for name, fn in parts:
            deque(map(fn, range(200)), maxlen=0)  # warm-up (a dump of its own under callgrind)
            if not timed:
                deque(map(fn, range(count)), maxlen=0)
                continue
            best = float("inf")
            for _ in range(max(1, count // batch)):
                start = time.perf_counter()
                deque(map(fn, range(batch)), maxlen=0)
                best = min(best, (time.perf_counter() - start) / batch)
            out[name] = best * 1e6
        return out

    r, w = os.pipe()
    with tempfile.NamedTemporaryFile(prefix="acpref-bench-send-", delete=False) as f:
        out_path = f.name
    out_fd = os.open(out_path, os.O_WRONLY | os.O_TRUNC)
    AgentSideConnection(Agent, FdStream(r, out_fd, write_timeout=None)).start()

    def send(message: Dict[str, Any]) -> None:
        os.write(w, (json.dumps(message) + "\n").encode())

    def answer(request_id: int) -> Dict[str, Any]:
        """The answer to our request ``request_id``, read from the agent's output file."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(out_path, "rb") as f:
                for line in f:
                    message = json.loads(line)
                    if message.get("id") == request_id and "method" not in message:
                        return message
            done.wait(0.01)  # a harness poll of a file, not a test's synchronisation
        raise SystemExit(f"no answer to request {request_id}")

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities": {}}})
        answer(1)
        send({"jsonrpc": "2.0", "id": 2, "method": "session/new",
              "params": {"cwd": os.getcwd(), "mcpServers": []}})
        session_id = answer(2)["result"]["sessionId"]
        send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
              "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}})
        if not done.wait(3600):
            raise SystemExit("the parts did not finish")
    finally:
        os.unlink(out_path)
    return results


def callgrind(count: int) -> Dict[str, float]:
    """Run this script under callgrind; instructions per call of each part."""
    with tempfile.TemporaryDirectory(prefix="acpref-callgrind-") as tmp:
        out = subprocess.run(
            [
                "valgrind", "--tool=callgrind", "--collect-atstart=no",
                "--toggle-collect=consume_iterator", "--dump-after=consume_iterator",
                f"--callgrind-out-file={tmp}/cg.out",
                sys.executable, os.path.abspath(__file__), "--count", str(count), "--uncounted",
            ],
            capture_output=True, text=True, check=True,
        )
        names = json.loads(out.stdout.strip().splitlines()[-1])["parts"]
        totals = []
        for path in sorted(glob.glob(f"{tmp}/cg.out.*"), key=lambda p: int(p.rsplit(".", 1)[1])):
            with open(path) as f:
                for line in f:
                    if line.startswith(("summary:", "totals:")):
                        totals.append(int(line.split()[1]))
                        break
    # Each part dumps twice (its warm-up of 200 calls, then its ``count`` calls): the last dump
    # of each pair is the measure.
    measured = totals[-2 * len(names):][1::2]
    return {name: total / count for name, total in zip(names, measured)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=None, help="calls per part")
    parser.add_argument("--callgrind", action="store_true", help="count instructions (valgrind)")
    parser.add_argument("--uncounted", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    import acpref

    where = os.path.dirname(os.path.dirname(os.path.abspath(acpref.__file__)))
    if args.callgrind:
        count = args.count or 1000
        figures = callgrind(count)
        print(f"acpref from {where}: instructions per call ({count} calls per part, callgrind)")
        for name, value in figures.items():
            print(f"  {name:20s} {value:10,.0f}")
        return
    results = serve_and_measure(args.count or 20_000, 50, timed=not args.uncounted)
    if args.uncounted:
        print(json.dumps({"parts": results["parts"]}))
        return
    print(f"acpref from {where}: best of batches of 50 calls, µs per call")
    for name in results["parts"]:
        print(f"  {name:20s} {results[name]:8.2f}")


if __name__ == "__main__":
    main()
