"""``--junit FILE``: check-agent, check-client and validate write JUnit XML that CI systems read.

Each command runs for real (a subprocess) on a conforming peer and on a one-defect peer
(``tests/broken/``); the file is validated against the Jenkins JUnit schema
(``tests/data/jenkins-junit-10.xsd``, the schema of the xUnit plugin; GitLab and the GitHub
test-report actions read the same shape), parsed back, and compared with what the same run
printed as ``--json``: one test case per clause, the failures those the exit status counts (so
``--strict-gaps`` and ``--fail-on`` move them), the failing clause's test case quoting the spec's
sentence and the evidence, skips with their reason. Peer text that XML cannot carry is escaped.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest
import xmlschema

from acpref._core.register import quote_of
from acpref.oracle import validate
from acpref.testing import CheckReport, read_client_report

HERE = Path(__file__).resolve().parent
BROKEN = HERE / "broken"
sys.path.insert(0, str(BROKEN))

import check_clients  # noqa: E402

PY = sys.executable
GOOD = [PY, str(BROKEN / "well_behaved_agent.py")]
REPLAY_AFTER = [PY, str(BROKEN / "agents.py"), "ReplayAfterLoadResponse"]
ACPREF = [PY, "-m", "acpref"]
SCHEMA = xmlschema.XMLSchema(str(HERE / "data" / "jenkins-junit-10.xsd"))


def _acpref(*argv: str, timeout: float = 120) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([*ACPREF, *argv], capture_output=True, text=True, timeout=timeout)


def _read(path: Path) -> ET.Element:
    """The file, valid against the schema, parsed; its counts add up."""
    SCHEMA.validate(str(path))
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 1
    for suite in suites:
        cases = suite.findall("testcase")
        assert suite.get("tests") == str(len(cases))
        assert suite.get("failures") == str(sum(c.find("failure") is not None for c in cases))
        assert suite.get("skipped") == str(sum(c.find("skipped") is not None for c in cases))
        assert suite.get("errors") == "0"
    for key in ("tests", "failures", "errors"):
        assert root.get(key) == str(sum(int(s.get(key, "0")) for s in suites))
    return suites[0]


def _by_clause(suite: ET.Element) -> Dict[Tuple[str, str], ET.Element]:
    """The test cases by (classname, clause id): the id starts the name."""
    return {(c.get("classname", ""), c.get("name", "").split()[0]): c
            for c in suite.findall("testcase")}


def _assert_matches(suite: ET.Element, report: CheckReport, argv: Sequence[str] = ()) -> None:
    """One test case per row; a failure exactly where the row fails the run; skips as skips."""
    cases = _by_clause(suite)
    side = f"acpref.{report.subject}"
    assert sorted(c for _, c in cases) == sorted(report.results)
    fail_on = tuple(argv[i + 1] for i, a in enumerate(argv) if a == "--fail-on")
    strict_gaps = "--strict-gaps" in argv
    for row in report.rows():
        case = cases[(side, row.clause)]
        failure, skipped = case.find("failure"), case.find("skipped")
        assert (failure is not None) == row.fails(
            strict_gaps=strict_gaps, fail_on=fail_on
        ), (row, ET.tostring(case))
        assert (skipped is not None) == (row.status == "SKIPPED"), row
        if skipped is not None:
            reason = skipped.get("message", "")
            assert reason and reason in "; ".join(row.evidence)
        if row.status == "FAIL" and failure is None:  # reported, not failing: said in system-out
            out = case.find("system-out")
            assert out is not None and f"{row.level} finding, not failing" in (out.text or "")
            assert all(e in (out.text or "") for e in row.evidence)


def _assert_failure_quotes(case: ET.Element, clause: str, level: str, evidence: List[str]) -> None:
    failure = case.find("failure")
    assert failure is not None, ET.tostring(case)
    quote = quote_of(clause)
    assert quote is not None and failure.get("type") == level
    assert failure.get("message") == f"{clause} {level}: {quote.text}"
    assert quote.text in (failure.text or "")
    for line in evidence:
        assert line in (failure.text or ""), (line, failure.text)


# -- check-agent ----------------------------------------------------------------------------------


@pytest.mark.parametrize("agent,ok", [(GOOD, True), (REPLAY_AFTER, False)])
def test_check_agent_junit_has_a_case_per_clause_and_the_failure_quoted(
    tmp_path: Path, agent: List[str], ok: bool
) -> None:
    junit = tmp_path / "check-agent.xml"
    argv = ["check-agent", "--only", "handshake", "--only", "load", "--timeout", "10"]
    run = _acpref(*argv, "--json", "--junit", str(junit), "--", *agent)
    assert run.returncode == (0 if ok else 1), run.stdout + run.stderr
    report = CheckReport.from_json(json.loads(run.stdout))  # stdout holds the answer only
    suite = _read(junit)
    assert suite.get("name") == "acpref check-agent" and float(suite.get("time", "x")) > 0
    _assert_matches(suite, report)
    assert suite.get("failures") == str(len(report.failing()))
    if not ok:
        row = report.results["SETUP-07"]
        case = _by_clause(suite)[("acpref.agent", "SETUP-07")]
        _assert_failure_quotes(case, "SETUP-07", "MUST", row.evidence)
        assert any("sent after the session/load response" in e for e in row.evidence)


def test_check_agent_strict_gaps_moves_the_gap_into_the_failures(tmp_path: Path) -> None:
    # A spec-gap FAIL (no answer to an unparseable line): a passing case that says why, until
    # --strict-gaps fails the run on it, and then it is a failure as well.
    agent = ["--", PY, str(BROKEN / "check_agents.py"), "ParseErrorIgnored"]
    argv = ["check-agent", "--only", "bad-input", "--timeout", "2", "--json"]
    for extra, status in (([], 0), (["--strict-gaps"], 1)):
        junit = tmp_path / f"j{status}.xml"
        run = _acpref(*argv, *extra, "--junit", str(junit), *agent)
        assert run.returncode == status, run.stdout + run.stderr
        report = CheckReport.from_json(json.loads(run.stdout))
        suite = _read(junit)
        _assert_matches(suite, report, extra)
        gaps = [r for r in report.failed() if r.level == "spec-gap"]
        assert gaps and suite.get("failures") == str(len(report.failing(strict_gaps=bool(extra))))


# -- check-client ---------------------------------------------------------------------------------


def _client_report(tmp_path: Path, client: check_clients.Conforming) -> Path:
    path = tmp_path / "report.json"
    client.run(str(path), str(tmp_path))
    return path


def test_check_client_junit_conforming_client(tmp_path: Path) -> None:
    path = _client_report(tmp_path, check_clients.Conforming())
    junit = tmp_path / "client.xml"
    run = _acpref("check-client", "--report", str(path), "--junit", str(junit))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == _acpref("check-client", "--report", str(path)).stdout  # nothing added
    report = read_client_report(str(path))
    suite = _read(junit)
    assert suite.get("name") == "acpref check-client" and suite.get("failures") == "0"
    _assert_matches(suite, report)
    skipped = _by_clause(suite)[("acpref.client", "ELICIT-20")].find("skipped")
    assert skipped is not None  # no elicitation advertised: skipped, with the reason
    assert suite.get("skipped") == str(len(report.skipped())) != "0"


def test_check_client_junit_one_defect_client(tmp_path: Path) -> None:
    defect = check_clients.DEFECTS["AnswersNotifications"]()
    path = _client_report(tmp_path, defect)
    junit = tmp_path / "client.xml"
    run = _acpref("check-client", "--report", str(path), "--junit", str(junit))
    assert run.returncode == 1, run.stdout + run.stderr
    report = read_client_report(str(path))
    suite = _read(junit)
    _assert_matches(suite, report)
    row = report.results[defect.clause]
    case = _by_clause(suite)[("acpref.client", defect.clause)]
    _assert_failure_quotes(case, defect.clause, row.level, row.evidence)
    assert defect.evidence in (case.find("failure").text or "")  # type: ignore[union-attr]


def test_check_client_fail_on_SHOULD_moves_the_finding_into_the_failures(tmp_path: Path) -> None:
    report = CheckReport(subject="client")
    report._record("EXT-10", "FAIL", "basics", "#12: an unknown notification was answered")
    path = tmp_path / "r.json"
    path.write_text(report.dumps(), encoding="utf-8")
    for extra, status in (([], 0), (["--fail-on", "SHOULD"], 1)):
        junit = tmp_path / f"j{status}.xml"
        run = _acpref("check-client", "--report", str(path), *extra, "--junit", str(junit))
        assert run.returncode == status, run.stdout
        suite = _read(junit)
        _assert_matches(suite, report, extra)
        assert suite.get("failures") == str(status)


def test_hostile_evidence_is_escaped_and_bounded(tmp_path: Path) -> None:
    # Evidence quotes the peer: characters XML 1.0 forbids (NUL, ESC, a lone surrogate, U+FFFE),
    # markup, and a megabyte of text. The file stays valid and small; the characters are shown.
    report = CheckReport(subject="client")
    hostile = "#9: \x00\x1b\ud800\ufffe ]]> <b>&amp;</b> \"'"
    report._record("PROMPT-21", "FAIL", "cancel", hostile)
    report._record("PROMPT-21", "FAIL", "cancel", "y" * 1_000_000)
    for i in range(200):
        report._record("PROMPT-21", "FAIL", "cancel", f"#{i}: again")
    report._record("EXT-10", "SKIPPED", "basics", "bell \x07 and \x1f")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report.to_json()), encoding="ascii")  # \ud800 as JSON escapes it
    junit = tmp_path / "j.xml"
    run = subprocess.run([*ACPREF, "check-client", "--report", str(path), "--junit", str(junit)],
                         capture_output=True, timeout=60)  # fmt: skip
    assert junit.stat().st_size < 200_000
    suite = _read(junit)
    failure = _by_clause(suite)[("acpref.client", "PROMPT-21")].find("failure")
    assert failure is not None and failure.text is not None
    assert "#9: \\x00\\x1b\\ud800\\ufffe ]]> <b>&amp;</b> \"'" in failure.text
    assert "more characters)" in failure.text and "more; --json lists them)" in failure.text
    skipped = _by_clause(suite)[("acpref.client", "EXT-10")].find("skipped")
    assert skipped is not None and skipped.get("message") == "bell \\x07 and \\x1f"
    assert run.returncode in (1, 2), run.stderr  # the file is written before the text is printed


def test_junit_usage_errors(tmp_path: Path) -> None:
    report = CheckReport(subject="client")
    path = tmp_path / "r.json"
    path.write_text(report.dumps(), encoding="utf-8")
    nowhere = str(tmp_path / "no" / "such" / "dir" / "j.xml")
    run = _acpref("check-client", "--report", str(path), "--junit", nowhere)
    assert run.returncode == 2 and "cannot write" in run.stderr and run.stdout == ""
    serve = _acpref("check-client", "--serve", str(path), "--junit", str(tmp_path / "j.xml"))
    assert serve.returncode == 2 and "--junit goes with --report" in serve.stderr
    assert list(tmp_path.iterdir()) == [path]  # no scratch file left behind


# -- validate -------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent,ok", [(GOOD, True), (REPLAY_AFTER, False)])
def test_validate_junit_has_a_case_per_clause_and_party(
    tmp_path: Path, agent: List[str], ok: bool
) -> None:
    record = tmp_path / "runs"
    recorded = _acpref("check-agent", "--only", "load", "--record", str(record), "--", *agent)
    assert recorded.returncode == (0 if ok else 1), recorded.stdout
    transcript = record / "load.jsonl"
    junit = tmp_path / "validate.xml"
    run = _acpref("validate", str(transcript), "--junit", str(junit))
    assert run.returncode == (0 if ok else 1), run.stdout + run.stderr
    assert run.stdout == _acpref("validate", str(transcript)).stdout  # nothing added
    report = validate(str(transcript))
    suite = _read(junit)
    assert suite.get("name") == "acpref validate"
    cases = _by_clause(suite)
    groups = {(f"acpref.{f.blame.value}", f.clause) for f in report.findings}
    assert set(cases) == groups | {("acpref.validate", "every")}
    failing = {(f"acpref.{f.blame.value}", f.clause) for f in report.failing()}
    assert {k for k, c in cases.items() if c.find("failure") is not None} == failing
    if not ok:
        evidence = [f"#{f.index}: MUST: {f.message}" for f in report.findings
                    if f.clause == "SETUP-07"]  # fmt: skip
        assert evidence
        _assert_failure_quotes(cases[("acpref.agent", "SETUP-07")], "SETUP-07", "MUST", evidence)
