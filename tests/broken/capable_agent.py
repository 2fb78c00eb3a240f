"""A conforming raw agent that advertises what the spec lets a client use only when offered.

Run it with ``python tests/broken/capable_agent.py CapableAgent``. The broken clients of
``clients.py`` that break a sentence about an opt-in feature talk to it (through
``acpref proxy --record``), so that their one defect breaks that sentence alone and not also the
capability's own clause: image and embedded-resource prompts (``promptCapabilities``, else
PROMPT-03), SSE MCP servers (``mcpCapabilities.sse``, else SETUP-35), a terminal login
(offered only to a client that advertised ``auth.terminal``: AUTH-05) and a boolean config
option (offered only to a client that advertised ``session.configOptions.boolean``: CONFIG-05).

``tests/test_oracle_broken.py::test_clean_capable_agent_has_no_findings`` shows that it is
conforming: a client using every one of these features correctly gets no finding.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _raw import RawAgent  # noqa: E402

M = Dict[str, Any]

#: The terminal login it offers to a client with ``auth.terminal`` (AUTH-05).
TERMINAL_LOGIN = {"id": "tui", "name": "Log in", "type": "terminal", "args": ["--login"]}


class CapableAgent(RawAgent):
    """RawAgent with image and embedded-resource prompts, SSE MCP servers, a terminal login and
    a boolean config option ``fast`` (the last two only for a client that advertised them)."""

    capabilities = {
        **RawAgent.capabilities,
        "promptCapabilities": {"image": True, "embeddedContext": True},
        "mcpCapabilities": {"sse": True},
    }

    def __init__(self) -> None:
        super().__init__()
        self.fast: Dict[str, bool] = {}  # the boolean option's value per session

    def _boolean_ok(self) -> bool:
        session = self.client_caps.get("session") or {}
        config = session.get("configOptions") if isinstance(session, dict) else None
        return isinstance(config, dict) and isinstance(config.get("boolean"), dict)

    def options(self, session_id: str) -> List[M]:
        """The complete list of config options of a session, with their current values."""
        if not self._boolean_ok():
            return []
        value = self.fast.get(session_id, False)
        return [{"id": "fast", "name": "Fast", "type": "boolean", "currentValue": value}]

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            auth = self.client_caps.get("auth") or {}
            if isinstance(auth, dict) and auth.get("terminal") is True:
                result = {**result, "authMethods": [TERMINAL_LOGIN]}
        elif isinstance(result, dict) and set(result) == {"sessionId"} and self._boolean_ok():
            result = {**result, "configOptions": self.options(result["sessionId"])}
        super().reply(message, result)

    def on_session_set_config_option(self, m: M) -> None:
        params = m.get("params") or {}
        session_id, value = params.get("sessionId"), params.get("value")
        if session_id not in self.history or params.get("configId") not in {
            o["id"] for o in self.options(session_id)
        }:
            self.error(m, -32602, f"no config option {params.get('configId')!r}")
            return
        if type(value) is not bool:
            self.error(m, -32602, "fast is a boolean option: send true or false")
            return
        self.fast[session_id] = value
        self.reply(m, {"configOptions": self.options(session_id)})

    def on_authenticate(self, m: M) -> None:
        # The terminal login is no method of the connection: the client runs it itself.
        self.error(m, -32602, "tui is a terminal login: run the agent with --login")


AGENTS = {"CapableAgent": CapableAgent}

if __name__ == "__main__":
    AGENTS[sys.argv[1]]().run()
