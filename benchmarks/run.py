"""The benchmark suite: acpref against the official Python SDK and a bare floor, on this machine.

Usage::

    python benchmarks/run.py [--quick] [--rounds N] [--only MEASURE,...] [--json FILE]

Run it with the interpreter that has acpref installed (``/work/venv/bin/python``). The official
SDK (``agent-client-protocol`` from PyPI) is installed on first use into ``benchmarks/.venv-sdk``,
a venv of its own: it is never a dependency of acpref.

Three implementations of the same agent and client (``benchmarks/peers``) are measured side by
side in every round, in an order that changes from round to round:

* **floor**: two processes exchanging the same JSON-RPC lines with only ``json`` and ``os`` pipes;
* **sdk**: the official SDK (``acp``), asyncio, on its public API;
* **acpref**: ``acpref.agent.Agent`` served by ``serve_stdio``, driven by ``ClientSideConnection``.

The measures (``--only`` picks some, by these names):

* ``roundtrip``: sequential ``session/prompt`` turns, each echoed back as one update;
* ``stream``: one turn that streams 20,000 ``agent_message_chunk`` updates;
* ``read``, ``update``: an 8 MiB ``fs/read_text_file`` answer, an 8 MiB update;
* ``startup``: spawn to the ``initialize`` answer, driven by a bare client (so only the agent's
  start counts); ``acpref echo`` is shown beside the bench agents;
* ``import``: ``python -X importtime``: ``import acpref``, ``acpref.agent``, ``acpref.client``,
  against ``import acp``;
* ``memory``: the agent's resident memory once initialized, and after 10,000 ``session/new``;
* ``oracle``: ``acpref.oracle.validate`` over a large recorded session (messages per second);
* ``proxy``: what ``acpref proxy`` adds to each message (``bench_proxy.py``).

The VM this was written on swings 3x in absolute speed with its load: compare the ratios, which
are computed within each round (so each side sees the same load) and then taken as medians.
Results and their reading: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "peers")
SDK_VENV = os.path.join(HERE, ".venv-sdk")
SDK_PYTHON = os.path.join(SDK_VENV, "bin", "python")
#: The SDK release measured; pinned so that figures compare across runs.
SDK_REQUIREMENT = "agent-client-protocol==0.12.1"
CACHE = os.path.join(HERE, ".cache")

SIDES = ["floor", "sdk", "acpref"]
#: ``--variant DIR``: acpref's peers once more, with DIR first on PYTHONPATH (a patched copy of
#: acpref), measured in the same rounds as a fourth side.
VARIANT: Dict[str, str] = {}
MEASURES = (
    "roundtrip",
    "stream",
    "read",
    "update",
    "startup",
    "import",
    "memory",
    "oracle",
    "proxy",
)

#: Work per round: (full, quick).
COUNTS = {
    "roundtrip": (2000, 500),
    "stream": (20_000, 20_000),
    "read": (5, 2),
    "update": (5, 2),
    "startup": (5, 3),  # spawns per agent per round
    "import": (3, 2),  # imports per module per round
    "memory": (10_000, 2_000),  # session/new requests
    "oracle": (100_000, 30_000),  # messages in the recorded session (at least)
    "proxy": (2000, 500),  # round trips per run
}

#: The targets of issue 8, as (what is compared, limit).
TARGETS = {
    "roundtrip": "acpref <= 1.5x floor",
    "stream": "acpref <= 2x floor",
    "read": "acpref <= 1.3x floor",
    "update": "acpref <= 1.3x floor",
    "startup": "acpref <= 0.25x SDK",
    "import": "acpref <= 0.2x SDK",
    "memory_idle": "acpref <= 0.6x SDK",
    "memory_growth": "acpref <= 1x SDK",
    "oracle": ">= 50,000 messages/s",
    "proxy": "<= 50 us/message",
}


# -- Interpreters ---------------------------------------------------------------------------------


def python_of(side: str) -> str:
    return SDK_PYTHON if side == "sdk" else sys.executable


def peer_of(side: str) -> str:
    return "acpref" if side == "variant" else side


def env_of(side: str) -> Optional[Dict[str, str]]:
    if side != "variant":
        return None
    path = os.pathsep.join(p for p in (VARIANT["path"], os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def use_bytecode_cache() -> None:
    """Let every child process read and write compiled bytecode, under benchmarks/.cache.

    An installed package ships its ``.pyc`` files (pip compiles them); a source checkout run with
    ``PYTHONDONTWRITEBYTECODE`` compiles every module at every start, which would count the
    compiler, not the import, against acpref. The cache lives outside the source tree.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(CACHE, "pycache")


def warm_up() -> None:
    """Fill the bytecode cache: import everything each side runs, once, before measuring."""
    modules = "acpref.agent, acpref.client, acpref.echo, acpref.oracle, acpref._cli.proxy"
    subprocess.run([sys.executable, "-c", f"import {modules}"], check=True)
    if "sdk" in SIDES:
        subprocess.run([SDK_PYTHON, "-c", "import acp, asyncio.subprocess"], check=True)
    for argv in AGENTS.values():
        startup_ms(argv())


def ensure_sdk() -> bool:
    """Create benchmarks/.venv-sdk with the official SDK, unless it is there; False if it fails."""
    if os.path.exists(SDK_PYTHON):
        probe = subprocess.run([SDK_PYTHON, "-c", "import acp"], capture_output=True)
        if probe.returncode == 0:
            return True
    print(f"installing {SDK_REQUIREMENT} into {SDK_VENV} ...", file=sys.stderr)
    try:
        subprocess.run([sys.executable, "-m", "venv", SDK_VENV], check=True)
        pip = os.path.join(SDK_VENV, "bin", "pip")
        subprocess.run([pip, "install", "-q", SDK_REQUIREMENT], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"cannot install the SDK ({exc}): measuring without it", file=sys.stderr)
        return False
    return True


def drop_sdk() -> None:
    """Measure the floor and acpref only (the SDK could not be installed)."""
    SIDES.remove("sdk")
    del AGENTS["sdk"]
    del IMPORTS["import acp"]


def agent_argv(side: str) -> List[str]:
    return [python_of(side), os.path.join(PEERS, f"{side}_agent.py")]


#: Agents measured on start-up and memory: the three bench agents, and acpref's echo agent.
AGENTS = {
    "floor": lambda: agent_argv("floor"),
    "sdk": lambda: agent_argv("sdk"),
    "acpref": lambda: agent_argv("acpref"),
    "acpref echo": lambda: [sys.executable, "-m", "acpref.echo"],
}


# -- Wire measures: each side's client drives its own agent -------------------------------------


def run_client(side: str, measure: str, count: int) -> Dict[str, Any]:
    argv = [
        python_of(side),
        os.path.join(PEERS, f"{peer_of(side)}_client.py"),
        "--measure",
        measure,
        "--count",
        str(count),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env_of(side))
    if done.returncode != 0:
        raise RuntimeError(f"{side} {measure} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- Start-up and memory: a bare client drives each agent ---------------------------------------

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}},
        "clientInfo": {"name": "bench-driver", "version": "1"},
    },
}


class BareDriver:
    """Spawns an agent and talks to it with raw lines: the agent's own costs, nothing else."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in = os.fdopen(self.process.stdout.fileno(), "rb", buffering=1 << 16, closefd=False)
        self._out = self.process.stdin.fileno()
        self._ids = 0

    def call(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        os.write(self._out, json.dumps(message).encode() + b"\n")
        return self.wait_for(self._ids)

    def initialize(self) -> float:
        """Send ``initialize`` at once; the seconds from spawn to its answer."""
        os.write(self._out, json.dumps(_INITIALIZE).encode() + b"\n")
        self.wait_for(0)
        return time.perf_counter() - self.started

    def wait_for(self, request_id: int) -> Dict[str, Any]:
        while True:
            line = self._in.readline()
            if not line:
                raise RuntimeError("the agent closed its output")
            message = json.loads(line)
            if "method" not in message and message.get("id") == request_id:
                return message

    def memory_kib(self) -> Dict[str, int]:
        out = {}
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(line.split()[1])
        return out

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def startup_ms(argv: Sequence[str]) -> float:
    driver = BareDriver(argv)
    try:
        return driver.initialize() * 1000
    finally:
        driver.close()


def memory_mib(argv: Sequence[str], sessions: int) -> Dict[str, float]:
    """Peak resident memory once initialized (idle) and after ``sessions`` session/new."""
    driver = BareDriver(argv)
    try:
        driver.initialize()
        idle = driver.memory_kib()
        cwd = tempfile.gettempdir()
        for _ in range(sessions):
            driver.call("session/new", {"cwd": cwd, "mcpServers": []})
        after = driver.memory_kib()
    finally:
        driver.close()
    return {
        "idle": idle["VmHWM"] / 1024,
        "after": after["VmHWM"] / 1024,
        "growth": (after["VmHWM"] - idle["VmHWM"]) / 1024,
    }


# -- Import cost ----------------------------------------------------------------------------------

IMPORTS = {
    "import acpref": ("acpref", "acpref"),
    "import acpref.agent": ("acpref", "acpref.agent"),
    "import acpref.client": ("acpref", "acpref.client"),
    "import acp": ("sdk", "acp"),
}


def import_ms(side: str, module: str) -> float:
    """The cumulative import time of ``module`` (``-X importtime``), in a fresh interpreter."""
    done = subprocess.run(
        [python_of(side), "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    pattern = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$")
    for line in reversed(done.stderr.splitlines()):
        found = pattern.match(line)
        if found and found.group(2) == module:  # the top-level line: no indentation
            return int(found.group(1)) / 1000
    raise RuntimeError(f"no import time for {module}:\n{done.stderr[-2000:]}")


# -- The oracle -----------------------------------------------------------------------------------


def recorded_session(messages: int) -> str:
    """A transcript of at least ``messages`` messages: acpref's client and the echo agent.

    Recorded once and cached in benchmarks/.cache. Each session: an echo, ``/stream 200``
    (plan, thought, chunks, title, usage), ``/tool`` (a tool call and its permission request),
    ``/read`` (a tool call around ``fs/read_text_file``), and a mode switch.
    """
    path = os.path.join(CACHE, f"session-{messages}.jsonl")
    if os.path.exists(path):
        return path
    os.makedirs(CACHE, exist_ok=True)
    from acpref.client import Allow, ClientSideConnection, ReferenceClient
    from acpref.oracle import TranscriptRecorder

    work = tempfile.mkdtemp(prefix="acpref-bench-")
    with open(os.path.join(work, "notes.txt"), "w", encoding="utf-8") as f:
        f.write("a file the agent reads\n" * 20)
    recorder = TranscriptRecorder(
        path + ".part", me="client", keep=True, header={"recorder": "bench"}
    )
    client = ReferenceClient(permissions=Allow())
    conn = ClientSideConnection.spawn(
        client, [sys.executable, "-m", "acpref.echo"], recorder=recorder
    )
    with conn:
        conn.initialize(timeout=60)
        count = 0
        while count < messages:
            sid = conn.new_session(work).session_id
            for text in ("hello, echo", "/stream 200", "/tool", "/read notes.txt"):
                conn.prompt(sid, text, timeout=60)
            conn.set_mode(sid, "code", timeout=60)
            count = len(recorder.records or ())
    recorder.eof("client")
    recorder.close()
    os.replace(path + ".part", path)
    return path


def oracle_rate(path: str) -> Dict[str, float]:
    from acpref.oracle import read_transcript, validate

    records = read_transcript(path)  # the file is read once; validation alone is timed
    started = time.perf_counter()
    report = validate(records)
    seconds = time.perf_counter() - started
    return {"messages": report.messages, "per_second": report.messages / seconds}


def proxy_added_us(round_trips: int) -> float:
    """The median time ``acpref proxy`` adds per message, from one direct and one proxied run."""
    sys.path.insert(0, HERE)
    import bench_proxy

    agent = [sys.executable, bench_proxy.HERE, "--serve"]
    proxied = [sys.executable, "-m", "acpref", "proxy", "--quiet", "--", *agent]
    direct = statistics.median(bench_proxy._round_trips(agent, round_trips))
    through = statistics.median(bench_proxy._round_trips(proxied, round_trips))
    return (through - direct) / 2 * 1e6


# -- Rounds ---------------------------------------------------------------------------------------


def rotated(items: Sequence[str], n: int) -> List[str]:
    n %= len(items)
    return list(items[n:]) + list(items[:n])


Results = Dict[str, Dict[str, List[Any]]]


def run_round(
    r: int, measures: Sequence[str], quick: bool, results: Results, log: Callable
) -> None:
    pick = 1 if quick else 0

    def add(measure: str, key: str, value: Any) -> None:
        results.setdefault(measure, {}).setdefault(key, []).append(value)

    for measure in ("roundtrip", "stream", "read", "update"):
        if measure in measures:
            for side in rotated(SIDES, r):
                add(measure, side, run_client(side, measure, COUNTS[measure][pick]))
            log(measure, results[measure])
    if "startup" in measures:
        for _ in range(COUNTS["startup"][pick]):
            for name in rotated(list(AGENTS), r):
                add("startup", name, startup_ms(AGENTS[name]()))
        log("startup", results["startup"])
    if "import" in measures:
        for _ in range(COUNTS["import"][pick]):
            for name in rotated(list(IMPORTS), r):
                add("import", name, import_ms(*IMPORTS[name]))
        log("import", results["import"])
    if "memory" in measures:
        for name in rotated(list(AGENTS), r):
            add("memory", name, memory_mib(AGENTS[name](), COUNTS["memory"][pick]))
        log("memory", results["memory"])
    if "oracle" in measures:
        add("oracle", "acpref", oracle_rate(recorded_session(COUNTS["oracle"][pick])))
        log("oracle", results["oracle"])
    if "proxy" in measures:
        add("proxy", "acpref", proxy_added_us(COUNTS["proxy"][pick]))
        log("proxy", results["proxy"])


# -- The report -----------------------------------------------------------------------------------


def _median(values: List[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _paired_ratio(a: List[float], b: List[float]) -> float:
    """The median over rounds of a/b, each pair measured in the same round."""
    return _median([x / y for x, y in zip(a, b) if y])


def summarize(results: Results) -> List[Dict[str, Any]]:
    """One row per figure: floor, SDK, acpref, the ratios, the target and whether it is met."""
    rows: List[Dict[str, Any]] = []

    def row(
        name: str,
        unit: str,
        floor: Any,
        sdk: Any,
        ours: Any,
        ratio: Any,
        target: str,
        met: Optional[bool],
        sdk_ratio: Any = None,
    ) -> None:
        rows.append(
            {
                "measure": name,
                "unit": unit,
                "floor": floor,
                "sdk": sdk,
                "acpref": ours,
                "ratio": ratio,
                "sdk_ratio": sdk_ratio,
                "target": target,
                "met": met,
            }
        )

    for measure, unit, limit in (
        ("roundtrip", "turns/s", 1.5),
        ("stream", "updates/s", 2.0),
        ("read", "MiB/s", 1.3),
        ("update", "MiB/s", 1.3),
    ):
        data = results.get(measure)
        if not data:
            continue
        rate = {side: [d["per_second"] for d in data.get(side, [])] for side in SIDES}
        # cost ratio: the floor's rate over ours (time per turn, per update, per MiB)
        theirs = _paired_ratio(rate["floor"], rate.get("sdk", [])) if rate.get("sdk", []) else None
        for side in ("acpref", "variant"):
            if not rate.get(side):
                continue
            label = "" if side == "acpref" else f" ({VARIANT['label']})"
            ours = _paired_ratio(rate["floor"], rate[side])
            row(
                measure + label,
                unit,
                _median(rate["floor"]),
                _median(rate.get("sdk", [])),
                _median(rate[side]),
                ours,
                TARGETS[measure] if side == "acpref" else "",
                ours <= limit,
                theirs,
            )
            if measure != "roundtrip":
                continue
            for key, what in (("median_us", "median latency"), ("p99_us", "p99 latency")):
                lat = {name: [d[key] for d in data.get(name, [])] for name in SIDES}
                row(
                    f"roundtrip {what}{label}",
                    "us",
                    _median(lat["floor"]),
                    _median(lat.get("sdk", [])),
                    _median(lat[side]),
                    _paired_ratio(lat[side], lat["floor"]),
                    "",
                    None,
                    _paired_ratio(lat.get("sdk", []), lat["floor"]) if lat.get("sdk", []) else None,
                )
    data = results.get("startup")
    if data:
        sdk = data.get("sdk", [])
        for name in ("acpref", "acpref echo"):
            ratio = _paired_ratio(data[name], sdk) if sdk else None
            row(
                f"startup ({name})",
                "ms",
                _median(data["floor"]),
                _median(sdk),
                _median(data[name]),
                ratio,
                TARGETS["startup"] if name == "acpref" else "",
                (ratio <= 0.25) if ratio is not None and name == "acpref" else None,
            )
    data = results.get("import")
    if data:
        sdk = data.get("import acp", [])
        for name in ("import acpref", "import acpref.agent", "import acpref.client"):
            ratio = _paired_ratio(data[name], sdk) if sdk else None
            row(
                name,
                "ms",
                None,
                _median(sdk),
                _median(data[name]),
                ratio,
                TARGETS["import"] if name == "import acpref" else "",
                (ratio <= 0.2) if ratio is not None and name == "import acpref" else None,
            )
    data = results.get("memory")
    if data:
        for key, target in (("idle", "memory_idle"), ("growth", "memory_growth")):
            vals = {name: [d[key] for d in data.get(name, [])] for name in AGENTS}
            for name in ("acpref", "acpref echo"):
                limit = 0.6 if key == "idle" else 1.0
                ours, sdk = _median(vals[name]), _median(vals.get("sdk", []))
                ratio = ours / sdk if vals.get("sdk") and sdk > 0 else None
                row(
                    f"memory {key} ({name})",
                    "MiB",
                    _median(vals["floor"]),
                    sdk,
                    ours,
                    ratio,
                    TARGETS[target] if name == "acpref" else "",
                    (ratio <= limit) if ratio is not None and name == "acpref" else None,
                )
    data = results.get("oracle")
    if data:
        rate = _median([d["per_second"] for d in data["acpref"]])
        row(
            f"oracle ({data['acpref'][0]['messages']:,} messages)",
            "messages/s",
            None,
            None,
            rate,
            None,
            TARGETS["oracle"],
            rate >= 50_000,
        )
    data = results.get("proxy")
    if data:
        added = _median(data["acpref"])
        row("proxy added per message", "us", None, None, added, None, TARGETS["proxy"], added <= 50)
    return rows


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.2f}" if value < 10 else f"{value:.1f}"
    return str(value)


def markdown(rows: List[Dict[str, Any]]) -> str:
    lines = [
        "| measure | unit | floor | SDK | acpref | acpref ratio | SDK ratio | target | met? |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        met = "" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(
            f"| {r['measure']} | {r['unit']} | {_fmt(r['floor'])} | {_fmt(r['sdk'])} | "
            f"{_fmt(r['acpref'])} | {_fmt(r['ratio'])} | {_fmt(r['sdk_ratio'])} | "
            f"{r['target']} | {met} |"
        )
    return "\n".join(lines)


def machine() -> Dict[str, str]:
    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return {
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "uname": " ".join(platform.uname()),
        "python": sys.version.split()[0],
        "sdk": SDK_REQUIREMENT,
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller counts, 3 rounds (~2 min)")
    parser.add_argument("--rounds", type=int, help="rounds (default 5; 3 with --quick)")
    parser.add_argument("--only", help=f"comma-separated measures: {', '.join(MEASURES)}")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    parser.add_argument(
        "--variant",
        metavar="DIR",
        help="also measure acpref from DIR (a patched copy: DIR/acpref) on the wire measures",
    )
    args = parser.parse_args(argv)
    if args.variant:
        VARIANT.update(path=os.path.abspath(args.variant), label="variant")
        SIDES.append("variant")
    measures = args.only.split(",") if args.only else list(MEASURES)
    unknown = set(measures) - set(MEASURES)
    if unknown:
        parser.error(f"unknown measures: {', '.join(sorted(unknown))}")
    rounds = args.rounds or (3 if args.quick else 5)
    if not ensure_sdk():
        drop_sdk()
    use_bytecode_cache()
    warm_up()
    before = machine()
    results: Results = {}

    def log(measure: str, data: Dict[str, List[Any]]) -> None:
        last = {k: v[-1] for k, v in data.items()}
        short = {
            k: round(v["per_second"]) if isinstance(v, dict) and "per_second" in v else v
            for k, v in last.items()
        }
        print(f"  {measure}: {short}", file=sys.stderr)

    for r in range(rounds):
        print(f"round {r + 1}/{rounds}", file=sys.stderr)
        run_round(r, measures, args.quick, results, log)
    rows = summarize(results)
    after = machine()
    command = "python benchmarks/run.py" + (
        "" if not sys.argv[1:] else " " + " ".join(sys.argv[1:])
    )
    print(f"\n{command}  ({rounds} rounds, {'quick' if args.quick else 'full'} counts)")
    print(
        f"machine: nproc {before['nproc']}, {before['cpu']}; Python {before['python']}; "
        f"{before['sdk']}"
    )
    print(f"uname: {before['uname']}")
    print(f"load average: {before['loadavg']} before, {after['loadavg']} after ({before['date']})")
    print()
    print(markdown(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {
                    "machine": before,
                    "load_after": after["loadavg"],
                    "rows": rows,
                    "results": results,
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
