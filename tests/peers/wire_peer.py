"""A small peer process for tests: an acpref Connection over this process's stdin and stdout.

Run as ``python wire_peer.py``; it serves until its stdin ends. Extension methods only, so that
no protocol rules are involved:

* ``_echo``: answers its params.
* ``_sleep``: notifies ``_started`` {"id": <request id>}, then waits until cancelled or
  ``seconds`` (default 30) pass; answers "slept".
* ``_die``: ends the process at once with ``os._exit(code)`` (default 3), mid-request.
* ``_call_back``: calls ``method`` with ``params`` on the caller and answers what it got.

Nothing but protocol messages goes to stdout (spec TRANSPORT-08).
"""

from __future__ import annotations

import os
import sys

from acpref._shell.transport import FdStream
from acpref.connection import Connection


def echo(params, ctx):
    return params


def sleep(params, ctx):
    ctx.connection.notify("_started", {"id": ctx.id})
    ctx.cancelled.wait(params.get("seconds", 30))
    return "slept"


def die(params, ctx):
    os._exit(params.get("code", 3))


def call_back(params, ctx):
    return ctx.connection.request(params["method"], params.get("params"), timeout=10)


def main() -> None:
    stream = FdStream(sys.stdin.fileno(), sys.stdout.fileno())
    handlers = {"_echo": echo, "_sleep": sleep, "_die": die, "_call_back": call_back}
    conn = Connection(stream, handlers, name="wire-peer").start()
    conn.wait_closed()


if __name__ == "__main__":
    main()
