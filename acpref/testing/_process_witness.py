"""A command that tells the check when it runs and when it has ended: the witness of a process.

``check-client`` runs beside the client it grades (it reads the client's files from disk for
FS-07): a command it asks the client to run can report to it directly. ``ProcessWitness``
listens on a Unix socket of a fresh temporary directory; ``argv()`` is a command (this Python,
standard library only) that connects to it, writes its pid, and then holds the socket open,
reading, until it exits. The kernel closes a dead process's sockets, so the socket's end of file
is the command's end however it comes (a signal to it or to its group, its own exit). Closing
the witness ends the command too: whatever a client left running goes when the check is done.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
from typing import Any, List, Optional

__all__ = ["ProcessWitness"]

#: The command's program: connect, say its pid, then read until the socket closes.
_SCRIPT = (
    "import os, socket, sys\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    "s.connect(sys.argv[1])\n"
    "s.sendall(b'%d\\n' % os.getpid())\n"
    "while s.recv(64):\n"
    "    pass\n"
)


class ProcessWitness:
    """One command's start (its pid) and end, seen over a Unix socket; a context manager."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="acpref-witness-")
        self.address = os.path.join(self._dir, "w.sock")
        self.pid: Optional[int] = None
        self._started = threading.Event()
        self._ended = threading.Event()
        self._conn: Optional[socket.socket] = None
        self._lock = threading.Lock()  # guards _conn and _closing
        self._closing = False
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.address)
        self._listener.listen(1)
        self._thread = threading.Thread(target=self._watch, name="process-witness", daemon=True)
        self._thread.start()

    def argv(self) -> List[str]:
        """The command to run: the program, then its arguments."""
        return [sys.executable, "-c", _SCRIPT, self.address]

    def wait_started(self, timeout: float) -> Optional[int]:
        """The command's pid once it has connected (at most ``timeout`` s), else None."""
        return self.pid if self._started.wait(timeout) else None

    def wait_ended(self, timeout: float) -> bool:
        """Wait until the command has exited (at most ``timeout`` s)."""
        return self._ended.wait(timeout)

    def _watch(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return  # closed before the command connected
        with self._lock:
            if self._closing:
                conn.close()  # connected as the witness closed: the command reads its end
                return
            self._conn = conn
        with conn, conn.makefile("rb") as lines:
            try:
                first = lines.readline()
                self.pid = int(first) if first.strip().isdigit() else None
                self._started.set()
                while lines.read(64):  # the command writes nothing more: this is its end
                    pass
            except OSError:
                pass
            finally:
                self._ended.set()

    def close(self) -> None:
        """Stop listening; a command still connected reads its end of file and exits."""
        with self._lock:
            self._closing = True
            conn = self._conn
        for sock in (self._listener, conn):
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked on it
                except OSError:
                    pass
        self._listener.close()
        self._thread.join(5.0)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> "ProcessWitness":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
