"""The ``acpref`` command line as a first contact: versions, help, closed pipes, exit statuses.

Spec: none (the tools); exit statuses per spec_notes/client.md. Real subprocesses, real pipes.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

WAIT = 60.0
ACPREF = [sys.executable, "-m", "acpref"]
ECHO = [*ACPREF, "echo"]


def test_version() -> None:
    from acpref import __version__

    done = subprocess.run([*ACPREF, "--version"], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0 and done.stdout.strip() == f"acpref {__version__}"


@pytest.mark.parametrize(
    "command",
    ["client", "demo", "echo", "validate", "proxy", "check-agent", "check-client", "diff", "spec"],
)
def test_help_is_written_for_people(command: str) -> None:
    done = subprocess.run(
        [*ACPREF, command, "--help"], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
    description = done.stdout.split("\n\n")[1]
    assert "``" not in done.stdout  # no reStructuredText markup
    assert not description.startswith(("Spec:", "acpref ")), description  # no docstring


@pytest.mark.parametrize(
    "argv",
    [
        ["demo"],
        ["spec", "session-setup"],
        ["client", "-p", "/stream 50", "--", *ECHO],
    ],
    ids=["demo", "spec", "client"],
)
def test_a_closed_stdout_ends_the_command_quietly(argv, tmp_path) -> None:
    # `acpref ... | head`: the reader went away before the first line.
    scratch = tmp_path / "tmp"  # the command's temporary files, which it must remove
    scratch.mkdir()
    proc = subprocess.Popen(
        [*ACPREF, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(WAIT) == 141, err
    assert "BrokenPipeError" not in err and "Traceback" not in err, err
    assert list(scratch.iterdir()) == []


def test_spec_finds_a_decision_by_its_name_alone() -> None:
    done = subprocess.run(
        [*ACPREF, "spec", "close-in-flight"], capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("spec-gap:close-in-flight  acpref's decision")
    assert "enforced in:\n    acpref/" in done.stdout
    lower = subprocess.run(
        [*ACPREF, "spec", "setup-05"], capture_output=True, text=True, timeout=WAIT
    )
    assert lower.returncode == 0 and lower.stdout.startswith("SETUP-05  [MUST, agent]")


def test_one_shot_stdout_is_the_answer_only(tmp_path) -> None:
    done = subprocess.run(
        [*ACPREF, "client", "-p", "hello there", "--", *ECHO],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello there\n"
    assert "[connected to acpref echo agent" in done.stderr and "[commands]" in done.stderr


def test_one_shot_timeout_cancels_the_turn_and_exits_124(tmp_path) -> None:
    done = subprocess.run(
        [*ACPREF, "client", "--timeout", "3", "-p", "/wait", "--", *ECHO],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=WAIT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 124, done.stderr
    assert "the --timeout of 3s passed" in done.stderr  # during setup, or during the turn
