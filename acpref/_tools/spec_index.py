"""Where each clause is enforced, checked, exercised and tested, found from the code's comments.

Spec: spec_notes/README.md (the comment forms). The code cites a clause on the line that
enforces it: ``# spec SETUP-05: ...`` (several ids may share one comment:
``# spec PROMPT-03, CONTENT-04: ...``); a decision where the spec is silent is
``# spec-gap <name>: ...``. Tests prove a clause by name (``def test_SETUP_05_...``) or by the same
comment. This module reads those, so that ``acpref spec`` and the guard test never depend on a
hand-kept list.

Where a citation sits says what that code does for its clause (``ROLES``, ``role_of``):

* *enforced*: the code a live peer runs, the protocol core (``acpref/_core``), the two sides
  (``acpref/agent``, ``acpref/client``, ``acpref/_shell/connection.py``) and the wire layer under them
  (schema models, codec, method table, errors, threads, transport, the agent's MCP client) and
  the reference client's terminal UI (``acpref/_tools/terminal.py``, what a user is shown):
  everything in the package but the three roles below and the tools (``_TOOLS``);
* *checked*: the oracle (``acpref/oracle``) and the conformance scenarios (``acpref/testing``),
  which judge a peer that is not acpref;
* *exercised*: the echo agent (``acpref/echo``) and the CLI (``acpref/_cli``), applications built
  on the sides that show the clause happening.

A clause the live sides leave to the application (what a client's UI shows, what an agent chooses
to send) is exercised or checked only; the register's ``reason`` says so (``NOT_ENFORCED``).
"""

from __future__ import annotations

import ast
import collections
import io
import os
import re
import tokenize
from typing import Dict, Iterable, List, Optional, Tuple

import attrs

__all__ = [
    "Citation",
    "scan_code",
    "scan_tests",
    "repo_root",
    "read_register",
    "role_of",
    "says_not_enforced",
]

# A citation may open the comment or follow other text in it, such as a ``noqa`` marker.
_COMMENT = re.compile(r"(?:#|\s|^)spec\s+((?:[A-Z]+-\d+)(?:\s*(?:,|/|and|\(|\))\s*[A-Z]+-\d+)*)")
_ID = re.compile(r"[A-Z]+-\d+")
_GAP = re.compile(r"spec-gap[\s:]+([a-z0-9][a-z0-9-]*)")
#: A test named after its clauses: ``test_SETUP_05_...``, or ``test_TERM_11_12_...`` for two.
_TEST_NAME = re.compile(r"^test_([A-Z]+)((?:_\d+)+)")


@attrs.frozen
class Citation:
    clause: str
    path: str  # relative to the repository (or package) root
    line: int
    function: str
    text: str


def _functions_by_line(tree: ast.AST) -> List[Tuple[int, int, str]]:
    spans: List[Tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in _blocks(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                spans.append((child.lineno, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return spans


def _blocks(node: ast.AST) -> Iterable[ast.AST]:
    """The children of ``node`` that can hold a ``def`` or ``class``: statements and the
    ``except`` and ``case`` blocks (an expression never does), so a walk skips the expressions."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.stmt, ast.excepthandler)) or type(child).__name__ == "match_case":
            yield child


def _defs(tree: ast.AST) -> Iterable[ast.AST]:
    """Every statement of ``tree``, at any depth (``ast.walk`` without the expressions)."""
    todo = collections.deque([tree])
    while todo:  # breadth first, as ast.walk: the tests keep the order they are listed in
        node = todo.popleft()
        yield node
        todo.extend(_blocks(node))


def _enclosing(spans: List[Tuple[int, int, str]], line: int) -> str:
    best: Optional[Tuple[int, int, str]] = None
    for span in spans:
        if span[0] <= line <= span[1] and (best is None or span[0] >= best[0]):
            best = span
    return best[2] if best else "<module>"


def _python_files(root: str) -> Iterable[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def _scan(root: str, base: str) -> List[Citation]:
    out: List[Citation] = []
    for path in _python_files(root):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        try:
            spans = _functions_by_line(ast.parse(source))
        except SyntaxError:
            spans = []
        rel = os.path.relpath(path, base)
        for lineno, text in _comments(source):
            for match in _COMMENT.finditer(text):
                for clause in _ID.findall(match.group(1)):
                    out.append(
                        Citation(clause, rel, lineno, _enclosing(spans, lineno), text.strip())
                    )
            for match in _GAP.finditer(text):
                out.append(
                    Citation(
                        f"spec-gap:{match.group(1)}",
                        rel,
                        lineno,
                        _enclosing(spans, lineno),
                        text.strip(),
                    )
                )
    return out


def _comments(source: str) -> Iterable[Tuple[int, str]]:
    """The real comments of a Python source (not text inside strings or docstrings)."""
    if not (_COMMENT.search(source) or _GAP.search(source)):
        return  # no citation anywhere in the text, so none in a comment: nothing to tokenize
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and "spec" in tok.string:
                yield tok.start[0], tok.string
    except (tokenize.TokenError, SyntaxError):
        return


#: The ``acpref/`` directory this module belongs to (it sits in ``acpref/_tools/``).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def repo_root() -> Optional[str]:
    """The checkout this package runs from (with tests/ and spec_notes/), or None if installed."""
    root = os.path.dirname(_PACKAGE_DIR)
    return root if os.path.isdir(os.path.join(root, "spec_notes")) else None


def scan_code(package_dir: Optional[str] = None) -> List[Citation]:
    """Every ``# spec`` and ``# spec-gap`` citation in the package's code."""
    package_dir = package_dir or _PACKAGE_DIR
    return _scan(package_dir, os.path.dirname(package_dir))


def scan_tests(tests_dir: Optional[str] = None) -> Dict[str, List[str]]:
    """Clause id -> test ids (``tests/x.py::test_name``) that prove it, by name or comment."""
    if tests_dir is None:
        root = repo_root()
        if root is None:
            return {}
        tests_dir = os.path.join(root, "tests")
    base = os.path.dirname(tests_dir)
    out: Dict[str, List[str]] = {}
    for path in _python_files(tests_dir):
        rel = os.path.relpath(path, base)
        with open(path, encoding="utf-8") as f:
            source = f.read()
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in _defs(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                m = _TEST_NAME.match(node.name)
                if m:
                    for number in m.group(2).split("_")[1:]:
                        out.setdefault(f"{m.group(1)}-{number}", []).append(f"{rel}::{node.name}")
        for citation in _scan_source(source, rel, tree):
            name = citation.function.split(".")[-1]
            if name.startswith("test"):
                test_id = f"{rel}::{citation.function.replace('.', '::')}"
                tests = out.setdefault(citation.clause, [])
                if test_id not in tests:
                    tests.append(test_id)
    return out


def _scan_source(source: str, rel: str, tree: ast.AST) -> Iterable[Citation]:
    spans: List[Tuple[int, int, str]] = []  # found once a comment needs them
    for lineno, text in _comments(source):
        if not spans and _COMMENT.search(text):
            spans = _functions_by_line(tree)
        for match in _COMMENT.finditer(text):
            for clause in _ID.findall(match.group(1)):
                yield Citation(clause, rel, lineno, _enclosing(spans, lineno), text.strip())


def read_register(path: Optional[str] = None) -> List[Dict[str, str]]:
    """Rows of the clause register: spec_notes/clauses.tsv in a checkout, else the packaged copy."""
    if path is None:
        root = repo_root()
        candidate = os.path.join(root, "spec_notes", "clauses.tsv") if root else None
        if candidate and os.path.exists(candidate):
            path = candidate
        else:
            path = os.path.join(_PACKAGE_DIR, "_core", "clauses.tsv")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        if not line.strip():
            continue
        fields = line.split("\t")
        fields += [""] * (len(header) - len(fields))
        rows.append(dict(zip(header, fields)))
    return rows


# -- Roles ----------------------------------------------------------------------------------------

#: What a citation's code does for its clause, in the order ``acpref spec`` prints them.
ROLES = ("enforced", "checked", "exercised")
#: Path prefixes (relative to the repository) of the roles that are not ``enforced``.
_CHECKED = ("acpref/oracle/", "acpref/testing/")
_EXERCISED = ("acpref/echo/", "acpref/_cli/")
#: Tools about the spec and transcripts, not protocol code: a citation there has no role.
_TOOLS = tuple(f"acpref/_tools/{name}.py" for name in ("spec_index", "spec_diff", "show_html"))
#: How the register's ``reason`` of an implemented clause says that no live side enforces it:
#: ``exercised only: ...`` (left to the application, shown by the echo agent or the CLI) or
#: ``checked only: ...`` (a rule only an observer of both peers can judge).
NOT_ENFORCED = ("exercised only:", "checked only:")


def role_of(path: str) -> Optional[str]:
    """``enforced``, ``checked`` or ``exercised`` for a citation at ``path``; None for a tool's.

    Everything in the package that is not the oracle, the scenarios, the echo agent, the CLI or
    a tool is code a live peer runs: the core, the sides, the connection and the wire layer.
    """
    path = path.replace(os.sep, "/")
    if path.startswith(_CHECKED):
        return "checked"
    if path.startswith(_EXERCISED):
        return "exercised"
    if path.startswith(_TOOLS) or not path.startswith("acpref/"):
        return None
    return "enforced"


def says_not_enforced(reason: str) -> bool:
    """The register's reason says why no live side enforces the clause."""
    return any(marker in reason for marker in NOT_ENFORCED)


# -- The register ---------------------------------------------------------------------------------

#: The columns of spec_notes/clauses.tsv: the shared register's seven, then acpref's six.
REGISTER_COLUMNS = (
    "id",
    "page",
    "section",
    "side",
    "level",
    "requirement",
    "test_hint",
    "status",
    "enforced_in",
    "checked_in",
    "exercised_in",
    "tested_by",
    "reason",
)
#: The columns ``acpref spec --update-register`` writes; the others are kept as they are.
COMPUTED_COLUMNS = ("enforced_in", "checked_in", "exercised_in", "tested_by")
#: ``open``: work under way; its reason says what is missing (the guard test lists every one).
STATUSES = ("implemented", "not applicable", "deviation", "open")


def computed_columns(root: Optional[str] = None) -> Dict[str, Dict[str, str]]:
    """For each clause cited anywhere: where it is enforced, checked, exercised, and its tests.

    ``enforced_in``, ``checked_in`` and ``exercised_in`` list ``path:function`` of each citation
    in the package, by role (lines are left out: they move with every edit; ``acpref spec ID``
    prints them); ``tested_by`` the test ids. ``root`` is a checkout to read (its ``acpref/`` and
    ``tests/``); by default the package this module was imported from, and the checkout it sits
    in, if any.
    """
    places: Dict[str, Dict[str, List[str]]] = {}
    code_dir = os.path.join(root, "acpref") if root is not None else None
    tests_dir = os.path.join(root, "tests") if root is not None else None
    for c in scan_code(code_dir):
        role = role_of(c.path)
        if role is None:
            continue  # test_every_citation_has_a_role names it
        where = f"{c.path}:{c.function}"
        found = places.setdefault(c.clause, {}).setdefault(role, [])
        if where not in found:
            found.append(where)
    tests = scan_tests(tests_dir)
    out: Dict[str, Dict[str, str]] = {}
    for clause in set(places) | set(tests):
        by_role = places.get(clause, {})
        out[clause] = {f"{role}_in": "; ".join(sorted(by_role.get(role, []))) for role in ROLES}
        out[clause]["tested_by"] = "; ".join(sorted(tests.get(clause, [])))
    return out


def build_register(
    rows: List[Dict[str, str]], root: Optional[str] = None
) -> List[Dict[str, str]]:
    """The register with its place and test columns recomputed; status and reason kept.

    A clause without a status gets ``implemented`` when it is both enforced and tested. ``root``:
    the checkout to read, as for ``computed_columns``.
    """
    computed = computed_columns(root)
    empty = {column: "" for column in COMPUTED_COLUMNS}
    out = []
    for row in rows:
        new = {column: row.get(column, "") for column in REGISTER_COLUMNS}
        new.update(computed.get(row["id"], empty))
        if not new["status"] and new["enforced_in"] and new["tested_by"]:
            new["status"] = "implemented"
        out.append(new)
    return out


def format_register(rows: List[Dict[str, str]]) -> str:
    lines = ["\t".join(REGISTER_COLUMNS)]
    for row in rows:
        lines.append(
            "\t".join(row.get(column, "").replace("\t", " ") for column in REGISTER_COLUMNS)
        )
    return "\n".join(lines) + "\n"


# -- Page notes -----------------------------------------------------------------------------------

PAGE_NOTES = {
    "overview.mdx": "overview.md",
    "initialization.mdx": "initialization.md",
    "authentication.mdx": "authentication.md",
    "session-setup.mdx": "session-setup.md",
    "session-list.mdx": "session-list.md",
    "session-delete.mdx": "session-delete.md",
    "session-modes.mdx": "session-modes.md",
    "session-config-options.mdx": "session-config-options.md",
    "prompt-turn.mdx": "prompt-turn.md",
    "content.mdx": "content.md",
    "tool-calls.mdx": "tool-calls.md",
    "agent-plan.mdx": "agent-plan.md",
    "slash-commands.mdx": "slash-commands.md",
    "cancellation.mdx": "cancellation.md",
    "file-system.mdx": "file-system.md",
    "terminals.mdx": "terminals.md",
    "elicitation.mdx": "elicitation.md",
    "extensibility.mdx": "extensibility.md",
    "transports.mdx": "transports.md",
    "session-notices.md": "session-notices.md",
    "session-compaction.md": "session-compaction.md",
    "deserialization-leniency.md": "deserialization-leniency.md",
    "system-prompt.md": "system-prompt.md",
    "plan-operations.md": "plan-operations.md",
    "subagents.md": "subagents.md",
    "schema.json": "schema.md",
}

_TABLE_START = "<!-- clause-table: generated by `acpref spec --update-register`; do not edit -->"
_TABLE_END = "<!-- end of clause-table -->"


def page_table(rows: List[Dict[str, str]], page: str) -> str:
    """The clause table of one page note, from the register."""
    lines = [
        _TABLE_START,
        "",
        "| clause | level | side | status | requirement |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        if row["page"] != page:
            continue
        status = row["status"] or "?"
        if row["status"] != "implemented" and row.get("reason"):
            status += f": {row['reason']}"
        requirement = row["requirement"].replace("|", "\\|")
        lines.append(f"| {row['id']} | {row['level']} | {row['side']} | {status} | {requirement} |")
    lines += ["", _TABLE_END]
    return "\n".join(lines)


def with_page_table(text: str, table: str) -> str:
    """The note's text with its clause table replaced (or added at the end)."""
    if _TABLE_START in text and _TABLE_END in text:
        head = text[: text.index(_TABLE_START)]
        tail = text[text.index(_TABLE_END) + len(_TABLE_END) :]
        return head + table + tail
    text = text.rstrip("\n")
    if text.endswith("## Clauses"):  # the note ends with the heading the table goes under
        text = text[: -len("## Clauses")].rstrip("\n")
    return text + "\n\n## Clauses\n\n" + table + "\n"
