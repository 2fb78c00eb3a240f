"""``acpref spec [ID | PAGE | --uncovered]``: where each clause is enforced, checked and tested.

Reads the clause register (spec_notes/clauses.tsv in a checkout), the code's own ``# spec``
comments and the tests' names and comments (``acpref._tools.spec_index``); never a hand-kept
list. For each clause it names where it is *enforced* (the protocol core and the live sides),
*checked* (the oracle and the conformance scenarios), *exercised* (the echo agent and the CLI)
and which tests prove it. An installed acpref ships the clause table
(``acpref/_core/clauses.tsv``) and its own code, so it names each clause and where the code
cites it; which tests prove a clause, and acpref's status for it, it says plainly it cannot know
outside a checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List

from .._tools.spec_index import (
    PAGE_NOTES,
    ROLES,
    build_register,
    format_register,
    page_table,
    read_register,
    repo_root,
    role_of,
    says_not_enforced,
    scan_code,
    scan_tests,
    with_page_table,
)


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    p.add_argument(
        "target",
        nargs="?",
        help="a clause id (SETUP-05), a page (session-setup), or a spec-gap name",
    )
    p.add_argument(
        "--uncovered",
        action="store_true",
        help="list clauses not cited, not enforced by a live side (and no reason), or not tested",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--lifecycles",
        action="store_true",
        help="print the session and turn lifecycles (spec_notes/lifecycles.md) from their tables",
    )
    p.add_argument(
        "--update-register",
        action="store_true",
        help="rewrite the place and test columns of spec_notes/clauses.tsv (maintainers)",
    )
    p.set_defaults(func=run)


def _entry(clause: str, tests: Dict[str, List[str]]) -> Dict[str, Any]:
    return {"id": clause, **{role: [] for role in ROLES}, "tests": tests.get(clause, [])}


def _coverage() -> Dict[str, Dict[str, Any]]:
    """Each clause (and decision) with its register row, its cited places by role, its tests."""
    tests = scan_tests()
    out: Dict[str, Dict[str, Any]] = {}
    for row in read_register():
        out[row["id"]] = {**row, **_entry(row["id"], tests)}
    for c in scan_code():
        entry = out.setdefault(c.clause, _entry(c.clause, tests))
        role = role_of(c.path)
        if role is not None:
            entry[role].append(f"{c.path}:{c.line} ({c.function})")
    return out


def _cited(entry: Dict[str, Any]) -> bool:
    return any(entry[role] for role in ROLES)


#: What an installed acpref cannot know: its tests and acpref's register columns are not installed.
_OUTSIDE_CHECKOUT = (
    "unknown outside a checkout of acpref (the tests and the register's status columns are not "
    "installed; run `acpref spec` in a clone)"
)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _resolve(target: str, coverage: Dict[str, Dict[str, Any]]) -> str:
    """A clause id in any case (setup-05), or a decision named without its spec-gap: prefix."""
    if target in coverage:
        return target
    if target.upper() in coverage:
        return target.upper()
    if f"spec-gap:{target}" in coverage:
        return f"spec-gap:{target}"
    return target


def _print_verdict_level(clause: str) -> None:
    """How the oracle reports the clause, and the spec's sentence a failure quotes."""
    from .._core.register import level_of, quote_of

    quote = quote_of(clause)
    print(f"  oracle level: {level_of(clause)}")
    if quote is not None:
        print(f"  spec ({quote.source}): \"{quote.text}\"")


def _print_places(entry: Dict[str, Any]) -> None:
    """Where the code cites the clause, by role; ``enforced in`` always, the others when cited."""
    if entry["enforced"]:
        print("  enforced in:")
    elif says_not_enforced(entry.get("reason", "")):
        print("  enforced in: none (the status says why)")
    else:
        print("  enforced in: (no citation in the protocol core or the live sides)")
    for role in ROLES:
        if role != "enforced" and entry[role]:
            print(f"  {role} in:")
        for where in entry[role]:
            print(f"    {where}")


def _print_tests(entry: Dict[str, Any]) -> None:
    if repo_root() is None:
        print(f"  tested by: {_OUTSIDE_CHECKOUT}")
        return
    print("  tested by:" if entry["tests"] else "  tested by: (no test)")
    for test in entry["tests"]:
        print(f"    {test}")


def _print_clause(entry: Dict[str, Any]) -> None:
    if entry["id"].startswith("spec-gap:"):
        # A decision of acpref where the spec is silent: no page, level or side of its own.
        name = entry["id"].split(":", 1)[1]
        print(f"{entry['id']}  acpref's decision, see spec_notes/decisions.md ({name})")
        _print_places(entry)
        if repo_root() is not None and entry["tests"]:
            _print_tests(entry)
        return
    level, side = entry.get("level", "?"), entry.get("side", "?")
    print(f"{entry['id']}  [{level}, {side}]  {entry.get('page', '')} / {entry.get('section', '')}")
    if entry.get("requirement"):
        print(f"  {entry['requirement']}")
    _print_verdict_level(entry["id"])
    if entry.get("status"):
        reason = f" ({entry['reason']})" if entry.get("reason") else ""
        print(f"  status: {entry['status']}{reason}")
    _print_places(entry)
    _print_tests(entry)


def _update_register() -> int:
    root = repo_root()
    if root is None:
        print("acpref spec: --update-register needs a checkout (spec_notes/)", file=sys.stderr)
        return 2
    path = os.path.join(root, "spec_notes", "clauses.tsv")
    rows = build_register(read_register(path if os.path.exists(path) else None))
    with open(path, "w", encoding="utf-8") as f:
        f.write(format_register(rows))
    print(f"wrote {path}")
    # Each page note's clause table comes from the register too.
    for page, note in PAGE_NOTES.items():
        note_path = os.path.join(root, "spec_notes", note)
        if not os.path.exists(note_path):
            continue
        with open(note_path, encoding="utf-8") as f:
            text = f.read()
        updated = with_page_table(text, page_table(rows, page))
        if updated != text:
            with open(note_path, "w", encoding="utf-8") as f:
                f.write(updated)
            print(f"wrote {note_path}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.update_register:
        return _update_register()
    if args.lifecycles:
        from .._core.lifecycle import markdown

        print(markdown(), end="")
        return 0
    coverage = _coverage()
    if args.uncovered:
        return _run_uncovered(coverage, as_json=args.json)
    if not args.target:
        return _run_summary(coverage)
    target = _resolve(args.target, coverage)
    if target in coverage or target.startswith("spec-gap:"):
        entry = coverage.get(target, {"id": target, "enforced": [], "tests": []})
        if args.json:
            print(json.dumps(entry, indent=1))
        else:
            _print_clause(entry)
        return 0
    return _run_page(target, coverage, as_json=args.json)


def _run_uncovered(coverage: Dict[str, Dict[str, Any]], *, as_json: bool) -> int:
    """The clauses of the spec (not acpref's decisions) that no code cites or no test proves."""
    if repo_root() is None:
        print(f"acpref spec: --uncovered: {_OUTSIDE_CHECKOUT}", file=sys.stderr)
        return 2
    chosen = [(e, _missing(e)) for e in coverage.values() if e.get("page")]
    chosen = [(e, m) for e, m in chosen if m and e.get("status", "") != "not applicable"]
    if as_json:
        keys = ("id", "level", *ROLES, "tests")
        listed = [{**{k: e.get(k) for k in keys}, "missing": m} for e, m in chosen]
        print(json.dumps(listed, indent=1))
        return 0
    for e, missing in chosen:
        print(
            f"{e['id']:<14} {e.get('level', ''):<9} missing: {', '.join(missing):<17} "
            f"{e.get('requirement', '')[:65]}"
        )
    print(f"{_count(len(chosen), 'clause')} uncovered", file=sys.stderr)
    return 0


def _missing(entry: Dict[str, Any]) -> List[str]:
    """What a clause lacks: any citation, a live side enforcing it (unless the register says
    why none does), a test."""
    missing = []
    if not _cited(entry):
        missing.append("code")
    elif not entry["enforced"] and not says_not_enforced(entry.get("reason", "")):
        missing.append("enforcement")
    if not entry["tests"]:
        missing.append("tests")
    return missing


def _run_summary(coverage: Dict[str, Dict[str, Any]]) -> int:
    """One line: how many clauses the code cites and the tests prove."""
    total = [e for e in coverage.values() if e.get("page")]
    counts = ", ".join(f"{sum(1 for e in total if e[role])} {role}" for role in ROLES)
    tested = sum(1 for e in total if e["tests"])
    counted = _count(len(total), "clause")
    if repo_root() is None:
        print(f"{counted}: {counts}; tested: {_OUTSIDE_CHECKOUT}")
        return 0
    print(f"{counted}: {counts}, {tested} tested")
    return 0


#: A page's listing marks each clause: Enforced, Checked, eXercised, Tested ("-": not).
_MARKS = {"enforced": "E", "checked": "C", "exercised": "X"}


def _run_page(target: str, coverage: Dict[str, Dict[str, Any]], *, as_json: bool) -> int:
    """The clauses of one page, named with or without its suffix (the 2026-11 pages are .md)."""
    suffixed = target.endswith((".mdx", ".md", ".json"))
    pages = (target,) if suffixed else (target + ".mdx", target + ".md")
    chosen = [e for e in coverage.values() if e.get("page") in pages]
    if not chosen:
        print(f"acpref spec: no clause or page {target!r}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(chosen, indent=1))
        return 0
    for e in chosen:
        proven = "?" if repo_root() is None else ("T" if e["tests"] else "-")
        mark = "".join(_MARKS[r] if e[r] else "-" for r in ROLES) + proven
        print(f"{mark} {e['id']:<14} {e.get('level', ''):<9} {e.get('requirement', '')[:90]}")
    return 0
