"""``acpref proxy [--record FILE.jsonl] [--strict [--strict-gaps]] -- AGENT_CMD...``: a validating proxy.

The proxy sits between a real client (our stdin and stdout) and a real agent (spawned): the
client launches ``acpref proxy -- my-agent --flag`` instead of ``my-agent --flag``. Every byte is
forwarded unchanged, in order and at once: three pump threads (the client's bytes, the agent's
stdout, the agent's stderr) read raw chunks and write them on, never decoding anything, the
agent's stderr included (invalid UTF-8, long lines and an unterminated last line as they are).

Judging happens in a process of its own (``acpref._cli._judge``), so that decoding a large line
never holds back forwarding. Each chunk of the protocol streams is copied, before it is written
on (so the copies' order is causal: a response never precedes its request), into a buffer that a
feeder thread writes to the judge. The judge records (``--record``), validates, and reports
findings live on stderr. The buffer is bounded (``--judge-buffer``, 64 MiB): if judging cannot
keep up, the proxy stops copying, forwards the rest unjudged, and says so in the summary.

At the end (the client closed our stdin and the agent exited, or the agent exited) the judge
finishes with everything it was given and the summary goes to stderr, and with ``--report
REPORT.html`` the transcript as a page of ``acpref show`` (read back from ``--record``'s file,
else kept in the judge's memory until the end). The exit status is the
agent's when it failed; else, with ``--strict``, 1 when a MUST rule was broken or when judging
fell behind (with ``--strict-gaps``, also when a
spec-gap was found); else 0. The judge's summary goes by level: violations first, each with the spec's
sentence, then spec-gaps, then warnings.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Deque, Optional, Sequence, Set

from .._shell import groups as _groups
from .._shell.transport import StderrBuffer, spawn
from ._judge import pack
from ._status import USAGE, unstartable
from ._levels import add_level_options, add_newer_spec_option

__all__ = ["Proxy", "register", "run"]

#: Default bound on the bytes copied for the judge and not yet handed to it.
DEFAULT_JUDGE_BUFFER = 64 * 1024 * 1024


class Proxy:
    """Forward between a client's fds and a spawned agent; record and validate on the side."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        record: Optional[str] = None,
        strict: bool = False,
        strict_gaps: bool = False,
        fail_on: Sequence[str] = (),
        client_in: int = 0,
        client_out: int = 1,
        err_fd: int = 2,
        grace: float = 30.0,
        quiet: bool = False,
        judge_buffer: int = DEFAULT_JUDGE_BUFFER,
        report_html: Optional[str] = None,
        newer_spec: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.newer_spec = newer_spec
        self.strict = strict
        self.strict_gaps = strict_gaps
        self.fail_on = tuple(fail_on)
        self.grace = grace
        self.quiet = quiet
        self.record = record
        self.report_html = report_html
        self._client_in = client_in
        self._client_out = client_out
        self._err_fd = err_fd
        self._err_lock = threading.Lock()  # one writer at a time on our stderr
        self._judge_buffer = judge_buffer
        # The copies for the judge: frames not yet written to it, and their size.
        self._copies: Deque[bytes] = collections.deque()
        self._copied = 0
        self._copies_cond = threading.Condition()
        self._copies_done = False  # no more copies will come (both streams ended, or behind)
        #: Set when judging fell behind: (bytes not judged, when) for the summary.
        self.behind: Optional[str] = None
        self._unjudged = 0
        self._open_streams = 2
        self.report: Optional[dict] = None
        self._pump_ended = threading.Event()
        self._forwarded = {"client": 0, "agent": 0}  # bytes passed on, by sender
        self._ended: Set[str] = set()  # the senders whose stream ended ("client", "agent")

    def stop(self, signum: int = 0) -> None:
        """End the run now (from a signal handler): the agent is stopped, the summary printed."""
        _groups.hurry()
        self._pump_ended.set()

    def _say(self, text: str) -> None:
        self._write_err((text + "\n").encode("utf-8", "replace"))

    def _write_err(self, data: bytes) -> None:
        with self._err_lock:
            try:
                _write_all(self._err_fd, data)
            except OSError:
                pass

    # -- forwarding ------------------------------------------------------------------------------

    def _pump(self, src: int, dst: int, sender: str) -> None:
        """Copy raw chunks from ``src`` to ``dst``; each is copied for the judge before it goes on."""
        read, copy = os.read, self._copy
        try:
            while True:
                try:
                    data = read(src, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                copy(sender, data)
                _write_all(dst, data)
                self._forwarded[sender] += len(data)
        except OSError:
            pass  # the receiving side is gone: stop forwarding this way
        finally:
            copy(sender, None)
            self._ended.add(sender)
            self._pump_ended.set()

    def _drain(self, down: threading.Thread) -> None:
        """The agent's group has ended: the rest of its output is in the pipe. Wait while it
        still flows; a second without a byte passed on means the client reads no more (or a
        process outside the group holds the pipe open): stop there."""
        forwarded = -1
        while down.is_alive() and self._forwarded["agent"] != forwarded:
            forwarded = self._forwarded["agent"]
            down.join(1.0)

    # -- copies for the judge ----------------------------------------------------------------------

    def _copy(self, sender: str, data: Optional[bytes]) -> None:
        frame = pack(sender, data, time.time())
        with self._copies_cond:
            if data is None:
                self._open_streams -= 1
            if self.behind is not None:
                self._unjudged += len(data or b"")
            elif self._copied + len(frame) > self._judge_buffer:
                # Judging cannot keep up: stop copying rather than hold more, or slow forwarding.
                self._unjudged += len(data or b"") + self._copied
                self.behind = "judging fell behind"
                self._copies.clear()
                self._copied = 0
            else:
                self._copies.append(frame)
                self._copied += len(frame)
            if self._open_streams == 0 or self.behind is not None:
                self._copies_done = True
            self._copies_cond.notify()

    def _feed(self, judge: "subprocess.Popen[bytes]") -> None:
        """Hand the copies to the judge, in order; close its stdin when no more will come."""
        assert judge.stdin is not None
        fd = judge.stdin.fileno()
        try:
            while True:
                with self._copies_cond:
                    while not self._copies and not self._copies_done:
                        self._copies_cond.wait()
                    if not self._copies:
                        break
                    frame = self._copies.popleft()
                    self._copied -= len(frame)
                _write_all(fd, frame)
        except OSError:
            pass  # the judge died: the summary says so
        finally:
            try:
                judge.stdin.close()
            except OSError:
                pass

    def _start_judge(self) -> "subprocess.Popen[bytes]":
        argv = [sys.executable, "-m", "acpref._cli._judge"]
        if self.record:
            argv += ["--record", self.record]
            argv += ["--header", json.dumps({"recorder": "proxy", "agent": self.argv})]
        if self.quiet:
            argv.append("--quiet")
        if self.strict_gaps:
            argv.append("--strict-gaps")
        for level in self.fail_on:
            argv += ["--fail-on", level]
        if self.newer_spec:
            argv.append("--newer-spec")
        if self.report_html:
            argv += ["--report", self.report_html, "--name", " ".join(self.argv)]
        return subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err_fd
        )

    # -- the whole run ---------------------------------------------------------------------------

    def run(self) -> int:
        """Spawn the agent, forward until both ends are done; returns the exit status."""
        judge = self._start_judge()
        # spec TRANSPORT-07: the agent's stderr is never parsed: passed on byte for byte.
        process = spawn(self.argv, stderr=_PassOn(self._write_err))
        assert process.popen.stdin is not None and process.popen.stdout is not None
        # The agent's output is read from a descriptor of our own: its shutdown below closes
        # popen.stdout, and what the agent wrote last may still be in the pipe then.
        agent_out = os.dup(process.popen.stdout.fileno())
        threads = {
            "feed": threading.Thread(target=self._feed, args=(judge,), daemon=True),
            "up": threading.Thread(
                target=self._pump,
                args=(self._client_in, process.popen.stdin.fileno(), "client"),
                daemon=True,
            ),
            "down": threading.Thread(
                target=self._pump,
                args=(agent_out, self._client_out, "agent"),
                daemon=True,
            ),
        }
        for name, thread in threads.items():
            thread.name = f"acpref-proxy-{name}"
            thread.start()
        up, down = threads["up"], threads["down"]
        self._pump_ended.wait()  # the client closed our stdin, or the agent its stdout, or a signal
        # spec-gap shutdown-ladder: the proxy passes the client's ladder on. The end of our input
        # becomes the end of the agent's (TRANSPORT-10), and the agent gets as long as the
        # client gives us (`grace`); a SIGTERM from the client (stop()) cuts the wait short and
        # is passed on at once, with the short ladder of a stopping process.
        agent_ended = self._ended == {"agent"}
        status = process.shutdown(grace=1.0 if agent_ended else self.grace, term_grace=2.0)
        self._drain(down)
        try:
            os.close(self._client_out)
        except OSError:
            pass
        if not down.is_alive():
            os.close(agent_out)
        if up.is_alive():  # the client still holds our stdin open: its copies end here
            self._copy("client", None)
        # The judge finishes what it was given: at most the judge buffer, so this ends.
        threads["feed"].join()
        assert judge.stdout is not None
        answer = judge.stdout.read()
        judge.wait()
        judge.stdout.close()
        try:
            self.report = json.loads(answer)
        except ValueError:
            self.report = None
        ok = self._summary()
        if status:
            return status if status > 0 else 128 - status
        return 1 if self.strict and not ok else 0

    def _summary(self) -> bool:
        """The proxy's own lines after the judge's summary; True when all is judged and clean."""
        ok = True
        if self.report is None:
            self._say("acpref proxy: the judge failed; the traffic was forwarded unjudged")
            ok = False
        elif self.report.get("failing", 1):
            ok = False
            if not self.strict:
                self._say("acpref proxy: without --strict, findings do not change the exit status")
        if self.behind is not None:
            self._say(
                f"acpref proxy: {self.behind}: {self._unjudged} bytes were forwarded unjudged "
                f"(the judge buffer holds {self._judge_buffer} bytes); the findings cover "
                "only what came before"
            )
            ok = False
        return ok


class _PassOn(StderrBuffer):
    """The agent's stderr drain, writing each chunk on as it comes instead of keeping it."""

    def __init__(self, write: Callable[[bytes], None]) -> None:
        super().__init__(limit=0)
        self._write = write

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self._write(data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


_DESCRIPTION = """\
Sit between an ACP client and its agent, forward every byte unchanged, and judge the
traffic against the spec as it goes: findings on stderr live, a summary at the end.

The client starts `acpref proxy [options] -- AGENT_CMD` where it would start AGENT_CMD:
the proxy's stdin and stdout are the client's pipes, the agent is spawned behind it.
Forwarding never waits for judging (a process of its own)."""

_EPILOG = """\
examples:
  a client of acpref's own, the echo agent behind the proxy, the traffic recorded:
  $ acpref client -p hello -- acpref proxy --record traffic.jsonl -- acpref echo
  then judge the recording again, or draw it:
  $ acpref validate traffic.jsonl
  in an editor's agent settings, the command becomes:
  acpref proxy --strict --record /tmp/agent.jsonl -- my-agent --its-flags

exit status:
  the agent's own status when it failed (128+N when signal N ended it);
  else, with --strict: 1 when a finding fails the run (by default MUST and MUST NOT; with
  --strict-gaps: spec-gaps too; --fail-on LEVEL: that level too) or judging fell behind,
  else 0 (the summary's last line says which findings fail the run);
  2 bad usage (no agent command), or the agent command cannot be started.
  SIGTERM, SIGHUP, Ctrl-C and the end of the client's input stop the agent (its whole
  process group) and end the run with the summary.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name,
        help=help_text,
        usage="acpref proxy [options] -- AGENT_CMD [ARGS...]",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--record",
        metavar="FILE.jsonl",
        help="write the traffic, both ways, as a transcript (for acpref validate, show, diff)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a MUST-level rule was broken (default: 0, findings only reported)",
    )
    add_level_options(p, when="with --strict: ")
    p.add_argument(
        "--quiet", action="store_true", help="no findings while it runs; the summary only"
    )
    add_newer_spec_option(p)
    p.add_argument(
        "--report",
        metavar="REPORT.html",
        help="at the end, write the traffic as an HTML page of sequence diagrams",
    )
    p.add_argument(
        "--judge-buffer",
        type=int,
        default=DEFAULT_JUDGE_BUFFER,
        metavar="BYTES",
        help="traffic held for judging at most (default 64 MiB); past it, the rest is "
        "forwarded unjudged and the summary says so",
    )
    p.add_argument(
        "agent", nargs=argparse.REMAINDER, metavar="-- AGENT_CMD", help="the agent command"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    argv = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not argv:
        print("acpref proxy: give the agent command after --", file=sys.stderr)
        return 2
    if unstartable("proxy", argv):
        return USAGE
    proxy = Proxy(
        argv,
        record=args.record,
        strict=args.strict,
        strict_gaps=args.strict_gaps,
        fail_on=args.fail_on,
        quiet=args.quiet,
        judge_buffer=args.judge_buffer,
        report_html=args.report,
        newer_spec=args.newer_spec,
    )
    # SIGTERM, SIGHUP and Ctrl-C end the run as the end of input does, in a hurry: the agent is
    # stopped (its whole group), the summary printed.
    _groups.install_stop_signals(proxy.stop, (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    return proxy.run()
