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

Two modes, built by the one factory below (``_make_converter``) from the parts in
``acpref._codec``:

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

import sys
from typing import Any, Dict, List, Tuple, Type, TypeVar, overload

import cattrs

from ._codec import classes, primitives, unions
from ._codec.paths import UNDEFINED_VALUE, relative_errors, wire_name
from .errors import ErrorCode, RpcError

__all__ = ["DecodeError", "decode", "encode", "wire_name", "UNDEFINED_VALUE"]

T = TypeVar("T")


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


# -- The converter factory ------------------------------------------------------------------------


def _make_converter(*, strict: bool, detailed: bool) -> cattrs.Converter:
    """Build the wire converter. ``strict``: the oracle's mode; ``detailed``: report every error."""
    # spec-gap result-decoding: lenient for live peers (the schema's markers, unknown keys
    # ignored), strict for the oracle (everything reported); both strict about primitives.
    conv = cattrs.Converter(detailed_validation=detailed, forbid_extra_keys=strict)
    primitives.register(conv, detailed=detailed)
    unions.register(conv, strict=strict)
    classes.register(conv, strict=strict, detailed=detailed)
    return conv


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
        raise DecodeError([(root + p, m) for p, m in relative_errors(exc)]) from None


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
