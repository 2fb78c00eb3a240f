"""The guard: the clause register, the code's citations and the tests cannot drift apart.

spec_notes/clauses.tsv is the register of the 333 clauses of ACP v1 (from
``../shared/spec/clauses.tsv``) with acpref's columns: ``status``, ``enforced_in``, ``tested_by``
and ``reason``. ``enforced_in`` and ``tested_by`` are written by ``acpref spec --update-register``
from the code's own ``# spec ID`` comments and the tests' names; this test recomputes them and
fails when the file is stale, when a clause marked implemented is not cited in ``acpref/`` or not
tested, when a clause that is not implemented gives no reason, and when code or tests cite an id
or a decision the register and ``decisions.md`` do not know.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acpref._spec_index import (
    REGISTER_COLUMNS,
    STATUSES,
    build_register,
    read_register,
    scan_code,
    scan_tests,
)

ROOT = Path(__file__).resolve().parent.parent
REGISTER = ROOT / "spec_notes" / "clauses.tsv"
DECISIONS = ROOT / "spec_notes" / "decisions.md"
PACKAGED = ROOT / "acpref" / "_rules" / "clauses.tsv"
# The checkout's code and tests, read from their files: with a non-editable install, the acpref
# that `import` finds is the installed copy, which has no tests beside it.
CODE, TESTS = str(ROOT / "acpref"), str(ROOT / "tests")


@pytest.fixture(scope="module")
def rows():
    return read_register(str(REGISTER))


def test_register_has_acpref_columns(rows):
    header = REGISTER.read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert tuple(header) == REGISTER_COLUMNS


def test_register_starts_from_the_shared_register(rows, spec_dir):
    shared = (spec_dir / "clauses.tsv").read_text(encoding="utf-8").splitlines()
    first_seven = ["\t".join(r[c] for c in REGISTER_COLUMNS[:7]) for r in rows]
    assert first_seven == shared[1:]
    # The packaged copy (for an installed acpref) is the shared one too.
    assert PACKAGED.read_text(encoding="utf-8").splitlines() == shared


def test_register_is_up_to_date_with_the_code_and_tests(rows):
    fresh = build_register(rows, str(ROOT))
    stale = [
        f"{old['id']}: {column}"
        for old, new in zip(rows, fresh)
        for column in ("enforced_in", "tested_by")
        if old[column] != new[column]
    ]
    assert not stale, (
        "spec_notes/clauses.tsv is stale; run `python -m acpref spec --update-register` "
        "in the checkout: " + ", ".join(stale[:20])
    )


def test_every_clause_has_a_known_status(rows):
    unknown = [f"{r['id']}: {r['status']!r}" for r in rows if r["status"] not in STATUSES]
    assert not unknown, unknown


def test_implemented_clauses_are_cited_in_the_code_and_tested(rows):
    missing = [
        f"{r['id']} ({'code' if not r['enforced_in'] else 'tests'})"
        for r in rows
        if r["status"] == "implemented" and not (r["enforced_in"] and r["tested_by"])
    ]
    assert not missing, missing


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
    assert len(musts) == 221
    assert all(r["status"] in STATUSES for r in musts)
