"""Every finding quotes the sentence its evidence breaks (issue 34, "Quote the sentence").

Spec: the sentence each clause quotes (acpref/_core/quotes.tsv) against what a finding says
happened. ``assert_quotes_fit`` is run on every report of the broken peers of
tests/test_oracle_broken.py (each broken agent's and each broken client's transcript, validated);
the tests here pin each check on a transcript of its own:

* the quote is a sentence of the page the clause names (it belongs to the clause);
* a sentence that binds one party ("The agent MUST ...", "Clients MUST ...") is quoted only
  against that party;
* the evidence fits the sentence: a line that is not one message (a log line, two messages on
  one line) breaks "not a valid ACP message" (TRANSPORT-08 / TRANSPORT-09), a message cut by raw
  newlines breaks "MUST NOT contain embedded newlines" (TRANSPORT-05), bytes that are not UTF-8
  break "MUST be UTF-8 encoded" (TRANSPORT-01); a required field missing or malformed is filed
  under a sentence that names the field (its ``required`` list, or the page's words for it), or
  under "not a valid ACP message" (OVERVIEW-01).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, List, Optional, Set

from acpref._core import Finding, Party
from acpref._core.register import quote_of
from acpref.oracle import Report, validate

SPEC = Path(__file__).resolve().parents[1] / "spec_notes" / "spec"
C, A = "client", "agent"

#: The sentence each kind of bad line breaks: (words of the finding, the clauses that fit).
_LINE_EVIDENCE = [
    ("more than one JSON value on one line", {"TRANSPORT-08", "TRANSPORT-09"}),
    ("not an ACP message on", {"TRANSPORT-08", "TRANSPORT-09"}),
    ("cut by a raw newline", {"TRANSPORT-05"}),
    ("cut by raw newlines", {"TRANSPORT-05"}),
    ("the line is not UTF-8", {"TRANSPORT-01"}),
]
#: A strict shape finding: ``<method> <part>: <path>: <what is wrong>``.
_SHAPE = re.compile(r"^\S+ (?:params|result|error): (?P<path>[\w.\[\]$/-]+): ")
_PARTY = r"(?:[Aa]gents?|[Cc]lients?)"
#: The subject of a keyword: one party, or both ("Clients and Agents MUST", INIT-13).
_BINDS = re.compile(rf"\b({_PARTY}(?:\s+and\s+{_PARTY})?)\s+(?:MUST|SHOULD|must|should)\b")


def _squash(text: str) -> str:
    """The words of ``text``, without markdown emphasis and link targets."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text.replace("*", ""))
    return " ".join(text.split())


def _page_text(source: str) -> str:
    """The text a quote's source names: a page, or the part of a schema its pointer names."""
    page, _, pointer = source.partition("#")
    path = SPEC / page if page.endswith(".json") or page == "jsonrpc-2.0.md" else SPEC / "v1" / page
    text = path.read_text("utf-8")
    if not page.endswith(".json"):
        return text
    node = json.loads(text)
    for step in [s for s in pointer.split("/") if s]:
        node = node[step]
    if pointer.endswith("/required"):
        return "required: " + ", ".join(node)  # the quote lists the required keys, in order
    return " ".join(_descriptions(node))


def _descriptions(node: object) -> Iterable[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "title") and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _descriptions(value)


def _belongs(quote) -> bool:
    """Whether the quote is a sentence of its source (each item of a quoted list too)."""
    page = _squash(_page_text(quote.source))
    pieces = [p.strip(" -") for p in re.split(r" - ", _squash(quote.text))]
    if quote.source.endswith("/required"):
        listed = {k.strip() for k in quote.text.split(":", 1)[1].split(",")}
        return listed == {k.strip() for k in page.split(":", 1)[1].split(",")}
    return all(p[:40] in page for p in pieces if len(p) > 8)


def _bound_parties(text: str) -> Set[str]:
    """The parties a sentence binds: the subject of each of its keywords, when it names one."""
    subjects = " ".join(m.group(1) for m in _BINDS.finditer(text))
    return {p.lower().rstrip("s") for p in re.findall(_PARTY, subjects)}


def _names_field(quote: str, path: str) -> bool:
    """Whether the sentence names the field at ``path`` (the last key, or the first): in a
    ``required`` list, or in its own words (``protocolVersion``: "protocol version")."""
    keys = re.findall(r"[A-Za-z_]\w*", path)[1:]  # past "params" / "result"
    if not keys:
        return False
    if quote.startswith("required:"):
        listed = {k.strip() for k in quote.split(":", 1)[1].split(",")}
        return keys[-1] in listed or keys[0] in listed
    words = [w.lower() for w in re.findall(r"[a-z]+|[A-Z][a-z]*", keys[0]) if w.lower() != "id"]
    lowered = quote.lower()
    return bool(words) and all(w[:4] in lowered for w in words)


def misfits(findings: Iterable) -> List[str]:
    """Each finding whose quoted sentence does not fit it, with why."""
    out = []
    for f in findings:
        if isinstance(f, dict):  # a finding as a check report keeps it (``Finding.as_dict``)
            blame = Party(f["blame"])
            f = Finding(clause=f["clause"], level=f["level"], blame=blame, message=f["message"])
        quote = quote_of(f.clause)
        if quote is None:
            continue  # spec-gap: no sentence quoted
        where = f"{f.clause} ({f.blame.value}) {f.message!r}"
        body = _squash(quote.text)
        if not _belongs(quote):
            out.append(f"{where}: the quote is not a sentence of {quote.source}")
        bound = _bound_parties(body)
        if bound and f.blame.value not in bound:
            out.append(f"{where}: the sentence binds the {', '.join(sorted(bound))} only")
        why = _evidence_misfit(f.clause, f.message, body)
        if why:
            out.append(f"{where}: {why}")
    return out


def _evidence_misfit(clause: str, message: str, quote: str) -> Optional[str]:
    for words, clauses in _LINE_EVIDENCE:
        if words in message and clause not in clauses:
            return f"evidence {words!r} breaks {sorted(clauses)}, not this sentence"
    shape = _SHAPE.match(message)
    if shape and ("required key is missing" in message or "expected" in message):
        if clause != "OVERVIEW-01" and not _names_field(quote, shape.group("path")):
            return f"the sentence does not name {shape.group('path')}"
    return None


def assert_quotes_fit(report: Report) -> None:
    wrong = misfits(report.findings)
    assert not wrong, "\n".join(wrong) + "\n" + report.format_text()


# -- Each check, on a transcript of its own ---------------------------------------------------------

INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {},
    "clientInfo": {"name": "c", "version": "1"},
}


def _report(*lines: tuple) -> Report:
    return validate(
        [{"from": s, "ts": 0, "line": line} for s, line in lines]
        + [{"from": C, "ts": 0, "event": "eof"}]
    )


def test_two_messages_on_one_line_quote_not_a_valid_ACP_message() -> None:
    line = json.dumps({"jsonrpc": "2.0", "method": "_x", "params": {}}) * 2
    for sender, clause in ((A, "TRANSPORT-08"), (C, "TRANSPORT-09")):
        report = _report((sender, line))
        assert [f.clause for f in report.findings] == [clause]
        assert "not a valid ACP message" in quote_of(clause).text
        assert_quotes_fit(report)


def test_a_misfiled_two_messages_line_is_caught() -> None:
    # The old filing: TRANSPORT-04, whose sentence forbids embedded newlines.
    line = json.dumps({"jsonrpc": "2.0", "method": "_x", "params": {}}) * 2
    (finding,) = _report((A, line)).findings
    wrong = misfits([_with(finding, clause="TRANSPORT-04")])
    assert wrong and "breaks ['TRANSPORT-08', 'TRANSPORT-09']" in wrong[0]


def test_a_sentence_that_binds_the_agent_quoted_against_the_client_is_caught() -> None:
    (finding,) = _report((A, "log: hello")).findings
    assert finding.clause == "TRANSPORT-08" and not misfits([finding])
    wrong = misfits([_with(finding, clause="TRANSPORT-09")])
    assert any("binds the client only" in w for w in wrong), wrong


def test_a_missing_field_under_a_sentence_that_does_not_name_it_is_caught() -> None:
    params = {k: v for k, v in INIT.items() if k != "protocolVersion"}
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    report = _report((C, json.dumps(request)))
    (finding,) = [f for f in report.findings if "protocolVersion" in f.message]
    assert finding.clause == "INIT-02" and not misfits([finding])
    assert misfits([_with(finding, clause="SETUP-15")])  # "with the session ID"
    assert not misfits([_with(finding, clause="OVERVIEW-01")])  # not a valid ACP message


def test_a_message_cut_by_raw_newlines_quotes_embedded_newlines() -> None:
    pretty = json.dumps({"jsonrpc": "2.0", "method": "_x", "params": {"a": 1}}, indent=2)
    report = _report(*[(A, line) for line in pretty.split("\n")])
    assert [f.clause for f in report.findings] == ["TRANSPORT-05"]
    assert "embedded newlines" in quote_of("TRANSPORT-05").text
    assert_quotes_fit(report)


def _with(finding, **changes):
    import attrs

    return attrs.evolve(finding, **changes)


def test_every_quote_is_a_sentence_of_its_page() -> None:
    from acpref._core.register import quotes

    wrong = []
    for clause, quote in quotes().items():
        if not _belongs(quote):
            wrong.append(f"{clause}: {quote.text!r} not in {quote.source}")
    assert not wrong, "\n".join(wrong)
