"""Conformance results by clause: PASS, FAIL or SKIPPED, with evidence; shared by both checks.

``check-agent`` and ``check-client`` each end with a ``CheckReport``: one row per clause, its
level (from the register), the status, the scenario that decided it and, for a failure, the
evidence (message index and what was wrong). Statuses merge as FAIL > PASS > SKIPPED: a clause
passes when some scenario exercised it and none saw it broken. The report is ``ok`` when no
MUST-level clause failed; SHOULD-level failures are shown but do not fail it.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence

import attrs

from .._rules import Finding, clauses, level_of

__all__ = ["CheckReport", "ClauseResult", "PASS", "FAIL", "SKIPPED"]

PASS, FAIL, SKIPPED = "PASS", "FAIL", "SKIPPED"
_RANK = {SKIPPED: 0, PASS: 1, FAIL: 2}

#: acpref's own checks that no clause states, with their levels (spec_notes/oracle.md).
CHECK_LEVELS = {"spec-gap:exit-on-eof": "SHOULD", "spec-gap:cancel-ignored": "SHOULD"}


@attrs.define
class ClauseResult:
    """The verdict on one clause."""

    clause: str
    level: str
    status: str
    scenario: str
    evidence: List[str] = attrs.Factory(list)

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

    def record(
        self, clause: str, status: str, scenario: str, evidence: Optional[str] = None
    ) -> None:
        """Merge one verdict into the row of ``clause`` (FAIL > PASS > SKIPPED)."""
        level = CHECK_LEVELS.get(clause) or level_of(clause)
        row = self.results.get(clause)
        if row is None:
            row = self.results[clause] = ClauseResult(
                clause=clause, level=level, status=status, scenario=scenario
            )
        elif _RANK[status] > _RANK[row.status]:
            row.status, row.scenario = status, scenario
            if status == FAIL:
                row.evidence = []
        if evidence and status == row.status and evidence not in row.evidence:
            row.evidence.append(evidence if status != FAIL else f"[{scenario}] {evidence}")

    def passed(self, clause: str, scenario: str) -> None:
        self.record(clause, PASS, scenario)

    def failed(self, clause: str, scenario: str, evidence: str) -> None:
        self.record(clause, FAIL, scenario, evidence)

    def skipped(self, clause: str, scenario: str, reason: str) -> None:
        self.record(clause, SKIPPED, scenario, reason)

    def add_findings(
        self,
        findings: Iterable[Finding],
        scenario: str,
        transcript: Optional[str] = None,
        *,
        ignore: Sequence[str] = (),
    ) -> None:
        """Oracle findings blamed on the subject fail their clauses (but those in ``ignore``)."""
        for f in findings:
            self.findings.append({**f.as_dict(), "scenario": scenario, "transcript": transcript})
            if f.blame.value == self.subject and f.clause not in ignore:
                where = f"#{f.index}" if f.index is not None else "end"
                self.failed(f.clause, scenario, f"{where}: {f.message}")

    @property
    def failures(self) -> List[ClauseResult]:
        return [r for r in self.rows() if r.status == FAIL]

    @property
    def ok(self) -> bool:
        """True when no MUST-level clause failed."""
        return not any(r.level in ("MUST", "MUST NOT") for r in self.failures)

    def rows(self) -> List[ClauseResult]:
        """The rows in register order (acpref's own checks last)."""
        order = {cid: i for i, cid in enumerate(clauses())}
        return sorted(
            self.results.values(), key=lambda r: (order.get(r.clause, len(order)), r.clause)
        )

    def format_table(self) -> str:
        """The table: clause, level, status, scenario; evidence under each failure."""
        lines = [f"{'clause':<26} {'level':<10} {'status':<8} scenario"]
        for row in self.rows():
            lines.append(f"{row.clause:<26} {row.level:<10} {row.status:<8} {row.scenario}")
            if row.status != PASS:
                lines.extend(f"    {e}" for e in row.evidence[:5])
                if len(row.evidence) > 5:
                    lines.append(f"    (+{len(row.evidence) - 5} more)")
        counts = {
            status: sum(1 for r in self.results.values() if r.status == status) for status in _RANK
        }
        must = sum(1 for r in self.failures if r.level in ("MUST", "MUST NOT"))
        lines.append(
            f"{counts[PASS]} passed, {counts[FAIL]} failed ({must} MUST), {counts[SKIPPED]} skipped"
        )
        lines.extend(f"note: {n}" for n in self.notes)
        if not self.final:
            lines.append(
                f"note: not final: the grading agent (pid {self.pid}) was still running or was killed"
            )
        return "\n".join(lines)

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
        return json.dumps(self.to_json(), indent=1, ensure_ascii=False)

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
