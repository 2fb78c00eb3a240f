"""Elicitation: the agent asks the user, through the client, for a form's answers or a URL visit.

Spec: elicitation.mdx; clauses ELICIT-01 .. ELICIT-38, SCHEMA-10, SCHEMA-17.

The request is one flat object on the wire: ``message`` and ``_meta``, a ``mode`` (``form`` or
``url``) that brings its own keys, and a *scope* (``sessionId`` with an optional ``toolCallId``,
or ``requestId``) flattened beside them. Here that is ``CreateElicitationRequest.mode`` holding an
``ElicitationFormMode`` or ``ElicitationUrlMode``, each with a ``scope`` field; the codec flattens
both. The response flattens its ``action`` the same way.

Unknown modes, actions, property types and multi-select item types decode to ``Unknown`` with
the raw payload kept, never to a known variant (spec SCHEMA-10).
"""

from typing import ClassVar, Dict, List, Tuple, Union

import attrs

from ._base import Meta, Unknown, Unset, WireEnum, field, keyed_union, tagged_union
from .identifiers import ElicitationId, RequestId, SessionId, ToolCallId

__all__ = [
    "ElicitationSessionScope",
    "ElicitationRequestScope",
    "ElicitationScope",
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
    "ElicitationFormMode",
    "ElicitationUrlMode",
    "ElicitationMode",
    "CreateElicitationRequest",
    "ElicitationContentValue",
    "ElicitationAcceptAction",
    "ElicitationDeclineAction",
    "ElicitationCancelAction",
    "ElicitationAction",
    "CreateElicitationResponse",
    "CompleteElicitationNotification",
]


# -- Scope ----------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ElicitationSessionScope:
    """An elicitation scoped to a session, optionally to one of its tool calls.

    Spec: elicitation.mdx (Creating an elicitation); ELICIT-09
    """

    session_id: SessionId = field(required=True)
    tool_call_id: ToolCallId | None | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ElicitationRequestScope:
    """An elicitation scoped to a JSON-RPC request outside any session.

    Spec: elicitation.mdx (Creating an elicitation); ELICIT-09
    """

    request_id: RequestId = field(required=True, fmt="int64")  # spec RPC-02: integer ids are int64


#: Where an elicitation belongs: told apart by ``sessionId`` or ``requestId`` (not a ``$defs``
#: entry; the schema writes this ``anyOf`` inline in each mode).
ElicitationScope = Union[ElicitationSessionScope, ElicitationRequestScope]
keyed_union(
    ElicitationScope, ("sessionId", ElicitationSessionScope), ("requestId", ElicitationRequestScope)
)


# -- Form schema ----------------------------------------------------------------------------------


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
    title: str = field(required=True)
    description: str | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class StringPropertySchema:
    """A string form field (with format, pattern or a set of choices).

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "string"

    title: str | None | Unset = field(default_on_error=True)
    description: str | None | Unset = field(default_on_error=True)
    min_length: int | None | Unset = field(fmt="uint32")
    max_length: int | None | Unset = field(fmt="uint32")
    pattern: str | None | Unset = field()
    format: StringFormat | None | Unset = field()
    default: str | None | Unset = field(default_on_error=True)
    enum: List[str] | None | Unset = field()
    one_of: List[EnumOption] | None | Unset = field()
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class NumberPropertySchema:
    """A floating-point number form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "number"

    title: str | None | Unset = field(default_on_error=True)
    description: str | None | Unset = field(default_on_error=True)
    minimum: float | None | Unset = field()
    maximum: float | None | Unset = field()
    default: float | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class IntegerPropertySchema:
    """An integer form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "integer"

    title: str | None | Unset = field(default_on_error=True)
    description: str | None | Unset = field(default_on_error=True)
    minimum: int | None | Unset = field(fmt="int64")
    maximum: int | None | Unset = field(fmt="int64")
    default: int | None | Unset = field(default_on_error=True, fmt="int64")
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class BooleanPropertySchema:
    """A boolean form field.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "boolean"

    title: str | None | Unset = field(default_on_error=True)
    description: str | None | Unset = field(default_on_error=True)
    default: bool | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class StringMultiSelectItems:
    """Multi-select items given as a list of strings.

    Spec: elicitation.mdx; ELICIT-11
    """

    type: ClassVar[str] = "string"

    enum: List[str] = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class TitledMultiSelectItems:
    """Multi-select items given as titled choices (no ``type`` key; an ``anyOf`` list).

    Spec: elicitation.mdx; ELICIT-11
    """

    any_of: List[EnumOption] = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


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
    description: str | None | Unset = field(default_on_error=True)
    min_items: int | None | Unset = field(fmt="uint64")
    max_items: int | None | Unset = field(fmt="uint64")
    items: MultiSelectItems = field(required=True)
    default: List[str] | None | Unset = field(default_on_error=True, skip_invalid_items=True)
    meta: Meta | Unset = field(default_on_error=True)


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
    title: str | None | Unset = field(default_on_error=True)
    properties: Dict[str, ElicitationPropertySchema] | Unset = field()
    required: List[str] | None | Unset = field()
    description: str | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


# -- The request ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ElicitationFormMode:
    """Form mode: the client renders a form from ``requested_schema``.

    Spec: elicitation.mdx (Form mode); ELICIT-08, ELICIT-15
    """

    mode: ClassVar[str] = "form"

    requested_schema: ElicitationSchema = field(required=True)
    #: ``sessionId`` (+ ``toolCallId``) or ``requestId``, flattened into the request object.
    scope: ElicitationScope = field(required=True, flatten=True)


@attrs.frozen(kw_only=True)
class ElicitationUrlMode:
    """URL mode: the client asks consent, then opens ``url`` out of band.

    Spec: elicitation.mdx (URL mode); ELICIT-08, ELICIT-17, ELICIT-24
    """

    mode: ClassVar[str] = "url"

    # spec ELICIT-17: elicitationId and url, both required (the rules check the URI).
    elicitation_id: ElicitationId = field(required=True)
    url: str = field(required=True)
    #: ``sessionId`` (+ ``toolCallId``) or ``requestId``, flattened into the request object.
    scope: ElicitationScope = field(required=True, flatten=True)


#: The mode of an elicitation request, tagged by ``mode``: there is no default mode (spec
#: ELICIT-08), and an unknown mode is kept raw (SCHEMA-10).
# spec ELICIT-08: the "mode" key is required (no default): a request without it does not decode.
ElicitationMode = Union[ElicitationFormMode, ElicitationUrlMode, Unknown]
tagged_union(ElicitationMode, tag="mode", keep_unknown=True)


@attrs.frozen(kw_only=True)
class CreateElicitationRequest:
    """Params of ``elicitation/create``: ask the user for input through a form or a URL.

    Spec: elicitation.mdx (Creating an elicitation)
    """

    message: str = field(required=True)
    #: The mode with its own keys and the scope, flattened into this object.
    mode: ElicitationMode = field(required=True, flatten=True)
    meta: Meta | Unset = field(default_on_error=True)


# -- The response ---------------------------------------------------------------------------------

#: One value of accepted form content: string, integer, number, boolean or list of strings.
#: Spec: elicitation.mdx (Responses); SCHEMA-17.
# spec SCHEMA-17: string, integer, number, boolean or array of strings; nothing else.
ElicitationContentValue = Union[str, int, float, bool, List[str]]


@attrs.frozen(kw_only=True)
class ElicitationAcceptAction:
    """The user accepted; ``content`` holds the form answers (``null`` and absent are equal).

    Spec: elicitation.mdx (Responses); ELICIT-20, ELICIT-21
    """

    action: ClassVar[str] = "accept"

    # spec ELICIT-21: absent (UNSET) and null (None) both mean no content.
    content: Dict[str, ElicitationContentValue] | None | Unset = field()


@attrs.frozen(kw_only=True)
class ElicitationDeclineAction:
    """The user explicitly declined (not a ``$defs`` entry: written inline in the schema).

    Spec: elicitation.mdx (Responses); ELICIT-20
    """

    action: ClassVar[str] = "decline"
    # spec ELICIT-21: content means something only for accept: one sent with a decline is
    # ignored, never read and never reported (the codec drops these keys, strict mode included).
    ignored_keys: ClassVar[Tuple[str, ...]] = ("content",)


@attrs.frozen(kw_only=True)
class ElicitationCancelAction:
    """The user dismissed the request without choosing (not a ``$defs`` entry).

    Spec: elicitation.mdx (Responses); ELICIT-20
    """

    action: ClassVar[str] = "cancel"
    # spec ELICIT-21: as for decline, content sent with a cancel is ignored.
    ignored_keys: ClassVar[Tuple[str, ...]] = ("content",)


#: The user's answer, tagged by ``action``; an unknown action is kept raw (SCHEMA-10).
ElicitationAction = Union[
    ElicitationAcceptAction,
    ElicitationDeclineAction,
    ElicitationCancelAction,
    Unknown,
]
tagged_union(ElicitationAction, tag="action", keep_unknown=True)


@attrs.frozen(kw_only=True)
class CreateElicitationResponse:
    """Result of ``elicitation/create``: accept (with content), decline or cancel.

    Spec: elicitation.mdx (Responses)
    """

    #: The action with its own keys, flattened into this object.
    action: ElicitationAction = field(required=True, flatten=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class CompleteElicitationNotification:
    """Params of ``elicitation/complete``: a URL elicitation's out-of-band interaction finished.

    Spec: elicitation.mdx (URL completion); ELICIT-26 .. ELICIT-28
    """

    elicitation_id: ElicitationId = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)
