"""The models: fields renamed to their wire keys, their markers applied, flattened unions beside.

Every model is an ``attrs`` class whose fields carry their wire rules as metadata
(``acpref.schema._base.field``): ``fmt`` (an integer format), ``flatten`` (a union whose keys
sit beside the class's own), and the schema's leniency markers, which only the lenient mode
follows (SCHEMA-11): ``default_on_error``, ``skip_invalid_items``; ``default_on_null``
(SCHEMA-18) holds in both modes. One class has a shape of its own:
``SetSessionConfigOptionRequest`` (SCHEMA-08, CONFIG-18).
"""

from __future__ import annotations

import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from .. import schema
from ..schema._base import UNSET, Unknown
from .paths import WireError, expected, relative_errors, wire_name
from .primitives import FORMATS
from .typeinfo import fields, is_dict, is_list, members, wire_meta


def field_hook(
    conv: cattrs.Converter, a: attrs.Attribute, lenient: bool
) -> Optional[Callable[[Any, Any], Any]]:
    """The structure hook of one field, with its wire markers applied (or None: the default)."""
    rules = wire_meta(a)
    fmt = rules.get("fmt")
    default_on_error = lenient and rules.get("default_on_error")
    skip_invalid = lenient and rules.get("skip_invalid_items")
    on_null = rules.get("default_on_null")
    if not (fmt or default_on_error or skip_invalid or on_null):
        return None
    tp = a.type
    base = conv.get_structure_hook(tp)

    if on_null:
        empty: Callable[[], Any] = dict if any(is_dict(t) for t in members(tp)) else list

        def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
            # spec SCHEMA-18: an explicit null is the empty value, in both modes.
            return empty() if v is None else _b(v, t)

    if fmt:
        low, high = FORMATS[fmt]

        def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
            out = _b(v, t)
            if type(out) is int and not low <= out <= high:
                raise ValueError(f"{out} is out of range for {fmt}")
            return out

    if skip_invalid:
        list_types = [t for t in typing.get_args(tp) or (tp,) if is_list(t)] or [tp]
        (item_type,) = typing.get_args(list_types[0])
        item = conv.get_structure_hook(item_type)

        def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
            if type(v) is not list:
                return _b(v, t)
            out = []
            for x in v:
                try:
                    out.append(item(x, item_type))
                except Exception:  # noqa: BLE001 - spec SCHEMA-11: drop the malformed item
                    continue
            return out

    if default_on_error:
        fallback: Any = [] if a.default is attrs.NOTHING and is_list(tp) else UNSET

        def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
            try:
                return _b(v, t)
            except Exception:  # noqa: BLE001 - spec SCHEMA-11: a malformed marked field is absent
                return fallback

    return base


def flatten_hooks(
    conv: cattrs.Converter, cl: type, strict: bool, detailed: bool
) -> Tuple[Callable[[Any, Any], Any], Callable[[Any], Any]]:
    """Hooks for a class with a flattened union field: its keys sit beside the class's own."""
    own = [a for a in fields(cl) if not wire_meta(a).get("flatten")]
    (flat,) = [a for a in fields(cl) if wire_meta(a).get("flatten")]
    own_keys = {wire_name(a.name): a for a in own}
    flat_structure = conv.get_structure_hook(flat.type)
    flat_unstructure = conv.get_unstructure_hook(flat.type)
    own_hooks = {
        a.name: field_hook(conv, a, not strict) or conv.get_structure_hook(a.type) for a in own
    }

    def structure(value: Any, _: Any = None) -> Any:
        if type(value) is not dict:
            raise expected("an object", value)
        kwargs: Dict[str, Any] = {}
        errors: List[Tuple[str, str]] = []
        for key, a in own_keys.items():
            if key in value:
                try:
                    kwargs[a.name] = own_hooks[a.name](value[key], a.type)
                except Exception as exc:  # noqa: BLE001
                    if not detailed:
                        raise
                    errors += [(f".{key}{p}", m) for p, m in relative_errors(exc)]
            elif a.default is attrs.NOTHING:
                errors.append((f".{key}", "required key is missing"))
        rest = {k: v for k, v in value.items() if k not in own_keys}
        try:
            kwargs[flat.name] = flat_structure(rest, flat.type)
        except Exception as exc:  # noqa: BLE001
            if not detailed:
                raise
            errors += relative_errors(exc)
        if errors:
            raise WireError(errors)
        return cl(**kwargs)

    def unstructure(obj: Any) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key, a in own_keys.items():
            v = getattr(obj, a.name)
            if v is not UNSET:
                out[key] = conv.unstructure(v, a.type)
        out.update(flat_unstructure(getattr(obj, flat.name)))
        return out

    return structure, unstructure


def class_structure(
    conv: cattrs.Converter, cl: type, strict: bool, detailed: bool
) -> Callable[[Any, Any], Any]:
    special = _SPECIAL.get(cl.__qualname__) if cl.__module__.startswith(_SCHEMA) else None
    if special is not None:
        return special[0](conv, strict)
    if any(wire_meta(a).get("flatten") for a in fields(cl)):
        return flatten_hooks(conv, cl, strict, detailed)[0]
    overrides = {}
    for a in fields(cl):
        hook = field_hook(conv, a, not strict)
        overrides[a.name] = override(rename=wire_name(a.name), struct_hook=hook)
    # mypy matches **overrides against the _cattrs_* flags too; its keys are field names.
    generated: Callable[[Any, Any], Any] = make_dict_structure_fn(cl, conv, **overrides)  # type: ignore[arg-type]

    def structure(value: Any, _: Any = None) -> Any:
        if type(value) is not dict:
            raise expected("an object", value)
        return generated(value, cl)

    return structure


def class_unstructure(
    conv: cattrs.Converter, cl: type, strict: bool, detailed: bool
) -> Callable[[Any], Any]:
    special = _SPECIAL.get(cl.__qualname__) if cl.__module__.startswith(_SCHEMA) else None
    if special is not None:
        return special[1](conv)
    if cl is Unknown:
        return lambda obj: obj.raw
    if any(wire_meta(a).get("flatten") for a in fields(cl)):
        return flatten_hooks(conv, cl, strict, detailed)[1]
    overrides = {a.name: override(rename=wire_name(a.name)) for a in fields(cl)}
    # Optional fields default to UNSET, so "omit if default" is "omit if absent".
    # mypy matches **overrides against the _cattrs_* flags too; its keys are field names.
    return make_dict_unstructure_fn(cl, conv, _cattrs_omit_if_default=True, **overrides)  # type: ignore[arg-type]


def register(conv: cattrs.Converter, *, strict: bool, detailed: bool) -> None:
    """Give ``conv`` the hooks of every attrs class (``strict``: the markers are not followed)."""
    conv.register_structure_hook_factory(
        attrs.has, lambda cl: class_structure(conv, cl, strict, detailed)
    )
    conv.register_unstructure_hook_factory(
        attrs.has, lambda cl: class_unstructure(conv, cl, strict, detailed)
    )


# -- The one irregular shape ----------------------------------------------------------------------


def _set_config_option_structure(conv: cattrs.Converter, strict: bool) -> Callable[[Any, Any], Any]:
    # spec SCHEMA-08, CONFIG-18: `type: "boolean"` requires a boolean value; without `type` (or
    # with an unknown one) a string value is a select value id.
    cl = schema.SetSessionConfigOptionRequest
    allowed = {"sessionId", "configId", "value", "type", "_meta"}
    meta_hook = conv.get_structure_hook(schema.Meta)

    def structure(value: Any, _: Any = None) -> Any:
        if type(value) is not dict:
            raise expected("an object", value)
        errors: List[Tuple[str, str]] = []
        kwargs: Dict[str, Any] = {}
        for key, attr in (("sessionId", "session_id"), ("configId", "config_id")):
            if key not in value:
                errors.append((f".{key}", "required key is missing"))
            elif type(value[key]) is not str:
                errors.append((f".{key}", str(expected("a string", value[key]))))
            else:
                kwargs[attr] = value[key]
        if "value" not in value:
            errors.append((".value", "required key is missing"))
        elif value.get("type") == "boolean":
            if type(value["value"]) is bool:
                kwargs["value"] = value["value"]
            else:
                errors.append(
                    (".value", str(expected('a boolean (type is "boolean")', value["value"])))
                )
        elif type(value["value"]) is str:
            kwargs["value"] = value["value"]
        else:
            errors.append((".value", str(expected("a string value id", value["value"]))))
        if "_meta" in value:
            try:
                kwargs["meta"] = meta_hook(value["_meta"], schema.Meta)
            except Exception as exc:  # noqa: BLE001
                if strict:
                    errors.append(("._meta", str(exc)))
        if strict:
            errors += [
                (f".{k}", "unknown key (custom data belongs in _meta)")
                for k in sorted(set(value) - allowed)
            ]
        if errors:
            raise WireError(errors)
        return cl(**kwargs)

    return structure


def _set_config_option_unstructure(conv: cattrs.Converter) -> Callable[[Any], Any]:
    def unstructure(obj: Any) -> Dict[str, Any]:
        out: Dict[str, Any] = {"sessionId": obj.session_id, "configId": obj.config_id}
        if type(obj.value) is bool:
            out["type"] = "boolean"
        out["value"] = obj.value
        if obj.meta is not UNSET:
            out["_meta"] = obj.meta
        return out

    return unstructure


#: Schema classes with hooks of their own, by name (naming them does not import their page).
_SPECIAL = {
    "SetSessionConfigOptionRequest": (
        _set_config_option_structure,
        _set_config_option_unstructure,
    )
}
_SCHEMA = "acpref.schema."
