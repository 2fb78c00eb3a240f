"""What every peer shares: the file text served, the measure loop, the JSON report.

Only the standard library here: the floor and the SDK peers import it too.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List

#: The size of the big messages: an 8 MiB file, an 8 MiB update.
BIG = 8 * 1024 * 1024
#: The path the agents ask for in ``read``; the clients serve BIG characters for it.
BIG_PATH = "/bench/big.py"
_LINE = 'def handler(request):\n    return {"status": "ok", "items": [1, 2, 3]}  # code\n'


def big_text(size: int = BIG) -> str:
    """``size`` characters of code-like text: newlines and quotes, which JSON escapes."""
    return (_LINE * (size // len(_LINE) + 1))[:size]


def percentile(values: List[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run_measure(
    measure: str, count: int, prompt: Callable[[str], int], warmup: int = 20
) -> Dict[str, Any]:
    """Run one measure with ``prompt(text) -> updates received``; the report as a dict.

    * ``roundtrip``: ``count`` sequential tiny prompts, each answered by one echoed update;
    * ``stream``: one prompt answered by ``count`` updates (after a warm-up turn of 1,000);
    * ``read`` / ``update``: ``count`` prompts, each moving one 8 MiB message.
    """
    if measure == "roundtrip":
        for _ in range(warmup):
            prompt("hi")
        times = []
        for _ in range(count):
            start = time.perf_counter()
            got = prompt("hi")
            times.append(time.perf_counter() - start)
            assert got == 1, got
        return _roundtrip_report(times)
    if measure == "stream":
        prompt("stream 1000")
        start = time.perf_counter()
        got = prompt(f"stream {count}")
        seconds = time.perf_counter() - start
        assert got == count, (got, count)
        return {"count": count, "seconds": seconds, "per_second": count / seconds}
    if measure in ("read", "update"):
        text = _big_prompt(measure)
        prompt(text)  # warm-up: first allocation of the big buffers
        times = []
        for _ in range(count):
            start = time.perf_counter()
            prompt(text)
            times.append(time.perf_counter() - start)
        return _big_report(times)
    raise SystemExit(f"unknown measure {measure!r}")


async def run_measure_async(
    measure: str, count: int, prompt: Callable[[str], Awaitable[int]], warmup: int = 20
) -> Dict[str, Any]:
    """``run_measure`` for an asyncio client (the SDK's): the same steps, awaiting each turn."""
    if measure == "roundtrip":
        for _ in range(warmup):
            await prompt("hi")
        times = []
        for _ in range(count):
            start = time.perf_counter()
            got = await prompt("hi")
            times.append(time.perf_counter() - start)
            assert got == 1, got
        return _roundtrip_report(times)
    if measure == "stream":
        await prompt("stream 1000")
        start = time.perf_counter()
        got = await prompt(f"stream {count}")
        seconds = time.perf_counter() - start
        assert got == count, (got, count)
        return {"count": count, "seconds": seconds, "per_second": count / seconds}
    if measure in ("read", "update"):
        text = _big_prompt(measure)
        await prompt(text)
        times = []
        for _ in range(count):
            start = time.perf_counter()
            await prompt(text)
            times.append(time.perf_counter() - start)
        return _big_report(times)
    raise SystemExit(f"unknown measure {measure!r}")


def _roundtrip_report(times: List[float]) -> Dict[str, Any]:
    return {
        "count": len(times),
        "seconds": sum(times),
        "per_second": len(times) / sum(times),
        "median_us": statistics.median(times) * 1e6,
        "p99_us": percentile(times, 0.99) * 1e6,
    }


def _big_prompt(measure: str) -> str:
    return f"read {BIG_PATH}" if measure == "read" else f"big {BIG}"


def _big_report(times: List[float]) -> Dict[str, Any]:
    median = statistics.median(times)
    return {
        "count": len(times),
        "seconds": sum(times),
        "per_second": (BIG / (1024 * 1024)) / median,
        "median_us": median * 1e6,
    }


def report(result: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
