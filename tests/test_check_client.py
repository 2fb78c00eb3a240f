"""``acpref check-client``: the grading agent drives a client; good clients pass, broken ones fail.

Spec: the clauses of each step (spec_notes/oracle.md). The clients under test are ``AgentDriver``s
(a conforming client, then bent one rule at a time) and, when it exists, ``acpref client``.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import time
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from acpref import schema as s
from acpref._core.register import quote_of
from acpref.testing import AgentDriver, CheckReport, read_client_report
from acpref.testing._client_steps import STEP_CLAUSES

sys.path.insert(0, str(Path(__file__).resolve().parent / "broken"))

import check_clients  # noqa: E402

PY = sys.executable
PEERS = Path(__file__).resolve().parent / "peers"


def _grade(
    tmp_path: Path,
    bend: Optional[Callable[[AgentDriver, str], None]] = None,
    *,
    load: bool = True,
    cancel: bool = True,
    caps: Any = None,
) -> CheckReport:
    """Run the conforming client through both steps (and a load); ``bend`` breaks it."""
    return _run(tmp_path, check_clients.Conforming(bend, caps=caps, load=load, cancel=cancel))


def _run(tmp_path: Path, client: check_clients.Conforming) -> CheckReport:
    report_path = tmp_path / "report.json"
    client.run(str(report_path), str(tmp_path))
    return read_client_report(str(report_path))


def _assert_every_step_clause(report: CheckReport) -> None:
    """Every clause the steps decide has its row (PASS, FAIL or SKIPPED), whatever the client
    did: the clause list is the same for every client."""
    declared = {c for clauses in STEP_CLAUSES.values() for c in clauses}
    missing = sorted(declared - set(report.results))
    assert not missing, (missing, report.format_table())


def test_conforming_client_passes_every_step(tmp_path: Path) -> None:
    report = _grade(tmp_path)
    assert report.ok and report.failures == [], report.format_table()
    assert report.final
    _assert_every_step_clause(report)
    statuses = {row.clause: row.status for row in report.rows()}
    for clause in (
        "TOOL-08",
        "FS-04",
        "FS-07",
        "FS-08",
        "TERM-04",
        "TERM-12",
        "TERM-13",
        "TERM-14",
        "PROMPT-21",
        "SETUP-04",
        "EXT-08",
        "ELICIT-29",
        "RPC-17",
        "CANCEL-05",
        "RPC-07",
        "SCHEMA-11",
    ):
        assert statuses[clause] == "PASS", (clause, report.format_table())
    assert statuses["ELICIT-20"] == "SKIPPED"  # no elicitation advertised
    assert not list(tmp_path.glob(".acpref-check-*"))  # the check's file is cleaned up
    cli = subprocess.run(
        [PY, "-m", "acpref", "check-client", "--report", str(tmp_path / "report.json"), "--table"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert cli.returncode == 0 and "PROMPT-21" in cli.stdout


def test_client_without_capabilities_must_refuse_the_methods(tmp_path: Path) -> None:
    report = _grade(tmp_path, caps={})
    assert report.results["RPC-12"].status == "PASS"
    assert (
        report.results["FS-04"].status == "SKIPPED"
        and report.results["TERM-03"].status == "SKIPPED"
        and report.results["CANCEL-05"].status == "SKIPPED"
        and report.results["RPC-07"].status == "SKIPPED"
    )
    assert report.ok
    _assert_every_step_clause(report)


def test_PROMPT_21_is_skipped_when_the_user_does_not_cancel(tmp_path: Path) -> None:
    report = _grade(tmp_path, load=False, cancel=False)
    assert report.results["PROMPT-21"].status == "SKIPPED"
    assert report.results["SETUP-04"].status == "SKIPPED"
    assert report.ok


def test_reference_client_passes_step_one(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    argv = [
        PY,
        "-m",
        "acpref",
        "client",
        "--allow",
        "-p",
        "go",
        "--cwd",
        str(tmp_path),
        "--",
        PY,
        "-m",
        "acpref",
        "check-client",
        "--serve",
        str(report_path),
    ]
    subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    report = read_client_report(str(report_path))
    # spec: a conforming client: no clause fails at MUST or MUST NOT.
    assert report.ok and not _must_failures(report), report.format_table()
    assert report.results["TOOL-08"].status == "PASS" and report.results["TERM-09"].status == "PASS"
    # spec RPC-07: the reference client answers two reads open at once each under its own id.
    assert report.results["RPC-07"].status == "PASS", report.format_table()
    # spec TERM-13: it kills a command released while it runs (with its group).
    assert report.results["TERM-13"].status == "PASS", report.format_table()


def test_report_cli_json_and_errors(tmp_path: Path) -> None:
    report = CheckReport(subject="client")
    report._record("PROMPT-21", "FAIL", "cancel", "#9: a pending permission answered 'selected'")
    path = tmp_path / "r.json"
    path.write_text(report.dumps())
    result = subprocess.run(
        [PY, "-m", "acpref", "check-client", "--report", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["results"][0]["clause"] == "PROMPT-21"
    missing = subprocess.run(
        [PY, "-m", "acpref", "check-client", "--report", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert missing.returncode == 2


def test_report_with_a_lone_surrogate_in_its_evidence_is_written_and_printed(
    tmp_path: Path,
) -> None:
    # A peer's JSON string may hold a lone surrogate ("\ud800" is legal JSON text), and evidence
    # quotes what the peer sent: no UTF-8 file or terminal can hold it, so the report writes it
    # as its escape, in the file, in the text and in --json, and never fails on it.
    report = CheckReport(subject="client")
    report._record("RPC-04", "FAIL", "basics", "#7: answered under id '\ud800' (a lone surrogate)")
    path = tmp_path / "r.json"
    path.write_text(report.dumps(), encoding="utf-8")  # the file --serve writes
    assert read_client_report(str(path)).results["RPC-04"].evidence[0].count("\ud800") == 1
    for extra in ([], ["--json"], ["--table"]):
        run = subprocess.run(
            [PY, "-m", "acpref", "check-client", "--report", str(path), *extra],
            capture_output=True,
            timeout=30,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )
        assert run.returncode == 1, run.stderr.decode("utf-8", "replace")
        assert b"\\ud800" in run.stdout and b"Traceback" not in run.stderr, extra
    shown = json.loads(subprocess.run(
        [PY, "-m", "acpref", "check-client", "--report", str(path), "--json"],
        capture_output=True, timeout=30,
    ).stdout)
    assert "\ud800" in shown["results"][0]["evidence"][0]  # --json keeps the value itself


# -- What only check-client provokes: odd ids, _meta, an answered notification ---------------------


def test_PROMPT_21_a_permission_request_that_crossed_the_cancel_is_no_failure(
    tmp_path: Path,
) -> None:
    # A conforming client whose user clicked Stop before the client had read check-client's probe
    # (it answers the probe only after its cancel), and that answers the permission request as
    # the user chose: the request may have crossed the cancel on the wire, so it was not
    # provably pending (spec-gap permission-crossing). No MUST failure; PROMPT-21 says why.
    import threading

    from acpref.errors import RpcError

    stopped = threading.Event()

    def bend(driver: AgentDriver, session: str) -> None:
        def asked_to_cancel() -> bool:
            return any(
                isinstance(m, dict)
                and m.get("method") == "session/request_permission"
                and "check-cancel" in json.dumps(m.get("params"))
                for _, m in driver.sink.received()
            )

        def ping(params: Any, ctx: Any) -> Any:
            # Read after the permission request (recorded as read), answered once Stop was clicked.
            if asked_to_cancel():
                assert stopped.wait(30.0)
            raise RpcError.method_not_found("_acpref/ping")

        def policy(request: s.RequestPermissionRequest) -> Any:
            if request.tool_call.tool_call_id == "check-cancel":
                driver.cancel(session)
                stopped.set()
                return "allow"  # the user's choice, on a request not provably read at the cancel
            return "allow"

        driver.connection.set_handler("_acpref/ping", ping)
        driver.permission = policy

    report = _grade(tmp_path, bend, load=False, cancel=False)
    table = report.format_table()
    assert _must_failures(report) == [], table
    row = report.results["PROMPT-21"]
    assert row.status == "SKIPPED" and "crossed" in (row.evidence or [""])[0], table
    assert report.results["spec-gap:permission-crossing"].level == "spec-gap", table
    assert report.results["PROMPT-19"].status == "PASS", table


def test_EXT_02_client_refusing_meta_on_a_permission_request_fails(tmp_path: Path) -> None:
    from acpref.errors import RpcError

    def bend(driver: AgentDriver, session: str) -> None:
        def policy(request: s.RequestPermissionRequest) -> Any:
            if request.meta or request.tool_call.meta:
                raise RpcError.invalid_params("unknown field _meta")
            if request.tool_call.tool_call_id == "check-cancel":
                driver.cancel(session)
                return None
            return "allow"

        driver.permission = policy

    report = _grade(tmp_path, bend, load=False, cancel=False)
    row = report.results["EXT-02"]
    assert row.status == "FAIL", report.format_table()
    assert "session/request_permission with _meta" in row.evidence[0]
    assert report.results["TOOL-08"].status == "PASS"  # asked again without _meta: answered


def test_SCHEMA_11_client_refusing_a_malformed_title_fails_as_a_spec_gap_and_is_asked_again(
    tmp_path: Path,
) -> None:
    # ToolCallUpdate.title is marked default-on-error; the mark has no keyworded sentence.
    report = _run(tmp_path, check_clients.RefusesAMalformedTitle())
    row, table = report.results["SCHEMA-11"], report.format_table()
    assert row.status == "FAIL" and row.level == "spec-gap", table
    assert "toolCall.title 5" in row.evidence[0] and "-32602" in row.evidence[0], table
    # Asked again with the _meta alone: answered, so _meta was not what it refused.
    assert report.results["EXT-02"].status == "PASS", table
    assert report.results["TOOL-08"].status == "PASS", table
    assert report.ok and report.failing() == [] and report.failing(strict_gaps=True) == [row]


def test_EXT_02_client_answering_an_update_with_meta_with_an_error_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        serve = driver._on_update

        def on_update(params: Any, ctx: Any) -> Any:
            if params.meta:
                error = {"code": -32602, "message": "unknown field _meta"}
                driver.send_raw({"jsonrpc": "2.0", "id": None, "error": error})
                return None
            return serve(params, ctx)

        driver.connection.set_handler("session/update", on_update)

    report = _grade(tmp_path, bend, load=False)
    row = report.results["EXT-02"]
    assert row.status == "FAIL", report.format_table()
    assert "a session/update with _meta was answered" in row.evidence[0]


def _rewrite(driver: AgentDriver, old: bytes, new: bytes) -> None:
    inner = driver.stream._inner  # below the recorder: the transcript keeps the true line
    write = inner.write
    inner.write = lambda data: write(data.replace(old, new))  # type: ignore


def test_bad_input_conforming_client_answers_each_with_its_error(tmp_path: Path) -> None:
    report = _grade(tmp_path, load=False)
    for clause in ("RPC-10", "RPC-11", "spec-gap:malformed-json", "RPC-12", "RPC-13", "CANCEL-06"):
        assert report.results[clause].status == "PASS", (clause, report.format_table())


def test_client_answering_bad_input_with_internal_error_fails_only_the_gaps(
    tmp_path: Path,
) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        for code in (b"-32700", b"-32600", b"-32601", b"-32602"):
            _rewrite(driver, b'"code":' + code, b'"code":-32603')

    report = _grade(tmp_path, bend, load=False)
    table = report.format_table()
    # The codes are JSON-RPC's table, no keyword: spec-gap. The ids are right: RPC-10, RPC-11.
    for clause in ("spec-gap:malformed-json", "RPC-12", "RPC-13"):
        row = report.results[clause]
        assert row.status == "FAIL" and row.level == "spec-gap", (clause, table)
    assert "-32603" in report.results["spec-gap:malformed-json"].evidence[0]
    for clause in ("RPC-10", "RPC-11"):
        assert report.results[clause].status == "PASS", (clause, table)
    assert report.ok, table


def test_SUBAGENT_19_a_childs_request_is_answered_by_the_client(tmp_path: Path) -> None:
    report = _grade(tmp_path, load=False, caps=check_clients.SUBAGENT_CAPS)
    assert report.results["SUBAGENT-19"].status == "PASS", report.format_table()
    assert report.failures == [], report.format_table()
    (tmp_path / "plain").mkdir()
    plain = _grade(tmp_path / "plain", load=False)  # no subagents advertised
    assert plain.results["SUBAGENT-19"].status == "SKIPPED", plain.format_table()


def test_a_part_the_client_breaks_does_not_hide_the_others(tmp_path: Path) -> None:
    from acpref.errors import RpcError

    def bend(driver: AgentDriver, session: str) -> None:
        def policy(request: s.RequestPermissionRequest) -> Any:
            if request.tool_call.tool_call_id == "check-permission":
                raise RpcError(-32603, "the permission dialog crashed")
            return "allow"

        driver.permission = policy

    report = _grade(tmp_path, bend, load=False, cancel=False)
    assert report.results["TOOL-08"].status == "FAIL", report.format_table()
    assert "crashed" in report.results["TOOL-08"].evidence[0]
    assert report.results["SCHEMA-04"].status == "SKIPPED"
    for clause in ("FS-04", "TERM-09", "EXT-08", "RPC-04", "EXT-10"):
        assert report.results[clause].status == "PASS", (clause, report.format_table())


def test_CANCEL_05_client_finishing_the_cancelled_read_passes(tmp_path: Path) -> None:
    def finished(params: Any) -> Any:
        return s.ReadTextFileResponse(content="partial")

    bend = lambda d, _: check_clients.honours_cancel_late(d, finished)  # noqa: E731
    report = _grade(tmp_path, bend, load=False)
    assert report.results["CANCEL-05"].status == "PASS", report.format_table()
    assert report.ok, report.format_table()


# -- RPC-07: two requests of the agent open at once, answered by id --------------------------------


def test_RPC_07_client_refusing_the_two_open_reads_is_skipped_not_failed(tmp_path: Path) -> None:
    from acpref.errors import RpcError

    def bend(driver: AgentDriver, session: str) -> None:
        def on_read(params: Any, ctx: Any) -> Any:
            if check_clients.CROSSED_PATH in params.path:
                raise RpcError(-32603, "busy")  # an error says nothing of the ids
            return driver._on_read(params, ctx)

        driver.connection.set_handler("fs/read_text_file", on_read)

    report = _grade(tmp_path, bend, load=False)
    row = report.results["RPC-07"]
    assert row.status == "SKIPPED" and "-32603" in row.evidence[0], report.format_table()
    assert report.ok, report.format_table()


# -- One defect each: a MUST sentence broken fails the run; a spec-gap does not --------------------


@pytest.mark.parametrize("name", sorted(check_clients.DEFECTS))
def test_one_defect_client_fails_its_must_clause(tmp_path: Path, name: str) -> None:
    # The clauses of DEFECTS (the register finds the test by these; checked below):
    # spec CANCEL-05, CANCEL-06, PROMPT-03, EXT-02, FS-07, INIT-01, OVERVIEW-01, OVERVIEW-09
    # spec PROMPT-01, PROMPT-21, RPC-01, RPC-04, RPC-05, RPC-06, RPC-07, RPC-09, RPC-10, SCHEMA-04
    # spec SETUP-04, SETUP-25, SUBAGENT-19, TERM-05, TRANSPORT-01, TRANSPORT-05, TRANSPORT-09
    # spec RPC-11
    defect = check_clients.DEFECTS[name]()
    report = _run(tmp_path, defect)
    table = report.format_table()
    row = report.results.get(defect.clause)
    assert row is not None and row.status == "FAIL", (defect.clause, table)
    assert row.level in ("MUST", "MUST NOT"), (row.level, table)
    assert row.evidence and any(defect.evidence in e for e in row.evidence), (row.evidence, table)
    assert not report.ok and row in report.failing()
    # Only this defect's clauses fail the run: the rest of the client conforms.
    failing = {r.clause for r in report.failing()}
    assert failing <= {defect.clause, *defect.also}, (failing, table)
    quote = quote_of(defect.clause)
    assert quote is not None and quote.level == row.level
    assert quote.text in report.format_text()  # the sentence it breaks is quoted
    _assert_every_step_clause(report)


@pytest.mark.parametrize("name", sorted(check_clients.SHOULD_DEFECTS))
def test_one_defect_client_on_a_SHOULD_sentence_fails_only_on_request(
    tmp_path: Path, name: str
) -> None:
    # spec ELICIT-22: the one finding is at SHOULD; the run stays ok unless --fail-on SHOULD.
    defect = check_clients.SHOULD_DEFECTS[name]()
    report = _run(tmp_path, defect)
    table = report.format_table()
    row = report.results.get(defect.should)
    assert row is not None and row.status == "FAIL" and row.level == "SHOULD", table
    assert any(defect.evidence in e for e in row.evidence), (row.evidence, table)
    assert [r.clause for r in report.rows() if r.status == "FAIL"] == [defect.should], table
    assert report.ok and report.failing() == [], table
    assert row in report.failing(fail_on=("SHOULD",))


def test_a_form_accepted_as_its_schema_asks_gets_no_ELICIT_22_finding(tmp_path: Path) -> None:
    # The conforming client with form elicitation, accepting with a string name: no FAIL at all.
    def accept(driver: Any, session: str) -> None:
        driver.elicitation = lambda params: s.CreateElicitationResponse(
            action=s.ElicitationAcceptAction(content={"name": "me"})
        )

    report = _grade(tmp_path, accept, caps=check_clients.AcceptsAFormOffItsSchema.caps)
    assert report.ok and report.failures == [], report.format_table()
    assert [r.clause for r in report.rows() if r.status == "FAIL"] == [], report.format_table()


@pytest.mark.parametrize("name", sorted(check_clients.GAP_DEFECTS))
def test_one_defect_client_on_a_spec_gap_fails_only_strictly(tmp_path: Path, name: str) -> None:
    # spec ELICIT-29, RPC-12, TOOL-08: unquoted (decisions.md); spec-gap concurrent-prompt.
    defect = check_clients.GAP_DEFECTS[name]()
    report = _run(tmp_path, defect)
    table = report.format_table()
    row = report.results.get(defect.gap)
    assert row is not None and row.status == "FAIL" and row.level == "spec-gap", table
    assert any(defect.evidence in e for e in row.evidence), (row.evidence, table)
    assert report.ok and report.failing() == [], table
    assert row in report.failing(strict_gaps=True)


def test_TERM_13_a_command_left_running_after_release_is_a_spec_gap_finding(
    tmp_path: Path,
) -> None:
    # spec TERM-13 (no keyword: decisions.md unquoted, release-kills): the client answered the
    # release {} and left the command running; the check saw it still running, and nothing else.
    report = _run(tmp_path, check_clients.ReleaseLeavesTheCommandRunning())
    row = report.results["TERM-13"]
    assert row.status == "FAIL" and row.level == "spec-gap", report.format_table()
    (evidence,) = row.evidence
    assert "running when it was released, was still running 3s after terminal/release" in evidence
    assert [r.clause for r in report.failed()] == ["TERM-13"], report.format_table()
    assert report.ok and row in report.failing(strict_gaps=True)
    pid = int(re.search(r"\(pid (\d+)\)", evidence).group(1))  # type: ignore[union-attr]
    with pytest.raises(ProcessLookupError):  # the client stopped it at the end: nothing is left
        os.kill(pid, 0)


@pytest.mark.parametrize("how", ["SIGTERM", "the witness closed"])
def test_TERM_13_the_process_witness_sees_the_command_end_however_it_comes(how: str) -> None:
    from acpref.testing._process_witness import ProcessWitness

    with ProcessWitness() as witness:
        proc = subprocess.Popen(witness.argv())
        try:
            assert witness.wait_started(10.0) == proc.pid
            assert not witness.wait_ended(0.1)
            if how == "SIGTERM":
                proc.terminate()
                assert witness.wait_ended(10.0)
        finally:
            if how == "SIGTERM":
                proc.kill()
    # Closed, the witness ends a command still connected to it (none outlives the check).
    assert proc.wait(10) is not None


def test_at_least_fifteen_one_defect_clients_each_on_a_must_sentence() -> None:
    assert len(check_clients.DEFECTS) >= 15
    source = inspect.getsource(test_one_defect_client_fails_its_must_clause)
    cited = set(re.findall(r"[A-Z]+-\d\d", "".join(re.findall(r"# spec ([^:\n]*)", source))))
    assert cited == {d.clause for d in check_clients.DEFECTS.values()}
    for name, defect in check_clients.DEFECTS.items():
        quote = quote_of(defect.clause)
        assert quote is not None and quote.level in ("MUST", "MUST NOT"), name
        assert defect.__doc__ and defect.clause in defect.__doc__, name


# -- Conforming clients of other styles, each a real process launching check-client ----------------


def _must_failures(report: CheckReport) -> list:
    return [r for r in report.failed() if r.level in ("MUST", "MUST NOT")]


#: What every conforming client must pass whatever it advertises (it answers, ids, cancels...).
_ALWAYS_PASS = ("RPC-04", "RPC-05", "OVERVIEW-09", "CANCEL-06", "EXT-02", "PROMPT-21", "SETUP-04")


@pytest.mark.timeout(120)
def test_python_sdk_client_fails_only_its_sdks_null_terminal_answer(tmp_path: Path) -> None:
    """A client on the official Python SDK's public API (tests/peers/sdk_check_client.py).

    Everything it does passes but one thing its SDK does (spec_notes/peer-divergences.md): asked
    ``terminal/create``, which the client neither advertised nor implemented, the SDK answers
    ``"result": null``, which is no CreateTerminalResponse (OVERVIEW-01); acpref's probe of an
    unadvertised method only wants it refused (RPC-12, spec-gap)."""
    why = "the official Python SDK (agent-client-protocol) is not installed"
    pytest.importorskip("acp", reason=why)
    report_path = tmp_path / "report.json"
    argv = [PY, str(PEERS / "sdk_check_client.py"), str(report_path), str(tmp_path)]
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=100
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = read_client_report(str(report_path))
    table = report.format_table()
    assert [r.clause for r in _must_failures(report)] == ["OVERVIEW-01"], table
    evidence = report.results["OVERVIEW-01"].evidence
    assert evidence and all("terminal/create result" in e for e in evidence), table
    assert report.results["RPC-12"].level == "spec-gap"
    for clause in (*_ALWAYS_PASS, "TOOL-08", "FS-04", "FS-07", "CANCEL-05", "RPC-07"):
        assert report.results[clause].status == "PASS", (clause, table)
    _assert_every_step_clause(report)


TS_CLIENT = PEERS / "ts_check_client"


def test_typescript_sdk_client_passes(tmp_path: Path) -> None:
    """A client on the official TypeScript SDK's public API (tests/peers/ts_check_client,
    ``@agentclientprotocol/sdk`` 2.4.0, installed there by ``npm ci``, as .ci/run does)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the TypeScript SDK client cannot run")
    if not (TS_CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        pytest.skip(f"the TypeScript SDK is not installed: run `npm ci` in {TS_CLIENT}")
    report_path = tmp_path / "report.json"
    argv = [node, str(TS_CLIENT / "check_client.mjs"), PY, str(report_path), str(tmp_path)]
    done = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=50
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = read_client_report(str(report_path))
    table = report.format_table()
    assert report.ok and not _must_failures(report), table
    for clause in (*_ALWAYS_PASS, "TOOL-08", "FS-04", "FS-07", "CANCEL-05", "RPC-07", "RPC-10"):
        assert report.results[clause].status == "PASS", (clause, table)
    _assert_every_step_clause(report)


# -- Deadlines: every request to the client waits at most --timeout (spec-gap gave-up) ---------


def test_spec_gap_gave_up_a_client_silent_after_initialize_ends_each_step_within_the_bound(
    tmp_path: Path,
) -> None:
    # The bound of spec_notes/oracle.md: step 1 stops each of its 10 parts at its first
    # unanswered request (bad_input sends two bad lines first): (10 + 2) x --timeout; step 2
    # waits one permission request (the client's --timeout is 0.5 s). 1 s allowed for the
    # scripted agent's start and end.
    client = check_clients.SilentAfterInitialize()
    began = time.monotonic()
    report = _run(tmp_path, client)
    elapsed = time.monotonic() - began
    assert elapsed <= (10 + 2) * 0.5 + 1 * 0.5 + 1.0, (elapsed, client.driver.stderr)
    assert report.failing() == [], report.format_table()
    assert "RPC-06" not in report.results or report.results["RPC-06"].status != "FAIL"
    _assert_every_step_clause(report)
    reasons = [e for r in report.rows() for e in r.evidence]
    assert any("step 'cancellation' was running when the client stopped answering" in e
               for e in reasons), report.format_table()  # fmt: skip
    assert not any("too few prompts" in e for e in reasons), report.format_table()
    # Progress on stderr, each step and part; the agent's stdout carried protocol only.
    assert "acpref check-client: [" in client.driver.stderr
    assert "step 'basics' done in" in client.driver.stderr
    assert not [f for f in client.driver.report.blamed("agent") if f.clause == "TRANSPORT-08"
                and "acpref check-client" in f.message]  # fmt: skip


def test_spec_gap_gave_up_a_client_that_stops_reading_files_costs_one_timeout(
    tmp_path: Path,
) -> None:
    client = check_clients.StopsReadingFiles()
    report = _run(tmp_path, client)
    assert report.failing() == [], report.format_table()
    reasons = [e for r in report.rows() for e in r.evidence]
    waited = [e for e in reasons if "fs/read_text_file got no answer within 1s" in e]
    unsent = [e for e in reasons if "fs/read_text_file not sent" in e]
    assert waited and unsent, report.format_table()
    # One deadline: the read of the files part waited, the later parts' reads were not sent.
    assert client.driver.stderr.count("files done") == 1
    assert "PASS" == report.results["TERM-03"].status, report.format_table()
