"""Property tests: every model and every union survives model -> encode -> JSON -> decode.

Spec: schema.json; clauses OVERVIEW-10 (round trips keep keys and tags), SCHEMA-10 (unknown
variants kept raw), LIST-15 (absent vs null). Code: acpref/codec.py.

The strategies are built from the models themselves by walking their attrs fields: an optional
field is ``UNSET`` or a value, a nullable one may be ``None``, integers stay in the range of the
field's ``fmt``, unions draw any variant (and, where unknown variants are kept, an ``Unknown`` with
a tag value no known variant has), ``_meta`` and pass-through values are arbitrary JSON. Each
instance is encoded, sent through real JSON text, and decoded in strict and in lenient mode; both
must give back an equal model.

``ACPREF_LONG=1`` raises the example count from 25 to 500 per model.
"""

from __future__ import annotations

import enum
import functools
import json
import os
import types
import typing
from typing import Any, Union

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acpref import schema
from acpref.codec import decode, encode, wire_name
from acpref.schema._base import UNIONS, UNSET, WIRE, Unknown, Unset

pytestmark = pytest.mark.timeout(120 if os.environ.get("ACPREF_LONG") == "1" else 60)

EXAMPLES = settings(
    max_examples=500 if os.environ.get("ACPREF_LONG") == "1" else 25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

_RANGES = {
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

_TEXT = st.text(max_size=8)

#: Any JSON value: what ``_meta``, ``rawInput`` and extension payloads carry.
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _core(a: attrs.Attribute) -> dict[str, Any]:
    return a.metadata.get(WIRE, {})


@functools.cache
def strategy_for(
    tp: Any, fmt: Any = None, exclude: frozenset[str] = frozenset()
) -> st.SearchStrategy:
    """Instances of a model type. ``fmt`` bounds integers; ``exclude`` names keys an ``Unknown``
    variant must not carry (the own keys of the object a union is flattened into)."""
    if tp in UNIONS:
        return _registered_union(tp, exclude)
    if _is_union(tp):
        args = [a for a in typing.get_args(tp) if a is not Unset]
        nullable = type(None) in args
        args = [a for a in args if a is not type(None)]
        rest = args[0] if len(args) == 1 else Union[tuple(args)]  # noqa: UP007 - built from a list
        if rest in UNIONS:
            inner = _registered_union(rest, exclude)
        else:
            inner = st.one_of([strategy_for(a, fmt, exclude) for a in args])
        return st.none() | inner if nullable else inner
    if tp is Any:
        return JSON
    origin = typing.get_origin(tp)
    if origin is list:
        return st.lists(strategy_for(typing.get_args(tp)[0], fmt), max_size=3)
    if origin is dict:
        return st.dictionaries(_TEXT, strategy_for(typing.get_args(tp)[1], fmt), max_size=3)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if attrs.has(tp):
        return _class(tp)
    if tp is str:
        return _TEXT
    if tp is bool:
        return st.booleans()
    if tp is int:
        low, high = _RANGES[fmt or "int64"]
        return st.integers(low, high)
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    raise TypeError(f"no strategy for {tp!r}")


def _class(cl: type) -> st.SearchStrategy:
    own = frozenset(wire_name(a.name) for a in attrs.fields(cl) if not _core(a).get("flatten"))
    kwargs = {}
    for a in attrs.fields(cl):
        rules = _core(a)
        value = strategy_for(a.type, rules.get("fmt"), own if rules.get("flatten") else frozenset())
        kwargs[a.name] = value if a.default is attrs.NOTHING else st.just(UNSET) | value
    return st.builds(cl, **kwargs)


def _registered_union(union: Any, exclude: frozenset[str]) -> st.SearchStrategy:
    spec = UNIONS[union]
    variants = [strategy_for(v) for v in typing.get_args(union) if v is not Unknown]
    if spec.keep_unknown:  # spec SCHEMA-10: a tag value no known variant has, and any other keys
        tag = _TEXT.filter(lambda t: t not in spec.by_tag)
        rest = st.dictionaries(
            _TEXT.filter(lambda k: k != spec.tag and k not in exclude), JSON, max_size=3
        )
        variants.append(st.builds(lambda t, r: Unknown(raw={spec.tag: t, **r}), tag, rest))
    return st.one_of(variants)


def _names(predicate: Any) -> list[str]:
    return sorted(n for n in schema.__all__ if predicate(getattr(schema, n)))


#: Every model class of acpref.schema (``Unknown`` only makes sense inside a union).
MODELS = _names(lambda v: attrs.has(v) and v is not Unknown)
#: Every union: the registered ones and the plain unions of types (RequestId, select options ...).
UNION_TYPES = _names(_is_union)


def _check(obj: Any, type_: Any) -> None:
    wire = json.loads(json.dumps(encode(obj, type_)))
    assert decode(wire, type_, strict=True) == obj
    assert decode(wire, type_, strict=False) == obj
    # In-process, without JSON between (enum members stay members: they are str already).
    assert decode(encode(obj, type_), type_, strict=True) == obj


@pytest.mark.parametrize("name", MODELS)
@EXAMPLES
@given(data=st.data())
def test_model_round_trips(name: str, data: st.DataObject) -> None:
    model = getattr(schema, name)
    _check(data.draw(strategy_for(model), label=name), model)


@pytest.mark.parametrize("name", UNION_TYPES)
@EXAMPLES
@given(data=st.data())
def test_union_round_trips(name: str, data: st.DataObject) -> None:
    union = getattr(schema, name)
    _check(data.draw(strategy_for(union), label=name), union)


def test_the_lists_cover_the_schema() -> None:
    # A guard against an empty parametrization: the walk found the models and unions it should.
    assert {"ToolCallUpdate", "CreateElicitationRequest", "SessionConfigOption"} <= set(MODELS)
    assert {"ContentBlock", "SessionUpdate", "RequestId", "SessionConfigSelectOptions"} <= set(
        UNION_TYPES
    )
    assert len(MODELS) > 120


@EXAMPLES
@given(data=st.data())
def test_unknown_variant_strategy_yields_unknown_tags(data: st.DataObject) -> None:
    # The Unknown strategy really produces tags that are not known (else the property is weak).
    mode = data.draw(
        strategy_for(schema.ElicitationMode).filter(lambda m: isinstance(m, Unknown)), label="mode"
    )
    assert mode.raw["mode"] not in UNIONS[schema.ElicitationMode].by_tag
