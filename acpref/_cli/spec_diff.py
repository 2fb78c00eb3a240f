"""``acpref spec-diff NEW_SCHEMA``: what a newer schema file changes, as a refresh checklist.

Compares the spec acpref carries (``spec_notes/spec/schema.json`` in a checkout, or ``--old``)
with a newer ``schema.json`` and prints, as Markdown check items: ``$defs`` added and removed,
union members, properties, ``required``, types and formats, the ``x-deserialize-*`` annotations
field by field, methods, descriptions whose text changed (link-only rewrites counted apart) and,
with ``--meta``, whether meta.json agrees with the new schema's methods. The logic is
``acpref._tools.spec_diff``; what each item means for acpref is spec_notes/README.md
("Refreshing the spec").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .._tools.spec_diff import compare, format_markdown
from .._tools.spec_index import repo_root


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[1])
    p.add_argument("new", help="the newer schema.json (or schema.unstable.json)")
    p.add_argument(
        "--old",
        help="the schema to compare against (default: the carried spec_notes/spec/schema.json)",
    )
    p.add_argument("--meta", help="a meta.json to check against the new schema's methods")
    p.add_argument("--json", action="store_true", help="print the changes as JSON")
    p.set_defaults(func=run)


def _load(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def run(args: argparse.Namespace) -> int:
    old_path = args.old
    if old_path is None:
        root = repo_root()
        if root is None:
            print(
                "acpref spec-diff: outside a checkout of acpref there is no carried spec; "
                "name the schema to compare against with --old",
                file=sys.stderr,
            )
            return 2
        old_path = os.path.join(root, "spec_notes", "spec", "schema.json")
    try:
        old, new = _load(old_path), _load(args.new)
        meta = _load(args.meta) if args.meta else None
    except (OSError, ValueError) as exc:
        print(f"acpref spec-diff: {exc}", file=sys.stderr)
        return 2
    changes = compare(old, new, meta=meta)
    if args.json:
        rows = [{"section": c.section, "where": c.where, "what": c.what} for c in changes]
        print(json.dumps(rows, indent=1))
        return 0
    counts = {"old_defs": len(old.get("$defs", {})), "new_defs": len(new.get("$defs", {}))}
    sys.stdout.write(
        format_markdown(changes, old_name=old_path, new_name=args.new, counts=counts)
    )
    return 0
