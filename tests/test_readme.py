"""The README, run as written: a newcomer following it meets no step that fails.

How the README marks its examples (fenced blocks, optionally under an HTML comment):

* ```` ```sh ````: run here, line by line, in a fresh directory with this environment's ``bin``
  first on ``PATH`` and stdin closed; each must exit 0. ``acpref check-agent`` must end with no
  note (nothing the run asks the reader to add).
* ``<!-- file: NAME -->`` over a block: written to ``NAME`` in that directory.
* ``<!-- red: CLAUSE -->`` / ``<!-- green -->`` over a ``sh`` block: must fail naming
  ``CLAUSE`` / must pass; ``<!-- fix: NAME -->``: a one-line fix of ``NAME`` (it replaces the
  line that starts the same way).
* ```` ```shell ````: the two commands of a fresh machine (``.ci/run`` runs the second; the
  packaging test the first) and the install lines (run here in a fresh virtual environment).
* ```` ```python ```` without a marker, ```` ```yaml ````, ```` ```text ````: shown, not run.

And no table cell of the README runs past about 40 words: long tables live in ``docs/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = str(Path(sys.executable).parent)

_BLOCK = re.compile(r"(?:<!-- (?P<mark>[^>]*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)


def _blocks() -> List[Tuple[Optional[str], str, str]]:
    """Every fenced block: (its marker or None, its language, its text)."""
    return [(m["mark"], m["lang"], m["body"]) for m in _BLOCK.finditer(README)]


def _env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def _sh(line: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def test_every_block_is_of_a_kind_this_test_knows():
    kinds = {"sh", "shell", "python", "yaml", "text"}
    assert {lang for _, lang, _ in _blocks()} <= kinds
    marks = [mark for mark, _, _ in _blocks() if mark]
    assert all(re.fullmatch(r"file: \S+|fix: \S+|red: \S+|green", m) for m in marks), marks


def test_the_two_commands_of_a_fresh_machine():
    shell = [body.strip() for _, lang, body in _blocks() if lang == "shell"]
    demo = "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/acpref demo"
    suite = ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
             ".venv/bin/python -m pytest -q -n auto")
    assert shell[:2] == [demo, suite]
    assert suite in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.timeout(300)
def test_the_sh_examples_run_clean(tmp_path):
    lines = [
        line for mark, lang, body in _blocks() if lang == "sh" and mark is None
        for line in body.splitlines() if line.strip()
    ]
    assert any(line.startswith("acpref check-agent") for line in lines)
    for line in lines:
        result = _sh(line, tmp_path)
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        if line.startswith("acpref check-agent"):
            assert result.stdout.startswith("ok: "), result.stdout
            notes = [n for n in (result.stdout + result.stderr).splitlines()
                     if n.startswith("note:")]
            assert notes == [], notes
        if " -p " in line and "--record" not in line:
            assert result.stdout.strip() == "hello", result.stdout
    assert (tmp_path / "check.html").exists() and (tmp_path / "run.html").exists()


@pytest.mark.timeout(240)
def test_the_fixture_example_fails_naming_the_bug_then_passes_after_the_fix(tmp_path):
    state = None
    seen = set()
    for mark, lang, body in _blocks():
        if mark is None:
            continue
        kind, _, arg = mark.partition(": ")
        if kind == "file":
            (tmp_path / arg).write_text(body, encoding="utf-8")
        elif kind == "fix":
            _apply_fix(tmp_path / arg, body)
        elif kind in ("red", "green"):
            result = _sh(body.strip(), tmp_path)
            out = result.stdout + result.stderr
            if kind == "red":
                assert result.returncode != 0 and arg in out, out
                assert "MUST" in out and "the agent broke the ACP spec" in out, out
            else:
                assert result.returncode == 0 and "1 passed" in out, out
                assert "error" not in out.lower(), out
        seen.add(kind)
        state = kind
    assert seen == {"file", "fix", "red", "green"} and state == "green"


def _apply_fix(path: Path, body: str) -> None:
    """Replace the line of ``path`` that starts as the fix's one line does."""
    (fixed,) = body.strip("\n").splitlines()
    start = fixed.strip().split(",")[0]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.strip().startswith(start)]
    assert len(hits) == 1, (start, hits)
    lines[hits[0]] = fixed + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def test_no_table_cell_is_over_40_words():
    long = []
    for line in README.splitlines():
        if line.startswith("|"):
            long += [c.strip() for c in re.split(r"(?<!\\)\|", line) if len(c.split()) > 40]
    assert long == [], long


def test_the_reading_order_and_the_reference_pages_are_linked():
    for target in ("acpref/_core/__init__.py", "docs/commands.md", "docs/library.md",
                   "docs/internals.md", "spec_notes/README.md", "spec_notes/decisions.md"):
        assert f"]({target})" in README, target
        assert (ROOT / target).exists(), target
    for page in ROOT.glob("docs/*.md"):
        for link in re.findall(r"\]\((\.\./[^)#]+)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).exists(), (page.name, link)


SOURCES = ("acpref", "setup.cfg", "pyproject.toml", "README.md", "LICENSE")


@pytest.mark.timeout(900)
def test_the_install_lines_work_in_a_fresh_venv(tmp_path):
    # The README's local lines, as pip 23 (what a Python 3.10-3.13 venv ships) runs them: from
    # a clone's path, and by git from a clone pinned to a commit. The sources are this
    # checkout's as they are now (a copy made a git repository), so uncommitted work is tested.
    lines = [line.split("#")[0].strip() for _, lang, body in _blocks() if lang == "shell"
             for line in body.splitlines() if line.startswith("pip install")]
    local = [line for line in lines if "/path/to/acpref" in line]
    assert len(local) == 2 and any("git+https://" in line for line in lines), lines
    clone = tmp_path / "acpref"
    clone.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, clone / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, clone / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "copy"]):
        subprocess.run([*git, *argv], cwd=clone, check=True, capture_output=True, timeout=60)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, check=True, text=True,
                            capture_output=True, timeout=60).stdout.strip()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = str(venv / "bin" / "pip")
    for line in local:
        line = line.replace("/path/to/acpref", str(clone)).replace("COMMIT", commit)
        result = _sh(line.replace("pip install", f"{pip} install -q", 1), tmp_path, timeout=600)
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        check = _sh(f"{venv}/bin/acpref client -p hello -- {venv}/bin/acpref echo", tmp_path)
        assert check.returncode == 0 and check.stdout.strip() == "hello", check.stderr
        subprocess.run([pip, "uninstall", "-qy", "acpref"], check=True, timeout=120,
                       capture_output=True)
