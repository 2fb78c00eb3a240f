"""The pytest plugin and ``acpref.testing``: the documented examples run as written.

Spec: none (the testing API, spec_notes/oracle.md). The two examples of spec_notes/oracle.md
are extracted and run by a child pytest, exactly as a user would; failing peers make a test fail
at teardown with the clause; in-memory pairs and ``assert_conforms`` work in-process.
"""

from __future__ import annotations

import importlib.metadata
import json
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


#: A raw agent for the tests below: ``version`` is its protocolVersion, ``update`` a session
#: update it sends in every turn (``-``: none).
_RAW_AGENT = """
import json, sys
version, update = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def send(m):
    print(json.dumps(m), flush=True)
for line in sys.stdin:
    m = json.loads(line)
    method, mid = m.get("method"), m.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": version,
              "agentCapabilities": {}, "agentInfo": {"name": "a", "version": "1"}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        if update is not None:
            send({"jsonrpc": "2.0", "method": "session/update",
                  "params": {"sessionId": "s1", "update": update}})
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
"""


def _raw_agent(tmp_path: Path, version: object, update: object = None) -> str:
    path = tmp_path / "raw_agent.py"
    path.write_text(_RAW_AGENT)
    return repr([PY, str(path), json.dumps(version), json.dumps(update)])


def test_a_test_stopped_by_the_defect_gets_one_report_that_starts_with_the_clause(
    tmp_path: Path,
) -> None:
    # Issue #35: the agent's broken initialize answer ("1.0" for 1) stops the test; the defect
    # is reported once, as the test's failure: the clause and its sentence first, the evidence,
    # then where the test stopped; acpref's frames hidden; no ERROR at teardown repeating it.
    source = f"""
def test_wrong_version(acp_agent):
    agent = acp_agent({_raw_agent(tmp_path, "1.0")})
    agent.initialize()
"""
    result = _pytest(tmp_path, "test_broken.py", source)
    out = result.stdout
    assert result.returncode == 1, out
    assert out.splitlines()[-1].startswith("1 failed in "), out
    body = out[out.index("_ test_wrong_version _") : out.index("short test summary")]
    lines = body.splitlines()[1:]
    assert lines[0].startswith("the agent broke the ACP spec"), body
    assert "INIT-04" in lines[1] and lines[2].strip().startswith("spec (initialization.mdx)")
    assert "requested protocolVersion 1, answered '1.0'" in body
    assert "the test stopped at " in body and "test_broken.py:4" in body
    assert "Traceback" not in body and "/acpref/" not in body.replace(str(tmp_path), "")


def test_a_test_failing_on_its_own_keeps_its_traceback_without_acprefs_frames(
    tmp_path: Path,
) -> None:
    source = """
import sys

def test_timeout(acp_agent):
    agent = acp_agent([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    agent.initialize()
"""
    result = _pytest(tmp_path, "test_silent.py", source)
    out = result.stdout
    assert result.returncode == 1 and "1 failed" in out, out
    body = out[out.index("_ test_timeout _") : out.index("short test summary")]
    assert "agent.initialize()" in body, body
    assert "acpref/testing/" not in body and "acpref/connection" not in body, body


def test_acp_agent_with_a_command_that_cannot_start_says_so_in_one_line(tmp_path: Path) -> None:
    source = """
def test_missing(acp_agent):
    acp_agent(["acpref-no-such-agent"])
"""
    result = _pytest(tmp_path, "test_missing.py", source)
    out = result.stdout
    assert result.returncode == 1, out
    assert out.splitlines()[-1].startswith("1 failed in "), out
    assert "RuntimeError: acp_agent: cannot start 'acpref-no-such-agent': command not found" in out
    assert "MUST" not in out and "broke the ACP spec" not in out


#: A message chunk with a key the stable schema lacks: a forward-compatibility warning (EXT-04).
_CHUNK_WITH_A_NEWER_KEY = {
    "sessionUpdate": "agent_message_chunk",
    "content": {"type": "text", "text": "hi"},
    "weather": "sunny",
}


@pytest.mark.parametrize("how", ["option", "fixture", "neither"])
def test_fail_on_warning_fails_a_test_on_a_forward_compatibility_note(
    tmp_path: Path, how: str
) -> None:
    arg = ', fail_on=("warning",)' if how == "fixture" else ""
    source = f"""
def test_unknown_update(acp_agent):
    agent = acp_agent({_raw_agent(tmp_path, 1, _CHUNK_WITH_A_NEWER_KEY)}{arg})
    agent.initialize()
    agent.prompt(agent.new_session("/tmp"), "hello")
"""
    (tmp_path / "test_w.py").write_text(source)
    extra = ["--acp-fail-on", "warning"] if how == "option" else []
    argv = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_args(), *extra,
            str(tmp_path / "test_w.py")]
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=150)
    if how == "neither":
        assert result.returncode == 0, result.stdout
        assert "--acp-fail-on warning would fail on them" in result.stdout
    else:
        assert result.returncode == 1, result.stdout
        assert " warning " in result.stdout and "the agent broke the ACP spec" in result.stdout
