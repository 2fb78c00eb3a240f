"""``--junit FILE``: a run's verdicts as JUnit XML, the report format CI systems display.

GitHub Actions (through a test-report action), GitLab (``artifacts:reports:junit``) and Jenkins
(the JUnit plugin) read this shape, which the Jenkins JUnit schema describes (the copy in
``tests/data/jenkins-junit-10.xsd`` validates what is written here)::

    <testsuites name="acpref" tests= failures= errors= time=>
      <testsuite name="acpref check-agent" tests= failures= errors="0" skipped= time= timestamp=>
        <properties><property name="command" value="..."/></properties>
        <testcase classname="acpref.agent" name="SETUP-07 The Agent ...">
          <failure type="MUST" message="SETUP-07 MUST: When all the conversation ...">
            spec (session-setup.mdx): "..." / scenario / the evidence, one line each
          </failure>
        </testcase>
        <testcase ...><skipped message="the reason"/></testcase>
        <system-out>the text summary the command printed</system-out>
      </testsuite>
    </testsuites>

One test case per clause checked (``check-agent``, ``check-client``: the report's rows;
``validate``: one per clause and party its findings name, plus one for the rest of the
transcript). Which findings are ``<failure>``s is decided by the same rule as the exit status
(``register.fails`` through the rows' and findings' own ``fails``), so ``--strict-gaps`` and
``--fail-on`` move the same findings in and out of both. A finding that does not fail the run
stays a passing test case with its level and evidence in ``<system-out>``; a SKIPPED clause is
``<skipped>`` with its reason.

The evidence quotes the peer, and the peer is not trusted: every text goes through ``_clean``,
which replaces the characters XML 1.0 cannot carry (control characters, lone surrogates) by a
visible escape and cuts long texts, so that any peer gives a well-formed file of bounded size.
The file is written beside its destination and renamed into place; nothing goes to stdout.
"""

from __future__ import annotations

import datetime
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .._core.register import clauses, quote_of
from ..testing._results import FAIL, SKIPPED

if TYPE_CHECKING:
    from ..oracle import Finding, Report
    from ..testing import CheckReport, ClauseResult

__all__ = ["add_junit_option", "check_suite", "validate_suite", "write_junit"]

#: What one attribute (a message), one line of evidence, one text (a failure's body) and the
#: summary may hold, in characters; and how many evidence lines one test case lists.
_ATTRIBUTE, _LINE, _TEXT, _SUMMARY, _LINES = 1_000, 2_000, 16_000, 64_000, 50
#: A test case's name: the clause id and the start of the register's requirement.
_NAME = 100
#: The characters XML 1.0 allows (its production ``Char``); anything else is replaced.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def add_junit_option(p: Any, *, when: str = "") -> None:
    """Add ``--junit FILE`` to the parser ``p`` (``when``: "with --report: ")."""
    p.add_argument(
        "--junit",
        metavar="FILE",
        help=f"{when}also write the verdicts as JUnit XML to FILE (one test case per clause; "
        "failures as the exit status counts them), for CI systems to display",
    )


def _clean(text: Any, limit: int = _TEXT) -> str:
    """``text`` as XML 1.0 can carry it: forbidden characters escaped, at most ``limit`` long."""
    text = _NOT_XML.sub(_escape, str(text))
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return text


def _escape(match: "re.Match[str]") -> str:
    """A character XML 1.0 cannot carry, as Python would write it: ``\\x1b``, ``\\ud800``."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _sub(parent: ET.Element, tag: str, text: Optional[str] = None, **attrib: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: _clean(v, _ATTRIBUTE) for k, v in attrib.items()})
    if text is not None:
        element.text = _clean(text)
    return element


def _case_name(clause: str) -> str:
    """``SETUP-07 When all the conversation ...``: stable from run to run, so that a CI system
    follows one clause's history (no message index, no evidence in it)."""
    entry = clauses().get(clause)
    if entry is None:  # a decision of acpref: spec-gap:<name>
        return clause
    words = entry.requirement
    if len(words) > _NAME:
        words = words[:_NAME].rsplit(" ", 1)[0] + " ..."
    return f"{clause} {words}"


def _sentence(clause: str, level: str) -> Tuple[str, List[str]]:
    """The failure's message (``CLAUSE LEVEL: sentence``) and the lines that quote it."""
    quote = quote_of(clause)
    if quote is not None:
        return f"{clause} {level}: {quote.text}", [f'spec ({quote.source}): "{quote.text}"']
    entry = clauses().get(clause)
    said = entry.requirement if entry is not None else "acpref's reading (spec_notes/decisions.md)"
    return f"{clause} {level}: {said}", []


def _evidence(lines: Sequence[str]) -> List[str]:
    shown = [_clean(line, _LINE) for line in lines[:_LINES]]
    if len(lines) > _LINES:
        shown.append(f"(+{len(lines) - _LINES} more; --json lists them)")
    return shown


def _suite(name: str, seconds: Optional[float], properties: Dict[str, str]) -> ET.Element:
    suite = ET.Element("testsuite", {"name": name})
    if seconds is not None:
        suite.set("time", f"{seconds:.3f}")
    # UTC, without a zone: the form both the Jenkins and the Windy Road schemas accept.
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    suite.set("timestamp", now.isoformat(timespec="seconds"))
    if properties:
        props = _sub(suite, "properties")
        for key, value in properties.items():
            _sub(props, "property", name=key, value=value)
    return suite


def _count(suite: ET.Element, summary: str) -> ET.Element:
    """Set the suite's counts from its test cases; end it with the text summary."""
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    _sub(suite, "system-out").text = _clean(summary, _SUMMARY)
    return suite


def _verdict(case: ET.Element, failing: bool, level: str, message: str, body: List[str]) -> None:
    """A finding in its test case: a ``<failure>`` when it fails the run, else a passing case
    whose ``<system-out>`` says what was found and why it does not fail."""
    if failing:
        _sub(case, "failure", "\n".join(body), type=level, message=message)
        return
    note = f"{level} finding, not failing the run (see the options --fail-on, --strict-gaps)"
    _sub(case, "system-out", "\n".join([note, message, *body]))


def _row_case(suite: ET.Element, subject: str, row: ClauseResult, levels: Dict[str, Any]) -> None:
    case = _sub(suite, "testcase", classname=f"acpref.{subject}", name=_case_name(row.clause))
    if row.status == SKIPPED:
        reason = "; ".join(row.evidence) or f"not exercised ({row.scenario})"
        _sub(case, "skipped", reason, message=reason)
        return
    if row.status != FAIL:
        return
    message, quoted = _sentence(row.clause, row.level)
    body = [*quoted, f"scenario: {row.scenario}", *_evidence(row.evidence)]
    _verdict(case, row.fails(**levels), row.level, message, body)


def check_suite(
    report: CheckReport,
    name: str,
    seconds: Optional[float],
    *,
    strict_gaps: bool = False,
    fail_on: Tuple[str, ...] = (),
) -> ET.Element:
    """The ``<testsuite>`` of a ``check-agent`` or ``check-client`` report: one case a row."""
    levels: Dict[str, Any] = {"strict_gaps": strict_gaps, "fail_on": fail_on}
    properties = {"subject": report.subject, "final": str(report.final).lower()}
    if report.command:
        properties["command"] = " ".join(report.command)
    suite = _suite(name, seconds, properties)
    for row in report.rows():
        _row_case(suite, report.subject, row, levels)
    return _count(suite, report.format_text(**levels))


def validate_suite(
    report: Report,
    name: str,
    seconds: Optional[float],
    transcript: str,
    *,
    strict_gaps: bool = False,
    fail_on: Tuple[str, ...] = (),
) -> ET.Element:
    """The ``<testsuite>`` of ``validate``: one case per clause and party the findings name (a
    failure when one of them fails the run), and one for everything else the transcript held."""
    levels: Dict[str, Any] = {"strict_gaps": strict_gaps, "fail_on": fail_on}
    suite = _suite(name, seconds, {"transcript": transcript, "messages": str(report.messages)})
    groups: Dict[Tuple[str, str], List[Finding]] = {}
    for f in report.findings:
        groups.setdefault((f.blame.value, f.clause), []).append(f)
    for (blame, clause), found in groups.items():
        case = _sub(suite, "testcase", classname=f"acpref.{blame}", name=_case_name(clause))
        failing = [f for f in found if f.fails(**levels)]
        level = (failing or found)[0].level
        message, quoted = _sentence(clause, level)
        body = [*quoted, *_evidence([_where(f) for f in found])]
        _verdict(case, bool(failing), level, message, body)
    rest = _sub(suite, "testcase", classname="acpref.validate", name="every other rule")
    _sub(rest, "system-out", f"{report.messages} messages judged")
    return _count(suite, report.format_text(**levels))


def _where(f: Finding) -> str:
    where = f"#{f.index}" if f.index is not None else "end"
    return f"{where}: {f.level}: {f.message}"


def write_junit(path: str, suites: Iterable[ET.Element]) -> None:
    """Write ``<testsuites>`` holding ``suites`` to ``path`` (OSError when it cannot be)."""
    root = ET.Element("testsuites", {"name": "acpref"})
    # The schema has no "skipped" on <testsuites>: each <testsuite> counts its own.
    total = {"tests": 0, "failures": 0, "errors": 0}
    times: List[float] = []
    for suite in suites:
        root.append(suite)
        for key in total:
            total[key] += int(suite.get(key, "0"))
        if suite.get("time") is not None:
            times.append(float(suite.get("time", "0")))
    for key, value in total.items():
        root.set(key, str(value))
    if times:
        root.set("time", f"{sum(times):.3f}")
    ET.indent(root)
    folder = os.path.dirname(os.path.abspath(path))
    fd, scratch = tempfile.mkstemp(prefix=".junit-", suffix=".xml", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            ET.ElementTree(root).write(f, encoding="utf-8", xml_declaration=True)
        os.chmod(scratch, 0o644)  # mkstemp's 0600 would keep it from a CI runner's other users
        os.replace(scratch, path)
    except BaseException:
        os.unlink(scratch)
        raise
