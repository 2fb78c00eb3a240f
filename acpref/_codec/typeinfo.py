"""What an annotation is, as the converter's hook factories ask it; a field's wire markers."""

from __future__ import annotations

import enum
import typing
from typing import Any, Dict, List, Tuple

import attrs
import cattrs

from ..schema._base import WIRE, Unset


def is_list(tp: Any) -> bool:
    return typing.get_origin(tp) in (list, List)


def is_dict(tp: Any) -> bool:
    return typing.get_origin(tp) in (dict, Dict)


def members(tp: Any) -> Tuple[Any, ...]:
    """The members of a union type, or the type itself."""
    return typing.get_args(tp) if is_union(tp) else (tp,)


def is_union(tp: Any) -> bool:
    return cattrs._compat.is_union_type(tp)  # type: ignore[attr-defined]


def is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum) and tp is not Unset


def fields(cl: type) -> Tuple[attrs.Attribute, ...]:
    return attrs.fields(cl)


def wire_meta(a: attrs.Attribute) -> Dict[str, Any]:
    """A field's wire markers (``acpref.schema._base.field``): fmt, flatten, the leniencies."""
    return a.metadata.get(WIRE, {})
