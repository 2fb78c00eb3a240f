"""Testing ACP peers against the spec: drive an agent, grade a client, a pytest plugin.

* ``AgentDriver``: play the client to an agent under test (a process or any stream); every line
  is recorded and judged by the oracle; ``close()`` returns its ``Report``.
* ``check_agent(argv)``: scripted conformance scenarios, a ``CheckReport`` by clause.
* ``serve_check_client(report_path)`` / ``read_client_report``: the scripted agent that grades a
  client, and its report (``acpref check-client``).
* ``memory_pair(agent)``: an in-process agent and a driver over an in-memory pipe.
* ``assert_conforms(transcript)``: fail with the oracle's findings.
* ``acpref.testing.plugin``: pytest fixtures (``acp_agent``, ``acp_client_check``, ``acp_pair``).

Layer L5: threads and subprocesses are fine here.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._check_agent import check_agent
    from ._check_client import read_client_report, serve_check_client
    from ._conforms import assert_conforms
    from ._driver import DEFAULT_CLIENT_CAPABILITIES, AgentDriver, PendingTurn, Turn
    from ._pairs import memory_pair
    from ._recording import RecordingStream, RecordSink
    from ._results import FAIL, PASS, SKIPPED, CheckReport, ClauseResult
    from ._scenario import AgentCheckOptions, Scenario

#: Where each public name lives. Imported on first use: the pytest plugin (a submodule) is loaded
#: by every pytest run of a project that has acpref installed, and must not pay for the drivers.
_HOMES = {
    "AgentCheckOptions": "._scenario",
    "Scenario": "._scenario",
    "check_agent": "._check_agent",
    "read_client_report": "._check_client",
    "serve_check_client": "._check_client",
    "assert_conforms": "._conforms",
    "DEFAULT_CLIENT_CAPABILITIES": "._driver",
    "AgentDriver": "._driver",
    "PendingTurn": "._driver",
    "Turn": "._driver",
    "memory_pair": "._pairs",
    "RecordingStream": "._recording",
    "RecordSink": "._recording",
    "FAIL": "._results",
    "PASS": "._results",
    "SKIPPED": "._results",
    "CheckReport": "._results",
    "ClauseResult": "._results",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentCheckOptions",
    "AgentDriver",
    "CheckReport",
    "ClauseResult",
    "DEFAULT_CLIENT_CAPABILITIES",
    "FAIL",
    "PASS",
    "PendingTurn",
    "RecordSink",
    "RecordingStream",
    "SKIPPED",
    "Scenario",
    "Turn",
    "assert_conforms",
    "check_agent",
    "memory_pair",
    "read_client_report",
    "serve_check_client",
]
