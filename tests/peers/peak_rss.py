"""Run a command and read its peak resident memory, for the tests of what a peer can make
acpref hold (tests/test_client_kept.py, tests/test_remembered.py).

The command runs as the child of a small measurer process, which waits for it with
``os.wait4`` and prints its exit status and ``ru_maxrss`` (the peak RSS of that child alone,
not of the test's own process). The measurer leads a process group of its own: on a timeout the
group is killed (the command's agent then reads the end of its input).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

_MEASURE = (
    "import json, os, subprocess, sys\n"
    "out, err = open(sys.argv[1], 'wb'), open(sys.argv[2], 'wb')\n"
    "p = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=err)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss]))\n"
)


def run_measured(
    argv: List[str], *, cwd: Path, out: Optional[Path], err: Path, timeout: float
) -> Tuple[int, int]:
    """Run ``argv`` (stdout to ``out``, or nowhere; stderr to ``err``): its exit status and its
    peak RSS in bytes."""
    stdout = os.fspath(out) if out is not None else os.devnull
    proc = subprocess.Popen(
        [sys.executable, "-c", _MEASURE, stdout, os.fspath(err), *argv],
        stdout=subprocess.PIPE,
        cwd=cwd,
        start_new_session=True,
    )
    try:
        answer, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the measurer and the command
            proc.wait(10)
    status, peak_kib = json.loads(answer)
    return status, peak_kib * 1024
