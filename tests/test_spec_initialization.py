"""Clause tests for initialization.mdx: one test per clause, named after it.

Clauses: INIT-21 (the peer's title, else its name). The client is ``acpref client`` (a real
subprocess, against the echo agent) and its ``display_name``; every wait is bounded.
"""

from __future__ import annotations

import subprocess
import sys

from acpref import schema as s
from acpref._tools.terminal import display_name

WAIT = 30.0


def test_INIT_21_title_when_present_else_name() -> None:
    titled = s.Implementation(name="acpref-echo", title="acpref echo agent", version="1")
    assert display_name(titled) == "acpref echo agent"
    assert display_name(s.Implementation(name="plain-agent", version="1")) == "plain-agent"
    assert display_name(s.Implementation(name="plain-agent", title=None, version="1")) == (
        "plain-agent"
    )
    assert display_name(None) == "agent"


def test_INIT_21_the_cli_shows_the_agents_title() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acpref", "client", "-p", "hello", "--"]
        + [sys.executable, "-m", "acpref.echo"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "[connected to acpref echo agent," in done.stderr  # the banner: stdout is the answer
