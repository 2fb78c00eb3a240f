"""Packaging: the wheel another project installs, and what it can do outside this checkout.

Another project installs acpref from a clone or a git URL (tests/test_readme.py runs the
README's lines), which pip turns into a wheel. This test builds the wheel from a copy of the
sources (so the checkout gains no ``build/``), checks that it carries the license and the clause
register, installs it into a fresh virtual environment that sees nothing of this one, and runs
there, from a directory outside the checkout, what the README promises: ``acpref demo`` and the
pytest plugin example (the README's agent, fixed, and its test), taken verbatim from the README.
Installing needs the package index that the README's install command needs (for the build
backend, ``attrs``, ``cattrs`` and ``pytest``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("acpref", "setup.cfg", "pyproject.toml", "README.md", "LICENSE")


def _run(argv, cwd, timeout=240):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _readme_plugin_example(work: Path) -> None:
    """Write the README's agent (with its fix) and its test into ``work``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, body in re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```", readme, re.S):
        (work / name).write_text(body, encoding="utf-8")
    (fixed,) = re.findall(r"<!-- fix: my_agent.py -->\n```python\n(.*?)\n```", readme, re.S)
    agent = work / "my_agent.py"
    start = fixed.strip().split(",")[0]
    agent.write_text("".join(
        fixed + "\n" if line.strip().startswith(start) else line
        for line in agent.read_text(encoding="utf-8").splitlines(keepends=True)
    ), encoding="utf-8")


def test_license_file_is_apache_2():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert "license = Apache-2.0" in (ROOT / "setup.cfg").read_text(encoding="utf-8")


@pytest.mark.timeout(600)
def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(src)],
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("acpref-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        licenses = [n for n in names if ".dist-info/" in n and n.endswith("LICENSE")]
        assert licenses, names
        assert z.read(licenses[0]).decode() == (ROOT / "LICENSE").read_text(encoding="utf-8")
        assert "acpref/_core/clauses.tsv" in names and "acpref/py.typed" in names
        # the show page's stylesheet, script and legend are data files of acpref._tools
        for asset in ("show.css", "show.js", "show_legend.html"):
            assert f"acpref/_tools/{asset}" in names, names
        assert not any(n.startswith("tests/") for n in names)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = str(bindir / "python")
    _run([python, "-m", "pip", "install", "-q", str(wheel), "pytest"], cwd=tmp_path)

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run([python, "-c", "import acpref; print(acpref.__file__)"], cwd=work)
    assert where.startswith(str(venv)), where

    out = _run([str(bindir / "acpref"), "demo"], cwd=work)
    assert "acpref demo: all steps passed" in out

    # acpref show, installed: the page carries the stylesheet and script read from the wheel
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    record = {"from": "client", "ts": 1.0, "line": json.dumps(hello)}
    (work / "run.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    _run([str(bindir / "acpref"), "show", "run.jsonl", "-o", "run.html"], cwd=work)
    page = (work / "run.html").read_text(encoding="utf-8")
    for asset in ("show.css", "show.js", "show_legend.html"):
        shipped = (ROOT / "acpref" / "_tools" / asset).read_text(encoding="utf-8")
        assert shipped in page, asset

    _readme_plugin_example(work)
    out = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_agent.py"],
               cwd=work)
    assert "1 passed" in out, out
