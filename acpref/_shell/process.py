"""Processes: spawning a peer, draining its stderr, and stopping it with its group.

Spec: transports.mdx (stdio); clauses TRANSPORT-03 (the client spawns the agent), TRANSPORT-07
(stderr is never ACP), TRANSPORT-10 (the client ends the connection by closing the agent's stdin
and terminating it).

``spawn`` starts a peer with piped stdin/stdout, its stderr drained by a thread (a peer blocked
on a full stderr pipe is a classic hang), in a process group of its own; ``Process.shutdown``
stops it in a bounded ladder (end of input, SIGTERM, SIGKILL) and then whatever is left of its
group. The group bookkeeping (signalling, waiting without reaping, hurrying on our own stop) is
``acpref._shell.groups``.
"""

from __future__ import annotations

import collections
import logging
import os
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Deque, Mapping, Optional, Sequence

if TYPE_CHECKING:
    import subprocess

from . import groups

__all__ = ["Process", "spawn", "StderrBuffer"]

log = logging.getLogger("acpref.transport")


class StderrBuffer:
    """Keeps the last ``limit`` bytes a process wrote to stderr, and passes lines to a callback.

    Spec TRANSPORT-07: the client may capture, forward or ignore an agent's stderr; it is never
    parsed as ACP. Draining it always keeps a chatty peer from blocking on a full pipe.
    """

    def __init__(
        self, limit: int = 1 << 20, on_line: Optional[Callable[[str], None]] = None
    ) -> None:
        self._limit = limit
        self._chunks: Deque[bytes] = collections.deque()
        self._size = 0
        self._lock = threading.Lock()
        self._on_line = on_line
        self._partial = b""
        self.total = 0

    def feed(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            self._chunks.append(data)
            self._size += len(data)
            while self._size > self._limit and self._chunks:
                self._size -= len(self._chunks.popleft())
        if self._on_line is not None:
            data = self._partial + data
            *lines, self._partial = data.split(b"\n")
            if len(self._partial) > self._limit:
                self._partial = b""
            for line in lines:
                try:
                    self._on_line(line.decode("utf-8", "replace"))
                except Exception:  # noqa: BLE001 - a callback must not stop the drain
                    log.exception("stderr callback failed")

    def text(self) -> str:
        """What is kept, decoded (invalid UTF-8 replaced)."""
        with self._lock:
            return b"".join(self._chunks).decode("utf-8", "replace")


class Process:
    """A spawned peer: its pipes, its drained stderr, and a bounded shutdown ladder.

    A peer started with ``own_group`` (the default of ``spawn``) leads a process group of its
    own, and the ladder stops the whole group: what the peer started (an ``npx`` wrapper's
    ``node``, a shell's children) ends with it. The leader is reaped only once the group has been
    signalled for the last time, so the group id cannot meanwhile be reused by someone else.
    """

    def __init__(
        self, popen: "subprocess.Popen[bytes]", stderr: StderrBuffer, *, own_group: bool = False
    ) -> None:
        self.popen = popen
        self.stderr = stderr
        #: The process group the ladder signals (the peer's pid), or None when the peer shares
        #: our group: then only the peer itself is signalled.
        self.group: Optional[int] = popen.pid if own_group else None
        #: The signal ``shutdown`` sent ("SIGTERM", then "SIGKILL"), if it sent one: the process
        #: had not ended when its stdin was closed. None otherwise.
        self.stopped_by: Optional[str] = None
        self._lock = threading.Lock()  # guards _reaped, and orders signals before the reaping
        self._reaped = False
        self._drain: Optional[threading.Thread] = None
        if popen.stderr is not None:  # else it writes to our own stderr (spawn's pass_stderr)
            self._drain = threading.Thread(
                target=self._drain_stderr, name=f"acpref-stderr-{popen.pid}", daemon=True
            )
            self._drain.start()

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> Optional[int]:
        """The exit status if the process has exited (negative: its signal), else None."""
        return groups.wait_unreaped(self.popen, 0.0)

    def wait(self, timeout: float) -> Optional[int]:
        """Wait up to ``timeout`` seconds for the process to exit; its status, or None.

        The process is not reaped here (``shutdown`` does it), so its group stays ours.
        """
        return groups.wait_unreaped(self.popen, timeout)

    def _drain_stderr(self) -> None:
        err = self.popen.stderr
        assert err is not None
        fd = err.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            self.stderr.feed(data)
        try:
            err.close()
        except OSError:  # pragma: no cover
            pass

    def shutdown(
        self, *, grace: float = 2.0, term_grace: float = 2.0, kill_wait: float = 5.0
    ) -> Optional[int]:
        """Stop the process in a ladder: close stdin, wait; SIGTERM, wait; SIGKILL, wait.

        Spec TRANSPORT-10: the client ends the connection by closing the agent's stdin and
        terminating the subprocess. Signals go to the process's group when it has its own, and
        whatever is left of the group once the leader has ended is killed (and waited for) too.
        Each step is bounded; returns the exit status (negative: killed by that signal), or
        None if even SIGKILL did not end it in time. Safe to call again (and from two threads).
        """
        if self.popen.stdin is not None:
            try:
                self.popen.stdin.close()
            except OSError:
                pass
        status = self._step(grace, groups.HURRY_GRACE)
        if status is None:
            self._signal(signal.SIGTERM)
            status = self._step(term_grace, groups.HURRY_TERM)
        if status is None:
            self._signal(signal.SIGKILL)
            status = self.wait(kill_wait)
        self.stop_group(kill_wait)
        self._reap()
        self.wait_drained(1.0)
        for f in (self.popen.stdout,):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        return self.popen.returncode if self._reaped else status

    def _step(self, bound: float, hurried_bound: float) -> Optional[int]:
        """One wait of the ladder: ``bound``, or ``hurried_bound`` once this process is stopping
        (``groups.hurry``: also when that happens during the wait)."""
        start = time.monotonic()
        if groups.hurried():
            return self.wait(min(bound, hurried_bound))
        status = groups.wait_unreaped(self.popen, bound, until_hurry=True)
        if status is None and groups.hurried():
            left = start + min(bound, hurried_bound) - time.monotonic()
            status = self.wait(max(0.0, left))
        return status

    def stop_group(self, timeout: float) -> bool:
        """SIGKILL what is left of the process's own group; wait until none of it runs.

        The members a peer left behind (a child that ignores end of input and SIGTERM) die
        here. Returns True when nothing of the group runs any more (at once without a group).
        """
        with self._lock:
            if self.group is None or self._reaped or self.popen.returncode is not None:
                return True  # reaped (here, or by whoever called Popen.wait): not ours to signal
            # The leader is not reaped yet: the group id is still this process's.
            groups.signal_group(self.group, signal.SIGKILL)
        return groups.wait_group_ended(self.group, timeout)

    def _signal(self, signum: int) -> None:
        with self._lock:
            if self._reaped or self.popen.returncode is not None:
                return  # reaped already: its pid, and so its group id, may be someone else's
            name = groups.signal_name(signum)
            if self.group is not None:
                groups.signal_group(self.group, signum)
            else:
                try:
                    self.popen.send_signal(signum)
                except ProcessLookupError:  # pragma: no cover - already gone
                    pass
            self.stopped_by = name

    def _reap(self) -> None:
        with self._lock:
            if self._reaped:
                return
            try:
                self.popen.wait(timeout=0.5)  # it has exited, or SIGKILL failed: bounded
            except _subprocess().TimeoutExpired:  # pragma: no cover - stuck in the kernel
                log.error("process %d did not end after SIGKILL", self.popen.pid)
                return
            self._reaped = True

    def describe_exit(self, status: Optional[int]) -> str:
        """How the process ended, in words: ``status`` is what ``shutdown`` returned.

        A negative status is a signal: it says whether acpref sent it (the process did not end
        on the end of its input) or someone else did.
        """
        if status is None:
            return "did not end, even after SIGKILL"
        if status >= 0:
            return f"exited with status {status}"
        name = groups.signal_name(-status)
        if self.stopped_by == name:
            if name == "SIGTERM":
                return "did not exit at the end of its input, so acpref stopped it with SIGTERM"
            return "ignored the end of its input and SIGTERM, so acpref killed it (SIGKILL)"
        return f"was killed by {name} (not sent by acpref)"

    def wait_drained(self, timeout: float) -> bool:
        """Wait for the stderr drain to reach the end of the process's stderr."""
        if self._drain is None:
            return True
        self._drain.join(timeout)
        return not self._drain.is_alive()


def _subprocess() -> Any:
    """The ``subprocess`` module, imported on first use: an agent that spawns nothing (most
    agents served over stdio) does not pay for its import at start-up."""
    import subprocess

    return subprocess


def cannot_start(argv: Sequence[str], *, cwd: Optional[str] = None) -> Optional[str]:
    """Why ``argv`` cannot be started, as one line (``None``: it can, as far as can be seen).

    A command that is not found or not executable is a mistake of the environment (a venv not
    on ``PATH``), not of the peer: the commands and fixtures that start a peer ask this first and
    say so in one line, instead of reporting every clause the peer never had a chance to meet.
    """
    import shutil

    if not argv:
        return "no command given"
    name = str(argv[0])
    if os.sep in name:
        path = name if cwd is None or os.path.isabs(name) else os.path.join(cwd, name)
        if not os.path.exists(path):
            return f"cannot start {name!r}: no such file"
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            return f"cannot start {name!r}: not an executable file"
        return None
    if shutil.which(name) is None:
        return f"cannot start {name!r}: command not found on PATH"
    return None


def spawn(
    argv: Sequence[str],
    *,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    stderr: Optional[StderrBuffer] = None,
    new_session: bool = True,
    pass_stderr: bool = False,
    **popen_kwargs: Any,
) -> Process:
    """Start ``argv`` (no shell) with piped stdin/stdout and a drained stderr.

    Spec TRANSPORT-03: in stdio mode the client spawns the agent process. With ``new_session``
    (the default) it runs in a session and process group of its own: a Ctrl-C typed at our
    terminal reaches us, not it, and its shutdown stops the whole group. Without, it stays in
    ours (a harness that stops its own group reaches it) and only the process itself is
    signalled. With ``pass_stderr`` its stderr is ours (written straight through, nothing
    kept); else it is drained into ``stderr``.
    """
    if isinstance(argv, (str, bytes)):
        raise TypeError(
            f"argv must be a list of strings, not a single string: {argv!r} "
            f"(try {str(argv).split()!r}, or shlex.split)"
        )
    sp = _subprocess()
    popen = sp.Popen(
        list(argv),
        stdin=sp.PIPE,
        stdout=sp.PIPE,
        stderr=None if pass_stderr else sp.PIPE,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        bufsize=0,
        start_new_session=new_session,
        **popen_kwargs,
    )
    return Process(popen, stderr or StderrBuffer(), own_group=new_session)
