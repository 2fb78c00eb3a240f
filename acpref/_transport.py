"""Transport: byte streams, newline framing, and spawning a peer process.

Spec: transports.mdx (stdio); clauses TRANSPORT-01, TRANSPORT-03 .. TRANSPORT-05, TRANSPORT-07,
TRANSPORT-10 .. TRANSPORT-12.

A *stream* is what a connection reads bytes from and writes bytes to. Three kinds:

* ``FdStream``: a pair of OS file descriptors (a subprocess's pipes, our own stdin/stdout, a
  socket). Reads wait in ``poll`` beside a wake-up pipe, so that ``close()`` stops a blocked
  reader at once; writes use a non-blocking descriptor and ``poll``, so that a peer that stopped
  reading makes a write fail after ``write_timeout`` instead of blocking a thread forever.
* ``FileStream``: any pair of binary file objects (a socket file, a ``BytesIO``...).
* ``memory_pipe()``: an in-memory one-way pipe, for tests that want exact write boundaries.

``LineSplitter`` turns reads into lines (one JSON-RPC message each, spec TRANSPORT-04) with a
bound on line length: an oversize line is dropped as it arrives (never buffered whole) and
reported as ``Oversize``, and the stream goes on. ``spawn`` starts a peer process with its stderr
drained by a thread (a peer blocked on a full stderr pipe is a classic hang).

Nothing here knows JSON or JSON-RPC.
"""

from __future__ import annotations

import collections
import errno
import inspect
import logging
import os
import select
import signal
import stat
import threading
import time
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    Callable,
    Deque,
    Iterator,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Union,
)

if TYPE_CHECKING:
    import subprocess

import attrs

from . import _groups

__all__ = [
    "INTERRUPTED",
    "Stream",
    "FdStream",
    "FileStream",
    "memory_pipe",
    "LineSplitter",
    "Oversize",
    "OVERSIZE_HEAD",
    "Process",
    "spawn",
    "StderrBuffer",
    "read_accepts_timeout",
]

log = logging.getLogger("acpref.transport")

#: Bytes asked for per read while between lines, and while inside a long line.
_SMALL_READ = 64 * 1024
_LARGE_READ = 1024 * 1024


# spec TRANSPORT-11, TRANSPORT-12: any bidirectional byte channel is a transport; the connection
# over it frames and speaks the same JSON-RPC, with the same lifecycle, as over stdio.
class Stream(Protocol):
    """What a connection needs: blocking reads that return ``b""`` at the end, whole writes.

    ``read`` returns ``None`` when ``timeout`` (seconds) passes with nothing to read. A stream
    may also offer ``interrupt()``: a read blocked in another thread (or the next read) returns
    ``None`` at once, with nothing consumed. The connection uses both to hand the reading role
    to a thread that waits for its own answer, and to honour that thread's own timeout (see
    ``acpref._threads``).
    """

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]: ...

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


def read_accepts_timeout(read: Callable[..., Any]) -> bool:
    """True when a stream's ``read`` takes the ``timeout`` argument (streams of ours all do)."""
    try:
        params = inspect.signature(read).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False
    return "timeout" in params or any(p.kind is p.VAR_POSITIONAL for p in params.values())


class StreamClosed(OSError):
    """The stream was closed by our side."""


# -- Framing --------------------------------------------------------------------------------------


#: How much of an oversize line is kept: enough to read its envelope (``jsonrpc``, ``id``,
#: ``method``), which writers put first, so that the refusal can name the request it belongs to.
OVERSIZE_HEAD = 4096


@attrs.frozen
class Oversize:
    """A line longer than the bound was dropped; ``size`` is how many bytes it had, ``head`` its
    first ``OVERSIZE_HEAD`` bytes."""

    size: int
    head: bytes = b""


class _Interrupted:
    """Yielded by ``LineSplitter`` when a read was interrupted; the split goes on afterwards."""

    def __repr__(self) -> str:
        return "INTERRUPTED"


INTERRUPTED = _Interrupted()


class LineSplitter:
    """Split a stream's bytes into lines without the ``\\n``; bound the length of one line.

    Pieces of a line in progress are kept in a list and joined once, when the newline arrives,
    so a line of N bytes costs O(N) however it was cut. A final line without a newline is
    delivered at the end of input.
    """

    def __init__(self, read: Callable[[int], Optional[bytes]], max_line_bytes: int) -> None:
        self._read = read
        self._max = max_line_bytes

    def __iter__(self) -> Iterator[Union[bytes, Oversize, _Interrupted]]:
        # One generator is shared by every thread that takes the reading role in turn; only
        # the role's holder advances it, so its state (a line in progress) carries over.
        parts: List[bytes] = []
        pending = 0  # bytes held in `parts`
        dropping = 0  # > 0 while discarding an oversize line: bytes seen so far
        head = b""  # the first bytes of the line being dropped
        while True:
            chunk = self._read(_LARGE_READ if pending or dropping else _SMALL_READ)
            if chunk is None:
                yield INTERRUPTED
                continue
            if not chunk:
                if dropping:
                    yield Oversize(dropping, head)
                elif parts:
                    yield b"".join(parts)
                return
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    break
                if dropping:
                    yield Oversize(dropping + nl - start, head)
                    dropping, head = 0, b""
                elif parts:
                    parts.append(chunk[start:nl])
                    line = b"".join(parts)
                    parts, pending = [], 0
                    if len(line) > self._max:
                        yield Oversize(len(line), line[:OVERSIZE_HEAD])
                    else:
                        yield line
                elif nl - start > self._max:
                    yield Oversize(nl - start, chunk[start : start + OVERSIZE_HEAD])
                else:
                    yield chunk[start:nl]
                start = nl + 1
            rest = len(chunk) - start
            if not rest:
                continue
            if dropping:
                dropping += rest
            elif pending + rest > self._max:
                dropping = pending + rest
                head = _head(parts, chunk[start : start + OVERSIZE_HEAD])
                parts, pending = [], 0
            else:
                parts.append(chunk[start:] if start else chunk)
                pending += rest


def _head(parts: List[bytes], more: bytes) -> bytes:
    """The first ``OVERSIZE_HEAD`` bytes of ``parts`` followed by ``more``."""
    out = b""
    for part in parts:
        out += part[: OVERSIZE_HEAD - len(out)]
        if len(out) >= OVERSIZE_HEAD:
            return out
    return (out + more)[:OVERSIZE_HEAD]


# -- Streams --------------------------------------------------------------------------------------


def _is_pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class FdStream:
    """Reads from ``read_fd`` and writes to ``write_fd`` (the same fd for a socket).

    ``write_timeout`` bounds how long one write may make no progress (the peer stopped reading);
    past it the write raises ``TimeoutError``. ``owns_fds`` closes the descriptors on ``close()``.

    ``close()`` wakes a blocked read or write at once (both wait in ``poll`` beside the wake-up
    pipe). The descriptors are closed only when no thread is inside ``read`` or ``write`` any
    more: a descriptor closed under a thread may be reused by a file opened meanwhile, and that
    thread's next call would read or write someone else's file.
    """

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        *,
        write_timeout: Optional[float] = 30.0,
        owns_fds: bool = False,
    ) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._write_timeout = write_timeout
        self._owns = owns_fds
        self._wake_r, self._wake_w = os.pipe()  # close() wakes blocked reads and writes
        self._intr_r, self._intr_w = os.pipe()  # interrupt() wakes a blocked read
        os.set_blocking(self._intr_r, False)
        self._closed = False
        self._users = 0  # threads inside read() or write(); the fds stay open while any is
        self._close_lock = threading.Lock()  # guards _closed and _users
        # Only a pipe or socket is made non-blocking: a terminal's file description is shared
        # with the shell, and a regular file never blocks anyway.
        self._nonblocking_write = _is_pipe_or_socket(write_fd)
        if self._nonblocking_write:
            os.set_blocking(write_fd, False)
        self._poll_read = select.poll()
        self._poll_read.register(read_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._poll_read.register(self._wake_r, select.POLLIN)
        self._poll_read.register(self._intr_r, select.POLLIN)

    def _enter(self) -> bool:
        with self._close_lock:
            if self._closed:
                return False
            self._users += 1
            return True

    def _leave(self) -> None:
        with self._close_lock:
            self._users -= 1
            last = self._closed and self._users == 0
        if last:
            self._release()

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]:
        if not self._enter():
            return b""
        try:
            return self._read(size, timeout)
        finally:
            self._leave()

    def interrupt(self) -> None:
        """Make a blocked (or the next) ``read`` return ``None`` without consuming anything."""
        try:
            os.write(self._intr_w, b"i")
        except OSError:  # closed, or the pipe is full of earlier interrupts: either will do
            pass

    def _read(self, size: int, timeout: Optional[float]) -> Optional[bytes]:
        wait_ms = None if timeout is None else max(0, int(timeout * 1000))
        while not self._closed:
            try:
                events = self._poll_read.poll(wait_ms)
            except InterruptedError:  # pragma: no cover - PEP 475 retries this already
                continue
            if not events:
                return None  # the timeout passed
            if self._closed or any(fd == self._wake_r for fd, _ in events):
                return b""
            if any(fd == self._intr_r for fd, _ in events):
                try:
                    os.read(self._intr_r, 4096)
                except OSError:
                    pass
                return None
            try:
                return os.read(self._read_fd, size)
            except BlockingIOError:
                continue
            except OSError as exc:
                if exc.errno in (errno.EBADF, errno.ECONNRESET, errno.EIO):
                    return b""
                raise
        return b""

    def write(self, data: bytes) -> None:
        if not self._enter():
            raise StreamClosed("stream closed")
        try:
            self._write(data)
        finally:
            self._leave()

    def _write(self, data: bytes) -> None:
        if not self._nonblocking_write:
            view = memoryview(data)
            while view:
                view = view[os.write(self._write_fd, view) :]
            return
        try:
            written = os.write(self._write_fd, data)
        except BlockingIOError:
            written = 0
        if written < len(data):  # the pipe was full: wait for room, within the write timeout
            self._write_rest(memoryview(data)[written:])

    def _write_rest(self, view: memoryview) -> None:
        poller = None  # made on the first write that would block
        timeout = self._write_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while view:
            try:
                written = os.write(self._write_fd, view)
            except BlockingIOError:
                written = 0
            if written:
                view = view[written:]
                if timeout is not None:
                    deadline = time.monotonic() + timeout
                continue
            if poller is None:
                poller = select.poll()
                poller.register(self._write_fd, select.POLLOUT)
                poller.register(self._wake_r, select.POLLIN)  # close() ends the wait
            wait_ms = (
                None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            )
            events = poller.poll(wait_ms)
            if self._closed:
                raise StreamClosed("stream closed")
            if not events and deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"peer read nothing for {timeout}s; write abandoned")
            # POLLERR/POLLHUP on write_fd: the next os.write raises BrokenPipeError (EPIPE).

    def close(self) -> None:
        """Stop: wake blocked calls now; close the descriptors once the last one has left."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            idle = self._users == 0
        try:
            os.write(self._wake_w, b"x")
        except OSError:  # pragma: no cover
            pass
        if idle:
            self._release()

    def _release(self) -> None:
        # Runs once: from close() if no thread was inside, else from the last one to leave.
        fds = {self._wake_r, self._wake_w, self._intr_r, self._intr_w}
        if self._owns:
            fds |= {self._read_fd, self._write_fd}
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


class FileStream:
    """Adapts a pair of binary file objects (``read1``/``read`` and ``write``/``flush``)."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer
        self._read = getattr(reader, "read1", None) or reader.read
        self._closed = False

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]:
        # A file object cannot wait with a timeout: the read blocks until data or the end.
        if self._closed:
            return b""
        try:
            return self._read(size)
        except (OSError, ValueError):
            return b""

    def write(self, data: bytes) -> None:
        if self._closed:
            raise StreamClosed("stream closed")
        self._writer.write(data)
        self._writer.flush()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for f in (self._writer, self._reader):
            try:
                f.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass


class _MemoryPipeEnd:
    """One end of an in-memory pipe (``memory_pipe``): reads what the other end wrote."""

    def __init__(self) -> None:
        self._chunks: Deque[bytes] = collections.deque()
        self._cond = threading.Condition()
        self._eof = False
        self._interrupted = False

    def feed(self, data: bytes) -> None:
        with self._cond:
            if self._eof:
                raise BrokenPipeError(errno.EPIPE, "memory pipe closed")
            self._chunks.append(bytes(data))
            self._cond.notify()

    def end(self) -> None:
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def interrupt(self) -> None:
        with self._cond:
            self._interrupted = True
            self._cond.notify_all()

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not self._chunks and not self._eof and not self._interrupted:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._cond.wait(remaining)
            if self._interrupted:
                self._interrupted = False
                return None
            if not self._chunks:
                return b""
            chunk = self._chunks.popleft()
            if len(chunk) > size:
                self._chunks.appendleft(chunk[size:])
                chunk = chunk[:size]
            return chunk


class MemoryStream:
    """A stream over two in-memory pipe ends: what we read, and where the peer reads."""

    def __init__(self, inbound: _MemoryPipeEnd, outbound: _MemoryPipeEnd) -> None:
        self._in = inbound
        self._out = outbound

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]:
        return self._in.read(size, timeout)

    def interrupt(self) -> None:
        self._in.interrupt()

    def write(self, data: bytes) -> None:
        self._out.feed(data)

    def close(self) -> None:
        self._out.end()
        self._in.end()


def memory_pipe() -> "tuple[MemoryStream, MemoryStream]":
    """Two connected in-memory streams: what one writes, the other reads, in the same pieces."""
    # spec TRANSPORT-13: this custom transport's setup and exchange are documented here and in
    # spec_notes/transports.md (Other transports).
    a_to_b, b_to_a = _MemoryPipeEnd(), _MemoryPipeEnd()
    return MemoryStream(b_to_a, a_to_b), MemoryStream(a_to_b, b_to_a)


# -- Processes ------------------------------------------------------------------------------------


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
        return _groups.wait_unreaped(self.popen, 0.0)

    def wait(self, timeout: float) -> Optional[int]:
        """Wait up to ``timeout`` seconds for the process to exit; its status, or None.

        The process is not reaped here (``shutdown`` does it), so its group stays ours.
        """
        return _groups.wait_unreaped(self.popen, timeout)

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
        status = self._step(grace, _groups.HURRY_GRACE)
        if status is None:
            self._signal(signal.SIGTERM)
            status = self._step(term_grace, _groups.HURRY_TERM)
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
        (``_groups.hurry``: also when that happens during the wait)."""
        start = time.monotonic()
        if _groups.hurried():
            return self.wait(min(bound, hurried_bound))
        status = _groups.wait_unreaped(self.popen, bound, until_hurry=True)
        if status is None and _groups.hurried():
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
            _groups.signal_group(self.group, signal.SIGKILL)
        return _groups.wait_group_ended(self.group, timeout)

    def _signal(self, signum: int) -> None:
        with self._lock:
            if self._reaped or self.popen.returncode is not None:
                return  # reaped already: its pid, and so its group id, may be someone else's
            name = _groups.signal_name(signum)
            if self.group is not None:
                _groups.signal_group(self.group, signum)
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
        name = _groups.signal_name(-status)
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
