"""The live agent side and the oracle judge the same transcript alike (issue 15).

A scripted client that does not cooperate sends requests that break rules, one after another,
to ``python -m acpref.echo`` over its pipes. What the agent refused is read from its error
answers (each names the clause it acted on, ``error.data.clause``); the oracle then judges the
very lines that travelled (``acpref.oracle.validate``). For every refused request, the clauses
the agent acted on, with the client to blame, are the clauses the oracle found in that request
(its violations and spec-gaps; warnings are no decision). Both read one protocol core
(``acpref._core``: the envelope and the rules), so they cannot disagree.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from acpref._shell.transport import spawn
from acpref.oracle import validate

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import WAIT  # noqa: E402


class _Script:
    """Raw lines to the agent, its lines read back; both kept as a transcript, in order."""

    def __init__(self) -> None:
        self.process = spawn([sys.executable, "-m", "acpref.echo"])
        popen = self.process.popen
        assert popen.stdin is not None and popen.stdout is not None
        self._stdin, self._stdout = popen.stdin, popen.stdout
        self.records: List[Dict[str, Any]] = []
        self._lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self._stdout:
            self._lines.put(line.rstrip(b"\n"))
        self._lines.put(None)

    def send(self, message: Any) -> int:
        """Send one line (a dict is encoded); returns its index in the transcript."""
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.records.append({"from": "client", "ts": time.time(), "line": line.decode()})
        self._stdin.write(line + b"\n")
        self._stdin.flush()
        return len(self.records) - 1

    def answer(self, request_id: Any) -> Dict[str, Any]:
        """Read the agent's lines until the answer under ``request_id``; return it."""
        while True:
            line = self._lines.get(timeout=WAIT)
            assert line is not None, "the agent closed its output"
            self.records.append({"from": "agent", "ts": time.time(), "line": line.decode()})
            message = json.loads(line)
            if "method" not in message and message.get("id", object()) == request_id:
                return message

    def close(self) -> None:
        self._stdin.close()
        self.records.append({"from": "client", "ts": time.time(), "event": "eof"})
        while self._lines.get(timeout=WAIT) is not None:
            pass  # what the agent still says goes unjudged: the transcript ends here
        self.process.shutdown(grace=WAIT)


def _call(request_id: Any, method: str, params: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_the_agent_refuses_what_the_oracle_finds(tmp_path: Path) -> None:
    script = _Script()
    cwd = str(tmp_path)
    refused: Dict[int, Set[Tuple[str, str]]] = {}  # transcript index -> (clause, blamed)

    def expect_refusal(message: Any, reply_id: Any) -> None:
        index = script.send(message)
        answer = script.answer(reply_id)
        assert "error" in answer, (message, answer)
        data = answer["error"].get("data")
        assert isinstance(data, dict) and "clause" in data, answer
        refused[index] = {(data["clause"], "client")}

    def expect_result(message: Dict[str, Any]) -> Any:
        script.send(message)
        answer = script.answer(message["id"])
        assert "result" in answer, (message, answer)
        return answer["result"]

    try:
        new = {"cwd": cwd, "mcpServers": []}
        expect_refusal(_call(1, "session/new", new), 1)  # before initialize
        expect_result(
            _call(2, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        )
        expect_refusal({"jsonrpc": "1.0", "id": 3, "method": "session/list", "params": {}}, 3)
        expect_refusal(_call(4, "session/list", [1]), 4)  # params not an object
        expect_refusal(_call(1.5, "session/list", {}), None)  # an id that is no id
        expect_refusal({"jsonrpc": "2.0", "id": 5, "method": 7}, 5)  # a method that is no name
        expect_refusal(_call(6, "nonsense/method", {}), 6)  # reserved name, unknown method
        read = {"sessionId": "s", "path": "/etc/hostname"}
        expect_refusal(_call(7, "fs/read_text_file", read), 7)  # a client method
        expect_refusal(_call(8, "session/new", {"cwd": "relative", "mcpServers": []}), 8)
        sid = expect_result(_call(9, "session/new", new))["sessionId"]
        mode = {"sessionId": sid, "modeId": "no-such-mode"}
        expect_refusal(_call(10, "session/set_mode", mode), 10)
        prompt = [{"type": "text", "text": "hello"}]
        expect_refusal(_call(11, "session/prompt", {"sessionId": "nope", "prompt": prompt}), 11)
        waiting = [{"type": "text", "text": "/wait"}]
        script.send(_call(13, "session/prompt", {"sessionId": sid, "prompt": waiting}))
        expect_refusal(_call(14, "session/prompt", {"sessionId": sid, "prompt": prompt}), 14)
        script.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}})
        assert script.answer(13)["result"]["stopReason"] == "cancelled"
    finally:
        script.close()

    report = validate(script.records)
    found: Dict[int, Set[Tuple[str, str]]] = {}
    for f in report.findings:
        if f.index is not None and (f.is_violation or f.level == "spec-gap"):
            found.setdefault(f.index, set()).add((f.clause, f.blame.value))
    assert {i: found.get(i, set()) for i in refused} == refused
    # And nothing else the client sent broke a rule that the agent let pass.
    client_lines = {i for i, r in enumerate(script.records) if r.get("from") == "client"}
    assert {i for i in found if i in client_lines} == set(refused)
