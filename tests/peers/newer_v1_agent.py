"""A raw agent speaking a *newer* ACP v1 than acpref implements, for the forward-compatibility test.

It answers initialize, session/new and one session/prompt; the turn streams an update kind and
a tool kind the 2026-11-02 schema does not define, and a field no schema has. Every line it
writes is also appended to the file named by its first argument, so that a test can compare the
bytes a proxy forwarded with the bytes it wrote.
"""

import json
import sys

SID = "sess_newer"


def main() -> None:
    wrote = open(sys.argv[1], "ab")

    def send(message: dict) -> None:
        line = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        wrote.write(line)
        wrote.flush()
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()

    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "agentInfo": {"name": "newer", "version": "9"},
                "authMethods": [],
            }})  # fmt: skip
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": SID}})
        elif method == "session/prompt":
            for update in (
                {"sessionUpdate": "weather_update", "forecast": "sunny"},
                {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Go", "kind": "warp",
                 "status": "completed"},
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
            ):
                send({"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": SID, "update": update,
                }})  # fmt: skip
            send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}})


if __name__ == "__main__":
    main()
