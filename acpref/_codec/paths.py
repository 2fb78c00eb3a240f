"""Wire names, and decode errors carried with their paths in wire names (``.prompt[0].type``).

A hook raises ``WireError`` with paths relative to the value it structures; the containers above
prefix their key or index; ``acpref.codec.decode`` prefixes the root and raises ``DecodeError``.
cattrs' own exceptions are flattened the same way by ``relative_errors``.
"""

from __future__ import annotations

from typing import Any, List, Tuple

from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
)

#: The words of every decode error about a string this version does not define: an enum value
#: or a union's tag (the oracle fails those, or warns with --newer-spec: spec-gap undefined-value).
UNDEFINED_VALUE = "is not a value this version defines; expected one of"


def wire_name(attribute: str) -> str:
    """The wire key of a model attribute: camelCase, and ``meta`` is ``_meta`` (OVERVIEW-10)."""
    # spec OVERVIEW-10: every ACP key is the camelCase of its attribute (the schema's names).
    if attribute == "meta":
        return "_meta"
    head, *rest = attribute.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class WireError(Exception):
    """Errors found below some value, each with a path relative to it (``.key``, ``[3]``)."""

    def __init__(self, errors: List[Tuple[str, str]]) -> None:
        super().__init__(errors[0][1] if errors else "invalid value")
        self.errors = errors


def json_type(value: Any) -> str:
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


def expected(what: str, value: Any) -> TypeError:
    return TypeError(f"expected {what}, got {json_type(value)}")


def relative_errors(exc: BaseException) -> List[Tuple[str, str]]:
    """Flatten a structuring exception into ``(relative path, message)`` pairs in wire names."""
    if isinstance(exc, WireError):
        return exc.errors
    if isinstance(exc, ClassValidationError):
        out: List[Tuple[str, str]] = []
        with_notes, others = exc.group_exceptions()
        for sub, note in with_notes:
            key = wire_name(note.name)
            if isinstance(sub, KeyError) and sub.args == (key,):
                out.append((f".{key}", "required key is missing"))
                continue
            out += [(f".{key}{p}", m) for p, m in relative_errors(sub)]
        for sub in others:
            out += relative_errors(sub)
        return out
    if isinstance(exc, IterableValidationError):
        out = []
        with_index, others = exc.group_exceptions()
        for sub, at in with_index:
            out += [(f"[{at.index!r}]{p}", m) for p, m in relative_errors(sub)]
        for sub in others:
            out += relative_errors(sub)
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
