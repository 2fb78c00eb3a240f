"""Terminals for the reference client: real processes, bounded output, no orphans.

Spec: terminals.mdx; clauses TERM-03 .. TERM-06, TERM-09 .. TERM-15, RPC-15, RPC-17. Decisions:
spec_notes/client.md (terminals).

A terminal runs ``command`` with ``args`` directly (no shell), stdin from ``/dev/null``, stdout
and stderr into one pipe (so their interleaving is kept), in a process group of its own (so a
kill reaches its children, and a Ctrl-C typed at our terminal does not). Two threads serve it:
a *reader* that moves output into an ``OutputBuffer`` and a *waiter* that reaps the process.
Output is bounded: the buffer keeps the last ``outputByteLimit`` bytes (or the manager's own cap,
whichever is smaller), cut at a UTF-8 character boundary (TERM-04, TERM-05), so a process that
prints gigabytes costs a bounded amount of memory.

Killing is a ladder: SIGTERM to the group, up to ``kill_grace`` seconds for the command to end,
then SIGKILL to whatever is left of the group (a child that ignores SIGTERM, a background child
still running after the command ended). The command is not reaped until its terminal is
released or closed: while it is a zombie its process id stays reserved, so the group id cannot
be reused by an unrelated group and signalling the group stays safe. ``close()`` kills and
reaps every terminal and joins every thread.

Nothing here knows JSON-RPC; errors are ``RpcError`` so a client can raise them as they are.
"""

from __future__ import annotations

import codecs
import itertools
import logging
import os
import select
import signal
import subprocess
import threading
import time
import uuid
from collections import OrderedDict
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .._shell import groups as _groups
from ..errors import ErrorCode, RpcError

__all__ = ["OutputBuffer", "TerminalManager", "ExitStatus", "OutputListener", "DEFAULT_OUTPUT_CAP"]

log = logging.getLogger("acpref.client.terminals")

#: The most output bytes kept per terminal whatever the agent asks (and when it asks nothing).
DEFAULT_OUTPUT_CAP = 4 * 1024 * 1024

#: ``(exit_code, signal_name)``: one of them is None (spec TERM-10).
ExitStatus = Tuple[Optional[int], Optional[str]]
#: ``listener(terminal_id, text)``: live output as it is produced, decoded (spec TERM-08).
OutputListener = Callable[[str, str], None]

_READ = 64 * 1024


def _utf8_complete(data: bytes) -> int:
    """How many leading bytes of ``data`` end on a character boundary (holds back a split char)."""
    n = len(data)
    for back in range(1, min(4, n) + 1):
        byte = data[n - back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead byte
        if byte < 0x80:
            return n
        need = (
            2
            if byte >> 5 == 0b110
            else 3
            if byte >> 4 == 0b1110
            else 4
            if byte >> 3 == 0b11110
            else 1
        )
        return n - back if back < need else n
    return n


class OutputBuffer:
    """The last ``limit`` bytes of a stream, readable as text cut at character boundaries.

    Appends are amortised O(1): the buffer grows to twice the limit before it is compacted.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self._buf = bytearray()
        #: Bytes fed in total.
        self.total = 0

    @property
    def truncated(self) -> bool:
        """True exactly when bytes were dropped because of the limit (spec TERM-06)."""
        return self.total > self.limit  # spec TERM-06: dropped bytes, and only those

    @property
    def retained(self) -> int:
        """Bytes held in memory now (at most twice the limit)."""
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        """Append output bytes; the oldest beyond twice the limit are dropped."""
        self.total += len(data)
        if len(data) >= self.limit:
            self._buf = bytearray(data[len(data) - self.limit :])
            return
        self._buf += data
        if len(self._buf) > 2 * self.limit:
            del self._buf[: len(self._buf) - self.limit]

    def text(self, final: bool = False) -> str:
        """The retained output as text.

        spec TERM-04: the oldest bytes beyond the limit are gone; TERM-05: the cut falls on a
        character boundary (a character split by it is dropped whole, leaving fewer bytes than
        the limit). Until ``final``, a character still being written is held back.
        """
        # spec TERM-04: the last `limit` bytes are kept; the oldest go first.
        data = (
            bytes(self._buf[-self.limit :])
            if self.limit and len(self._buf) > self.limit
            else bytes(self._buf)
        )
        if not self.limit:
            data = b""
        start = 0
        if self.truncated:
            while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
                start += 1  # spec TERM-05: skip the tail of a character cut at the front
        end = len(data) if final else _utf8_complete(data)
        return data[start:end].decode("utf-8", "replace")


def _wait_unreaped(popen: "subprocess.Popen[bytes]") -> ExitStatus:
    """Wait for ``popen`` to exit, leaving it unreaped (a zombie) where the system allows.

    ``waitid`` with ``WNOWAIT`` reports the exit without reaping, so the process id, which is
    also its group id, stays reserved until ``_Terminal.close`` reaps it.
    """
    waitid = getattr(os, "waitid", None)
    if waitid is not None and hasattr(os, "WNOWAIT"):
        try:
            info = waitid(os.P_PID, popen.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # pragma: no cover - reaped by someone else
            info = None
        if info is not None:
            if info.si_code == os.CLD_EXITED:
                return (info.si_status, None)
            return (None, _signal_name(-info.si_status))
    returncode = popen.wait()  # pragma: no cover - no waitid: reaped here
    return (None, _signal_name(returncode)) if returncode < 0 else (returncode, None)


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"SIG{-returncode}"


class _Terminal:
    """One command and its threads. Its lock guards the buffer and the exit status."""

    def __init__(
        self, terminal_id: str, session_id: str, limit: int, listener: Optional[OutputListener]
    ) -> None:
        self.id = terminal_id
        self.session_id = session_id
        self.buffer = OutputBuffer(limit)
        self.popen: Optional["subprocess.Popen[bytes]"] = None
        self.status: Optional[ExitStatus] = None
        self.exited = threading.Event()
        #: The command was reaped (by ``close``): its group may no longer be signalled.
        self.reaped = False
        self.eof = threading.Event()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads: List[threading.Thread] = []
        self._listener = listener
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def start(
        self, argv: Sequence[str], cwd: str, env: Mapping[str, str], drain_grace: float
    ) -> None:
        try:
            self.popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,  # spec-gap terminal-streams: one interleaved output
                cwd=cwd,
                env=dict(env),
                bufsize=0,
                close_fds=True,
                start_new_session=True,  # its own process group: killpg reaches its children
            )
        except OSError as exc:
            # spec-gap terminal-spawn-failure: a command that cannot start still makes a
            # terminal, which has exited with 127 (not found) or 126 (not executable), like a
            # shell would say, so the agent reads the reason the usual way.
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            self._feed(f"acpref: cannot run {argv[0]!r}: {exc.strerror or exc}\n".encode())
            self.status = (code, None)
            self.eof.set()
            self.exited.set()
            return
        for target, name in ((self._read, "reader"), (lambda: self._wait(drain_grace), "waiter")):
            thread = threading.Thread(target=target, name=f"acpref-{self.id}-{name}", daemon=True)
            self.threads.append(thread)
            thread.start()

    def _feed(self, data: bytes) -> None:
        with self.lock:
            self.buffer.feed(data)
        if self._listener is not None:
            text = self._decoder.decode(data)
            if text:
                try:
                    self._listener(self.id, text)
                except Exception:  # noqa: BLE001 - a UI callback must not stop the reader
                    log.exception("terminal output listener failed")

    def _read(self) -> None:
        assert self.popen is not None and self.popen.stdout is not None
        fd = self.popen.stdout.fileno()
        try:
            while not self.stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(fd, _READ)
                if not data:
                    break
                self._feed(data)
        except OSError as exc:  # pragma: no cover - the pipe went away under us
            log.debug("terminal %s: read ended: %s", self.id, exc)
        finally:
            self.eof.set()
            try:
                self.popen.stdout.close()
            except OSError:  # pragma: no cover
                pass

    def _wait(self, drain_grace: float) -> None:
        assert self.popen is not None
        status = _wait_unreaped(self.popen)
        # The output a command wrote before it exited is in the pipe: let the reader take it
        # before the exit is reported (background children may keep the pipe open: bounded).
        self.eof.wait(drain_grace)
        with self.lock:
            self.status = status
        self.exited.set()
        if self.stop.is_set():
            self._reap()  # closed before it ended (a command that outlived its SIGKILL wait)

    def _reap(self) -> None:
        with self.lock:
            if self.popen is not None and not self.reaped:
                self.popen.wait()  # it has exited: at once
                self.reaped = True

    def signal_group(self, signum: int) -> None:
        with self.lock:
            if self.popen is None or self.reaped:
                return  # reaped: the group id may belong to others now
            try:
                os.killpg(self.popen.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self, grace: float) -> None:
        """SIGTERM the group, wait up to ``grace`` for the command, then SIGKILL the group."""
        # spec-gap terminal-kill-ladder: TERM-12 says "terminate"; a command that ignores
        # SIGTERM is killed after a grace period, so a kill always ends it.
        if not self.exited.is_set():
            self.signal_group(signal.SIGTERM)
            self.exited.wait(_groups.ladder_bounds(0.0, grace)[1])  # short when we are stopping
        # Bug found (tests/test_security.py): the ladder stopped as soon as the command itself
        # had ended, so a child that ignored SIGTERM, or one left running in the background,
        # outlived the terminal. Whatever is left of the group now gets SIGKILL (the command
        # is not reaped yet, so the group id is still this terminal's).
        self.signal_group(signal.SIGKILL)
        self.exited.wait(5.0)
        # SIGKILL is delivered asynchronously: the members may still run for a moment. A kill
        # answered (or a terminal released) means nothing of the command runs any more.
        if self.popen is not None and not self.reaped:
            _groups.wait_group_ended(self.popen.pid, 5.0)

    def close(self, grace: float) -> None:
        """Kill the group, reap the command, stop the reader, join the threads (bounded)."""
        self.kill(grace)
        self.stop.set()
        if self.exited.is_set():
            self._reap()  # else the waiter reaps it when it ends
        for thread in self.threads:
            thread.join(2.0)


class TerminalManager:
    """Every terminal of one client connection, by id, with a cap per session.

    ``max_per_session`` bounds the terminals a session holds (created and not yet released);
    ``output_cap`` bounds the bytes kept per terminal; ``kill_grace`` is the SIGTERM-to-SIGKILL
    wait. ``base_env`` is the environment commands start from (the agent's ``env`` overlays it).
    """

    def __init__(
        self,
        *,
        max_per_session: int = 16,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        kill_grace: float = 2.0,
        drain_grace: float = 0.5,
        base_env: Optional[Mapping[str, str]] = None,
        listener: Optional[OutputListener] = None,
    ) -> None:
        self.max_per_session = max_per_session
        self.output_cap = output_cap
        self.kill_grace = kill_grace
        self.drain_grace = drain_grace
        self._base_env = base_env
        self._listener = listener
        self._lock = threading.Lock()  # guards _live, _released and _closed
        self._live: Dict[str, _Terminal] = {}
        #: What released terminals showed last, for a UI (spec TERM-15); bounded.
        self._released: "OrderedDict[str, Tuple[str, bool, Optional[ExitStatus]]]" = OrderedDict()
        self._closed = False
        self._ids = itertools.count(1)

    # -- The five methods ---------------------------------------------------------------------

    def create(
        self,
        session_id: str,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: str,
        output_byte_limit: Optional[int],
    ) -> str:
        """Start the command and return its terminal id at once (spec TERM-03)."""
        # spec-gap terminal-output-cap: the client's own cap bounds memory whatever the agent asks
        # (and when it asks nothing); output dropped because of it sets `truncated` too.
        limit = (
            self.output_cap
            if output_byte_limit is None
            else min(output_byte_limit, self.output_cap)
        )
        terminal_id = f"term_{next(self._ids)}_{uuid.uuid4().hex[:8]}"
        term = _Terminal(terminal_id, session_id, limit, self._listener)
        with self._lock:
            if self._closed:
                raise RpcError.cancelled("the client is shutting down")
            held = sum(1 for t in self._live.values() if t.session_id == session_id)
            if held >= self.max_per_session:
                # spec RPC-15 / spec-gap terminal-cap: a request refused by a resource limit.
                raise RpcError(
                    ErrorCode.REQUEST_CANCELLED,
                    f"session holds {held} terminals, the most allowed; release some first",
                    {"limit": self.max_per_session},
                )
            self._live[terminal_id] = term
        # spec-gap terminal-env: the command starts from the client's environment (or base_env),
        # and the agent's variables overlay it.
        full_env = dict(os.environ if self._base_env is None else self._base_env)
        full_env.update(env)
        try:
            term.start([command, *args], cwd, full_env, self.drain_grace)
        except BaseException:
            with self._lock:  # not started: it must not hold a place under the cap
                self._live.pop(terminal_id, None)
            raise
        log.info("terminal %s: started %r in %s", terminal_id, [command, *args], cwd)
        return terminal_id

    def output(self, session_id: str, terminal_id: str) -> Tuple[str, bool, Optional[ExitStatus]]:
        """``(output, truncated, exit status or None)`` now, without waiting (spec TERM-09)."""
        term = self._get(session_id, terminal_id)
        with term.lock:
            status = term.status if term.exited.is_set() else None
            return term.buffer.text(final=status is not None), term.buffer.truncated, status

    def wait_for_exit(
        self, session_id: str, terminal_id: str, timeout: Optional[float] = None
    ) -> ExitStatus:
        """Block until the command has exited (spec TERM-11); ``RpcError`` -32800 on timeout."""
        term = self._get(session_id, terminal_id)
        if not term.exited.wait(timeout):
            raise RpcError.cancelled(f"terminal {terminal_id} still running after {timeout}s")
        assert term.status is not None
        return term.status

    def kill(self, session_id: str, terminal_id: str) -> None:
        """Stop the command; the terminal stays readable (spec TERM-12)."""
        self._get(session_id, terminal_id).kill(self.kill_grace)

    def release(self, session_id: str, terminal_id: str) -> None:
        """Kill if running, free everything; the id is invalid afterwards (spec TERM-13, TERM-14)."""
        term = self._get(session_id, terminal_id)
        with self._lock:
            if self._live.pop(terminal_id, None) is None:
                raise _unknown(terminal_id)  # released meanwhile by another request
        term.close(self.kill_grace)
        with term.lock:
            self._released[terminal_id] = (
                term.buffer.text(final=True),
                term.buffer.truncated,
                term.status,
            )
        with self._lock:
            while len(self._released) > 64:
                self._released.popitem(last=False)

    # -- Bookkeeping --------------------------------------------------------------------------

    def snapshot(self, terminal_id: str) -> Optional[Tuple[str, bool, Optional[ExitStatus]]]:
        """Output of a live or recently released terminal, for display (spec TERM-15)."""
        with self._lock:
            term = self._live.get(terminal_id)
            if term is None:
                # spec TERM-15: a released terminal's output stays available to the UI.
                return self._released.get(terminal_id)
        with term.lock:
            return term.buffer.text(final=term.exited.is_set()), term.buffer.truncated, term.status

    def retained_bytes(self, terminal_id: str) -> int:
        """Bytes of output held in memory for a live terminal (0 if unknown)."""
        with self._lock:
            term = self._live.get(terminal_id)
        return term.buffer.retained if term is not None else 0

    def live(self, session_id: Optional[str] = None) -> List[str]:
        """The ids of the terminals held now (created and not released), of one session or all."""
        with self._lock:
            return [
                t.id
                for t in self._live.values()
                if session_id is None or t.session_id == session_id
            ]

    def release_session(self, session_id: str) -> None:
        """Release every terminal of a session (it closed)."""
        for terminal_id in self.live(session_id):
            try:
                self.release(session_id, terminal_id)
            except RpcError:
                pass

    def close(self) -> None:
        """Kill and reap every terminal, join every thread; later creates are refused."""
        with self._lock:
            self._closed = True
            terms = list(self._live.values())
            self._live.clear()
        # One grace period for all of them, not one each: SIGTERM to every group, wait, then each
        # terminal's own ladder finds its grace spent and goes straight on to SIGKILL.
        for term in terms:
            term.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + _groups.ladder_bounds(0.0, self.kill_grace)[1]
        for term in terms:
            term.exited.wait(max(0.0, deadline - time.monotonic()))
        for term in terms:
            term.close(0.0)

    def _get(self, session_id: str, terminal_id: str) -> _Terminal:
        with self._lock:
            term = self._live.get(terminal_id)
        if term is None or term.session_id != session_id:
            raise _unknown(terminal_id)
        return term


def _unknown(terminal_id: str) -> RpcError:
    # spec TERM-14, RPC-17: an unknown or released terminal is a missing resource.
    return RpcError(
        ErrorCode.RESOURCE_NOT_FOUND,
        f"unknown or released terminal {terminal_id!r}",
        {"terminalId": terminal_id},
    )
