"""A value no carried schema defines: the live sides keep it and warn, the oracle fails it.

Spec: spec_notes/decisions.md, forward-compatible (the live sides: ``stopReason: "paused"`` kept
as the enum's stand-in, a warning) and undefined-value (the oracle: a value outside a closed set
of the stable schema of 2026-11-02 and of its unstable schema breaks the sentence that names the
set, PROMPT-17 for a stop reason, else OVERVIEW-01; ``newer_spec`` / ``--newer-spec`` makes it a
warning, for a peer built on a newer spec). The agents are real processes
(``tests/peers/unusual_agents.py`` ``NewerValues``, ``tests/broken/check_agents.py``
``StopsDone``) over real pipes; the CLI and the pytest plugin run as a user runs them.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from acpref import codec
from acpref import schema as s
from acpref._core.compat import SCHEMA_DATE
from acpref.client import Allow, ClientSideConnection, ReferenceClient
from acpref.oracle import Report, validate
from acpref.testing import AgentCheckOptions, assert_conforms, check_agent

pytestmark = pytest.mark.timeout(120)

PY = sys.executable
HERE = Path(__file__).resolve().parent
NEWER = [PY, str(HERE / "peers" / "unusual_agents.py"), "NewerValues"]
STOPS_DONE = [PY, str(HERE / "broken" / "check_agents.py"), "StopsDone"]
WAIT = 20.0
C, A = "client", "agent"


# -- the live sides: accept, keep, warn ------------------------------------------------------------


def test_PROMPT_17_an_undefined_stop_reason_is_kept_and_reported_as_a_warning(
    tmp_path: Path,
) -> None:
    client = ReferenceClient(permissions=Allow())
    side = ClientSideConnection.spawn(client, NEWER)
    try:
        side.initialize(timeout=WAIT)
        sid = side.new_session(str(tmp_path), timeout=WAIT).session_id
        answer = side.prompt(sid, "hi", timeout=WAIT)
        assert isinstance(answer.stop_reason, s.StopReason)
        assert answer.stop_reason == "paused" and not answer.stop_reason.defined
        assert answer.stop_reason != s.StopReason.END_TURN
        assert codec.encode(answer) == {"stopReason": "paused"}  # written back unchanged
        warnings = [(f.clause, f.level, f.blame.value) for f in side.rules.findings]
        assert warnings == [("PROMPT-17", "warning", "agent")]
        # The tool call's undefined kind is a malformed marked field (default-on-error): absent.
        (call,) = client.view(sid).tool_calls.values()
        assert call.kind == "other" and call.status == "completed"
        # The connection goes on: a second turn, a second warning (one per turn).
        assert side.prompt(sid, "again", timeout=WAIT).stop_reason == "paused"
        assert [f.clause for f in side.rules.findings] == ["PROMPT-17", "PROMPT-17"]
    finally:
        side.close()


def test_the_strict_codec_still_names_the_undefined_value() -> None:
    with pytest.raises(codec.DecodeError) as raised:
        codec.decode({"stopReason": "paused"}, s.PromptResponse, strict=True)
    assert codec.UNDEFINED_VALUE in str(raised.value)
    # A value that is no string stays a violation in both modes (PROMPT-17).
    with pytest.raises(codec.DecodeError):
        codec.decode({"stopReason": ["end_turn"]}, s.PromptResponse)
    defined = codec.decode({"stopReason": "end_turn"}, s.PromptResponse)
    assert defined.stop_reason is s.StopReason.END_TURN and defined.stop_reason.defined


# -- the oracle: a transcript -------------------------------------------------------------------


def _records(*messages: Tuple[str, Any], caps: Any = None) -> List[Dict[str, Any]]:
    """initialize (client capabilities ``caps``), session/new, a prompt, ``messages``, the end."""
    opening = [
        (C, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": 1,
            "clientCapabilities": caps or {},
            "clientInfo": {"name": "c", "version": "1"},
        }}),
        (A, {"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": 1, "agentInfo": {"name": "a", "version": "1"},
        }}),
        (C, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {
            "cwd": "/", "mcpServers": [],
        }}),
        (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
        (C, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {
            "sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}],
        }}),
    ]  # fmt: skip
    out = [{"from": who, "ts": 0, "line": json.dumps(m)} for who, m in [*opening, *messages]]
    return [*out, {"from": C, "ts": 0, "event": "eof"}]


def _update(update: Dict[str, Any]) -> Tuple[str, Any]:
    params = {"sessionId": "s1", "update": update}
    return (A, {"jsonrpc": "2.0", "method": "session/update", "params": params})


END = (A, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})
WEATHER = _update({"sessionUpdate": "weather_update", "forecast": "sunny"})
EXPLODED = _update(
    {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Go", "status": "exploded"}
)


def _undefined(report: Report) -> List[Tuple[str, str, str]]:
    return [
        (f.clause, f.level, f.message) for f in report.findings if "is defined neither" in f.message
    ]


def test_validate_fails_an_undefined_update_kind_and_tool_call_status() -> None:
    # spec OVERVIEW-01 (decisions.md undefined-value): SessionUpdate and ToolCallStatus are
    # closed sets that only schema.json names; a value outside them is no valid ACP message.
    report = validate(_records(WEATHER, EXPLODED, END))
    found = _undefined(report)
    assert [(clause, level) for clause, level, _ in found] == [("OVERVIEW-01", "MUST NOT")] * 2
    assert not report.ok and len(report.violations) == 2, report.format_text()
    kind, status = (text for _, _, text in found)
    # Each names the value, the set the carried schemas allow, the schema's date, the refresh.
    assert "params.update.sessionUpdate 'weather_update'" in kind
    assert "'notice'" in kind and "'plan_update'" in kind  # stable and unstable kinds alike
    assert "params.update.status 'exploded'" in status
    assert "(they allow 'pending', 'in_progress', 'completed', 'failed')" in status
    for text in (kind, status):
        assert f"stable schema of {SCHEMA_DATE}" in text and "acpref spec-diff" in text
        assert "--newer-spec" in text


def test_validate_with_newer_spec_makes_them_warnings_and_judges_the_rest() -> None:
    report = validate(_records(WEATHER, EXPLODED, END), newer_spec=True)
    assert [(c, level) for c, level, _ in _undefined(report)] == [("OVERVIEW-01", "warning")] * 2
    assert report.ok and report.violations == []
    # Everything else is judged as without it: a relative tool call location still fails.
    relative = _update(
        {"sessionUpdate": "tool_call", "toolCallId": "r", "title": "Read",
         "locations": [{"path": "README.md"}]}
    )  # fmt: skip
    judged = validate(_records(EXPLODED, relative, END), newer_spec=True)
    assert [f.clause for f in judged.violations] == ["TOOL-15"]


def test_PROMPT_17_validate_fails_stop_reason_done_under_its_sentence() -> None:
    done = (A, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "done"}})
    report = validate(_records(done))
    ((clause, level, text),) = _undefined(report)
    assert (clause, level) == ("PROMPT-17", "MUST")  # "it must specify the corresponding ..."
    assert "result.stopReason 'done'" in text
    assert "'end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled'" in text
    assert report.violations[0].quote is not None
    assert "StopReason" in report.violations[0].quote.text
    with pytest.raises(AssertionError, match="PROMPT-17"):
        assert_conforms(_records(done))
    assert_conforms(_records(done), newer_spec=True)


def test_a_value_only_the_unstable_schema_defines_fails_nothing() -> None:
    # The unstable schema's update kinds (plan operations, stabilized 2026-11-20) are judged by
    # their provisional clauses, never as undefined values.
    entries = [{"content": "Answer", "priority": "high", "status": "completed"}]
    plan = {"type": "items", "planId": "p1", "entries": entries}
    report = validate(
        _records(
            _update({"sessionUpdate": "plan_update", "plan": plan}),
            _update({"sessionUpdate": "plan_removed", "planId": "p1"}),
            END,
            caps={"plan": {}},
        )
    )
    assert _undefined(report) == [] and report.violations == [], report.format_text()
    assert all(f.level == "warning" for f in report.findings), report.format_text()


def test_the_carried_schema_date_is_the_spec_copy_s() -> None:
    source = (HERE.parent / "spec_notes" / "spec" / "SOURCE.md").read_text(encoding="utf-8")
    assert f"published **{SCHEMA_DATE}T" in source


# -- check-agent -----------------------------------------------------------------------------------


def test_check_agent_fails_the_newer_values_by_default() -> None:
    report = check_agent(NEWER, AgentCheckOptions(only=("prompt",), timeout=10))
    assert not report.ok, report.format_text(full=True)
    assert report.failed("PROMPT-17") and report.failed("OVERVIEW-01"), report.format_table()
    failing = {r.clause for r in report.failing()}
    assert failing == {"PROMPT-17", "OVERVIEW-01"}, report.format_table()
    evidence = " ".join(report.results["PROMPT-17"].evidence)
    assert "'paused'" in evidence and SCHEMA_DATE in evidence


def test_check_agent_with_newer_spec_gives_the_newer_values_warnings_only() -> None:
    options = AgentCheckOptions(only=("prompt",), timeout=10, newer_spec=True)
    report = check_agent(NEWER, options)
    assert report.passed("PROMPT-17"), report.format_text(full=True)
    assert not report.failed() and report.ok, report.format_text(full=True)
    warned = [f for f in report.findings if "is defined neither" in f["message"]]
    assert {f["clause"] for f in warned} == {"PROMPT-17", "OVERVIEW-01"}
    assert all(f["level"] == "warning" for f in warned)


def _acpref(*args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [PY, "-m", "acpref", *args], capture_output=True, text=True, timeout=90
    )


def test_cli_check_agent_and_validate_fail_stop_reason_done_unless_newer_spec(
    tmp_path: Path,
) -> None:
    # The adopter's story: an agent answering stopReason "done" passed; now it fails.
    record = tmp_path / "runs"
    failed = _acpref("check-agent", "--only", "prompt", "--record", str(record), "--", *STOPS_DONE)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "PROMPT-17 (MUST)" in failed.stdout and "'done'" in failed.stdout, failed.stdout
    passed = _acpref("check-agent", "--only", "prompt", "--newer-spec", "--", *STOPS_DONE)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    transcript = str(record / "prompt.jsonl")
    assert _acpref("validate", transcript).returncode == 1
    again = _acpref("validate", "--newer-spec", transcript)
    assert again.returncode == 0 and "not failing the run: 2 warnings" in again.stdout, again.stdout


def test_the_option_has_the_same_words_everywhere() -> None:
    from acpref._cli._levels import NEWER_SPEC_HELP
    from acpref.testing import plugin

    assert plugin._NEWER_SPEC_HELP == NEWER_SPEC_HELP
    for command in ("validate", "check-agent", "check-client", "proxy"):
        shown = " ".join(_acpref(command, "--help").stdout.split())
        assert "--newer-spec" in shown, command
        assert " ".join(NEWER_SPEC_HELP.split()) in shown, command
    refused = _acpref("check-client", "--report", "r.json", "--newer-spec")
    assert refused.returncode == 2 and "--newer-spec goes with --serve" in refused.stderr


# -- check-client ----------------------------------------------------------------------------------


def test_check_client_with_newer_spec_warns_on_an_undefined_permission_outcome(
    tmp_path: Path,
) -> None:
    # Without the option the same client fails OVERVIEW-01 (test_check_client.py, DEFECTS).
    sys.path.insert(0, str(HERE / "broken"))
    try:
        import check_clients
    finally:
        sys.path.remove(str(HERE / "broken"))
    from acpref.testing import read_client_report

    client = check_clients.UndefinedPermissionOutcome()
    client.serve_args = ("--newer-spec",)
    client.run(str(tmp_path / "report.json"), str(tmp_path))
    report = read_client_report(str(tmp_path / "report.json"))
    assert report.results["OVERVIEW-01"].status == "PASS", report.format_table()
    assert report.ok, report.format_table()
    warned = [f for f in report.findings if "'approved'" in f["message"]]
    assert warned and all(f["level"] == "warning" for f in warned), report.findings


# -- the pytest plugin -----------------------------------------------------------------------------


def _plugin_args() -> List[str]:
    names = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    return [] if "acpref" in names else ["-p", "acpref.testing.plugin"]


FIXTURE_TEST = f"""
import sys

def test_done(acp_agent):
    agent = acp_agent({STOPS_DONE!r}{{newer}})
    agent.initialize()
    session = agent.new_session("/tmp")
    assert agent.prompt(session, "hello").stop_reason == "done"
"""


def _child_pytest(tmp_path: Path, newer: str, *options: str) -> "subprocess.CompletedProcess[str]":
    (tmp_path / "test_done.py").write_text(FIXTURE_TEST.replace("{newer}", newer), "utf-8")
    argv = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_args(), *options]
    return subprocess.run(
        [*argv, str(tmp_path / "test_done.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_the_acp_agent_fixture_fails_stop_reason_done(tmp_path: Path) -> None:
    result = _child_pytest(tmp_path, "")
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"PROMPT-17\b.*'done'", result.stdout), result.stdout
    assert "1 passed, 1 error" in result.stdout, result.stdout  # failed at teardown


def test_the_acp_agent_fixture_passes_it_with_newer_spec(tmp_path: Path) -> None:
    by_option = _child_pytest(tmp_path, "", "--acp-newer-spec")
    assert by_option.returncode == 0, by_option.stdout + by_option.stderr
    by_argument = _child_pytest(tmp_path, ", newer_spec=True")
    assert by_argument.returncode == 0, by_argument.stdout + by_argument.stderr
