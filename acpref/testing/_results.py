"""Conformance results by clause: PASS, FAIL or SKIPPED, with evidence; shared by both checks.

``check-agent`` and ``check-client`` each end with a ``CheckReport``: one row per clause, its
level (``acpref._core.register``: MUST / SHOULD / spec-gap ...), the status, the scenario that
decided it and, for a failure, the evidence (message index and what was wrong). Statuses merge as
FAIL > PASS > SKIPPED: a clause passes when some scenario exercised it and none saw it broken.
The report is ``ok`` when no MUST-level clause failed; SHOULD-level and ``spec-gap`` failures are
shown but do not fail it (``failing(strict_gaps=True)`` counts the gaps too). Forward
compatibility notes (level ``warning``) are kept with the findings, not as rows.

``passed()``, ``failed()`` and ``skipped()`` list rows (``failed("INIT-04")`` asks about one
clause); the checks record verdicts through the private ``_record``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union, overload

import attrs

from .._core import Finding, clauses, level_of
from .._core.register import WARNING, below_the_fold, count_levels, fails, quote_of

__all__ = ["CheckReport", "ClauseResult", "PASS", "FAIL", "SKIPPED"]

PASS, FAIL, SKIPPED = "PASS", "FAIL", "SKIPPED"
_RANK = {SKIPPED: 0, PASS: 1, FAIL: 2}
#: Evidence lines shown under a failure in the summary (the JSON keeps them all).
_SHOWN = 5


@attrs.define
class ClauseResult:
    """The verdict on one clause."""

    clause: str
    level: str
    status: str
    scenario: str
    evidence: List[str] = attrs.Factory(list)

    def fails(self, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()) -> bool:
        """True when this row fails the check: a FAIL at a level that fails (register.fails)."""
        return self.status == FAIL and fails(self.level, strict_gaps=strict_gaps, fail_on=fail_on)

    def to_json(self) -> Dict[str, Any]:
        return attrs.asdict(self)


@attrs.define
class CheckReport:
    """The verdicts of one conformance check, by clause, plus every oracle finding."""

    subject: str  # "agent" or "client"
    command: List[str] = attrs.Factory(list)
    results: Dict[str, ClauseResult] = attrs.Factory(dict)
    findings: List[Dict[str, Any]] = attrs.Factory(list)
    notes: List[str] = attrs.Factory(list)
    transcripts: List[str] = attrs.Factory(list)
    #: False while a ``check-client --serve`` process is still grading (its ``pid``).
    final: bool = True
    pid: Optional[int] = None

    # -- recording (the checks) ------------------------------------------------------------------

    def _record(
        self, clause: str, status: str, scenario: str, evidence: Optional[str] = None
    ) -> None:
        """Merge one verdict into the row of ``clause`` (FAIL > PASS > SKIPPED)."""
        row = self.results.get(clause)
        if row is None:
            row = self.results[clause] = ClauseResult(
                clause=clause, level=level_of(clause), status=status, scenario=scenario
            )
        elif _RANK[status] > _RANK[row.status]:
            row.status, row.scenario = status, scenario
            if status == FAIL:
                row.evidence = []
        if evidence and status == row.status and evidence not in row.evidence:
            row.evidence.append(evidence if status != FAIL else f"[{scenario}] {evidence}")

    def add_findings(
        self,
        findings: Iterable[Finding],
        scenario: str,
        transcript: Optional[str] = None,
        *,
        ignore: Sequence[str] = (),
    ) -> None:
        """Oracle findings blamed on the subject fail their clauses (but those in ``ignore``).

        Forward-compatibility notes (level ``warning``) are kept in ``findings`` only.
        """
        for f in findings:
            self.findings.append({**f.as_dict(), "scenario": scenario, "transcript": transcript})
            if f.blame.value == self.subject and f.clause not in ignore and f.level != WARNING:
                where = f"#{f.index}" if f.index is not None else "end"
                self._record(f.clause, FAIL, scenario, f"{where}: {f.message}")

    # -- questions and listings ------------------------------------------------------------------

    @overload
    def passed(self) -> List[ClauseResult]: ...
    @overload
    def passed(self, clause: str) -> bool: ...
    def passed(self, clause: Optional[str] = None) -> Union[bool, List[ClauseResult]]:
        """The rows that passed; with a clause id: did it pass?"""
        return self._with(PASS, clause)

    @overload
    def failed(self) -> List[ClauseResult]: ...
    @overload
    def failed(self, clause: str) -> bool: ...
    def failed(self, clause: Optional[str] = None) -> Union[bool, List[ClauseResult]]:
        """The rows that failed (at any level); with a clause id: did it fail?"""
        return self._with(FAIL, clause)

    @overload
    def skipped(self) -> List[ClauseResult]: ...
    @overload
    def skipped(self, clause: str) -> bool: ...
    def skipped(self, clause: Optional[str] = None) -> Union[bool, List[ClauseResult]]:
        """The rows that were skipped; with a clause id: was it skipped?"""
        return self._with(SKIPPED, clause)

    def _with(self, status: str, clause: Optional[str]) -> Union[bool, List[ClauseResult]]:
        if clause is not None:
            row = self.results.get(clause)
            return row is not None and row.status == status
        return [r for r in self.rows() if r.status == status]

    @property
    def failures(self) -> List[ClauseResult]:
        """The rows that failed, at any level (``failing()``: those that fail the check)."""
        return self.failed()

    def failing(
        self, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()
    ) -> List[ClauseResult]:
        """The failed rows that fail the check: MUST level (and spec-gap when ``strict_gaps``,
        the levels named by ``fail_on``: ``register.fails``). With ``fail_on=("warning",)`` the
        forward-compatibility notes fail too, one row per clause (``warning_rows``)."""
        rows = self.rows() + self.warning_rows()
        return [r for r in rows if r.fails(strict_gaps=strict_gaps, fail_on=fail_on)]

    def warning_rows(self) -> List[ClauseResult]:
        """The forward-compatibility notes on the subject as FAIL rows of level ``warning``, one
        per clause (not in ``results``: a note is no verdict on its clause)."""
        rows: Dict[str, ClauseResult] = {}
        for f in self.warnings():
            row = rows.setdefault(
                f["clause"],
                ClauseResult(
                    clause=f["clause"], level=WARNING, status=FAIL, scenario=f.get("scenario") or ""
                ),
            )
            where = f"#{f['index']}" if f.get("index") is not None else "end"
            evidence = f"[{f.get('scenario')}] {where}: {f['message']}"
            if evidence not in row.evidence:
                row.evidence.append(evidence)
        return list(rows.values())

    @property
    def ok(self) -> bool:
        """True when no MUST-level clause failed."""
        return not self.failing()

    def warnings(self) -> List[Dict[str, Any]]:
        """The forward-compatibility notes on the subject (fields of unstable or newer schemas)."""
        return [
            f for f in self.findings if f.get("level") == WARNING and f.get("blame") == self.subject
        ]

    def rows(self) -> List[ClauseResult]:
        """The rows in register order (acpref's own checks last)."""
        order = {cid: i for i, cid in enumerate(clauses())}
        return sorted(
            self.results.values(), key=lambda r: (order.get(r.clause, len(order)), r.clause)
        )

    # -- output ----------------------------------------------------------------------------------

    def format_text(
        self, *, full: bool = False, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()
    ) -> str:
        """What people read: failures first (quote and evidence), the rest as counts.

        The failures that fail the check come first, each with the spec's sentence and the
        evidence (scenario, message index, what was wrong); then the failures that do not
        (SHOULD, spec-gap), then the forward-compatibility warnings, then the counts and one
        line that counts what did not fail and names the option that would fail on it.
        ``full=True`` appends the whole table.
        """
        lines: List[str] = []
        levels: Dict[str, Any] = {"strict_gaps": strict_gaps, "fail_on": fail_on}
        failing = self.failing(**levels)
        others = [r for r in self.failed() if r not in failing]
        if failing:
            lines.append(f"FAILED ({len(failing)}):")
            for row in failing:
                lines.extend(_format_failure(row))
        if others:
            lines.append(f"not failing the check ({len(others)}):")
            for row in others:
                lines.extend(_format_failure(row))
        compat = self.warnings() if not fails(WARNING, **levels) else []
        if compat:
            lines.append(f"warnings ({len(compat)}: forward compatibility, not failing):")
            for f in compat[:_SHOWN * 2]:
                where = f"#{f['index']}" if f.get("index") is not None else "end"
                lines.append(f"  [{f.get('scenario')}] {where}: {f['message']}")
            if len(compat) > _SHOWN * 2:
                lines.append(f"  (+{len(compat) - _SHOWN * 2} more; --json lists them)")
        lines.append(self._counts(**levels))
        found = [r.level for r in self.failed()] + [WARNING] * len(self.warnings())
        lines.append(below_the_fold(found, **levels))
        lines.extend(f"note: {n}" for n in self.notes)
        if not self.final:
            lines.append(
                f"note: not final: the grading agent (pid {self.pid}) was still running or was "
                "killed"
            )
        if full:
            lines.append("")
            lines.append(self.format_table())
        return _writable("\n".join(lines))

    def _counts(self, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()) -> str:
        """``not ok: 40 passed, 2 failed (1 MUST, 1 SHOULD; 1 failing the check), 1 skipped``."""
        rows = self.results.values()
        counts = {status: sum(1 for r in rows if r.status == status) for status in _RANK}
        failing = len(self.failing(strict_gaps=strict_gaps, fail_on=fail_on))
        verdict = "ok" if not failing else "not ok"
        failed = [r.level for r in rows if r.status == FAIL]
        by_level = f"{count_levels(failed)}; " if failed else ""
        warnings = len(self.warnings())
        notes = f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else ""
        return (
            f"{verdict}: {counts[PASS]} passed, {counts[FAIL]} failed ({by_level}{failing} failing "
            f"the check), {counts[SKIPPED]} skipped{notes}"
        )

    def format_table(self) -> str:
        """The full table: clause, level, status, scenario; evidence under each failure or skip."""
        lines = [f"{'clause':<26} {'level':<10} {'status':<8} scenario"]
        for row in self.rows():
            lines.append(f"{row.clause:<26} {row.level:<10} {row.status:<8} {row.scenario}")
            if row.status != PASS:
                lines.extend(f"    {e}" for e in row.evidence[:_SHOWN])
                if len(row.evidence) > _SHOWN:
                    lines.append(f"    (+{len(row.evidence) - _SHOWN} more)")
        lines.append(self._counts())
        return _writable("\n".join(lines))

    def to_json(self) -> Dict[str, Any]:
        return {
            "subject": self.subject,
            "command": self.command,
            "ok": self.ok,
            "results": [r.to_json() for r in self.rows()],
            "findings": self.findings,
            "notes": self.notes,
            "transcripts": self.transcripts,
            "final": self.final,
            "pid": self.pid,
        }

    def dumps(self) -> str:
        # A lone surrogate in a string becomes its JSON escape: the same value, read back.
        return _writable(json.dumps(self.to_json(), indent=1, ensure_ascii=False))

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "CheckReport":
        report = cls(
            subject=data["subject"],
            command=list(data.get("command", [])),
            findings=list(data.get("findings", [])),
            notes=list(data.get("notes", [])),
            transcripts=list(data.get("transcripts", [])),
            final=bool(data.get("final", True)),
            pid=data.get("pid"),
        )
        for row in data.get("results", []):
            report.results[row["clause"]] = ClauseResult(**row)
        return report


def _writable(text: str) -> str:
    """``text`` as UTF-8 can write it: evidence quotes what a peer sent, and a JSON string from
    a peer may hold a lone surrogate (``"\\ud800"``), which no UTF-8 file or terminal can; it
    is written as its ``\\ud800`` escape (inside a JSON string, the JSON escape of the same
    value)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _format_failure(row: ClauseResult) -> List[str]:
    """A failed row: clause, level, scenario; the spec's sentence; the evidence."""
    lines = [f"  {row.clause} ({row.level}) in {row.scenario}"]
    quote = quote_of(row.clause) if fails(row.level) else None
    if quote is not None:
        lines.append(f"    spec ({quote.source}): \"{quote.text}\"")
    lines.extend(f"    {e}" for e in row.evidence[:_SHOWN])
    if len(row.evidence) > _SHOWN:
        lines.append(f"    (+{len(row.evidence) - _SHOWN} more; --json lists them)")
    return lines
