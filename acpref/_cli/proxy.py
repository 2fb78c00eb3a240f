"""``acpref proxy [--record FILE.jsonl] [--strict] -- AGENT_CMD...``: a validating proxy.

The proxy sits between a real client (our stdin and stdout) and a real agent (spawned): the
client launches ``acpref proxy -- my-agent --flag`` instead of ``my-agent --flag``. Every byte is
forwarded unchanged and in order: two pump threads read raw chunks and write them on at once,
never decoding or re-encoding anything. Each chunk is also put on a queue (before it is written
on, so the queue's order is causal: a response never precedes its request); a third thread cuts
the chunks into lines, records them (``--record``), feeds them to the oracle's ``Validator`` and
reports findings live on stderr. Validation never sits on the forwarding path. The agent's stderr
is passed through to ours.

At the end (the client closed our stdin and the agent exited, or the agent exited) a summary goes
to stderr, and with ``--report REPORT.html`` the transcript as a page of ``acpref show`` (read
back from ``--record``'s file, else kept in memory until the end). The exit status is the
agent's when it failed; else, with ``--strict``, 1 when a MUST rule was broken; else 0.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import time
from typing import IO, Any, Dict, List, Optional, Sequence, Set, Tuple

from .. import _groups
from .._transport import StderrBuffer, spawn
from ..oracle import Record, Report, TranscriptRecorder, Validator
from ..oracle._transcript import LineBuffer
from ..oracle._validate import format_finding

__all__ = ["Proxy", "register", "run"]

#: A chunk as read: (sender, bytes or None at end of stream, timestamp).
_Chunk = Tuple[str, Optional[bytes], float]
_STOP = ("", None, 0.0)


class Proxy:
    """Forward between a client's fds and a spawned agent; record and validate on the side."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        record: Optional[str] = None,
        strict: bool = False,
        client_in: int = 0,
        client_out: int = 1,
        err: IO[str] = sys.stderr,
        grace: float = 30.0,
        quiet: bool = False,
        report_html: Optional[str] = None,
    ) -> None:
        self.argv = list(argv)
        self.strict = strict
        self.grace = grace
        self.quiet = quiet
        self._client_in = client_in
        self._client_out = client_out
        self._err = err
        self._err_lock = threading.Lock()  # guards writes to err (findings and agent stderr)
        self._chunks: "queue.SimpleQueue[_Chunk]" = queue.SimpleQueue()
        self._recorder = (
            TranscriptRecorder(
                record, me="client", header={"recorder": "proxy", "agent": self.argv}
            )
            if record
            else None
        )
        self.validator = Validator()
        self.report: Optional[Report] = None
        self.report_html = report_html
        self._record_path = record
        #: The records for the HTML report, when no transcript file will hold them.
        self._kept: Optional[List[Record]] = [] if report_html and not record else None
        self._pump_ended = threading.Event()
        self._ended: Set[str] = set()  # the senders whose stream ended ("client", "agent")

    def stop(self, signum: int = 0) -> None:
        """End the run now (from a signal handler): the agent is stopped, the summary printed."""
        _groups.hurry()
        self._pump_ended.set()

    def _say(self, text: str) -> None:
        with self._err_lock:
            try:
                self._err.write(text + "\n")
                self._err.flush()
            except (OSError, ValueError):
                pass

    # -- forwarding ------------------------------------------------------------------------------

    def _pump(self, src: int, dst: int, sender: str) -> None:
        """Copy raw chunks from ``src`` to ``dst``; each goes on the queue before it goes on."""
        read, write, put, now = os.read, os.write, self._chunks.put, time.time
        try:
            while True:
                try:
                    data = read(src, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                put((sender, data, now()))
                view = memoryview(data)
                while view:
                    view = view[write(dst, view) :]
        except OSError:
            pass  # the receiving side is gone: stop forwarding this way
        finally:
            put((sender, None, now()))
            self._ended.add(sender)
            self._pump_ended.set()

    # -- recording and validation ----------------------------------------------------------------

    def _judge(self) -> None:
        buffers: Dict[str, LineBuffer] = {"client": LineBuffer(), "agent": LineBuffer()}
        while True:
            sender, data, ts = self._chunks.get()
            if not sender:
                break
            lines: List[Optional[bytes]] = (
                buffers[sender].feed(data) if data is not None else buffers[sender].flush()
            )
            for line in lines:
                self._add(
                    Record(sender=sender, ts=ts, raw=line)
                    if line is not None
                    else Record(sender=sender, ts=ts, event="oversize")
                )
            if data is None:
                self._add(Record(sender=sender, ts=ts, event="eof"))

    def _add(self, record: Record) -> None:
        if self._recorder is not None:
            self._recorder.add(record)
        if self._kept is not None:
            self._kept.append(record)
        for f in self.validator.feed(record):
            if not self.quiet:
                self._say(f"acpref proxy: {format_finding(f)}")

    # -- the whole run ---------------------------------------------------------------------------

    def run(self) -> int:
        """Spawn the agent, forward until both ends are done; returns the exit status."""
        stderr = StderrBuffer(limit=1 << 16, on_line=lambda line: self._say(line))
        # The agent leads a process group of its own: stopping it stops what it started.
        process = spawn(self.argv, stderr=stderr)
        assert process.popen.stdin is not None and process.popen.stdout is not None
        judge = threading.Thread(target=self._judge, name="acpref-proxy-judge", daemon=True)
        judge.start()
        up = threading.Thread(
            target=self._pump,
            args=(self._client_in, process.popen.stdin.fileno(), "client"),
            name="acpref-proxy-client",
            daemon=True,
        )
        down = threading.Thread(
            target=self._pump,
            args=(process.popen.stdout.fileno(), self._client_out, "agent"),
            name="acpref-proxy-agent",
            daemon=True,
        )
        up.start()
        down.start()
        self._pump_ended.wait()  # the client closed our stdin, or the agent its stdout, or a signal
        # spec-gap shutdown-ladder: the proxy passes the client's ladder on. The end of our input
        # becomes the end of the agent's (TRANSPORT-10), and the agent gets as long as the
        # client gives us (`grace`); a SIGTERM from the client (stop()) cuts the wait short and
        # is passed on at once, with the short ladder of a stopping process.
        agent_ended = self._ended == {"agent"}
        status = process.shutdown(grace=1.0 if agent_ended else self.grace, term_grace=2.0)
        down.join(1.0)
        try:
            os.close(self._client_out)
        except OSError:
            pass
        self._chunks.put(_STOP)
        judge.join(10.0)
        self.report = self.validator.finish()
        if self._recorder is not None:
            self._recorder.close()
        self._say("acpref proxy: " + self.report.format_text().replace("\n", "\nacpref proxy: "))
        if self.report_html:
            self._write_html(self.report_html)
        if status:
            return status if status > 0 else 128 - status
        return 1 if self.strict and not self.report.ok else 0

    def _write_html(self, path: str) -> None:
        from .._show_html import write_report

        transcript: Any = self._kept if self._kept is not None else self._record_path
        try:
            write_report(
                path,
                [(" ".join(self.argv), transcript, self.report)],
                title=f"acpref proxy: {' '.join(self.argv)}",
            )
        except (OSError, ValueError) as exc:
            self._say(f"acpref proxy: cannot write the report {path}: {exc}")
        else:
            self._say(f"acpref proxy: report written to {path}")


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    p.add_argument("--record", metavar="FILE.jsonl", help="record the traffic as a transcript")
    p.add_argument(
        "--strict", action="store_true", help="exit non-zero when a MUST rule was broken"
    )
    p.add_argument("--quiet", action="store_true", help="no live findings; the summary only")
    p.add_argument(
        "--report", metavar="REPORT.html", help="at the end, write the traffic as an HTML report"
    )
    p.add_argument("agent", nargs=argparse.REMAINDER, help="-- the agent command")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    argv = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not argv:
        print("acpref proxy: give the agent command after --", file=sys.stderr)
        return 2
    proxy = Proxy(
        argv, record=args.record, strict=args.strict, quiet=args.quiet, report_html=args.report
    )
    # SIGTERM, SIGHUP and Ctrl-C end the run as the end of input does, in a hurry: the agent is
    # stopped (its whole group), the summary printed.
    _groups.install_stop_signals(proxy.stop, (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    return proxy.run()
