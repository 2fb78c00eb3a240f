"""Building blocks shared by every schema module: the ``UNSET`` sentinel and the field helper.

Spec: schema.mdx (the JSON Schema of ACP v1, ``spec_notes/spec/schema.json``).

Every ACP type is an ``attrs`` frozen class whose attributes are the snake_case form of the wire
keys (``sessionId`` -> ``session_id``; ``_meta`` -> ``meta``). The codec renames mechanically.

Absent vs ``null``: an optional field that was absent on the wire holds ``UNSET``; a field that was
``null`` holds ``None``. The two stay apart everywhere, so that a message decodes and re-encodes to
the same JSON, and so that ``session_info_update`` can say "unchanged" (absent) apart from "clear"
(``null``). Defaults that the schema gives to absent fields (``loadSession`` is false, ...) are not
filled in here: the capability helpers in ``acpref._core.capabilities`` interpret them, in one
place.

What must not live here: validation rules (they live in ``acpref._core``) and wire logic (codec).
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Final, Literal, Optional, Tuple, Type

import attrs

__all__ = [
    "UNSET",
    "Unset",
    "WireEnum",
    "JsonObject",
    "JsonValue",
    "Meta",
    "Unknown",
    "UnionSpec",
    "UNIONS",
    "field",
    "is_set",
    "tagged_union",
    "keyed_union",
]

#: Any JSON value, passed through untouched (``rawInput``, ``ExtRequest``, error ``data``).
JsonValue = Any
#: A JSON object kept as a plain ``dict`` (``_meta`` and other free-form objects).
JsonObject = Dict[str, Any]


class Unset(enum.Enum):
    """The type of ``UNSET``: the field was absent on the wire (not the same as ``null``)."""

    UNSET = "UNSET"

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "UNSET"

    __str__ = __repr__


#: The value of every optional field that was not present on the wire.
UNSET: Final = Unset.UNSET


class WireEnum(str, enum.Enum):
    """The base of every string enum of the schema: each member *is* its wire string.

    ``str()`` and ``format()`` give the wire value (``"end_turn"``), on every Python version
    (3.11 changed ``str()`` of a ``str`` mixin enum to ``StopReason.END_TURN``); ``repr()``
    keeps the member's name. Comparisons with plain strings work as for any ``str``.
    """

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

#: The ``_meta`` extension object (spec extensibility.mdx): ``None`` when sent as ``null``.
# spec EXT-01: every schema object has an optional ``meta`` field of this type (``_meta``).
# spec EXT-02: any JSON object, never interpreted; every ``meta`` field is marked
# ``default_on_error``, so a malformed ``_meta`` reads as absent and never fails a message.
Meta = Optional[JsonObject]

#: attrs metadata key under which the codec finds its per-field wire rules.
WIRE: Final = "acpref.wire"


def field(
    *,
    required: bool = False,
    default_on_error: bool = False,
    skip_invalid_items: bool = False,
    default_on_null: bool = False,
    fmt: Optional[str] = None,
    flatten: bool = False,
    provisional: bool = False,
) -> Any:
    """Declare a schema field.

    ``required`` fields have no default; optional ones default to ``UNSET`` (absent on the wire).
    ``default_on_error`` and ``skip_invalid_items`` mirror the schema's
    ``x-deserialize-default-on-error`` and ``x-deserialize-skip-invalid-items`` markers: the lenient
    codec treats a malformed value as absent and drops malformed list items (spec SCHEMA-11); the
    strict codec reports them. ``default_on_null`` mirrors ``x-deserialize-default-on-null``: an
    explicit ``null`` is the empty value (``[]``, or ``{}`` for a map), in both modes, since it is
    what the value means, not a leniency (spec SCHEMA-18); a required field still rejects an
    omitted key (SCHEMA-19). ``fmt`` is the schema's integer format (``uint16``, ``uint32``,
    ``uint64``, ``int32``, ``int64``): the codec enforces its range, also on the integer member of
    a union such as ``RequestId``. ``flatten`` marks a field whose members sit at the level of the
    enclosing object on the wire (the schema's inline ``oneOf``/``anyOf``). ``provisional`` marks a
    field of a stable type whose shape comes from the unstable schema (``PROVISIONAL`` in
    ``acpref.schema``): the parity test compares it with ``schema.unstable.json``.
    """
    metadata = {
        WIRE: {
            "default_on_error": default_on_error,
            "skip_invalid_items": skip_invalid_items,
            "default_on_null": default_on_null,
            "fmt": fmt,
            "flatten": flatten,
            "provisional": provisional,
        }
    }
    if required:
        return attrs.field(metadata=metadata)
    return attrs.field(default=UNSET, metadata=metadata)


def is_set(value: object) -> bool:
    """True when an optional field was present on the wire (even as ``null``)."""
    return value is not UNSET


@attrs.frozen(kw_only=True)
class Unknown:
    """A union variant this version of ACP does not define, kept exactly as received.

    Spec: schema.json SCHEMA-10: an unknown elicitation mode, action, property type or item type
    is never read as a known variant, and its raw payload is preserved when stored or forwarded.
    ``raw`` is the whole wire object, tag included; encoding gives it back unchanged.
    """

    raw: JsonObject
    """The whole wire object, its tag included, as received; encoding writes it back unchanged."""


@attrs.frozen(kw_only=True)
class UnionSpec:
    """How the codec tells the variants of one schema union apart on the wire.

    A *tagged* union names a wire key (``tag``) whose string value picks the variant; each tagged
    variant class carries that value as a class constant named like the key in snake_case
    (``TextContent.type == "text"``, ``AgentMessageChunk.session_update == "agent_message_chunk"``).
    ``untagged`` is the variant used when the key is absent (a stdio MCP server, an agent auth
    method), and when its value is unknown: the schema's untagged branch does not constrain it.
    ``keep_unknown`` turns an unknown tag value into ``Unknown`` instead (checked first).
    A *keyed* union has no tag: the first variant whose required key is present wins.
    """

    tag: Optional[str]
    tag_attr: Optional[str]
    by_tag: Dict[str, type]
    untagged: Optional[type] = None
    keep_unknown: bool = False
    by_key: Tuple[Tuple[str, type], ...] = ()


#: Every schema union, by the ``Union[...]`` object used in annotations. Read by the codec.
UNIONS: Dict[Any, UnionSpec] = {}


def _snake(wire_key: str) -> str:
    out = []
    for ch in wire_key:
        if ch.isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def tagged_union(
    union: Any,
    *,
    tag: str,
    untagged: Optional[Type[Any]] = None,
    keep_unknown: bool = False,
) -> Any:
    """Register ``union`` as tagged by the wire key ``tag``; returns ``union`` unchanged.

    Called as a statement after the alias (``X = Union[...]`` then ``tagged_union(X, ...)``), so
    that type checkers see ``X`` as a type alias.
    """
    attr = _snake(tag)
    by_tag = {}
    for variant in union.__args__:
        value = getattr(variant, attr, None)
        if isinstance(value, str):
            by_tag[value] = variant
        elif variant is Unknown and keep_unknown:
            continue
        elif variant is not untagged:
            raise TypeError(f"{variant.__name__} has no {attr!r} tag constant")
    UNIONS[union] = UnionSpec(
        tag=tag,
        tag_attr=attr,
        by_tag=by_tag,
        untagged=untagged,
        keep_unknown=keep_unknown,
    )
    return union


def keyed_union(union: Any, *by_key: Tuple[str, Type[Any]]) -> Any:
    """Register an untagged ``union`` whose variants are told apart by a required key."""
    UNIONS[union] = UnionSpec(tag=None, tag_attr=None, by_tag={}, by_key=tuple(by_key))
    return union
