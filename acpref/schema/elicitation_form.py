"""Form mode's requested schema: the flat JSON Schema subset a form elicitation asks for.

Spec: elicitation.mdx (Form mode); clauses ELICIT-11 .. ELICIT-14, SCHEMA-10.

A form's ``requestedSchema`` is an object of named properties, each a string, number, integer,
boolean or multi-select property, tagged by ``type``. An unknown property type, or multi-select
item type, decodes to ``Unknown`` with its raw payload kept (spec SCHEMA-10).
"""

from typing import ClassVar, Dict, List, Union

import attrs

from ._base import Meta, Unknown, Unset, WireEnum, field, tagged_union

__all__ = [
    "StringFormat",
    "EnumOption",
    "StringPropertySchema",
    "NumberPropertySchema",
    "IntegerPropertySchema",
    "BooleanPropertySchema",
    "StringMultiSelectItems",
    "TitledMultiSelectItems",
    "MultiSelectItems",
    "MultiSelectPropertySchema",
    "ElicitationPropertySchema",
    "ElicitationSchemaType",
    "ElicitationSchema",
]


class StringFormat(WireEnum):
    """The format of a string form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    EMAIL = "email"
    URI = "uri"
    DATE = "date"
    DATE_TIME = "date-time"


@attrs.frozen(kw_only=True)
class EnumOption:
    """A titled choice of an enum form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    const: str = field(required=True)
    """The constant value for this option."""
    title: str = field(required=True)
    """Human-readable title for this option."""
    description: str | None | Unset = field(default_on_error=True)
    """Human-readable description.

    Optional. Omitted and ``null`` are equivalent and mean no description is provided.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class StringPropertySchema:
    """A string form field (with format, pattern or a set of choices).

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "string"

    title: str | None | Unset = field(default_on_error=True)
    """Optional title for the property.

    Optional. Omitted and ``null`` are equivalent and mean no title is provided.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Human-readable description.

    Optional. Omitted and ``null`` are equivalent and mean no description is provided.
    """
    min_length: int | None | Unset = field(fmt="uint32")
    """Minimum string length.

    Optional. Omitted and ``null`` are equivalent and mean there is no minimum length constraint.
    """
    max_length: int | None | Unset = field(fmt="uint32")
    """Maximum string length.

    Optional. Omitted and ``null`` are equivalent and mean there is no maximum length constraint.
    """
    pattern: str | None | Unset = field()
    """Pattern the string must match.

    Optional. Omitted and ``null`` are equivalent and mean there is no pattern constraint.
    """
    format: StringFormat | None | Unset = field()
    """String format.

    Optional. Omitted and ``null`` are equivalent and mean there is no format constraint.
    """
    default: str | None | Unset = field(default_on_error=True)
    """Default value.

    Optional. Omitted and ``null`` are equivalent and mean no default value is provided.
    """
    enum: List[str] | None | Unset = field()
    """Enum values for untitled single-select enums. Optional. Omitted and ``null`` are equivalent
    and mean no untitled single-select choices are declared by ``enum``.
    """
    one_of: List[EnumOption] | None | Unset = field()
    """Titled enum options for titled single-select enums. Optional. Omitted and ``null`` are
    equivalent and mean no titled single-select choices are declared by ``oneOf``.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class NumberPropertySchema:
    """A floating-point number form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "number"

    title: str | None | Unset = field(default_on_error=True)
    """Optional title for the property.

    Optional. Omitted and ``null`` are equivalent and mean no title is provided.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Human-readable description.

    Optional. Omitted and ``null`` are equivalent and mean no description is provided.
    """
    minimum: float | None | Unset = field()
    """Minimum value (inclusive).

    Optional. Omitted and ``null`` are equivalent and mean there is no inclusive lower bound.
    """
    maximum: float | None | Unset = field()
    """Maximum value (inclusive).

    Optional. Omitted and ``null`` are equivalent and mean there is no inclusive upper bound.
    """
    default: float | None | Unset = field(default_on_error=True)
    """Default value.

    Optional. Omitted and ``null`` are equivalent and mean no default value is provided.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class IntegerPropertySchema:
    """An integer form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "integer"

    title: str | None | Unset = field(default_on_error=True)
    """Optional title for the property.

    Optional. Omitted and ``null`` are equivalent and mean no title is provided.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Human-readable description.

    Optional. Omitted and ``null`` are equivalent and mean no description is provided.
    """
    minimum: int | None | Unset = field(fmt="int64")
    """Minimum value (inclusive).

    Optional. Omitted and ``null`` are equivalent and mean there is no inclusive lower bound.
    """
    maximum: int | None | Unset = field(fmt="int64")
    """Maximum value (inclusive).

    Optional. Omitted and ``null`` are equivalent and mean there is no inclusive upper bound.
    """
    default: int | None | Unset = field(default_on_error=True, fmt="int64")
    """Default value.

    Optional. Omitted and ``null`` are equivalent and mean no default value is provided.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class BooleanPropertySchema:
    """A boolean form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "boolean"

    title: str | None | Unset = field(default_on_error=True)
    """Optional title for the property.

    Optional. Omitted and ``null`` are equivalent and mean no title is provided.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Human-readable description.

    Optional. Omitted and ``null`` are equivalent and mean no description is provided.
    """
    default: bool | None | Unset = field(default_on_error=True)
    """Default value.

    Optional. Omitted and ``null`` are equivalent and mean no default value is provided.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class StringMultiSelectItems:
    """Multi-select items given as a list of strings.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "string"

    enum: List[str] = field(required=True)
    """Allowed enum values."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class TitledMultiSelectItems:
    """Multi-select items given as titled choices (no ``type`` key; an ``anyOf`` list).

    Spec: elicitation.mdx; ELICIT-11
    """

    any_of: List[EnumOption] = field(required=True)
    """Titled enum options."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


#: The items of a multi-select field: ``type: "string"`` with an ``enum``, titled choices (no
#: ``type``), or an unknown item type kept raw (spec SCHEMA-10).
MultiSelectItems = Union[StringMultiSelectItems, TitledMultiSelectItems, Unknown]
tagged_union(MultiSelectItems, tag="type", untagged=TitledMultiSelectItems, keep_unknown=True)


@attrs.frozen(kw_only=True)
class MultiSelectPropertySchema:
    """A multi-select (array of strings) form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "array"

    title: str | None | Unset = field(default_on_error=True)
    """Optional title for the property.

    Optional. Omitted and ``null`` are equivalent and mean no title is provided.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Human-readable description.

    Optional. Omitted and ``null`` are equivalent and mean no description is provided.
    """
    min_items: int | None | Unset = field(fmt="uint64")
    """Minimum number of items to select.

    Optional. Omitted and ``null`` are equivalent and mean there is no minimum selection count.
    """
    max_items: int | None | Unset = field(fmt="uint64")
    """Maximum number of items to select.

    Optional. Omitted and ``null`` are equivalent and mean there is no maximum selection count.
    """
    items: MultiSelectItems = field(required=True)
    """The items definition describing allowed values."""
    default: List[str] | None | Unset = field(default_on_error=True, skip_invalid_items=True)
    """Default selected values.

    Optional. Omitted and ``null`` are equivalent and mean no default selections are provided.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


#: The schema of one form field, tagged by ``type``; an unknown type is kept raw (SCHEMA-10).
# spec ELICIT-11: flat fields only: string, number, integer, boolean or a string multi-select
# (no nested object; the rules refuse one, elicitation._elicit).
ElicitationPropertySchema = Union[
    StringPropertySchema,
    NumberPropertySchema,
    IntegerPropertySchema,
    BooleanPropertySchema,
    MultiSelectPropertySchema,
    Unknown,
]
tagged_union(ElicitationPropertySchema, tag="type", keep_unknown=True)


class ElicitationSchemaType(WireEnum):
    """The type of an elicitation schema: always ``object``.

    Spec: elicitation.mdx; ELICIT-11
    """

    OBJECT = "object"


@attrs.frozen(kw_only=True)
class ElicitationSchema:
    """The flat object schema of a form elicitation (``type`` is ``object`` when absent).

    Spec: elicitation.mdx (Form mode); ELICIT-11
    """

    type: ElicitationSchemaType | Unset = field(default_on_error=True)
    """Type discriminator. Always ``"object"``."""
    title: str | None | Unset = field(default_on_error=True)
    """Optional title for the schema.

    Optional. Omitted and ``null`` are equivalent and mean no title is provided.
    """
    properties: Dict[str, ElicitationPropertySchema] | Unset = field()
    """Property definitions (must be primitive types)."""
    required: List[str] | None | Unset = field()
    """List of required property names.

    Optional. Omitted and ``null`` are equivalent and mean no property names are required.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Optional description of what this schema represents.

    Optional. Omitted and ``null`` are equivalent and mean no schema description is provided.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """
