"""``acpref spec [ID | PAGE | --uncovered]``: where each clause is enforced and tested.

Reads the clause register (spec_notes/clauses.tsv in a checkout), the code's own ``# spec``
comments and the tests' names and comments (``acpref._spec_index``); never a hand-kept list. An
installed acpref ships the clause table (``acpref/_core/clauses.tsv``) and its own code, so it
names each clause and where the code enforces it; which tests prove a clause, and acpref's
status for it, it says plainly it cannot know outside a checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List

from .._spec_index import (
    PAGE_NOTES,
    build_register,
    format_register,
    page_table,
    read_register,
    repo_root,
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
        "--uncovered", action="store_true", help="list clauses not enforced or not tested"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--update-register",
        action="store_true",
        help="rewrite the enforced_in and tested_by columns of spec_notes/clauses.tsv (maintainers)",
    )
    p.set_defaults(func=run)


def _coverage() -> Dict[str, Dict[str, Any]]:
    rows = read_register()
    code = scan_code()
    tests = scan_tests()
    out: Dict[str, Dict[str, Any]] = {}
    for row in rows:
        out[row["id"]] = {**row, "enforced": [], "tests": tests.get(row["id"], [])}
    for c in code:
        entry = out.setdefault(
            c.clause, {"id": c.clause, "enforced": [], "tests": tests.get(c.clause, [])}
        )
        entry["enforced"].append(f"{c.path}:{c.line} ({c.function})")
    return out


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


def _print_clause(entry: Dict[str, Any]) -> None:
    if entry["id"].startswith("spec-gap:"):
        # A decision of acpref where the spec is silent: no page, level or side of its own.
        name = entry["id"].split(":", 1)[1]
        print(f"{entry['id']}  acpref's decision, see spec_notes/decisions.md ({name})")
        print("  enforced in:" if entry["enforced"] else "  enforced in: (no citation in the code)")
        for where in entry["enforced"]:
            print(f"    {where}")
        if repo_root() is not None and entry["tests"]:
            print("  tested by:")
            for test in entry["tests"]:
                print(f"    {test}")
        return
    print(
        f"{entry['id']}  [{entry.get('level', '?')}, {entry.get('side', '?')}]  {entry.get('page', '')} / {entry.get('section', '')}"
    )
    if entry.get("requirement"):
        print(f"  {entry['requirement']}")
    _print_verdict_level(entry["id"])
    if entry.get("status"):
        reason = f" ({entry['reason']})" if entry.get("reason") else ""
        print(f"  status: {entry['status']}{reason}")
    print("  enforced in:" if entry["enforced"] else "  enforced in: (no citation in the code)")
    for where in entry["enforced"]:
        print(f"    {where}")
    if repo_root() is None:
        print(f"  tested by: {_OUTSIDE_CHECKOUT}")
        return
    print("  tested by:" if entry["tests"] else "  tested by: (no test)")
    for test in entry["tests"]:
        print(f"    {test}")


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
    chosen: List[Dict[str, Any]] = [
        e
        for e in coverage.values()
        if e.get("page")
        and e.get("status", "") not in ("not applicable",)
        and (not e["enforced"] or not e["tests"])
    ]
    if as_json:
        keys = ("id", "level", "enforced", "tests")
        print(json.dumps([{k: e.get(k) for k in keys} for e in chosen], indent=1))
        return 0
    for e in chosen:
        missing = ", ".join(
            x for x, have in (("code", e["enforced"]), ("tests", e["tests"])) if not have
        )
        print(
            f"{e['id']:<14} {e.get('level', ''):<9} missing: {missing:<12} "
            f"{e.get('requirement', '')[:70]}"
        )
    print(f"{_count(len(chosen), 'clause')} uncovered", file=sys.stderr)
    return 0


def _run_summary(coverage: Dict[str, Dict[str, Any]]) -> int:
    """One line: how many clauses the code cites and the tests prove."""
    total = [e for e in coverage.values() if e.get("page")]
    enforced = sum(1 for e in total if e["enforced"])
    tested = sum(1 for e in total if e["tests"])
    counted = _count(len(total), "clause")
    if repo_root() is None:
        print(f"{counted}: {enforced} cited in code; tested: {_OUTSIDE_CHECKOUT}")
        return 0
    print(f"{counted}: {enforced} cited in code, {tested} tested")
    return 0


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
        mark = ("C" if e["enforced"] else "-") + proven
        print(f"{mark} {e['id']:<14} {e.get('level', ''):<9} {e.get('requirement', '')[:90]}")
    return 0
