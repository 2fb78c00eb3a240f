"""``Report``: the findings of one transcript, sorted by what they mean for a run.

Spec: clauses.tsv levels; acpref's decisions are ``spec-gap`` findings, forward-compatibility
notes ``warning``s (spec_notes/oracle.md). Built by ``_validate.Validator.finish``; the text and
JSON forms are what ``acpref validate`` prints.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple, Union

import attrs

from .._core import Finding, Party
from .._core.register import SPEC_GAP, below_the_fold, count_levels

__all__ = ["Report", "format_finding", "format_quote"]


@attrs.frozen
class Report:
    """The findings of one transcript, each with its level (``acpref._core.register``)."""

    findings: List[Finding]
    messages: int

    @property
    def violations(self) -> List[Finding]:
        """MUST / MUST NOT findings: a sentence of the spec is broken. They fail a run."""
        return [f for f in self.findings if f.is_violation]

    @property
    def gaps(self) -> List[Finding]:
        """``spec-gap`` findings: acpref's reading where the spec is silent. Not failing."""
        return [f for f in self.findings if f.level == SPEC_GAP]

    @property
    def warnings(self) -> List[Finding]:
        """SHOULD / SHOULD NOT / MAY findings and ``warning`` notes: forward compatibility, and
        the findings on a provisional clause that no page sentence states (spec-gap
        provisional-features)."""
        return [f for f in self.findings if not f.is_violation and f.level != SPEC_GAP]

    @property
    def ok(self) -> bool:
        """True when no MUST rule was broken."""
        return not self.violations

    def failing(self, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()) -> List[Finding]:
        """The findings that fail a run: violations, the spec-gaps when ``strict_gaps``, and the
        levels ``fail_on`` names (``register.fails``)."""
        return [f for f in self.findings if f.fails(strict_gaps=strict_gaps, fail_on=fail_on)]

    def clauses(self) -> List[str]:
        """The clauses of every finding, sorted, each once."""
        return sorted({f.clause for f in self.findings})

    def blamed(self, party: Union[Party, str]) -> List[Finding]:
        """The findings that blame ``party`` (``"agent"`` or ``"client"``)."""
        who = Party(party)
        return [f for f in self.findings if f.blame is who]

    def format_text(self, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()) -> str:
        """A human summary: the count of each level, the findings that fail the run (each with
        its quote), then the others, then one line that counts both and names the option that
        would fail on what does not. What fails is ``register.fails``, as the exit status."""
        levels: Dict[str, Any] = {"strict_gaps": strict_gaps, "fail_on": fail_on}
        failing = self.failing(**levels)
        rest = [f for f in self.findings if f not in failing]
        found = [f.level for f in self.findings]
        lines = [
            f"{_count(self.messages, 'message')}, "
            + (f"findings: {count_levels(found)}" if found else "no findings")
        ]
        for title, group in (("failing the run", failing), ("not failing the run", rest)):
            if group:
                lines.append(f"{title} ({len(group)}):")
                for f in group:
                    lines.append("  " + format_finding(f))
                    lines.extend("  " + line for line in format_quote(f, shown=f in failing))
        lines.append(below_the_fold(found, **levels))
        return "\n".join(lines)

    def to_json(self) -> Dict[str, Any]:
        return {
            "messages": self.messages,
            "ok": self.ok,
            "violations": [f.as_dict() for f in self.violations],
            "gaps": [f.as_dict() for f in self.gaps],
            "warnings": [f.as_dict() for f in self.warnings],
        }


def format_finding(f: Finding) -> str:
    """One finding as one line: message index, clause, level, who is to blame, why."""
    where = f"#{f.index}" if f.index is not None else "end"
    # A provisional clause's finding is a warning; shown with its register level and a star.
    level = f"{f.strength}*" if f.provisional else f.level
    return f"{where:>6}  {f.clause:<28} {level:<10} {f.blame.value:<6}  {f.message}"


def format_quote(f: Finding, *, shown: bool = False) -> List[str]:
    """The spec's sentence a violation breaks, as indented lines (none for other levels, unless
    ``shown``: a finding that fails the run by ``fail_on``)."""
    quote = f.quote
    if quote is None or not (f.is_violation or shown):
        return []
    return [f"        spec ({quote.source}): \"{quote.text}\""]


def _count(n: int, noun: str) -> str:
    """``1 violation``, ``2 violations``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
