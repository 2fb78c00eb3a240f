"""A misbehaving ACP agent for ``tests/test_reliability.py``: standard library only.

Run as ``python reliability_agent.py MODE``. It answers ``initialize`` and ``session/new``
like an agent, then misbehaves as MODE says. It does not use acpref, so that it can break the
protocol at the byte level. Nothing but protocol messages goes to stdout.

Modes:

* ``die-mid-line``: answers ``session/new`` with half a line, then exits with status 3.
* ``die-mid-turn``: a prompt streams 20 updates, then the process exits with status 4.
* ``die-while-waited``: a prompt is read and never answered; the agent asks the client an
  extension request and exits with status 5 once the client has answered it.
* ``close-stdout``: a prompt closes the agent's stdout; the process keeps running (and
  ignores the end of its stdin).
* ``stop-reading``: after ``session/new``, never reads stdin again; sleeps.
* ``flood-stderr``: every prompt first writes 32 MiB to stderr, then answers ``end_turn``.
* ``ignore-sigterm``: serves normally, ignores SIGTERM and the end of its stdin.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

MODE = sys.argv[1]
OUT = sys.stdout.buffer


def send(message: dict) -> None:
    OUT.write(json.dumps(message).encode() + b"\n")
    OUT.flush()


def answer(request: dict, result: dict) -> None:
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def update(session_id: str, text: str) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": chunk},
        }
    )


def sleep_forever() -> None:
    while True:
        time.sleep(60)


def on_prompt(request: dict) -> None:
    sid = request["params"]["sessionId"]
    if MODE == "die-mid-turn":
        for i in range(20):
            update(sid, f"u{i} ")
        os._exit(4)
    if MODE == "die-while-waited":
        # Asks the client something and exits once it is answered: the client read it after
        # sending the prompt, so its prompt is in flight, waited for, when this process ends.
        send({"jsonrpc": "2.0", "id": "are-you-there", "method": "_acme/ping", "params": {}})
        for line in sys.stdin.buffer:
            if json.loads(line).get("id") == "are-you-there" and "method" not in json.loads(line):
                break
        os._exit(5)
    if MODE == "close-stdout":
        update(sid, "closing my stdout")
        OUT.close()
        os.close(1)
        sleep_forever()
    if MODE == "flood-stderr":
        chunk = b"e" * 65535 + b"\n"
        for _ in range(512):
            os.write(2, chunk)
    update(sid, "done")
    answer(request, {"stopReason": "end_turn"})


def main() -> None:
    if MODE == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            answer(
                message,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": False},
                    "authMethods": [],
                    "agentInfo": {"name": "reliability-agent", "version": "0"},
                },
            )
        elif method == "session/new":
            if MODE == "die-mid-line":
                OUT.write(b'{"jsonrpc":"2.0","id":%d,"result":{"sessi' % message["id"])
                OUT.flush()
                os._exit(3)
            answer(message, {"sessionId": "sess-1"})
            if MODE == "stop-reading":
                sleep_forever()
        elif method == "session/prompt":
            on_prompt(message)
    if MODE in ("close-stdout", "ignore-sigterm"):
        sleep_forever()  # the end of stdin does not end it


if __name__ == "__main__":
    main()
