"""The floor's agent: the same JSON-RPC lines as the other agents, with only ``json`` and ``os``.

No framework, no threads, no validation: a buffered line reader, ``json.loads``, ``json.dumps``
and one ``os.write`` per message. What any ACP agent in Python must at least spend.
"""

from __future__ import annotations

import json
import os
import sys

_IN = os.fdopen(0, "rb", buffering=1 << 16)
_OUT = 1
_BIG_TEXT = {}


def send(message: dict) -> None:
    view = memoryview(json.dumps(message, ensure_ascii=False).encode() + b"\n")
    while view:
        view = view[os.write(_OUT, view) :]


def update(session_id: str, text: str) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": session_id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                },
            },
        }
    )


def prompt(params: dict, next_id: list) -> dict:
    session_id = params["sessionId"]
    text = params["prompt"][0].get("text", "")
    word, _, arg = text.partition(" ")
    if word == "stream":
        for _ in range(int(arg)):
            update(session_id, "token ")
    elif word == "read":
        next_id[0] += 1
        request_id = next_id[0]
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "fs/read_text_file",
                "params": {"sessionId": session_id, "path": arg},
            }
        )
        while True:  # nothing else comes meanwhile: the client waits for this prompt
            answer = json.loads(_IN.readline())
            if answer.get("id") == request_id:
                assert len(answer["result"]["content"]) > 0
                break
    elif word == "big":
        size = int(arg)
        if size not in _BIG_TEXT:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from _shared import big_text

            _BIG_TEXT[size] = big_text(size)
        update(session_id, _BIG_TEXT[size])
    else:
        update(session_id, text)
    return {"stopReason": "end_turn"}


def main() -> None:
    sessions = {}
    next_id = [0]
    for line in _IN:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message:
            continue  # notifications (session/cancel) and stray responses: nothing to do
        if method == "initialize":
            result = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "agentInfo": {"name": "floor-agent", "version": "1"},
            }
        elif method == "session/new":
            session_id = f"sess_{len(sessions) + 1}"
            sessions[session_id] = {"cwd": message["params"]["cwd"], "history": []}
            result = {"sessionId": session_id}
        elif method == "session/prompt":
            result = prompt(message["params"], next_id)
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    main()
