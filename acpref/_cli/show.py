"""``acpref show FILE.jsonl... [-o REPORT.html]``: a transcript as a sequence diagram in HTML.

Writes one self-contained page (no network, no external file; it opens from disk in any
browser): the messages as arrows between client and agent in wire order, requests linked to
their answers, turns and long runs of updates folded, and every finding of the oracle drawn on
the message that caused it, with its clause, its level and the page of the spec. Several
transcripts make one page with a tab each. The default output is the first transcript's path
with ``.html``; the path written is printed. Exit status: 0 when written (whatever the
findings: ``acpref validate`` is the judge), 2 when a transcript cannot be read.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, List, Tuple

from ..oracle._transcript import iter_transcript
from .._tools.show_html import write_report


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    p.add_argument(
        "transcripts", nargs="+", metavar="FILE.jsonl", help="transcripts (acpref-transcript/1)"
    )
    p.add_argument("-o", "--output", metavar="REPORT.html", help="where to write the page")
    p.set_defaults(func=run)


def default_output(transcript: str) -> str:
    """``run.jsonl`` -> ``run.html``, beside it."""
    base, ext = os.path.splitext(transcript)
    return (base if ext == ".jsonl" else transcript) + ".html"


def run(args: argparse.Namespace) -> int:
    out = args.output or default_output(args.transcripts[0])
    parts: List[Tuple[str, Any, None]] = []
    for path in args.transcripts:
        try:
            for _ in iter_transcript(path):  # unreadable: said here, before any page is written
                pass
        except (OSError, ValueError) as exc:
            print(f"acpref show: cannot read {path}: {exc}", file=sys.stderr)
            return 2
        # By its path, so that the layout reads the header: who is under test (subject_of).
        parts.append((os.path.basename(path), path, None))
    try:
        write_report(out, parts)
    except OSError as exc:
        print(f"acpref show: cannot write {out}: {exc}", file=sys.stderr)
        return 2
    print(out)
    return 0
