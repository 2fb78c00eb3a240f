"""schema.json against ``acpref.schema``: every ``$defs`` entry has a model of the same wire shape.

Spec: schema.json; clauses OVERVIEW-10 (camelCase keys, snake_case tags), SCHEMA-05 (AuthMethod),
SCHEMA-06 (McpServer), SCHEMA-07 (select options), SCHEMA-08 (set_config_option value),
SCHEMA-10 (unknown variants kept), SCHEMA-11 (leniency markers), SCHEMA-13 (integer formats).

Each check is parametrized by def name, so a failure names the def. What is compared:

* object defs: wire keys (flattened fields contribute their variants' keys and the union's tag),
  required keys, each field's type (nullability included), integer format and leniency markers;
  inline ``oneOf``/``anyOf`` branches of an object def count as part of it;
* enum defs: member values equal the ``const`` values;
* union defs: tag key and tag values, the untagged variant, unknown-variant keeping, keyed
  variants (text vs blob, result vs error), and plain unions of types (flat vs grouped select
  options, RequestId, elicitation content values).
"""

from __future__ import annotations

import enum
import importlib
import types
import typing
from collections.abc import Iterable
from typing import Any, Union

import attrs
import pytest
from conftest import load_schema_defs

from acpref import schema
from acpref.codec import wire_name
from acpref.schema._base import UNIONS, WIRE, Unknown, Unset

pytestmark = pytest.mark.timeout(60)

DEFS: dict[str, Any] = load_schema_defs()
STABLE = frozenset(DEFS)

#: The unstable schema of the same date: the source of the provisional models' shapes.
UNSTABLE: dict[str, Any] = load_schema_defs("schema.unstable.json")
#: spec-gap provisional-features: the models of features stabilized after the stable schema
#: (``acpref.schema.PROVISIONAL_PAGES``) are checked against their unstable ``$defs``, marked
#: ``-provisional`` in the test ids; the stable defs are checked without their provisional fields
#: and variants, which are compared with the unstable schema on their own (end of this module).
PROVISIONAL_MODELS = frozenset(
    name
    for page in schema.PROVISIONAL_PAGES
    for name in importlib.import_module(f"acpref.schema.{page}").__all__
)
PROVISIONAL = frozenset(n for n in PROVISIONAL_MODELS if n in UNSTABLE and n not in STABLE)
DEFS.update({n: UNSTABLE[n] for n in PROVISIONAL})

#: Names ``acpref.schema`` exports that are not ``$defs`` entries, and why they exist.
MODEL_ONLY = {
    "UNIONS": "the union registry read by the codec",
    "UNSET": "the absent-field sentinel",
    "Unset": "the type of UNSET",
    "JsonObject": "a free-form JSON object",
    "JsonValue": "any JSON value",
    "Meta": "the type of every _meta field",
    "Unknown": "an unknown union variant kept raw (SCHEMA-10)",
    "is_set": "helper: present on the wire",
    "PROVISIONAL_PAGES": "the pages of provisional features (shapes of the unstable schema)",
    "SessionReference": "the session tool-call content: a draft page's shape, in no schema file",
    "ElicitationScope": "the inline anyOf sessionId/requestId of the elicitation modes",
    "ElicitationMode": "the inline anyOf form/url/other of CreateElicitationRequest",
    "ElicitationAction": "the inline anyOf accept/decline/cancel/other of the elicitation result",
    "SessionConfigKind": "the inline oneOf select/boolean of SessionConfigOption",
    "ElicitationDeclineAction": "the inline decline branch of CreateElicitationResponse",
    "ElicitationCancelAction": "the inline cancel branch of CreateElicitationResponse",
    "CancelledPermissionOutcome": "the inline cancelled branch of RequestPermissionOutcome",
    "UserMessageChunk": "ContentChunk carrying the user_message_chunk tag",
    "AgentMessageChunk": "ContentChunk carrying the agent_message_chunk tag",
    "AgentThoughtChunk": "ContentChunk carrying the agent_thought_chunk tag",
    "ResultResponse": "the inline result branch of AgentResponse/ClientResponse",
    "ErrorResponse": "the inline error branch of AgentResponse/ClientResponse",
}

#: Closed unions of the schema whose unknown variants acpref keeps anyway, and why.
FORWARD_COMPATIBLE = {
    # spec-gap forward-compatible: a newer v1 peer's update kinds (notice was one, before
    # the 2026-11-02 schema) are kept raw and warned about, never a violation of the message.
    "SessionUpdate": "new update kinds are how v1 grows (SCHEMA-24 added three)",
}

#: Wire keys a model handles without a field of its own.
IMPLICIT_KEYS = {
    # spec SCHEMA-08: `type: "boolean"` goes with a boolean value; the codec derives it from the
    # value's Python type (acpref/codec.py, _set_config_option_structure).
    "SetSessionConfigOptionRequest": {"type"},
}

#: Tag values a model accepts beyond the schema's consts.
EXTRA_TAGS = {
    # spec SCHEMA-05: an agent auth method has no type, or type "agent" (the def's description).
    "AuthMethod": {"agent"},
}


# -- Reading the schema ---------------------------------------------------------------------------


def _ref_name(node: dict[str, Any]) -> str | None:
    """The def a node stands for: ``{"$ref": ...}`` or ``{"allOf": [{"$ref": ...}]}``."""
    if "$ref" in node:
        return node["$ref"].rsplit("/", 1)[-1]
    all_of = node.get("allOf", [])
    if len(all_of) == 1 and "$ref" in all_of[0] and "properties" not in node:
        return all_of[0]["$ref"].rsplit("/", 1)[-1]
    return None


def _branches(node: dict[str, Any]) -> list[dict[str, Any]]:
    return node.get("oneOf", []) + node.get("anyOf", [])


def _parts(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The object schemas a node is made of: itself and its ``allOf`` references."""
    parts = [node]
    for sub in node.get("allOf", []):
        parts += _parts(DEFS[_ref_name(sub)] if _ref_name(sub) else sub)
    return parts


def def_properties(node: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every wire key of an object node, with the property schemas that define it.

    Keys of inline ``oneOf``/``anyOf`` branches count, as they sit in the same JSON object.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for part in _parts(node):
        for key, prop in part.get("properties", {}).items():
            out.setdefault(key, []).append(prop)
        for branch in _branches(part):
            for key, props in def_properties(branch).items():
                out.setdefault(key, []).extend(props)
    return out


def def_required(node: dict[str, Any]) -> set:
    """Keys every valid instance has: ``required`` plus what all inline branches require."""
    out: set = set()
    for part in _parts(node):
        out |= set(part.get("required", []))
        branches = _branches(part)
        if branches:
            out |= set.intersection(*(def_required(b) for b in branches))
    return out


def _is_enum_def(node: dict[str, Any]) -> bool:
    branches = _branches(node)
    return (
        bool(branches)
        and all(
            b.get("type") in ("string", "integer")
            and set(b) <= {"type", "const", "format", "description", "title"}
            for b in branches
        )
        and any("const" in b for b in branches)
    )


def _enum_base(cl: type) -> type:
    """The primitive an enum class is made of: ``str`` or ``int``."""
    return next(b for b in cl.__mro__ if b in (str, int))


def _is_open_enum(name: str) -> bool:
    """An enum def with a catch-all branch (any string / any integer besides the consts)."""
    return _is_enum_def(DEFS[name]) and any("const" not in b for b in _branches(DEFS[name]))


def _tag_of(node: dict[str, Any]) -> str | None:
    """The discriminator key of a union def, if its branches are tagged."""
    if "discriminator" in node:
        return node["discriminator"]["propertyName"]
    for b in _branches(node):
        for key, prop in b.get("properties", {}).items():
            if "const" in prop:
                return key
    return None


def kind_of(name: str) -> str:
    node = DEFS[name]
    if node.get("type") == "object" or "properties" in node:
        return "object"
    if _is_enum_def(node):
        return "enum"
    if _branches(node):
        return "union"
    return "alias"


def union_of(members: Iterable[Any]) -> Any:
    """``Union[...]`` of types known only at run time (one member: that member)."""
    return Union[tuple(members)]  # noqa: UP007 - built from a list, `|` does not apply


_PRIMITIVES = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}


def schema_type(node: dict[str, Any]) -> Any:
    """The Python type a schema node describes, built from the models of the defs it names."""
    ref = _ref_name(node)
    if ref is not None:
        model = getattr(schema, ref)
        # An open enum also accepts any other string (CONFIG-09) or integer (RPC-18).
        return model | _enum_base(model) if _is_open_enum(ref) else model
    branches = _branches(node)
    if branches:
        return union_of(schema_type(b) for b in branches)
    kind = node.get("type")
    if kind is None:
        return Any
    if isinstance(kind, list):
        return union_of(schema_type({**node, "type": k}) for k in kind)
    if kind == "array":
        return list[schema_type(node.get("items", {}))]
    if kind == "object":
        extra = node.get("additionalProperties", True)
        return dict[str, Any] if extra is True else dict[str, schema_type(extra)]
    return _PRIMITIVES[kind]


def integer_format(node: dict[str, Any]) -> str | None:
    """The integer ``format`` of a property: its own, or that of the integer branch of the def it
    names (``ProtocolVersion`` is uint16, ``RequestId`` int64, ``ErrorCode`` int32)."""
    ref = _ref_name(node)
    if ref is not None:
        return integer_format(DEFS[ref])
    formats = {integer_format(b) for b in _branches(node)} - {None}
    if formats:
        (only,) = formats
        return only
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return node.get("format") if "integer" in kinds else None


# -- Reading the models ---------------------------------------------------------------------------


def normalize(tp: Any) -> Any:
    """A comparable form of a type: unions as frozensets (``Unset`` dropped), lists and dicts as
    tuples; an enum beside its own base type (an open enum) reads as the base type, and ``Any``
    beside anything reads as ``Any`` (a value passed through raw)."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        members: set = set()
        for arg in typing.get_args(tp):
            if arg is Unset:
                continue
            n = normalize(arg)
            members |= n if isinstance(n, frozenset) else {n}
        members = {
            m
            for m in members
            if not (isinstance(m, type) and issubclass(m, enum.Enum) and _enum_base(m) in members)
        }
        if "any" in members:
            return "any"
        return next(iter(members)) if len(members) == 1 else frozenset(members)
    if origin is list:
        return ("list", normalize(typing.get_args(tp)[0]))
    if origin is dict:
        return ("dict", normalize(typing.get_args(tp)[1]))
    if tp is Any:
        return "any"
    return tp


def _core(a: attrs.Attribute) -> dict[str, Any]:
    return a.metadata.get(WIRE, {})


def _fields(cl: type) -> list[attrs.Attribute]:
    """A model's fields but its provisional ones (checked against the unstable schema apart)."""
    return [a for a in attrs.fields(cl) if not _core(a).get("provisional")]


def _is_provisional_model(cl: Any) -> bool:
    return getattr(cl, "__module__", "").rsplit(".", 1)[-1] in schema.PROVISIONAL_PAGES


def _variants(union: Any) -> list[type]:
    return [v for v in typing.get_args(union) if v is not Unknown]


def model_keys(cl: type) -> set:
    """Wire keys of a model: its fields' names, and the keys its flattened unions bring."""
    keys = set(IMPLICIT_KEYS.get(cl.__name__, ()))
    for a in _fields(cl):
        keys |= union_keys(a.type) if _core(a).get("flatten") else {wire_name(a.name)}
    return keys


def union_keys(union: Any) -> set:
    spec = UNIONS[union]
    keys = {spec.tag} if spec.tag else set()
    for variant in _variants(union):
        keys |= model_keys(variant)
    return keys


def model_required(cl: type) -> set:
    """Wire keys every instance has: fields without a default (flattened ones through their
    union: what every variant has, the tag included)."""
    out: set = set()
    for a in _fields(cl):
        if a.default is not attrs.NOTHING:
            continue
        out |= union_required(a.type) if _core(a).get("flatten") else {wire_name(a.name)}
    return out


def union_required(union: Any) -> set:
    spec = UNIONS[union]
    sets = []
    for variant in typing.get_args(union):
        required = set() if variant is Unknown else model_required(variant)
        if spec.tag and variant is not spec.untagged:
            required.add(spec.tag)
        sets.append(required)
    return set.intersection(*sets)


def _params(kind: str) -> list[Any]:
    names = sorted(n for n in DEFS if kind_of(n) == kind) if kind else sorted(DEFS)
    return [pytest.param(n, id=f"{n}-provisional") if n in PROVISIONAL else n for n in names]


def _model(name: str) -> Any:
    model = getattr(schema, name, None)
    assert model is not None, f"acpref.schema has no model named {name}"
    return model


def _fields_by_wire(cl: type) -> dict[str, attrs.Attribute]:
    return {wire_name(a.name): a for a in _fields(cl) if not _core(a).get("flatten")}


# -- Names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _params(""))
def test_def_has_a_model(name: str) -> None:
    model = _model(name)
    if kind_of(name) == "object":
        assert attrs.has(model), f"{name} should be an attrs class"
    if kind_of(name) == "enum":
        assert isinstance(model, type) and issubclass(model, enum.Enum)


def test_every_model_is_a_def_or_explained() -> None:
    extra = set(schema.__all__) - set(DEFS) - set(MODEL_ONLY)
    assert not extra, f"models without a $def and without a reason in MODEL_ONLY: {sorted(extra)}"
    # The explained ones really exist, so the list cannot rot.
    assert all(hasattr(schema, n) for n in MODEL_ONLY)


# -- Objects --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _params("object"))
def test_object_wire_keys(name: str) -> None:
    assert model_keys(_model(name)) == set(def_properties(DEFS[name]))


@pytest.mark.parametrize("name", _params("object"))
def test_object_required_keys(name: str) -> None:
    assert model_required(_model(name)) == def_required(DEFS[name])


@pytest.mark.parametrize("name", _params("object"))
def test_object_field_types(name: str) -> None:
    props = def_properties(DEFS[name])
    mismatches = {}
    for key, a in _fields_by_wire(_model(name)).items():
        expected = normalize(union_of(schema_type(p) for p in props[key]))
        if normalize(a.type) != expected:
            mismatches[key] = (normalize(a.type), expected)
    assert not mismatches, mismatches


@pytest.mark.parametrize("name", _params("object"))
def test_object_integer_formats(name: str) -> None:
    # spec SCHEMA-12, SCHEMA-13: integer ranges come from the schema's formats.
    props = def_properties(DEFS[name])
    for key, a in _fields_by_wire(_model(name)).items():
        formats = {integer_format(p) for p in props[key]} - {None}
        assert _core(a).get("fmt") == (formats.pop() if formats else None), key


@pytest.mark.parametrize("name", _params("object"))
def test_object_leniency_markers(name: str) -> None:
    # spec SCHEMA-11: a field is lenient exactly where the schema carries the x- marker.
    props = def_properties(DEFS[name])
    for key, a in _fields_by_wire(_model(name)).items():
        for marker, rule in (
            ("x-deserialize-default-on-error", "default_on_error"),
            ("x-deserialize-skip-invalid-items", "skip_invalid_items"),
            # spec SCHEMA-18: null is the empty value exactly where the schema says so.
            ("x-deserialize-default-on-null", "default_on_null"),
        ):
            marked = any(p.get(marker) for p in props[key])
            assert bool(_core(a).get(rule)) == marked, f"{key}: {rule} should be {marked}"


# -- Enums ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _params("enum"))
def test_enum_values(name: str) -> None:
    consts = {b["const"] for b in _branches(DEFS[name]) if "const" in b}
    assert {m.value for m in _model(name)} == consts


# -- Unions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _params("union"))
def test_union_variants(name: str) -> None:
    node, model = DEFS[name], _model(name)
    tag = _tag_of(node)
    if tag is not None:
        _check_tagged(name, node, model, tag)
    elif model in UNIONS:
        _check_keyed(node, model)
    else:  # a plain union of types: RequestId, select options (flat vs grouped), ...
        assert normalize(model) == normalize(union_of(schema_type(b) for b in _branches(node)))


def _check_tagged(name: str, node: dict[str, Any], model: Any, tag: str) -> None:
    spec = UNIONS.get(model)
    assert spec is not None, f"{name} is not registered as a tagged union"
    assert spec.tag == tag
    consts, catch_all, untagged = {}, False, None
    for b in _branches(node):
        prop = b.get("properties", {}).get(tag)
        if prop is None:
            untagged = _ref_name(b)
        elif "const" in prop:
            consts[prop["const"]] = b
        else:
            catch_all = True
    tags = {
        value
        for value, variant in spec.by_tag.items()
        if name in PROVISIONAL or not _is_provisional_model(variant)
    }
    assert tags == set(consts) | EXTRA_TAGS.get(name, set())
    for value, b in consts.items():
        variant = spec.by_tag[value]
        ref = _ref_name({"allOf": b["allOf"]}) if "allOf" in b else None
        if ref is not None:  # the chunk kinds are ContentChunk subclasses carrying their tag
            assert issubclass(variant, getattr(schema, ref)), (value, variant)
        else:  # an inline branch: only the tag, no model of its own in $defs
            assert model_keys(variant) == set(def_properties(b)) - {tag}
    # spec SCHEMA-10: a catch-all branch means unknown tags are kept raw, not rejected; so does a
    # union a newer v1 peer extends (FORWARD_COMPATIBLE).
    kept = catch_all or name in FORWARD_COMPATIBLE
    assert spec.keep_unknown == kept
    assert (Unknown in typing.get_args(model)) == kept
    # spec SCHEMA-05, SCHEMA-06: the branch without a tag (agent auth, stdio MCP server, titled
    # multi-select items) is the variant read when the key is absent.
    assert (spec.untagged.__name__ if spec.untagged else None) == untagged


def _check_keyed(node: dict[str, Any], model: Any) -> None:
    # Text vs blob resource contents, result vs error responses: no tag; each variant has a
    # required key that no other branch has.
    spec = UNIONS[model]
    branches = [DEFS[_ref_name(b)] if _ref_name(b) else b for b in _branches(node)]
    assert len(spec.by_key) == len(branches)
    for key, cl in spec.by_key:
        (mine,) = [b for b in branches if set(def_properties(b)) == model_keys(cl)]
        assert key in def_required(mine)
        assert all(key not in def_properties(b) for b in branches if b is not mine)


@pytest.mark.parametrize("name", _params("alias"))
def test_alias_type(name: str) -> None:
    assert normalize(_model(name)) == normalize(schema_type(DEFS[name]))


def test_every_registered_union_has_variants_with_their_tag() -> None:
    # Tag constants are how the codec writes the tag back: every tagged variant has one.
    for union in UNIONS:
        spec = UNIONS[union]
        for value, cl in spec.by_tag.items():
            assert getattr(cl, spec.tag_attr) == value
            assert spec.tag_attr not in attrs.fields_dict(cl), f"{cl.__name__}: tag is a field"


# -- Provisional fields and variants of stable types ----------------------------------------------

#: Provisional fields in neither schema file, with their source (spec_notes/decisions.md).
ANNOUNCED_ONLY = {
    # spec-gap plan-file-variant: the 2026-11-20 announcement's Markdown plan path (PLANOP-08).
    ("PlanMarkdown", "path"): "announcement of 2026-11-20, plan operations",
}
#: Provisional union variants in neither schema file, with their source.
DRAFT_ONLY: dict[tuple[str, str], str] = {
    # spec-gap session-reference-content: the draft tool-calls page's session reference.
    ("ToolCallContent", "session"): "draft tool-calls.mdx @ 905d8fd8, Session References",
}


def _provisional_fields() -> list[Any]:
    out = []
    for name in sorted(n for n in dir(schema) if not n.startswith("_")):
        model = getattr(schema, name)
        if isinstance(model, type) and attrs.has(model):
            for a in attrs.fields(model):
                if _core(a).get("provisional"):
                    out.append(pytest.param(name, a, id=f"{name}.{wire_name(a.name)}-provisional"))
    return out


def _provisional_variants() -> list[Any]:
    out = []
    for union, spec in UNIONS.items():
        name = next((n for n in DEFS if getattr(schema, n, None) is union), None)
        if name is None or name in PROVISIONAL:
            continue
        for value, variant in spec.by_tag.items():
            if _is_provisional_model(variant):
                out.append(pytest.param(name, value, variant, id=f"{name}.{value}-provisional"))
    return out


def test_provisional_models_are_the_unstable_defs() -> None:
    # Every name a provisional page defines is an unstable $def (or explained), none is stable:
    # a stable schema that confirms one must move it out of the provisional pages.
    assert PROVISIONAL_MODELS & STABLE == set()
    assert PROVISIONAL_MODELS - PROVISIONAL <= set(MODEL_ONLY)


@pytest.mark.parametrize(("name", "a"), _provisional_fields())
def test_provisional_field_matches_the_unstable_schema(name: str, a: attrs.Attribute) -> None:
    key = wire_name(a.name)
    in_stable = key in def_properties(DEFS[name]) if name in STABLE else False
    assert not in_stable, f"{name}.{key} is in the stable schema: it is not provisional"
    if (name, key) in ANNOUNCED_ONLY:
        assert key not in def_properties(UNSTABLE.get(name, {}))
        return
    props = def_properties(UNSTABLE[name])[key]
    assert normalize(a.type) == normalize(union_of(schema_type(p) for p in props))
    for marker, rule in (
        ("x-deserialize-default-on-error", "default_on_error"),
        ("x-deserialize-skip-invalid-items", "skip_invalid_items"),
    ):
        assert bool(_core(a).get(rule)) == any(p.get(marker) for p in props), rule
    assert key not in def_required(UNSTABLE[name]) and a.default is not attrs.NOTHING


@pytest.mark.parametrize(("name", "value", "variant"), _provisional_variants())
def test_provisional_variant_matches_the_unstable_schema(
    name: str, value: str, variant: type
) -> None:
    if (name, value) in DRAFT_ONLY:
        assert value not in {
            b.get("properties", {}).get(_tag_of(UNSTABLE[name]), {}).get("const")
            for b in _branches(UNSTABLE[name])
        }
        return
    node = UNSTABLE[name]
    tag = _tag_of(node)
    (branch,) = [
        b for b in _branches(node) if b.get("properties", {}).get(tag, {}).get("const") == value
    ]
    ref = _ref_name({"allOf": branch["allOf"]})
    assert ref is not None and issubclass(variant, getattr(schema, ref))
