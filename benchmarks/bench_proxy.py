"""Proxy benchmark: what ``acpref proxy`` adds to each message, in microseconds.

Usage::

    python benchmarks/bench_proxy.py [--rounds N] [--quick]

A minimal agent (this script with ``--serve``: a buffered line reader and one ``os.write`` per
answer, no framework) answers ``initialize``, ``session/new`` and then ``session/prompt``
requests with ``stopReason: "end_turn"``. The benchmark sends one prompt, waits for its answer,
and repeats, timing each round trip: once straight to the agent, once through
``python -m acpref proxy -- <the same agent>``, which forwards, records nothing, and validates
every message (the strict codec and the rules) on its side thread. Runs alternate direct and
proxied; the report gives the median round trip of each, and the median added time per message
(a round trip is two messages: the request and its response).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import List

HERE = os.path.abspath(__file__)


def serve() -> None:
    """The agent: answer each request line at once."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "agentInfo": {"name": "bench", "version": "1"},
            }
        elif method == "session/new":
            result = {"sessionId": "bench-session"}
        elif method == "session/prompt":
            result = {"stopReason": "end_turn"}
        else:
            continue
        out.write(
            json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\n"
        )
        out.flush()


def _round_trips(argv: List[str], rounds: int) -> List[float]:
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
    )
    assert proc.stdin is not None and proc.stdout is not None
    reader = proc.stdout

    def call(request_id: int, method: str, params: dict) -> None:
        line = (
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        os.write(proc.stdin.fileno(), line)
        reader.readline()

    call(
        0,
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {},
            "clientInfo": {"name": "b", "version": "1"},
        },
    )
    call(1, "session/new", {"cwd": "/tmp", "mcpServers": []})
    prompt = {"sessionId": "bench-session", "prompt": [{"type": "text", "text": "hello"}]}
    times = []
    for i in range(rounds):
        start = time.perf_counter()
        call(2 + i, "session/prompt", prompt)
        times.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait(30)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rounds", type=int, default=3000, help="round trips per run (default 3000)"
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="runs of each kind, alternated (default 3)"
    )
    parser.add_argument("--quick", action="store_true", help="500 round trips, 1 run")
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    rounds, runs = (500, 1) if args.quick else (args.rounds, args.runs)
    agent = [sys.executable, HERE, "--serve"]
    proxied = [sys.executable, "-m", "acpref", "proxy", "--quiet", "--", *agent]
    direct_times: List[float] = []
    proxy_times: List[float] = []
    for _ in range(runs):
        direct_times += _round_trips(agent, rounds)
        proxy_times += _round_trips(proxied, rounds)
    direct = statistics.median(direct_times) * 1e6
    through = statistics.median(proxy_times) * 1e6
    print(f"round trips: {rounds} x {runs} runs each")
    print(f"median round trip, direct:        {direct:8.1f} us")
    print(f"median round trip, through proxy: {through:8.1f} us")
    print(f"median added per message:         {(through - direct) / 2:8.1f} us")


if __name__ == "__main__":
    main()
