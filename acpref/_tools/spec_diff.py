"""What changed between two ACP schema files: the checklist of a spec refresh.

Spec: schema.json (``$defs``, ``x-method``, ``x-side``, the ``x-deserialize-*`` annotations),
meta.json. ``compare(old, new)`` walks both files and returns ``Change`` records, each a line of
the checklist ``acpref spec-diff`` prints:

* ``$defs`` added and removed;
* union members (the ``const`` tags and values of ``oneOf`` / ``anyOf`` branches) added and
  removed, and whether a catch-all branch (an open enum, an unknown variant) appeared or went;
* per object ``$def``: properties added and removed, ``required`` changes, and for each property
  present in both its ``type``, ``format``, ``$ref`` target, ``const``, ``enum``, ``default``,
  ``minimum``/``maximum`` and ``minLength``/``maxLength`` changes;
* ``x-deserialize-*`` annotations (and any other ``x-`` key) gained or lost, field by field;
* methods: ``x-method`` / ``x-side`` of every ``$def`` that has them, added, removed or moved;
* descriptions: changed text, with the link-only rewrites (the same text once URLs are taken
  out) counted apart, so that the few that change meaning stand out;
* with ``meta``: whether meta.json's method lists agree with the new schema's ``x-method``s.

Only the two JSON documents are read: nothing here knows acpref's models. What a change means for
acpref (a new model, a rule, a register row) is the reader's work; the checklist says where to
look.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

import attrs

__all__ = ["Change", "compare", "format_markdown", "SECTIONS"]

#: The checklist's sections, in the order they are printed.
SECTIONS = (
    "defs",
    "variants",
    "fields",
    "required",
    "types",
    "annotations",
    "methods",
    "meta",
    "descriptions",
)
_TITLES = {
    "defs": "`$defs` added or removed",
    "variants": "Union members (tags, enum values, catch-all branches)",
    "fields": "Properties added or removed",
    "required": "`required` changes",
    "types": "Type, format, `$ref`, const, enum, default and bound changes",
    "annotations": "`x-` annotations (leniency markers and others), field by field",
    "methods": "Methods (`x-method`, `x-side`)",
    "meta": "meta.json against the new schema",
    "descriptions": "Descriptions whose text changed (not only their links)",
}
#: Property keywords compared between the two files (besides ``x-`` keys and descriptions).
_KEYWORDS = (
    "type",
    "format",
    "const",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "additionalProperties",
)
_URL = re.compile(r"\(?https?://[^\s)]+\)?")


@attrs.frozen
class Change:
    """One item of the checklist: its section, where (``Def`` or ``Def.field``), and what."""

    section: str
    where: str
    what: str


def compare(
    old: Dict[str, Any], new: Dict[str, Any], *, meta: Optional[Dict[str, Any]] = None
) -> List[Change]:
    """Every difference between the schema documents ``old`` and ``new`` (and meta.json)."""
    old_defs: Dict[str, Any] = old.get("$defs", {})
    new_defs: Dict[str, Any] = new.get("$defs", {})
    out: List[Change] = []
    for name in sorted(set(new_defs) - set(old_defs)):
        out.append(Change("defs", name, f"added: {_one_line(new_defs[name].get('description'))}"))
    for name in sorted(set(old_defs) - set(new_defs)):
        out.append(Change("defs", name, "removed"))
    for name in sorted(set(old_defs) & set(new_defs)):
        out += _compare_def(name, old_defs[name], new_defs[name])
    out += _compare_methods(old_defs, new_defs)
    if meta is not None:
        out += _compare_meta(meta, new_defs)
    order = {s: i for i, s in enumerate(SECTIONS)}
    return sorted(out, key=lambda c: (order[c.section], c.where))


def _compare_def(name: str, old: Dict[str, Any], new: Dict[str, Any]) -> List[Change]:
    out = _compare_node(name, old, new)
    old_members, old_open = _members(old)
    new_members, new_open = _members(new)
    for member in sorted(set(new_members) - set(old_members)):
        out.append(Change("variants", name, f"member added: {member}"))
    for member in sorted(set(old_members) - set(new_members)):
        out.append(Change("variants", name, f"member removed: {member}"))
    out += _compare_branches(name, old, new)
    if old_open != new_open:
        what = "a catch-all branch appeared (now open)" if new_open else "the catch-all went"
        out.append(Change("variants", name, what))
    old_props, new_props = _properties(old), _properties(new)
    for key in sorted(set(new_props) - set(old_props)):
        marks = _marks(new_props[key])
        out.append(Change("fields", f"{name}.{key}", "added" + (f" ({marks})" if marks else "")))
    for key in sorted(set(old_props) - set(new_props)):
        out.append(Change("fields", f"{name}.{key}", "removed"))
    old_req, new_req = _required(old), _required(new)
    for key in sorted(new_req - old_req):
        out.append(Change("required", f"{name}.{key}", "now required"))
    for key in sorted(old_req - new_req):
        out.append(Change("required", f"{name}.{key}", "no longer required"))
    for key in sorted(set(old_props) & set(new_props)):
        out += _compare_node(f"{name}.{key}", old_props[key], new_props[key])
        out += _compare_branches(f"{name}.{key}", old_props[key], new_props[key])
    return out


def _compare_node(where: str, old: Dict[str, Any], new: Dict[str, Any]) -> List[Change]:
    """Keyword, ``$ref``, ``x-`` and description changes of one schema node (not its children)."""
    out: List[Change] = []
    for keyword in _KEYWORDS:
        a, b = old.get(keyword, _MISSING), new.get(keyword, _MISSING)
        if a != b and not (isinstance(a, dict) and isinstance(b, dict)):
            out.append(Change("types", where, f"{keyword}: {_show(a)} -> {_show(b)}"))
    if _refs(old) != _refs(new):
        out.append(Change("types", where, f"$ref: {_refs(old) or '-'} -> {_refs(new) or '-'}"))
    for key in sorted({k for k in (*old, *new) if k.startswith("x-") and k not in _METHOD_KEYS}):
        a, b = old.get(key, _MISSING), new.get(key, _MISSING)
        if a != b:
            out.append(Change("annotations", where, f"{key}: {_show(a)} -> {_show(b)}"))
    a, b = old.get("description"), new.get("description")
    if a != b:
        if _URL.sub("", a or "") == _URL.sub("", b or ""):
            out.append(Change("descriptions", where, "links only"))
        else:
            out.append(
                Change("descriptions", where, f"{_one_line(a)!r} -> {_one_line(b)!r}")
            )
    return out


_METHOD_KEYS = ("x-method", "x-side")


def _compare_branches(where: str, old: Dict[str, Any], new: Dict[str, Any]) -> List[Change]:
    """Description and annotation changes of the branches a union's two versions share, named
    by their const, tag or title (``ErrorCode[-32002]``, ``SessionUpdate[notice]``), else by
    position (``AgentRequest.params[#0][RequestPermissionRequest]``), and so on down: a
    property's own union and a union nested in a branch are walked too."""
    old_b, new_b = _branches_by_key(old), _branches_by_key(new)
    out: List[Change] = []
    for key in sorted(set(old_b) & set(new_b), key=str):
        at = f"{where}[{key}]"
        out += _compare_node(at, old_b[key], new_b[key])
        out += _compare_branches(at, old_b[key], new_b[key])
    return out


def _branches_by_key(node: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    out: Dict[str, Dict[str, Any]] = {}
    for index, branch in enumerate(node.get("oneOf", []) + node.get("anyOf", [])):
        if not isinstance(branch, dict):
            continue
        if "const" in branch:
            out[str(branch["const"])] = branch
            continue
        tags = [
            p["const"]
            for p in branch.get("properties", {}).values()
            if isinstance(p, dict) and "const" in p
        ]
        key = str(tags[0]) if tags else branch.get("title")
        # A branch with no name (a union nested in a union, ``null``) is known by its place.
        out[str(key) if key is not None else f"#{index}"] = branch
    return out


def _compare_methods(old_defs: Dict[str, Any], new_defs: Dict[str, Any]) -> List[Change]:
    old_m, new_m = _methods(old_defs), _methods(new_defs)
    out: List[Change] = []
    for method in sorted(set(new_m) - set(old_m)):
        out.append(Change("methods", method, f"added ({', '.join(sorted(new_m[method]))})"))
    for method in sorted(set(old_m) - set(new_m)):
        out.append(Change("methods", method, "removed"))
    for method in sorted(set(old_m) & set(new_m)):
        if old_m[method] != new_m[method]:
            before, after = ", ".join(sorted(old_m[method])), ", ".join(sorted(new_m[method]))
            out.append(Change("methods", method, f"$defs/sides: {before} -> {after}"))
    return out


def _methods(defs: Dict[str, Any]) -> Dict[str, set]:
    """``x-method`` -> the ``Def (side)`` entries that carry it."""
    out: Dict[str, set] = {}
    for name, node in defs.items():
        method = node.get("x-method")
        if isinstance(method, str):
            out.setdefault(method, set()).add(f"{name} ({node.get('x-side', '?')})")
    return out


def _compare_meta(meta: Dict[str, Any], defs: Dict[str, Any]) -> List[Change]:
    """meta.json's methods by side against the schema's ``x-method`` / ``x-side``."""
    listed = {
        (side, method)
        for group, side in (("agentMethods", "agent"), ("clientMethods", "client"))
        for method in (meta.get(group) or {}).values()
    }
    listed |= {("protocol", method) for method in (meta.get("protocolMethods") or {}).values()}
    schema = {
        (node.get("x-side"), node["x-method"])
        for node in defs.values()
        if isinstance(node.get("x-method"), str)
    }
    out: List[Change] = []
    for side, method in sorted((m for m in schema if m[1] not in {x[1] for x in listed}), key=str):
        out.append(Change("meta", method, f"in the schema ({side}) but not in meta.json"))
    for side, method in sorted((m for m in listed if m[1] not in {x[1] for x in schema}), key=str):
        out.append(Change("meta", method, f"in meta.json ({side}) but not in the schema"))
    return out


# -- Reading nodes --------------------------------------------------------------------------------

_MISSING = object()


def _members(node: Dict[str, Any]) -> Tuple[List[str], bool]:
    """The consts of a union's branches (``tag=value`` for tagged objects), and whether one
    branch takes any value (a catch-all: a string without ``const``, an object without a tag)."""
    members: List[str] = []
    catch_all = False
    for branch in node.get("oneOf", []) + node.get("anyOf", []):
        if "const" in branch:
            members.append(repr(branch["const"]))
            continue
        tags = [
            f"{k}={p['const']!r}"
            for k, p in branch.get("properties", {}).items()
            if isinstance(p, dict) and "const" in p
        ]
        if tags:
            members += tags
        elif branch.get("type") in ("string", "integer") or branch.get("title") == "other":
            catch_all = True
        elif "$ref" in branch or "allOf" in branch:
            members.append(f"-> {_refs(branch) or '?'}")
    return members, catch_all


def _properties(node: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Properties of an object node, those of its inline branches included."""
    out: Dict[str, Dict[str, Any]] = dict(node.get("properties", {}))
    for branch in node.get("oneOf", []) + node.get("anyOf", []) + node.get("allOf", []):
        if "properties" in branch:
            for key, prop in branch["properties"].items():
                out.setdefault(key, prop)
    return out


def _required(node: Dict[str, Any]) -> set:
    return set(node.get("required", []))


def _refs(node: Any) -> str:
    """The ``$def`` names a node points at (directly, or through allOf/anyOf/oneOf/items)."""
    found: List[str] = []

    def walk(n: Any, depth: int) -> None:
        if not isinstance(n, dict) or depth > 3:
            return
        if "$ref" in n:
            found.append(n["$ref"].rsplit("/", 1)[-1])
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in n.get(key, []):
                walk(sub, depth + 1)
        walk(n.get("items"), depth + 1)

    walk(node, 0)
    return ", ".join(sorted(set(found)))


def _marks(node: Dict[str, Any]) -> str:
    return ", ".join(k[len("x-deserialize-") :] for k in sorted(node) if k.startswith("x-deser"))


def _show(value: Any) -> str:
    return "(none)" if value is _MISSING else repr(value)


def _one_line(text: Optional[str], limit: int = 110) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- Printing -------------------------------------------------------------------------------------


def format_markdown(
    changes: Iterable[Change], *, old_name: str, new_name: str, counts: Dict[str, int]
) -> str:
    """The checklist: one ``- [ ]`` line per change, by section; link-only rewrites counted."""
    changes = list(changes)
    lines = [
        f"# Spec refresh checklist: {old_name} -> {new_name}",
        "",
        f"`$defs`: {counts['old_defs']} -> {counts['new_defs']}.",
    ]
    link_only = [c for c in changes if c.section == "descriptions" and c.what == "links only"]
    for section in SECTIONS:
        items = [c for c in changes if c.section == section and c not in link_only]
        if not items:
            continue
        lines += ["", f"## {_TITLES[section]} ({len(items)})", ""]
        lines += [f"- [ ] `{c.where}`: {c.what}" for c in items]
    if link_only:
        lines += ["", f"{len(link_only)} more descriptions changed their links only."]
    return "\n".join(lines) + "\n"
