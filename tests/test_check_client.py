"""``acpref check-client``: the grading agent drives a client; good clients pass, broken ones fail.

Spec: the clauses of each step (spec_notes/oracle.md). The clients under test are ``AgentDriver``s
(a conforming client, then bent one rule at a time) and, when it exists, ``acpref client``.
"""

from __future__ import annotations

import json
import subprocess
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


def _grade(
    tmp_path: Path,
    bend: Optional[Callable[[AgentDriver, str], None]] = None,
    *,
    load: bool = True,
    cancel: bool = True,
    caps: Any = None,
) -> CheckReport:
    """Run a client through both steps (and a load); ``bend`` breaks it."""
    report_path = tmp_path / "report.json"
    driver = AgentDriver.spawn(
        [PY, "-m", "acpref", "check-client", "--serve", str(report_path)], timeout=30
    )
    driver.initialize(client_capabilities=caps)
    session = driver.new_session(str(tmp_path))

    def policy(request: s.RequestPermissionRequest) -> Any:
        if request.tool_call.tool_call_id == "check-cancel" and cancel:
            driver.cancel(session)  # spec PROMPT-21: cancel, then answer "cancelled"
            return None
        return "allow"

    driver.permission = policy
    if bend is not None:
        bend(driver, session)
    assert driver.prompt(session, "step one").stop_reason == "end_turn"
    driver.prompt(session, "step two")
    if load:
        driver.request(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
    driver.close()
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
        "TERM-14",
        "PROMPT-21",
        "SETUP-04",
        "EXT-08",
        "ELICIT-29",
        "RPC-17",
        "CANCEL-05",
        "RPC-07",
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


def test_PROMPT_21_client_selecting_after_cancel_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        def policy(request: s.RequestPermissionRequest) -> Any:
            if request.tool_call.tool_call_id == "check-cancel":
                driver.cancel(session)
            return "allow"  # even after the cancel

        driver.permission = policy

    report = _grade(tmp_path, bend, load=False)
    assert report.results["PROMPT-21"].status == "FAIL", report.format_table()
    assert not report.ok


def test_TOOL_08_client_selecting_an_option_not_offered_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        driver.permission = lambda request: "yolo"

    report = _grade(tmp_path, bend, load=False, cancel=False)
    assert report.results["TOOL-08"].status == "FAIL", report.format_table()


def test_RPC_12_client_serving_an_unadvertised_method_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        # Misuse the connection: serve fs/read_text_file without advertising it.
        driver.connection.set_handler(
            "fs/read_text_file", lambda params, ctx: s.ReadTextFileResponse(content="x")
        )

    report = _grade(tmp_path, bend, load=False, caps={"terminal": True})
    assert report.results["RPC-12"].status == "FAIL", report.format_table()


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
    assert report.ok, report.format_table()
    assert report.results["TOOL-08"].status == "PASS" and report.results["TERM-09"].status == "PASS"
    # spec RPC-07: the reference client answers two reads open at once each under its own id.
    assert report.results["RPC-07"].status == "PASS", report.format_table()


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


# -- What only check-client provokes: odd ids, _meta, an answered notification ---------------------


def test_EXT_10_client_answering_a_notification_without_an_id_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        error = {"code": -32601, "message": "Method not found"}
        driver.connection.set_handler(
            "_acpref/notice", lambda params, ctx: driver.send_raw({"jsonrpc": "2.0", "error": error})
        )

    report = _grade(tmp_path, bend, load=False)
    for clause in ("EXT-10", "OVERVIEW-09"):
        assert report.results[clause].status == "FAIL", report.format_table()


def test_RPC_04_client_turning_a_numeric_string_id_into_a_number_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        inner = driver.stream._inner  # below the recorder: the transcript keeps the true line
        write = inner.write
        inner.write = lambda data: write(data.replace(b'"id":"42"', b'"id":42'))  # type: ignore

    report = _grade(tmp_path, bend, load=False)
    row = report.results["RPC-04"]
    assert row.status == "FAIL" and "'42' answered as 42" in row.evidence[0], report.format_table()


def test_EXT_02_client_refusing_meta_fails(tmp_path: Path) -> None:
    from acpref.errors import RpcError

    def bend(driver: AgentDriver, session: str) -> None:
        def on_read(params: Any, ctx: Any) -> Any:
            if params.meta:
                raise RpcError.invalid_params("unknown field _meta")
            return driver._on_read(params, ctx)

        driver.connection.set_handler("fs/read_text_file", on_read)

    report = _grade(tmp_path, bend, load=False)
    assert report.results["EXT-02"].status == "FAIL", report.format_table()


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
    for clause in ("RPC-10", "RPC-11", "RPC-12", "RPC-13", "CANCEL-06"):
        assert report.results[clause].status == "PASS", (clause, report.format_table())


def test_RPC_10_client_answering_a_parse_error_without_the_null_id_fails(tmp_path: Path) -> None:
    report = _grade(tmp_path, lambda d, _: _rewrite(d, b'"id":null,', b""), load=False)
    assert report.results["RPC-10"].status == "FAIL", report.format_table()


def test_RPC_11_12_13_client_answering_internal_error_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        for code in (b"-32600", b"-32601", b"-32602"):
            _rewrite(driver, b'"code":' + code, b'"code":-32603')

    report = _grade(tmp_path, bend, load=False)
    for clause in ("RPC-11", "RPC-12", "RPC-13"):
        assert report.results[clause].status == "FAIL", (clause, report.format_table())


def test_CANCEL_06_client_answering_a_cancel_request_fails(tmp_path: Path) -> None:
    def bend(driver: AgentDriver, session: str) -> None:
        error = {"code": -32601, "message": "Method not found"}
        connection = driver.connection
        on_cancel = connection._on_cancel_request

        def answering(params: Any) -> None:  # a client that takes it for a request
            driver.send_raw({"jsonrpc": "2.0", "id": None, "error": error})
            on_cancel(params)

        connection._on_cancel_request = answering  # type: ignore[method-assign]

    report = _grade(tmp_path, bend, load=False)
    assert report.results["CANCEL-06"].status == "FAIL", report.format_table()


SUBAGENT_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True,
                 "subagents": {}}  # fmt: skip


def test_SUBAGENT_19_a_childs_request_is_answered_by_the_client(tmp_path: Path) -> None:
    report = _grade(tmp_path, load=False, caps=SUBAGENT_CAPS)
    assert report.results["SUBAGENT-19"].status == "PASS", report.format_table()
    assert report.failures == [], report.format_table()
    (tmp_path / "plain").mkdir()
    plain = _grade(tmp_path / "plain", load=False)  # no subagents advertised
    assert plain.results["SUBAGENT-19"].status == "SKIPPED", plain.format_table()


def test_SUBAGENT_19_client_refusing_a_childs_request_fails(tmp_path: Path) -> None:
    from acpref.errors import RpcError

    def bend(driver: AgentDriver, session: str) -> None:
        def policy(request: s.RequestPermissionRequest) -> Any:
            if request.session_id != session:
                raise RpcError(-32002, f"unknown session {request.session_id}")
            if request.tool_call.tool_call_id == "check-cancel":
                driver.cancel(session)
                return None
            return "allow"

        driver.permission = policy

    report = _grade(tmp_path, bend, load=False, cancel=False, caps=SUBAGENT_CAPS)
    row = report.results["SUBAGENT-19"]
    assert row.status == "FAIL" and "child's permission request" in row.evidence[0]
    assert row.level == "MUST"  # its sentence: "... and MUST still be delivered."
    assert not report.ok, report.format_table()


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


def _honours_cancel_late(driver: AgentDriver, answer: Callable[[Any], Any]) -> None:
    """A client whose $/cancel_request only flags the request: its read handler, which waits
    for the flag on the second read of the check's cancelled file (the first is the plain read
    before it), answers with ``answer(params)``."""
    connection = driver.connection
    connection._on_cancel_request = lambda params: _flag_only(connection, params)  # type: ignore
    seen: list = []

    def on_read(params: Any, ctx: Any) -> Any:
        if ".acpref-check-cancel-" in params.path:
            seen.append(params.path)
            if len(seen) > 1 and ctx.cancelled.wait(10):
                return answer(params)
        return driver._on_read(params, ctx)

    connection.set_handler("fs/read_text_file", on_read)


def _flag_only(connection: Any, params: Any) -> None:
    with connection._inbound_lock:
        ctx = connection._inbound.get(params.get("requestId"))
    if ctx is not None:
        ctx.cancelled.set()


def test_CANCEL_05_client_answering_a_cancelled_read_with_another_error_fails(
    tmp_path: Path,
) -> None:
    from acpref.errors import RpcError

    def aborted(params: Any) -> Any:
        raise RpcError(-32603, "read aborted")

    def bend(driver: AgentDriver, session: str) -> None:
        _honours_cancel_late(driver, aborted)
        # A cancel that reaches the request before its handler starts is answered -32800 by the
        # connection itself: that answer is bent too.
        _rewrite(driver, b'"code":-32800', b'"code":-32603')

    report = _grade(tmp_path, bend, load=False)
    row = report.results["CANCEL-05"]
    assert row.status == "FAIL" and "-32603" in row.evidence[0], report.format_table()
    assert row.level == "MUST" and not report.ok


def test_CANCEL_05_client_finishing_the_cancelled_read_passes(tmp_path: Path) -> None:
    def finished(params: Any) -> Any:
        return s.ReadTextFileResponse(content="partial")

    report = _grade(tmp_path, lambda d, _: _honours_cancel_late(d, finished), load=False)
    assert report.results["CANCEL-05"].status == "PASS", report.format_table()
    assert report.ok, report.format_table()


# -- RPC-07: two requests of the agent open at once, answered by id --------------------------------


def _caught_on_rpc_07(tmp_path: Path, defect: Any) -> None:
    report = _grade(tmp_path, defect.bend, load=False)
    row = report.results[defect.clause]
    assert row.status == "FAIL" and row.level == "MUST", report.format_table()
    assert "two reads open at once" in row.evidence[0] and check_clients.CROSSED in row.evidence[0]
    quote = quote_of("RPC-07")
    assert quote is not None and quote.text in report.format_text()  # the sentence it breaks
    assert not report.ok
    _assert_every_step_clause(report)
    # The rest of step 1 goes on: only the crossed reads were answered wrong.
    for clause in ("FS-04", "CANCEL-05", "TERM-09", "RPC-04"):
        assert report.results[clause].status == "PASS", (clause, report.format_table())


def test_RPC_07_client_answering_two_open_reads_under_each_others_ids_fails(
    tmp_path: Path,
) -> None:
    _caught_on_rpc_07(tmp_path, check_clients.SwapsCrossedIds)


def test_RPC_07_client_answering_the_second_open_read_with_the_first_file_fails(
    tmp_path: Path,
) -> None:
    _caught_on_rpc_07(tmp_path, check_clients.FirstContentTwice)


@pytest.mark.parametrize("name", sorted(check_clients.DEFECTS))
def test_every_broken_check_client_defect_names_a_clause_with_a_test(name: str) -> None:
    # Each defect of tests/broken/check_clients.py is run by a test of this file named after it.
    defect = check_clients.DEFECTS[name]
    source = Path(__file__).read_text(encoding="utf-8")
    assert f"check_clients.{name})" in source and quote_of(defect.clause) is not None


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
