"""Proving the oracle: deliberately broken peers must be caught with the exact clause.

Spec: every page; each case is named after the clause it proves. The broken agents
(``tests/broken/agents.py``) run as real processes behind an ``AgentDriver``; the broken clients
(``tests/broken/clients.py``) talk to the well-behaved agent through ``acpref proxy --record``,
and their recorded transcript is validated afterwards. The clean baselines (the raw agent
unbent, the well-behaved acpref agent, the echo agent when it exists) come out with no
violation.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from acpref._core.register import FAILING, WARNING, level_of
from acpref.errors import ConnectionClosed, RemoteProtocolError, RequestTimeout, RpcError
from acpref.oracle import Finding, Report, validate
from acpref.testing import DEFAULT_CLIENT_CAPABILITIES, AgentDriver

BROKEN = Path(__file__).resolve().parent / "broken"
sys.path.insert(0, str(BROKEN))

import agents  # noqa: E402
import capability_agents  # noqa: E402
import clients  # noqa: E402
from test_quote_fit import assert_quotes_fit  # noqa: E402

PY = sys.executable
_TOLERATED = (RpcError, RemoteProtocolError, RequestTimeout, ConnectionClosed, TimeoutError)


def _cancel_on_permission(d: AgentDriver, session_id: str) -> None:
    def policy(request: Any) -> None:
        d.cancel(session_id)  # spec PROMPT-21: cancel first, then answer "cancelled"
        # A request after the cancel: the agent's answer to it, before the prompt's, is what
        # shows it had read the cancel (stdio is ordered); its open permission request is not.
        d.send_raw({"jsonrpc": "2.0", "id": "after-cancel", "method": "_x/ping", "params": {}})
        return None

    d.permission = policy


def _drive(name: str, d: AgentDriver) -> None:
    """The conversations that provoke each broken behaviour; errors of the agent are expected."""
    if name == "handshake":
        d.initialize()
        return
    if name == "unknown_version":
        d.initialize(65000)
        return
    d.initialize(client_capabilities={} if name == "prompt_nocaps" else None)
    session_id = d.new_session("/tmp")
    if name == "two_sessions":
        d.new_session("/tmp")
    elif name in ("prompt", "prompt_nocaps"):
        d.prompt(session_id, "hello")
    elif name == "tool":
        d.prompt(session_id, "tool")  # the driver allows it (its first allow option)
    elif name == "prompt_nowait":
        d.prompt_async(session_id, "hello")
    elif name in ("load", "resume"):
        d.prompt(session_id, "hello")
        d.request(f"session/{name}", {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []})
    elif name == "cancel":
        _cancel_on_permission(d, session_id)
        d.prompt(session_id, "tool")
    elif name == "idle_cancel":
        d.prompt(session_id, "hello")
        d.cancel(session_id)
        d.prompt(session_id, "hello")


def _run_agent(argv: list, drive: str) -> Report:
    d = AgentDriver.spawn(argv, timeout=5.0)
    try:
        _drive(drive, d)
    except _TOLERATED:
        pass
    return d.close(grace=3.0)


def _broken_agent_report(name: str) -> Report:
    """Run the broken agent ``name`` through the conversation that provokes it."""
    return _run_agent([PY, str(BROKEN / "agents.py"), name], agents.BROKEN[name].drive)


def _broken_client_report(name: str, tmp_path: Path) -> Report:
    """Run the broken client ``name`` through a recording proxy; validate its transcript."""
    transcript = tmp_path / "t.jsonl"
    subprocess.run([PY, str(BROKEN / "clients.py"), name, str(transcript)], timeout=30, check=True)
    return validate(transcript)


def _caught(report: Report, party: str, clause: str) -> Finding:
    """The finding of ``clause`` blamed on ``party``; the whole report is shown if there is none."""
    found = [f for f in report.blamed(party) if f.clause == clause]
    assert found, f"expected {clause} blamed on the {party}, got:\n{report.format_text()}"
    return found[0]


@pytest.mark.parametrize(
    "name", sorted(agents.BROKEN), ids=lambda n: f"{agents.BROKEN[n].expect}-{n}"
)
def test_broken_agent_is_caught_with_its_clause(name: str) -> None:
    # The clauses the broken agents prove, one agent each (``acpref spec`` reads this line):
    # spec AUTH-05, EXT-04, EXT-05, FS-01, FS-02, FS-03, INIT-07, INIT-08, OVERVIEW-01, OVERVIEW-09
    # spec PROMPT-17, PROMPT-23, PROMPT-24, PROMPT-26, RPC-01, RPC-04, RPC-05, RPC-06, RPC-09
    # spec SCHEMA-03, INIT-04, SETUP-02, SETUP-07, SETUP-08, SETUP-12, TERM-01, TERM-07
    # spec TOOL-02, TOOL-05, TOOL-15, TRANSPORT-01, TRANSPORT-05, TRANSPORT-08, FS-06
    # spec SCHEMA-01, SCHEMA-02, CONTENT-06, CONTENT-07, CONTENT-08, PROMPT-10, TOOL-13, TERM-02
    # spec INIT-04, RPC-02, TOOL-14, TOOL-10
    # spec SETUP-28, PROMPT-14, CONFIG-24
    # spec-gap unfinished-tool-call: PROMPT-16 (no keyword in its sentence)
    report = _broken_agent_report(name)
    finding = _caught(report, "agent", agents.BROKEN[name].expect)
    assert_quotes_fit(report)  # every finding of the run quotes the sentence it breaks
    assert finding.message and (
        finding.index is not None or finding.clause in ("RPC-06", "TERM-07")
    )
    _fails_the_run_if_MUST(report, finding)


@pytest.mark.parametrize(
    "name", sorted(clients.BROKEN), ids=lambda n: f"{clients.BROKEN[n].expect}-{n}"
)
def test_broken_client_is_caught_with_its_clause(name: str, tmp_path: Path) -> None:
    # The clauses the broken clients prove:
    # spec PROMPT-03, INIT-01, OVERVIEW-01, OVERVIEW-09, PROMPT-01, PROMPT-21, RPC-01, RPC-04
    # spec INIT-02, SETUP-22, SETUP-25, SETUP-35, TOOL-08, TRANSPORT-09
    # spec MODES-04, CONFIG-17, SETUP-01, PROMPT-02, SETUP-32, CONTENT-08, RPC-02, AUTH-07, SETUP-20
    # spec LIST-03, LIST-11, SETUP-15, SYSPROMPT-02, SETUP-24, SETUP-03, SYSPROMPT-03
    # spec SYSPROMPT-09, SYSPROMPT-07, SETUP-33
    # spec SUBAGENT-17, SUBAGENT-18, SUBAGENT-44
    # spec AUTH-08, CONFIG-18, INIT-13, CONTENT-06, CONTENT-07, SETUP-34
    report = _broken_client_report(name, tmp_path)
    finding = _caught(report, "client", clients.BROKEN[name].expect)
    assert_quotes_fit(report)  # every finding of the run quotes the sentence it breaks
    _fails_the_run_if_MUST(report, finding)


#: The broken agents whose one defect breaks a SHOULD sentence (spec_notes/should.md).
SHOULD_PEERS = ("ReadsOutsideTheRoots", "DoneWithoutInProgress", "ModeOptionLagsBehind")


@pytest.mark.parametrize("name", SHOULD_PEERS)
def test_a_SHOULD_defect_is_its_one_SHOULD_finding_and_the_run_stays_ok(name: str) -> None:
    # spec SETUP-28, PROMPT-14, CONFIG-24: one finding, at SHOULD, failing only with --fail-on.
    report = _broken_agent_report(name)
    found = [(f.clause, f.level, f.blame.value) for f in report.findings]
    assert found == [(agents.BROKEN[name].expect, "SHOULD", "agent")], report.format_text()
    assert report.ok and report.failing() == [], report.format_text()
    assert report.findings[0] in report.failing(fail_on=("SHOULD",))


def test_the_well_behaved_raw_agent_gets_no_SHOULD_finding_on_those_drives() -> None:
    # The base the SHOULD peers bend, on the same conversations: no finding at all.
    for drive in ("prompt", "tool"):
        report = _run_agent([PY, str(BROKEN / "agents.py"), "RawAgent"], drive)
        assert report.findings == [], report.format_text()


def _fails_the_run_if_MUST(report: Report, finding: Finding) -> None:
    # A peer on a clause graded at MUST proves it (spec_notes/proof.md): the finding is at its
    # sentence's level and a MUST fails the run. EXT-04's unknown keys are forward
    # compatibility: always a warning, whatever its sentence says.
    expected = WARNING if finding.clause == "EXT-04" else level_of(finding.clause)
    assert finding.level == expected, report.format_text()
    if expected in FAILING:
        assert not report.ok and finding in report.failing(), report.format_text()


# -- One clause each: what the finding says --------------------------------------------------------


def test_FS_01_read_without_fs_read_capability_is_caught() -> None:
    finding = _caught(_broken_agent_report("ReadsWithoutCapability"), "agent", "FS-01")
    assert "fs/read_text_file" in finding.message and "'fs.readTextFile'" in finding.message


def test_FS_02_write_without_fs_write_capability_is_caught() -> None:
    finding = _caught(_broken_agent_report("ConnWriteWithoutCapability"), "agent", "FS-02")
    assert "fs/write_text_file" in finding.message and "'fs.writeTextFile'" in finding.message


def test_FS_03_relative_read_path_is_caught() -> None:
    finding = _caught(_broken_agent_report("RelativeReadPath"), "agent", "FS-03")
    assert finding.message == "fs/read_text_file path 'notes.txt' is not absolute"


def test_FS_06_relative_write_path_is_caught() -> None:
    finding = _caught(_broken_agent_report("RelativeWritePath"), "agent", "FS-06")
    assert finding.message == "fs/write_text_file path 'notes.txt' is not absolute"


def test_TERM_01_terminal_without_terminal_capability_is_caught() -> None:
    finding = _caught(_broken_agent_report("TerminalWithoutCapability"), "agent", "TERM-01")
    assert "terminal/create" in finding.message and "'terminal'" in finding.message


def test_TERM_07_terminal_never_released_is_caught() -> None:
    finding = _caught(_broken_agent_report("LeaksTerminal"), "agent", "TERM-07")
    assert finding.message.endswith("was never released")


def test_PROMPT_01_prompt_for_a_session_never_set_up_is_caught(tmp_path: Path) -> None:
    finding = _caught(
        _broken_client_report("PromptUnknownSession", tmp_path), "client", "PROMPT-01"
    )
    assert "'sess-404'" in finding.message and finding.index is not None


def test_SETUP_22_load_naming_another_cwd_is_caught(tmp_path: Path) -> None:
    finding = _caught(_broken_client_report("LoadWithOtherCwd", tmp_path), "client", "SETUP-22")
    assert finding.message == "cwd '/var' is not the session's cwd '/tmp'"


_DRIVES = (
    "handshake",
    "unknown_version",
    "prompt",
    "two_sessions",
    "load",
    "resume",
    "cancel",
    "idle_cancel",
)


@pytest.mark.parametrize("drive", _DRIVES)
def test_clean_raw_agent_has_no_findings(drive: str) -> None:
    report = _run_agent([PY, str(BROKEN / "_raw_agent_main.py")], drive)
    assert report.findings == [], report.format_text()


def test_clean_capable_agent_has_no_findings(tmp_path: Path) -> None:
    # The agent of the opt-in features' broken clients (capable_agent.py) is conforming: a
    # client that uses each feature it offers correctly gets no finding, on either side.
    transcript = tmp_path / "t.jsonl"
    argv = [PY, str(BROKEN / "clients.py"), "UsesEveryCapability", str(transcript)]
    subprocess.run(argv, timeout=30, check=True)
    report = validate(transcript)
    assert report.findings == [], report.format_text()
    records = [json.loads(line) for line in transcript.read_text().splitlines()[1:]]
    methods = {json.loads(r["line"]).get("method") for r in records if "line" in r}
    assert {"session/set_config_option", "session/prompt"} <= methods


@pytest.mark.parametrize("drive", _DRIVES)
def test_well_behaved_acpref_agent_has_no_findings(drive: str) -> None:
    report = _run_agent([PY, str(BROKEN / "well_behaved_agent.py")], drive)
    assert report.findings == [], report.format_text()


def _echo_available() -> bool:
    probe = subprocess.run([PY, "-m", "acpref", "echo", "--help"], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _echo_available(), reason="acpref echo is not built yet")
@pytest.mark.parametrize("drive", ("handshake", "prompt", "two_sessions", "load", "idle_cancel"))
def test_echo_agent_has_no_findings(drive: str) -> None:
    report = _run_agent([PY, "-m", "acpref", "echo"], drive)
    assert report.violations == [], report.format_text()


def test_broken_peer_tables_are_large_enough() -> None:
    # The issue asks for 20+ broken peers, each with its own clause.
    counts: Dict[str, Callable[..., Any]] = {**agents.BROKEN, **clients.BROKEN}
    assert len(counts) >= 20


def test_spec_comments_list_every_broken_peer_clause() -> None:
    # The "# spec" lines above are what ``acpref spec`` counts: keep them equal to the tables.
    source = Path(__file__).read_text(encoding="utf-8")
    cited = set(re.findall(r"[A-Z]+-\d+", " ".join(re.findall(r"# spec ([A-Z0-9, -]+)", source))))
    peers = [*agents.BROKEN.values(), *clients.BROKEN.values(), *capability_agents.BROKEN.values()]
    expected = {c.expect for c in peers}
    assert cited == {c for c in expected if not c.startswith("spec-gap")}


# -- Capability-gated features: drives that advertise them (tests/broken/capability_agents.py) ----

#: The drive -> (what the client advertises besides files and terminals, the conversation).
_FEATURE_DRIVES: Dict[str, Any] = {
    "prompt": ({}, "prompt"),
    "compaction": ({"session": {"compaction": {}}}, "prompt"),
    "notices": ({"session": {"notices": {}}}, "prompt"),
    "elicitation": ({"elicitation": {"form": {}, "url": {}}}, "prompt"),
    "subagents": ({"subagents": {}}, "prompt"),
    "subagents_load": ({"subagents": {}}, "load"),
    "subagents_resume": ({"subagents": {}}, "resume"),
}


def _accept_url_decline_form(request: Any) -> Any:
    # A URL elicitation accepted stays outstanding until elicitation/complete (ELICIT-24, -27).
    from acpref import codec, schema as s

    if codec.encode(request).get("mode") == "url":
        return s.CreateElicitationResponse(action=s.ElicitationAcceptAction())
    return s.CreateElicitationResponse(action=s.ElicitationDeclineAction())


def _feature_report(name: str) -> Report:
    """Run the agent ``name`` of capability_agents.py through its drive, advertising its feature."""
    table = {**capability_agents.FEATURES, **capability_agents.BROKEN, **capability_agents.CROSSING}
    extra, conversation = _FEATURE_DRIVES[table[name].drive]
    d = AgentDriver.spawn([PY, str(BROKEN / "capability_agents.py"), name], timeout=5.0)
    d.elicitation = _accept_url_decline_form
    try:
        d.initialize(client_capabilities={**DEFAULT_CLIENT_CAPABILITIES, **extra})
        _converse(d, conversation)
    except _TOLERATED:
        pass
    return d.close(grace=3.0)


def _converse(d: AgentDriver, conversation: str) -> None:
    session_id = d.new_session("/tmp")
    d.prompt(session_id, "hello")
    if conversation in ("load", "resume"):
        params = {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []}
        d.request(f"session/{conversation}", params)


@pytest.mark.parametrize(
    "name",
    sorted(capability_agents.BROKEN),
    ids=lambda n: f"{capability_agents.BROKEN[n].expect}-{n}",
)
def test_capability_agent_is_caught_with_its_clause(name: str) -> None:
    # The clauses the one-defect agents of the capability-gated features prove:
    # spec COMPACT-04, COMPACT-10, NOTICE-03, ELICIT-08, ELICIT-11, ELICIT-17, ELICIT-24, ELICIT-27
    # spec SUBAGENT-02, SUBAGENT-05, SUBAGENT-09, SUBAGENT-10, SUBAGENT-16, SUBAGENT-31
    # spec SUBAGENT-37, SUBAGENT-38, SUBAGENT-39, SUBAGENT-40, SUBAGENT-41, SUBAGENT-53
    expect = capability_agents.BROKEN[name].expect
    report = _feature_report(name)
    finding = _caught(report, "agent", expect)
    assert_quotes_fit(report)
    assert finding.message and finding.index is not None
    _fails_the_run_if_MUST(report, finding)
    # One defect: no other clause fails the run (the drive advertised the feature's gate).
    assert {f.clause for f in report.failing()} == {expect}, report.format_text()


@pytest.mark.parametrize("name", sorted(capability_agents.FEATURES))
def test_feature_agent_has_no_findings(name: str) -> None:
    # The unbent agent of each feature, through the same drive: the drive itself is clean.
    report = _feature_report(name)
    assert report.findings == [], report.format_text()


@pytest.mark.parametrize("name", sorted(capability_agents.CROSSING))
def test_SUBAGENT_41_child_traffic_that_crossed_the_reopen_is_its_gap_not_a_MUST(name: str) -> None:
    # The child's live traffic written before the agent read the resume, recorded after it.
    report = _feature_report(name)
    expect = capability_agents.CROSSING[name].crosses
    assert {f.clause for f in report.findings} == {expect}, report.format_text()
    assert report.ok, report.format_text()


#: The broken clients of a child session (behind ``capability_agents.SubagentAgent``).
_SUBAGENT_CLIENTS = ("LoadsChildSession", "PromptsChildSession", "AllowsAfterCancellingChild")


@pytest.mark.parametrize("name", _SUBAGENT_CLIENTS)
def test_subagent_client_fails_only_its_clause(name: str, tmp_path: Path) -> None:
    # One defect: its clause alone fails the run (no PROMPT-01 for a prompt to a child, say).
    report = _broken_client_report(name, tmp_path)
    assert {f.clause for f in report.failing()} == {clients.BROKEN[name].expect}, (
        report.format_text()
    )


def test_subagents_client_answering_cancelled_has_no_findings(tmp_path: Path) -> None:
    # The baseline of AllowsAfterCancellingChild: the agent, the child's permission request and
    # the cancel are all clean when the client answers cancelled (SUBAGENT-44).
    report = _broken_client_report("CancelsChildCleanly", tmp_path)
    assert report.findings == [], report.format_text()


def test_PROMPT_21_a_permission_request_that_crossed_the_cancel_is_no_violation(
    tmp_path: Path,
) -> None:
    # HARMLESS: a client that cancels before it read the permission request the agent wrote at
    # the same time, then answers it "selected": the request was not pending for it when it
    # cancelled (spec-gap permission-crossing), whatever order the proxy recorded the two in.
    report = _broken_client_report("AnswersCrossedPermission", tmp_path)
    assert report.failing() == [], report.format_text()
    assert [f.clause for f in report.findings] == ["spec-gap:permission-crossing"], (
        report.format_text()
    )
