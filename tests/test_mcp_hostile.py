"""Hostile MCP servers: what one may make the agent hold, and how long it may hold up a session.

Spec: session-setup.mdx, MCP Servers (SETUP-36: every server is connected); MCP 2025-06-18,
Tools (``tools/list`` pagination). MCP bounds neither; acpref's decisions (spec-gap mcp-bounds,
spec-gap mcp-deadline) and their figures: spec_notes/mcp.md, spec_notes/threat-model.md.

The servers: ``tests/peers/mcp_scripted.py`` (``endless``: a page of tools with a ``nextCursor``
for ever; ``plan``: pages a test scripts; ``silent`` and ``stubborn``: ``initialize`` never
answered) and ``tests/peers/mcp_http_raw.py`` (``hold``: the ``initialize`` exchange held open,
as an event stream of keep-alives or as a trickle of header bytes; ``pages``: endless pages
over HTTP). Memory is measured where it is spent: in a real ``acpref echo`` process
(``/proc/PID/status``), or with ``tracemalloc`` for what the manager keeps. Times are asserted
only against a short configured deadline, never against the normal path.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import queue
import select
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from peers.mcp_http_raw import RawHttpServer
from peers.mcp_procs import group_members, has_proc, read_pid

from acpref._bounds import MAX_DEPTH
from acpref import schema as s
from acpref.client import Allow, ClientSideConnection, ReferenceClient
from acpref.mcp import McpFailure, McpLimits, McpManager, McpServerConnection
from acpref.mcp._model import decoded_size

PEERS = Path(__file__).parent / "peers"
SCRIPT = str(PEERS / "mcp_scripted.py")
MiB = 1024 * 1024
#: A bound on every wait for something that does happen (an answer, a process ending).
WAIT = 30.0
#: The short start-up deadline of the deadline tests, and what may pass beyond it.
DEADLINE = 2.0
SLACK = 1.5

LONG = os.environ.get("ACPREF_LONG") == "1"


def scripted(name: str, *argv: str, **env: str) -> s.McpServerStdio:
    return s.McpServerStdio(
        name=name,
        command=sys.executable,
        args=[SCRIPT, *argv],
        env=[s.EnvVariable(name=k, value=v) for k, v in env.items()],
    )


def http(name: str, url: str) -> s.McpServerHttp:
    return s.McpServerHttp(name=name, url=url, headers=[])


def wait_gone(pid: int, timeout: float = WAIT) -> None:
    """Wait for the process group ``pid`` leads to be empty: each live member's end is waited
    for on a pidfd (readable once the process has ended), all within ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        members = group_members(pid) if has_proc() else [pid]
        fds = []
        for member in members:
            try:
                fds.append(os.pidfd_open(member))
            except ProcessLookupError:
                pass  # ended meanwhile
        if not fds:
            return
        try:
            left = deadline - time.monotonic()
            ready, _, _ = select.select(fds, [], [], max(0.0, left))
            assert ready, f"process group {pid} still has {members} after {timeout}s"
        finally:
            for fd in fds:
                os.close(fd)


def kept_cost(connection: McpServerConnection) -> int:
    return sum(sys.getsizeof(t) + decoded_size(t.raw) for t in connection.tools)


# -- 1. What one server may make the agent keep (McpLimits) ---------------------------------------


BOUNDS = {
    # bound name: (server options, limits, tools kept)
    "max_tools": (["--tools", "20", "--size", "10"], McpLimits(max_tools=50), 50),
    "max_tool_bytes": (["--tools", "20", "--size", "10000"], McpLimits(max_tool_bytes=100_000), None),
    "max_message_bytes": (["--tools", "200", "--size", "1000"], McpLimits(max_message_bytes=100_000), 0),
    "max_message_items": (["--tools", "2000", "--size", "0"], McpLimits(max_message_items=5000), 0),
    "max_tool_pages": (["--tools", "5", "--same"], McpLimits(max_tool_pages=4), 5),
}


@pytest.mark.parametrize("bound", list(BOUNDS))
def test_an_endless_tool_list_stops_at_each_bound_and_says_so(bound: str) -> None:
    options, limits, expected = BOUNDS[bound]
    with McpManager(limits=limits) as manager:
        [outcome] = manager.connect(
            [scripted("endless", "endless", *options)],
            http_allowed=False,
            sse_allowed=False,
            timeout=WAIT,
        )
        # spec-gap mcp-bounds: the server stays connected with the tools taken so far.
        assert isinstance(outcome, McpServerConnection), outcome
        names = [t.name for t in outcome.tools]
        prefix = "t" if "--same" in options else "p"
        assert all(n.startswith(prefix) for n in names) and len(set(names)) == len(names)
        if expected is not None:
            assert len(names) == expected
        assert len(names) <= limits.max_tools
        assert kept_cost(outcome) <= limits.max_tool_bytes
        # Which bound, its figure, and how many tools were kept: in one sentence.
        cut = outcome.tools_cut
        assert cut is not None and bound in cut and str(getattr(limits, bound)) in cut
        assert f"{len(names)} tools kept" in cut
        # The server is still there and still answers.
        assert outcome.alive
        assert not manager.call("endless", "anything", {}, timeout=WAIT).is_error


def test_a_whole_tool_list_is_not_cut() -> None:
    with McpManager() as manager:
        [outcome] = manager.connect(
            [scripted("fine", "serve")], http_allowed=False, sse_allowed=False, timeout=WAIT
        )
        assert isinstance(outcome, McpServerConnection), outcome
        assert len(outcome.tools) == 7 and outcome.tools_cut is None


@pytest.mark.parametrize("events", [False, True], ids=["json", "event-stream"])
def test_endless_pages_over_http_stop_at_the_bounds(events: bool) -> None:
    limits = McpLimits(max_tools=100, max_message_bytes=100_000, max_message_items=5000)
    with RawHttpServer(pages=(30, 100), events=events) as counted, RawHttpServer(
        pages=(200, 1000), events=events
    ) as big, RawHttpServer(pages=(1500, 0), events=events) as tiny:
        with McpManager(limits=limits) as manager:
            many, large, small = manager.connect(
                [http("counted", counted.url), http("big", big.url), http("tiny", tiny.url)],
                http_allowed=True,
                sse_allowed=False,
                timeout=WAIT,
            )
            assert isinstance(many, McpServerConnection), many
            assert len(many.tools) == 100 and "max_tools" in (many.tools_cut or "")
            # 200 KB pages, 1500 tools of three values each in 75 KB: refused before decoding.
            assert isinstance(large, McpServerConnection), large
            assert large.tools == () and "max_message_bytes" in (large.tools_cut or "")
            assert isinstance(small, McpServerConnection), small
            assert small.tools == () and "max_message_items" in (small.tools_cut or "")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 88, 200_000], ids=["past-the-bound", "past-the-stack"])
@pytest.mark.parametrize("events", [False, True], ids=["json", "event-stream"])
def test_a_page_nested_too_deep_over_http_is_refused_before_decoding(
    events: bool, depth: int
) -> None:
    # The bound of a line on stdio (MAX_DEPTH) holds over HTTP too: a body nested 200,000 deep
    # used to reach json.loads and end the connection as acpref's own RecursionError.
    with RawHttpServer(nested=depth, events=events) as deep:
        with McpManager() as manager:
            [outcome] = manager.connect(
                [http("deep", deep.url)], http_allowed=True, sse_allowed=False, timeout=WAIT
            )
    assert isinstance(outcome, McpServerConnection), outcome
    assert outcome.tools == ()
    cut = outcome.tools_cut or ""
    assert f"nested {depth + 4} levels deep" in cut and f"limit of {MAX_DEPTH}" in cut, cut


def test_what_is_kept_is_counted_and_nothing_of_the_dropped_pages_stays() -> None:
    # Pages of 800 KB (40 tools of 20 KB); the byte bound (1 MiB) falls inside the second page.
    # What the manager still holds once connected, traced, is what it counted, and no more.
    limits = McpLimits(max_tool_bytes=MiB)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        manager = McpManager(limits=limits)
        try:
            [outcome] = manager.connect(
                [scripted("big", "endless", "--tools", "40", "--size", "20000")],
                http_allowed=False,
                sse_allowed=False,
                timeout=WAIT,
            )
            assert isinstance(outcome, McpServerConnection), outcome
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            counted = kept_cost(outcome)
            assert 40 < len(outcome.tools) < 80, len(outcome.tools)
            assert counted <= limits.max_tool_bytes
            # Everything else the manager holds (threads, a connection, buffers) is small.
            assert held < counted + 512 * 1024, (held, counted)
            assert counted >= sum(len(t.description or "") for t in outcome.tools)
        finally:
            manager.close()
    finally:
        tracemalloc.stop()


# -- 2. One deadline for the whole start-up ------------------------------------------------------


@pytest.mark.skipif(not has_proc(), reason="needs /proc to see the process groups")
def test_connect_returns_within_one_deadline_whatever_the_servers_do(tmp_path: Path) -> None:
    silent_pid, stubborn_pid = tmp_path / "silent", tmp_path / "stubborn"
    with RawHttpServer(hold="stream") as held, RawHttpServer(hold="trickle") as trickle:
        with McpManager() as manager:
            started = time.monotonic()
            outcomes = manager.connect(
                [
                    scripted("fine", "serve"),
                    scripted("silent", "silent", MCP_PIDFILE=str(silent_pid)),
                    scripted("stubborn", "stubborn", MCP_PIDFILE=str(stubborn_pid)),
                    http("held", held.url),
                    http("trickle", trickle.url),
                ],
                http_allowed=True,
                sse_allowed=False,
                timeout=DEADLINE,
            )
            elapsed = time.monotonic() - started
            # spec-gap mcp-deadline: one deadline for all servers together, not one each.
            assert elapsed < DEADLINE + SLACK, elapsed
            fine, *late = outcomes
            assert isinstance(fine, McpServerConnection), fine
            assert [o.name for o in late] == ["silent", "stubborn", "held", "trickle"]
            for outcome in late:
                assert isinstance(outcome, McpFailure), outcome
                assert f"not connected within {DEADLINE:.1f}s" in outcome.reason
                assert "initialize" in outcome.reason
            # The late ones are stopped with their groups (on threads of their own), and the
            # exchanges held open are hung up on, a trickle of bytes notwithstanding.
            wait_gone(read_pid(silent_pid))
            wait_gone(read_pid(stubborn_pid))
            assert held.hung_up.wait(WAIT) and trickle.hung_up.wait(WAIT)
            assert manager.servers.keys() == {"fine"}


@pytest.mark.skipif(not has_proc(), reason="needs /proc to see the process group")
def test_closing_the_manager_stops_the_servers_still_starting(tmp_path: Path) -> None:
    # The session closes (or the client goes) while session/new still waits for its servers.
    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    manager = McpManager()
    outcomes: List[Any] = []
    connecting = threading.Thread(
        target=lambda: outcomes.extend(
            manager.connect(
                [scripted("silent", "silent", MCP_PIDFILE=str(fifo))],
                http_allowed=False,
                sse_allowed=False,
                timeout=60.0,
            )
        )
    )
    connecting.start()
    pid = int(fifo.read_text())  # returns once the server has started and written its pid
    manager.close()
    wait_gone(pid, timeout=5.0)  # well before the deadline of 60 s
    connecting.join(WAIT)
    [outcome] = outcomes
    assert isinstance(outcome, McpFailure) and "closed" in outcome.reason


# -- 3. acpref echo, a real process --------------------------------------------------------------


def _guarded_echo(*options: str) -> List[str]:
    """``acpref echo`` with its address space capped at 4 GiB: should a bound fail, the agent
    fails with MemoryError rather than take the machine with it. (Its address space is near
    1 GiB when idle, most of it malloc's per-thread arenas, reserved and never touched.)"""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "from acpref._cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return [sys.executable, "-c", code, "echo", *options]


def _peak_rss(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture
def notices() -> "queue.Queue[Tuple[str, Any]]":
    return queue.Queue()


@pytest.fixture
def echo(notices: "queue.Queue[Tuple[str, Any]]") -> Iterator[Any]:
    """Start ``acpref echo OPTIONS`` with a reference client (it takes notices)."""
    sides: List[ClientSideConnection] = []

    def start(*options: str) -> ClientSideConnection:
        def on_update(session_id: str, update: Any) -> None:
            if isinstance(update, s.Notice):
                notices.put((session_id, update))

        client = ReferenceClient(permissions=Allow(), on_update=on_update)
        side = ClientSideConnection.spawn(client, _guarded_echo(*options))
        sides.append(side)
        side.initialize(timeout=WAIT)
        return side

    yield start
    for side in sides:
        side.close()


def _notices(
    notices: "queue.Queue[Tuple[str, Any]]", session_id: str, count: int
) -> Dict[str, s.Notice]:
    """The next ``count`` notices of the session, by the server name their title quotes."""
    got: Dict[str, s.Notice] = {}
    while len(got) < count:
        sid, notice = notices.get(timeout=WAIT)
        assert sid == session_id
        got[notice.title.split("'")[1]] = notice
    return got


@pytest.mark.skipif(not has_proc(), reason="reads /proc/PID/status")
def test_acpref_echo_stays_under_its_memory_bound_against_endless_tool_lists(
    echo: Any, notices: Any, tmp_path: Path
) -> None:
    # Three servers that answer every tools/list with 100 tools of 50 KB (5 MB pages) and a
    # nextCursor, for ever. Unbounded, acpref echo held 1.5 GiB once session/new was answered
    # (every page up to the page cap). With the default McpLimits it keeps 8 MiB of tools per
    # server, and its peak stays under the documented 256 MiB (spec_notes/mcp.md).
    side = echo()
    servers = [scripted(f"endless{i}", "endless", "--tools", "100", "--size", "50000") for i in range(3)]
    sid = side.new_session(str(tmp_path), mcp_servers=servers, timeout=WAIT).session_id
    peak = _peak_rss(side.process.pid)
    print(f"\npeak RSS once session/new was answered: {peak / MiB:.0f} MiB")
    assert peak < 256 * MiB, f"peak RSS {peak / MiB:.0f} MiB"
    # Each server is told once, in a notice: which server, which bound, how many tools kept.
    told = _notices(notices, sid, 3)
    assert sorted(told) == ["endless0", "endless1", "endless2"]
    for notice in told.values():
        assert notice.severity == "warning"
        assert "max_tool_bytes" in notice.description and "tools kept" in notice.description
    # The tools kept are usable, and listing them costs nothing like what was refused.
    answer = side.prompt(sid, "/mcp", timeout=WAIT)
    assert answer.stop_reason == s.StopReason.END_TURN
    peak = _peak_rss(side.process.pid)
    print(f"peak RSS after /mcp listed them: {peak / MiB:.0f} MiB")
    assert peak < 256 * MiB


@pytest.mark.skipif(not has_proc(), reason="needs /proc to see the process groups")
def test_acpref_echo_answers_session_new_within_one_mcp_deadline(
    echo: Any, notices: Any, tmp_path: Path
) -> None:
    # A server that never answers initialize, one that ignores SIGTERM too, and two HTTP
    # servers that hold the initialize exchange open, never answering: none of them could have
    # answered before the deadline, and session/new does not wait for them past it.
    silent_pid, stubborn_pid = tmp_path / "silent", tmp_path / "stubborn"
    with RawHttpServer(hold="stream") as held, RawHttpServer(hold="trickle") as trickle:
        side = echo("--mcp-timeout", str(DEADLINE))
        servers = [
            scripted("silent", "silent", MCP_PIDFILE=str(silent_pid)),
            scripted("stubborn", "stubborn", MCP_PIDFILE=str(stubborn_pid)),
            http("held", held.url),
            http("trickle", trickle.url),
        ]
        started = time.monotonic()
        sid = side.new_session(str(tmp_path), mcp_servers=servers, timeout=WAIT).session_id
        elapsed = time.monotonic() - started
        print(f"\nsession/new answered in {elapsed:.2f}s (deadline {DEADLINE}s)")
        assert elapsed < DEADLINE + SLACK, f"session/new took {elapsed:.1f}s"
        told = _notices(notices, sid, 4)
        assert sorted(told) == ["held", "silent", "stubborn", "trickle"]
        for notice in told.values():
            assert f"not connected within {DEADLINE:.1f}s" in notice.description
        wait_gone(read_pid(silent_pid))
        wait_gone(read_pid(stubborn_pid))
        assert held.hung_up.wait(WAIT) and trickle.hung_up.wait(WAIT)


# -- 4. Fuzz: tools/list pages of every shape ------------------------------------------------------


FUZZ_LIMITS = McpLimits(
    max_message_bytes=64 * 1024,
    max_message_items=4000,
    max_tools=40,
    max_tool_bytes=40_000,
    max_tool_pages=8,
)
FUZZ_CASES = int(os.environ.get("ACPREF_MCP_FUZZ_CASES", "1000" if LONG else "12"))


def _first_sightings(pages: List[Any], endless: bool) -> Tuple[List[str], bool]:
    """The names a client following the cursors should keep, in order, with no bound (of an
    endless list, as many as the fuzz's bounds could let through); and whether the list it
    would follow is finite."""
    names: List[str] = []
    for result in pages:
        if not isinstance(result, dict) or not isinstance(result.get("tools", []), list):
            return names, True
        for tool in result.get("tools", []):
            name = tool.get("name") if isinstance(tool, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return names, True
    if not endless:
        return names, True
    # The server's own pages once the plan's are done: three new tools each (mcp_scripted.py).
    pages_left = FUZZ_LIMITS.max_tool_pages
    names += [f"more-{n}-{i}" for n in range(pages_left) for i in range(3)]
    return names, False


@pytest.mark.timeout(3600 if LONG else 120)
def test_fuzz_tool_pages_of_every_shape_stay_within_the_bounds(
    tmp_path: Path, caplog: Any
) -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    names = st.sampled_from([f"tool{i}" for i in range(60)])
    tool = st.one_of(
        st.fixed_dictionaries(
            {"name": names},
            optional={
                "description": st.text(max_size=50).map(lambda t: t * 200),
                "inputSchema": st.recursive(
                    st.none() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=50)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=20),
                    max_leaves=400,
                ),
            },
        ),
        st.none(),
        st.integers(),
        st.fixed_dictionaries({"name": st.integers()}),
        st.fixed_dictionaries({"description": st.text(max_size=5)}),
    )
    cursor = st.one_of(st.none(), st.just(""), st.just("next"), st.integers(), st.text(max_size=3))
    page = st.one_of(
        st.fixed_dictionaries(
            {"tools": st.lists(tool, max_size=60)}, optional={"nextCursor": cursor}
        ),
        st.just({"tools": "not a list"}),
        st.just([]),
        st.just({}),
    )
    plans = st.fixed_dictionaries(
        {"pages": st.lists(page, max_size=10), "endless": st.booleans()}
    )
    caplog.set_level(logging.ERROR, logger="acpref")
    counter = iter(range(1 << 30))

    @hypothesis.settings(
        max_examples=FUZZ_CASES,
        deadline=None,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(plans)
    def case(plan: Dict[str, Any]) -> None:
        path = tmp_path / f"plan-{next(counter)}.json"
        path.write_text(json.dumps(plan))
        expected, finite = _first_sightings(plan["pages"], plan["endless"])
        manager = McpManager(limits=FUZZ_LIMITS)
        pid: Optional[int] = None
        try:
            started = time.monotonic()
            [outcome] = manager.connect(
                [scripted("fuzzed", "plan", str(path))],
                http_allowed=False,
                sse_allowed=False,
                timeout=WAIT,
            )
            assert time.monotonic() - started < WAIT + SLACK
            if isinstance(outcome, McpFailure):
                assert "tools/list answered something other than a list" in outcome.reason
                return
            pid = outcome.pid
            kept = [t.name for t in outcome.tools]
            assert len(kept) <= FUZZ_LIMITS.max_tools
            assert kept_cost(outcome) <= FUZZ_LIMITS.max_tool_bytes
            # What is kept is what came first, in order, each name once.
            assert kept == expected[: len(kept)]
            # A list taken short of its end says which bound stopped it.
            if not finite or kept != expected:
                cut = outcome.tools_cut
                assert cut is not None and any(b in cut for b in BOUNDS), (kept, expected)
        finally:
            manager.close()
        if pid is not None:
            wait_gone(pid)

    case()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
