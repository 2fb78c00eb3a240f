"""``acpref validate FILE.jsonl [--json] [--strict-gaps]``: judge a recorded transcript.

Prints every finding (violations with the spec's sentence, then spec-gaps, then warnings) with the
message index, the clause, its level, who broke it and why; ``--json`` prints the report as JSON.
Exit status: 0 when no MUST rule was broken (``--strict-gaps``: and no spec-gap found), 1 when
one was, 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..oracle import validate


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    p.add_argument("transcript", metavar="FILE.jsonl", help="a transcript (acpref-transcript/1)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--strict-gaps",
        action="store_true",
        help="exit 1 on spec-gap findings too (acpref's readings where the spec is silent)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        report = validate(args.transcript)
    except (OSError, ValueError) as exc:
        print(f"acpref validate: cannot read {args.transcript}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), indent=1) if args.json else report.format_text())
    return 0 if not report.failing(strict_gaps=args.strict_gaps) else 1
