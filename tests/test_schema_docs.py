"""Every field of every schema model is documented, with the schema's own words where it has them.

Spec: schema.json (each property's ``description``); spec_notes/schema.md (Field docstrings).

A field's documentation is the string literal right after it in the class body (an attribute
docstring, read by Sphinx autodoc and editors). Where the schema describes the property, the
docstring carries that description: compared after dropping what only the Markdown rendering
needs (links become their text, ``See protocol docs:`` pointers go, punctuation, emphasis and
code marks are ignored). A field the schema leaves undescribed (a flattened union, a provisional
field from an announcement, a draft-only shape) still has a docstring, written from the pages.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Any

import attrs
import pytest
from test_schema_parity import DEFS, UNSTABLE, _parts, def_properties

from acpref import schema
from acpref.codec import wire_name
from acpref.schema._base import WIRE, Unknown

pytestmark = pytest.mark.timeout(60)

#: Models with no ``$defs`` entry of their own, and the schema node that describes their fields:
#: a def, or the inline branch of a def picked by its tag value or by a key only it requires.
INLINE: dict[str, tuple[str, str | None, str | None]] = {
    "_Request": ("ClientRequest", None, None),
    "_Notification": ("ClientNotification", None, None),
    "ResultResponse": ("AgentResponse", None, "result"),
    "ErrorResponse": ("AgentResponse", None, "error"),
    "ElicitationDeclineAction": ("CreateElicitationResponse", "action", "decline"),
    "ElicitationCancelAction": ("CreateElicitationResponse", "action", "cancel"),
    "CancelledPermissionOutcome": ("RequestPermissionOutcome", "outcome", "cancelled"),
}

_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def _models() -> list[tuple[str, type]]:
    """Every attrs class the schema pages define, private bases included, and ``Unknown``."""
    out = [("Unknown", Unknown)]
    for page in schema._PAGES:
        module = importlib.import_module(f"acpref.schema.{page}")
        for name, value in vars(module).items():
            if isinstance(value, type) and attrs.has(value) and value.__module__ == module.__name__:
                out.append((name, value))
    return out


MODELS = _models()


def field_docstrings(cl: type) -> dict[str, str]:
    """The attribute docstrings of a class's own fields, read from its source."""
    (node,) = [
        n
        for n in ast.parse(inspect.getsource(inspect.getmodule(cl))).body
        if isinstance(n, ast.ClassDef) and n.name == cl.__name__
    ]
    out = {}
    for stmt, after in zip(node.body, node.body[1:]):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            out[stmt.target.id] = inspect.cleandoc(after.value.value)
    return out


def _own_fields(cl: type) -> list[attrs.Attribute]:
    own = cl.__dict__.get("__annotations__", {})
    return [a for a in attrs.fields(cl) if a.name in own]


def _node(name: str) -> dict[str, Any] | None:
    """The schema object that describes a model's fields (None: in no schema file)."""
    if name not in INLINE:
        return DEFS.get(name)
    def_name, tag, value = INLINE[name]
    if tag is None and value is None:
        return DEFS[def_name]
    branches = DEFS[def_name].get("oneOf", []) + DEFS[def_name].get("anyOf", [])

    def picked(b: dict[str, Any]) -> bool:
        if tag is None:
            return value in b.get("required", [])
        return b.get("properties", {}).get(tag, {}).get("const") == value

    (branch,) = [b for b in branches if picked(b)]
    return branch


def schema_descriptions(name: str, a: attrs.Attribute) -> list[str]:
    """The schema's descriptions of a field's property: those of the object itself, or, for a key
    only the inline branches have, each branch's. A flattened union has none (its variants'
    fields are described on their own models)."""
    core = a.metadata.get(WIRE, {})
    if core.get("flatten"):
        return []
    # A provisional field of a stable type has its shape, and its words, in the unstable schema.
    node = UNSTABLE.get(name) if core.get("provisional") else _node(name)
    if node is None:
        return []
    key = wire_name(a.name)
    own = [p for part in _parts(node) for k, p in part.get("properties", {}).items() if k == key]
    props = own or def_properties(node).get(key, [])
    return sorted({p["description"] for p in props if p.get("description")})


def normalized(text: str) -> str:
    """Text as the comparison sees it: link targets, doc pointers, marks and punctuation gone."""
    text = _LINK.sub(r"\1", text)
    kept = [p for p in re.split(r"\n\s*\n", text) if not p.strip().startswith("See protocol docs:")]
    return " ".join(re.sub(r"[^a-z0-9]+", " ", " ".join(kept).lower()).split())


FIELDS = [
    pytest.param(name, cl, a, id=f"{name}.{a.name}") for name, cl in MODELS for a in _own_fields(cl)
]


def test_every_model_of_every_page_is_seen() -> None:
    # The walk above finds the models of every page: the exported ones and the private bases.
    names = {name for name, _ in MODELS}
    assert {n for n in schema.__all__ if attrs.has(getattr(schema, n, None))} <= names
    assert {"_Request", "_Notification"} <= names
    assert len(FIELDS) > 450


@pytest.mark.parametrize(("name", "cl", "a"), FIELDS)
def test_every_field_has_a_docstring(name: str, cl: type, a: attrs.Attribute) -> None:
    doc = field_docstrings(cl).get(a.name, "")
    assert doc.strip(), f"{name}.{a.name} has no docstring"


@pytest.mark.parametrize(("name", "cl", "a"), FIELDS)
def test_docstring_carries_the_schema_description(name: str, cl: type, a: attrs.Attribute) -> None:
    doc = normalized(field_docstrings(cl).get(a.name, ""))
    for description in schema_descriptions(name, a):
        assert normalized(description) in doc, (
            f"{name}.{a.name}: the docstring does not say what the schema says: {description!r}"
        )


def test_schema_descriptions_are_found() -> None:
    # The mapping from models to schema nodes reaches nearly every field: a rename that breaks it
    # would otherwise make the comparison above vacuous.
    described = [p for p in FIELDS if schema_descriptions(p.values[0], p.values[2])]
    assert len(described) >= len(FIELDS) - 10


def test_normalized_ignores_only_rendering() -> None:
    markdown = "Whether the `terminal/*` methods\nwork.\n\nSee protocol docs: [Terminals](https://x)"
    assert normalized(markdown) == normalized("Whether the ``terminal/*`` methods work.")
    assert normalized("a [link](https://x) text") == "a link text"
    assert normalized("The value ID.") not in normalized("The boolean value.")
