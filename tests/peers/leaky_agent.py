"""An agent that leaves a process behind, as an npm wrapper around a native binary can.

``python leaky_agent.py PIDDIR [--stubborn]``: before it serves anything, it starts a child that
ignores the end of its input, SIGTERM and SIGHUP, and waits forever. The child writes its own
pid to ``PIDDIR/<pid>`` (written under another name, then renamed: a reader never sees half a
file) and only then says "ready" on a pipe the agent waits on, so by the time the agent answers
``initialize`` the file exists. Then the agent serves the echo agent on stdio.

With ``--stubborn`` the agent itself ignores the end of its input and SIGTERM too: only SIGKILL
ends it.

The child holds the agent's stdout and stderr open (inherited), as a real leftover does: a
client that waited for those pipes to end would wait for ever.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

CHILD = r"""
import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
piddir, ready = sys.argv[1], int(sys.argv[2])
tmp = os.path.join(piddir, f".{os.getpid()}.tmp")
with open(tmp, "w") as f:
    f.write(str(os.getpid()))
os.rename(tmp, os.path.join(piddir, str(os.getpid())))
os.write(ready, b"ready\n")
os.close(ready)
while True:
    signal.pause()
"""


def start_child(piddir: str) -> None:
    r, w = os.pipe()
    subprocess.Popen(
        [sys.executable, "-c", CHILD, piddir, str(w)],
        stdin=subprocess.DEVNULL,
        pass_fds=(w,),
    )
    os.close(w)
    with os.fdopen(r, "rb") as ready:
        assert ready.readline() == b"ready\n"


def main() -> int:
    piddir = sys.argv[1]
    start_child(piddir)
    from acpref.agent import SessionRegistry, serve_stdio
    from acpref.echo import EchoAgent

    registry = SessionRegistry()
    serve_stdio(lambda client: EchoAgent(client, registry))
    if "--stubborn" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        while True:
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
