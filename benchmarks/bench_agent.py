"""Agent benchmark: how many sessions the registry holds per GiB, and prompt turns per second.

Usage::

    python benchmarks/bench_agent.py [--sessions N] [--turns N] [--rounds N] [--quick] [--no-append]

Both figures are measured against the echo agent (``python -m acpref.echo``) over its pipes,
driven by a bare ``Connection`` (public API only):

* **sessions per GiB**: create ``--sessions`` sessions (default 10,000) over the wire, each with
  a short history (three prompt turns: a user message and its echo each), many requests in flight
  at once. The agent process's memory is read from ``/proc/<pid>/status``: ``VmRSS`` once the
  first session exists (the baseline: interpreter, imports, threads) and ``VmHWM`` (peak RSS) at
  the end. Per-session cost is (peak - baseline) / sessions; sessions per GiB is 1 GiB divided by
  that. (Where ``/proc`` is missing, ``resource.getrusage(RUSAGE_CHILDREN)`` gives the peak.)
* **prompt turns per second**: one session, ``--turns`` sequential turns of a one-word prompt
  (each: request, one ``agent_message_chunk``, the ``end_turn`` answer); the median of
  ``--rounds`` rounds.

The figures are printed and, unless ``--no-append``, appended (with the command, date and
machine) to benchmarks/README.md as a new section.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from collections import deque
from typing import Any, Deque, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from acpref import schema as s  # noqa: E402
from acpref._shell.transport import FdStream, spawn  # noqa: E402
from acpref.connection import Connection, PendingRequest  # noqa: E402

GIB = 1 << 30
WAIT = 60.0
HERE = os.path.dirname(os.path.abspath(__file__))


class _Client:
    """A bare client of the echo agent: counts updates, answers nothing else."""

    def __init__(self) -> None:
        self.process = spawn([sys.executable, "-m", "acpref.echo"])
        out, inp = self.process.popen.stdout, self.process.popen.stdin
        assert out is not None and inp is not None
        self.updates = 0
        self.connection = Connection(
            FdStream(out.fileno(), inp.fileno()),
            {"session/update": self._on_update},
            name="bench-client",
        ).start()
        self.connection.request(
            "initialize",
            s.InitializeRequest(
                protocol_version=1,
                client_capabilities=s.ClientCapabilities(),
                client_info=s.Implementation(name="bench", version="0"),
            ),
            timeout=WAIT,
        )

    def _on_update(self, params: Any, ctx: Any) -> None:
        self.updates += 1

    def memory_kib(self, key: str) -> Optional[int]:
        try:
            with open(f"/proc/{self.process.pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def close(self) -> None:
        self.connection.close()
        self.process.shutdown(grace=5.0)


def _new(client: _Client, cwd: str) -> PendingRequest:
    return client.connection.request_async(
        "session/new", s.NewSessionRequest(cwd=cwd, mcp_servers=[])
    )


def _prompt(client: _Client, sid: str, text: str) -> PendingRequest:
    params = s.PromptRequest(session_id=sid, prompt=[s.TextContent(text=text)])
    return client.connection.request_async("session/prompt", params)


def bench_sessions(count: int, turns_each: int = 3, in_flight: int = 64) -> Dict[str, Any]:
    """Create ``count`` sessions with ``turns_each`` turns each; the agent's memory per session."""
    client = _Client()
    cwd = tempfile.gettempdir()
    try:
        first = _new(client, cwd).result(WAIT).session_id
        _prompt(client, first, "warm up").result(WAIT)
        baseline = client.memory_kib("VmRSS")
        started = time.perf_counter()
        # Each session is a little state machine: new, then its turns one after another; many
        # sessions progress at once, so the pipe stays busy.
        todo: Deque[int] = deque(range(count))
        active: List[Dict[str, Any]] = []
        while todo or active:
            while todo and len(active) < in_flight:
                todo.popleft()
                active.append({"pending": _new(client, cwd), "sid": None, "turn": 0})
            still = []
            for job in active:
                result = job["pending"].result(WAIT)
                if job["sid"] is None:
                    job["sid"] = result.session_id
                if job["turn"] < turns_each:
                    job["pending"] = _prompt(
                        client, job["sid"], f"turn {job['turn']} of a short history"
                    )
                    job["turn"] += 1
                    still.append(job)
            active = still
        elapsed = time.perf_counter() - started
        peak = client.memory_kib("VmHWM")
    finally:
        client.close()
    if peak is None:  # no /proc: the largest child's peak, in KiB on Linux
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    per_session = (peak - (baseline or 0)) * 1024 / count
    return {
        "sessions": count,
        "turns_each": turns_each,
        "baseline_rss_mib": (baseline or 0) / 1024,
        "peak_rss_mib": peak / 1024,
        "bytes_per_session": per_session,
        "sessions_per_gib": GIB / per_session if per_session > 0 else float("inf"),
        "seconds": elapsed,
        "requests_per_second": count * (1 + turns_each) / elapsed,
    }


def bench_turns(turns: int, rounds: int) -> Dict[str, Any]:
    """Sequential prompt turns in one session; the median turns/s over ``rounds`` rounds."""
    client = _Client()
    try:
        sid = _new(client, tempfile.gettempdir()).result(WAIT).session_id
        _prompt(client, sid, "warm up").result(WAIT)
        rates = []
        for _ in range(rounds):
            started = time.perf_counter()
            for _ in range(turns):
                _prompt(client, sid, "hello").result(WAIT)
            rates.append(turns / (time.perf_counter() - started))
    finally:
        client.close()
    return {
        "turns": turns,
        "rounds": rounds,
        "turns_per_second": statistics.median(rates),
        "all": rates,
    }


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            cpu = f"{names[0]} ({len(names)} logical CPUs)"
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {cpu}, Python {platform.python_version()}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 sessions, 200 turns, 3 rounds")
    parser.add_argument(
        "--no-append", action="store_true", help="print only; do not touch benchmarks/README.md"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.sessions, args.turns, args.rounds = 1000, 200, 3

    memory = bench_sessions(args.sessions)
    speed = bench_turns(args.turns, args.rounds)
    rounds = ", ".join(f"{r:,.0f}" for r in speed["all"])
    lines = [
        f"- sessions: {memory['sessions']:,} over the wire, {memory['turns_each']} turns each "
        f"({memory['requests_per_second']:,.0f} requests/s while creating them)",
        f"- agent RSS: {memory['baseline_rss_mib']:.1f} MiB after the first session, "
        f"{memory['peak_rss_mib']:.1f} MiB peak",
        f"- per session: {memory['bytes_per_session'] / 1024:.1f} KiB, so about "
        f"**{memory['sessions_per_gib']:,.0f} sessions per GiB**",
        f"- prompt turns: **{speed['turns_per_second']:,.0f} turns/s** "
        f"(median of {speed['rounds']} rounds of {speed['turns']} sequential turns; "
        f"rounds: {rounds})",
    ]
    print("\n".join(lines))
    if not args.no_append:
        command = "python benchmarks/bench_agent.py" + (
            ""
            if argv is None and len(sys.argv) == 1
            else " " + " ".join(sys.argv[1:] if argv is None else argv)
        )
        section = [
            "",
            "## Agent side: sessions per GiB and prompt turns per second "
            f"({datetime.date.today().isoformat()})",
            "",
            f"Command: `{command}`  ",
            f"Machine: {_machine()}",
            "",
            *lines,
            "",
        ]
        with open(os.path.join(HERE, "README.md"), "a", encoding="utf-8") as f:
            f.write("\n".join(section))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
