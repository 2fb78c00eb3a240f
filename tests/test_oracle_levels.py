"""The levels of the oracle's verdicts: what fails a run, what is only reported, and why.

Spec: every MUST finding quotes the spec's sentence (``acpref/_core/quotes.tsv``); acpref's own
readings are ``spec-gap``; fields of the unstable or of a newer schema are ``warning``s
(spec_notes/oracle.md, "Levels"). Conforming but unusual agents (``tests/peers/unusual_agents.py``)
get no MUST failure; the output lists failures first.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Tuple

import pytest

from acpref._core import register
from acpref._core.findings import Party, finding
from acpref.oracle import validate
from acpref.testing import AgentCheckOptions, CheckReport, check_agent

PY = sys.executable
HERE = Path(__file__).resolve().parent
UNUSUAL = HERE / "peers" / "unusual_agents.py"
C, A = "client", "agent"


def _records(*messages: Tuple[str, Any]) -> List[dict]:
    out = [{"from": who, "ts": 0, "line": json.dumps(m)} for who, m in messages]
    return [*out, {"from": C, "ts": 0, "event": "eof"}]


INIT = (
    C,
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": 1,
            "clientCapabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    },
)
NEW = (
    C,
    {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
)
CLOSE = (
    C,
    {"jsonrpc": "2.0", "id": 6, "method": "session/close", "params": {"sessionId": "s1"}},
)
NEW_OK = (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}})


def _initialized(caps: Any = None) -> List[Tuple[str, Any]]:
    result: dict = {"protocolVersion": 1, "agentInfo": {"name": "a", "version": "1"}}
    if caps is not None:
        result["agentCapabilities"] = caps
    return [INIT, (A, {"jsonrpc": "2.0", "id": 0, "result": result}), NEW, NEW_OK]


# -- the level model ------------------------------------------------------------------------------


def test_levels_fail_only_at_MUST_and_gaps_only_when_strict() -> None:
    assert register.fails("MUST") and register.fails("MUST NOT")
    for level in ("SHOULD", "SHOULD NOT", "MAY", "spec-gap", "warning"):
        assert not register.fails(level)
    assert register.fails("spec-gap", strict_gaps=True)
    assert not register.fails("warning", strict_gaps=True)
    # acpref's own decisions are reported as spec-gap, whatever strength its own sides give them.
    assert register.level_of("spec-gap:unknown-session") == "spec-gap"
    assert register.strength_of("spec-gap:unknown-session") == "MUST"
    gap = finding("spec-gap:unknown-session", Party.AGENT, "x", 3)
    assert gap.binding and not gap.is_violation and gap.fails(strict_gaps=True)


def test_MUST_findings_carry_their_quote_and_wire_line_in_json() -> None:
    f = finding("SETUP-07", Party.AGENT, "chunk after the response", 9)
    data = f.as_dict()
    assert data["index"] == 9 and data["level"] == "MUST"
    assert data["quote"]["source"] == "session-setup.mdx"
    assert "MUST respond to the original `session/load` request" in data["quote"]["text"]


# -- demoted rules: a conforming but unusual peer gets no FAIL -------------------------------------


def test_INIT_04_omitted_agentCapabilities_is_the_default() -> None:
    report = validate(_records(*_initialized()))
    assert report.findings == [], report.format_text()


def test_INIT_04_still_needs_an_integer_protocolVersion() -> None:
    bad = [INIT, (A, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "1"}})]
    assert "INIT-04" in [f.clause for f in validate(_records(*bad)).violations]


def test_INIT_04_check_agent_passes_an_agent_without_agentCapabilities() -> None:
    options = AgentCheckOptions(only=("handshake",))
    report = check_agent([PY, str(UNUSUAL), "NoCapabilities"], options)
    assert report.passed("INIT-04") and report.ok, report.format_text(full=True)


def test_EXT_04_unstable_and_unknown_fields_are_warnings_naming_their_origin() -> None:
    caps = {"sessionCapabilities": {"fork": {}, "acmeTurbo": True}}
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    answer = (
        A,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"stopReason": "end_turn", "usage": {"totalTokens": 1}},
        },
    )
    report = validate(_records(*_initialized(caps), prompt, answer))
    assert report.ok and report.violations == []
    messages = [f.message for f in report.warnings if f.clause == "EXT-04"]
    assert all(f.level == "warning" for f in report.warnings)
    joined = " | ".join(messages)
    fork = "sessionCapabilities.fork (unstable: schema.unstable.json SessionCapabilities.fork)"
    assert fork in joined
    assert "sessionCapabilities.acmeTurbo (unknown:" in joined
    assert "result.usage (unstable: schema.unstable.json PromptResponse.usage)" in joined


def test_EXT_04_a_message_with_unknown_keys_is_still_judged_on_the_rest() -> None:
    answer = (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": 7, "models": {}}})
    report = validate(_records(*_initialized()[:3], answer))
    assert [f.level for f in report.findings if f.clause == "EXT-04"] == ["warning"]
    assert report.violations, report.format_text()  # the integer sessionId is still a violation


def test_EXT_04_check_agent_warns_on_unstable_fields_and_passes() -> None:
    report = check_agent(
        [PY, str(UNUSUAL), "UnstableFields"], AgentCheckOptions(only=("handshake", "prompt"))
    )
    assert report.ok, report.format_text(full=True)
    assert not report.failed("EXT-04")
    text = " ".join(w["message"] for w in report.warnings())
    assert "SessionCapabilities.fork" in text and "result.models (unknown:" in text
    assert "warnings (" in report.format_text()


def test_SETUP_16_close_answered_before_the_cancelled_prompt_is_a_spec_gap() -> None:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    close = CLOSE
    closed = (A, {"jsonrpc": "2.0", "id": 6, "result": {}})
    cancelled = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "cancelled"}})
    caps = {"sessionCapabilities": {"close": {}}}
    report = validate(_records(*_initialized(caps), prompt, close, closed, cancelled))
    assert report.violations == [], report.format_text()
    assert [(f.clause, f.level, f.index) for f in report.gaps] == [
        ("spec-gap:close-order", "spec-gap", 6)
    ]
    assert not report.failing() and report.failing(strict_gaps=True)


def test_SETUP_16_check_agent_passes_an_agent_that_answers_close_first() -> None:
    options = AgentCheckOptions(cancel_prompt="tool", only=("close",))
    report = check_agent([PY, str(UNUSUAL), "ClosesFirst"], options)
    assert report.passed("SETUP-16") and report.ok, report.format_text(full=True)
    assert report.failed("spec-gap:close-order")
    assert report.results["spec-gap:close-order"].level == "spec-gap"
    assert report.failing(strict_gaps=True)


# -- the report's listings and its output ----------------------------------------------------------


def _report() -> CheckReport:
    report = CheckReport(subject="agent", command=["my-agent"])
    report._record("SETUP-07", "FAIL", "load", "#9: user_message_chunk after the response")
    report._record("PROMPT-11", "PASS", "prompt")
    report._record("SETUP-12", "SKIPPED", "resume", "the agent does not advertise resume")
    report._record("spec-gap:exit-on-eof", "FAIL", "load", "no exit within 5s")
    return report


def test_passed_failed_skipped_list_rows_and_answer_questions() -> None:
    report = _report()
    assert [r.clause for r in report.failed()] == ["SETUP-07", "spec-gap:exit-on-eof"]
    assert [r.clause for r in report.passed()] == ["PROMPT-11"]
    assert [r.clause for r in report.skipped()] == ["SETUP-12"]
    assert report.failed("SETUP-07") and not report.failed("PROMPT-11")
    assert report.passed("PROMPT-11") and report.skipped("SETUP-12")
    assert not report.passed("NOPE-01")
    assert [r.clause for r in report.failing()] == ["SETUP-07"]
    assert [r.clause for r in report.failing(strict_gaps=True)] == [
        "SETUP-07",
        "spec-gap:exit-on-eof",
    ]


def test_output_lists_failures_first_with_quote_and_evidence_and_counts_the_rest() -> None:
    text = _report().format_text()
    lines = text.splitlines()
    assert lines[:4] == [
        "FAILED (1):",
        "  SETUP-07 (MUST) in load",
        '    spec (session-setup.mdx): "When all the conversation entries have been streamed to '
        'the Client, the Agent MUST respond to the original `session/load` request."',
        "    [load] #9: user_message_chunk after the response",
    ]
    assert lines[4].startswith("not failing the check (1")
    assert "  spec-gap:exit-on-eof (spec-gap) in load" in lines
    counts = "not ok: 1 passed, 2 failed (1 MUST, 1 spec-gap; 1 failing the check), 1 skipped"
    assert counts in lines
    assert lines[-1] == (
        "failing the run: 1 MUST; not failing the run: 1 spec-gap; --strict-gaps would fail on them"
    )
    assert "PROMPT-11" not in text and "SETUP-12" not in text  # passes and skips: counts only
    full = _report().format_text(full=True)
    assert "PROMPT-11" in full and "SETUP-12" in full and full.startswith(text)


def test_validate_text_puts_violations_first_with_their_quote(tmp_path: Path) -> None:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    # a non-string stop reason: an undefined string would be a forward-compatibility warning
    bad = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": 5, "acme": 1}})
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in _records(*_initialized(), prompt, bad)))
    run = subprocess.run(
        [PY, "-m", "acpref", "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0] == "6 messages, findings: 1 MUST, 1 warning"
    assert lines[1] == "failing the run (1):" and "PROMPT-17" in lines[2]
    assert lines.index("failing the run (1):") < lines.index("not failing the run (1):")
    assert lines[-1].startswith("failing the run: 1 MUST; not failing the run: 1 warning")


@pytest.mark.parametrize("strict", [False, True])
def test_validate_strict_gaps_fails_on_a_gap(tmp_path: Path, strict: bool) -> None:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    close = CLOSE
    closed = (A, {"jsonrpc": "2.0", "id": 6, "result": {}})
    cancelled = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "cancelled"}})
    caps = {"sessionCapabilities": {"close": {}}}
    path = tmp_path / "t.jsonl"
    records = _records(*_initialized(caps), prompt, close, closed, cancelled)
    path.write_text("\n".join(json.dumps(r) for r in records))
    argv = [PY, "-m", "acpref", "validate", str(path), *(["--strict-gaps"] if strict else [])]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert run.returncode == (1 if strict else 0), run.stdout
    assert "spec-gap:close-order" in run.stdout


def test_the_pytest_plugin_imports_no_driver_or_oracle() -> None:
    code = (
        "import sys, acpref.testing.plugin\n"
        "heavy = [m for m in sys.modules if m.startswith(('acpref.testing._', 'acpref.oracle',"
        " 'acpref.connection', 'acpref.codec'))]\n"
        "print(heavy)\n"
    )
    run = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "[]", run.stdout + run.stderr


# -- forward compatibility: the packaged table of unstable fields ---------------------------------


def test_unstable_table_matches_the_spec_unstable_schema(spec_dir: Path) -> None:
    unstable = spec_dir / "schema.unstable.json"
    if not unstable.is_file():
        pytest.skip(f"{spec_dir} has no schema.unstable.json")
    from acpref._core.compat import unstable_fields

    stable = json.loads((spec_dir / "schema.json").read_text(encoding="utf-8"))["$defs"]
    newer = json.loads(unstable.read_text(encoding="utf-8"))["$defs"]
    expected = {
        (name, field)
        for name, d in newer.items()
        if name in stable
        for field in set(d.get("properties") or {}) - set(stable[name].get("properties") or {})
    }
    assert set(unstable_fields()) == expected


# -- the quotes: every level comes from the sentence it quotes ------------------------------------

#: The RFC 2119 keywords that give each level (decisions.md must-quote: MUST, SHALL, SHOULD and
#: MAY in any case, since the carried pages cite neither RFC 2119 nor RFC 8174; REQUIRED,
#: RECOMMENDED and OPTIONAL in capitals only). A schema ``required`` list gives MUST.
KEYWORDS = {
    "MUST": r"\b(?i:MUST|SHALL)\b(?!\s+(?i:NOT|never)\b)|\bREQUIRED\b",
    "MUST NOT": r"\b(?i:MUST NOT|SHALL NOT|MUST never)\b",
    "SHOULD": r"\b(?i:SHOULD)\b(?!\s+(?i:NOT)\b)|\bRECOMMENDED\b",
    "SHOULD NOT": r"\b(?i:SHOULD NOT)\b",
    "MAY": r"\b(?i:MAY)\b|\bOPTIONAL\b",
}


def _normalised(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a markdown link reads as its text
    return " ".join(text.replace("**", "").split())


def _descriptions(node: Any) -> List[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for v in node.values() for d in _descriptions(v)]
    if isinstance(node, list):
        return [d for v in node for d in _descriptions(v)]
    return []


def _emitted_clauses() -> List[str]:
    root = HERE.parent / "acpref"
    found = set()
    for path in root.rglob("*.py"):
        found.update(re.findall(r'"([A-Z]+-\d\d)"', path.read_text(encoding="utf-8")))
    return sorted(c for c in found if c in register.clauses())


def _emitted_gaps() -> List[str]:
    root = HERE.parent / "acpref"
    found = set()
    for path in root.rglob("*.py"):
        found.update(re.findall(r'"spec-gap:([a-z0-9-]+)"', path.read_text(encoding="utf-8")))
    return sorted(found)


def _decision(name: str) -> str:
    """The text of the decision ``### name`` of spec_notes/decisions.md, up to the next heading."""
    text = (HERE.parent / "spec_notes" / "decisions.md").read_text(encoding="utf-8")
    match = re.search(rf"^### {re.escape(name)}\n(.*?)(?=^##)", text + "\n##", re.M | re.S)
    assert match, f"decisions.md has no decision {name!r}"
    return match.group(1)


def _demoted() -> dict:
    """Clause -> reason, from the table of decisions.md ``unquoted``."""
    rows = re.findall(r"^\| ([A-Z]+-\d\d) \| (.+) \|$", _decision("unquoted"), re.M)
    return dict(rows)


def test_every_quote_occurs_in_the_spec_source_it_names(spec_dir: Path) -> None:
    schemas = {
        name: json.loads((spec_dir / name).read_text(encoding="utf-8"))["$defs"]
        for name in ("schema.json", "schema.unstable.json")
    }
    wrong = []
    for clause, quote in register.quotes().items():
        schema, _, path = quote.source.partition("#/$defs/")
        if path:
            name, _, tail = path.partition("/")
            node = schemas[schema].get(name, {})
            if tail == "required":
                wanted = quote.text.removeprefix("required: ").split(", ")
                ok = quote.text.startswith("required: ") and set(wanted) <= set(
                    node.get("required", [])
                )
            else:
                ok = any(_normalised(quote.text) in _normalised(d) for d in _descriptions(node))
        else:
            # A page of the carried spec, or the JSON-RPC 2.0 sentences carried beside it.
            folder = spec_dir if quote.source == "jsonrpc-2.0.md" else spec_dir / "v1"
            page = folder / quote.source
            ok = page.is_file() and _normalised(quote.text) in _normalised(
                page.read_text(encoding="utf-8")
            )
        if not ok:
            wrong.append((clause, quote.source, quote.text[:60]))
    assert not wrong, wrong


def test_the_level_of_every_quote_is_the_keyword_of_its_sentence() -> None:
    # A level changes only with its sentence: the keyword of the quoted words decides it.
    wrong = []
    for clause, quote in register.quotes().items():
        if quote.source.endswith("/required"):
            ok = quote.level == "MUST"
        else:
            pattern = KEYWORDS.get(quote.level)
            ok = pattern is not None and re.search(pattern, _normalised(quote.text)) is not None
        if not ok or len(quote.text) > 300:
            wrong.append((clause, quote.level, quote.text[:80]))
    assert not wrong, wrong


#: The provisional clauses the rules check whose only source is the unstable shape (a
#: ``required`` list or a definition): warnings until a stable schema confirms them.
PROVISIONAL_SHAPES = {"PLANOP-03", "PLANOP-08", "SUBAGENT-21"}


def test_every_emitted_clause_is_graded_by_its_sentence_or_a_named_decision() -> None:
    demoted = _demoted()
    for clause in _emitted_clauses():
        quote = register.quote_of(clause)
        level, row = register.level_of(clause), register.clauses()[clause]
        if quote is not None and not quote.source.endswith("/required"):
            assert level == quote.level, clause  # the sentence's keyword, provisional or not
        elif register.is_provisional(clause):
            assert level == "warning" and clause in PROVISIONAL_SHAPES, clause
        elif quote is not None:
            assert level == "MUST", clause  # a required list of the stable schema
        else:
            assert level == "spec-gap" and clause in demoted, clause
            assert register.strength_of(clause) == row.level  # acpref's own sides obey
    # The table of unquoted clauses names exactly the unquoted clauses the rules check.
    unquoted = {
        c
        for c in _emitted_clauses()
        if not register.is_provisional(c) and register.quote_of(c) is None
    }
    assert unquoted == set(demoted)


def test_every_spec_gap_decision_says_why_no_sentence_settles_it() -> None:
    gaps = _emitted_gaps()
    named = {g.removeprefix("spec-gap:") for g in register.GAP_LEVELS}
    assert len(gaps) >= 18 and named <= set(gaps) | {"plan-file-variant"}
    for name in [*gaps, "unquoted", "must-quote", "provisional-features"]:
        assert "**Why no sentence settles it.**" in _decision(name), name
        assert register.level_of(f"spec-gap:{name}") == "spec-gap"


def test_each_stabilized_feature_fails_on_its_MUST_sentences() -> None:
    # provisional-features: the capability gates of plan operations and subagents, and the
    # system prompt's own rules, are sentences; only the unstable shape alone is a warning.
    assert register.level_of("PLANOP-01") == register.level_of("SUBAGENT-01") == "MUST NOT"
    assert register.level_of("SYSPROMPT-02") == register.level_of("SYSPROMPT-05") == "MUST"
    assert register.level_of("SYSPROMPT-09") == "MUST NOT"
    assert register.level_of("SYSPROMPT-11") == "SHOULD"
    assert {register.level_of(c) for c in PROVISIONAL_SHAPES} == {"warning"}


def test_the_level_is_the_sentences_not_the_registers() -> None:
    # EXT-10: the register says SHOULD, and so does its sentence; OVERVIEW-09's answered
    # notification is JSON-RPC's MUST NOT; RPC-12's definition of -32601 fails nothing.
    assert register.level_of("EXT-10") == "SHOULD"
    assert register.quote_of("OVERVIEW-09").source == "jsonrpc-2.0.md"  # type: ignore[union-attr]
    assert register.level_of("OVERVIEW-09") == "MUST NOT"
    assert register.level_of("RPC-12") == "spec-gap"
    assert register.level_of("TOOL-08") == "spec-gap"


def test_SETUP_08_a_null_load_result_as_in_the_docs_is_not_a_failure() -> None:
    caps = {"loadSession": True}
    load = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/load",
            "params": {"sessionId": "s1", "cwd": "/", "mcpServers": []},
        },
    )
    answer = (A, {"jsonrpc": "2.0", "id": 2, "result": None})
    report = validate(_records(*_initialized(caps), load, answer))
    assert report.violations == [], report.format_text()
    assert "SETUP-08" in [f.clause for f in report.gaps]


def test_TOOL_05_an_update_of_an_unknown_tool_call_is_a_spec_gap() -> None:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t9", "status": "completed"}
    upsert = (
        A,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s1", "update": update},
        },
    )
    done = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn"}})
    report = validate(_records(*_initialized(), prompt, upsert, done))
    assert report.violations == [], report.format_text()
    assert [(f.clause, f.index) for f in report.gaps] == [("TOOL-05", 5)]


# -- evidence keeps its facts ---------------------------------------------------------------------


def test_evidence_keeps_error_data() -> None:
    report = check_agent(
        [PY, str(UNUSUAL), "RefusesWithData"], AgentCheckOptions(only=("prompt",), timeout=10)
    )
    # An error to the session/new the prompt scenario needs: its clauses are not reached, and
    # the reason keeps the error's data.
    evidence = " ".join(e for r in report.skipped() for e in r.evidence)
    assert 'data: {"missing": "ACME_TOKEN"}' in evidence, report.format_text(full=True)
    assert 'data: {"missing": "ACME_TOKEN"}' in report.format_text()


def test_transcript_header_names_the_agent_by_its_command(tmp_path: Path) -> None:
    from acpref.testing import AgentDriver

    argv = [PY, str(UNUSUAL), "NoCapabilities"]
    transcript = tmp_path / "t.jsonl"
    driver = AgentDriver.spawn(argv, transcript=transcript, timeout=10)
    driver.initialize()
    driver.close()
    header = json.loads(transcript.read_text(encoding="utf-8").splitlines()[0])
    assert header["agent"] == " ".join(argv)


# -- the pytest plugin: failures with their quote; spec-gaps only on request ----------------------


def _child_pytest(tmp_path: Path, source: str, *options: str) -> "subprocess.CompletedProcess[str]":
    import importlib.metadata

    names = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    plugin = [] if "acpref" in names else ["-p", "acpref.testing.plugin"]
    (tmp_path / "test_child.py").write_text(source, encoding="utf-8")
    argv = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *options, "test_child.py"]
    return subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=150)


def _agent_test(name: str) -> str:
    broken = HERE / "broken" / "agents.py"
    return f"""
import sys

def test_agent(acp_agent):
    agent = acp_agent([sys.executable, {str(broken)!r}, {name!r}])
    agent.initialize()
    session = agent.new_session("/tmp")
    agent.prompt(session, "hello")
"""


def test_plugin_failure_shows_the_quote_under_the_finding(tmp_path: Path) -> None:
    result = _child_pytest(tmp_path, _agent_test("RelativeLocation"))
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "TOOL-15" in line and "MUST" in line)
    assert lines[at + 1].strip().startswith('spec (overview.mdx): "All file paths in the protocol')


def test_plugin_spec_gaps_fail_only_with_acp_strict_gaps(tmp_path: Path) -> None:
    source = _agent_test("UpdateUnknownSession")
    relaxed = _child_pytest(tmp_path, source)
    assert relaxed.returncode == 0, relaxed.stdout
    # Nothing hides below the fold: the run's end counts what did not fail, and the option.
    assert (
        "acpref: findings of the peers under test not failing the run: 1 spec-gap; "
        "--acp-strict-gaps would fail on them" in relaxed.stdout
    ), relaxed.stdout
    strict = _child_pytest(tmp_path, source, "--acp-strict-gaps")
    assert strict.returncode == 1 and "spec-gap:unknown-session" in strict.stdout, strict.stdout
    named = _child_pytest(tmp_path, source, "--acp-fail-on", "spec-gap")
    assert named.returncode == 1 and "spec-gap:unknown-session" in named.stdout, named.stdout


def test_the_plugins_fail_on_levels_are_the_registers() -> None:
    from acpref.testing import plugin

    assert set(plugin._FAIL_ON) == set(register.FAIL_ON)
    # The same option for each level, in the plugin's spelling (--acp-...).
    assert {level: flag.replace("--acp-", "--") for level, flag in plugin._FLAGS.items()} == (
        register.CLI_FLAGS
    )


def test_cli_names_the_option_that_would_fail_on_what_did_not(tmp_path: Path) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    early = (A, {"jsonrpc": "2.0", "method": "session/update",
                 "params": {"sessionId": "s1", "update": chunk}})  # fmt: skip
    path = tmp_path / "t.jsonl"  # content before any turn: spec-gap content-outside-turn
    lines = [json.dumps(r) + "\n" for r in _records(*_initialized(), early)]
    path.write_text("".join(lines), encoding="utf-8")
    run = [PY, "-m", "acpref", "validate", str(path)]
    plain = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stdout
    last = plain.stdout.strip().splitlines()[-1]
    assert last == "not failing the run: 1 spec-gap; --strict-gaps would fail on them", last
    named = subprocess.run([*run, "--fail-on", "spec-gap"], capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    assert named.returncode == 1, named.stdout


def test_acpref_spec_names_the_oracle_level_and_the_quote() -> None:
    def spec(clause: str) -> str:
        run = subprocess.run(
            [PY, "-m", "acpref", "spec", clause], capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stderr
        return run.stdout

    assert "  oracle level: MUST\n  spec (session-setup.mdx): \"When all" in spec("SETUP-07")
    demoted = spec("SETUP-08")
    assert "  oracle level: spec-gap\n" in demoted and "  spec (" not in demoted


def test_SETUP_11_resume_without_mcpServers_is_a_spec_gap() -> None:
    caps = {"sessionCapabilities": {"resume": {}}}
    params = {"sessionId": "s1", "cwd": "/"}
    resume = (C, {"jsonrpc": "2.0", "id": 2, "method": "session/resume", "params": params})
    resumed = (A, {"jsonrpc": "2.0", "id": 2, "result": {}})
    report = validate(_records(*_initialized(caps), resume, resumed))
    assert report.violations == [], report.format_text()
    assert [(f.clause, f.blame.value) for f in report.gaps] == [("SETUP-11", "client")]
