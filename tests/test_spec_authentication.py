"""Clause tests for authentication.mdx (client side): one test per clause, named after it.

Clauses: AUTH-08 (never authenticate with a terminal method). The rules judge a hand-written
exchange on the in-memory pair (tests/pair.py: both sides' ``ProtocolState``, no I/O); the client
library refuses the call before sending it, over real pipes to the scripted agent of
``tests/peers/client_agent.py``. Every wait is bounded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from acpref import schema as s
from acpref.errors import LocalProtocolError

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from client_agent import ScriptedAgent  # noqa: E402
from pair import C, Pair, req  # noqa: E402
from spec_wire import WAIT, RecordingPair, clauses_of  # noqa: E402

METHODS = [
    {"id": "agent-login", "name": "Log in"},
    {"id": "tui-login", "name": "Log in in a terminal", "type": "terminal", "args": ["--login"]},
]


class _TerminalAuthAgent(ScriptedAgent):
    def initialize(self, params: Any, ctx: Any) -> Any:
        return {**super().initialize(params, ctx), "authMethods": METHODS}


def _handshake(**kw: Any) -> Pair:
    return Pair(**kw).handshake({"auth": {"terminal": True}}, auth_methods=METHODS)


def test_AUTH_08_authenticate_with_a_terminal_method_is_a_violation() -> None:
    terminal = req(1, "authenticate", {"methodId": "tui-login"})
    step = _handshake().client_sends(terminal)
    assert clauses_of(step.sent_findings) == ["AUTH-08"] and step.sent_findings[0].blame is C
    assert step.stopped is not None and step.stopped.clause == "AUTH-08"
    # A client that is not acpref sends it: the agent refuses it with the finding's code.
    step = _handshake(lax={C}).client_sends(terminal)
    assert clauses_of(step.received_findings) == ["AUTH-08"] and step.refusal is not None
    assert step.received_findings[0].code == step.refusal.code == -32602
    agent_login = req(2, "authenticate", {"methodId": "agent-login"})
    assert _handshake().client_sends(agent_login).findings == []


def test_AUTH_08_the_client_never_sends_it() -> None:
    pair = RecordingPair(agent=_TerminalAuthAgent())
    try:
        with pytest.raises(LocalProtocolError) as info:
            pair.conn.authenticate(s.AuthenticateRequest(method_id="tui-login"), timeout=WAIT)
        assert info.value.clause == "AUTH-08"
        assert pair.sent_params("authenticate") == []
        pair.conn.authenticate(s.AuthenticateRequest(method_id="agent-login"), timeout=WAIT)
        assert pair.sent_params("authenticate") == [{"methodId": "agent-login"}]
    finally:
        pair.close()
