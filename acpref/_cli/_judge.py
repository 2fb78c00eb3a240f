"""The judge of ``acpref proxy``: a process of its own that records and validates what was forwarded.

Run by the proxy as ``python -m acpref._cli._judge [--record FILE] [--quiet] [--report PAGE
--name AGENT] [--strict-gaps] [--fail-on LEVEL]...``. It reads frames
on stdin, each a copy of a chunk the proxy forwarded (``pack``: who sent it, when, the bytes, or
the end of that party's stream), cuts them into lines as the receiver would, records them, feeds
them to the oracle's ``Validator``, and writes findings live on stderr. At the end of its stdin
it writes the summary on stderr (and the HTML page of ``--report``, drawn from the transcript
file: ``--record``'s, or a scratch file beside the page, removed once it is written, so that the
judge holds no record in memory), and one JSON line on stdout:
``{"ok": bool, "failing": N, "messages": N}`` (``failing``: the findings that fail the run at
the levels of ``--strict-gaps`` / ``--fail-on``, the proxy's own, so that the summary's last
line and the proxy's exit status agree).

Why a process: decoding a 20 MiB line holds the interpreter lock for a fraction of a second,
and in the proxy's process that held back every byte being forwarded meanwhile. Here it
delays nothing but the judging.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import tempfile
from typing import Any, BinaryIO, Dict, List, Optional

from .._bounds import count_items
from .._shell.framing import LineFramer, Oversize
from .._shell.connection import DEFAULT_MAX_ITEMS, DEFAULT_MAX_LINE_BYTES
from ..oracle import Record, TranscriptRecorder, Validator
from ..oracle._validate import format_finding

__all__ = ["pack", "main"]

#: A frame's header: sender ("c" or "a"), kind ("d" data, "e" end of stream), time, length.
_HEADER = struct.Struct("!ccdI")
_SENDERS = {b"c": "client", b"a": "agent"}


def pack(sender: str, data: Optional[bytes], ts: float) -> bytes:
    """The frame for a chunk ``sender`` sent (``None``: the end of its stream)."""
    code = b"c" if sender == "client" else b"a"
    if data is None:
        return _HEADER.pack(code, b"e", ts, 0)
    return _HEADER.pack(code, b"d", ts, len(data)) + data


def _read_exactly(f: BinaryIO, n: int) -> Optional[bytes]:
    parts: List[bytes] = []
    while n:
        piece = f.read(n)
        if not piece:
            return None
        parts.append(piece)
        n -= len(piece)
    return b"".join(parts)


class _Judge:
    def __init__(
        self,
        record: Optional[str],
        header: Dict,
        quiet: bool,
        page: Optional[str],
        *,
        newer_spec: bool = False,
    ) -> None:
        self.validator = Validator(newer_spec=newer_spec)
        self.quiet = quiet
        #: A transcript written only to draw the page from, removed afterwards.
        self.scratch: Optional[str] = None
        if page and not record:
            fd, self.scratch = tempfile.mkstemp(
                prefix="." + os.path.basename(page) + ".", suffix=".jsonl",
                dir=os.path.dirname(os.path.abspath(page)),
            )
            os.close(fd)
        self.record = record or self.scratch
        self.recorder = (
            TranscriptRecorder(self.record, me="client", header=header) if self.record else None
        )
        # The connection's own framing rule and bound, so that a line is what a receiver reads.
        self.buffers = {
            "client": LineFramer(DEFAULT_MAX_LINE_BYTES),
            "agent": LineFramer(DEFAULT_MAX_LINE_BYTES),
        }

    def say(self, text: str) -> None:
        data = (text + "\n").encode("utf-8", "replace")
        view = memoryview(data)
        while view:
            view = view[os.write(2, view) :]

    def chunk(self, sender: str, data: Optional[bytes], ts: float) -> None:
        buffer = self.buffers[sender]
        lines = buffer.feed(data) if data is not None else buffer.end()
        for line in lines:
            if isinstance(line, Oversize):
                self.add(Record(sender=sender, ts=ts, event="oversize", size=line.size))
                continue
            if len(line) > DEFAULT_MAX_ITEMS:
                # Refused by an acpref receiver before decoding (threat-model.md), and never
                # decoded here either: what it would cost decoded is not the judge's to pay.
                if count_items(line, DEFAULT_MAX_ITEMS) > DEFAULT_MAX_ITEMS:
                    self.add(Record(sender=sender, ts=ts, event="oversize", size=len(line)))
                    continue
            self.add(Record(sender=sender, ts=ts, raw=line))
        if data is None:
            self.add(Record(sender=sender, ts=ts, event="eof"))

    def add(self, record: Record) -> None:
        if self.recorder is not None:
            self.recorder.add(record)
        for f in self.validator.feed(record):
            if not self.quiet:
                self.say(f"acpref proxy: {format_finding(f)}")


def _write_html(judge: _Judge, path: str, name: str, report: Any) -> None:
    from .._tools.show_html import write_report

    assert judge.record is not None
    try:
        write_report(path, [(name, judge.record, report)], title=f"acpref proxy: {name}")
    except (OSError, ValueError) as exc:
        judge.say(f"acpref proxy: cannot write the report {path}: {exc}")
    else:
        judge.say(f"acpref proxy: report written to {path}")
    finally:
        if judge.scratch is not None:
            os.unlink(judge.scratch)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="acpref-proxy-judge")
    p.add_argument("--record")
    p.add_argument("--header", default="{}")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--report")
    p.add_argument("--name", default="agent")
    p.add_argument("--strict-gaps", action="store_true")
    p.add_argument("--fail-on", action="append", default=[])
    p.add_argument("--newer-spec", action="store_true")
    args = p.parse_args(argv)
    levels = {"strict_gaps": args.strict_gaps, "fail_on": tuple(args.fail_on)}
    header, newer = json.loads(args.header), args.newer_spec
    try:
        judge = _Judge(args.record, header, args.quiet, args.report, newer_spec=newer)
    except OSError as exc:  # no room beside the page for its transcript: judge without a page
        sys.stderr.write(f"acpref proxy: cannot write the report {args.report}: {exc}\n")
        judge, args.report = _Judge(args.record, header, args.quiet, None, newer_spec=newer), None
    stdin = sys.stdin.buffer
    while True:
        head = _read_exactly(stdin, _HEADER.size)
        if head is None:
            break
        code, kind, ts, size = _HEADER.unpack(head)
        data = _read_exactly(stdin, size) if kind == b"d" else None
        if kind == b"d" and data is None:
            break  # cut short: the proxy died
        judge.chunk(_SENDERS[code], data, ts)
    report = judge.validator.finish()
    if judge.recorder is not None:
        judge.recorder.close()
    judge.say("acpref proxy: " + report.format_text(**levels).replace("\n", "\nacpref proxy: "))
    if args.report:
        _write_html(judge, args.report, args.name, report)
    verdict = {
        "ok": report.ok,
        "failing": len(report.failing(**levels)),
        "messages": report.messages,
    }
    sys.stdout.write(json.dumps(verdict) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
