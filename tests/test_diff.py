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


def _crossing(agent_first: bool) -> List[Record]:
    """A prompt and an update that cross on the wire, in either order."""
    prompt = ("client", {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {}})
    update = ("agent", {"jsonrpc": "2.0", "method": "session/update", "params": {"n": 1}})
    answer = ("agent", {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}})
    return _records(*((update, prompt) if agent_first else (prompt, update)), answer)


def test_messages_that_cross_on_the_wire_are_no_divergence() -> None:
    # Each side's own order is compared; the interleaving of the two directions is free.
    assert diff(_crossing(True), _crossing(False)) is None
    strict = diff(_crossing(True), _crossing(False), strict_order=True)
    assert strict is not None and strict.position == 0 and strict.path == "sender"


def test_a_side_that_reorders_its_own_messages_diverges() -> None:
    first = ("agent", {"jsonrpc": "2.0", "method": "_a", "params": {}})
    second = ("agent", {"jsonrpc": "2.0", "method": "_b", "params": {}})
    divergence = diff(_records(first, second), _records(second, first))
    assert divergence is not None and divergence.position == 0 and divergence.path == "$.method"


def test_two_echo_runs_of_one_prompt_match(tmp_path: Path) -> None:
    # The echo agent is deterministic: two `acpref client -p hi` runs diff as a match.
    paths = []
    for name in ("a.jsonl", "b.jsonl"):
        path = tmp_path / name
        done = subprocess.run(
            [sys.executable, "-m", "acpref", "client", "--record", str(path), "-p", "hi", "--"]
            + [sys.executable, "-m", "acpref", "echo"],
            cwd=tmp_path,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        paths.append(path)
    result = subprocess.run(
        [sys.executable, "-m", "acpref", "diff", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stdout
