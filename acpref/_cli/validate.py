"""``acpref validate FILE.jsonl [--json] [--strict-gaps]``: judge a recorded transcript.

Prints every finding (violations with the spec's sentence, then spec-gaps, then warnings) with the
message index, the clause, its level, who broke it and why; ``--json`` prints the report as JSON.
Exit status: 1 when a finding fails the run (MUST and MUST NOT; ``--strict-gaps``, ``--fail-on``
add levels), else 0; 2 when the file cannot be read (``_status``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ..oracle import validate
from ._junit import add_junit_option
from ._levels import add_level_options, add_newer_spec_option, levels_of
from ._status import ERROR, OK, USAGE


_DESCRIPTION = """\
Judge a recorded ACP session against the spec, message by message, in both directions.

The transcript is what travelled between a client and an agent, as written by
`acpref client --record`, `acpref proxy --record` or acpref.oracle.TranscriptRecorder
(format acpref-transcript/1, one JSON object a line). Every finding names the message,
the clause, its level (MUST, SHOULD, spec-gap, warning), who broke it, and quotes the
spec's sentence for a MUST."""

_EPILOG = """\
examples:
  record a session with the echo agent, then judge it:
  $ acpref client -p hello --record session.jsonl -- acpref echo
  $ acpref validate session.jsonl
  the same report as JSON, and spec-gaps failing too:
  $ acpref validate --json --strict-gaps session.jsonl

exit status:
  0  no finding fails the run (by default: no MUST or MUST NOT finding)
  1  a finding fails the run: MUST or MUST NOT; with --strict-gaps a spec-gap too,
     with --fail-on LEVEL a finding of LEVEL too (the last line counts them)
  2  the transcript cannot be read (missing, not a transcript), or the --junit file cannot
     be written
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "transcript", metavar="FILE.jsonl", help="the recorded session (acpref-transcript/1)"
    )
    p.add_argument(
        "--json", action="store_true", help="print the report as JSON instead of text"
    )
    add_level_options(p)
    add_junit_option(p)
    add_newer_spec_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    try:
        report = validate(args.transcript, newer_spec=args.newer_spec)
    except (OSError, ValueError) as exc:
        print(f"acpref validate: cannot read {args.transcript}: {exc}", file=sys.stderr)
        return USAGE
    seconds = time.monotonic() - started
    levels = levels_of(args)
    if args.junit:  # first: the file CI reads is written whatever printing meets
        from ._junit import validate_suite, write_junit

        suite = validate_suite(report, "acpref validate", seconds, args.transcript, **levels)
        try:
            write_junit(args.junit, [suite])
        except OSError as exc:
            print(f"acpref validate: cannot write {args.junit}: {exc}", file=sys.stderr)
            return 2
    print(json.dumps(report.to_json(), indent=1) if args.json else report.format_text(**levels))
    return OK if not report.failing(**levels) else ERROR
