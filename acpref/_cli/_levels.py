"""The options that decide which levels of finding fail a run, shared by every judging command.

By default only MUST and MUST NOT findings fail. ``--strict-gaps`` adds acpref's own readings
(``spec-gap``); ``--fail-on LEVEL`` (repeatable) adds any level there is: ``SHOULD`` (with
``SHOULD NOT``), ``MAY``, ``spec-gap``, ``warning`` (forward compatibility), or ``MUST`` (which
fails anyway) (``acpref/_core/register.py``, ``fails``: the exit status and the last line of
every report are both drawn from it).

``--newer-spec`` is of another kind: it changes how the oracle *judges*, not which levels fail.
A value that no closed set of the carried schemas defines (``stopReason: "done"``, a tool call
``status``, a permission ``outcome``...) is a violation by default, and with ``--newer-spec`` a
warning, for a peer built on a newer spec than the one acpref carries (``acpref/_core/compat.py``,
spec_notes/decisions.md undefined-value). Every judging command takes it, with the same words.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, Tuple

from .._core.compat import SCHEMA_DATE
from .._core.register import FAIL_ON

__all__ = ["add_level_options", "levels_of", "add_newer_spec_option", "NEWER_SPEC_HELP"]

#: What ``--newer-spec`` changes, in the words of every command that takes it (and the plugin's
#: ``--acp-newer-spec``).
NEWER_SPEC_HELP = (
    "the peer is built on a newer ACP spec than the one acpref carries (stable schema of "
    f"{SCHEMA_DATE}): a value that no closed set of the carried schemas defines (a stopReason, "
    "a sessionUpdate kind, a tool call status, a permission outcome...) is a warning instead of "
    "a failure; everything else is judged as without it"
)


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


def add_newer_spec_option(p: Any, *, when: str = "") -> None:
    """Add ``--newer-spec`` to the parser ``p`` (``when``: "with --serve: ")."""
    p.add_argument("--newer-spec", action="store_true", help=when + NEWER_SPEC_HELP)
