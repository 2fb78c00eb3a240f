"""The stdio MCP server ``check-agent`` hands the agent under test: it tells the check what it got.

Run as ``python _mcp_probe.py SOCKET``; standard library only (it starts fast and depends on
nothing the agent's environment may lack). It connects to the Unix socket ``SOCKET`` that the
check listens on and reports there, one JSON line each: first ``{"started": {...}}`` (its
arguments, the ``ACPREF_PROBE`` variable of its environment, its working directory, its pid),
then every message the agent sent it, as received, and last ``{"ended": "end of input"}`` when
its input ends. The socket stays open while it runs, so the check sees its end however it comes
(the end of its input, a signal): the socket's end of file. It answers as a small MCP server does: ``initialize``
(the agent's protocol version when it is one of MCP's, else the newest), ``ping``, ``tools/list``
(one tool, ``acpref_probe``), ``tools/call``; -32601 for anything else; notifications get no
answer. It ends at the end of its input. Nothing but MCP messages goes to stdout.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any, Dict, Optional

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

TOOL = {
    "name": "acpref_probe",
    "description": "Answers 'probe ok' (acpref check-agent's MCP server).",
    "inputSchema": {"type": "object", "properties": {}},
}


def answer(message: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The response to one message (None for a notification or a response)."""
    if "method" not in message or "id" not in message:
        return None
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        result: Any = {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "acpref-probe", "version": "1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "probe ok"}], "isError": False}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main(argv: list) -> int:
    report = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        report.connect(argv[1])
    except OSError:
        report.close()
        report = None  # type: ignore[assignment]

    def tell(item: Any) -> None:
        if report is not None:
            try:
                report.sendall(json.dumps(item).encode("utf-8") + b"\n")
            except OSError:
                pass

    started = {
        "argv": argv[1:],
        "env": os.environ.get("ACPREF_PROBE"),
        "cwd": os.getcwd(),
        "pid": os.getpid(),
    }
    tell({"started": started})
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            tell({"unparsable": line.decode("utf-8", "replace")[:200]})
            continue
        tell(message)
        response = answer(message) if isinstance(message, dict) else None
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()
    tell({"ended": "end of input"})  # then it exits, and the socket closes
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
