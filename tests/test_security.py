"""The reference client cannot be walked out of its roots, run a shell, leak a process or a secret.

Spec: file-system.mdx, terminals.mdx, session-setup.mdx (roots, MCP servers); clauses
OVERVIEW-06, FS-03, FS-06, SETUP-21, RPC-17, TERM-04, TERM-12, TERM-13; the threat model these
tests prove: spec_notes/threat-model.md.

The agent is the test itself, speaking raw JSON-RPC to a ``ClientSideConnection`` serving the
``ReferenceClient`` over real pipes (``peers.reliability_sides.RawSide``), so every attempt is a
request a hostile agent could send. Four groups:

* **files**: escape attempts by path (relative, ``..``, symlinks, ``/proc`` links, slashes,
  case, NUL bytes, very long paths, writes that would create directories outside), by race (a
  directory or a file swapped for a symlink while requests run), by a root swapped after the
  session opened, and by session id;
* **terminals**: no shell ever, bounded output under a flood, the per-session cap, and no
  orphan after release or close (children that ignore SIGTERM, left in the background);
* **secrets**: MCP servers' ``env`` and ``headers`` values and terminal ``env`` values never
  appear in any log record, at DEBUG, of any logger, across whole sessions;
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from peers.mcp_procs import has_proc, is_running
from peers.reliability_sides import WAIT, RawSide, SmallAgent, Watch

from acpref import schema as s
from acpref.client import ReferenceClient

INVALID, NOT_FOUND, CANCELLED = -32602, -32002, -32800
PY = sys.executable
SECRET = "TOP-SECRET-CONTENT"


# -- Fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def land(tmp_path: Path) -> Tuple[Path, Path]:
    """A root (the session's cwd) and, beside it, a directory outside holding a secret."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    return root, outside


@pytest.fixture
def side(land: Tuple[Path, Path]) -> Iterator[RawSide]:
    root, _ = land
    with Watch() as watch:
        client = ReferenceClient(kill_grace=0.3)  # real PATH: terminals run real programs
        raw = RawSide("client", root, client=client)
        raw.setup()
        yield raw
        raw.close()
    assert watch.problems() == []


def request(side: RawSide, method: str, **params: Any) -> Dict[str, Any]:
    params.setdefault("sessionId", side.session_id)
    return side.call(method, params)


def read(side: RawSide, path: str) -> Dict[str, Any]:
    return request(side, "fs/read_text_file", path=path)


def write(side: RawSide, path: str, content: str = "PWNED") -> Dict[str, Any]:
    return request(side, "fs/write_text_file", path=path, content=content)


def tree(path: Path) -> Dict[str, Any]:
    """Every name below ``path`` with its content (or link target): to prove nothing changed."""
    out: Dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                out[full] = ("link", os.readlink(full))
            elif os.path.isfile(full):
                out[full] = Path(full).read_bytes()
            else:
                out[full] = "dir"
    return out


#: Every escape attempt made, for the report: (kind, what was tried).


# -- Files: escape attempts by path ------------------------------------------------------------


def _outside_attempts(root: Path, outside: Path, fd_path: str) -> List[Tuple[str, str]]:
    R, OUT = str(root), str(outside)
    return [
        ("relative", "notes.txt"),
        ("relative with dot", "./notes.txt"),
        ("empty", ""),
        ("tilde (never expanded)", "~/.ssh/id_rsa"),
        ("file URI", "file://" + R + "/notes.txt"),
        ("dot-dot", R + "/../outside/secret.txt"),
        ("dot-dot through a missing directory", R + "/missing/../../outside/secret.txt"),
        ("thirty dot-dots", R + "/" + "../" * 30 + OUT.lstrip("/") + "/secret.txt"),
        ("symlink to a file outside", R + "/link-file"),
        ("symlink to a directory outside", R + "/link-dir/secret.txt"),
        ("chain of symlinks ending outside", R + "/chain-1"),
        ("dangling symlink to outside", R + "/dangling"),
        ("symlink to outside, trailing slash", R + "/link-dir/"),
        ("write creating directories outside", R + "/link-dir/new/deeper/file.txt"),
        ("absolute path outside", OUT + "/secret.txt"),
        ("outside, trailing slash", OUT + "/"),
        ("double slashes", "//" + OUT.lstrip("/") + "//secret.txt"),
        ("/proc/self/root", "/proc/self/root" + OUT + "/secret.txt"),
        ("/proc/self/cwd", "/proc/self/cwd/" + "x.txt"),
        ("/proc/self/fd of a file outside", fd_path),
        ("/proc/self/environ", "/proc/self/environ"),
        ("/proc/self/mem", "/proc/self/mem"),
        ("/etc/passwd", "/etc/passwd"),
        ("/dev/zero", "/dev/zero"),
        ("case differences", str(root.parent / root.name.upper()) + "/notes.txt"),
        ("NUL byte", R + "/notes.txt\x00/../../outside/secret.txt"),
        ("lone surrogate", R + "/\ud800"),
        ("path of 5000 bytes", R + "/" + "a" * 5000),
        ("path of 1 MB of a/", R + "/" + "a/" * 500_000),
        ("backslashes", R + "\\..\\..\\outside\\secret.txt"),
    ]


def _make_links(root: Path, outside: Path) -> None:
    (root / "link-file").symlink_to(outside / "secret.txt")
    (root / "link-dir").symlink_to(outside)
    (root / "chain-2").symlink_to(outside / "secret.txt")
    (root / "chain-1").symlink_to(root / "chain-2")
    (root / "dangling").symlink_to(outside / "created.txt")
    (root / "alias").symlink_to(root / "notes.txt")


def test_OVERVIEW_06_FS_03_FS_06_no_path_leads_outside_the_roots(side: RawSide, land: Any):
    root, outside = land
    _make_links(root, outside)
    fd = os.open(outside / "secret.txt", os.O_RDONLY)
    try:
        attempts = _outside_attempts(root, outside, f"/proc/self/fd/{fd}")
        before = tree(outside)
        for label, path in attempts:
            got_read, got_write = read(side, path), write(side, path)
            for got in (got_read, got_write):
                # spec OVERVIEW-06, FS-03, FS-06, SETUP-21: refused -32602, whether the target
                # exists or not (spec-gap path-outside-roots), the 1 MB path too.
                assert got.get("error", {}).get("code") == INVALID, (label, got)
                assert SECRET not in json.dumps(got)
        assert tree(outside) == before  # nothing written, nothing created outside
    finally:
        os.close(fd)


def test_symlink_errors_do_not_name_their_target(side: RawSide, land: Any):
    root, outside = land
    _make_links(root, outside)
    for name in ("link-file", "link-dir/secret.txt", "chain-1", "dangling"):
        got = read(side, str(root / name))
        # Errors name the path the agent gave and the roots, never where a link leads.
        assert str(outside) not in json.dumps(got), got


@pytest.mark.parametrize(
    "shape",
    ["a//double//slash", "trailing-slash/", "dot/./segment", "missing/../dir"],
)
def test_odd_spellings_of_paths_inside_stay_inside(side: RawSide, land: Any, shape: str):
    root, outside = land
    _make_links(root, outside)
    path = {
        "a//double//slash": "/" + str(root).lstrip("/").replace("/", "//") + "//notes.txt",
        "trailing-slash/": str(root) + "/notes.txt/",
        "dot/./segment": str(root) + "/./notes.txt",
        "missing/../dir": str(root) + "/missing/../alias",
    }[shape]
    # The path is read where it really leads: inside, so allowed.
    assert read(side, path) == {
        "jsonrpc": "2.0",
        "id": side.out.messages[-1]["id"],
        "result": {"content": "one\ntwo\nthree\n"},
    }


# -- Files: races ------------------------------------------------------------------------------


def _flipper(stop: threading.Event, link: Path, targets: List[Path]) -> threading.Thread:
    # The name exists before the first request: otherwise a write could make it a real
    # directory first (mkdir -p), and no symlink can replace a directory.
    os.symlink(targets[0], link)

    def flip() -> None:
        i = 1
        tmp = link.with_name(link.name + ".swap")
        while not stop.is_set():
            os.symlink(targets[i % len(targets)], tmp)
            os.replace(tmp, link)  # atomic: the name is always one or the other
            i += 1

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    return thread


def test_paths_swapped_for_symlinks_between_check_and_open_never_escape(side: RawSide, land):
    """A directory and a file flip between inside and outside while the agent reads and writes."""
    root, outside = land
    (outside / "f.txt").write_text(SECRET)
    real = root / "real"
    real.mkdir()
    (real / "f.txt").write_text("inside")
    (root / "inside.txt").write_text("inside")
    before = tree(outside)
    stop = threading.Event()
    flippers = [
        _flipper(stop, root / "flip-dir", [real, outside]),
        _flipper(stop, root / "flip-file", [root / "inside.txt", outside / "secret.txt"]),
    ]
    seen: Dict[str, int] = {}
    deadline = time.monotonic() + 2.0
    rounds = 0
    try:
        # For two seconds of flipping, and at least 21 rounds however slow the machine is.
        while time.monotonic() < deadline or rounds <= 20:
            batch = []
            for path in ("flip-dir/f.txt", "flip-file"):
                for method, extra in (
                    ("fs/read_text_file", {}),
                    ("fs/write_text_file", {"content": "PWNED"}),
                ):
                    request_id = side.next_id()
                    params = {"sessionId": side.session_id, "path": str(root / path), **extra}
                    batch.append(request_id)
                    side.send_json(
                        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
                    )
            mkdir_id = side.next_id()
            params = {
                "sessionId": side.session_id,
                "path": str(root / "flip-dir" / f"made-{rounds}" / "x.txt"),
                "content": "PWNED",
            }
            side.send_json(
                {"jsonrpc": "2.0", "id": mkdir_id, "method": "fs/write_text_file", "params": params}
            )
            for request_id in batch + [mkdir_id]:
                got = side.out.response(request_id)
                key = (
                    got["result"].get("content", "written")
                    if "result" in got
                    else got["error"]["code"]
                )
                seen[str(key)] = seen.get(str(key), 0) + 1
            rounds += 1
    finally:
        stop.set()
        for f in flippers:
            f.join(WAIT)
    # Reads return the inside file (as the writes that went inside left it: a write truncates,
    # then writes, so a read in between sees it empty) or a refusal; never the secret.
    allowed = {"inside", "PWNED", "", "written", "-32602", "-32002"}
    assert SECRET not in seen and set(seen) <= allowed, seen
    assert tree(outside) == before, "something was written or created outside"


def test_root_swapped_for_a_symlink_after_the_session_opened(side: RawSide, land: Any):
    root, outside = land
    moved = root.parent / "project-moved"
    os.rename(root, moved)
    root.symlink_to(outside)  # the root's name now leads outside
    try:
        # The roots were resolved when the session opened: the old real path, not the name.
        got = read(side, str(root / "secret.txt"))
        assert got["error"]["code"] == INVALID and SECRET not in json.dumps(got)
        assert write(side, str(root / "new.txt"))["error"]["code"] == INVALID
        assert not (outside / "new.txt").exists()
    finally:
        root.unlink()
        os.rename(moved, root)


# -- Files and terminals: a session that is not ours --------------------------------------------


def _as_agent(side: RawSide, call: Callable[[], Any], method: str, result: Any) -> Any:
    """Run the client's ``call`` (which sends ``method``) while the test answers as the agent."""
    out: "queue.Queue[Any]" = queue.Queue()
    threading.Thread(target=lambda: out.put(call()), daemon=True).start()
    sent = side.out.wait_for(lambda m: m.get("method") == method and m.get("id") not in _answered)
    _answered.add(sent["id"])
    side.send_json({"jsonrpc": "2.0", "id": sent["id"], "result": result})
    return out.get(timeout=WAIT)


_answered: set = set()


def test_RPC_17_a_session_that_is_not_ours_is_refused(side: RawSide, land: Any):
    root, _ = land
    path = str(root / "notes.txt")
    for sid in ["sess-999", "", "S-1", "s-1 ", "s-1\x00"]:
        for method, params in (
            ("fs/read_text_file", {"path": path}),
            ("fs/write_text_file", {"path": path, "content": "x"}),
            ("terminal/create", {"command": PY, "args": ["-c", "pass"]}),
            (
                "session/request_permission",
                {
                    "toolCall": {"toolCallId": "c", "title": "t"},
                    "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
                },
            ),
        ):
            got = request(side, method, sessionId=sid, **params)
            assert got["error"]["code"] in (NOT_FOUND, INVALID), (sid, method, got)
    # A session closed, then deleted, is no longer ours either.
    sid = side.session_id
    _as_agent(side, lambda: side.client_side.close_session(sid, timeout=WAIT), "session/close", {})
    assert read(side, path)["error"]["code"] == NOT_FOUND


def test_terminals_of_another_session_are_unknown(side: RawSide, land: Any):
    root, _ = land
    created = request(
        side, "terminal/create", command=PY, args=["-c", "import time; time.sleep(30)"]
    )
    terminal_id = created["result"]["terminalId"]
    for method in (
        "terminal/output",
        "terminal/kill",
        "terminal/release",
        "terminal/wait_for_exit",
    ):
        got = request(side, method, sessionId="other", terminalId=terminal_id)
        assert got["error"]["code"] in (NOT_FOUND, INVALID), got
    assert request(side, "terminal/release", terminalId=terminal_id) == {
        "jsonrpc": "2.0",
        "id": side.out.messages[-1]["id"],
        "result": {},
    }


# -- Terminals ---------------------------------------------------------------------------------


def _run(side: RawSide, command: str, args: List[str], **params: Any) -> Dict[str, Any]:
    """Create a terminal, wait for its exit, read its output, release it."""
    created = request(side, "terminal/create", command=command, args=args, **params)
    assert "result" in created, created
    terminal_id = created["result"]["terminalId"]
    request(side, "terminal/wait_for_exit", terminalId=terminal_id)
    output = request(side, "terminal/output", terminalId=terminal_id)["result"]
    assert request(side, "terminal/release", terminalId=terminal_id)["result"] == {}
    return output


SHELLISH = ["a; touch X1", "$(touch X2)", "&& touch X3", "`touch X4`", "| touch X5", "> X6", "*"]


def test_no_shell_ever(side: RawSide, land: Any):
    root, _ = land
    # A whole command line as the command: no program has that name (127).
    for line in ["echo hi; touch X0", "true && touch X0", "$(touch X0)", "sh -c 'touch X0'"]:
        output = _run(side, line, [])
        assert output["exitStatus"] == {"exitCode": 127, "signal": None}, output
    # Shell syntax in arguments and in the environment reaches the program as it is.
    script = "import os, sys; print(sys.argv[1:]); print(os.environ['V'])"
    output = _run(side, PY, ["-c", script, *SHELLISH], env=[{"name": "V", "value": "$(touch X7)"}])
    assert output["output"] == f"{SHELLISH!r}\n$(touch X7)\n"
    assert sorted(p.name for p in root.iterdir() if p.name.startswith("X")) == []


def test_terminal_cwd_cannot_leave_the_roots(side: RawSide, land: Any):
    root, outside = land
    _make_links(root, outside)
    for cwd in [
        str(outside),
        str(root / "link-dir"),
        str(root / ".."),
        "relative",
        "/proc/self/cwd",
    ]:
        got = request(side, "terminal/create", command=PY, args=["-c", "pass"], cwd=cwd)
        assert got["error"]["code"] == INVALID, (cwd, got)


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not has_proc(), reason="RSS is read from /proc")
def test_TERM_04_output_bound_holds_memory_flat_under_a_gigabyte(side: RawSide):
    gib = 16 if os.environ.get("ACPREF_LONG") == "1" else 2
    script = (
        "import os\nb = b'y' * (1 << 20)\n"
        f"for _ in range({gib} << 10):\n    os.write(1, b)\nos.write(1, b'END')"
    )
    rss_before = _rss()
    created = request(
        side, "terminal/create", command=PY, args=["-c", script], outputByteLimit=65536
    )
    terminal_id = created["result"]["terminalId"]
    t0 = time.monotonic()
    done = threading.Event()
    peak = {"rss": 0, "retained": 0}

    def sample() -> None:  # memory while the output streams (sampling is all one can do)
        while not done.wait(0.05):
            peak["rss"] = max(peak["rss"], _rss() - rss_before)
            peak["retained"] = max(
                peak["retained"], side.client.terminals.retained_bytes(terminal_id)
            )

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        waited = side.call(
            "terminal/wait_for_exit",
            {"sessionId": side.session_id, "terminalId": terminal_id},
            timeout=120,
        )
    finally:
        done.set()
        sampler.join(WAIT)
    elapsed = time.monotonic() - t0
    assert waited["result"] == {"exitCode": 0, "signal": None}
    got = request(side, "terminal/output", terminalId=terminal_id)["result"]
    # spec TERM-04: only the last outputByteLimit bytes are kept; memory stays flat meanwhile.
    assert got["truncated"] is True and got["output"].endswith("END")
    assert len(got["output"].encode()) <= 65536
    assert peak["retained"] <= 2 * 65536
    assert peak["rss"] < 64 << 20, peak["rss"] >> 20
    print(f"\n{gib} GiB of output in {elapsed:.1f}s; RSS at most +{peak['rss'] >> 20} MiB")
    request(side, "terminal/release", terminalId=terminal_id)


def test_terminal_cap_is_per_session_and_release_frees_a_place(land: Any):
    root, _ = land
    with Watch() as watch:
        raw = RawSide("client", root, client=ReferenceClient(max_terminals_per_session=3))
        try:
            raw.setup()
            ids = [
                request(raw, "terminal/create", command=PY, args=["-c", "pass"])["result"][
                    "terminalId"
                ]
                for _ in range(3)
            ]
            for terminal_id in ids:  # ended, not released: they still count
                request(raw, "terminal/wait_for_exit", terminalId=terminal_id)
            over = request(raw, "terminal/create", command=PY, args=["-c", "pass"])
            # spec RPC-15 / spec-gap terminal-cap: refused -32800, nothing started.
            assert over["error"]["code"] == CANCELLED
            request(raw, "terminal/release", terminalId=ids[0])
            again = request(raw, "terminal/create", command=PY, args=["-c", "pass"])
            assert "result" in again
        finally:
            raw.close()
    assert watch.problems() == []


# The child writes its pid under another name and renames it into place (a reader never sees
# half a file), then tells its parent on a pipe; the parent says "ready" only after that.
_STUBBORN_CHILD = (
    "import os, signal, subprocess, sys, time\n"
    "code = 'import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    'open(\"child-{tag}.tmp\", \"w\").write(str(os.getpid())); '
    'os.rename(\"child-{tag}.tmp\", \"child-{tag}\"); '
    "os.write(int(sys.argv[1]), b\"x\"); time.sleep(60)'\n"
    "r, w = os.pipe()\n"
    "subprocess.Popen([sys.executable, '-c', code, str(w)], stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL, pass_fds=(w,))\n"
    "os.close(w)\n"
    "assert os.read(r, 1) == b'x'\n"
    "print('ready', flush=True)\n"
)


def _wait_for_text(side: RawSide, terminal_id: str, text: str) -> None:
    deadline = time.monotonic() + WAIT
    while text not in request(side, "terminal/output", terminalId=terminal_id)["result"]["output"]:
        assert time.monotonic() < deadline, f"{text!r} not in the output"
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    # A release, a kill and a close return only once nothing of the group runs any more.
    return not is_running(pid)


@pytest.mark.skipif(not has_proc(), reason="process states are read from /proc")
@pytest.mark.parametrize("when", ["while it runs", "after it ended"])
def test_TERM_13_release_leaves_no_orphan(side: RawSide, land: Any, when: str):
    root, _ = land
    tag = when.replace(" ", "-")
    script = _STUBBORN_CHILD.format(tag=tag)
    if when == "while it runs":
        script += "time.sleep(60)\n"
    created = request(side, "terminal/create", command=PY, args=["-c", script])
    terminal_id = created["result"]["terminalId"]
    _wait_for_text(side, terminal_id, "ready")
    child = int((root / f"child-{tag}").read_text())
    if when == "after it ended":
        request(side, "terminal/wait_for_exit", terminalId=terminal_id)
        assert is_running(child)  # left behind in the background, ignoring SIGTERM
    assert request(side, "terminal/release", terminalId=terminal_id)["result"] == {}
    # spec TERM-13: release kills the command, and with it its whole process group.
    assert _gone(child), "the child outlived the release"


@pytest.mark.skipif(not has_proc(), reason="process states are read from /proc")
def test_connection_close_leaves_no_orphan(land: Any):
    root, _ = land
    raw = RawSide("client", root, client=ReferenceClient(kill_grace=0.3))
    raw.setup()
    children = []
    for tag in ("a", "b"):
        script = _STUBBORN_CHILD.format(tag=tag) + ("time.sleep(60)\n" if tag == "a" else "")
        terminal_id = request(raw, "terminal/create", command=PY, args=["-c", script])["result"][
            "terminalId"
        ]
        _wait_for_text(raw, terminal_id, "ready")
        children.append(int((root / f"child-{tag}").read_text()))
    raw.close()
    # One grace period for all terminals (0.3 s), then SIGKILL to what is left of each group.
    assert all(_gone(pid) for pid in children)
    assert raw.client.terminals.live() == []


# -- Secrets -------------------------------------------------------------------------------------


class _AllRecords(logging.Handler):
    """Every record of every logger, formatted, exceptions included."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: List[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def all_logs() -> Iterator[_AllRecords]:
    root = logging.getLogger()
    handler = _AllRecords()
    old = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    acpref_level = logging.getLogger("acpref").level
    logging.getLogger("acpref").setLevel(logging.NOTSET)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
        logging.getLogger("acpref").setLevel(acpref_level)


class McpAgent(SmallAgent):
    """Connects the MCP servers a session names with ``acpref.mcp``, and calls one tool."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.outcomes: List[Any] = []
        self.managers: List[Any] = []

    def capabilities(self) -> s.AgentCapabilities:
        caps = super().capabilities()
        import attrs

        return attrs.evolve(caps, mcp_capabilities=s.McpCapabilities(http=True, sse=False))

    def session_new(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        from acpref.mcp import McpManager

        response = super().session_new(params)
        manager = McpManager()
        self.managers.append(manager)
        self.outcomes = manager.connect(
            list(params.mcp_servers),
            http_allowed=True,
            sse_allowed=False,
            timeout=WAIT,
            cwd=params.cwd,
        )
        for name in manager.servers:
            manager.call(name, "echo", {"text": "hello"}, timeout=WAIT)
        return response


def test_mcp_env_and_header_values_are_never_logged(all_logs: _AllRecords, tmp_path: Path):
    pytest.importorskip("mcp", reason="the MCP test servers come with the MCP test extra")
    from peers.mcp_http_raw import RawHttpServer

    script = str(Path(__file__).parent / "peers" / "mcp_scripted.py")
    secrets = {
        "env": "sk-live-0123456789-env-value",
        "echoed": "sk-live-9876543210-echoed-by-stderr",
        "header": "tok-ABCDEF123456-header-value",
        "wrong": "tok-WRONG98765-header-echoed-in-401",
        "url": "url-token-55555-in-query",
    }
    with RawHttpServer(token=secrets["header"]) as good, RawHttpServer(token="other") as bad:
        servers = [
            {
                "name": "stdio",
                "command": PY,
                "args": [script, "serve"],
                "env": [{"name": "API_KEY", "value": secrets["env"]}],
            },
            {
                "name": "stdio-failing",
                "command": PY,
                "args": [script, "fail"],
                "env": [{"name": "SECRET", "value": secrets["echoed"]}],
            },
            {
                "type": "http",
                "name": "http",
                "url": good.url,
                "headers": [{"name": "Authorization", "value": f"Bearer {secrets['header']}"}],
            },
            {
                "type": "http",
                "name": "http-401",
                "url": bad.url + "?token=" + secrets["url"],
                "headers": [{"name": "Authorization", "value": f"Bearer {secrets['wrong']}"}],
            },
        ]
        agent_box: List[McpAgent] = []

        def build(client: Any) -> McpAgent:
            agent_box.append(McpAgent(client))
            return agent_box[0]

        side = RawSide("agent", tmp_path, agent=build)
        try:
            side.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            got = side.call("session/new", {"cwd": str(tmp_path), "mcpServers": servers})
            assert "result" in got, got
            outcomes = agent_box[0].outcomes
            assert [type(o).__name__ for o in outcomes] == [
                "McpServerConnection",
                "McpFailure",
                "McpServerConnection",
                "McpFailure",
            ], outcomes
        finally:
            for manager in agent_box[0].managers if agent_box else []:
                manager.close()
            side.close()
    text = "\n".join(all_logs.lines)
    # Logged at DEBUG meanwhile: the header names, the failing server's stderr (redacted).
    assert "sending header names ['Authorization']" in text
    assert "boom: ***" in text and "bad credentials: ***" in text
    for name, value in secrets.items():
        assert value not in text, f"the {name} secret was logged"


def test_terminal_env_values_are_never_logged(all_logs: _AllRecords, land: Any):
    root, _ = land
    secret = "tok-terminal-env-31415926"
    raw = RawSide("client", root, client=ReferenceClient())
    try:
        raw.setup()
        env = [{"name": "TOKEN", "value": secret}, {"name": "BAD=NAME", "value": secret}]
        refused = request(raw, "terminal/create", command=PY, args=["-c", "pass"], env=env)
        assert refused["error"]["code"] == INVALID and secret not in json.dumps(refused)
        script = "import os; print(len(os.environ['TOKEN']))"
        output = _run(raw, PY, ["-c", script], env=env[:1])
        assert output["output"] == f"{len(secret)}\n"
    finally:
        raw.close()
    assert any("terminal/create" in line or "started" in line for line in all_logs.lines)
    assert secret not in "\n".join(all_logs.lines)

