"""acpref's reference client side in a process of its own, for memory tests: the test is its agent.

Run as ``python client_process.py CWD [MAX_LINE_BYTES]``: a ``ClientSideConnection`` serving a
``ReferenceClient`` (every tool call allowed) over this process's stdin and stdout. It sends
``initialize`` and ``session/new`` for CWD (the test answers them as an agent would), then serves
the test's requests and notifications until its stdin ends. The test reads this process's
``/proc/PID/status`` to see what a message cost it.
"""

from __future__ import annotations

import sys

from acpref._shell.transport import FdStream
from acpref.client import Allow, ClientSideConnection, ReferenceClient

kwargs = {"max_line_bytes": int(sys.argv[2])} if len(sys.argv) > 2 else {}
side = ClientSideConnection(
    ReferenceClient(permissions=Allow()), FdStream(0, 1), name="client-process", **kwargs
)
side.initialize(timeout=30)
side.new_session(sys.argv[1], timeout=30)
side.connection.wait_closed()
