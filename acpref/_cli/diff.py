"""``acpref diff A.jsonl B.jsonl``: compare two transcripts of the same scenario.

Request ids, session ids, message ids, tool call ids, terminal ids, elicitation ids and
timestamps are compared modulo renaming (``acpref.oracle.diff``). Prints the first divergence
with the messages before it; exit status 0 when the transcripts match, 1 when they diverge, 2
when a file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..oracle import diff


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    p.add_argument("left", metavar="A.jsonl")
    p.add_argument("right", metavar="B.jsonl")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        divergence = diff(args.left, args.right)
    except (OSError, ValueError) as exc:
        print(f"acpref diff: {exc}", file=sys.stderr)
        return 2
    if divergence is None:
        print("the transcripts match (modulo ids and timestamps)")
        return 0
    print(divergence.format_text(args.left, args.right))
    return 1
