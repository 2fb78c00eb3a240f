"""A misbehaving ACP client for ``tests/test_reliability.py``: standard library only.

Run as ``python reliability_client.py MODE CWD``. It sends ``initialize``, ``session/new`` and
one ``session/prompt`` (its text says what the agent under test should do), then misbehaves as
MODE says. It does not use acpref, so that it can break the protocol at the byte level.

Modes (the prompt text in brackets):

* ``die-mid-line`` [``stream``]: after the first update, writes half a line and exits 3.
* ``die-mid-turn`` [``stream``]: after 20 updates, exits 4.
* ``die-while-waited`` [``ask``]: when the agent asks permission, exits 5 without answering.
* ``close-stdout`` [``ask``]: when the agent asks permission, closes its stdout; keeps running
  (and reading).
* ``stop-reading`` [``stream-big``]: after the prompt, never reads again; sleeps.
* ``flood-stderr`` [``hello``]: writes 32 MiB to stderr, then reads until the prompt's answer
  and exits 0 at the end of its stdin.
* ``ignore-sigterm`` [``hello``]: like ``flood-stderr`` without the flood, but ignores SIGTERM
  and the end of its stdin.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

MODE, CWD = sys.argv[1], sys.argv[2]
OUT = sys.stdout.buffer
PROMPTS = {
    "die-mid-line": "stream",
    "die-mid-turn": "stream",
    "die-while-waited": "ask",
    "close-stdout": "ask",
    "stop-reading": "stream-big",
    "flood-stderr": "hello",
    "ignore-sigterm": "hello",
}


def send(message: dict) -> None:
    OUT.write(json.dumps(message).encode() + b"\n")
    OUT.flush()


def read() -> dict:
    line = sys.stdin.buffer.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def call(request_id: int, method: str, params: dict) -> dict:
    send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    while True:
        message = read()
        if message.get("id") == request_id and "method" not in message:
            return message


def sleep_forever() -> None:
    while True:
        time.sleep(60)


def main() -> None:
    if MODE == "ignore-sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "flood-stderr":
        chunk = b"e" * 65535 + b"\n"
        for _ in range(512):
            os.write(2, chunk)
    call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    sid = call(2, "session/new", {"cwd": CWD, "mcpServers": []})["result"]["sessionId"]
    prompt = [{"type": "text", "text": PROMPTS[MODE]}]
    send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": sid, "prompt": prompt},
        }
    )
    if MODE == "stop-reading":
        sleep_forever()
    updates = 0
    while True:
        message = read()
        if message.get("method") == "session/update":
            updates += 1
            if MODE == "die-mid-line":
                OUT.write(b'{"jsonrpc":"2.0","method":"session/canc')
                OUT.flush()
                os._exit(3)
            if MODE == "die-mid-turn" and updates == 20:
                os._exit(4)
        elif message.get("method") == "session/request_permission":
            if MODE == "die-while-waited":
                os._exit(5)
            if MODE == "close-stdout":
                OUT.close()
                os.close(1)
                while sys.stdin.buffer.readline():
                    pass
                sleep_forever()
        elif message.get("id") == 3:
            break
    while sys.stdin.buffer.readline():
        pass
    if MODE == "ignore-sigterm":
        sleep_forever()


if __name__ == "__main__":
    main()
