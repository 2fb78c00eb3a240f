"""The codec: one cattrs converter between ACP's wire JSON and the schema models.

Spec: overview.mdx (Conventions); clauses OVERVIEW-10, RPC-13, SCHEMA-10, SCHEMA-11, EXT-02, EXT-04.
Policy: spec_notes/codec.md.

What it does, for every model of ``acpref.schema``:

* names: a field ``session_id`` is the wire key ``sessionId``; ``meta`` is ``_meta`` (OVERVIEW-10);
* absent vs ``null``: ``UNSET`` fields are omitted, ``None`` fields are written as ``null``;
* tagged unions: the tag key (``type``, ``sessionUpdate``, ``outcome``, ``mode``, ``action``) is
  read to pick the variant and written from the variant's class constant; flattened fields
  (``SessionConfigOption.kind``, elicitation ``mode``/``scope``/``action``) sit beside their
  parent's keys;
* primitives are strict: a string where an integer is due is an error, never coerced; ``true`` is
  not a number; a list is a JSON array, not any iterable; integer formats (``uint32``, ...) are
  range-checked;
* values that are only passed through (``_meta``, ``rawInput``, extension params) are not walked.

Two modes, built by the one factory below:

* **lenient**, for live peers: follows the schema's ``x-deserialize-default-on-error`` (a malformed
  marked field reads as absent) and ``x-deserialize-skip-invalid-items`` (malformed items of a
  marked list are dropped) as the Rust reference does (SCHEMA-11); unknown keys are ignored.
  Fields without those markers are not lenient: since the schema of 2026-11-02, one malformed MCP
  server, directory, argument or env entry makes the message invalid (SCHEMA-20, SCHEMA-21).

* **strict**, for the oracle: every deviation is reported, markers or not, and so are unknown keys
  at the root of a spec type (EXT-04), except the keys the spec says to ignore (a variant's
  ``ignored_keys``: ``content`` on an elicitation decline or cancel, ELICIT-21).

In both modes ``x-deserialize-default-on-null`` reads an explicit ``null`` as the empty value
(SCHEMA-18), and an unknown ``sessionUpdate`` kind is kept raw as ``Unknown`` (spec-gap
forward-compatible).

A failure is a ``DecodeError`` listing ``(path, message)`` pairs with paths in wire names
(``params.prompt[0].type``); ``DecodeError.to_rpc_error`` is the one place that turns it into
JSON-RPC ``-32602`` (RPC-13). Encoding never validates: models may be built invalid on purpose.

What must not live here: protocol rules (``acpref._core``), I/O, threads.
"""

from __future__ import annotations

import enum
import sys
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, TypeVar, Union, overload

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from . import schema
from .errors import ErrorCode, RpcError
from .schema._base import UNIONS, UNSET, WIRE, UnionSpec, Unknown, Unset, WireEnum

__all__ = ["DecodeError", "decode", "encode", "wire_name", "UNDEFINED_VALUE"]

#: The words of every decode error about a string this version does not define: an enum value
#: or a union's tag (the oracle reports those as warnings: spec-gap forward-compatible).
UNDEFINED_VALUE = "is not a value this version defines; expected one of"

T = TypeVar("T")

# -- Names ----------------------------------------------------------------------------------------


def wire_name(attribute: str) -> str:
    """The wire key of a model attribute: camelCase, and ``meta`` is ``_meta`` (OVERVIEW-10)."""
    # spec OVERVIEW-10: every ACP key is the camelCase of its attribute (the schema's names).
    if attribute == "meta":
        return "_meta"
    head, *rest = attribute.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# -- Errors ---------------------------------------------------------------------------------------


class DecodeError(ValueError):
    """A wire value did not fit its model. ``errors`` lists ``(path, message)`` in wire names."""

    def __init__(self, errors: List[Tuple[str, str]]) -> None:
        self.errors = errors or [("$", "invalid value")]
        path, message = self.errors[0]
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        super().__init__(f"{path}: {message}{more}")

    def to_rpc_error(self) -> RpcError:
        """The JSON-RPC answer: -32602 with the failing paths in ``data`` (spec RPC-13)."""
        path, message = self.errors[0]
        return RpcError(
            ErrorCode.INVALID_PARAMS,
            f"Invalid params: {path}: {message}",
            {"path": path, "errors": [{"path": p, "message": m} for p, m in self.errors]},
        )


class _WireError(Exception):
    """Errors found below some value, each with a path relative to it (``.key``, ``[3]``)."""

    def __init__(self, errors: List[Tuple[str, str]]) -> None:
        super().__init__(errors[0][1] if errors else "invalid value")
        self.errors = errors


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _expected(what: str, value: Any) -> TypeError:
    return TypeError(f"expected {what}, got {_json_type(value)}")


def _relative_errors(exc: BaseException) -> List[Tuple[str, str]]:
    """Flatten a structuring exception into ``(relative path, message)`` pairs in wire names."""
    if isinstance(exc, _WireError):
        return exc.errors
    if isinstance(exc, ClassValidationError):
        out: List[Tuple[str, str]] = []
        with_notes, others = exc.group_exceptions()
        for sub, note in with_notes:
            key = wire_name(note.name)
            if isinstance(sub, KeyError) and sub.args == (key,):
                out.append((f".{key}", "required key is missing"))
                continue
            out += [(f".{key}{p}", m) for p, m in _relative_errors(sub)]
        for sub in others:
            out += _relative_errors(sub)
        return out
    if isinstance(exc, IterableValidationError):
        out = []
        with_index, others = exc.group_exceptions()
        for sub, at in with_index:
            out += [(f"[{at.index!r}]{p}", m) for p, m in _relative_errors(sub)]
        for sub in others:
            out += _relative_errors(sub)
        return out
    if isinstance(exc, ForbiddenExtraKeysError):
        # spec EXT-04: custom data goes in _meta, never at the root of a spec type.
        return [
            (f".{k}", "unknown key (custom data belongs in _meta)")
            for k in sorted(exc.extra_fields)
        ]
    if isinstance(exc, KeyError):
        return [(f".{exc.args[0]}", "required key is missing")]
    if isinstance(exc, RecursionError):
        return [("", "value nested too deeply")]
    message = str(exc) or type(exc).__name__
    return [("", message)]


# -- Strict primitives ----------------------------------------------------------------------------

_FORMATS = {
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _structure_str(value: Any, tp: Any = str) -> Any:
    if tp is not str and _is_enum(tp):
        # The schema's enums are ``str`` subclasses, and cattrs dispatches a class by its MRO
        # before anything else: every enum lands here, so this hook serves them too.
        return _structure_enum(value, tp)
    if type(value) is str:
        return value
    raise _expected("a string", value)


def _structure_str_keeping(value: Any, tp: Any = str) -> Any:
    """``_structure_str`` of the lenient mode: an undefined enum value is kept (see below)."""
    if tp is not str and _is_enum(tp):
        return _structure_enum(value, tp, keep_undefined=True)
    return _structure_str(value, tp)


def _structure_enum(value: Any, cl: Type[enum.Enum], *, keep_undefined: bool = False) -> Any:
    if isinstance(value, cl):
        # A member already: what ``encode`` gives for an enum field (members are ``str``, json
        # writes their value), decoded in-process without passing through JSON.
        return value
    if type(value) is not str:
        raise _expected("a string", value)
    member = cl._value2member_map_.get(value)
    if member is None:
        if keep_undefined and issubclass(cl, WireEnum):
            # spec-gap forward-compatible: a live peer keeps a value a newer v1 schema may
            # define (``stopReason: "paused"``) as the enum's stand-in, written back unchanged.
            return cl.undefined(value)
        choices = ", ".join(repr(m.value) for m in cl)
        raise ValueError(f"{value!r} {UNDEFINED_VALUE} {choices}")
    return member


def _structure_int(value: Any, _: Any = None) -> int:
    # bool is a subclass of int in Python, but `true` is not a number in JSON.
    if type(value) is int:
        return value
    raise _expected("an integer", value)


def _structure_float(value: Any, _: Any = None) -> float:
    if type(value) is float or type(value) is int:
        return value  # kept as received, so that 5 re-encodes as 5
    raise _expected("a number", value)


def _structure_bool(value: Any, _: Any = None) -> bool:
    if type(value) is bool:
        return value
    raise _expected("a boolean", value)


def _structure_any(value: Any, _: Any = None) -> Any:
    return value


def _structure_json_object(value: Any, _: Any = None) -> Dict[str, Any]:
    if type(value) is dict:
        return value
    raise _expected("an object", value)


def _identity(value: Any) -> Any:
    return value


_PRIMITIVE_CHECKS: Dict[Any, Callable[[Any], bool]] = {
    str: lambda v: type(v) is str,
    int: lambda v: type(v) is int,
    float: lambda v: type(v) is float or type(v) is int,
    bool: lambda v: type(v) is bool,
    List[str]: lambda v: type(v) is list and all(type(x) is str for x in v),
}
_PRIMITIVE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    List[str]: "array of strings",
}


def _is_list(tp: Any) -> bool:
    return typing.get_origin(tp) in (list, List)


def _is_dict(tp: Any) -> bool:
    return typing.get_origin(tp) in (dict, Dict)


def _members(tp: Any) -> Tuple[Any, ...]:
    """The members of a union type, or the type itself."""
    return typing.get_args(tp) if _is_union(tp) else (tp,)


def _is_union(tp: Any) -> bool:
    return cattrs._compat.is_union_type(tp)  # type: ignore[attr-defined]


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum) and tp is not Unset


def _fields(cl: type) -> Tuple[attrs.Attribute, ...]:
    return attrs.fields(cl)


def _wire_meta(a: attrs.Attribute) -> Dict[str, Any]:
    return a.metadata.get(WIRE, {})


# -- The converter factory ------------------------------------------------------------------------


def _make_converter(*, strict: bool, detailed: bool) -> cattrs.Converter:
    """Build the wire converter. ``strict``: the oracle's mode; ``detailed``: report every error."""
    # spec-gap result-decoding: lenient for live peers (the schema's markers, unknown keys
    # ignored), strict for the oracle (everything reported); both strict about primitives.
    conv = cattrs.Converter(detailed_validation=detailed, forbid_extra_keys=strict)
    lenient = not strict

    for tp, fn in (
        (str, _structure_str if strict else _structure_str_keeping),
        (int, _structure_int),
        (float, _structure_float),
        (bool, _structure_bool),
    ):
        conv.register_structure_hook(tp, fn)
    # `Any` is not a class before Python 3.11: register it by predicate.
    conv.register_structure_hook_func(lambda t: t is Any, _structure_any)
    conv.register_unstructure_hook_func(lambda t: t is Any, _identity)

    # Enums are ``str`` subclasses (structured by ``_structure_str``): json writes them as
    # their value, so they pass through.
    conv.register_unstructure_hook(enum.Enum, _identity)

    # Lists are JSON arrays, checked as such (cattrs would iterate any iterable, even a string).
    def list_structure(tp: Any) -> Callable[[Any, Any], Any]:
        (item_type,) = typing.get_args(tp) or (Any,)
        item = conv.get_structure_hook(item_type)

        if not detailed:

            def structure(value: Any, _: Any = None) -> List[Any]:
                if type(value) is not list:
                    raise _expected("an array", value)
                return [item(x, item_type) for x in value]

            return structure

        def structure_detailed(value: Any, _: Any = None) -> List[Any]:
            if type(value) is not list:
                raise _expected("an array", value)
            out, errors = [], []
            for i, x in enumerate(value):
                try:
                    out.append(item(x, item_type))
                except Exception as exc:  # noqa: BLE001 - every failure is reported with its index
                    errors += [(f"[{i}]{p}", m) for p, m in _relative_errors(exc)]
            if errors:
                raise _WireError(errors)
            return out

        return structure_detailed

    conv.register_structure_hook_factory(_is_list, list_structure)

    def dict_structure(tp: Any) -> Callable[[Any, Any], Any]:
        _, value_type = typing.get_args(tp)
        if value_type is Any:
            return _structure_json_object
        hook = conv.get_structure_hook(value_type)

        def structure(value: Any, _: Any = None) -> Dict[str, Any]:
            if type(value) is not dict:
                raise _expected("an object", value)
            out, errors = {}, []
            for k, v in value.items():
                try:
                    out[k] = hook(v, value_type)
                except Exception as exc:  # noqa: BLE001
                    if not detailed:
                        raise
                    errors += [(f".{k}{p}", m) for p, m in _relative_errors(exc)]
            if errors:
                raise _WireError(errors)
            return out

        return structure

    conv.register_structure_hook_factory(_is_dict, dict_structure)
    # `_meta` and other free-form objects are passed through, not walked.
    conv.register_unstructure_hook_factory(
        lambda tp: _is_dict(tp) and typing.get_args(tp)[1:] == (Any,), lambda tp: _identity
    )

    # -- Unions -----------------------------------------------------------------------------------

    def spec_structure(spec: UnionSpec) -> Callable[[Any, Any], Any]:
        """Structure a registered schema union from its wire object (tag included)."""
        if spec.tag is None:  # keyed union: the first variant whose key is present
            candidates = [(key, cl, conv.get_structure_hook(cl)) for key, cl in spec.by_key]
            keys = " or ".join(repr(k) for k, _ in spec.by_key)

            def structure_keyed(value: Any, _: Any = None) -> Any:
                if type(value) is not dict:
                    raise _expected("an object", value)
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
                raise _expected("an object", value)
            if tag not in value:
                if untagged_hook is not None:
                    return untagged_hook(value, untagged)
                raise _WireError([(f".{tag}", "required key is missing")])
            if type(value[tag]) is not str:  # checked first: a list or object is not hashable
                raise _WireError([(f".{tag}", f"expected a string, got {_json_type(value[tag])}")])
            chosen = hooks.get(value[tag])
            if chosen is None:
                if spec.keep_unknown:
                    return Unknown(raw=value)  # spec SCHEMA-10: unknown variant kept raw
                if untagged_hook is not None:
                    # spec SCHEMA-05 (agent auth) and spec SCHEMA-06 (stdio server): the untagged
                    # branch does not constrain the tag key; strict mode reports it as unknown
                    # (EXT-04).
                    return untagged_hook(value, untagged)
                raise _WireError([(f".{tag}", f"{value[tag]!r} {UNDEFINED_VALUE} {known}")])
            cl, hook = chosen
            if strict:  # the tag is not a field of the variant: drop it before the extra-key check
                value = {k: v for k, v in value.items() if k not in dropped[cl]}
            return hook(value, cl)

        return structure_tagged

    def spec_unstructure(spec: UnionSpec) -> Callable[[Any], Any]:
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

    def select_options_structure(value: Any, _: Any = None) -> Any:
        # spec SCHEMA-07: a flat list of values or a list of groups; groups have a `group` key.
        if type(value) is not list:
            raise _expected("an array", value)
        grouped = bool(value) and type(value[0]) is dict and "group" in value[0]
        tp = (
            List[schema.SessionConfigSelectGroup]
            if grouped
            else List[schema.SessionConfigSelectOption]
        )
        return conv.get_structure_hook(tp)(value, tp)

    def union_structure(tp: Any) -> Callable[[Any, Any], Any]:
        args = [a for a in typing.get_args(tp) if a is not Unset]
        nullable = type(None) in args
        args = [a for a in args if a is not type(None)]
        # Every ``inner`` takes cattrs' (value, type) call, so a union that cannot be null is
        # its own hook: one call less per union value (a streamed update has two).
        inner: Callable[..., Any]
        rest = args[0] if len(args) == 1 else Union[tuple(args)]
        if rest in UNIONS:
            inner = spec_structure(UNIONS[rest])
        elif len(args) == 1:
            hook = conv.get_structure_hook(args[0])
            inner = lambda v, _=None, _h=hook, _t=args[0]: _h(v, _t)  # noqa: E731
        elif all(_is_list(a) for a in args) and rest == schema.SessionConfigSelectOptions:
            inner = select_options_structure
        elif any(_is_enum(a) for a in args) and str in args:
            # an enum that also accepts other strings (SessionConfigOptionCategory, CONFIG-09)
            (enum_cl,) = [a for a in args if _is_enum(a)]
            members = enum_cl._value2member_map_

            def inner(v: Any, _: Any = None) -> Any:
                if type(v) is str:
                    return members.get(v, v)
                if isinstance(v, enum_cl):  # a member already (see _structure_enum)
                    return v
                raise _expected("a string", v)

        elif all(a in _PRIMITIVE_CHECKS for a in args):
            checks = [_PRIMITIVE_CHECKS[a] for a in args]
            names = " or ".join(_PRIMITIVE_NAMES[a] for a in args)

            def inner(v: Any, _: Any = None) -> Any:
                for check in checks:
                    if check(v):
                        return v
                raise _expected(names, v)

        else:  # pragma: no cover - every schema union is one of the cases above
            raise TypeError(f"no wire rule for the union {tp!r}")

        if not nullable:
            return inner

        def structure_nullable(v: Any, _: Any = None) -> Any:
            return None if v is None else inner(v, _)

        return structure_nullable

    def union_unstructure(tp: Any) -> Callable[[Any], Any]:
        args = [a for a in typing.get_args(tp) if a is not Unset and a is not type(None)]
        rest = args[0] if len(args) == 1 else Union[tuple(args)]
        if rest in UNIONS:
            inner = spec_unstructure(UNIONS[rest])
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

    conv.register_structure_hook_factory(_is_union, union_structure)
    conv.register_unstructure_hook_factory(_is_union, union_unstructure)

    # -- Classes ----------------------------------------------------------------------------------

    def field_hook(a: attrs.Attribute) -> Optional[Callable[[Any, Any], Any]]:
        """The structure hook of one field, with its wire markers applied (or None: the default)."""
        rules = _wire_meta(a)
        fmt = rules.get("fmt")
        default_on_error = lenient and rules.get("default_on_error")
        skip_invalid = lenient and rules.get("skip_invalid_items")
        on_null = rules.get("default_on_null")
        if not (fmt or default_on_error or skip_invalid or on_null):
            return None
        tp = a.type
        base = conv.get_structure_hook(tp)

        if on_null:
            empty: Callable[[], Any] = dict if any(_is_dict(t) for t in _members(tp)) else list

            def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
                # spec SCHEMA-18: an explicit null is the empty value, in both modes.
                return empty() if v is None else _b(v, t)

        if fmt:
            low, high = _FORMATS[fmt]

            def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
                out = _b(v, t)
                if type(out) is int and not low <= out <= high:
                    raise ValueError(f"{out} is out of range for {fmt}")
                return out

        if skip_invalid:
            list_types = [t for t in typing.get_args(tp) or (tp,) if _is_list(t)] or [tp]
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
            fallback: Any = [] if a.default is attrs.NOTHING and _is_list(tp) else UNSET

            def base(v: Any, t: Any, _b: Callable[..., Any] = base) -> Any:  # noqa: F811
                try:
                    out = _b(v, t)
                except Exception:  # noqa: BLE001 - spec SCHEMA-11: a malformed marked field is absent
                    return fallback
                # An undefined enum value is a malformed marked field too (ToolCall.kind).
                return fallback if isinstance(out, WireEnum) and not out.defined else out

        return base

    def flatten_hooks(cl: type) -> Tuple[Callable[[Any, Any], Any], Callable[[Any], Any]]:
        """Hooks for a class with a flattened union field: its keys sit beside the class's own."""
        own = [a for a in _fields(cl) if not _wire_meta(a).get("flatten")]
        (flat,) = [a for a in _fields(cl) if _wire_meta(a).get("flatten")]
        own_keys = {wire_name(a.name): a for a in own}
        flat_structure = conv.get_structure_hook(flat.type)
        flat_unstructure = conv.get_unstructure_hook(flat.type)
        own_hooks = {a.name: field_hook(a) or conv.get_structure_hook(a.type) for a in own}

        def structure(value: Any, _: Any = None) -> Any:
            if type(value) is not dict:
                raise _expected("an object", value)
            kwargs: Dict[str, Any] = {}
            errors: List[Tuple[str, str]] = []
            for key, a in own_keys.items():
                if key in value:
                    try:
                        kwargs[a.name] = own_hooks[a.name](value[key], a.type)
                    except Exception as exc:  # noqa: BLE001
                        if not detailed:
                            raise
                        errors += [(f".{key}{p}", m) for p, m in _relative_errors(exc)]
                elif a.default is attrs.NOTHING:
                    errors.append((f".{key}", "required key is missing"))
            rest = {k: v for k, v in value.items() if k not in own_keys}
            try:
                kwargs[flat.name] = flat_structure(rest, flat.type)
            except Exception as exc:  # noqa: BLE001
                if not detailed:
                    raise
                errors += _relative_errors(exc)
            if errors:
                raise _WireError(errors)
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

    def class_structure(cl: type) -> Callable[[Any, Any], Any]:
        special = _SPECIAL.get(cl.__qualname__) if cl.__module__.startswith(_SCHEMA) else None
        if special is not None:
            return special[0](conv, strict)
        if any(_wire_meta(a).get("flatten") for a in _fields(cl)):
            return flatten_hooks(cl)[0]
        overrides = {}
        for a in _fields(cl):
            hook = field_hook(a)
            overrides[a.name] = override(rename=wire_name(a.name), struct_hook=hook)
        # mypy matches **overrides against the _cattrs_* flags too; its keys are field names.
        generated: Callable[[Any, Any], Any] = make_dict_structure_fn(cl, conv, **overrides)  # type: ignore[arg-type]

        def structure(value: Any, _: Any = None) -> Any:
            if type(value) is not dict:
                raise _expected("an object", value)
            return generated(value, cl)

        return structure

    def class_unstructure(cl: type) -> Callable[[Any], Any]:
        special = _SPECIAL.get(cl.__qualname__) if cl.__module__.startswith(_SCHEMA) else None
        if special is not None:
            return special[1](conv)
        if cl is Unknown:
            return lambda obj: obj.raw
        if any(_wire_meta(a).get("flatten") for a in _fields(cl)):
            return flatten_hooks(cl)[1]
        overrides = {a.name: override(rename=wire_name(a.name)) for a in _fields(cl)}
        # Optional fields default to UNSET, so "omit if default" is "omit if absent".
        # mypy matches **overrides against the _cattrs_* flags too; its keys are field names.
        return make_dict_unstructure_fn(cl, conv, _cattrs_omit_if_default=True, **overrides)  # type: ignore[arg-type]

    conv.register_structure_hook_factory(attrs.has, class_structure)
    conv.register_unstructure_hook_factory(attrs.has, class_unstructure)
    return conv


# -- The one irregular shape ----------------------------------------------------------------------


def _set_config_option_structure(conv: cattrs.Converter, strict: bool) -> Callable[[Any, Any], Any]:
    # spec SCHEMA-08, CONFIG-18: `type: "boolean"` requires a boolean value; without `type` (or
    # with an unknown one) a string value is a select value id.
    cl = schema.SetSessionConfigOptionRequest
    allowed = {"sessionId", "configId", "value", "type", "_meta"}
    meta_hook = conv.get_structure_hook(schema.Meta)

    def structure(value: Any, _: Any = None) -> Any:
        if type(value) is not dict:
            raise _expected("an object", value)
        errors: List[Tuple[str, str]] = []
        kwargs: Dict[str, Any] = {}
        for key, attr in (("sessionId", "session_id"), ("configId", "config_id")):
            if key not in value:
                errors.append((f".{key}", "required key is missing"))
            elif type(value[key]) is not str:
                errors.append((f".{key}", str(_expected("a string", value[key]))))
            else:
                kwargs[attr] = value[key]
        if "value" not in value:
            errors.append((".value", "required key is missing"))
        elif value.get("type") == "boolean":
            if type(value["value"]) is bool:
                kwargs["value"] = value["value"]
            else:
                errors.append(
                    (".value", str(_expected('a boolean (type is "boolean")', value["value"])))
                )
        elif type(value["value"]) is str:
            kwargs["value"] = value["value"]
        else:
            errors.append((".value", str(_expected("a string value id", value["value"]))))
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
            raise _WireError(errors)
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

# -- The converters and the public functions ------------------------------------------------------

#: The converters by mode ``(strict, detailed)``, each built on first use: a live peer needs the
#: lenient one (its detailed twin only on a failure), the oracle the strict ones.
_CONVERTERS: Dict[Tuple[bool, bool], cattrs.Converter] = {}


def _converter(strict: bool, detailed: bool) -> cattrs.Converter:
    conv = _CONVERTERS.get((strict, detailed))
    if conv is None:
        built = _make_converter(strict=strict, detailed=detailed)
        conv = _CONVERTERS.setdefault((strict, detailed), built)
    return conv


_LENIENT = _converter(strict=False, detailed=False)


@overload
def decode(data: Any, type_: Type[T], *, strict: bool = False, root: str = "$") -> T: ...


# A union alias (``schema.ContentBlock``, ``schema.McpServer``) is no ``Type[T]`` to a type checker:
# decoding one gives one of its variants, typed ``Any``.
@overload
def decode(data: Any, type_: Any, *, strict: bool = False, root: str = "$") -> Any: ...


def decode(data: Any, type_: Any, *, strict: bool = False, root: str = "$") -> Any:
    """Build a model of ``type_`` from wire JSON, or raise ``DecodeError`` with wire paths.

    ``strict=False`` (live peers) follows the schema's leniency markers; ``strict=True`` (the
    oracle) reports every deviation. ``root`` prefixes error paths (``"params"``, ``"result"``).

    Each mode tries its fast converter first, which stops at the first error; only a value that
    fails is structured again by the detailed twin (same rules), to say where every error is.
    Most traffic is valid, so the cost of detail is paid on the error path alone.
    """
    try:
        return (_LENIENT if not strict else _converter(True, False)).structure(data, type_)
    except Exception:  # noqa: BLE001 - redo with the detailed twin to find every failing path
        pass
    try:
        return _converter(strict, True).structure(data, type_)
    except Exception as exc:  # noqa: BLE001
        raise DecodeError([(root + p, m) for p, m in _relative_errors(exc)]) from None


def encode(obj: Any, type_: Any = None) -> Any:
    """Wire JSON (dicts, lists, primitives) for a model, a list of models, or a union value.

    Pass ``type_`` when ``obj`` is a member of a tagged union and the tag must be written (a bare
    ``TextContent`` encodes without ``type``; ``encode(block, ContentBlock)`` includes it).
    """
    if type_ is None:
        return _LENIENT.unstructure(obj)
    return _LENIENT.unstructure(obj, type_)


if sys.version_info < (3, 10):  # pragma: no cover
    raise RuntimeError("acpref needs Python 3.10 or newer")
