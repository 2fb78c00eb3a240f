"""Wire benchmark: acpref's Connection against a bare json + os-pipe floor, process to process.

Usage::

    python benchmarks/bench_wire.py [--rounds N] [--quick]

Three figures for each side, measured between this process and a child process over its
stdin/stdout pipes:

* **round trips/s**: one request with tiny params, wait for its response, repeat;
* **notifications/s**: one-way notifications; the clock stops when the child reports it has
  handled the last one;
* **MiB/s**: one request carrying an 8 MiB string parameter, answered with a small result.

*acpref* is a ``Connection`` on both ends (public API only: ``request``, ``notify``, handlers).
The *floor* is what any implementation must at least do: ``json.dumps`` + ``os.write`` of one
line per message, and a child reading lines with a buffered reader, ``json.loads`` and an
``os.write`` of its reply; no threads, no framework. In each round the sides run each figure
back to back, in an order that alternates; the report gives medians and the median over rounds
of the acpref/floor throughput ratio (1.0 = as fast as the floor).

A third side, the *threaded floor*, is shown for reference: the floor's code arranged in
acpref's threads (the child's reader hands requests to a worker thread and notifications to a
dispatcher thread; the parent's reader wakes the waiting caller). It tells how much of the
distance to the floor is the thread design itself (two thread handoffs per round trip, under the
GIL) rather than acpref's code.

The children are this same script in server mode: ``--serve acpref|floor|threaded``. Figures
and their analysis: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List

BIG_BYTES = 8 * 1024 * 1024
SIZES = {
    "full": {"round_trips": 5000, "notifications": 50000, "big": 3},
    "quick": {"round_trips": 1000, "notifications": 10000, "big": 1},
}


# -- Children -------------------------------------------------------------------------------------


def serve_acpref() -> None:
    """The acpref child: a Connection over stdin/stdout with three handlers."""
    from acpref._shell.transport import FdStream
    from acpref.connection import Connection

    state = {"seen": 0, "expected": -1}

    def echo(params: Any, ctx: Any) -> Any:
        return params

    def expect(params: Any, ctx: Any) -> bool:
        state["seen"], state["expected"] = 0, params["n"]
        return True

    def note(params: Any, ctx: Any) -> None:
        state["seen"] += 1  # notifications run one at a time, in order
        if state["seen"] == state["expected"]:
            ctx.connection.notify("_bench/done", {"n": state["seen"]})

    def big(params: Any, ctx: Any) -> Dict[str, int]:
        return {"length": len(params["text"])}

    handlers = {
        "_bench/echo": echo,
        "_bench/expect": expect,
        "_bench/note": note,
        "_bench/big": big,
    }
    stream = FdStream(sys.stdin.fileno(), sys.stdout.fileno())
    conn = Connection(stream, handlers, name="bench-child").start()
    conn.wait_closed()


def serve_floor() -> None:
    """The floor child: buffered line reads, json, one os.write per reply."""
    inp = os.fdopen(sys.stdin.fileno(), "rb", buffering=1 << 16)
    out = sys.stdout.fileno()
    seen, expected = 0, -1

    def reply(request_id: Any, result: Any) -> None:
        data = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode() + b"\n"
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]

    for line in inp:
        message = json.loads(line)
        method = message["method"]
        if method == "_bench/note":
            seen += 1
            if seen == expected:
                done = {"jsonrpc": "2.0", "method": "_bench/done", "params": {"n": seen}}
                os.write(out, json.dumps(done).encode() + b"\n")
        elif method == "_bench/echo":
            reply(message["id"], message["params"])
        elif method == "_bench/expect":
            seen, expected = 0, message["params"]["n"]
            reply(message["id"], True)
        elif method == "_bench/big":
            reply(message["id"], {"length": len(message["params"]["text"])})


def serve_threaded() -> None:
    """The threaded floor's child: a reader thread, a worker and a notification thread."""
    inp = os.fdopen(sys.stdin.fileno(), "rb", buffering=1 << 16)
    out = sys.stdout.fileno()
    requests: "queue.SimpleQueue[Dict[str, Any]]" = queue.SimpleQueue()
    notes: "queue.SimpleQueue[Dict[str, Any]]" = queue.SimpleQueue()
    state = {"seen": 0, "expected": -1}
    write_lock = threading.Lock()

    def send(message: Dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\n"
        with write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]

    def worker() -> None:
        while True:
            message = requests.get()
            method, params = message["method"], message["params"]
            if method == "_bench/expect":
                state["seen"], state["expected"] = 0, params["n"]
                result: Any = True
            elif method == "_bench/big":
                result = {"length": len(params["text"])}
            else:
                result = params
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def dispatcher() -> None:
        while True:
            notes.get()
            state["seen"] += 1
            if state["seen"] == state["expected"]:
                send({"jsonrpc": "2.0", "method": "_bench/done", "params": {"n": state["seen"]}})

    threading.Thread(target=worker, daemon=True).start()
    threading.Thread(target=dispatcher, daemon=True).start()
    for line in inp:
        message = json.loads(line)
        (requests if "id" in message else notes).put(message)


# -- Parents --------------------------------------------------------------------------------------


class AcprefSide:
    """This process's end for acpref: a Connection to an acpref child."""

    name = "acpref"

    def __init__(self) -> None:
        from acpref._shell.transport import FdStream, spawn
        from acpref.connection import Connection

        self._process = spawn([sys.executable, __file__, "--serve", "acpref"])
        self._done = threading.Event()
        popen = self._process.popen
        stream = FdStream(popen.stdout.fileno(), popen.stdin.fileno())  # type: ignore[union-attr]
        handlers = {"_bench/done": lambda params, ctx: self._done.set()}
        self._conn = Connection(stream, handlers, name="bench-parent").start()

    def round_trips(self, n: int) -> float:
        request = self._conn.request
        t0 = time.perf_counter()
        for i in range(n):
            assert request("_bench/echo", {"i": i}, timeout=30)["i"] == i
        return n / (time.perf_counter() - t0)

    def notifications(self, n: int) -> float:
        self._done.clear()
        self._conn.request("_bench/expect", {"n": n}, timeout=30)
        notify = self._conn.notify
        t0 = time.perf_counter()
        for i in range(n):
            notify("_bench/note", {"i": i})
        assert self._done.wait(60), "the child did not report the last notification"
        return n / (time.perf_counter() - t0)

    def big(self, text: str, count: int) -> float:
        t0 = time.perf_counter()
        for _ in range(count):
            result = self._conn.request("_bench/big", {"text": text}, timeout=60)
            assert result == {"length": len(text)}
        return count * len(text) / (1024 * 1024) / (time.perf_counter() - t0)

    def close(self) -> None:
        self._conn.close()
        self._process.shutdown()


class FloorSide:
    """This process's end for the floor: json.dumps + os.write, buffered readline + json.loads."""

    name = "floor"

    def __init__(self) -> None:
        self._popen = subprocess.Popen(
            [sys.executable, __file__, "--serve", "floor"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self._out = self._popen.stdin.fileno()  # type: ignore[union-attr]
        stdout = self._popen.stdout.fileno()  # type: ignore[union-attr]
        self._in = os.fdopen(stdout, "rb", buffering=1 << 16, closefd=False)
        self._ids = 0

    def _send(self, message: Dict[str, Any]) -> None:
        view = memoryview(json.dumps(message).encode() + b"\n")
        while view:
            view = view[os.write(self._out, view) :]

    def _request(self, method: str, params: Any) -> Any:
        self._ids += 1
        self._send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        response = json.loads(self._in.readline())
        assert response["id"] == self._ids
        return response["result"]

    def round_trips(self, n: int) -> float:
        t0 = time.perf_counter()
        for i in range(n):
            assert self._request("_bench/echo", {"i": i})["i"] == i
        return n / (time.perf_counter() - t0)

    def notifications(self, n: int) -> float:
        self._request("_bench/expect", {"n": n})
        t0 = time.perf_counter()
        for i in range(n):
            self._send({"jsonrpc": "2.0", "method": "_bench/note", "params": {"i": i}})
        done = json.loads(self._in.readline())
        assert done["method"] == "_bench/done" and done["params"]["n"] == n
        return n / (time.perf_counter() - t0)

    def big(self, text: str, count: int) -> float:
        t0 = time.perf_counter()
        for _ in range(count):
            assert self._request("_bench/big", {"text": text}) == {"length": len(text)}
        return count * len(text) / (1024 * 1024) / (time.perf_counter() - t0)

    def close(self) -> None:
        self._popen.stdin.close()  # type: ignore[union-attr]
        self._popen.wait(10)
        self._in.close()
        self._popen.stdout.close()  # type: ignore[union-attr]


class ThreadedFloorSide(FloorSide):
    """The threaded floor's end: a reader thread resolves an Event per request."""

    name = "threaded"

    def __init__(self) -> None:
        self._popen = subprocess.Popen(
            [sys.executable, __file__, "--serve", "threaded"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
        )
        self._out = self._popen.stdin.fileno()  # type: ignore[union-attr]
        stdout = self._popen.stdout.fileno()  # type: ignore[union-attr]
        self._in = os.fdopen(stdout, "rb", buffering=1 << 16, closefd=False)
        self._ids = 0
        self._waiting: Dict[Any, List[Any]] = {}
        self._done = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self._in:
            message = json.loads(line)
            if "method" in message:
                self._done.set()
            else:
                slot = self._waiting.pop(message["id"])
                slot[1] = message
                slot[0].set()

    def _request(self, method: str, params: Any) -> Any:
        self._ids += 1
        slot: List[Any] = [threading.Event(), None]
        self._waiting[self._ids] = slot
        self._send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        slot[0].wait()
        return slot[1]["result"]

    def notifications(self, n: int) -> float:
        self._done.clear()
        self._request("_bench/expect", {"n": n})
        t0 = time.perf_counter()
        for i in range(n):
            self._send({"jsonrpc": "2.0", "method": "_bench/note", "params": {"i": i}})
        assert self._done.wait(60)
        return n / (time.perf_counter() - t0)

    def close(self) -> None:
        self._popen.stdin.close()  # type: ignore[union-attr]
        self._popen.wait(10)
        self._reader.join(10)
        self._in.close()
        self._popen.stdout.close()  # type: ignore[union-attr]


# -- Running --------------------------------------------------------------------------------------

FIGURES = [
    ("round_trips", "round trips/s"),
    ("notifications", "notifications/s"),
    ("big", "MiB/s, 8 MiB param"),
]


def run(side: Any, key: str, sizes: Dict[str, int], text: str) -> float:
    if key == "big":
        return side.big(text, sizes["big"])
    return getattr(side, key)(sizes[key])


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rounds", type=int, default=None, help="rounds (default 7; 3 with --quick)"
    )
    parser.add_argument("--quick", action="store_true", help="smaller counts, fewer rounds")
    parser.add_argument("--serve", choices=["acpref", "floor", "threaded"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        {"acpref": serve_acpref, "floor": serve_floor, "threaded": serve_threaded}[args.serve]()
        return 0

    sizes = SIZES["quick" if args.quick else "full"]
    rounds = args.rounds or (3 if args.quick else 7)
    text = ("0123456789abcdef" * (BIG_BYTES // 16))[:BIG_BYTES]
    sides: List[Any] = [AcprefSide(), FloorSide(), ThreadedFloorSide()]
    names = [side.name for side in sides]
    # results[key][name] = one figure per round; the sides of one round run back to back, in
    # an order that alternates, so that a slow spell of the machine hits them alike.
    results: Dict[str, Dict[str, List[float]]] = {k: {n: [] for n in names} for k, _ in FIGURES}
    try:
        warm = {"round_trips": 200, "notifications": 1000, "big": 1}
        for side in sides:
            for key, _ in FIGURES:
                run(side, key, warm, text)
        for round_no in range(rounds):
            order = sides if round_no % 2 == 0 else sides[::-1]
            for key, label in FIGURES:
                for side in order:
                    results[key][side.name].append(run(side, key, sizes, text))
                figures = "  ".join(f"{n} {results[key][n][-1]:,.0f}" for n in names)
                print(f"round {round_no + 1}  {label:20} {figures}", flush=True)
    finally:
        for side in sides:
            side.close()

    print(f"\nmedians of {rounds} rounds; ratio = median over rounds of acpref / floor")
    print(
        f"{'figure':20} {'acpref':>10} {'floor':>10} {'ratio':>6}   {'threaded':>10} {'ratio':>6}"
    )
    worst = float("inf")
    for key, label in FIGURES:
        got = results[key]
        ratio = statistics.median(a / f for a, f in zip(got["acpref"], got["floor"]))
        threaded = statistics.median(t / f for t, f in zip(got["threaded"], got["floor"]))
        worst = min(worst, ratio)
        medians = [statistics.median(got[n]) for n in ("acpref", "floor", "threaded")]
        print(
            f"{label:20} {medians[0]:10,.0f} {medians[1]:10,.0f} {ratio:6.2f}"
            f"   {medians[2]:10,.0f} {threaded:6.2f}"
        )
    print(f"\nlowest acpref/floor ratio {worst:.2f} (target >= 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
