"""``acpref show``: the layout of a transcript as a sequence diagram, and the page it writes.

The layout (``acpref.oracle._show``) is tested on transcripts built record by record: requests
paired with their answers in each direction, turns, runs of updates folded (never over a
finding), findings placed on the message that caused them, hostile text made inert. The page
(``acpref._tools.show_html``) is tested for what it must never do: run a peer's text as markup,
or reach for anything outside itself. ``tests/test_show_browser.py`` looks at the page in a browser.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, List

from acpref.oracle import Record
from acpref.oracle._show import FOLD_MIN, Fold, build_layout, inert, level_class
from acpref._tools.show_html import SPEC_SITE, render_html, spec_link
from acpref.oracle._validate import Report, validate
from acpref._core import Finding, Party

SESSION = "sess-1"


class Wire:
    """Builds a transcript: each call adds one record, a tenth of a second after the last."""

    def __init__(self) -> None:
        self.records: List[Record] = []

    def send(self, sender: str, message: Any) -> "Wire":
        line = message if isinstance(message, str) else json.dumps(message)
        self.records.append(
            Record(sender=sender, ts=100.0 + len(self.records) / 10, raw=line.encode())
        )
        return self

    def request(self, sender: str, id: Any, method: str, params: Any) -> "Wire":
        return self.send(sender, {"jsonrpc": "2.0", "id": id, "method": method, "params": params})

    def answer(self, sender: str, id: Any, result: Any) -> "Wire":
        return self.send(sender, {"jsonrpc": "2.0", "id": id, "result": result})

    def say(self, text: str, session: str = SESSION) -> "Wire":
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        return self.send(
            "agent",
            {"jsonrpc": "2.0", "method": "session/update",
             "params": {"sessionId": session, "update": update}},
        )

    def setup(self) -> "Wire":
        self.request("client", 0, "initialize",
                     {"protocolVersion": 1, "clientCapabilities": {},
                      "clientInfo": {"name": "c", "version": "1"}})
        self.answer("agent", 0, {"protocolVersion": 1, "agentCapabilities": {},
                                 "authMethods": [], "agentInfo": {"name": "a", "version": "1"}})
        self.request("client", 1, "session/new", {"cwd": "/tmp", "mcpServers": []})
        return self.answer("agent", 1, {"sessionId": SESSION})

    def prompt(self, id: Any, text: str = "hi") -> "Wire":
        return self.request("client", id, "session/prompt",
                            {"sessionId": SESSION, "prompt": [{"type": "text", "text": text}]})

    def eof(self) -> "Wire":
        self.records.append(Record(sender="client", ts=200.0, event="eof"))
        return self


def test_requests_are_paired_with_their_answers_in_each_direction():
    w = Wire().setup().prompt(2)
    # The agent's request reuses id 2 in its own direction: a different request.
    w.request("agent", 2, "session/request_permission",
              {"sessionId": SESSION, "toolCall": {"toolCallId": "t"},
               "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]})
    w.answer("client", 2, {"outcome": {"outcome": "selected", "optionId": "ok"}})
    w.answer("agent", 2, {"stopReason": "end_turn"})
    rows = build_layout(w.records).rows
    assert [(r.kind, r.pair) for r in rows[:4]] == [
        ("request", 1), ("response", 0), ("request", 3), ("response", 2)]
    assert (rows[4].pair, rows[5].pair, rows[6].pair, rows[7].pair) == (7, 6, 5, 4)
    assert rows[6].method == "session/request_permission"
    assert "session/request_permission result ok" == rows[6].label
    assert rows[7].label == "session/prompt result end_turn"
    assert rows[5].sender == "agent" and rows[5].receiver == "client"


def test_an_id_of_another_json_type_answers_nothing():
    w = Wire().setup().prompt(7)
    w.answer("agent", "7", {"stopReason": "end_turn"})  # "7" is not 7 (RPC-04)
    layout = build_layout(w.records)
    stray = layout.rows[-1]
    assert stray.pair is None and stray.method is None
    assert "no request has id \"7\"" in stray.label
    assert layout.rows[4].pair is None
    assert [layout.findings[i].clause for i in stray.findings] == ["RPC-04"]


def test_lines_nobody_can_read_say_why():
    w = Wire().setup()
    w.records.append(Record(sender="agent", ts=101.0, raw=b"\xff\xfe not UTF-8"))
    w.send("agent", "[1, 2]").send("agent", "{broken")
    rows = build_layout(w.records).rows[4:]
    assert [r.kind for r in rows] == ["invalid"] * 3
    assert rows[0].label == "unreadable line (not UTF-8): \\xff\\xfe not UTF-8"
    assert rows[0].raw == "\\xff\\xfe not UTF-8" and rows[0].size == 12
    assert "(a JSON list)" in rows[1].label and "(not JSON)" in rows[2].label


def test_a_null_id_error_answers_the_unreadable_line():
    w = Wire().setup()
    w.send("agent", "agent starting")
    w.send("client", {"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32700, "message": "Parse error"}})
    rows = build_layout(w.records).rows
    assert rows[4].kind == "invalid" and rows[5].kind == "error"
    assert rows[4].pair == 5 and rows[5].pair == 4
    assert "unreadable" in rows[5].label


def test_a_turn_holds_the_messages_of_its_session_until_its_answer():
    w = Wire().setup().prompt(2, "do it").say("a").say("b")
    w.answer("agent", 2, {"stopReason": "cancelled"})
    w.say("late")
    layout = build_layout(w.records)
    (turn,) = layout.turns
    assert (turn.request, turn.answer) == (4, 7)
    assert (turn.label, turn.outcome) == ("“do it”", "cancelled")
    assert [r.turn for r in layout.rows[4:9]] == [0, 0, 0, 0, None]
    assert layout.summary["turns"] == 1 and layout.summary["sessions"] == 1


def test_a_long_run_of_updates_is_one_fold_and_a_short_one_is_not():
    w = Wire().setup().prompt(2)
    for i in range(FOLD_MIN):
        w.say(f"w{i} ")
    w.answer("agent", 2, {"stopReason": "end_turn"}).prompt(3)
    for i in range(FOLD_MIN - 1):
        w.say("x")
    w.answer("agent", 3, {"stopReason": "end_turn"})
    layout = build_layout(w.records)
    folds = [it for it in layout.items if isinstance(it, Fold)]
    assert folds == [Fold(first=5, last=4 + FOLD_MIN, label=folds[0].label)]
    kinds = f"(agent_message_chunk ×{FOLD_MIN})"
    assert folds[0].label.startswith(f"{FOLD_MIN} session/update {kinds}")
    assert "“w0 w1 w2" in folds[0].label
    # Every row is shown once: in a fold or as itself.
    covered = []
    for it in layout.items:
        covered.extend(range(it.first, it.last + 1) if isinstance(it, Fold) else [it])
    assert covered == list(range(len(layout.rows)))


def test_a_finding_is_never_folded_away():
    w = Wire().setup().prompt(2)
    for i in range(10):
        w.say(f"{i}")
    w.answer("agent", 2, {"stopReason": "end_turn"})
    records = list(w.records)
    # The sixth update names no session: the oracle finds it (its shape), and the fold splits.
    bad = json.loads(records[10].raw)
    del bad["params"]["sessionId"]
    records[10] = Record(sender="agent", ts=records[10].ts, raw=json.dumps(bad).encode())
    layout = build_layout(records)
    assert layout.rows[10].findings
    assert 10 in layout.items
    assert not any(isinstance(it, Fold) and it.first <= 10 <= it.last for it in layout.items)


def test_updates_of_two_sessions_fold_apart():
    w = Wire().setup()
    w.request("client", 2, "session/new", {"cwd": "/tmp", "mcpServers": []})
    w.answer("agent", 2, {"sessionId": "sess-2"}).prompt(3)
    w.request("client", 4, "session/prompt",
              {"sessionId": "sess-2", "prompt": [{"type": "text", "text": "two"}]})
    for i in range(FOLD_MIN):
        w.say("a")
    for i in range(FOLD_MIN):
        w.say("b", session="sess-2")
    layout = build_layout(w.records)
    assert not layout.findings
    folds = [it for it in layout.items if isinstance(it, Fold)]
    spans = [(f.first, f.last) for f in folds]
    assert spans == [(8, 7 + FOLD_MIN), (8 + FOLD_MIN, 7 + 2 * FOLD_MIN)]
    assert [t.session for t in layout.turns] == [SESSION, "sess-2"]


def test_findings_sit_on_the_message_that_caused_them_or_at_the_end():
    w = Wire().setup().prompt(2)  # never answered: the oracle blames the request at the end
    w.send("agent", {"jsonrpc": "1.0", "method": "session/update",
                     "params": {"sessionId": SESSION, "update": {
                         "sessionUpdate": "agent_message_chunk",
                         "content": {"type": "text", "text": "x"}}}})
    w.eof()
    report = validate(w.records)
    layout = build_layout(w.records, report)
    assert len(layout.findings) == len(report.findings)
    by_clause = {f.clause: f for f in layout.findings}
    assert (by_clause["RPC-01"].row, by_clause["RPC-01"].index) == (5, 5)
    assert (by_clause["RPC-06"].row, by_clause["RPC-06"].index) == (4, 4)
    assert layout.rows[5].findings == (layout.findings.index(by_clause["RPC-01"]),)
    # RPC-01 quotes JSON-RPC 2.0's sentence, carried beside the pages (jsonrpc-2.0.md).
    assert by_clause["RPC-01"].requirement.startswith("jsonrpc: A String specifying the version")
    assert by_clause["RPC-01"].page == "jsonrpc-2.0.md"
    assert spec_link("jsonrpc-2.0.md", None, None) == "https://www.jsonrpc.org/specification"
    assert layout.summary["levels"]["MUST"] == 2
    # A finding of no message in particular goes on the last row.
    nowhere = Finding(clause="RPC-06", level="MUST", blame=Party.AGENT, message="m")
    layout = build_layout(w.records, Report(findings=[nowhere], messages=6))
    assert layout.findings[0].row == len(layout.rows) - 1
    assert layout.rows[-1].findings == (0,)


def test_level_classes():
    def f(clause: str, level: str) -> Finding:
        return Finding(clause=clause, level=level, blame=Party.AGENT, message="m")

    assert level_class(f("RPC-01", "MUST NOT")) == "MUST"
    assert level_class(f("RPC-03", "SHOULD")) == "SHOULD"
    assert level_class(f("spec-gap:duplicate-id", "MUST")) == "spec-gap"
    # A clause no keyworded sentence states is reported at spec-gap and drawn so (SETUP-08).
    assert level_class(f("SETUP-08", "spec-gap")) == "spec-gap"
    assert level_class(f("EXT-04", "MAY")) == "warning"


def test_terminals_get_their_own_lane():
    w = Wire().setup().prompt(2)
    w.request("agent", 9, "terminal/create", {"sessionId": SESSION, "command": "ls"})
    w.answer("client", 9, {"terminalId": "t1"})
    layout = build_layout(w.records)
    assert layout.lanes == ["client", "terminals", "agent"]
    assert (layout.rows[5].sender, layout.rows[5].receiver) == ("agent", "terminals")
    assert (layout.rows[6].sender, layout.rows[6].receiver) == ("terminals", "agent")


HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror="alert(1)">'


def test_hostile_text_is_inert_in_the_layout_and_escaped_in_the_page(tmp_path):
    w = Wire().setup().prompt(2, HOSTILE)
    w.say("\x1b[31mred\u202eevil\x00")
    w.send("agent", "<b>not json</b>\x07")
    w.answer("agent", 2, {"stopReason": "end_turn"})
    layout = build_layout(w.records)
    for row in layout.rows:
        assert not re.search("[\x00-\x1f\x7f\u202e]", row.label + row.raw), row
    assert "\\u001b[31mred\\u202eevil\\u0000" in layout.rows[5].label
    page = render_html([("t<i>x</i>.jsonl", layout)], title="acpref show: t<i>x</i>.jsonl")
    # The page's own elements only: the peer's markup never appears as markup.
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<img" not in page and "<b>not json" not in page and "<i>x</i>" not in page
    assert "&lt;i&gt;x&lt;/i&gt;" in page
    data = re.search(r'<script type="application/json" class="acpref-data">(.*?)</script>',
                     page, re.S).group(1)
    decoded = json.loads(data)
    assert HOSTILE[:40] in decoded["rows"][4][4]  # the text itself, kept for the script to escape
    assert "function esc(s)" in page and "esc(r[4])" in page


def test_the_page_reaches_for_nothing_outside_itself():
    layout = build_layout(Wire().setup().records)
    page = render_html([("x", layout)], title="x")
    assert not re.search(r"\ssrc=|<link|@import|url\(|<iframe|fetch\(|XMLHttpRequest", page)


def test_the_page_carries_its_stylesheet_script_and_legend_from_the_package_data():
    # show.css, show.js and show_legend.html are data files of acpref._tools (setup.cfg ships
    # them; tests/test_packaging.py checks the wheel): each is written into the page whole,
    # the stylesheet in <style>, the script in the last <script>, the legend in the header.
    tools = Path(__file__).resolve().parent.parent / "acpref" / "_tools"
    page = render_html([("x", build_layout(Wire().setup().records))], title="x")
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert style == (tools / "show.css").read_text(encoding="utf-8")
    assert "</style>" not in style and ".chip.lv-MUST" in style
    script = re.findall(r"<script>(.*?)</script>", page, re.S)[-1]
    assert script == (tools / "show.js").read_text(encoding="utf-8")
    assert "var COLOURS = " in script and "function esc(s)" in script
    legend = (tools / "show_legend.html").read_text(encoding="utf-8")
    assert legend in page and page.index(legend) < page.index("</header>")


def test_spec_links(tmp_path):
    root = tmp_path / "repo"
    (root / "spec_notes" / "spec" / "v1").mkdir(parents=True)
    (root / "spec_notes" / "spec" / "v1" / "prompt-turn.mdx").write_text("x")
    (root / "spec_notes" / "spec" / "schema.json").write_text("{}")
    inside = root / "out" / "r.html"
    inside.parent.mkdir()
    page = spec_link("prompt-turn.mdx", str(inside), str(root))
    assert page == "../spec_notes/spec/v1/prompt-turn.mdx"
    schema = spec_link("schema.json", str(root / "r.html"), str(root))
    assert schema == "spec_notes/spec/schema.json"
    outside = tmp_path / "elsewhere" / "r.html"
    assert spec_link("prompt-turn.mdx", str(outside), str(root)) == (
        "file://" + str((root / "spec_notes/spec/v1/prompt-turn.mdx").resolve()))
    assert spec_link("prompt-turn.mdx", str(outside), None) == SPEC_SITE + "prompt-turn"
    assert spec_link("terminals.mdx", str(inside), str(root)) == SPEC_SITE + "terminals"


def test_inert():
    assert inert("a\tb\x1b\u2066c\u200f") == "a\\u0009b\\u001b\\u2066c\\u200f"
    assert inert("plain “text” é") == "plain “text” é"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "acpref", "show", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_cli_writes_beside_the_transcript_or_where_told(tmp_path):
    transcript = tmp_path / "run.jsonl"
    transcript.write_text(
        "".join(json.dumps(r.to_json()) + "\n" for r in Wire().setup().prompt(2).records))
    result = _cli(str(transcript), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "run.html")
    page = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "acpref show: run.jsonl" in page
    result = _cli(str(transcript), str(transcript), "-o", str(tmp_path / "two.html"), cwd=tmp_path)
    assert result.returncode == 0 and page.count('class="acpref-data"') == 1
    assert (tmp_path / "two.html").read_text().count('class="acpref-data"') == 2


def test_cli_says_which_file_it_cannot_read(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"from": "agent", "line": \n')
    result = _cli(str(tmp_path / "bad.jsonl"), cwd=tmp_path)
    assert result.returncode == 2 and not result.stdout
    assert "cannot read" in result.stderr and "bad.jsonl" in result.stderr
    assert not (tmp_path / "bad.html").exists()


# -- The same page from the tools that record transcripts -----------------------------------------

PY = sys.executable
HERE = Path(__file__).resolve().parent
SHOW_AGENT = [PY, str(HERE / "peers" / "show_agent.py")]
BROKEN_AGENTS = str(HERE / "broken" / "agents.py")


def _drive_through_proxy(tmp_path: Path, *flags: str) -> str:
    from acpref.testing import AgentDriver

    driver = AgentDriver.spawn([PY, "-m", "acpref", "proxy", "--quiet", *flags, "--", *SHOW_AGENT])
    driver.initialize()
    driver.prompt(driver.new_session(str(tmp_path)), "hi")
    driver.close()
    return driver.stderr


def _clauses_on_page(page: Path) -> set:
    text = page.read_text(encoding="utf-8")
    data = re.findall(r'<script type="application/json" class="acpref-data">(.*?)</script>',
                      text, re.S)
    return {f[0] for part in data for f in json.loads(part)["findings"]}


def test_proxy_report_from_memory_and_from_its_record(tmp_path):
    page = tmp_path / "kept.html"
    stderr = _drive_through_proxy(tmp_path, "--report", str(page))
    assert f"report written to {page}" in stderr
    assert {"TRANSPORT-08", "RPC-04", "spec-gap:content-after-turn"} <= _clauses_on_page(page)
    recorded = tmp_path / "run.jsonl"
    page2 = tmp_path / "recorded.html"
    _drive_through_proxy(tmp_path, "--record", str(recorded), "--report", str(page2))
    assert recorded.exists() and _clauses_on_page(page2) == _clauses_on_page(page)


def test_check_agent_report_has_a_tab_per_scenario(tmp_path):
    page = tmp_path / "check.html"
    result = subprocess.run(
        [PY, "-m", "acpref", "check-agent", "--only", "handshake", "--only", "prompt",
         "--report", str(page), "--", PY, BROKEN_AGENTS, "WrongResponseId"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1  # the check's verdict, unchanged by the report
    assert "RPC-04" in result.stdout and "report written" not in result.stdout
    assert f"report written to {page}" in result.stderr
    text = page.read_text(encoding="utf-8")
    assert '<button data-part="0">handshake' in text and '<button data-part="1">prompt' in text
    assert "RPC-04" in _clauses_on_page(page)
    assert 'data-first="1"' in text  # the scenario with the MUST finding opens first
    assert "The checks, clause by clause" in text


def _headlines(text: str) -> List[tuple]:
    """Every headline of a page: (its level class, its text), the page's own first."""
    import html

    return [(cls, html.unescape(words)) for cls, words in
            re.findall(r'<p class="headline lv-([\w-]+)">(.*?)</p>', text, re.S)]


def test_the_echo_agents_check_agent_page_opens_on_green_as_the_terminal_says(tmp_path):
    # What acpref's driver breaks on purpose (bad input, a forged cursor) is drawn as acpref's
    # probe: the page's first sentence says "ok", as the terminal does, and no tab says that
    # the client broke a rule.
    page = tmp_path / "check.html"
    result = subprocess.run(
        [PY, "-m", "acpref", "check-agent", "--report", str(page), "--", PY, "-m", "acpref",
         "echo"], capture_output=True, text=True, timeout=240,
    )
    assert result.returncode == 0 and result.stdout.startswith("ok: "), result.stdout
    text = page.read_text(encoding="utf-8")
    headlines = _headlines(text)
    assert headlines[0][0] == "ok" and headlines[0][1].startswith("ok: no ")
    assert not [h for h in headlines if re.search(r"\bbroke\b", h[1])], headlines
    assert "acpref's probes, on purpose" in headlines[0][1]
    data = re.findall(r'<script type="application/json" class="acpref-data">(.*?)</script>',
                      text, re.S)
    findings = [f for part in data for f in json.loads(part)["findings"]]
    probes = [f for f in findings if f[2] == "probe"]
    assert {"TRANSPORT-09", "LIST-11"} <= {f[0] for f in probes}
    assert all(f[3].startswith("acpref's probe (the client") for f in probes)
    assert not [f for f in findings if f[2] == "MUST"], findings


def _subject_transcript(path: Path, subject: str) -> Path:
    """A transcript whose client sends a non-JSON line, under a header naming ``subject``."""
    w = Wire().setup()
    w.send("client", "this is not JSON")
    header = {"format": "acpref-transcript/1", "recorder": "client", "subject": subject}
    path.write_text(json.dumps(header) + "\n"
                    + "".join(json.dumps(r.to_json()) + "\n" for r in w.records))
    return path


def test_the_party_not_under_test_is_drawn_as_acprefs_probe(tmp_path):
    # The header names the subject: the other party's findings are probes, counted apart; a
    # transcript with no subject (acpref client --record, the proxy) judges both parties alike.
    driven = build_layout(str(_subject_transcript(tmp_path / "a.jsonl", "agent")))
    assert [f.level_class for f in driven.findings] == ["probe"]
    assert driven.summary["levels"]["MUST"] == 0 and driven.summary["probes"] == 1
    graded = build_layout(str(_subject_transcript(tmp_path / "c.jsonl", "client")))
    assert [f.level_class for f in graded.findings] == ["MUST"]  # check-client: the client's
    plain = Wire().setup().send("client", "this is not JSON").records
    assert [f.level_class for f in build_layout(plain).findings] == ["MUST"]
    # acpref show reads the header from the path it is given.
    result = _cli(str(tmp_path / "a.jsonl"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (cls, words), = _headlines((tmp_path / "a.html").read_text(encoding="utf-8"))
    assert cls == "ok" and "1 finding of acpref's probes" in words and " broke " not in words


def test_a_check_client_transcript_draws_the_grading_agents_probes_grey(tmp_path):
    # check-client's grading agent sends bad input on purpose; its transcript names the client
    # as the subject, so acpref show draws those findings as probes, not as the agent's.
    client = [PY, "-m", "acpref", "client", "--allow", "-p", "check me", "--"]
    subprocess.run([*client, PY, "-m", "acpref", "check-client", "--serve", "R.json"],
                   cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert json.loads((tmp_path / "R.jsonl").read_text().splitlines()[0])["subject"] == "client"
    assert _cli("R.jsonl", cwd=tmp_path).returncode == 0
    (cls, words), = _headlines((tmp_path / "R.html").read_text(encoding="utf-8"))
    assert cls == "ok" and "of acpref's probes" in words and "the agent" not in words, words


def _plugin_args() -> List[str]:
    import importlib.metadata

    names = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    return [] if "acpref" in names else ["-p", "acpref.testing.plugin"]


def test_plugin_names_the_report_it_writes_beside_the_transcript(tmp_path):
    source = f"""
import sys

def test_broken(acp_agent):
    agent = acp_agent([sys.executable, {BROKEN_AGENTS!r}, "RelativeLocation"])
    agent.initialize()
    agent.prompt(agent.new_session("/tmp"), "hello")
"""
    (tmp_path / "test_broken.py").write_text(source, encoding="utf-8")
    result = subprocess.run(
        [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_plugin_args(),
         "--basetemp", str(tmp_path / "base"), str(tmp_path / "test_broken.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=150,
    )
    assert result.returncode == 1
    found = re.search(r"the transcript drawn, findings marked: (\S+\.html)", result.stdout)
    assert found, result.stdout
    page = Path(found.group(1))
    assert page.exists() and page.with_suffix(".jsonl").exists()
    assert "TOOL-15" in _clauses_on_page(page)


def test_a_decision_is_quoted_from_decisions_md():
    gap = Finding(clause="spec-gap:cancel-race", level="SHOULD", blame=Party.AGENT, message="m")
    layout = build_layout(Wire().setup().records, Report(findings=[gap], messages=4))
    (shown,) = layout.findings
    assert shown.level_class == "spec-gap" and shown.page == ""
    page = render_html([("x", layout)], title="x", root=str(HERE.parent))
    data = json.loads(re.search(r'class="acpref-data">(.*?)</script>', page, re.S).group(1))
    quoted = data["findings"][0][6]
    text = (HERE.parent / "spec_notes" / "decisions.md").read_text(encoding="utf-8")
    paragraph = text.split("### cancel-race\n", 1)[1].split("\n\n", 1)[0]
    assert quoted.split()[:6] == paragraph.replace("*", "").replace("`", "").split()[:6]
    assert data["findings"][0][9].endswith("spec_notes/decisions.md")
