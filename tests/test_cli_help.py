"""The help of ``acpref validate``, ``acpref proxy`` and ``acpref check-agent``, for a newcomer.

Each says what the command does in its first sentence, shows examples, explains every option and
what each exit status means; the examples it shows (the lines starting with ``$``) are run here,
in order, in a fresh directory, and must succeed.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ACPREF = [sys.executable, "-m", "acpref"]
WAIT = 120.0


def _help(command: str) -> str:
    done = subprocess.run(
        [*ACPREF, command, "--help"], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("command", ["validate", "proxy", "check-agent"])
def test_the_help_says_what_how_and_what_the_exit_status_means(command: str) -> None:
    text = _help(command)
    description = text.split("\n\n")[1]
    assert description.count(". ") == 0 and description.rstrip().endswith("."), description
    assert "examples:\n" in text
    assert re.search(rf"^  \$ acpref .*\b{command}\b", text, flags=re.M), "no example runs it"
    status = text.split("exit status:\n", 1)[1]
    for code in ("0", "1", "2"):
        assert re.search(rf"(^|\W){code}(\W|$)", status), (code, status)
    # every option is explained
    options = text.split("options:\n", 1)[1].split("\n\n", 1)[0]
    for row in re.findall(r"^  (-[^\n]*)$", options, flags=re.M):
        name, _, rest = row.partition("  ")
        assert rest.strip() or _continues(options, row), f"{name.strip()} has no help"


def _continues(options: str, row: str) -> bool:
    lines = options.splitlines()
    nxt = lines[lines.index("  " + row) + 1] if "  " + row in lines else ""
    return nxt.startswith(" " * 10) and bool(nxt.strip())


@pytest.mark.parametrize("command", ["validate", "proxy", "check-agent"])
def test_the_examples_of_the_help_work(command: str, tmp_path: Path) -> None:
    examples = [
        line.strip()[2:] for line in _help(command).splitlines() if line.strip().startswith("$ ")
    ]
    assert examples
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for example in examples:
        argv = shlex.split(example)
        assert argv[0] == "acpref"
        done = subprocess.run(
            [*ACPREF, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, timeout=WAIT
        )
        assert done.returncode == 0, (example, done.stdout[-2000:], done.stderr[-2000:])
        if "--report" in argv:
            assert (tmp_path / argv[argv.index("--report") + 1]).stat().st_size > 0


def test_check_agent_refuses_a_scenario_it_does_not_have(tmp_path: Path) -> None:
    done = subprocess.run(
        [*ACPREF, "check-agent", "--only", "initialize", "--", "acpref", "echo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 2 and "no scenario initialize" in done.stderr
    assert "handshake" in done.stderr  # the names it has
