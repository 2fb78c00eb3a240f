"""The floor's client: spawns ``floor_agent.py`` and drives one measure with ``json`` and ``os``.

Usage: ``python floor_client.py --measure roundtrip|stream|read|update --count N``
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _shared import BIG_PATH, big_text, report, run_measure  # noqa: E402


class FloorClient:
    def __init__(self, argv: list) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self._in = os.fdopen(self.process.stdout.fileno(), "rb", buffering=1 << 16)
        self._out = self.process.stdin.fileno()
        self._ids = 0
        self._files = {BIG_PATH: big_text()}

    def send(self, message: dict) -> None:
        view = memoryview(json.dumps(message, ensure_ascii=False).encode() + b"\n")
        while view:
            view = view[os.write(self._out, view) :]

    def request(self, method: str, params: dict) -> tuple:
        """Send a request; read until its response. Returns (result, session/updates seen)."""
        self._ids += 1
        request_id = self._ids
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        updates = 0
        while True:
            message = json.loads(self._in.readline())
            method_in = message.get("method")
            if method_in == "session/update":
                updates += 1
            elif method_in == "fs/read_text_file":
                content = self._files[message["params"]["path"]]
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": content}})
            elif method_in is None and message.get("id") == request_id:
                return message["result"], updates

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measure", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--agent", help="another agent command (a diagnosis: mixed pairs)")
    args = parser.parse_args()
    client = FloorClient(
        shlex.split(args.agent)
        if args.agent
        else [sys.executable, os.path.join(HERE, "floor_agent.py")]
    )
    client.request(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}},
            "clientInfo": {"name": "floor-client", "version": "1"},
        },
    )
    session_id = client.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})[0][
        "sessionId"
    ]

    def prompt(text: str) -> int:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        result, updates = client.request("session/prompt", params)
        assert result["stopReason"] == "end_turn"
        return updates

    report(run_measure(args.measure, args.count, prompt))
    client.close()


if __name__ == "__main__":
    main()
