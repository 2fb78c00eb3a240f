"""Unions: the schema's tagged and keyed unions, enums open to other strings, unions of primitives.

A tagged union reads its tag key (``type``, ``sessionUpdate``, ``outcome``, ``mode``,
``action``) to pick the variant, and writes it from the variant's class constant. A keyed union
(no tag) takes the first variant whose key is present. ``Optional[...]`` wraps any of them.
"""

from __future__ import annotations

import typing
from typing import Any, Callable, List, Union

import attrs
import cattrs

from .. import schema
from ..schema._base import UNIONS, Unknown, Unset, UnionSpec
from .paths import UNDEFINED_VALUE, WireError, expected, json_type
from .primitives import PRIMITIVE_CHECKS, PRIMITIVE_NAMES
from .typeinfo import is_enum, is_list, is_union


def spec_structure(
    conv: cattrs.Converter, spec: UnionSpec, strict: bool
) -> Callable[[Any, Any], Any]:
    """Structure a registered schema union from its wire object (tag included)."""
    if spec.tag is None:  # keyed union: the first variant whose key is present
        candidates = [(key, cl, conv.get_structure_hook(cl)) for key, cl in spec.by_key]
        keys = " or ".join(repr(k) for k, _ in spec.by_key)

        def structure_keyed(value: Any, _: Any = None) -> Any:
            if type(value) is not dict:
                raise expected("an object", value)
            for key, cl, hook in candidates:
                if key in value:
                    return hook(value, cl)
            raise ValueError(f"expected one of the keys {keys}")

        return structure_keyed

    tag, by_tag, untagged = spec.tag, spec.by_tag, spec.untagged
    hooks = {value: (cl, conv.get_structure_hook(cl)) for value, cl in by_tag.items()}
    # Keys a variant accepts and ignores (``ignored_keys``, e.g. content on an elicitation
    # decline, ELICIT-21): never read, so never reported either.
    dropped = {cl: {tag, *getattr(cl, "ignored_keys", ())} for cl in by_tag.values()}
    untagged_hook = conv.get_structure_hook(untagged) if untagged is not None else None
    known = ", ".join(repr(v) for v in by_tag)

    def structure_tagged(value: Any, _: Any = None) -> Any:
        if type(value) is not dict:
            raise expected("an object", value)
        if tag not in value:
            if untagged_hook is not None:
                return untagged_hook(value, untagged)
            raise WireError([(f".{tag}", "required key is missing")])
        if type(value[tag]) is not str:  # checked first: a list or object is not hashable
            raise WireError([(f".{tag}", f"expected a string, got {json_type(value[tag])}")])
        chosen = hooks.get(value[tag])
        if chosen is None:
            if spec.keep_unknown:
                return Unknown(raw=value)  # spec SCHEMA-10: unknown variant kept raw
            if untagged_hook is not None:
                # spec SCHEMA-05 (agent auth) and spec SCHEMA-06 (stdio server): the untagged
                # branch does not constrain the tag key; strict mode reports it as unknown
                # (EXT-04).
                return untagged_hook(value, untagged)
            raise WireError([(f".{tag}", f"{value[tag]!r} {UNDEFINED_VALUE} {known}")])
        cl, hook = chosen
        if strict:  # the tag is not a field of the variant: drop it before the extra-key check
            value = {k: v for k, v in value.items() if k not in dropped[cl]}
        return hook(value, cl)

    return structure_tagged


def spec_unstructure(conv: cattrs.Converter, spec: UnionSpec) -> Callable[[Any], Any]:
    # spec OVERVIEW-10: the tag is the variant's own snake_case constant (untagged: none).
    tags = {cl: value for value, cl in spec.by_tag.items() if cl is not spec.untagged}
    tag = spec.tag

    def unstructure(obj: Any) -> Any:
        cl = obj.__class__
        if cl is Unknown:
            return obj.raw
        out = conv.get_unstructure_hook(cl)(obj)
        value = tags.get(cl)
        if value is not None:
            return {tag: value, **out}
        return out

    return unstructure


def select_options_structure(conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _: Any = None) -> Any:
        # spec SCHEMA-07: a flat list of values or a list of groups; groups have a `group` key.
        if type(value) is not list:
            raise expected("an array", value)
        grouped = bool(value) and type(value[0]) is dict and "group" in value[0]
        tp = (
            List[schema.SessionConfigSelectGroup]
            if grouped
            else List[schema.SessionConfigSelectOption]
        )
        return conv.get_structure_hook(tp)(value, tp)

    return structure


def open_enum_structure(enum_cl: Any) -> Callable[[Any, Any], Any]:
    """An enum that also accepts other strings (SessionConfigOptionCategory, CONFIG-09)."""
    values = enum_cl._value2member_map_

    def structure(v: Any, _: Any = None) -> Any:
        if type(v) is str:
            return values.get(v, v)
        if isinstance(v, enum_cl):  # a member already (see primitives.structure_enum)
            return v
        raise expected("a string", v)

    return structure


def primitives_structure(args: List[Any]) -> Callable[[Any, Any], Any]:
    """A union of primitives: the value as received, if one member's check accepts it."""
    checks = [PRIMITIVE_CHECKS[a] for a in args]
    names = " or ".join(PRIMITIVE_NAMES[a] for a in args)

    def structure(v: Any, _: Any = None) -> Any:
        for check in checks:
            if check(v):
                return v
        raise expected(names, v)

    return structure


def union_structure(conv: cattrs.Converter, tp: Any, strict: bool) -> Callable[[Any, Any], Any]:
    args = [a for a in typing.get_args(tp) if a is not Unset]
    nullable = type(None) in args
    args = [a for a in args if a is not type(None)]
    # Every ``inner`` takes cattrs' (value, type) call, so a union that cannot be null is
    # its own hook: one call less per union value (a streamed update has two).
    inner: Callable[..., Any]
    rest = args[0] if len(args) == 1 else Union[tuple(args)]
    if rest in UNIONS:
        inner = spec_structure(conv, UNIONS[rest], strict)
    elif len(args) == 1:
        hook = conv.get_structure_hook(args[0])
        inner = lambda v, _=None, _h=hook, _t=args[0]: _h(v, _t)  # noqa: E731
    elif all(is_list(a) for a in args) and rest == schema.SessionConfigSelectOptions:
        inner = select_options_structure(conv)
    elif any(is_enum(a) for a in args) and str in args:
        (enum_cl,) = [a for a in args if is_enum(a)]
        inner = open_enum_structure(enum_cl)
    elif all(a in PRIMITIVE_CHECKS for a in args):
        inner = primitives_structure(args)
    else:  # pragma: no cover - every schema union is one of the cases above
        raise TypeError(f"no wire rule for the union {tp!r}")

    if not nullable:
        return inner

    def structure_nullable(v: Any, _: Any = None) -> Any:
        return None if v is None else inner(v, _)

    return structure_nullable


def union_unstructure(conv: cattrs.Converter, tp: Any) -> Callable[[Any], Any]:
    args = [a for a in typing.get_args(tp) if a is not Unset and a is not type(None)]
    rest = args[0] if len(args) == 1 else Union[tuple(args)]
    if rest in UNIONS:
        inner = spec_unstructure(conv, UNIONS[rest])
        return lambda v: None if v is None else inner(v)
    if len(args) == 1:
        hook = conv.get_unstructure_hook(args[0])
        return lambda v: None if v is None else hook(v)

    def unstructure_by_value(v: Any) -> Any:  # a union of primitives, or of list types
        if type(v) is list:
            return [unstructure_by_value(x) for x in v]
        if attrs.has(type(v)):
            return conv.unstructure(v)
        return v

    return unstructure_by_value


def register(conv: cattrs.Converter, *, strict: bool) -> None:
    """Give ``conv`` the union hooks (``strict``: the tag is dropped before the extra-key check)."""
    conv.register_structure_hook_factory(is_union, lambda tp: union_structure(conv, tp, strict))
    conv.register_unstructure_hook_factory(is_union, lambda tp: union_unstructure(conv, tp))
