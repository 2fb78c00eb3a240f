"""Every judging command says one true thing: its exit status, its header counts and its last
line agree, for a finding of every level and every ``--fail-on`` value; and a peer command that
cannot be started is one line and the usage status, never a clause.

The expected verdict is written out here (``_FAILS``), not computed with ``register.fails``, so
that a change to what fails shows up as a failing test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

PY = sys.executable
USAGE = 2

#: The levels of a finding, and the --fail-on values that make each fail (MUST always fails).
_FAILS = {
    "MUST": None,  # None: always
    "SHOULD": {"SHOULD"},
    "MAY": {"MAY"},
    "spec-gap": {"spec-gap"},
    "warning": {"warning"},
}
_FAIL_ON: List[Optional[str]] = [None, "MUST", "SHOULD", "MAY", "spec-gap", "warning"]
#: How the header and the last line name one finding of each level.
_ONE = {"MUST": "1 MUST", "SHOULD": "1 SHOULD", "MAY": "1 MAY", "spec-gap": "1 spec-gap",
        "warning": "1 warning"}


def _expected(level: str, fail_on: Optional[str]) -> bool:
    named = _FAILS[level]
    return named is None or fail_on in named


def _acpref(*argv: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [PY, "-m", "acpref", *argv], capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _client_report(tmp_path: Path, level: str) -> Path:
    """A check-client report with one failed clause of ``level`` (a note, for ``warning``)."""
    results = [{"clause": "INIT-01", "level": "MUST", "status": "PASS", "scenario": "s",
                "evidence": []}]
    findings = []
    if level == "warning":
        findings.append({"clause": "SCHEMA-24", "level": "warning", "blame": "client",
                         "index": 3, "message": "an unknown field", "scenario": "s"})
    else:
        results.append({"clause": "X-01", "level": level, "status": "FAIL", "scenario": "s",
                        "evidence": ["[s] #3: broken"]})
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"subject": "client", "results": results, "findings": findings}))
    return path


@pytest.mark.parametrize("fail_on", _FAIL_ON)
@pytest.mark.parametrize("level", list(_FAILS))
def test_check_client_status_counts_and_footer_agree(
    tmp_path: Path, level: str, fail_on: Optional[str]
) -> None:
    path = _client_report(tmp_path, level)
    asked = ["--fail-on", fail_on] if fail_on else []
    run = _acpref("check-client", "--report", str(path), *asked)
    fails = _expected(level, fail_on)
    lines = run.stdout.splitlines()
    assert run.returncode == (1 if fails else 0), run.stdout + run.stderr
    counts = next(line for line in lines if line.startswith(("ok:", "not ok:")))
    assert counts.startswith("not ok:" if fails else "ok:"), counts
    assert f"{1 if fails else 0} failing the check)" in counts, counts
    if level != "warning":
        assert f"1 failed ({_ONE[level]}; " in counts, counts
    else:
        assert counts.endswith(", 1 warning"), counts
    assert (lines[0] == "FAILED (1):") is fails, lines
    footer = lines[-1]
    if fails:
        assert footer == f"failing the run: {_ONE[level]}", footer
    else:
        assert footer.startswith(f"not failing the run: {_ONE[level]}; "), footer
        assert "would fail on them" in footer and "never" not in footer


def _transcript(tmp_path: Path, *, prompt: bool = True) -> Path:
    """A session whose prompt answer breaks a MUST (a number for a stop reason) and carries an
    unknown field (a forward-compatibility warning), after an initialize answer that lacks a SHOULD
(INIT-05); without ``prompt``, a clean session."""
    def rec(sender: str, msg: dict) -> dict:
        return {"from": sender, "ts": 0, "line": json.dumps(msg)}

    c, a = "client", "agent"
    # The SHOULD finding: an initialize answer without agentInfo (INIT-05).
    info = {} if prompt else {"agentInfo": {"name": "a", "version": "1"}}
    records = [
        rec(c, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": {},
                           "clientInfo": {"name": "c", "version": "1"}}}),
        rec(a, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {},
                                                       **info}}),
        rec(c, {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []}}),
        rec(a, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
        rec(c, {"jsonrpc": "2.0", "id": 5, "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}}),
        rec(a, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": 5, "acme": 1}}),
    ]
    if not prompt:
        records = records[:-2]
    records.append({"from": c, "ts": 0, "event": "eof"})
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


@pytest.mark.parametrize("fail_on", _FAIL_ON)
def test_validate_status_counts_and_footer_agree(tmp_path: Path, fail_on: Optional[str]) -> None:
    # The session holds one MUST, one SHOULD and one warning finding.
    path = _transcript(tmp_path)
    run = _acpref("validate", str(path), *(["--fail-on", fail_on] if fail_on else []))
    lines = run.stdout.splitlines()
    assert run.returncode == 1, run.stdout + run.stderr  # the MUST fails whatever is asked
    assert lines[0] == "6 messages, findings: 1 MUST, 1 SHOULD, 1 warning", lines[0]
    failing = [level for level in ("MUST", "SHOULD", "warning") if _expected(level, fail_on)]
    rest = [level for level in ("SHOULD", "warning") if level not in failing]
    assert lines[1] == f"failing the run ({len(failing)}):", lines
    footer = "failing the run: " + ", ".join(_ONE[level] for level in failing)
    if rest:
        options = ", ".join(f"--fail-on {level}" for level in rest)
        footer += (
            "; not failing the run: " + ", ".join(_ONE[level] for level in rest)
            + f"; {options} would fail on them"
        )
    assert lines[-1] == footer


def test_validate_fail_on_should_with_no_should_finding_says_nothing_fails(
    tmp_path: Path,
) -> None:
    # The words of issue #35: exit 1 while printing "not failing" was the lie; a clean session
    # with --fail-on SHOULD exits 0 and says so.
    path = _transcript(tmp_path, prompt=False)
    run = _acpref("validate", "--fail-on", "SHOULD", str(path))
    assert run.returncode == 0, run.stdout
    assert run.stdout.splitlines()[-1] == "not failing the run: no findings"


@pytest.mark.parametrize(
    "command",
    [
        ["check-agent", "--only", "handshake"],
        ["proxy"],
        ["client", "-p", "hi"],
    ],
)
@pytest.mark.parametrize("agent", ["acpref-no-such-agent", "/etc/passwd", "/no/such/dir/agent"])
def test_an_agent_command_that_cannot_start_is_one_line_and_the_usage_status(
    command: List[str], agent: str
) -> None:
    run = _acpref(*command, "--", agent, "--its-flag")
    assert run.returncode == USAGE, run.stdout + run.stderr
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"acpref {command[0]}: cannot start {agent!r}: "), lines
    assert "MUST" not in run.stderr and "FAILED" not in run.stderr


def test_fail_on_takes_every_level_in_every_command() -> None:
    for command in (["validate", "x.jsonl"], ["check-client", "--report", "x.json"],
                    ["check-agent", "--", "x"], ["proxy", "--", "x"]):
        for level in ("MUST", "SHOULD", "MAY", "spec-gap", "warning"):
            run = _acpref(*command[:1], "--fail-on", level, *command[1:])
            assert "invalid choice" not in run.stderr, (command, level, run.stderr)


def test_help_says_what_fails_by_default() -> None:
    for command in ("validate", "check-agent", "check-client", "proxy"):
        text = _acpref(command, "--help").stdout
        flat = " ".join(text.split())
        assert "by default only MUST and MUST NOT fail" in flat, (command, text)
        assert "warnings never" not in flat and "never do" not in flat, command


def test_a_one_shot_prompt_has_a_default_deadline_and_zero_means_none() -> None:
    import argparse

    from acpref._cli._commands import ONE_SHOT_TIMEOUT, one_shot_timeout

    def resolved(prompt: Optional[str], timeout: Optional[float]) -> Optional[float]:
        return one_shot_timeout(argparse.Namespace(prompt=prompt, timeout=timeout))

    assert resolved("hi", None) == ONE_SHOT_TIMEOUT == 600
    assert resolved("hi", 0) is None and resolved("hi", 2.5) == 2.5
    assert resolved(None, None) is None  # interactive: no deadline of the run
    help_text = " ".join(_acpref("client", "--help").stdout.split())
    assert "(default 600, 0: none;" in help_text


def test_a_one_shot_prompt_to_an_agent_that_never_answers_ends_at_its_deadline() -> None:
    run = _acpref("client", "-p", "hi", "--timeout", "1", "--", PY, "-c",
                  "import time; time.sleep(60)")
    assert run.returncode == 124, run.stderr
    assert "the --timeout of 1s passed" in run.stderr


def test_check_agent_on_an_agent_that_exits_before_answering_is_one_line() -> None:
    # A wrong interpreter or a missing module: the process starts, but never as an agent.
    run = _acpref("check-agent", "--only", "handshake", "--only", "prompt", "--", PY, "-c",
                  "import acpref_no_such_module")
    assert run.returncode == USAGE, run.stdout + run.stderr
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and "before answering initialize" in lines[0], lines
    assert "ModuleNotFoundError" in lines[0]
