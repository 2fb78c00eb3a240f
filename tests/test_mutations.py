"""A small mutation check: do the clause tests prove their clause?

For a sample of MUST clauses that acpref enforces by refusing (a ``raise`` on the line that cites
the clause), this module disables that refusal in a copy of the package and runs the tests the
register names for the clause (``spec_notes/clauses.tsv``, column ``tested_by``) against the
copy. At least one of them must fail: a clause test that still passes with its enforcing line
gone proves nothing (it ran against a peer that cooperates).

The enforcing statement is found by its citation, not by a line number: the first statement
at or after the ``# spec CLAUSE-ID`` comment in the named module, which must be a ``raise``.
When code moves, the sample follows the citation; when a citation disappears, this test says so.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

REPO = Path(__file__).resolve().parent.parent

# (clause, the modules that enforce it). A clause enforced in more than one module is disabled in
# all of them: a rule that lives twice (the live rules refuse a request before the handler's own
# check can) is what issue 15's single protocol core removes, and this list shows where it does.
SAMPLE: List[Tuple[str, Tuple[str, ...]]] = [
    ("RPC-16", ("acpref/_core/authentication.py",)),  # session methods before authenticate
    ("RPC-12", ("acpref/_shell/connection.py",)),  # an unknown method
    ("MODES-04", ("acpref/_core/session_modes.py",)),
    ("PROMPT-26", ("acpref/_core/prompt_turn.py",)),
    ("OVERVIEW-07", ("acpref/_core/file_system.py", "acpref/_core/tool_calls.py")),
    ("OVERVIEW-06", ("acpref/_core/file_system.py",)),
    ("INIT-01", ("acpref/_core/state.py",)),  # proved on the in-memory pair (tests/pair.py) too
]


def _tested_by() -> Dict[str, List[str]]:
    rows = (REPO / "spec_notes" / "clauses.tsv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split("\t")
    column = header.index("tested_by")
    out: Dict[str, List[str]] = {}
    for row in rows[1:]:
        fields = row.split("\t")
        out[fields[0]] = [t.strip() for t in fields[column].split(";") if t.strip()]
    return out


def _cites(line: str, clause: str) -> bool:
    """``# spec FS-03, OVERVIEW-06: ...`` cites both FS-03 and OVERVIEW-06."""
    match = re.search(r"#\s*spec ([A-Z]+-\d+(?:\s*,\s*[A-Z]+-\d+)*)", line)
    return bool(match) and clause in re.split(r"\s*,\s*", match.group(1))


def _is_refusal(node: ast.stmt) -> bool:
    """A ``raise``, or the ``yield finding(...)`` of a rule."""
    return isinstance(node, ast.Raise) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield)
    )


def _disable_refusal(source: str, clause: str) -> str:
    """``source`` with every refusal that a ``# spec CLAUSE`` comment cites replaced by ``pass``:
    the simple statement the comment trails, else the first one after it."""
    lines = source.splitlines(keepends=True)
    comments = [i + 1 for i, line in enumerate(lines) if _cites(line, clause)]
    assert comments, f"no line cites {clause}: update the sample"
    simple = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.stmt) and not hasattr(node, "body")
    ]
    targets = []
    for comment in comments:
        trailed = [n for n in simple if n.lineno <= comment <= (n.end_lineno or n.lineno)]
        target = trailed[0] if trailed else min(
            (n for n in simple if n.lineno > comment), key=lambda n: n.lineno
        )
        assert _is_refusal(target), (
            f"the statement citing {clause} (line {target.lineno}) is not a refusal: "
            "update the sample"
        )
        if target not in targets:
            targets.append(target)
    for target in sorted(targets, key=lambda n: -n.lineno):  # from the end: lines keep their place
        first, last = target.lineno - 1, (target.end_lineno or target.lineno) - 1
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        lines[first : last + 1] = [f"{indent}pass  # mutated: {clause} disabled\n"]
    return "".join(lines)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("clause,modules", SAMPLE, ids=[c for c, _ in SAMPLE])
def test_a_clause_test_fails_when_the_enforcing_line_is_removed(
    clause: str, modules: Tuple[str, ...], tmp_path: Path
) -> None:
    tests = _tested_by().get(clause, [])
    assert tests, f"the register names no test for {clause}"
    # A copy of what the tests read, so that the mutant is the package found first by every
    # process (the working directory and PYTHONPATH come before the installed acpref).
    copy = tmp_path / "mutant"
    skip = shutil.ignore_patterns("__pycache__", ".venv", ".git", "*.egg-info")
    for part in ("acpref", "tests", "spec_notes"):
        shutil.copytree(REPO / part, copy / part, ignore=skip)
    for part in ("pyproject.toml", "setup.cfg"):
        shutil.copy(REPO / part, copy / part)
    for module in modules:
        path = copy / module
        path.write_text(_disable_refusal(path.read_text(encoding="utf-8"), clause), "utf-8")
    # The copy's bytecode is written (beside the outer run's, or in the copy): its paths are
    # the copy's own, so nothing compiled from the unmutated package is ever read, and the
    # stages below and every process they start compile the mutant once, not each anew.
    env = {**os.environ, "PYTHONPATH": str(copy)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    imported = subprocess.run(
        [sys.executable, "-c", "import acpref; print(acpref.__file__)"],
        cwd=copy, env=env, capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    assert imported.startswith(str(copy)), f"the mutant was not the package imported: {imported}"
    # In stages, fastest first: the in-memory pair's tests, then the other clause tests, then
    # the one-defect peers' (a run of every broken peer). A stage's own run collects only its
    # files, and with -x the first test that fails ends it; a later stage runs only when every
    # test before passed, so "at least one fails" is judged on the same tests as one run would.
    ran: List[str] = []
    for stage in _stages(tests):
        ran += stage
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *stage],
            cwd=copy, env=env, capture_output=True, text=True, timeout=170,
        )
        # Exit status 1 is "tests ran and some failed"; 0 is "all passed" (on to the next
        # stage); anything else (collection errors, no tests, an internal error) would make a
        # pass of this check mean nothing.
        assert run.returncode in (0, 1), (
            f"the mutant's run of {stage} did not run (pytest exit {run.returncode}):\n"
            f"{run.stdout[-2000:]}{run.stderr[-2000:]}"
        )
        if run.returncode == 1:
            return
    pytest.fail(
        f"with {clause} disabled in {modules}, the tests {ran} did not fail:\n"
        f"{run.stdout[-2000:]}{run.stderr[-2000:]}"
    )


def _stages(tests: List[str]) -> List[List[str]]:
    """The tests in up to three runs: the in-memory pair's, the others, the broken peers'."""
    def rank(test: str) -> int:
        if "test_pair.py" in test:
            return 0
        return 2 if "test_oracle_broken" in test or "test_check_" in test else 1

    return [s for s in ([t for t in tests if rank(t) == r] for r in range(3)) if s]


def test_the_mutation_disables_exactly_one_statement() -> None:
    source = (
        "def f(x):\n"
        "    if x:\n"
        "        # spec RPC-12: refuse\n"
        "        raise ValueError(\n"
        "            'no'\n"
        "        )\n"
        "    return x\n"
    )
    mutated = _disable_refusal(source, "RPC-12")
    namespace: Dict[str, object] = {}
    exec(compile(mutated, "<mutant>", "exec"), namespace)
    assert namespace["f"](1) == 1  # type: ignore[operator]
    assert mutated.count("\n") == source.count("\n") - 2
    with pytest.raises(AssertionError, match="not a refusal"):
        _disable_refusal("# spec RPC-12: x\ny = 1\n", "RPC-12")
    rule = "def r(m):\n    # spec FS-03, OVERVIEW-06: absolute\n    yield 'finding'\n"
    assert "yield" not in _disable_refusal(rule, "OVERVIEW-06")
    assert _disable_refusal(rule, "FS-03").splitlines()[2].strip() == "pass  # mutated: FS-03 disabled"
