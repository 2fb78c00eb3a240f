"""The package's shape, measured: sizes, import circles and layers (issue 15).

Every module of ``acpref/`` is read with ``ast`` (nothing is imported), and held to:

(a) a module has at most ``MAX_MODULE_LINES`` lines (every line of the file counts);
(b) a function has at most ``MAX_FUNCTION_LINES`` lines, from its ``def`` line to its last line
    (``end_lineno - lineno + 1``): decorators are excluded, the docstring and nested functions are
    included (a nested function is also measured on its own);
(c) no import circle between modules. Only module-level imports count: those at the top, at the
    bottom (``from . import x`` after the code), inside ``try``/``if``/``with``/class bodies run at
    import. Imports inside functions and under ``if TYPE_CHECKING:`` do not make a circle for (c)
    (Python resolves them later). Importing ``a.b.c`` is an edge to ``a.b.c`` only, not to the
    packages ``a`` and ``a.b`` that Python initialises first: a package ``__init__`` that re-exports
    its own modules is no circle;
(c') no circle hidden behind a deferred import: an import inside a function or under
    ``TYPE_CHECKING`` of a module that, through module-level imports, imports this module back. It
    is the same circle in meaning, only postponed: the two modules want to be one, or a third;
(d) layers: each module belongs to one layer of ``LAYERS`` and imports (at module level, (c)'s
    sense) only modules of its own layer or below. The layers come from the design's "layered
    house" (docs/internals.md, "How it is built"), adjusted to what is built;
(e) L0-L2 do no I/O: they import no threading, socket, subprocess, select, signal, os or io, and
    never name ``sys.stdin``/``sys.stdout``/``sys.stderr`` or call ``print``;
(f) the oracle (L4) uses L0-L2 only, and no threads but the recorder's lock;
(g) the tools (``acpref/_tools/``: the terminal UI, the show page, the spec index, spec-diff)
    are imported by the CLI, the testing package and the echo agent only, never by the library,
    not even in a function; and ``import acpref.client`` loads none of them (checked in a fresh
    interpreter).

While modules are being split, ``OVER_BUDGET`` lists what is still over, each entry with the
engineer who owns it. A test fails for anything over budget that is not listed, and for a listed
entry that is no longer over budget: the list only shrinks. Remove your entry when you land the
split that brings it under.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

import attrs

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "acpref"

MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80

# The layer map: one entry per module, or per package (an entry ending in "/" covers every
# module below it). A module imports only its own layer or below. A new module that no entry
# covers fails test_every_module_has_a_layer: add it here.
LAYERS: Dict[str, int] = {
    # L0: schema types, errors (and the version)
    "acpref/__init__.py": 0,
    "acpref/schema/": 0,
    "acpref/errors.py": 0,
    # L1: the codec (the one cattrs converter), methods (wire name -> types, side, gate), what a
    # line costs once decoded, what a form answer must be
    "acpref/codec.py": 1,
    "acpref/_codec/": 1,
    "acpref/methods.py": 1,
    "acpref/_bounds.py": 1,
    "acpref/_forms.py": 1,
    # L2: the protocol core, sans-I/O: capability gates, phases, ordering, id bookkeeping
    "acpref/_core/": 2,
    # L3: the threaded shell (acpref/_shell/: streams, framing, processes and their groups,
    # threads, the connection, the rules behind one lock)
    "acpref/_shell/": 3,
    "acpref/connection.py": 3,  # the public face of _shell/connection.py
    # L4: agent side, client side, session registry, oracle (L0-L2 only), MCP client
    "acpref/agent/": 4,
    "acpref/client/": 4,
    "acpref/oracle/": 4,
    "acpref/mcp/": 4,
    # L5: echo agent, CLI, testing (pytest plugin, check_agent/check_client), and the tools only
    # they use: the terminal UI, the show page, the spec index and spec-diff (see TOOLS)
    "acpref/echo/": 5,
    "acpref/_cli/": 5,
    "acpref/__main__.py": 5,
    "acpref/testing/": 5,
    "acpref/_tools/": 5,
}

LAYER_NAMES = {
    0: "L0 schema types, errors",
    1: "L1 codec, methods",
    2: "L2 protocol core",
    3: "L3 the threaded shell: transport, connection, threads, process groups",
    4: "L4 agent side, client side, oracle, mcp",
    5: "L5 echo agent, CLI, testing, tools",
}

# (g): the tools and who may use them. The library (everything else) never imports them, not
# even inside a function: ``import acpref.client`` must not load a renderer or a page writer.
TOOLS = "acpref/_tools/"
TOOL_USERS = ("acpref/_cli/", "acpref/testing/", "acpref/echo/", "acpref/__main__.py", TOOLS)

# Packages held below their layer: the oracle judges with the core's rules only.
CAPS: Dict[str, int] = {"acpref/oracle/": 2}

# (e): what L0-L2 must not import.
NO_IO_MODULES = {
    "threading", "_thread", "socket", "subprocess", "select", "selectors", "signal", "os", "io",
    "asyncio", "multiprocessing", "concurrent", "queue", "fcntl", "pty",
}
# (f): what the oracle must not import; threading only for the recorder's lock.
ORACLE_BANNED = {"subprocess", "socket", "asyncio", "select", "selectors", "signal", "threading"}
ORACLE_THREADING_ALLOWED = {"acpref/oracle/_transcript.py"}

# Over budget while its owner splits it (issue 15). Keys:
#   "path"                       the module is over MAX_MODULE_LINES
#   "path::Qual.name"            the function is over MAX_FUNCTION_LINES
#   "circle: path, path, ..."    these modules import each other in a circle (c)
#   "deferred: path -> path"     a deferred import closes a circle (c')
#   "no-io: path imports name"   an L0-L2 module imports an I/O module (e)
# Remove an entry when you land what brings it under; a stale entry fails.
OVER_BUDGET: Dict[str, str] = {}


# -- reading the package ----------------------------------------------------------------------


@attrs.frozen
class Module:
    path: str  # "acpref/x/y.py", relative to the repository
    name: str  # "acpref.x.y" ("acpref.x" for acpref/x/__init__.py)
    is_package: bool
    tree: ast.Module
    lines: int


@attrs.frozen
class Import:
    target: str  # the dotted module imported (an acpref module, or a top-level stdlib name)
    line: int
    deferred: bool  # inside a function, or under TYPE_CHECKING


def read_modules(root: Path) -> Dict[str, Module]:
    modules: Dict[str, Module] = {}
    for file in sorted((root / "acpref").rglob("*.py")):
        rel = file.relative_to(root)
        parts = list(rel.with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        text = file.read_text(encoding="utf-8")
        name = ".".join(parts)
        modules[name] = Module(
            rel.as_posix(), name, is_package, ast.parse(text, str(rel)), len(text.splitlines())
        )
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(
    body: List[ast.stmt], deferred: bool
) -> Iterator[Tuple[ast.stmt, bool]]:
    """Each import statement of ``body``, and whether it runs later than the module's import."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, deferred
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield sub, True
        elif isinstance(node, ast.If):
            yield from _import_nodes(node.body, deferred or _is_type_checking(node.test))
            yield from _import_nodes(node.orelse, deferred)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(node, field, None)
                if isinstance(block, list):
                    stmts = [s for s in block if isinstance(s, ast.stmt)]
                    for handler in block:
                        if isinstance(handler, ast.ExceptHandler):
                            stmts.extend(handler.body)
                    yield from _import_nodes(stmts, deferred)


def imports_of(module: Module, modules: Dict[str, Module]) -> List[Import]:
    found: List[Import] = []
    for node, deferred in _import_nodes(module.tree.body, False):
        for target in _targets(module, node, modules):
            found.append(Import(target, node.lineno, deferred))
    return found


def _targets(module: Module, node: ast.stmt, modules: Dict[str, Module]) -> List[str]:
    """The modules an import statement names: acpref modules in full, others by their top name."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        assert isinstance(node, ast.ImportFrom)
        if node.level:
            base = module.name.split(".")
            if not module.is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        # ``from pkg import name``: the module pkg.name if there is one, else pkg itself.
        names = [
            f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
            for alias in node.names
        ]
    targets = []
    for name in names:
        if name.split(".")[0] == "acpref":
            while name not in modules and "." in name:
                name = name.rsplit(".", 1)[0]
        else:
            name = name.split(".")[0]
        if name not in targets:
            targets.append(name)
    return targets


def edges(modules: Dict[str, Module], deferred: bool) -> Dict[str, Set[str]]:
    """Who imports whom among acpref's modules: at module level, or (``deferred``) later."""
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for name, module in modules.items():
        for imp in imports_of(module, modules):
            if imp.target in modules and imp.target != name and imp.deferred == deferred:
                graph[name].add(imp.target)
    return graph


def layer_of(path: str) -> Optional[int]:
    best: Optional[str] = None
    for key in LAYERS:
        if path == key or (key.endswith("/") and path.startswith(key)):
            if best is None or len(key) > len(best):
                best = key
    return None if best is None else LAYERS[best]


def cap_of(path: str) -> Optional[int]:
    for key, cap in CAPS.items():
        if path.startswith(key):
            return cap
    return None


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def reachable(graph: Dict[str, Set[str]], start: str) -> Set[str]:
    seen: Set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def functions(tree: ast.Module) -> Iterator[Tuple[str, Function]]:
    """Each function with its qualified name (``Class.method``, ``outer.inner``)."""

    def visit(node: ast.AST, prefix: str) -> Iterator[Tuple[str, Function]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                yield name, child
                yield from visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + child.name + ".")
            else:
                yield from visit(child, prefix)

    yield from visit(tree, "")


# -- the findings, one kind per check -----------------------------------------------------------


def long_modules(modules: Dict[str, Module]) -> Dict[str, str]:
    return {
        m.path: f"{m.path}: {m.lines} lines (budget {MAX_MODULE_LINES})"
        for m in modules.values()
        if m.lines > MAX_MODULE_LINES
    }


def long_functions(modules: Dict[str, Module]) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for m in modules.values():
        for qualname, node in functions(m.tree):
            # from the def line (decorators excluded) to the last line of the body
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                key = f"{m.path}::{qualname}"
                budget = MAX_FUNCTION_LINES
                found[key] = f"{key} (line {node.lineno}): {length} lines (budget {budget})"
    return found


def circle_findings(modules: Dict[str, Module]) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for component in circles(edges(modules, deferred=False)):
        key = "circle: " + ", ".join(sorted(modules[n].path for n in component))
        found[key] = key + " import each other at module level"
    return found


def deferred_circle_findings(modules: Dict[str, Module]) -> Dict[str, str]:
    graph = edges(modules, deferred=False)
    found: Dict[str, str] = {}
    for name, module in modules.items():
        for imp in imports_of(module, modules):
            if not imp.deferred or imp.target not in modules or imp.target == name:
                continue
            if name in reachable(graph, imp.target):
                key = f"deferred: {module.path} -> {modules[imp.target].path}"
                found[key] = (
                    f"{key} (line {imp.line}): a deferred import of a module that imports "
                    f"{module.path} back at module level"
                )
    return found


def no_io_findings(modules: Dict[str, Module]) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for m in modules.values():
        layer = layer_of(m.path)
        if layer is None or layer > 2:
            continue
        for imp in imports_of(m, modules):
            top = imp.target.split(".")[0]
            if top in NO_IO_MODULES:
                key = f"no-io: {m.path} imports {top}"
                found[key] = f"{key} (line {imp.line}), in {LAYER_NAMES[layer]}"
        for node in ast.walk(m.tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in {"stdin", "stdout", "stderr"}
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                key = f"no-io: {m.path} names sys.{node.attr}"
                found[key] = f"{key} (line {node.lineno}), in {LAYER_NAMES[layer]}"
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                key = f"no-io: {m.path} calls print"
                found[key] = f"{key} (line {node.lineno}), in {LAYER_NAMES[layer]}"
    return found


def layer_findings(modules: Dict[str, Module]) -> Dict[str, str]:
    """(d) and (f): imports that reach above the module's layer (or above its package's cap)."""
    found: Dict[str, str] = {}
    for m in modules.values():
        layer = layer_of(m.path)
        if layer is None:
            continue
        cap = cap_of(m.path)
        for imp in imports_of(m, modules):
            if imp.deferred or imp.target not in modules:
                continue
            target = modules[imp.target]
            target_layer = layer_of(target.path)
            if target_layer is None:
                continue  # reported by test_every_module_has_a_layer
            limit = layer
            if cap is not None and cap_of(target.path) != cap:
                limit = cap  # a capped package imports its own modules, and below the cap
            if target_layer > limit:
                key = f"layer: {m.path} imports {target.path}"
                found[key] = (
                    f"{key} (line {imp.line}): {LAYER_NAMES[target_layer]} from "
                    f"{LAYER_NAMES[layer]}" + ("" if cap is None else f", held to L{cap}")
                )
    return found


def oracle_stdlib_findings(modules: Dict[str, Module]) -> Dict[str, str]:
    found: Dict[str, str] = {}
    for m in modules.values():
        if not m.path.startswith("acpref/oracle/"):
            continue
        for imp in imports_of(m, modules):
            top = imp.target.split(".")[0]
            if top in ORACLE_BANNED and not (
                top == "threading" and m.path in ORACLE_THREADING_ALLOWED
            ):
                key = f"oracle: {m.path} imports {top}"
                found[key] = f"{key} (line {imp.line})"
    return found


def tool_findings(modules: Dict[str, Module]) -> Dict[str, str]:
    """(g): a module of the library that imports a tool, at module level or later."""
    found: Dict[str, str] = {}
    for m in modules.values():
        if m.path.startswith(TOOL_USERS):
            continue
        for imp in imports_of(m, modules):
            if imp.target in modules and modules[imp.target].path.startswith(TOOLS):
                key = f"tool: {m.path} imports {modules[imp.target].path}"
                found[key] = f"{key} (line {imp.line}): the library never imports a tool"
    return found


def _verdict(found: Dict[str, str], prefix: str, what: str) -> None:
    """Fail for a finding not on OVER_BUDGET, and for an entry of this kind no longer found."""
    new = [found[key] for key in sorted(found) if key not in OVER_BUDGET]
    stale = [
        f"{key!r} ({owner})"
        for key, owner in sorted(OVER_BUDGET.items())
        if _kind(key) == prefix and key not in found
    ]
    problems = []
    if new:
        problems.append(f"{what}:\n  " + "\n  ".join(new))
    if stale:
        problems.append(
            "no longer over budget: remove from OVER_BUDGET in tests/test_structure.py:\n  "
            + "\n  ".join(stale)
        )
    assert not problems, "\n".join(problems)


def _kind(key: str) -> str:
    for prefix in ("circle:", "deferred:", "no-io:"):
        if key.startswith(prefix):
            return prefix
    return "function" if "::" in key else "module"


MODULES = read_modules(ROOT)


# -- the tests ----------------------------------------------------------------------------------


def test_every_module_has_a_layer() -> None:
    missing = [m.path for m in MODULES.values() if layer_of(m.path) is None]
    assert not missing, (
        "modules in no layer: add each to LAYERS in tests/test_structure.py (and to the layer "
        "picture of docs/internals.md if it starts a new part):\n  " + "\n  ".join(missing)
    )
    unused = [
        key
        for key in LAYERS
        if not any(m.path == key or m.path.startswith(key) for m in MODULES.values())
    ]
    assert not unused, f"LAYERS entries that cover no module (remove them): {unused}"


def test_no_module_over_700_lines() -> None:
    _verdict(long_modules(MODULES), "module", f"modules over {MAX_MODULE_LINES} lines")


def test_no_function_over_80_lines() -> None:
    _verdict(long_functions(MODULES), "function", f"functions over {MAX_FUNCTION_LINES} lines")


def test_no_import_circles() -> None:
    _verdict(circle_findings(MODULES), "circle:", "import circles")


def test_no_circle_hidden_behind_a_deferred_import() -> None:
    _verdict(deferred_circle_findings(MODULES), "deferred:", "circles closed by a deferred import")


def test_each_module_imports_its_own_layer_or_below() -> None:
    found = layer_findings(MODULES)
    assert not found, "imports above the module's layer:\n  " + "\n  ".join(found.values())


def test_the_sans_io_layers_do_no_io() -> None:
    # L0-L2 (schema, errors, codec, methods, the protocol core): no threads, no sockets, no
    # subprocesses, no os-level I/O, never stdout. Threading and I/O start at L3.
    _verdict(no_io_findings(MODULES), "no-io:", "I/O in L0-L2")


def test_oracle_stays_in_layers_L0_to_L2() -> None:
    # The oracle judges recorded traffic with the rules the live sides obey: schema, codec,
    # methods, errors and the core only; no threads, no subprocesses, no connection or
    # transport (a lock in the recorder is allowed). Its imports above L2 are found by the
    # layer check (CAPS); its stdlib here.
    layered = {k: v for k, v in layer_findings(MODULES).items() if "acpref/oracle/" in k}
    assert not layered, "\n".join(layered.values())
    found = oracle_stdlib_findings(MODULES)
    assert not found, "\n".join(found.values())


def test_the_library_never_imports_the_tools() -> None:
    found = tool_findings(MODULES)
    assert not found, "\n".join(found.values())


def test_importing_the_client_library_loads_no_tool() -> None:
    # A fresh interpreter: what ``import acpref.client`` really loads, deferred imports and
    # package __init__ files included. The client library is the client side and the reference
    # client; the terminal UI and the report writers are the CLI's.
    code = (
        "import acpref.client, sys; "
        "print(sorted(m for m in sys.modules if m.startswith('acpref')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    loaded = ast.literal_eval(out.stdout)
    assert "acpref.client.connection" in loaded and "acpref.client.reference" in loaded
    tools = [m for m in loaded if m.startswith(("acpref._tools", "acpref._cli", "acpref.testing"))]
    assert not tools, f"import acpref.client loaded {tools}"


def test_over_budget_entries_name_their_owner() -> None:
    owners = {"H1 core", "H2 live", "H3 docs", "H4 structure", "H5 spec", "H6 reliab"}
    assert set(OVER_BUDGET.values()) <= owners, set(OVER_BUDGET.values()) - owners


# -- the checks find what they look for (on a small package written for the purpose) ----------


def test_the_checks_find_each_kind_of_defect(tmp_path: Path) -> None:
    pkg = tmp_path / "acpref"
    (pkg / "_core").mkdir(parents=True)
    (pkg / "oracle").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_core" / "__init__.py").write_text("")
    (pkg / "oracle" / "__init__.py").write_text("")
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES))
    (pkg / "_core" / "a.py").write_text(
        "import threading\nimport sys\nfrom . import b\n\n"
        f"@staticmethod\ndef long():\n{body}\n\nsys.stdout.write('x')\n"
    )
    (pkg / "_core" / "b.py").write_text("x = 1\nfrom .a import long\n")
    # d imports c and e at module level; c (under TYPE_CHECKING) and e (in a function) import d
    (pkg / "_core" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import y\n"
    )
    (pkg / "_core" / "d.py").write_text("from . import c, e\ny = 1\n" + "\n" * MAX_MODULE_LINES)
    (pkg / "_core" / "e.py").write_text("def f():\n    from . import d\n")
    (pkg / "oracle" / "judge.py").write_text("import socket\nfrom ..connection import x\n")
    (pkg / "connection.py").write_text("x = 1\n")
    (pkg / "_tools").mkdir()
    (pkg / "_tools" / "__init__.py").write_text("")
    (pkg / "_tools" / "terminal.py").write_text("x = 1\n")
    (pkg / "client.py").write_text("def f():\n    from ._tools import terminal\n")
    modules = read_modules(tmp_path)

    assert list(long_modules(modules)) == ["acpref/_core/d.py"]
    # the def line plus MAX_FUNCTION_LINES body lines; the decorator does not count
    assert list(long_functions(modules)) == ["acpref/_core/a.py::long"]
    assert list(circle_findings(modules)) == ["circle: acpref/_core/a.py, acpref/_core/b.py"]
    assert sorted(deferred_circle_findings(modules)) == [
        "deferred: acpref/_core/c.py -> acpref/_core/d.py",
        "deferred: acpref/_core/e.py -> acpref/_core/d.py",
    ]
    assert sorted(no_io_findings(modules)) == [
        "no-io: acpref/_core/a.py imports threading",
        "no-io: acpref/_core/a.py names sys.stdout",
    ]
    assert list(layer_findings(modules)) == [
        "layer: acpref/oracle/judge.py imports acpref/connection.py"
    ]
    assert list(tool_findings(modules)) == [
        "tool: acpref/client.py imports acpref/_tools/terminal.py"
    ]
    assert list(oracle_stdlib_findings(modules)) == [
        "oracle: acpref/oracle/judge.py imports socket"
    ]
