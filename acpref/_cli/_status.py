"""Exit statuses of every ``acpref`` command, and what a closed stdout does to a command.

One table for all sub-commands (documented in spec_notes/client.md and the README):

====  ==========================================================================
0     success (``acpref client -p``: the turn ended with ``end_turn``)
1     an error: the peer failed, exited, or broke the protocol; a check failed
2     bad usage (a missing argument, a file that cannot be read), or the peer command cannot
      be started (not found, not executable): one line naming it, never a clause
3     ``-p``: the turn ended with ``max_tokens``
4     ``-p``: the turn ended with ``max_turn_requests``
5     ``-p``: the turn ended with ``refusal``
124   ``-p``: the deadline passed (``--timeout``, 600 s by default), as timeout(1)
130   the user interrupted: Ctrl-C cancelled the turn, or quit (as a shell reports SIGINT)
141   stdout was closed (``| head``): the command stopped quietly (as a shell reports SIGPIPE)
====  ==========================================================================
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

OK = 0
ERROR = 1
USAGE = 2
MAX_TOKENS = 3
MAX_TURN_REQUESTS = 4
REFUSAL = 5
TIMEOUT = 124
INTERRUPTED = 130
STDOUT_CLOSED = 141

#: ``acpref client -p``: the exit status for each stop reason.
STOP_REASON_STATUS = {
    "end_turn": OK,
    "max_tokens": MAX_TOKENS,
    "max_turn_requests": MAX_TURN_REQUESTS,
    "refusal": REFUSAL,
    "cancelled": INTERRUPTED,
}


def unstartable(prog: str, argv: Sequence[str]) -> bool:
    """True (and one line on stderr saying why) when the peer command ``argv`` cannot be started.

    A command not found or not executable is the environment's mistake (a venv not on ``PATH``),
    not the peer's: it is said once and the run ends with ``USAGE``, no clause reported.
    """
    from .._shell.process import cannot_start

    problem = cannot_start(argv)
    if problem is not None:
        print(f"acpref {prog}: {problem}", file=sys.stderr)
    return problem is not None


def stdout_closed() -> None:
    """The reader of stdout went away: send what is left to /dev/null, quietly.

    Without this, the interpreter's last flush of ``sys.stdout`` at exit raises again and prints
    "Exception ignored ... BrokenPipeError".
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
