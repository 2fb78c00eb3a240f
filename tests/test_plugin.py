"""The pytest plugin and ``acpref.testing``: the documented examples run as written.

Spec: none (the testing API, spec_notes/oracle.md). The two examples of spec_notes/oracle.md
are extracted and run by a child pytest, exactly as a user would; failing peers make a test fail
at teardown with the clause; in-memory pairs and ``assert_conforms`` work in-process.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from acpref import schema as s
from acpref.agent import Agent
from acpref.testing import assert_conforms, memory_pair
from acpref.testing.plugin import acp_agent, acp_pair  # noqa: F401 - fixtures for this module

PY = sys.executable
REPO = Path(__file__).resolve().parent.parent
BROKEN = REPO / "tests" / "broken"


def _plugin_args() -> List[str]:
    """``-p acpref.testing.plugin`` unless the installed entry point already loads it."""
    names = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    return [] if "acpref" in names else ["-p", "acpref.testing.plugin"]


def _example(name: str) -> str:
    text = (REPO / "spec_notes" / "oracle.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(# " + re.escape(name) + r".*?)```", text, re.S)
    assert match, f"no example {name} in spec_notes/oracle.md"
    return match.group(1)


def _pytest(tmp_path: Path, name: str, source: str) -> "subprocess.CompletedProcess[str]":
    (tmp_path / name).write_text(source, encoding="utf-8")
    argv = [
        PY,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *_plugin_args(),
        str(tmp_path / name),
    ]
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=150)


def test_documented_agent_example_runs(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "test_my_agent.py", _example("test_my_agent.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


def test_documented_client_example_runs(tmp_path: Path) -> None:
    result = _pytest(tmp_path, "test_my_client.py", _example("test_my_client.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_acp_agent_fails_at_teardown_with_the_clause(tmp_path: Path) -> None:
    source = f"""
import sys

def test_relative_location(acp_agent):
    agent = acp_agent([sys.executable, {str(BROKEN / "agents.py")!r}, "RelativeLocation"])
    agent.initialize()
    session = agent.new_session("/tmp")
    assert agent.prompt(session, "hello").stop_reason == "end_turn"
"""
    result = _pytest(tmp_path, "test_broken.py", source)
    assert result.returncode == 1
    assert "1 passed, 1 error" in result.stdout
    assert "TOOL-15" in result.stdout and "the agent broke the ACP spec" in result.stdout


def test_acp_client_check_fails_a_client_that_never_launched_it(tmp_path: Path) -> None:
    source = "def test_nothing(acp_client_check):\n    assert acp_client_check.argv\n"
    result = _pytest(tmp_path, "test_client.py", source)
    assert result.returncode == 1 and "never started the grading agent" in result.stdout


class _Hello(Agent):
    def session_prompt(self, params: s.PromptRequest, turn: object) -> s.PromptResponse:
        turn.update(s.AgentMessageChunk(content=s.TextContent(text="hello")))  # type: ignore[attr-defined]
        return s.PromptResponse(stop_reason=s.StopReason.END_TURN)


def test_acp_pair_serves_an_agent_in_process(acp_pair) -> None:  # noqa: F811
    driver = acp_pair(_Hello)
    driver.initialize()
    session = driver.new_session("/tmp")
    assert driver.prompt(session, "hi").text == "hello"


def test_memory_pair_and_assert_conforms(tmp_path: Path) -> None:
    driver = memory_pair(_Hello, transcript=tmp_path / "t.jsonl")
    driver.initialize()
    driver.prompt(driver.new_session("/tmp"), "hi")
    report = assert_conforms(driver)
    assert report.messages == 7 and driver.agent_side.connection.closed
    assert assert_conforms(tmp_path / "t.jsonl").messages == 7


def test_assert_conforms_lists_the_violations() -> None:
    records = [{"from": "agent", "ts": 0, "line": "Starting..."}]
    with pytest.raises(AssertionError, match=r"TRANSPORT-08 .* agent"):
        assert_conforms(records)
    assert_conforms(records, blame="client")  # the client is not to blame
    assert_conforms(records, ignore=("TRANSPORT-08",))


def test_acp_agent_fixture_in_this_process(acp_agent) -> None:  # noqa: F811
    agent = acp_agent([PY, str(BROKEN / "well_behaved_agent.py")])
    agent.initialize()
    session = agent.new_session("/tmp")
    pending = agent.prompt_async(session, "slow")
    assert pending.wait_update()
    agent.cancel(session)
    assert pending.result().stop_reason == "cancelled"
