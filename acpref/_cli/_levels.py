"""The options that decide which levels of finding fail a run, shared by every judging command.

By default only MUST and MUST NOT findings fail. ``--strict-gaps`` adds acpref's own readings
(``spec-gap``); ``--fail-on LEVEL`` (repeatable) adds any level there is: ``SHOULD`` (with
``SHOULD NOT``), ``MAY``, ``spec-gap``, ``warning`` (forward compatibility), or ``MUST`` (which
fails anyway) (``acpref/_core/register.py``, ``fails``: the exit status and the last line of
every report are both drawn from it).
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, Tuple

from .._core.register import FAIL_ON

__all__ = ["add_level_options", "levels_of"]


def add_level_options(p: Any, *, when: str = "") -> None:
    """Add ``--strict-gaps`` and ``--fail-on`` to the parser ``p`` (``when``: "with --report: ")."""
    p.add_argument(
        "--strict-gaps",
        action="store_true",
        help=f"{when}a spec-gap finding (acpref's reading where the spec is silent) fails too",
    )
    p.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="LEVEL",
        choices=sorted(FAIL_ON),
        help=f"{when}findings of LEVEL fail too: SHOULD (and SHOULD NOT), MAY, spec-gap or "
        "warning (forward compatibility) (repeatable; by default only MUST and MUST NOT fail)",
    )


def levels_of(args: argparse.Namespace) -> Dict[str, Any]:
    """The keyword arguments of ``failing`` / ``format_text`` that the options ask for."""
    fail_on: Tuple[str, ...] = tuple(args.fail_on)
    return {"strict_gaps": args.strict_gaps, "fail_on": fail_on}
