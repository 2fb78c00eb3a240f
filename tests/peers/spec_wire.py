"""Helpers for the clause tests ``tests/test_spec_*.py``: wire messages and a recording client.

* ``req``, ``note``, ``ok``, ``err``: JSON-RPC messages as dicts, for the oracle
  (``acpref.oracle.validate`` takes them as records, ``records``). A rule alone is tested on the
  in-memory pair, ``tests/pair.py``, which has its own handshake.
* ``RecordingPair``: ``client_harness.Pair`` (a ``ClientSideConnection`` and the scripted agent of
  ``client_agent.py`` over two real pipes) that keeps every line the client sent, as JSON.

Every wait is bounded by ``WAIT``.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, List, Optional

from client_harness import WAIT, Pair

__all__ = [
    "WAIT",
    "req",
    "note",
    "ok",
    "err",
    "clauses_of",
    "records",
    "RecordingPair",
]

def req(i: Any, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params or {}}


def note(method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


def ok(i: Any, result: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result}


def err(i: Any, code: int, message: str = "failed") -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "error": {"code": code, "message": message}}


def records(*messages: Any) -> List[Dict[str, Any]]:
    """Transcript records for ``acpref.oracle.validate``: ``("client" | "agent", message)``."""
    return [{"from": sender, "ts": 0.0, "line": json.dumps(m)} for sender, m in messages]


def clauses_of(findings: List[Any]) -> List[str]:
    return [f.clause for f in findings]


class RecordingPair(Pair):
    """A ``Pair`` that keeps every message the client wrote, decoded, in wire order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock = threading.Lock()
        self.sent: List[Dict[str, Any]] = []
        self.received: List[Dict[str, Any]] = []
        kwargs["recorder"] = self._record
        super().__init__(*args, **kwargs)

    def _record(self, direction: str, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        with self._lock:
            (self.sent if direction == "out" else self.received).append(message)

    def sent_params(self, method: str) -> List[Dict[str, Any]]:
        """The params of every ``method`` message the client sent."""
        with self._lock:
            return [m.get("params", {}) for m in self.sent if m.get("method") == method]
