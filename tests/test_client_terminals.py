"""The reference client's terminals: real processes driven by a scripted agent over real pipes.

Spec: terminals.mdx; clauses TERM-02 .. TERM-14, RPC-15, RPC-17. Decisions (spawn failures, the
per-session cap, the kill ladder): spec_notes/client.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from peers.client_harness import Pair, call, run_steps
from peers.mcp_procs import is_running

from acpref.client import OutputBuffer, ReferenceClient

PY = sys.executable
INVALID, NOT_FOUND, CANCELLED = -32602, -32002, -32800


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


@pytest.fixture
def session(root):
    made = []

    def make(**client_kwargs):
        client = ReferenceClient(kill_grace=client_kwargs.pop("kill_grace", 0.5), **client_kwargs)
        pair = Pair(client)
        made.append(pair)
        return pair, pair.new_session(str(root))

    yield make
    for pair in made:
        pair.close()


def steps(pair, sid, *items, timeout=20.0):
    return run_steps(pair.conn, pair.client, sid, items, timeout=timeout)


def create(*args, **params):
    return call("terminal/create", command=PY, args=["-c", *args], **params)


def on(method, index):
    return call(method, terminalId=f"$r{index}.terminalId")


def gone(pid: int) -> bool:
    """True if no process ``pid`` runs (a zombie has ended). Asked once: a release, a kill and a
    close return only when nothing of the command's group runs any more."""
    return not is_running(pid)


# -- OutputBuffer, directly ------------------------------------------------------------------


def test_TERM_05_truncation_at_char_boundary():
    buf = OutputBuffer(4)
    buf.feed("aé€".encode())  # 1 + 2 + 3 bytes: keeping the last 4 cuts "é" in two
    assert buf.truncated
    assert buf.text(final=True) == "€"  # the split "é" is dropped whole: 3 bytes < 4


def test_TERM_05_split_character_held_back_until_complete():
    buf = OutputBuffer(100)
    euro = "€".encode()
    buf.feed(b"ab" + euro[:1])
    assert buf.text() == "ab"
    buf.feed(euro[1:2])
    assert buf.text() == "ab"
    buf.feed(euro[2:])
    assert buf.text() == "ab€"
    assert not buf.truncated


def test_TERM_04_memory_bounded_for_many_small_writes():
    buf = OutputBuffer(1000)
    for _ in range(10_000):
        buf.feed(b"0123456789")
    assert buf.retained <= 2000
    assert buf.text() == "0123456789" * 100
    assert buf.truncated


# -- Through the protocol --------------------------------------------------------------------


def test_TERM_03_create_returns_at_once(session):
    pair, sid = session()
    created, output, _ = steps(
        pair,
        sid,
        create("import time; time.sleep(30)"),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    # At once: answered while the command runs (no exitStatus below), not after its 30 s.
    assert created["result"]["terminalId"]
    # spec TERM-09: output now, and no exitStatus while it runs.
    assert output["result"] == {"output": "", "truncated": False}


def test_TERM_10_exit_code_and_output(session):
    pair, sid = session()
    _, waited, output, _ = steps(
        pair,
        sid,
        create("import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"),
        on("terminal/wait_for_exit", 0),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    assert waited["result"] == {"exitCode": 3, "signal": None}
    assert sorted(output["result"]["output"].splitlines()) == ["err", "out"]  # stdout and stderr
    assert output["result"]["exitStatus"] == {"exitCode": 3, "signal": None}


def test_TERM_04_05_06_truncation_with_multibyte_split_across_reads(session):
    pair, sid = session()
    script = (
        "import sys, time\n"
        "data = ('aé€😀' * 4).encode()\n"
        "for i in range(len(data)):\n"
        "    sys.stdout.buffer.write(data[i:i+1]); sys.stdout.buffer.flush(); time.sleep(0.002)\n"
    )
    _, _, output, _ = steps(
        pair,
        sid,
        create(script, outputByteLimit=8),
        on("terminal/wait_for_exit", 0),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    result = output["result"]
    # spec TERM-05, TERM-06: cut at a character boundary, and `truncated` says so.
    full = "aé€😀" * 4
    assert result["truncated"] is True
    assert len(result["output"].encode()) <= 8
    assert full.endswith(result["output"])
    assert result["output"] == "€😀"  # the last 8 bytes start inside "é": cut at the next char


def test_TERM_06_not_truncated_within_limit(session):
    pair, sid = session()
    _, _, output, _ = steps(
        pair,
        sid,
        create("print('x' * 9)", outputByteLimit=10),
        on("terminal/wait_for_exit", 0),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    assert output["result"]["truncated"] is False
    assert output["result"]["output"] == "x" * 9 + "\n"


def test_TERM_11_12_kill_keeps_terminal_readable(session):
    pair, sid = session()
    _, ready, killed, waited, output, released = steps(
        pair,
        sid,
        create("import time; print('ready', flush=True); time.sleep(60)"),
        {"poll_output": "$r0.terminalId", "until": "ready\n"},
        on("terminal/kill", 0),
        on("terminal/wait_for_exit", 0),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    assert ready is True
    assert killed == {"result": {}}  # spec TERM-12: the terminal stays readable after a kill
    assert waited["result"] == {"exitCode": None, "signal": "SIGTERM"}  # spec TERM-10
    assert output["result"]["output"] == "ready\n"
    assert output["result"]["exitStatus"] == {"exitCode": None, "signal": "SIGTERM"}
    assert released == {"result": {}}


def test_kill_escalates_to_SIGKILL_when_SIGTERM_is_ignored(session):
    pair, sid = session(kill_grace=0.3)
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    _, ready, killed, waited, _ = steps(
        pair,
        sid,
        create(script),
        {"poll_output": "$r0.terminalId", "until": "ready\n"},
        on("terminal/kill", 0),
        on("terminal/wait_for_exit", 0),
        on("terminal/release", 0),
    )
    assert ready is True and killed == {"result": {}}
    assert waited["result"] == {"exitCode": None, "signal": "SIGKILL"}


def test_TERM_13_14_release_kills_and_invalidates(session, root):
    pair, sid = session()
    script = "import os, time; open('pid', 'w').write(str(os.getpid())); print('ready', flush=True); time.sleep(60)"
    _, ready, released, *after = steps(
        pair,
        sid,
        create(script),
        {"poll_output": "$r0.terminalId", "until": "ready\n"},
        on("terminal/release", 0),
        on("terminal/output", 0),
        on("terminal/wait_for_exit", 0),
        on("terminal/kill", 0),
        on("terminal/release", 0),
    )
    assert ready is True and released == {"result": {}}
    for result in after:
        assert result["error"]["code"] == NOT_FOUND  # spec TERM-14, RPC-17
    assert gone(int((root / "pid").read_text()))  # killed and reaped


def test_release_kills_the_whole_process_group(session, root):
    pair, sid = session()
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('child', 'w').write(str(child.pid)); print('ready', flush=True); time.sleep(60)\n"
    )
    _, ready, _ = steps(
        pair,
        sid,
        create(script),
        {"poll_output": "$r0.terminalId", "until": "ready\n"},
        on("terminal/release", 0),
    )
    assert ready is True
    assert gone(int((root / "child").read_text()))


def test_connection_close_kills_and_reaps_every_terminal(session, root):
    pair, sid = session()
    script = "import os, time; open('pid', 'w').write(str(os.getpid())); print('ready', flush=True); time.sleep(60)"
    _, ready = steps(pair, sid, create(script), {"poll_output": "$r0.terminalId", "until": "ready\n"})
    assert ready is True
    pid = int((root / "pid").read_text())
    pair.close()
    assert gone(pid)  # killed by close(), before it returned
    assert pair.client.terminals.live() == []


def test_flood_of_output_keeps_memory_bounded(session):
    pair, sid = session()
    script = "import sys\nfor _ in range(512): sys.stdout.buffer.write(b'y' * 65536)\nsys.stdout.buffer.write(b'END')"
    created, _ = steps(
        pair, sid, create(script, outputByteLimit=1000), on("terminal/wait_for_exit", 0)
    )
    tid = created["result"]["terminalId"]
    assert pair.client.terminals.retained_bytes(tid) <= 2000  # 32 MiB printed
    (output, _) = steps(
        pair, sid, call("terminal/output", terminalId=tid), call("terminal/release", terminalId=tid)
    )
    # spec TERM-04: only the last outputByteLimit bytes are kept.
    assert output["result"]["truncated"] is True
    assert output["result"]["output"].endswith("END") and len(output["result"]["output"]) == 1000


def test_cwd_and_env(session, root):
    (root / "sub").mkdir()
    pair, sid = session()
    _, _, output, _ = steps(
        pair,
        sid,
        create(
            "import os; print(os.getcwd()); print(os.environ['ACPREF_TEST'])",
            cwd=str(root / "sub"),
            env=[{"name": "ACPREF_TEST", "value": "v1"}],
        ),
        on("terminal/wait_for_exit", 0),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    assert output["result"]["output"].splitlines() == [os.path.realpath(root / "sub"), "v1"]


def test_cwd_outside_the_roots_or_relative_is_refused(session, tmp_path):
    pair, sid = session()
    outside, relative = steps(
        pair, sid, create("print(1)", cwd=str(tmp_path)), create("print(1)", cwd="sub")
    )
    assert outside["error"]["code"] == INVALID
    assert relative["error"]["code"] == INVALID  # spec TERM-02, OVERVIEW-06 (the rules refuse it)


def test_command_that_cannot_start_exits_127(session):
    pair, sid = session()
    _, waited, output, _ = steps(
        pair,
        sid,
        call("terminal/create", command="/no/such/command"),
        on("terminal/wait_for_exit", 0),
        on("terminal/output", 0),
        on("terminal/release", 0),
    )
    assert waited["result"] == {"exitCode": 127, "signal": None}
    assert "cannot run '/no/such/command'" in output["result"]["output"]


def test_terminals_per_session_are_capped(session):
    pair, sid = session(max_terminals_per_session=2)
    first, second, third, _, fourth, *_ = steps(
        pair,
        sid,
        create("print(1)"),
        create("print(2)"),
        create("print(3)"),
        on("terminal/release", 0),
        create("print(4)"),
        on("terminal/release", 1),
        on("terminal/release", 4),
    )
    assert "terminalId" in first["result"] and "terminalId" in second["result"]
    assert third["error"]["code"] == CANCELLED  # spec RPC-15: refused by a resource limit
    assert "terminalId" in fourth["result"]  # a released terminal frees its place
