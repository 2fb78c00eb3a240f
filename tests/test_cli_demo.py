"""``acpref demo``: the reference client and the echo agent through a full session.

The demo checks each step itself and exits 0 only if all passed; without the echo agent it
fails with a clear message.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

WAIT = 60.0


def test_demo_runs_every_step(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "acpref", "demo"], cwd=tmp_path, capture_output=True, timeout=WAIT
    )
    out = result.stdout.decode()
    if importlib.util.find_spec("acpref.echo") is None:
        assert result.returncode == 1
        assert b"echo agent" in result.stderr and b"not available" in result.stderr
        return
    assert result.returncode == 0, out + result.stderr.decode()
    assert "acpref demo: all steps passed" in out
    for shown in (
        "(thinking)",  # a thought
        "[plan]",  # a plan
        "[permission]",  # a tool call asking permission
        "[new file]",  # a write shown as a diff
        "| hello from a terminal",  # live terminal output
        "[mode] now ask",  # the agent switched mode
        "brave_mode = on",  # a boolean config option
        "[elicitation",  # URL elicitation completed
        "session/load",  # loaded over a new connection
        "[turn ended: cancelled]",  # cancellation
    ):
        assert shown in out, shown
