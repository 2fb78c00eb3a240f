"""The guard: the clause register, the code's citations and the tests cannot drift apart.

spec_notes/clauses.tsv is the register of the 459 clauses of ACP v1 (from the carried
``spec_notes/spec/clauses.tsv``) with acpref's columns: ``status``, ``enforced_in`` (the protocol
core and the live sides), ``checked_in`` (the oracle and the conformance scenarios),
``exercised_in`` (the echo agent and the CLI), ``tested_by`` and ``reason``. The place and test
columns are written by ``acpref spec --update-register`` from the code's own ``# spec ID``
comments and the tests' names; this test recomputes them and fails when the file is stale, when
a clause marked implemented is not cited in ``acpref/`` or not tested, or is enforced by no live
side without the reason saying why, when a clause that is not implemented gives no reason, and
when code or tests cite an id or a decision the register and ``decisions.md`` do not know.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acpref._tools.spec_index import (
    COMPUTED_COLUMNS,
    REGISTER_COLUMNS,
    ROLES,
    STATUSES,
    build_register,
    read_register,
    role_of,
    says_not_enforced,
    scan_code,
    scan_tests,
)

ROOT = Path(__file__).resolve().parent.parent
REGISTER = ROOT / "spec_notes" / "clauses.tsv"
DECISIONS = ROOT / "spec_notes" / "decisions.md"
PACKAGED = ROOT / "acpref" / "_core" / "clauses.tsv"
# The checkout's code and tests, read from their files: with a non-editable install, the acpref
# that `import` finds is the installed copy, which has no tests beside it.
CODE, TESTS = str(ROOT / "acpref"), str(ROOT / "tests")


@pytest.fixture(scope="module")
def rows():
    return read_register(str(REGISTER))


def test_register_has_acpref_columns(rows):
    header = REGISTER.read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert tuple(header) == REGISTER_COLUMNS


def test_register_starts_from_the_carried_register(rows, spec_dir):
    carried = (spec_dir / "clauses.tsv").read_text(encoding="utf-8").splitlines()
    first_seven = ["\t".join(r[c] for c in REGISTER_COLUMNS[:7]) for r in rows]
    assert first_seven == carried[1:]
    # The packaged copy (for an installed acpref) is the carried one too.
    assert PACKAGED.read_text(encoding="utf-8").splitlines() == carried


def test_the_spec_is_carried_in_the_repository():
    # The tests, the register and the packaged table read spec_notes/spec, never a directory
    # beside the repository: a clone alone collects and runs the whole suite.
    carried = ROOT / "spec_notes" / "spec"
    for name in ("schema.json", "schema.unstable.json", "meta.json", "clauses.tsv", "SOURCE.md"):
        assert (carried / name).is_file(), name
    assert len(list((carried / "v1").iterdir())) == 28


def test_register_is_up_to_date_with_the_code_and_tests(rows):
    fresh = build_register(rows, str(ROOT))
    stale = [
        f"{old['id']}: {column}"
        for old, new in zip(rows, fresh)
        for column in COMPUTED_COLUMNS
        if old[column] != new[column]
    ]
    assert not stale, (
        "spec_notes/clauses.tsv is stale; run `python -m acpref spec --update-register` "
        "in the checkout: " + ", ".join(stale[:20])
    )


def test_every_clause_has_a_known_status(rows):
    unknown = [f"{r['id']}: {r['status']!r}" for r in rows if r["status"] not in STATUSES]
    assert not unknown, unknown


def _cited(row):
    return any(row[f"{role}_in"] for role in ROLES)


def test_implemented_clauses_are_cited_in_the_code_and_tested(rows):
    missing = [
        f"{r['id']} ({'code' if not _cited(r) else 'tests'})"
        for r in rows
        if r["status"] == "implemented" and not (_cited(r) and r["tested_by"])
    ]
    assert not missing, missing


def test_implemented_clauses_name_where_they_are_enforced(rows):
    # An implemented clause is enforced by the protocol core or a live side, or its reason says
    # why none does ("exercised only: ..." for what is left to the application, such as a
    # client's UI; "checked only: ..." for what only an observer of both peers can judge).
    unexplained = [
        r["id"]
        for r in rows
        if r["status"] == "implemented"
        and not r["enforced_in"]
        and not says_not_enforced(r["reason"])
    ]
    assert not unexplained, f"implemented, enforced nowhere, no reason why: {unexplained}"
    # And the reason never says so of a clause a live side does enforce.
    stale = [r["id"] for r in rows if r["enforced_in"] and says_not_enforced(r["reason"])]
    assert not stale, f"enforced, but the reason says it is not: {stale}"


def test_every_citation_has_a_role():
    # Every cited place is enforcing, checking or exercising code: a citation in a tool (the
    # spec index, spec-diff, the transcript viewer) would vanish from the register's columns.
    orphans = sorted({c.path for c in scan_code(CODE) if role_of(c.path) is None})
    assert not orphans, orphans


def test_places_are_filed_by_role(rows):
    examples = {
        "enforced": "acpref/agent/_interface.py",
        "checked": "acpref/oracle/_validate.py",
        "exercised": "acpref/echo/_agent.py",
    }
    assert {role: role_of(path) for role, path in examples.items()} == {r: r for r in ROLES}
    for row in rows:
        for role in ROLES:
            for place in filter(None, row[f"{role}_in"].split("; ")):
                assert role_of(place.split(":", 1)[0]) == role, (row["id"], role, place)
    # The history replay of session/load is enforced by the agent side, not only checked.
    (load,) = [r for r in rows if r["id"] == "SETUP-05"]
    assert "acpref/agent/" in load["enforced_in"], load["enforced_in"]


def test_clauses_not_implemented_give_a_reason(rows):
    missing = [r["id"] for r in rows if r["status"] != "implemented" and not r["reason"].strip()]
    assert not missing, missing


def test_every_cited_clause_id_is_in_the_register(rows):
    known = {r["id"] for r in rows}
    cited = {c.clause for c in scan_code(CODE) if not c.clause.startswith("spec-gap:")}
    cited |= set(scan_tests(TESTS))
    unknown = sorted(c for c in cited if not c.startswith("spec-gap") and c not in known)
    assert not unknown, unknown


def test_every_decision_cited_in_the_code_is_in_decisions_md():
    text = DECISIONS.read_text(encoding="utf-8")
    listed = set(re.findall(r"^### ([a-z0-9-]+)", text, re.M)) | set(re.findall(r"`([a-z0-9-]+)`", text))
    cited = {c.clause.split(":", 1)[1] for c in scan_code(CODE) if c.clause.startswith("spec-gap:")}
    missing = sorted(cited - listed)
    assert not missing, f"decisions not in spec_notes/decisions.md: {missing}"


def test_every_must_clause_is_implemented_or_argued(rows):
    # The target: every MUST and MUST NOT clause implemented and tested, or not
    # applicable with a reason (checked above); none left without a status.
    musts = [r for r in rows if r["level"] in ("MUST", "MUST NOT")]
    assert len(musts) == 311
    assert all(r["status"] in STATUSES for r in musts)


def test_no_clause_is_left_open(rows):
    # `open` is the honest status of a clause whose work is under way: allowed, never silent.
    # While any is left, this test is reported as xfailed with the list, in every run.
    left = [r for r in rows if r["status"] == "open"]
    if left:
        musts = [r["id"] for r in left if r["level"] in ("MUST", "MUST NOT")]
        pytest.xfail(
            f"{len(left)} clauses open ({len(musts)} MUST/MUST NOT: {', '.join(musts)}); "
            f"others: {', '.join(r['id'] for r in left if r['id'] not in musts)}"
        )


def test_installed_acpref_spec_says_what_it_cannot_know(tmp_path):
    # An installed acpref has its package (code, packaged clause table) and no tests/ or
    # spec_notes/: `acpref spec` names every clause and where the code enforces it, and says
    # plainly that which tests prove it is unknown there, instead of reporting "0 tested".
    site = tmp_path / "site"
    shutil.copytree(
        ROOT / "acpref", site / "acpref", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**os.environ, "PYTHONPATH": str(site)}

    def spec(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "acpref", "spec", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )

    where = subprocess.run(
        [sys.executable, "-c", "import acpref; print(acpref.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30,
    )
    assert where.stdout.strip().startswith(str(site)), where
    summary = spec()
    assert summary.returncode == 0, summary.stderr
    total = len(read_register(str(REGISTER)))
    assert summary.stdout.startswith(f"{total} clauses: ")
    assert "unknown outside a checkout" in summary.stdout
    assert "0 tested" not in summary.stdout
    one = spec("SETUP-05")
    assert "enforced in:\n    acpref/" in one.stdout
    assert "tested by: unknown outside a checkout" in one.stdout
    assert spec("--uncovered").returncode == 2
