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

from ._check_agent import AgentCheckOptions, Scenario, check_agent
from ._check_client import read_client_report, serve_check_client
from ._conforms import assert_conforms
from ._driver import DEFAULT_CLIENT_CAPABILITIES, AgentDriver, PendingTurn, Turn
from ._pairs import memory_pair
from ._recording import RecordingStream, RecordSink
from ._results import FAIL, PASS, SKIPPED, CheckReport, ClauseResult

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
