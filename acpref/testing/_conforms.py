"""``assert_conforms``: fail a test with the oracle's findings, clause by clause.

For a transcript recorded anywhere (a path, records, or an ``AgentDriver``), in any test runner:
an ``AssertionError`` whose message lists each violation with its clause, who broke it, and the
index of the message. ``blame`` narrows the judgement to one side (the one under test).
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence, Tuple

from .._core import Finding, Party
from ..oracle import Report, validate
from ..oracle._validate import format_finding, format_quote

__all__ = ["assert_conforms", "problems"]


def problems(
    report: Report,
    *,
    blame: Optional[str] = None,
    warnings: bool = False,
    ignore: Sequence[str] = (),
    strict_gaps: bool = False,
    fail_on: Tuple[str, ...] = (),
) -> list:
    """The findings that fail a test: violations (spec-gaps if ``strict_gaps``, the levels
    ``fail_on`` names; every finding if ``warnings``), minus ``ignore``."""
    chosen: Iterable[Finding] = (
        report.findings if warnings else report.failing(strict_gaps=strict_gaps, fail_on=fail_on)
    )
    who = Party(blame) if blame is not None else None
    return [f for f in chosen if f.clause not in ignore and (who is None or f.blame is who)]


def assert_conforms(
    transcript: Any,
    *,
    blame: Optional[str] = None,
    warnings: bool = False,
    ignore: Sequence[str] = (),
    strict_gaps: bool = False,
    fail_on: Tuple[str, ...] = (),
    newer_spec: bool = False,
) -> Report:
    """Validate ``transcript`` and raise ``AssertionError`` listing what breaks the spec.

    ``transcript``: a path, an iterable of records / dicts / JSON lines, a ``Report``, or anything
    with a ``close() -> Report`` (an ``AgentDriver``). Returns the report when it conforms.
    ``newer_spec``: when the transcript is judged here, a value no carried schema defines is a
    warning, not a violation (a report or a driver was judged already, as it was told).
    """
    if isinstance(transcript, Report):
        report = transcript
    elif hasattr(transcript, "close") and hasattr(transcript, "sink"):
        report = transcript.close()
    else:
        report = validate(transcript, newer_spec=newer_spec)
    found = problems(
        report,
        blame=blame,
        warnings=warnings,
        ignore=ignore,
        strict_gaps=strict_gaps,
        fail_on=fail_on,
    )
    if found:
        who = f" by the {blame}" if blame else ""
        lines = [f"{len(found)} ACP spec violation(s){who} in {report.messages} messages:"]
        for f in found:
            lines.append("  " + format_finding(f))
            lines.extend("  " + line for line in format_quote(f))
        raise AssertionError("\n".join(lines))
    return report
