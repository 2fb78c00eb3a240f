"""Conforming but unusual agents: each does something the spec allows that a stricter reading
would fail. The oracle must give none of them a MUST-level failure.

Run one with ``python tests/peers/unusual_agents.py NAME``. They bend ``tests/broken/_raw.py``'s
``RawAgent`` (a correct raw agent); ``tests/test_oracle_levels.py`` drives them.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "broken"))

from _raw import RawAgent  # noqa: E402

M = Dict[str, Any]


class NoCapabilities(RawAgent):
    """Omits agentCapabilities from the initialize result (as the official Python SDK's agents
    do): the schema gives it a default, the baseline capabilities."""

    def on_initialize(self, m: M) -> None:
        self.reply(m, {"protocolVersion": 1, "agentInfo": {"name": "bare", "version": "1"}})


class UnstableFields(RawAgent):
    """Sends fields the unstable schema defines (``sessionCapabilities.fork``, a prompt result's
    ``usage``) and one that no schema of this spec defines (``models`` on session/new)."""

    capabilities = {**RawAgent.capabilities, "sessionCapabilities": {"close": {}, "fork": {}}}

    def on_session_new(self, m: M) -> None:
        session_id = self.new_session_id()
        self.history[session_id] = []
        models = {"currentModelId": "m1", "availableModels": [{"modelId": "m1", "name": "M1"}]}
        self.reply(m, {"sessionId": session_id, "models": models})

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        self.say(session_id, "hi")
        usage = {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}
        self.reply(m, {"stopReason": "end_turn", "usage": usage})


class ClosesFirst(RawAgent):
    """Answers session/close at once, before the prompt it cancels answers ``cancelled``: the
    spec says close cancels the turn, not which answer comes first."""

    def on_session_close(self, m: M) -> None:
        self.cancelled.add(m["params"]["sessionId"])
        self.stop_mcp(m["params"]["sessionId"])  # spec SETUP-16: what the session held goes
        self.reply(m, {})


class RefusesWithData(RawAgent):
    """Not conforming: refuses session/new with an error whose ``data`` says why. Used to show
    that the evidence keeps ``error.data``."""

    def on_session_new(self, m: M) -> None:
        error = {"code": -32603, "message": "cannot start", "data": {"missing": "ACME_TOKEN"}}
        self.send({"jsonrpc": "2.0", "id": m["id"], "error": error})


class NewerValues(RawAgent):
    """Ends its turns with a stop reason this version does not define (``paused``, as a newer v1
    peer might) and streams a tool call of an undefined ``kind``: the live sides keep them and
    warn (spec-gap forward-compatible); the oracle fails them unless told ``newer_spec``
    (spec-gap undefined-value)."""

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        self.say(session_id, "hi")
        self.calls = getattr(self, "calls", 0) + 1
        call = {
            "sessionUpdate": "tool_call",
            "toolCallId": f"t{self.calls}",
            "title": "Teleport",
            "kind": "teleport",
            "status": "completed",
        }
        self.update(session_id, call)
        self.reply(m, {"stopReason": "paused"})


UNUSUAL = {
    cls.__name__: cls
    for cls in (NoCapabilities, UnstableFields, ClosesFirst, RefusesWithData, NewerValues)
}

if __name__ == "__main__":
    UNUSUAL[sys.argv[1]]().run()
