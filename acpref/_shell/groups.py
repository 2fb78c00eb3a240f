"""Process groups: signal a child's whole group, and wait (bounded) until it has ended.

Every process acpref starts (an agent, an MCP server, a terminal command) is the leader of a
process group of its own, so that what it starts in turn (``npx`` -> ``node``, a shell's
children) can be reached with one signal: stopping a peer means stopping its group. Two waits
make that safe and exact:

* ``wait_unreaped(popen, timeout)`` waits for the leader to exit *without reaping it*: while it
  is a zombie its pid, which is the group id, stays reserved, so a later signal to the group
  cannot reach an unrelated group that got the same number.
* ``wait_group_ended(pgid, timeout)`` waits until no member of the group still runs (a zombie
  has ended: it runs nothing and holds no pipe; only its parent's reaping is left, and for an
  orphan that parent is init, which may be slow). A ``SIGKILL`` is delivered asynchronously: the
  members may still be running when ``killpg`` returns, so a caller that promised "nothing is
  left" must wait for this.

Both wait on the kernel's word where the system offers it (a pidfd becomes readable when its
process exits); elsewhere they re-check with short growing pauses, as ``Popen.wait`` does. Every
wait is bounded. Nothing here knows about pipes or protocols.

**Hurry.** A process of acpref's that is told to stop (SIGTERM, SIGHUP: ``install_stop_signals``)
has little time left before whoever sent the signal kills it, and a process killed in the middle
of its ladder leaves its children behind. ``hurry()`` marks the whole process as stopping: every
ladder, running or to come, shortens its steps to ``HURRY_GRACE`` and ``HURRY_TERM`` (spec-gap
shutdown-ladder in spec_notes/decisions.md), and a wait in progress wakes up to notice.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional, Tuple

if TYPE_CHECKING:
    import subprocess

__all__ = [
    "signal_group",
    "wait_unreaped",
    "wait_group_ended",
    "group_members",
    "signal_name",
    "hurry",
    "hurried",
    "ladder_bounds",
    "install_stop_signals",
    "HURRY_GRACE",
    "HURRY_TERM",
]

_PROC = "/proc"

#: Once stopping: how long a child gets after the end of its input, then after SIGTERM. Their
#: sum, plus the SIGKILL, stays well below the 2 s an acpref parent waits after its SIGTERM.
HURRY_GRACE = 0.2
HURRY_TERM = 0.8

_hurry = threading.Event()
_wake: Optional[Tuple[int, int]] = None  # written once by hurry(): wakes waits in progress
_wake_lock = threading.Lock()  # guards the creation of _wake


def _wake_fds() -> Tuple[int, int]:
    global _wake
    with _wake_lock:
        if _wake is None:
            r, w = os.pipe()
            os.set_blocking(w, False)
            _wake = (r, w)
        return _wake


def hurry() -> None:
    """This process is stopping: every shutdown ladder shortens its steps from now on.

    Safe in a signal handler (an event and one write to a pipe made beforehand).
    """
    _hurry.set()
    wake = _wake
    if wake is not None:
        try:
            os.write(wake[1], b"h")
        except OSError:  # pragma: no cover - written already
            pass


def hurried() -> bool:
    """True once ``hurry()`` was called."""
    return _hurry.is_set()


def ladder_bounds(grace: float, term_grace: float) -> Tuple[float, float]:
    """The ladder's two waits, shortened if this process is stopping."""
    if _hurry.is_set():
        return min(grace, HURRY_GRACE), min(term_grace, HURRY_TERM)
    return grace, term_grace


def install_stop_signals(
    on_stop: Optional[Callable[[int], None]] = None,
    signals: Iterable[int] = (signal.SIGTERM, signal.SIGHUP),
) -> None:
    """Make SIGTERM and SIGHUP stop this process cleanly: ``hurry()``, then ``on_stop(signum)``.

    ``on_stop`` runs in the main thread, as a signal handler does; it may raise (to unwind the
    main thread into its ``finally``) or set an event. Without it, ``KeyboardInterrupt`` is
    raised. Call from the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return  # only the main thread may set signal handlers (a CLI run inside a test thread)
    _wake_fds()

    def handler(signum: int, frame: Any) -> None:
        hurry()
        if on_stop is None:
            raise KeyboardInterrupt(signal_name(signum))
        on_stop(signum)

    for signum in signals:
        signal.signal(signum, handler)


def signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to every process of group ``pgid``; False when the group is empty."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a member changed its credentials (setuid)
        return True
    return True


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15: the name a person reads."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _pidfd(pid: int) -> Optional[int]:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:  # pragma: no cover - not Linux
        return None
    try:
        fd: int = opener(pid)
    except OSError:  # gone already (ESRCH), or a kernel without pidfds (ENOSYS)
        return None
    return fd


def _wait_fds(fds: List[int], timeout: float) -> None:
    """Wait until one of the pidfds is readable (its process exited), ``timeout`` passed, or
    ``hurry()`` was called meanwhile."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    if _wake is not None and not _hurry.is_set():
        poller.register(_wake[0], select.POLLIN)
    poller.poll(max(0, int(timeout * 1000)))


def _pause(delay: float, deadline: float) -> float:
    # Where the kernel cannot tell us (no pidfd), look again after a short pause growing to
    # 50 ms, within the deadline: Popen.wait's own loop.
    time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
    return min(delay * 2, 0.05)


def _exit_status(popen: "subprocess.Popen[bytes]") -> Optional[int]:
    """The leader's exit status if it has exited (negative: its signal), without reaping it."""
    if popen.returncode is not None:
        return popen.returncode
    waitid = getattr(os, "waitid", None)
    if waitid is None or not hasattr(os, "WNOWAIT"):  # pragma: no cover - macOS
        return popen.poll()
    try:
        info = waitid(os.P_PID, popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped meanwhile (by Popen itself)
        return popen.poll()
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def wait_unreaped(
    popen: "subprocess.Popen[bytes]", timeout: float, *, until_hurry: bool = False
) -> Optional[int]:
    """Wait up to ``timeout`` for ``popen`` to exit, leaving it unreaped (a zombie).

    Returns its exit status (negative: the signal that ended it), or None if it still runs.
    With ``until_hurry``, the wait also ends when ``hurry()`` is called.
    """
    deadline = time.monotonic() + max(0.0, timeout)
    was_hurried = _hurry.is_set()
    status = _exit_status(popen)
    if status is not None or timeout <= 0:
        return status
    fd = _pidfd(popen.pid)
    delay = 0.001
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _exit_status(popen)
            if fd is not None:
                _wait_fds([fd], remaining)
            else:
                delay = _pause(delay, deadline)
            status = _exit_status(popen)
            if status is not None or (until_hurry and not was_hurried and _hurry.is_set()):
                return status
    finally:
        if fd is not None:
            os.close(fd)


def group_members(pgid: int) -> Optional[List[int]]:
    """The pids of group ``pgid`` that still run (zombies left out); None without ``/proc``."""
    try:
        entries = os.listdir(_PROC)
    except OSError:  # pragma: no cover - not Linux
        return None
    members = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{_PROC}/{entry}/stat", "rb") as f:
                text = f.read()
        except OSError:
            continue  # ended while we looked
        # After the command name (in parentheses, which may hold anything): state ppid pgrp ...
        fields = text[text.rindex(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] not in (b"Z", b"X") and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def wait_group_ended(pgid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` until no process of group ``pgid`` still runs; True if none does.

    The group's leader, kept unreaped by the caller, counts as ended once it is a zombie.
    """
    deadline = time.monotonic() + max(0.0, timeout)
    delay = 0.001
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True  # no member at all, zombies included
        except PermissionError:  # pragma: no cover
            pass
        members = group_members(pgid)
        if members == []:
            return True  # only zombies are left
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        fds = [fd for fd in (_pidfd(pid) for pid in members or ()) if fd is not None]
        if fds:
            try:
                _wait_fds(fds, remaining)
            finally:
                for fd in fds:
                    os.close(fd)
        else:
            delay = _pause(delay, deadline)
