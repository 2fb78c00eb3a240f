"""``acpref proxy``: bytes forwarded unchanged and in order, recorded, judged on the side.

Spec: transports.mdx (the proxy is transparent: TRANSPORT-01 .. TRANSPORT-09 are the peers'
business, and it reports them); clauses of the findings as named. Real processes and pipes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acpref.oracle import read_transcript, validate
from acpref.testing import AgentDriver

PY = sys.executable
HERE = Path(__file__).resolve().parent
BROKEN = HERE / "broken"
PROXY = [PY, "-m", "acpref", "proxy"]


def test_bytes_are_forwarded_unchanged_both_ways(tmp_path: Path) -> None:
    seen = tmp_path / "seen.bin"
    payload = b'{"jsonrpc":"2.0","method":"_x","params":{}}\n\xff\xfe not UTF-8\n{"partial":'
    agent = (
        "import sys; out = sys.stdout.buffer; "
        f"out.write({payload!r}); out.flush(); "
        f"open({str(seen)!r}, 'wb').write(sys.stdin.buffer.read())"
    )
    record = tmp_path / "t.jsonl"
    sent = [
        b'{"jsonrpc":"2.0",',
        b'"method":"_y","params":{}}\n',
        b"caf\xc3\xa9 \xe9\n",
        b"no newline at the end",
    ]
    proc = subprocess.Popen(
        [*PROXY, "--record", str(record), "--", PY, "-c", agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    for piece in sent[:-1]:
        proc.stdin.write(piece)
        proc.stdin.flush()
    out, err = proc.communicate(sent[-1], timeout=30)  # the last piece, then end of input
    assert out == payload
    assert seen.read_bytes() == b"".join(sent)
    lines = [(r.sender, r.raw) for r in read_transcript(record) if r.is_message]
    assert ("client", b'{"jsonrpc":"2.0","method":"_y","params":{}}') in lines
    assert ("agent", b"\xff\xfe not UTF-8") in lines
    assert ("client", b"no newline at the end") in lines
    assert b"TRANSPORT-01" in err  # reported live, and in the summary


def test_violations_live_on_stderr_and_strict_exit_status(tmp_path: Path) -> None:
    def run(*flags: str) -> "subprocess.CompletedProcess[bytes]":
        argv = [*PROXY, *flags, "--", PY, str(BROKEN / "agents.py"), "LogOnStdout"]
        init = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
        return subprocess.run(argv, input=init, capture_output=True, timeout=30)

    lenient = run()
    assert lenient.returncode == 0
    assert b"TRANSPORT-08" in lenient.stderr and b"1 violations" in lenient.stderr
    strict = run("--strict")
    assert strict.returncode == 1
    assert b"Starting raw agent" in strict.stdout  # forwarded all the same


def test_clean_session_through_the_proxy_has_no_findings(tmp_path: Path) -> None:
    record = tmp_path / "t.jsonl"
    driver = AgentDriver.spawn(
        [*PROXY, "--record", str(record), "--", PY, str(BROKEN / "well_behaved_agent.py")]
    )
    driver.initialize()
    session = driver.new_session("/tmp")
    assert driver.prompt(session, "hello").text == "hello"
    assert driver.prompt(session, "tool").stop_reason == "end_turn"
    ours = driver.close()
    assert ours.findings == [] and driver.exited_on_eof
    theirs = validate(record)
    assert theirs.findings == []
    assert theirs.messages == ours.messages
    assert "0 violations" in driver.stderr  # the proxy's summary


def test_agent_exit_status_and_stderr_pass_through() -> None:
    agent = "import sys; sys.stderr.write('hello from the agent\\n'); sys.exit(3)"
    result = subprocess.run(
        [*PROXY, "--", PY, "-c", agent], input=b"", capture_output=True, timeout=30
    )
    assert result.returncode == 3
    assert b"hello from the agent" in result.stderr


def test_agent_ending_first_ends_the_proxy() -> None:
    # The client keeps our stdin open: the proxy must still end when the agent does.
    proc = subprocess.Popen(
        [*PROXY, "--", PY, "-c", "pass"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.read() == b""  # end of output
    assert proc.wait(timeout=30) == 0
    proc.communicate(timeout=5)


def test_benchmark_runs() -> None:
    result = subprocess.run(
        [PY, str(HERE.parent / "benchmarks" / "bench_proxy.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "median added per message" in result.stdout


def test_a_newer_v1_agent_passes_unchanged_and_without_a_false_violation(tmp_path: Path) -> None:
    # spec-gap forward-compatible: an update kind and a tool kind this version does not define
    # are forwarded byte for byte, and judged as warnings, never as violations.
    wrote, record = tmp_path / "wrote.bin", tmp_path / "t.jsonl"
    agent = [PY, str(HERE / "peers" / "newer_v1_agent.py"), str(wrote)]
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": 1,
            "clientCapabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {
            "cwd": "/tmp", "mcpServers": [],
        }},
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {
            "sessionId": "sess_newer", "prompt": [{"type": "text", "text": "hi"}],
        }},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [*PROXY, "--record", str(record), "--", *agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    received = b""
    for n, request in enumerate(requests):
        proc.stdin.write((json.dumps(request) + "\n").encode())
        proc.stdin.flush()
        # Each answer before the next request; the prompt's answer is the last line.
        while True:
            line = proc.stdout.readline()
            received += line
            if json.loads(line).get("id") == n:
                break
    out, err = proc.communicate(b"", timeout=30)
    assert proc.returncode == 0
    report = validate(record)
    assert report.violations == [], [str(f) for f in report.violations]
    assert {(f.clause, f.level) for f in report.warnings} >= {
        ("SCHEMA-24", "warning"),
        ("SCHEMA-01", "warning"),
    }
    assert received + out == wrote.read_bytes()  # byte for byte what the agent wrote
    assert b"0 violations" in err
