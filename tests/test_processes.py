"""No process survives an acpref command or fixture: agents, their children, terminals.

Spec: transports.mdx (TRANSPORT-10: the client closes the agent's stdin and terminates it);
decisions: spec_notes/decisions.md (end-of-input, shutdown-ladder, mcp-process-group,
terminal-kill-ladder).

The agent under test is ``peers/leaky_agent.py``: it leaves behind a child that ignores the end
of its input, SIGTERM and SIGHUP (what an npm wrapper's native binary can do), and the child
writes its own pid to a directory of the test's before the agent serves anything. The tests find
the processes they check by those pid files and by process group ids, never by waiting a while:
every wait is on a process's exit, a pipe or a FIFO, with a timeout.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator, List

import pytest
from peers.mcp_procs import group_members, has_proc, is_running

from acpref._shell import groups as _groups
from acpref import schema as s
from acpref.client import Allow, ClientSideConnection, ReferenceClient
from acpref.testing import AgentCheckOptions, AgentDriver, check_agent

pytestmark = pytest.mark.skipif(not has_proc(), reason="reads /proc")

PEERS = Path(__file__).parent / "peers"
LEAKY = [sys.executable, str(PEERS / "leaky_agent.py")]
ACPREF = [sys.executable, "-m", "acpref"]
WAIT = 60.0


def pids(piddir: Path) -> List[int]:
    """The pids the leaky agents' children wrote (each writes its own, renamed into place)."""
    return sorted(int(p.name) for p in piddir.iterdir() if p.name.isdigit())


def assert_none_running(found: List[int]) -> None:
    running = [pid for pid in found if is_running(pid)]
    assert running == [], f"left running: {running}"


def wait_dead(pid: int, timeout: float = WAIT) -> None:
    """Wait for a process that is not our child to end (its pidfd becomes readable)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        assert select.select([fd], [], [], timeout)[0], f"process {pid} still runs"
    finally:
        os.close(fd)


@pytest.fixture
def piddir(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "pids"
    d.mkdir()
    yield d
    # A failing test must not leave its processes behind either.
    for pid in pids(d):
        if is_running(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def read_fifo_line(path: Path, timeout: float = WAIT) -> str:
    """The first line a writer puts in the FIFO at ``path`` (waits for it, bounded)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = b""
        while not data.endswith(b"\n"):
            assert select.select([fd], [], [], timeout)[0], "nothing written to the FIFO"
            chunk = os.read(fd, 100)
            assert chunk, "the FIFO's writer left without a line"
            data += chunk
        return data.decode().strip()
    finally:
        os.close(fd)


# -- the library: ClientSideConnection ----------------------------------------------------------


def test_close_stops_what_the_agent_left_behind(piddir: Path, tmp_path: Path) -> None:
    conn = ClientSideConnection.spawn(ReferenceClient(permissions=Allow()), [*LEAKY, str(piddir)])
    conn.initialize(timeout=WAIT)
    session = conn.new_session(str(tmp_path), timeout=WAIT)
    assert conn.prompt(session.session_id, "hello", timeout=WAIT).stop_reason == "end_turn"
    [child] = pids(piddir)
    assert conn.process is not None
    pgid = conn.process.pid
    assert os.getpgid(child) == pgid != os.getpgrp()  # the agent's own group, not ours
    status = conn.close()
    # The agent exits on the end of its input; its child, which ignores that and SIGTERM, is
    # killed with the group before close() returns.
    assert status == 0 and conn.process.stopped_by is None
    assert_none_running([child])
    assert group_members(pgid) == []


def test_an_agent_that_ignores_eof_and_sigterm_is_killed_whole(
    piddir: Path, tmp_path: Path
) -> None:
    conn = ClientSideConnection.spawn(
        ReferenceClient(), [*LEAKY, str(piddir), "--stubborn"], pass_stderr=True
    )
    conn.initialize(timeout=WAIT)
    [child] = pids(piddir)
    assert conn.process is not None
    status = conn.close(grace=0.2, term_grace=0.2)
    assert status == -signal.SIGKILL and conn.process.stopped_by == "SIGKILL"
    assert "acpref killed it" in conn.process.describe_exit(status)
    assert_none_running([child, conn.process.pid])
    assert group_members(conn.process.pid) == []


def test_new_session_false_keeps_the_agent_in_our_group(piddir: Path, tmp_path: Path) -> None:
    # A harness that stops its own process group by signal must reach the agent: the caller
    # chooses. Then close() stops the agent itself, and what the agent left in our group is
    # the group owner's (here: this test's) to stop.
    conn = ClientSideConnection.spawn(ReferenceClient(), [*LEAKY, str(piddir)], new_session=False)
    conn.initialize(timeout=WAIT)
    [child] = pids(piddir)
    assert conn.process is not None
    assert os.getpgid(conn.process.pid) == os.getpgrp() == os.getpgid(child)
    assert conn.close() == 0
    assert is_running(child)
    os.kill(child, signal.SIGKILL)
    wait_dead(child)


def test_spawn_refuses_a_command_line_given_as_one_string() -> None:
    with pytest.raises(TypeError, match="list of strings"):
        ClientSideConnection.spawn(ReferenceClient(), "acpref echo")  # type: ignore[arg-type]


def test_pass_stderr_lets_the_agent_write_to_our_stderr(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from acpref.client import ClientSideConnection, ReferenceClient\n"
        "argv = [sys.executable, '-c', 'import sys; sys.stderr.write(\"from the agent\\\\n\")']\n"
        "conn = ClientSideConnection.spawn(ReferenceClient(), argv, pass_stderr=True)\n"
        "conn.wait_closed(30)\n"
        "conn.close()\n"
        "assert conn.stderr.text() == ''\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=WAIT, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert b"from the agent" in done.stderr


# -- the commands --------------------------------------------------------------------------------


def test_check_agent_leaves_no_process(piddir: Path) -> None:
    options = AgentCheckOptions(only=["handshake", "prompt", "cancel"])
    report = check_agent([*LEAKY, str(piddir)], options)
    found = pids(piddir)
    assert len(found) == 3  # one agent per scenario, each with its child
    assert_none_running(found)
    # The agent itself exits at the end of its input (its child holding the agent's stdout
    # open does not make it look as if it had not).
    assert report.results["spec-gap:exit-on-eof"].status == "PASS"


def test_acpref_client_leaves_no_process(piddir: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [*ACPREF, "client", "-p", "hello", "--", *LEAKY, str(piddir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert_none_running(pids(piddir))


def test_acpref_proxy_leaves_no_process(piddir: Path) -> None:
    proxy = subprocess.Popen(
        [*ACPREF, "proxy", "--", *LEAKY, str(piddir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # The agent starts its child before it reads anything: closing the proxy's input at once
    # still finds the pid file written.
    _, err = proxy.communicate(b"", timeout=WAIT)
    assert proxy.returncode == 0, err
    assert b"acpref proxy:" in err
    [child] = pids(piddir)
    assert_none_running([child])


def test_the_pytest_fixture_leaves_no_process(piddir: Path, tmp_path: Path) -> None:
    test = tmp_path / "test_leaky.py"
    test.write_text(
        "def test_it(acp_agent):\n"
        f"    agent = acp_agent({[*LEAKY, str(piddir)]!r})\n"
        "    agent.initialize()\n"
        "    agent.prompt(agent.new_session(), 'hello')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True,
        timeout=WAIT * 2,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [child] = pids(piddir)
    assert_none_running([child])


# -- signals: every exit path stops what the client started --------------------------------------

WAITER = r"""
import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1], "w") as fifo:
    fifo.write(f"{os.getpid()}\n")
while True:
    signal.pause()
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_acpref_client_stopped_by_a_signal_stops_its_terminals(
    signum: int, tmp_path: Path
) -> None:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    (tmp_path / "waiter.py").write_text(WAITER)
    client = subprocess.Popen(
        [
            *ACPREF,
            "client",
            "--allow",
            "-p",
            f"/run {sys.executable} waiter.py {fifo}",
            "--",
            *ACPREF,
            "echo",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    try:
        command = int(read_fifo_line(fifo))  # the terminal's command runs, in its own group
        assert os.getpgid(command) == command
        client.send_signal(signum)
        _, err = client.communicate(timeout=WAIT)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 128 + signum, err
    assert f"stopped by {_groups.signal_name(signum)}".encode() in err
    assert_none_running([command])
    assert group_members(command) == []


# -- the shutdown ladder, for each pair of acpref's tools (decisions.md shutdown-ladder) ---------


@pytest.mark.parametrize(
    "agent",
    [
        pytest.param(["echo"], id="echo"),
        pytest.param(["proxy", "--", *ACPREF, "echo"], id="proxy-echo"),
    ],
)
def test_end_of_input_cancels_a_running_turn_and_answers_it(agent: List[str]) -> None:
    # spec-gap end-of-input: the turn is cancelled at once and answered "cancelled" (the echo
    # agent used to stream on for 5 s and close without an answer, breaking RPC-06).
    driver = AgentDriver.spawn([*ACPREF, *agent], timeout=WAIT)
    driver.initialize()
    session = driver.new_session()
    pending = driver.prompt_async(session, "/wait")
    assert pending.wait_update(WAIT)  # the turn runs
    driver.stream.end_output()
    assert pending.result(WAIT).stop_reason == "cancelled"
    report = driver.close()
    assert driver.exited_on_eof and driver.process is not None
    assert driver.process.stopped_by is None  # it ended on its own: no signal needed
    assert report.ok, report.format_text()


class _Watching(ReferenceClient):
    """A reference client that says when the agent first streamed text."""

    def __init__(self) -> None:
        super().__init__(permissions=Allow())
        self.spoke = threading.Event()

    def session_update(self, params: s.SessionNotification) -> None:
        super().session_update(params)
        if isinstance(params.update, s.AgentMessageChunk):
            self.spoke.set()


@pytest.mark.parametrize(
    "agent",
    [
        pytest.param(["echo"], id="client-echo"),
        pytest.param(["proxy", "--", *ACPREF, "echo"], id="client-proxy-echo"),
        pytest.param(["check-client", "--serve", "REPORT"], id="client-check_client"),
        pytest.param(
            ["proxy", "--", *ACPREF, "check-client", "--serve", "REPORT"],
            id="client-proxy-check_client",
        ),
    ],
)
def test_the_client_closes_each_tool_within_its_grace(agent: List[str], tmp_path: Path) -> None:
    # Each of acpref's tools ends within the client's first step (stdin closed, 2 s), a turn
    # running or not, so the client never has to signal it; a proxy prints its summary.
    argv = [*ACPREF, *(str(tmp_path / "r.json") if a == "REPORT" else a for a in agent)]
    client = _Watching()
    conn = ClientSideConnection.spawn(client, argv)
    conn.initialize(timeout=WAIT)
    session = conn.new_session(str(tmp_path), timeout=WAIT).session_id
    if "echo" in agent:
        conn.prompt_async(session, "/wait")
        assert client.spoke.wait(WAIT)  # the turn runs
    status = conn.close()
    assert conn.process is not None and conn.process.stopped_by is None
    assert status == 0, conn.process.stderr.text()
    if "proxy" in agent:
        assert "acpref proxy: " in conn.process.stderr.text()
    if "check-client" in agent:
        assert (tmp_path / "r.json").exists()


def test_client_proxy_agent_stopped_by_sigterm_stop_the_whole_chain(
    piddir: Path, tmp_path: Path
) -> None:
    # acpref client -- acpref proxy -- AGENT: the client said "exited with status -9" (the
    # proxy was killed in the middle of its own ladder), printed no summary, left the agent.
    client = subprocess.Popen(
        [*ACPREF, "client", "-p", "/wait", "--", *ACPREF, "proxy", "--", *LEAKY, str(piddir)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    try:
        assert client.stdout is not None
        # The first words of the turn on the client's stdout: the turn runs, the agent's child
        # has written its pid (before the agent answered initialize).
        assert select.select([client.stdout], [], [], WAIT)[0]
        client.send_signal(signal.SIGTERM)
        _, err = client.communicate(timeout=WAIT)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 128 + signal.SIGTERM, err
    text = err.decode()
    assert "acpref proxy: " in text and "status -9" not in text
    [child] = pids(piddir)
    assert_none_running([child])


def _descendants(root: int) -> List[int]:
    """Every live process below ``root`` (by parent pid, read from /proc), deepest last."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        frontier = [pid for pid, ppid in parents.items() if ppid in frontier]
        found += frontier
    return [pid for pid in found if is_running(pid)]


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT", "end-of-input"])
def test_proxy_proxy_agent_stopped_at_the_outer_proxy_leaves_no_process(
    piddir: Path, stop: str
) -> None:
    # acpref proxy -- acpref proxy -- AGENT: each proxy stops what it started, so stopping the
    # outer one ends the inner proxy, both judges, the agent and the child the agent left.
    outer = subprocess.Popen(
        [*ACPREF, "proxy", "--", *ACPREF, "proxy", "--", *LEAKY, str(piddir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    chain: List[int] = []
    try:
        assert outer.stdin is not None and outer.stdout is not None
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        outer.stdin.write(json.dumps(init).encode() + b"\n")
        outer.stdin.flush()
        # The answer came through both proxies: every process of the chain runs.
        assert select.select([outer.stdout], [], [], WAIT)[0]
        assert b'"id": 1' in outer.stdout.readline().replace(b'"id":1', b'"id": 1')
        chain = _descendants(outer.pid)
        [child] = pids(piddir)
        assert child in chain and len(chain) >= 5, chain  # inner proxy, 2 judges, agent, child
        # Our end of its stdin stays open until it has exited, unless that is how it stops.
        drained: List[bytes] = []
        drain = threading.Thread(target=lambda: drained.append(outer.stderr.read()))
        drain.start()
        if stop == "end-of-input":
            outer.stdin.close()
        else:
            outer.send_signal(getattr(signal, stop))
        outer.wait(WAIT)
        drain.join(WAIT)
        err = drained[0]
    finally:
        if outer.poll() is None:
            outer.kill()
            outer.wait(WAIT)
    assert b"acpref proxy:" in err, err
    assert_none_running(chain)
