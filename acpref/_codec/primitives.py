"""Strict primitives, and JSON arrays and objects checked as such.

A string where an integer is due is an error, never coerced; ``true`` is not a number; a list is a
JSON array, not any iterable (cattrs' defaults would turn ``5`` into ``"5"`` and iterate a
string). Values that are only passed through (``_meta``, ``rawInput``) are not walked.
"""

from __future__ import annotations

import enum
import typing
from typing import Any, Callable, Dict, List, Type

import cattrs

from ..schema._base import WireEnum
from .paths import UNDEFINED_VALUE, WireError, expected, relative_errors
from .typeinfo import is_dict, is_enum, is_list

#: The integer formats of the schema, range-checked (a field's ``fmt`` marker).
FORMATS = {
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def structure_str(value: Any, tp: Any = str) -> Any:
    if tp is not str and is_enum(tp):
        # The schema's enums are ``str`` subclasses, and cattrs dispatches a class by its MRO
        # before anything else: every enum lands here, so this hook serves them too.
        return structure_enum(value, tp)
    if type(value) is str:
        return value
    raise expected("a string", value)


def structure_str_keeping(value: Any, tp: Any = str) -> Any:
    """``structure_str`` of the lenient mode: an undefined enum value is kept (see below)."""
    if tp is not str and is_enum(tp):
        return structure_enum(value, tp, keep_undefined=True)
    if type(value) is str:
        return value
    raise expected("a string", value)


def structure_enum(value: Any, cl: Type[enum.Enum], *, keep_undefined: bool = False) -> Any:
    if isinstance(value, cl):
        # A member already: what ``encode`` gives for an enum field (members are ``str``, json
        # writes their value), decoded in-process without passing through JSON.
        return value
    if type(value) is not str:
        raise expected("a string", value)
    member = cl._value2member_map_.get(value)
    if member is None:
        if keep_undefined and issubclass(cl, WireEnum):
            # spec-gap forward-compatible: a live peer keeps a value a newer v1 schema may
            # define (``stopReason: "paused"``) as the enum's stand-in, written back unchanged.
            return cl.undefined(value)
        choices = ", ".join(repr(m.value) for m in cl)
        raise ValueError(f"{value!r} {UNDEFINED_VALUE} {choices}")
    return member


def structure_int(value: Any, _: Any = None) -> int:
    # bool is a subclass of int in Python, but `true` is not a number in JSON.
    if type(value) is int:
        return value
    raise expected("an integer", value)


def structure_float(value: Any, _: Any = None) -> float:
    if type(value) is float or type(value) is int:
        return value  # kept as received, so that 5 re-encodes as 5
    raise expected("a number", value)


def structure_bool(value: Any, _: Any = None) -> bool:
    if type(value) is bool:
        return value
    raise expected("a boolean", value)


def structure_any(value: Any, _: Any = None) -> Any:
    return value


def structure_json_object(value: Any, _: Any = None) -> Dict[str, Any]:
    if type(value) is dict:
        return value
    raise expected("an object", value)


def identity(value: Any) -> Any:
    return value


#: Checks for the members of a union of primitives, and their names in an error.
PRIMITIVE_CHECKS: Dict[Any, Callable[[Any], bool]] = {
    str: lambda v: type(v) is str,
    int: lambda v: type(v) is int,
    float: lambda v: type(v) is float or type(v) is int,
    bool: lambda v: type(v) is bool,
    List[str]: lambda v: type(v) is list and all(type(x) is str for x in v),
}
PRIMITIVE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    List[str]: "array of strings",
}


def list_structure(conv: cattrs.Converter, tp: Any, detailed: bool) -> Callable[[Any, Any], Any]:
    """A list is a JSON array; ``detailed`` reports every failing item with its index."""
    (item_type,) = typing.get_args(tp) or (Any,)
    item = conv.get_structure_hook(item_type)

    if not detailed:

        def structure(value: Any, _: Any = None) -> List[Any]:
            if type(value) is not list:
                raise expected("an array", value)
            return [item(x, item_type) for x in value]

        return structure

    def structure_detailed(value: Any, _: Any = None) -> List[Any]:
        if type(value) is not list:
            raise expected("an array", value)
        out, errors = [], []
        for i, x in enumerate(value):
            try:
                out.append(item(x, item_type))
            except Exception as exc:  # noqa: BLE001 - every failure is reported with its index
                errors += [(f"[{i}]{p}", m) for p, m in relative_errors(exc)]
        if errors:
            raise WireError(errors)
        return out

    return structure_detailed


def dict_structure(conv: cattrs.Converter, tp: Any, detailed: bool) -> Callable[[Any, Any], Any]:
    """A dict is a JSON object; a ``Dict[str, Any]`` is passed through, not walked."""
    _, value_type = typing.get_args(tp)
    if value_type is Any:
        return structure_json_object
    hook = conv.get_structure_hook(value_type)

    def structure(value: Any, _: Any = None) -> Dict[str, Any]:
        if type(value) is not dict:
            raise expected("an object", value)
        out, errors = {}, []
        for k, v in value.items():
            try:
                out[k] = hook(v, value_type)
            except Exception as exc:  # noqa: BLE001
                if not detailed:
                    raise
                errors += [(f".{k}{p}", m) for p, m in relative_errors(exc)]
        if errors:
            raise WireError(errors)
        return out

    return structure


def register(conv: cattrs.Converter, *, detailed: bool, strict: bool = True) -> None:
    """Give ``conv`` the strict primitives, arrays and objects (the lenient mode, ``strict``
    false, keeps an enum value this version does not define)."""
    for tp, fn in (
        (str, structure_str if strict else structure_str_keeping),
        (int, structure_int),
        (float, structure_float),
        (bool, structure_bool),
    ):
        conv.register_structure_hook(tp, fn)
    # `Any` is not a class before Python 3.11: register it by predicate.
    conv.register_structure_hook_func(lambda t: t is Any, structure_any)
    conv.register_unstructure_hook_func(lambda t: t is Any, identity)

    # Enums are ``str`` subclasses (structured by ``structure_str``): json writes them as
    # their value, so they pass through.
    conv.register_unstructure_hook(enum.Enum, identity)

    # Lists are JSON arrays, checked as such (cattrs would iterate any iterable, even a string).
    conv.register_structure_hook_factory(is_list, lambda tp: list_structure(conv, tp, detailed))
    conv.register_structure_hook_factory(is_dict, lambda tp: dict_structure(conv, tp, detailed))
    # `_meta` and other free-form objects are passed through, not walked.
    conv.register_unstructure_hook_factory(
        lambda tp: is_dict(tp) and typing.get_args(tp)[1:] == (Any,), lambda tp: identity
    )
