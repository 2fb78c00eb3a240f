"""``acpref diff``: two runs of one scenario match modulo ids and timestamps; the first divergence.

Spec: none (a tool); transcripts per spec_notes/oracle.md. The runs are real: the well-behaved
agent driven twice through the same conversation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List

from acpref.oracle import Record, diff, normalize, read_transcript
from acpref.testing import AgentDriver

AGENT = [sys.executable, str(Path(__file__).resolve().parent / "broken" / "well_behaved_agent.py")]


def _run(path: Path, text: str) -> Path:
    driver = AgentDriver.spawn(AGENT, transcript=path)
    driver.initialize()
    session = driver.new_session("/tmp")
    driver.prompt(session, text)
    driver.prompt(session, "tool")
    driver.close()
    return path


def _records(*lines: dict) -> List[Record]:
    return read_transcript(
        [{"from": sender, "ts": i, "line": json.dumps(m)} for i, (sender, m) in enumerate(lines)]
    )


def test_two_runs_of_one_scenario_match(tmp_path: Path) -> None:
    a, b = _run(tmp_path / "a.jsonl", "hello"), _run(tmp_path / "b.jsonl", "hello")
    assert a.read_text() != b.read_text()  # timestamps and message ids differ
    assert diff(a, b) is None
    result = subprocess.run(
        [sys.executable, "-m", "acpref", "diff", str(a), str(b)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0 and "match" in result.stdout


def test_first_divergence_is_shown_with_its_path(tmp_path: Path) -> None:
    a, b = _run(tmp_path / "a.jsonl", "hello"), _run(tmp_path / "b.jsonl", "goodbye")
    divergence = diff(a, b)
    assert divergence is not None
    assert divergence.position == 4  # the first prompt
    assert divergence.path == "$.params.prompt[0].text"
    result = subprocess.run(
        [sys.executable, "-m", "acpref", "diff", str(a), str(b)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert "diverge at message #4" in result.stdout and "$.params.prompt[0].text" in result.stdout


def test_ids_are_renamed_by_first_appearance() -> None:
    records = _records(
        (
            "client",
            {
                "jsonrpc": "2.0",
                "id": 17,
                "method": "session/prompt",
                "params": {"sessionId": "abc", "prompt": []},
            },
        ),
        (
            "agent",
            {
                "jsonrpc": "2.0",
                "id": "x9",
                "method": "terminal/create",
                "params": {"sessionId": "abc", "command": "ls"},
            },
        ),
        ("client", {"jsonrpc": "2.0", "id": "x9", "result": {"terminalId": "t-77"}}),
        ("client", {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 17}}),
        ("agent", {"jsonrpc": "2.0", "id": 17, "result": {"stopReason": "cancelled"}}),
    )
    normal = normalize(records)
    assert (
        normal[0][1]["id"] == "<request:client:1>"
        and normal[0][1]["params"]["sessionId"] == "<session:1>"
    )
    assert normal[1][1]["id"] == "<request:agent:1>" and normal[2][1]["id"] == "<request:agent:1>"
    assert normal[2][1]["result"]["terminalId"] == "<terminal:1>"
    assert normal[3][1]["params"]["requestId"] == "<request:client:1>"
    assert normal[4][1]["id"] == "<request:client:1>"


def test_a_shorter_transcript_diverges_at_its_end() -> None:
    first = ("client", {"jsonrpc": "2.0", "method": "_x", "params": {}})
    second = ("agent", {"jsonrpc": "2.0", "method": "_y", "params": {}})
    divergence = diff(_records(first), _records(first, second))
    assert divergence is not None and divergence.position == 1 and divergence.left is None
    assert "(no more messages)" in divergence.format_text()
