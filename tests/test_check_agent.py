"""``acpref check-agent``: a well-behaved agent passes; broken ones fail the right clauses.

Spec: the clauses of each scenario (spec_notes/oracle.md). Real agent processes, one per scenario.

Every area of the spec has a one-defect agent (``tests/broken/check_agents.py`` ``DEFECTS``)
that breaks one MUST / MUST NOT sentence of it, and the run it is checked in ends ``ok: false``
with a MUST-level FAIL on that clause (``AREAS``; the sentences are quoted in
spec_notes/oracle.md, "check-agent's own tests", checked against ``quotes.tsv`` below):

* initialization: VersionRefused, INIT-08 ("Otherwise, the Agent MUST respond with the latest
  version it supports.")
* authentication: TerminalAuthUnasked, AUTH-05 ("Agents MUST advertise this method only when
  the client enabled its terminal authentication capability.")
* session setup: SameSessionId, SETUP-02 ("MUST respond with a unique Session ID");
  McpHandshakeUnfinished, SETUP-30 ("All Agents MUST support connecting to MCP servers via stdio");
  ReadsFromSpawnDir, SETUP-27 ("MUST remain the base for relative-path resolution");
  RunsInSpawnDir, SETUP-26 ("MUST be used for the session regardless of where the Agent
  subprocess was spawned"), both started in one scratch directory, the session in another
* load: PartialReplay, ForgetsUsersAfterRestart, ReplaysLastExchange, ForgetsEarlierAnswers,
  SETUP-05 ("MUST replay the entire conversation": every message of a two-turn history);
  resume: ReplayBeforeResumeAnswer, SETUP-12 ("MUST NOT replay the conversation history ...
  before responding"; a replay after the answer, ReplayAfterResume, is spec-gap
  replay-after-resume); close: CloseKeepsTurn, SETUP-16 ("MUST cancel any ongoing work for that session");
  KeepsMcpAfterClose, SETUP-16 (", then free the resources associated with the session": its MCP server);
  list: NoMatchIsAnError, LIST-09 ("the Agent MUST return an empty `sessions` array")
* delete: no MUST sentence for the agent (DELETE-03 has no keyword: DeletedStillListed is a
  ``LESSER_DEFECTS`` spec-gap; DELETE-04 says SHOULD; DELETE-01 is the client's; DELETE-02's "returns an empty result"
  has no keyword either)
* modes and config options: BooleanOptionUnasked, CONFIG-05 ("Agents MUST NOT include
  `type: "boolean"` options ... unless the Client advertised support."); the modes page states
  nothing the agent MUST do (MODES-02, -03, -05 have no keyword; MODES-04 is the client's)
* prompt turn and updates: NullPromptResult, DiesAtPrompt, PROMPT-11 ("the Agent MUST respond
  to the original `session/prompt` request with a `StopReason`"); TwoAnswersPerTurn, RPC-06;
  StopsDone, PROMPT-17 ("it must specify the corresponding `StopReason`": ``"done"`` is none)
* tool calls: RelativeToolLocation, TOOL-15 ("All file paths in the protocol MUST be absolute.");
  ToolStatusExploded, OVERVIEW-01 (a status outside ToolCallStatus is no valid ACP message)
* file system: ReadsWithoutCapability, WritesWithoutCapability, FS-01, FS-02; terminals:
  RunsWithoutTerminal, TERM-01 ("the Agent MUST NOT attempt to call ...")
* elicitation: ElicitsUnasked, ELICIT-06 ("Agents MUST NOT request a mode the Client has not
  advertised.")
* cancellation: IgnoresCancelWhileAsking, CancelEndsEndTurn (answers a request sent after the
  cancel, then ends end_turn), PROMPT-23; ErrorOnCancel (answers the ping, then an error),
  PROMPT-24 (an error that crosses the cancel, ErrorCrossesCancel, is spec-gap cancel-race);
  WrongErrorOnCancelRequest (answers a first `$/cancel_request`'d prompt -32800, a second one,
  after the ping, -32603), CANCEL-05 ("MUST send one of these responses for the original
  request": its MUST binds a receiver that supports `$/cancel_request`, which the first answer
  shows; without that witness an error other than -32800 is spec-gap cancel-request-support,
  NoCancelRequest)
* extensibility: RefusesMeta, EXT-02 ("Implementations MUST NOT make assumptions about values at
  these keys.")
* notices: NoticeUnasked, NOTICE-01; compaction: CompactionUnasked, COMPACT-01; plan
  operations: PlanUpdateUnasked, PLANOP-01; subagents: SubagentUnasked, SUBAGENT-01 (each: only
  when the Client advertised the capability, which check-agent's client does not)
* system prompt: OverrideUnadvertised, SYSPROMPT-04 ("Agents that cannot apply it, for example
  because of an unadvertised mode ..., MUST return an error"); UnknownModeAsAppend, SYSPROMPT-05
  ("Agents MUST return an error for a mode they do not support")
* the process's exit on end of input: GoodbyeOnStdout, TRANSPORT-08 ("The agent MUST NOT write
  anything to its `stdout` that is not a valid ACP message."), written after its input ended
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest

from acpref._core.register import quote_of
from acpref.testing import AgentCheckOptions, CheckReport, Scenario, check_agent
from acpref.testing._agent_scenarios import SCENARIOS
from acpref.testing._check_agent import declared_clauses

PY = sys.executable
BROKEN = Path(__file__).resolve().parent / "broken"
GOOD = [PY, str(BROKEN / "well_behaved_agent.py")]
sys.path.insert(0, str(BROKEN))

import check_agents  # noqa: E402
from shared_runs import shared_check_agent  # noqa: E402
from test_quote_fit import misfits  # noqa: E402

CHECK_AGENTS = [PY, str(BROKEN / "check_agents.py")]
#: Fast options for the small scripted agents: their busy prompt is ``slow``. They answer within
#: milliseconds, so a 2 s timeout only bounds what a one-defect agent never sends.
FAST = dict(cancel_prompt="slow", timeout=2, cancel_after=0.2, cancel_grace=0.5, mcp_wait=0.5)


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
    # It offers no system prompt: that scenario is skipped without a process, with the reason.
    for clause in ("SYSPROMPT-04", "SYSPROMPT-05"):
        row = report.results[clause]
        assert row.status == "SKIPPED" and "sessionCapabilities.systemPrompt" in row.evidence[0]
    # One per agent process: load-restarted runs two, system-prompt none.
    assert len(report.transcripts) == len(SCENARIOS)


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
        [PY, "-m", "acpref", "echo"],
        AgentCheckOptions(cancel_prompt="/wait", timeout=10, auth_method="echo-login"),
    )
    # Without --require-auth the echo agent's sessions need no login, so there is nothing to see
    # after logout (test_AUTH_echo_agent_requiring_auth_passes_the_login_and_logout sees it).
    row = report.results["AUTH-17"]
    assert row.status == "SKIPPED" and "needed no authentication" in row.evidence[0]
    # It applies both system prompt modes: only an unknown one can be refused (SYSPROMPT-05).
    row = report.results["SYSPROMPT-04"]
    assert row.status == "SKIPPED" and "mode.override" in row.evidence[0]
    # Its /read runs no terminal: where its commands run is seen with --cwd-prompt '/run ...'
    # (test_SETUP_26_echo_runs_the_session_s_commands_in_its_cwd_and_passes).
    row = report.results["SETUP-26"]
    assert row.status == "SKIPPED" and "--cwd-prompt" in row.evidence[0]
    skipped = ("AUTH-17", "SYSPROMPT-04", "SETUP-26")
    others = [row for row in report.rows() if row.clause not in skipped]
    assert all(row.status == "PASS" for row in others), report.format_table()
    assert report.results["SYSPROMPT-05"].status == "PASS"


def test_SETUP_05_a_session_is_loaded_by_a_restarted_agent_and_its_replay_judged(
    tmp_path: Path,
) -> None:
    # The echo agent keeps its sessions with --state-dir: a new process loads them, replayed.
    options = AgentCheckOptions(only=("load-restarted",), timeout=10, record_dir=str(tmp_path))
    argv = [PY, "-m", "acpref", "echo", "--state-dir", str(tmp_path / "state")]
    report = check_agent(argv, options)
    assert report.failures == [], report.format_table()
    for clause in ("SETUP-05", "SETUP-06", "SETUP-07", "SETUP-08"):
        assert report.results[clause].status == "PASS", report.format_table()
    assert [Path(p).name for p in report.transcripts] == [
        "load-restarted.jsonl",
        "load-restarted-2.jsonl",
    ]


def test_SETUP_05_an_agent_that_cannot_load_after_a_restart_is_skipped_with_the_reason() -> None:
    report = check_agent([PY, "-m", "acpref", "echo"], AgentCheckOptions(only=("load-restarted",)))
    row = report.results["SETUP-05"]
    assert row.status == "SKIPPED", report.format_table()
    assert "need not outlive the agent process" in row.evidence[0]
    assert report.failures == []


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


def test_cli_ends_with_what_did_not_fail_and_the_option_that_would() -> None:
    # Nothing important hides below the fold: a spec-gap FAIL (no answer to an unparseable line)
    # passes the run, and the last line counts it and names the option that fails on it.
    argv = [PY, "-m", "acpref", "check-agent", "--only", "bad-input", "--timeout", "2"]
    agent = ["--", *CHECK_AGENTS, "ParseErrorIgnored"]
    plain = subprocess.run([*argv, *agent], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stdout
    assert "not failing the run: 1 spec-gap; --strict-gaps would fail on them" in plain.stdout
    for option in (["--strict-gaps"], ["--fail-on", "spec-gap"]):
        strict = subprocess.run([*argv, *option, *agent], capture_output=True, text=True,
                                timeout=120)  # fmt: skip
        assert strict.returncode == 1, (option, strict.stdout)
        assert strict.stdout.startswith("FAILED (1):"), strict.stdout


def test_check_client_report_fails_on_SHOULD_only_when_asked(tmp_path: Path) -> None:
    report = CheckReport(subject="client")
    report._record("EXT-10", "FAIL", "basics", "#12: an unknown notification was answered")
    path = tmp_path / "r.json"
    path.write_text(report.dumps(), encoding="utf-8")
    argv = [PY, "-m", "acpref", "check-client", "--report", str(path)]
    plain = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stdout
    assert "not failing the run: 1 SHOULD; --fail-on SHOULD would fail on them" in plain.stdout
    asked = subprocess.run([*argv, "--fail-on", "SHOULD"], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert asked.returncode == 1, asked.stdout


# -- Every clause gets a status, whatever the agent does --------------------------------------------


def _assert_every_declared_clause(report: CheckReport, scenarios: list) -> None:
    """The declared clauses are all there; any other row is a FAIL the oracle found."""
    declared = declared_clauses(scenarios)
    rows = report.results
    missing = [c for c in declared if c not in rows]
    assert not missing, (missing, report.format_table())
    extra = [r for c, r in rows.items() if c not in declared]
    assert all(r.status == "FAIL" for r in extra), report.format_table()
    assert all(
        r.evidence for r in rows.values() if r.status != "PASS"
    ), report.format_table()


def test_the_clause_list_is_the_same_whatever_the_agent_does() -> None:
    # An agent that passes, one that needs authentication for everything, one that dies at its
    # first prompt, one that exits on bad input: the same declared clauses, each with a status.
    lists = []
    for name in ("RawAgent", "AuthAtNew", "DiesAtPrompt", "ExitsOnBadInput"):
        report = shared_check_agent([*CHECK_AGENTS, name], AgentCheckOptions(**FAST))
        _assert_every_declared_clause(report, SCENARIOS)
        lists.append([c for c in report.results if c in declared_clauses()])
    assert all(sorted(x) == sorted(lists[0]) for x in lists), lists


def test_a_scenario_cannot_decide_a_clause_it_does_not_declare() -> None:
    def run(ctx: object) -> None:
        ctx.passed("INIT-04")  # type: ignore[attr-defined]

    rogue = Scenario("rogue", run, ("INIT-07",))
    with pytest.raises(ValueError, match="does not declare"):
        check_agent([*CHECK_AGENTS, "RawAgent"], AgentCheckOptions(**FAST), scenarios=[rogue])


def _check_defect(name: str, cls: type) -> CheckReport:
    """Run only the scenario that provokes the defect (with the defect's own options)."""
    options = AgentCheckOptions(only=(cls.scenario,), **{**FAST, **getattr(cls, "options", {})})
    report = shared_check_agent([*CHECK_AGENTS, name], options)
    _assert_every_declared_clause(report, [s for s in SCENARIOS if s.name == cls.scenario])
    wrong = misfits(report.findings)  # every oracle finding quotes the sentence it breaks
    assert not wrong, "\n".join(wrong)
    return report


@pytest.mark.parametrize("name", sorted(check_agents.DEFECTS))
def test_check_agent_catches_the_defect_on_its_clause(name: str) -> None:
    # One MUST sentence broken: a FAIL on its clause at MUST, with evidence, and the run fails.
    cls = check_agents.DEFECTS[name]
    report = _check_defect(name, cls)
    row = report.results[cls.clause]
    assert row.status == "FAIL" and row.evidence, report.format_table()
    assert row.level in ("MUST", "MUST NOT"), report.format_table()
    assert row in report.failing() and report.ok is False, report.format_table()


@pytest.mark.parametrize("name", sorted(check_agents.LESSER_DEFECTS))
def test_a_defect_below_MUST_fails_its_clause_at_its_level_not_the_run(name: str) -> None:
    # The level comes from the sentence (SHOULD), or is spec-gap where none states the clause:
    # reported, failing the run only with --fail-on that level or --strict-gaps.
    cls = check_agents.LESSER_DEFECTS[name]
    report = _check_defect(name, cls)
    row = report.results[cls.clause]
    assert row.status == "FAIL" and row.evidence, report.format_table()
    assert row.level == cls.level, report.format_table()
    assert report.ok is True and row not in report.failing(), report.format_table()
    if cls.level == "spec-gap":
        assert row in report.failing(strict_gaps=True)
    else:
        assert row not in report.failing(strict_gaps=True)
        assert row in report.failing(fail_on=(cls.level,))


#: Every area of the spec -> the one-defect agents that break a MUST sentence of it (the table of
#: the module's docstring and of spec_notes/oracle.md). Delete and modes have none: see there.
AREAS = {
    "initialization": ("VersionRefused",),
    "authentication": ("TerminalAuthUnasked",),
    "session setup": (
        "SameSessionId",
        "McpHandshakeUnfinished",
        "ReadsFromSpawnDir",
        "RunsInSpawnDir",
    ),
    "session load": (
        "PartialReplay",
        "ForgetsUsersAfterRestart",
        "ReplaysLastExchange",
        "ForgetsEarlierAnswers",
    ),
    "session resume": ("ReplayBeforeResumeAnswer",),
    "session close": ("CloseKeepsTurn", "KeepsMcpAfterClose"),
    "session list": ("NoMatchIsAnError",),
    "session delete": (),
    "modes and config options": ("BooleanOptionUnasked",),
    "prompt turn and updates": (
        "NullPromptResult",
        "DiesAtPrompt",
        "TwoAnswersPerTurn",
        "StopsDone",
    ),
    "tool calls": ("RelativeToolLocation", "ToolStatusExploded"),
    "file system": ("ReadsWithoutCapability", "WritesWithoutCapability"),
    "terminals": ("RunsWithoutTerminal",),
    "elicitation": ("ElicitsUnasked",),
    "cancellation": (
        "IgnoresCancelWhileAsking",
        "CancelEndsEndTurn",
        "ErrorOnCancel",
        "WrongErrorOnCancelRequest",
    ),
    "extensibility": ("RefusesMeta",),
    "notices": ("NoticeUnasked",),
    "compaction": ("CompactionUnasked",),
    "system prompt": ("OverrideUnadvertised", "UnknownModeAsAppend"),
    "plan operations": ("PlanUpdateUnasked",),
    "subagents": ("SubagentUnasked",),
    "exit on end of input": ("GoodbyeOnStdout",),
}


def test_every_area_has_a_one_defect_agent_and_oracle_md_quotes_its_sentence() -> None:
    # The table of spec_notes/oracle.md: | area | agent (scenario) | clause | level | sentence |.
    text = (Path(__file__).resolve().parents[1] / "spec_notes" / "oracle.md").read_text("utf-8")
    section = text.split("### check-agent's own tests", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].startswith("`"):
            rows[cells[1].split("`")[1]] = cells
    for area, names in AREAS.items():
        assert all(name in check_agents.DEFECTS for name in names), area
        for name in names:
            cls = check_agents.DEFECTS[name]
            row = rows.get(name)
            assert row is not None, f"oracle.md has no row for {name}"
            quote = quote_of(cls.clause)
            assert quote is not None and quote.level in ("MUST", "MUST NOT"), name
            assert row[0] == area and row[2] == cls.clause and row[3] == quote.level, row
            assert row[4] == f'{quote.source}: "{quote.text}"', row
        if not names:  # an area without a breakable MUST sentence says why
            assert any(line.startswith(f"| {area} | none ") for line in section.splitlines())


def test_SYSPROMPT_04_05_an_agent_that_applies_what_it_advertises_passes() -> None:
    options = AgentCheckOptions(only=("system-prompt",), **FAST)
    report = check_agent([*CHECK_AGENTS, "SystemPromptAgent"], options)
    for clause in ("SYSPROMPT-04", "SYSPROMPT-05"):
        assert report.results[clause].status == "PASS", report.format_table()
    assert report.failures == [], report.format_table()
    # The override request broke the client's SYSPROMPT-03 on purpose: the driver's finding.
    blamed = [f for f in report.findings if f["clause"] == "SYSPROMPT-03"]
    assert blamed and all(f["blame"] == "client" for f in blamed)
    plain = check_agent([*CHECK_AGENTS, "RawAgent"], options)
    row = plain.results["SYSPROMPT-05"]
    assert row.status == "SKIPPED" and "sessionCapabilities.systemPrompt" in row.evidence[0]


def test_RPC_10_a_parse_error_answered_without_an_id_is_no_timeout() -> None:
    options = AgentCheckOptions(only=("bad-input",), **FAST)
    report = check_agent([*CHECK_AGENTS, "ParseErrorNoId"], options)
    evidence = " ".join(report.results["RPC-10"].evidence)
    assert "without an id" in evidence and "no answer" not in evidence


def test_RPC_04_EXT_07_an_id_the_agent_cannot_read_fails_every_clause_it_breaks() -> None:
    # spec RPC-04, EXT-07, RPC-06: the custom request with id -7 is answered by an error without
    # an id (codex-acp 0.16): no response under its id (a response without an id is RPC-04's,
    # decisions.md response-without-id).
    options = AgentCheckOptions(only=("bad-input",), **FAST)
    report = check_agent([*CHECK_AGENTS, "NegativeIdUnread"], options)
    for clause in ("RPC-04", "EXT-07", "RPC-06"):
        assert report.results[clause].status == "FAIL", (clause, report.format_table())
    assert "id -7 answered as" in report.results["EXT-07"].evidence[0]


def test_spec_gap_cancel_ignored_is_no_MUST_and_PROMPT_23_is_skipped() -> None:
    # The turn ends end_turn a second after the cancel, and the ping sent after the cancel is
    # answered only after that: the wire does not show the agent had read the cancel.
    options = AgentCheckOptions(only=("cancel",), **FAST)
    report = check_agent([*CHECK_AGENTS, "IgnoresCancelLate"], options)
    assert report.results["spec-gap:cancel-ignored"].level not in ("MUST", "MUST NOT")
    row = report.results["PROMPT-23"]
    assert row.status == "SKIPPED" and "spec-gap:cancel-ignored" in row.evidence[0]
    assert report.ok, report.format_table()


def test_PROMPT_24_an_error_after_answering_the_ping_fails_at_MUST() -> None:
    # spec PROMPT-24: the ping's answer shows the agent had read the cancel before it answered
    # the prompt with an error: the aborted operation's error, owed as stopReason "cancelled".
    options = AgentCheckOptions(only=("cancel",), **FAST)
    report = shared_check_agent([*CHECK_AGENTS, "ErrorOnCancel"], options)
    row = report.results["PROMPT-24"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert any("answered a request sent after the cancel, so" in e for e in row.evidence), row
    assert any("it answered a request sent after it (#" in e for e in row.evidence), row
    assert not report.ok


def test_PROMPT_24_an_error_that_crosses_the_cancel_is_a_race_not_a_MUST() -> None:
    # The turn fails on its own as the cancel arrives, before the agent reads it: the wire does
    # not show the error is one of an aborted operation (spec-gap cancel-race).
    options = AgentCheckOptions(only=("cancel", "close"), **FAST)
    report = check_agent([*CHECK_AGENTS, "ErrorCrossesCancel"], options)
    for clause in ("PROMPT-24", "PROMPT-23", "SETUP-16"):
        row = report.results[clause]
        assert row.status == "SKIPPED" and "a race" in row.evidence[0], report.format_table()
    assert "spec-gap:cancel-race" in {f["clause"] for f in report.findings}
    assert report.ok, report.format_table()


def test_SETUP_12_a_late_chunk_that_crosses_the_resume_is_no_MUST() -> None:
    # The ended turn writes one last agent chunk as the resume reaches the agent's stdin, unread:
    # recorded after the resume, it shows no replay (spec-gap resume-crossing).
    options = AgentCheckOptions(only=("resume",), **FAST)
    report = check_agent([*CHECK_AGENTS, "ChunkCrossesResume"], options)
    row = report.results["SETUP-12"]
    assert row.status == "SKIPPED" and "resume-crossing" in row.evidence[0], report.format_table()
    assert "spec-gap:resume-crossing" in {f["clause"] for f in report.findings}
    assert "SETUP-12" not in {f["clause"] for f in report.findings}
    assert report.ok, report.format_table()


def test_SETUP_12_a_replay_before_the_answer_fails_at_MUST_on_its_user_messages() -> None:
    options = AgentCheckOptions(only=("resume",), **FAST)
    report = check_agent([*CHECK_AGENTS, "ReplayBeforeResumeAnswer"], options)
    assert report.results["SETUP-12"].status == "FAIL", report.format_table()
    assert report.results["SETUP-12"].level == "MUST NOT"
    found = [f for f in report.findings if f["clause"] == "SETUP-12"]
    # The user's message is the witness; the agent's after it come after the read it shows.
    assert found and "user_message_chunk" in found[0]["message"], report.format_table()
    assert "spec-gap:resume-crossing" not in {f["clause"] for f in report.findings}
    assert not report.ok


@pytest.mark.parametrize("name", ["CancelEndsEndTurn", "IgnoresCancelStreaming"])
def test_PROMPT_23_a_turn_that_ends_end_turn_after_answering_the_ping_fails_at_MUST(
    name: str,
) -> None:
    # spec PROMPT-23: stdio is ordered, so the ping's answer (the ping was sent after the
    # cancel) shows the agent had read the cancel before it answered the prompt end_turn.
    options = AgentCheckOptions(only=("cancel",), **FAST)
    report = shared_check_agent([*CHECK_AGENTS, name], options)
    row = report.results["PROMPT-23"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    # Both the scenario (what it saw) and the oracle (on the transcript) say so.
    assert any("answered a request sent after the cancel, so" in e for e in row.evidence), row
    assert any("it answered a request sent after it (#" in e for e in row.evidence), row
    assert report.results["spec-gap:cancel-ignored"].status == "SKIPPED"
    assert not report.ok


def test_SETUP_16_a_closed_turn_that_ends_end_turn_after_answering_the_ping_fails_at_MUST() -> None:
    report = check_agent(
        [*CHECK_AGENTS, "CancelEndsEndTurn"], AgentCheckOptions(only=("close",), **FAST)
    )
    row = report.results["SETUP-16"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert any("answered a request sent after the cancel, so" in e for e in row.evidence), row
    assert any("it answered a request sent after it (#" in e for e in row.evidence), row


# -- SETUP-16's second half: the closed session's stdio MCP server is stopped --------------------


def test_SETUP_16_a_closed_sessions_mcp_server_left_running_fails_at_MUST_and_only_it() -> None:
    # spec SETUP-16: "... then free the resources associated with the session": the session's
    # own MCP server (a name and a socket of its own) still runs --timeout seconds after the
    # close was answered, while the agent answers a request: the one failure of the run.
    report = _check_defect("KeepsMcpAfterClose", check_agents.DEFECTS["KeepsMcpAfterClose"])
    row = report.results["SETUP-16"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert len(row.evidence) == 1, row.evidence
    assert "'acpref-probe-closed-session'" in row.evidence[0], row.evidence
    assert "was still running 2.0s after session/close was answered" in row.evidence[0]
    assert {r.clause for r in report.failing()} == {"SETUP-16"}, report.format_table()
    assert [f for f in report.findings if f["blame"] == "agent"] == [], report.findings


@pytest.mark.parametrize(
    "argv",
    [[*CHECK_AGENTS, "RawAgent"], GOOD, [PY, "-m", "acpref", "echo"]],
    ids=["raw", "well-behaved", "echo"],
)
def test_SETUP_16_agents_that_stop_a_closed_sessions_mcp_server_pass(argv: list) -> None:
    options = AgentCheckOptions(only=("close",), **{**FAST, "timeout": 10})
    if argv[-1] == "echo":
        options = attrs.evolve(options, cancel_prompt="/wait")
    report = check_agent(argv, options)
    assert report.results["SETUP-16"].status == "PASS", report.format_table()
    assert report.ok and report.failures == [], report.format_table()
    # the freeing was judged: the agent started the server, and stopped it after the close
    assert not any("not judged" in n for n in report.notes), report.notes


def test_SETUP_16_an_agent_that_never_starts_the_mcp_server_is_not_judged_with_the_reason() -> (
    None
):
    report = check_agent(
        [*CHECK_AGENTS, "IgnoresMcpServers"], AgentCheckOptions(only=("close",), **FAST)
    )
    assert report.ok and report.failures == [], report.format_table()
    assert report.results["SETUP-16"].status == "PASS"  # the cancellation's verdict
    (note,) = [n for n in report.notes if "SETUP-16" in n]
    assert "never started the stdio MCP server 'acpref-probe-closed-session'" in note, note


def test_SETUP_16_an_agent_without_session_close_is_skipped_with_the_reason() -> None:
    # The handshake first: a scenario's capability is known from an earlier scenario's agent.
    options = AgentCheckOptions(only=("handshake", "close"), **FAST)
    report = check_agent([*CHECK_AGENTS, "NoClose"], options)
    row = report.results["SETUP-16"]
    assert row.status == "SKIPPED" and "sessionCapabilities.close" in row.evidence[0], row
    assert report.ok, report.format_table()


@pytest.mark.parametrize("how", ["end of input", "SIGKILL"])
def test_SETUP_16_the_mcp_probe_is_seen_stopped_however_it_ends(how: str) -> None:
    # The probe's socket closes when its process ends: at the end of its input (it says so
    # first) or killed (the kernel closes it).
    from acpref.testing._mcp_check import McpProbe

    with McpProbe(name="acpref-probe-test") as probe:
        (server,) = probe.servers()
        assert server["name"] == "acpref-probe-test"
        proc = subprocess.Popen(
            [server["command"], *server["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        try:
            assert probe.stdio.wait_started(10.0)
            assert not probe.stdio.wait_stopped(0.1)
            if how == "SIGKILL":
                proc.kill()
            else:
                assert proc.stdin is not None
                proc.stdin.close()
            assert probe.stdio.wait_stopped(10.0)
            assert probe.stdio.pids() == [proc.pid]
            ended = [m for m in probe.stdio.items if isinstance(m, dict) and "ended" in m]
            assert len(ended) == (1 if how == "end of input" else 0), probe.stdio.items
        finally:
            proc.kill()
            proc.wait(10)


# -- False alarms: what real agents do and the spec allows fails nothing ------------------------------


@pytest.mark.parametrize("name", sorted(check_agents.HARMLESS))
def test_harmless_agent_has_no_failure(name: str) -> None:
    report = shared_check_agent([*CHECK_AGENTS, name], AgentCheckOptions(**FAST))
    assert report.failures == [], report.format_table()
    _assert_every_declared_clause(report, SCENARIOS)


def test_RPC_16_auth_required_at_the_prompt_is_skipped_with_the_auth_hint() -> None:
    report = shared_check_agent([*CHECK_AGENTS, "AuthAtPrompt"], AgentCheckOptions(**FAST))
    row = report.results["PROMPT-17"]
    assert row.status == "SKIPPED", report.format_table()
    assert "session/prompt answered -32000" in row.evidence[0] and "--auth" in row.evidence[0]
    assert "(the agent offers: login)" in row.evidence[0]
    assert any("--auth" in note for note in report.notes), report.notes
    authed = check_agent(
        [*CHECK_AGENTS, "AuthAtPrompt"], AgentCheckOptions(auth_method="login", **FAST)
    )
    assert authed.failures == [] and authed.results["PROMPT-17"].status == "PASS"
    assert authed.results["PROMPT-23"].status == "PASS", authed.format_table()


def test_an_agent_that_only_offers_authentication_gets_no_note_asking_for_auth() -> None:
    # The echo agent offers a login and serves sessions without it: nothing was unreached, so
    # the run ends with no note; the auth clauses are SKIPPED, saying it is offered. With
    # --require-auth it requires the login, and the note says so and asks for --auth.
    echo = [PY, "-m", "acpref", "echo"]
    offered = check_agent(echo, AgentCheckOptions(only=("auth",), **FAST))
    assert offered.notes == [], offered.notes
    assert "offers authentication (" in offered.results["AUTH-09"].evidence[0]
    required = check_agent([*echo, "--require-auth"], AgentCheckOptions(only=("auth",), **FAST))
    assert any("requires authentication" in n and "--auth" in n for n in required.notes)


def test_the_busy_prompt_option_is_named_when_the_turn_ends_too_soon() -> None:
    options = AgentCheckOptions(only=("cancel",), timeout=5)  # the default busy prompt
    report = check_agent([*CHECK_AGENTS, "RawAgent"], options)  # answers it at once
    assert report.results["PROMPT-23"].status == "SKIPPED"
    assert any("--cancel-prompt" in note for note in report.notes), report.notes


def test_spec_gap_stopped_agent_a_turn_cut_off_by_the_check_is_no_RPC_06() -> None:
    # spec-gap stopped-agent: the prompt outlives the check's timeout and the agent is still at
    # it when the check closes its input and stops it: nothing it owed then is judged.
    options = AgentCheckOptions(only=("prompt",), **{**FAST, "timeout": 1})
    report = check_agent([*CHECK_AGENTS, "ModelRetries"], options)
    assert [r.clause for r in report.failures] == ["spec-gap:exit-on-eof"], report.format_table()
    assert "RPC-06" not in report.results, report.format_table()
    assert "got no answer within 1s" in report.results["PROMPT-11"].evidence[0]


def test_spec_gap_cancel_request_support_an_agent_without_it_breaks_no_CANCEL_05() -> None:
    # spec-gap cancel-request-support: $/cancel_request is optional (CANCEL-02); a turn that goes
    # on and fails on its own afterwards decides nothing about CANCEL-05.
    options = AgentCheckOptions(only=("cancel",), **FAST)
    report = check_agent([*CHECK_AGENTS, "NoCancelRequest"], options)
    assert report.ok, report.format_table()
    assert report.results["PROMPT-23"].status == "PASS", report.format_table()
    row = report.results["CANCEL-05"]
    assert row.status == "SKIPPED" and "-32603" in row.evidence[0], report.format_table()
    gap = report.results["spec-gap:cancel-request-support"]
    assert gap.status == "FAIL" and gap.level == "spec-gap", report.format_table()


def test_CANCEL_05_an_agent_that_showed_support_then_answers_another_error_fails_at_MUST() -> None:
    # spec CANCEL-05: the first prompt it was asked to cancel was answered -32800, so it
    # supports $/cancel_request; the second, answered -32603 after it answered the ping sent
    # after that cancel, breaks "MUST send one of these responses for the original request".
    options = AgentCheckOptions(only=("cancel",), **FAST)
    report = check_agent([*CHECK_AGENTS, "WrongErrorOnCancelRequest"], options)
    row = report.results["CANCEL-05"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert any("supports $/cancel_request" in e and "-32603" in e for e in row.evidence), row
    assert {r.clause for r in report.failing()} == {"CANCEL-05"} and not report.ok
    assert "spec-gap:cancel-request-support" not in report.results, report.format_table()


@pytest.mark.parametrize(
    "agent, cancels", [("RawAgent", 2), ("echo", 2), ("NoCancelRequest", 1)]
)
def test_CANCEL_05_a_second_cancelled_turn_only_after_support_shown_and_no_failure(
    agent: str, cancels: int, tmp_path: Path
) -> None:
    # RawAgent and acpref's echo agent answer stopReason "cancelled" (support shown): a second
    # busy turn is cancelled the same way, and answered "cancelled" again. NoCancelRequest
    # never shows support: one $/cancel_request only, and spec-gap cancel-request-support.
    echo = agent == "echo"
    argv = [PY, "-m", "acpref", "echo"] if echo else [*CHECK_AGENTS, agent]
    busy = {"cancel_prompt": "/wait"} if echo else {}
    options = AgentCheckOptions(only=("cancel",), record_dir=str(tmp_path), **{**FAST, **busy})
    report = check_agent(argv, options)
    assert report.ok, report.format_table()
    assert all(r.clause.startswith("spec-gap:") for r in report.failures), report.format_table()
    lines = [json.loads(r).get("line", "") for p in report.transcripts for r in open(p)]
    sent = sum('"$/cancel_request"' in line for line in lines)
    assert sent == cancels, report.format_table()


# -- Authentication: log in, open a session, log out -------------------------------------------------


def test_AUTH_09_10_16_17_a_correct_login_and_logout_pass() -> None:
    options = AgentCheckOptions(only=("auth",), auth_method="login", **FAST)
    report = check_agent([*CHECK_AGENTS, "LoginLogout"], options)
    for clause in ("AUTH-09", "AUTH-10", "AUTH-16", "AUTH-17"):
        assert report.results[clause].status == "PASS", (clause, report.format_table())
    assert report.failures == [], report.format_table()


def test_AUTH_echo_agent_requiring_auth_passes_the_login_and_logout() -> None:
    options = AgentCheckOptions(only=("auth", "prompt"), auth_method="echo-login", timeout=10)
    report = check_agent([PY, "-m", "acpref", "echo", "--require-auth"], options)
    assert all(row.status == "PASS" for row in report.rows()), report.format_table()


def test_AUTH_without_auth_option_or_methods_is_skipped_with_the_reason() -> None:
    hinted = check_agent([*CHECK_AGENTS, "LoginLogout"], AgentCheckOptions(only=("auth",), **FAST))
    row = hinted.results["AUTH-09"]
    assert row.status == "SKIPPED" and "--auth" in row.evidence[0] and "login" in row.evidence[0]
    wrong = check_agent(
        [*CHECK_AGENTS, "LoginLogout"], AgentCheckOptions(only=("auth",), auth_method="x", **FAST)
    )
    assert "is not one of the agent's authMethods" in wrong.results["AUTH-10"].evidence[0]
    none = check_agent([*CHECK_AGENTS, "RawAgent"], AgentCheckOptions(only=("auth",), **FAST))
    assert "offers no authentication method" in none.results["AUTH-16"].evidence[0]
    for report in (hinted, wrong, none):
        assert report.failures == [], report.format_table()


def test_AUTH_17_no_sentence_makes_it_a_MUST_so_it_fails_as_a_spec_gap() -> None:
    options = AgentCheckOptions(only=("auth",), auth_method="login", **FAST)
    report = check_agent([*CHECK_AGENTS, "LogoutKeepsLogin"], options)
    row = report.results["AUTH-17"]
    assert row.status == "FAIL" and row.level == "spec-gap", report.format_table()
    assert report.ok  # reported, failing nothing without --strict-gaps
    assert report.results["AUTH-16"].status == "PASS"


def test_AUTH_10_gated_only_at_the_prompt_skips_what_logout_would_show() -> None:
    options = AgentCheckOptions(only=("auth",), auth_method="login", **FAST)
    report = check_agent([*CHECK_AGENTS, "AuthAtPrompt"], options)
    assert report.results["AUTH-09"].status == "PASS" and report.results["AUTH-10"].status == "PASS"
    assert "auth.logout" in report.results["AUTH-17"].evidence[0]


# -- A client that advertises nothing ------------------------------------------------------------


@pytest.mark.parametrize("prompt", ["/read {path}", "/write {path} acpref", "/run echo acpref"])
def test_FS_01_FS_02_TERM_01_echo_agent_asked_for_tools_uses_none_unadvertised(prompt: str) -> None:
    options = AgentCheckOptions(only=("no-capabilities",), tools_prompt=prompt, timeout=10)
    report = check_agent([PY, "-m", "acpref", "echo"], options)
    for clause in ("FS-01", "FS-02", "TERM-01"):
        assert report.results[clause].status == "PASS", (clause, report.format_table())
    assert report.failures == [], report.format_table()


def test_EXT_07_a_custom_request_answered_under_another_id_fails_at_MUST() -> None:
    options = AgentCheckOptions(only=("bad-input",), **FAST)
    ids = check_agent([*CHECK_AGENTS, "StringIdToInt"], options)
    row = ids.results["EXT-07"]
    assert row.status == "FAIL" and "42" in row.evidence[0], ids.format_table()
    assert row.level == "MUST" and not ids.ok, ids.format_table()


def test_SCHEMA_18_no_sentence_states_it_so_it_fails_as_a_spec_gap() -> None:
    options = AgentCheckOptions(only=("bad-input",), **FAST)
    nulls = check_agent([*CHECK_AGENTS, "NullServersRefused"], options)
    row = nulls.results["SCHEMA-18"]
    assert row.status == "FAIL" and row.level == "spec-gap" and nulls.ok, nulls.format_table()


BAD_INPUT = AgentCheckOptions(only=("bad-input",), **FAST)


@pytest.mark.parametrize(
    "name,method", [("RefusesOmittedParams", "session/list"), ("RefusesOmittedLogoutParams", "logout")]
)
def test_RPC_19_omitted_or_null_params_refused_fails_as_a_spec_gap_only(name: str, method: str) -> None:
    # RPC-19 is implied (no keyworded sentence): a spec-gap FAIL, failing only --strict-gaps.
    options = attrs.evolve(BAD_INPUT, **getattr(check_agents.LESSER_DEFECTS[name], "options", {}))
    report = check_agent([*CHECK_AGENTS, name], options)
    row = report.results["RPC-19"]
    assert row.status == "FAIL" and row.level == "spec-gap", report.format_table()
    evidence = " ".join(row.evidence)
    assert f"{method} without params" in evidence and f"{method} with params null" in evidence
    assert report.ok and report.failing() == [] and report.failing(strict_gaps=True) == [row]
    assert report.failing(fail_on=("SHOULD",)) == []


def test_RPC_19_an_agent_offering_logout_only_is_judged_on_logout_and_passes() -> None:
    options = attrs.evolve(BAD_INPUT, auth_method="login")
    report = check_agent([*CHECK_AGENTS, "LogoutOnly"], options)
    assert report.results["RPC-19"].status == "PASS", report.format_table()
    assert report.failures == [], report.format_table()


def test_RPC_19_an_agent_without_a_method_free_of_required_params_is_skipped() -> None:
    report = check_agent([*CHECK_AGENTS, "NoMethodWithoutParams"], BAD_INPUT)
    row = report.results["RPC-19"]
    assert row.status == "SKIPPED", report.format_table()
    assert "sessionCapabilities.list" in row.evidence[0] and "auth.logout" in row.evidence[0]


def test_SCHEMA_11_a_malformed_default_on_error_field_refused_fails_as_a_spec_gap_only() -> None:
    report = check_agent([*CHECK_AGENTS, "RefusesMalformedAnnotations"], BAD_INPUT)
    row = report.results["SCHEMA-11"]
    assert row.status == "FAIL" and row.level == "spec-gap", report.format_table()
    assert "annotations 5" in row.evidence[0] and "-32602" in row.evidence[0]
    assert report.ok and report.failing(strict_gaps=True) == [row], report.format_table()
    # Its plain prompt was served: the survival turn and every other clause pass.
    assert [r.clause for r in report.rows() if r.status == "FAIL"] == ["SCHEMA-11"]


# -- Deadlines: one per kind of request that goes unanswered (spec-gap gave-up) ----------------


def test_spec_gap_gave_up_an_agent_silent_after_initialize_ends_within_the_documented_bound() -> None:
    # The bound of spec_notes/oracle.md: each scenario stops at its first unanswered request
    # (bad-input sends two bad lines first), plus each process's start and exit (0.5 s allowed
    # for this small agent, which exits at the end of its input).
    timeout = 1.0
    argv = [PY, "-m", "acpref", "check-agent", "--timeout", str(timeout), "--cancel-prompt", "slow",
            "--", *CHECK_AGENTS, "SilentAfterInitialize"]  # fmt: skip
    began = time.monotonic()
    run = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - began
    scenarios = len(SCENARIOS)
    assert elapsed <= (scenarios + 2) * timeout + scenarios * 0.5, (elapsed, run.stderr)
    assert run.returncode == 0, run.stdout  # no answer within our deadline is no FAIL
    assert "RPC-06" not in run.stdout
    # Progress on stderr, each scenario as it starts and ends; stdout is the report only.
    assert "acpref check-agent: [1/" in run.stderr and " in " in run.stderr, run.stderr
    assert "acpref check-agent:" not in run.stdout
    # --quiet on one scenario: a progress line would show there as well, at one timeout's cost.
    quiet = subprocess.run([*argv[:4], "--quiet", "--only", "handshake", *argv[4:]],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "acpref check-agent: [" not in quiet.stderr, quiet.stderr


def test_spec_gap_gave_up_a_prompt_never_answered_costs_one_timeout_not_one_per_scenario() -> None:
    options = AgentCheckOptions(**{**FAST, "timeout": 1})
    began = time.monotonic()
    report = check_agent([*CHECK_AGENTS, "PromptSilent"], options)
    elapsed = time.monotonic() - began
    assert "RPC-06" not in report.results or report.results["RPC-06"].status != "FAIL"
    assert not [r for r in report.failures if r.clause != "spec-gap:exit-on-eof"], report.format_table()
    first = report.results["PROMPT-11"].evidence[0]
    assert "session/prompt got no answer within 1s" in first, first
    later = [e for r in report.rows() for e in r.evidence if "session/prompt not sent" in e]
    assert later and "in scenario 'prompt'" in later[0], report.format_table()
    # Several scenarios prompt; only the first waits (plus each process's start and exit).
    assert elapsed <= 2 * 1 + len(SCENARIOS) * 1.0, elapsed


def test_SETUP_05_a_replay_of_only_the_last_exchange_fails_and_names_what_it_lacks() -> None:
    # "replay the *entire* conversation": the last prompt and its answer are there, the first
    # exchange is not; the evidence names the missing messages, the present ones pass.
    report = _check_defect("ReplaysLastExchange", check_agents.DEFECTS["ReplaysLastExchange"])
    row = report.results["SETUP-05"]
    assert row.status == "FAIL" and row.level == "MUST" and report.ok is False
    evidence = " ".join(row.evidence)
    assert "user's message of prompt 1" in evidence and "agent's message of turn 1" in evidence
    assert "prompt 2" not in evidence and "turn 2" not in evidence, evidence


def test_SETUP_05_a_replay_chunked_merged_and_wrapped_otherwise_passes() -> None:
    # spec-gap replay-content: other chunks, message ids, a thought and wrapped user text are
    # the same conversation.
    options = AgentCheckOptions(only=("load",), **FAST)
    report = check_agent([*CHECK_AGENTS, "ReplaysInOtherChunks"], options)
    assert report.results["SETUP-05"].status == "PASS", report.format_table()


#: The proof-table peers whose one defect once failed a second clause too (RPC-06 for an
#: unanswered cancelled prompt, PROMPT-11 for a refused text prompt): nothing else may fail.
ONLY_THEIR_CLAUSE = ("ExitsOnCancelRequest", "RefusesTextPrompts", "ConfigResultWithoutTheOption")


@pytest.mark.parametrize("name", ONLY_THEIR_CLAUSE)
def test_a_proof_peer_fails_its_clause_and_no_other(name: str) -> None:
    # spec CANCEL-05, CONTENT-02, CONFIG-19: one defect, one failing row, one oracle finding.
    cls = check_agents.DEFECTS[name]
    report = _check_defect(name, cls)
    assert {r.clause for r in report.failing()} == {cls.clause}, report.format_table()
    assert {f["clause"] for f in report.findings if f["level"] in ("MUST", "MUST NOT")} <= {
        cls.clause
    }, report.findings


# -- RPC-07: two requests in flight at once, answered each under its own id ----------------------


def test_RPC_07_answers_swapped_between_two_requests_fail_RPC_07_once_not_their_shapes() -> None:
    # spec RPC-07: session/new and session/list sent together, answered each with the other's
    # result. The oracle recognises the swap: one finding on RPC-07, and none on the shape each
    # result breaks as the answer to the request whose id it carries (SETUP-02, LIST-02).
    report = _check_defect("SwapsCrossedAnswers", check_agents.DEFECTS["SwapsCrossedAnswers"])
    row = report.results["RPC-07"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert any("is the result of session/list request" in e for e in row.evidence), row
    assert report.ok is False and {r.clause for r in report.failing()} == {"RPC-07"}
    theirs = [f for f in report.findings if f["blame"] == "agent"]
    assert [f["clause"] for f in theirs] == ["RPC-07"], theirs
    assert "SETUP-02" not in report.results and report.results["LIST-02"].status == "PASS"


@pytest.mark.parametrize(
    "argv", [[*CHECK_AGENTS, "RawAgent"], [PY, "-m", "acpref", "echo"]], ids=["raw", "echo"]
)
def test_RPC_07_agents_that_answer_by_id_pass_with_no_finding(argv: list) -> None:
    report = check_agent(argv, AgentCheckOptions(only=("list",), **FAST))
    assert report.results["RPC-07"].status == "PASS", report.format_table()
    assert [f for f in report.findings if f["blame"] == "agent"] == [], report.findings
    assert report.ok, report.format_table()


# -- SETUP-26, SETUP-27: the session's cwd, not the directory the agent was started in ----------

CWD = dict(only=("cwd",), **FAST)
ECHO = [PY, "-m", "acpref", "echo"]


def test_SETUP_27_echo_reads_a_relative_name_from_the_session_cwd_and_passes() -> None:
    # The default prompt is the echo agent's /read: it reads the session cwd's copy.
    report = check_agent(ECHO, AgentCheckOptions(**CWD))
    assert report.results["SETUP-27"].status == "PASS", report.format_table()
    assert report.failures == [] and report.findings == [], report.format_table()
    row = report.results["SETUP-26"]
    assert row.status == "SKIPPED" and "no terminal/create" in row.evidence[0], row


def test_SETUP_26_echo_runs_the_session_s_commands_in_its_cwd_and_passes() -> None:
    report = check_agent(ECHO, AgentCheckOptions(cwd_prompt="/run cat {file}", **CWD))
    assert report.results["SETUP-26"].status == "PASS", report.format_table()
    assert report.failures == [], report.format_table()
    # The name stays relative on the command line: it names no base, so SETUP-27 is skipped.
    assert report.results["SETUP-27"].status == "SKIPPED", report.format_table()


def test_SETUP_27_a_relative_name_resolved_against_the_spawn_directory_fails_at_MUST() -> None:
    # spec SETUP-27: "MUST remain the base for relative-path resolution".
    report = _check_defect("ReadsFromSpawnDir", check_agents.DEFECTS["ReadsFromSpawnDir"])
    row = report.results["SETUP-27"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert "spawned-here-" in row.evidence[0] and "fs/read_text_file path" in row.evidence[0]
    assert {r.clause for r in report.failing()} == {"SETUP-27"}, report.format_table()
    assert "MUST remain the base for relative-path resolution" in report.format_text()
    assert report.results["SETUP-26"].status == "SKIPPED"


def test_SETUP_26_a_command_run_in_the_spawn_directory_fails_at_MUST() -> None:
    # spec SETUP-26: "MUST be used for the session regardless of where the Agent subprocess was
    # spawned".
    report = _check_defect("RunsInSpawnDir", check_agents.DEFECTS["RunsInSpawnDir"])
    row = report.results["SETUP-26"]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert "terminal/create cwd" in row.evidence[0] and "spawned-here-" in row.evidence[0]
    assert {r.clause for r in report.failing()} == {"SETUP-26"}, report.format_table()


def test_SETUP_26_27_a_correct_raw_agent_passes_both() -> None:
    argv = [*CHECK_AGENTS, "ReadsRelative"]
    read = check_agent(argv, AgentCheckOptions(**CWD))
    run = check_agent(argv, AgentCheckOptions(cwd_prompt="/run cat {file}", **CWD))
    assert read.results["SETUP-27"].status == "PASS", read.format_table()
    assert run.results["SETUP-26"].status == "PASS", run.format_table()
    assert read.failures == [] and run.failures == []


def test_SETUP_27_a_path_of_neither_directory_is_no_verdict() -> None:
    # An agent's own file (its configuration) shows no base: SKIPPED, naming the path. That it
    # lies outside the session's roots is SETUP-28's, a SHOULD, filed by the oracle.
    report = check_agent([*CHECK_AGENTS, "ReadsElsewhere"], AgentCheckOptions(**CWD))
    row = report.results["SETUP-27"]
    assert row.status == "SKIPPED" and ".config/raw-agent" in row.evidence[0], row
    assert report.ok and report.failing() == [], report.format_table()


def test_SETUP_26_27_an_agent_without_such_a_command_is_skipped_with_the_option() -> None:
    report = check_agent([*CHECK_AGENTS, "RawAgent"], AgentCheckOptions(**CWD))
    for clause in ("SETUP-26", "SETUP-27"):
        row = report.results[clause]
        assert row.status == "SKIPPED" and "--cwd-prompt" in row.evidence[0], row
    assert report.failures == []
    assert any("SETUP-26, SETUP-27" in n and "--cwd-prompt" in n for n in report.notes)


def test_SETUP_26_27_an_agent_that_cannot_start_elsewhere_is_skipped_not_failed() -> None:
    # A command naming its script by a relative path cannot start in the scratch directory:
    # nothing of that process is judged, and the reason says to give absolute paths.
    script = os.path.relpath(BROKEN / "check_agents.py")
    report = check_agent([PY, script, "RawAgent"], AgentCheckOptions(**CWD))
    row = report.results["SETUP-27"]
    assert row.status == "SKIPPED" and "absolute paths" in row.evidence[0], row
    assert report.failures == [] and report.findings == [], report.format_table()
