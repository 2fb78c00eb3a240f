"""``acpref diff A.jsonl B.jsonl``: compare two transcripts of the same scenario.

Request ids, session ids, message ids, tool call ids, terminal ids, elicitation ids and
timestamps are compared modulo renaming, and each side's messages in the order that side sent
them (``acpref.oracle.diff``). Exit status 0 when the transcripts match, 1 when they diverge, 2
when a file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..oracle import diff
from ..oracle._diff import reordered

_DESCRIPTION = """\
Compare two transcripts of the same scenario (recorded with --record, or by acpref proxy) and
print the first divergence, with the messages before it.

Ids chosen afresh by each run (requests, sessions, messages, tool calls, terminals,
elicitations) and timestamps are compared modulo renaming. Each side's messages are compared in
the order that side sent them; how the client's and the agent's messages interleave is not
compared unless --strict-order is given: two messages written at the same moment in opposite
directions cross on the wire, and the spec leaves their order free.

Exit status: 0 the transcripts match, 1 they diverge, 2 a file cannot be read.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("left", metavar="A.jsonl")
    p.add_argument("right", metavar="B.jsonl")
    p.add_argument(
        "--strict-order",
        action="store_true",
        help="compare the interleaving of the two directions too",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        divergence = diff(args.left, args.right, strict_order=args.strict_order)
        crossed = divergence is None and not args.strict_order and reordered(args.left, args.right)
    except (OSError, ValueError) as exc:
        print(f"acpref diff: {exc}", file=sys.stderr)
        return 2
    if divergence is None:
        print(
            "the transcripts match (modulo ids and timestamps)"
            + (
                "; some messages crossed on the wire in the other order, which the spec "
                "leaves free (--strict-order compares that too)"
                if crossed
                else ""
            )
        )
        return 0
    print(divergence.format_text(args.left, args.right))
    return 1
