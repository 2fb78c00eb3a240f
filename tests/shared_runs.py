"""One check-agent run shared by the tests that assert different facts of it.

Several clause tests of ``test_check_agent.py`` judge the same agent with the same options: the
harmless-agent test and the clause-list test both run ``RawAgent`` through every scenario, the
one-defect test and the PROMPT-24 test both run ``ErrorOnCancel`` through the cancel scenario.
``shared_check_agent`` runs each distinct (command, options) once per test process and gives every
caller its own copy of that report: each test still asserts its own facts, named after its
clause, and still fails when the line that enforces the clause is removed (the run it reads is
the run the enforcing line took part in).

Only runs that depend on nothing but their command and options are shared: a run that records
transcripts into a test's own directory, or that runs scenarios of its own, is not. A test that
measures how long a run takes must call ``check_agent`` itself (a shared run may already be done).
"""

from __future__ import annotations

import copy
from typing import Dict, Sequence, Tuple

from acpref.testing import AgentCheckOptions, CheckReport, check_agent

__all__ = ["shared_check_agent"]

_RUNS: Dict[Tuple[Tuple[str, ...], str], CheckReport] = {}


def shared_check_agent(argv: Sequence[str], options: AgentCheckOptions) -> CheckReport:
    """``check_agent(argv, options)``, run once per distinct command and options."""
    if options.record_dir is not None or options.cwd is not None:
        return check_agent(argv, options)  # the run writes into a directory of the caller's
    key = (tuple(argv), repr(options))
    if key not in _RUNS:
        _RUNS[key] = check_agent(argv, options)
    return copy.deepcopy(_RUNS[key])

