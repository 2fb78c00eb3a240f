"""The package is typed (``py.typed``): the type checker must agree with its annotations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_package_ships_py_typed() -> None:
    assert (ROOT / "acpref" / "py.typed").is_file()


def test_mypy_finds_no_error_in_the_package(tmp_path: Path) -> None:
    # The configuration is pyproject.toml's [tool.mypy]; a fresh cache, so nothing stale counts.
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "acpref"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
