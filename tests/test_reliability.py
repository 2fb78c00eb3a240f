"""Dying and slow peers: real peer processes that die, hang up, stop reading or shout on stderr.

Spec: transports.mdx (stdio; TRANSPORT-07 stderr, TRANSPORT-10 shutdown), overview.mdx; the
connection's decisions (end-of-input): spec_notes/connection.md; faults and bounds:
spec_notes/reliability.md.

Both sides are tried against a peer process that misbehaves on purpose:

* our **client side** (``ClientSideConnection.spawn``) against ``peers/reliability_agent.py``;
* our **agent side** (``AgentSideConnection`` in this process, over the pipes of a spawned
  process) against ``peers/reliability_client.py``.

The faults: the peer dies in the middle of a line, in the middle of a turn, and while we wait for
its answer; it closes its stdout but keeps running; it stops reading, so that our writes block on
a full pipe; it floods stderr; it ignores SIGTERM at shutdown. Each test proves that every call
of ours in flight ends with a clear error within a bound, that the connection closes, that the
peer process is gone, that no thread of ours is left, and that nothing was logged at ERROR.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from peers.reliability_sides import WAIT, Watch

from acpref import schema as s
from acpref._shell.transport import FdStream, spawn
from acpref.agent import Agent, AgentSideConnection
from acpref.client import AgentExited, ClientSideConnection, ReferenceClient
from acpref.errors import ConnectionClosed

PEERS = Path(__file__).parent / "peers"
AGENT = str(PEERS / "reliability_agent.py")
CLIENT = str(PEERS / "reliability_client.py")
#: The write timeout of the sides under test: a peer that reads nothing for this long is dead.
WRITE_TIMEOUT = 0.5


@pytest.fixture
def clean() -> Iterator[Watch]:
    """Nothing logged at ERROR, no exception escaping a thread, no thread of ours left after."""
    before = set(threading.enumerate())
    with Watch() as watch:
        yield watch
    deadline = time.monotonic() + WAIT
    for thread in set(threading.enumerate()) - before:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert [t.name for t in set(threading.enumerate()) - before if t.is_alive()] == []
    assert watch.problems() == []


# -- Our client side against a dying agent ----------------------------------------------------


def _agent(mode: str, **kwargs: Any) -> ClientSideConnection:
    return ClientSideConnection.spawn(
        ReferenceClient(), [sys.executable, AGENT, mode], write_timeout=WRITE_TIMEOUT, **kwargs
    )


def test_client_side_agent_dies_mid_line(clean: Watch, tmp_path: Path):
    conn = _agent("die-mid-line")
    try:
        conn.initialize(timeout=WAIT)
        # The agent's death fails the call (AgentExited), long before its own timeout would
        # (RequestTimeout): no waiting on time either way.
        with pytest.raises(AgentExited) as caught:
            conn.new_session(str(tmp_path), timeout=WAIT)
        assert caught.value.returncode == 3
        assert conn.wait_closed(WAIT)
    finally:
        conn.close(grace=0.5, term_grace=0.5)


def test_client_side_agent_dies_mid_turn(clean: Watch, tmp_path: Path):
    conn = _agent("die-mid-turn")
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        with pytest.raises(AgentExited) as caught:
            conn.prompt(sid, "go", timeout=WAIT)
        assert caught.value.returncode == 4 and "status 4" in str(caught.value)
        # The updates read before the end were all handled, in order.
        texts = [m.text for m in conn.client.view(sid).messages if m.role == "agent"]
        assert "".join(texts) == "".join(f"u{i} " for i in range(20))
    finally:
        conn.close(grace=0.5, term_grace=0.5)


def test_client_side_agent_dies_while_we_wait(clean: Watch, tmp_path: Path):
    conn = _agent("die-while-waited")
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        others = [conn.connection.request_async("_acme/never_answered") for _ in range(3)]
        with pytest.raises(AgentExited) as caught:
            conn.prompt(sid, "go", timeout=WAIT)
        assert caught.value.returncode == 5
        for pending in others:  # every other call in flight fails too
            with pytest.raises(ConnectionClosed):
                pending.result(WAIT)
        with pytest.raises(ConnectionClosed):  # and so does a new one, at once
            conn.session_list(timeout=WAIT)
    finally:
        conn.close(grace=0.5, term_grace=0.5)


def test_client_side_agent_closes_stdout_but_keeps_running(clean: Watch, tmp_path: Path):
    conn = _agent("close-stdout")
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        with pytest.raises(ConnectionClosed) as caught:
            conn.prompt(sid, "go", timeout=WAIT)
        # The end of its output ends the connection: the prompt fails (not RequestTimeout), and
        # the agent, of no use any more, is shut down in the ladder (stdin closed, 0.5 s,
        # SIGTERM: it ignored the first step). The error names the first cause.
        assert "end of input" in str(caught.value), caught.value
        assert conn.wait_closed(WAIT)
    finally:
        status = conn.close(grace=0.3, term_grace=1.0)
    # spec TRANSPORT-10: it ignored its closed stdin, so it was terminated.
    assert status == -15


def test_client_side_agent_stops_reading_and_our_writes_block(clean: Watch, tmp_path: Path):
    conn = _agent("stop-reading")
    outcomes: "queue.Queue[Any]" = queue.Queue()

    def attempt(name: str, call: Any) -> None:
        try:
            call()
            outcomes.put((name, None))
        except BaseException as exc:  # noqa: BLE001 - reported through the queue
            outcomes.put((name, exc))

    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        big = "x" * (8 << 20)  # far more than a pipe holds
        calls = {
            "big prompt": lambda: conn.prompt(sid, big, timeout=WAIT),
            "cancels": lambda: [conn.cancel(sid) for _ in range(10_000)],
            "extension call": lambda: conn.ext_method("_acme/x", {"pad": "p" * 100_000}),
            "another call": lambda: conn.ext_method("_acme/y", timeout=WAIT),
        }
        threads = [threading.Thread(target=attempt, args=item) for item in calls.items()]
        for t in threads:
            t.start()
        results = dict(outcomes.get(timeout=WAIT) for _ in threads)
        for t in threads:
            t.join(WAIT)
        # Every call failed with ConnectionClosed (none with RequestTimeout: the blocked write's
        # failure reached the writers queued behind it and every caller waiting).
        assert all(isinstance(e, ConnectionClosed) for e in results.values()), results
        assert any("peer read nothing" in str(e) for e in results.values()), results
        assert conn.wait_closed(WAIT)
    finally:
        status = conn.close(grace=0.3, term_grace=1.0)
    assert status == -15


def test_TRANSPORT_07_client_side_agent_floods_stderr(clean: Watch, tmp_path: Path):
    lines: List[int] = []
    conn = _agent("flood-stderr", on_stderr_line=lambda line: lines.append(len(line)))
    try:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        for _ in range(2):
            assert conn.prompt(sid, "go", timeout=WAIT).stop_reason == s.StopReason.END_TURN
    finally:
        status = conn.close(grace=WAIT)
    # spec TRANSPORT-07: stderr is drained (never parsed); only its last MiB is kept.
    assert status == 0
    assert conn.stderr.total == 2 * 512 * 65536
    assert len(conn.stderr.text()) <= 1 << 20
    assert len(lines) == 2 * 512


def test_TRANSPORT_10_client_side_agent_ignores_sigterm_at_shutdown(clean: Watch, tmp_path: Path):
    conn = _agent("ignore-sigterm")
    conn.initialize(timeout=WAIT)
    sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
    assert conn.prompt(sid, "go", timeout=WAIT).stop_reason == s.StopReason.END_TURN
    status = conn.close(grace=0.3, term_grace=0.3)
    # spec TRANSPORT-10: stdin closed, then SIGTERM (ignored), then SIGKILL; each step bounded.
    assert status == -9 and conn.process is not None and conn.process.stopped_by == "SIGKILL"


# -- Our agent side against a dying client ------------------------------------------------------


class WorkingAgent(Agent):
    """Turns that stream, ask, or stream big updates; how each turn ended goes to ``ended``."""

    connect_mcp_servers = False

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.ended: "queue.Queue[Any]" = queue.Queue()
        self.asked = threading.Event()

    def session_prompt(self, params: s.PromptRequest, turn: Any) -> Any:
        text = params.prompt[0].text
        try:
            if text == "stream":
                while not turn.cancelled.wait(0.005):
                    turn.say("tick ")
            elif text == "stream-big":
                while not turn.cancelled.is_set():
                    turn.say("b" * 256 * 1024)
            elif text == "ask":
                call_id = turn.new_tool_call_id()
                turn.update(s.ToolCall(tool_call_id=call_id, title="edit"))
                option = s.PermissionOption(
                    option_id="yes", name="Yes", kind=s.PermissionOptionKind.ALLOW_ONCE
                )
                self.asked.set()
                turn.request_permission(s.ToolCallUpdate(tool_call_id=call_id), [option])
            else:
                turn.say("hello")
        except BaseException as exc:
            self.ended.put((text, exc))
            raise
        self.ended.put((text, None))
        return s.StopReason.END_TURN


class ClientPeer:
    """``peers/reliability_client.py`` in MODE, served by our agent side over its pipes."""

    def __init__(self, mode: str, cwd: Path) -> None:
        self.process = spawn([sys.executable, CLIENT, mode, str(cwd)])
        popen = self.process.popen
        stream = FdStream(popen.stdout.fileno(), popen.stdin.fileno(), write_timeout=WRITE_TIMEOUT)
        self.agent: WorkingAgent = None  # type: ignore[assignment]

        def build(client: Any) -> WorkingAgent:
            self.agent = WorkingAgent(client)
            return self.agent

        self.side = AgentSideConnection(build, stream, name=f"rel-{mode}").start()

    def exited(self) -> None:
        """Wait for the peer to exit (not reaped: its shutdown still owns its group)."""
        assert self.process.wait(WAIT) is not None

    def turn_end(self) -> Any:
        """How the turn ended: (its prompt's text, exception or None)."""
        return self.agent.ended.get(timeout=WAIT)

    def close(self, **shutdown: Any) -> Any:
        self.side.close()
        return self.process.shutdown(**shutdown)


@pytest.mark.parametrize(
    "mode, status", [("die-mid-line", 3), ("die-mid-turn", 4), ("die-while-waited", 5)]
)
def test_agent_side_client_dies(clean: Watch, tmp_path: Path, mode: str, status: int):
    peer = ClientPeer(mode, tmp_path)
    try:
        peer.exited()
        ended, error = peer.turn_end()
        # The turn ended: its write failed (the pipe is broken), or its question to the client
        # failed, or it saw the connection's end as a cancellation.
        assert error is None or isinstance(error, ConnectionClosed), error
        assert peer.side.wait_closed(WAIT)
    finally:
        assert peer.close(grace=0.5, term_grace=0.5) == status


def test_agent_side_client_closes_stdout_but_keeps_running(clean: Watch, tmp_path: Path):
    peer = ClientPeer("close-stdout", tmp_path)
    try:
        ended, error = peer.turn_end()
        # Its question can no longer be answered: it fails at once, with ConnectionClosed.
        assert isinstance(error, ConnectionClosed), error
        assert peer.side.wait_closed(WAIT)
        assert peer.process.returncode is None  # the client still runs (and reads)
    finally:
        status = peer.close(grace=0.3, term_grace=1.0)
    assert status == -15


def test_agent_side_client_stops_reading_and_our_writes_block(clean: Watch, tmp_path: Path):
    peer = ClientPeer("stop-reading", tmp_path)
    try:
        ended, error = peer.turn_end()
        # The turn's next update could not be written within the write timeout: it failed with
        # ConnectionClosed, and the connection closed.
        assert isinstance(error, ConnectionClosed) and "peer read nothing" in str(error), error
        assert peer.side.wait_closed(WAIT)
    finally:
        assert peer.close(grace=0.3, term_grace=1.0) == -15


def test_TRANSPORT_07_agent_side_client_floods_stderr(clean: Watch, tmp_path: Path):
    peer = ClientPeer("flood-stderr", tmp_path)
    try:
        ended, error = peer.turn_end()
        assert error is None
    finally:
        status = peer.close(grace=WAIT)
    assert status == 0
    assert peer.process.stderr.total == 512 * 65536
    assert len(peer.process.stderr.text()) <= 1 << 20


def test_agent_side_client_ignores_sigterm_at_shutdown(clean: Watch, tmp_path: Path):
    peer = ClientPeer("ignore-sigterm", tmp_path)
    ended, error = peer.turn_end()
    assert error is None
    assert peer.close(grace=0.3, term_grace=0.3) == -9
    assert peer.process.stopped_by == "SIGKILL"
