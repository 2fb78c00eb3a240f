"""Process inspection for the MCP tests: is a process, or anyone of its process group, alive?

Reads ``/proc`` (Linux) rather than depending on psutil. A zombie (state ``Z``) counts as gone:
it has ended and only waits for its parent (in a container, PID 1 may be slow to reap
orphans), and it holds no pipe and runs nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

__all__ = ["has_proc", "group_members", "is_running", "read_pid"]


def has_proc() -> bool:
    return Path("/proc/self/stat").exists()


def _stat(pid: int) -> Optional[List[str]]:
    """The fields of /proc/PID/stat after the command name: state, ppid, pgrp, ..."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def is_running(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    fields = _stat(pid)
    if fields is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return fields[0] != "Z"


def group_members(pgid: int) -> List[int]:
    """The live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat(int(entry))
        if fields is not None and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def read_pid(path: Path) -> int:
    """The pid a peer wrote to ``path`` (``$MCP_PIDFILE``)."""
    return int(path.read_text().strip())
