"""``acpref check-agent``: a well-behaved agent passes; broken ones fail the right clauses.

Spec: the clauses of each scenario (spec_notes/oracle.md). Real agent processes, one per scenario.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acpref.testing import AgentCheckOptions, CheckReport, check_agent

PY = sys.executable
BROKEN = Path(__file__).resolve().parent / "broken"
GOOD = [PY, str(BROKEN / "well_behaved_agent.py")]


def _statuses(report: CheckReport) -> dict:
    return {row.clause: row.status for row in report.rows()}


def test_well_behaved_agent_passes_every_scenario(tmp_path: Path) -> None:
    options = AgentCheckOptions(cancel_prompt="slow", record_dir=str(tmp_path), timeout=10)
    report = check_agent(GOOD, options)
    assert report.failures == [], report.format_table()
    assert report.ok
    statuses = _statuses(report)
    for clause in (
        "INIT-08",
        "SETUP-02",
        "SETUP-05",
        "SETUP-07",
        "SETUP-12",
        "SETUP-16",
        "PROMPT-23",
        "PROMPT-24",
        "CANCEL-05",
        "LIST-09",
        "DELETE-03",
        "RPC-10",
        "RPC-13",
        "CONFIG-16",
        "MODES-03",
        "spec-gap:exit-on-eof",
    ):
        assert statuses[clause] == "PASS", (clause, report.format_table())
    assert len(report.transcripts) == 10


def _echo_available() -> bool:
    return (
        subprocess.run(
            [PY, "-m", "acpref", "echo", "--help"], capture_output=True, timeout=30
        ).returncode
        == 0
    )


@pytest.mark.skipif(not _echo_available(), reason="acpref echo is not built yet")
def test_echo_agent_passes_every_scenario() -> None:
    report = check_agent(
        [PY, "-m", "acpref", "echo"], AgentCheckOptions(cancel_prompt="/wait", timeout=10)
    )
    assert all(row.status == "PASS" for row in report.rows()), report.format_table()


def test_unadvertised_capabilities_are_skipped_with_the_reason() -> None:
    options = AgentCheckOptions(only=("handshake", "delete", "load"), timeout=10)
    report = check_agent([PY, str(BROKEN / "_raw_agent_main.py")], options)
    row = report.results["DELETE-02"]
    assert row.status == "SKIPPED" and "sessionCapabilities.delete" in row.evidence[0]
    assert report.results["SETUP-05"].status == "PASS"  # the raw agent replays on load


@pytest.mark.parametrize(
    "name,scenario,clause",
    [
        ("IgnoresCancel", "cancel", "PROMPT-23"),
        ("ErrorInsteadOfCancelled", "cancel", "PROMPT-24"),
        ("ReplayAfterLoadResponse", "load", "SETUP-07"),
        ("DuplicateSessionIds", "prompt", "SETUP-02"),
        ("UnknownVersionError", "version", "INIT-08"),
        ("LogOnStdout", "handshake", "TRANSPORT-08"),
    ],
)
def test_broken_agent_fails_its_clause(name: str, scenario: str, clause: str) -> None:
    options = AgentCheckOptions(only=(scenario,), cancel_prompt="tool", timeout=5)
    report = check_agent([PY, str(BROKEN / "agents.py"), name], options)
    assert report.results[clause].status == "FAIL", report.format_table()
    assert report.results[clause].evidence
    assert not report.ok


def test_cli_prints_failures_first_counts_the_rest_table_behind_a_flag() -> None:
    argv = [PY, "-m", "acpref", "check-agent", "--only", "handshake", "--only", "load"]
    good = subprocess.run([*argv, "--", *GOOD], capture_output=True, text=True, timeout=60)
    assert good.returncode == 0, good.stdout + good.stderr
    # The passes are a count; the table (with each clause's row) only behind --table.
    assert good.stdout.startswith("ok: ") and " passed, 0 failed" in good.stdout
    assert "INIT-07" not in good.stdout
    table = subprocess.run(
        [*argv, "--table", "--", *GOOD], capture_output=True, text=True, timeout=60
    )
    assert table.returncode == 0 and "INIT-07" in table.stdout and "PASS" in table.stdout
    text = subprocess.run(
        [*argv, "--", PY, str(BROKEN / "agents.py"), "ReplayAfterLoadResponse"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert text.returncode == 1
    # The failure comes first, with the spec's sentence and the evidence (a message index).
    lines = text.stdout.splitlines()
    assert lines[0].startswith("FAILED (")
    at = lines.index("  SETUP-07 (MUST) in load")
    assert lines[at + 1].startswith("    spec (session-setup.mdx): \"When all the conversation")
    assert lines[at + 2].startswith("    [load] #")  # the offending message's index
    assert "not ok: " in text.stdout and "SETUP-06" not in text.stdout  # passes: a count
    bad = subprocess.run(
        [*argv, "--json", "--", PY, str(BROKEN / "agents.py"), "ReplayAfterLoadResponse"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1
    data = json.loads(bad.stdout)
    rows = {row["clause"]: row for row in data["results"]}
    assert rows["SETUP-07"]["status"] == "FAIL" and data["ok"] is False
    assert any(f["clause"] == "SETUP-07" for f in data["findings"])
