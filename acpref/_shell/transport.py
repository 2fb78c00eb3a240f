"""Transport: the byte streams a connection reads and writes (the threaded shell's I/O).

Spec: transports.mdx (stdio); clauses TRANSPORT-01, TRANSPORT-05, TRANSPORT-11, TRANSPORT-12.

A *stream* is what a connection reads bytes from and writes bytes to. Three kinds:

* ``FdStream``: a pair of OS file descriptors (a subprocess's pipes, our own stdin/stdout, a
  socket).
* ``FileStream``: any pair of binary file objects (a socket file, a ``BytesIO``...).
* ``memory_pipe()``: an in-memory one-way pipe, for tests that want exact write boundaries.

Framing (lines, the line bound) is ``acpref._shell.framing``; spawning and stopping a peer process is
``acpref._shell.process``. Both are re-exported here, where the rest of acpref imports them from.

What is clever here, and why (figures in benchmarks/README.md):

* ``FdStream`` reads wait in ``poll`` beside two pipes, a wake-up pipe (``close()`` stops a
  blocked reader at once, which a plain blocking ``read`` cannot) and an interrupt pipe
  (``interrupt()`` hands the reading role to another thread, ``acpref._shell.threads``, without
  consuming a byte). A blocking ``os.read`` would be simpler, but a connection could then not
  be closed while a thread reads, nor honour a caller's own timeout.
* Writes go to a non-blocking descriptor and wait in ``poll`` only when the pipe is full, so a
  peer that stopped reading makes a write fail after ``write_timeout`` instead of blocking a
  thread forever; the common case is one ``os.write``.
* The descriptors are closed only when no thread is inside ``read`` or ``write`` any more
  (a count under a lock): a descriptor closed under a thread may be reused by a file opened
  meanwhile, and that thread's next call would read or write someone else's file.

Nothing here knows JSON or JSON-RPC.
"""

from __future__ import annotations

import collections
import errno
import inspect
import os
import select
import stat
import threading
import time
from typing import IO, Any, Callable, Deque, Optional, Protocol

from .framing import INTERRUPTED, OVERSIZE_HEAD, LineSplitter, Oversize
from .process import Process, StderrBuffer, spawn

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

# spec TRANSPORT-11, TRANSPORT-12: any bidirectional byte channel is a transport; the connection
# over it frames and speaks the same JSON-RPC, with the same lifecycle, as over stdio.
class Stream(Protocol):
    """What a connection needs: blocking reads that return ``b""`` at the end, whole writes.

    ``read`` returns ``None`` when ``timeout`` (seconds) passes with nothing to read. A stream
    may also offer ``interrupt()``: a read blocked in another thread (or the next read) returns
    ``None`` at once, with nothing consumed. The connection uses both to hand the reading role
    to a thread that waits for its own answer, and to honour that thread's own timeout (see
    ``acpref._shell.threads``).
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

