"""Elicitation: the agent asks the user, through the client, for a form's answers or a URL visit.

Spec: elicitation.mdx; clauses ELICIT-01 .. ELICIT-38, SCHEMA-10, SCHEMA-17.

The request is one flat object on the wire: ``message`` and ``_meta``, a ``mode`` (``form`` or
``url``) that brings its own keys, and a *scope* (``sessionId`` with an optional ``toolCallId``,
or ``requestId``) flattened beside them. Here that is ``CreateElicitationRequest.mode`` holding an
``ElicitationFormMode`` or ``ElicitationUrlMode``, each with a ``scope`` field; the codec flattens
both. The response flattens its ``action`` the same way.

The form's requested schema (its property types) is in ``elicitation_form``.
Unknown modes, actions, property types and multi-select item types decode to ``Unknown`` with
the raw payload kept, never to a known variant (spec SCHEMA-10).
"""

from typing import ClassVar, Dict, List, Tuple, Union

import attrs

from ._base import Meta, Unknown, Unset, field, keyed_union, tagged_union
from .elicitation_form import ElicitationSchema
from .identifiers import ElicitationId, RequestId, SessionId, ToolCallId

__all__ = [
    "ElicitationSessionScope",
    "ElicitationRequestScope",
    "ElicitationScope",
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
    """The session this elicitation is tied to."""
    tool_call_id: ToolCallId | None | Unset = field(default_on_error=True)
    """Optional tool call within the session.

    Optional. Omitted and ``null`` are equivalent and mean the elicitation is scoped to the session
    without a specific tool call.
    """


@attrs.frozen(kw_only=True)
class ElicitationRequestScope:
    """An elicitation scoped to a JSON-RPC request outside any session.

    Spec: elicitation.mdx (Creating an elicitation); ELICIT-09
    """

    request_id: RequestId = field(required=True, fmt="int64")  # spec RPC-02: integer ids are int64
    """The request this elicitation is tied to."""


#: Where an elicitation belongs: told apart by ``sessionId`` or ``requestId`` (not a ``$defs``
#: entry; the schema writes this ``anyOf`` inline in each mode).
ElicitationScope = Union[ElicitationSessionScope, ElicitationRequestScope]
keyed_union(
    ElicitationScope, ("sessionId", ElicitationSessionScope), ("requestId", ElicitationRequestScope)
)


# -- The request ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ElicitationFormMode:
    """Form mode: the client renders a form from ``requested_schema``.

    Spec: elicitation.mdx (Form mode); ELICIT-08, ELICIT-15
    """

    mode: ClassVar[str] = "form"

    requested_schema: ElicitationSchema = field(required=True)
    """A JSON Schema describing the form fields to present to the user."""
    scope: ElicitationScope = field(required=True, flatten=True)
    """What the elicitation belongs to: a session (``sessionId``, with an optional ``toolCallId``)
    or a request outside any session (``requestId``). Its keys sit in the request object itself.
    """


@attrs.frozen(kw_only=True)
class ElicitationUrlMode:
    """URL mode: the client asks consent, then opens ``url`` out of band.

    Spec: elicitation.mdx (URL mode); ELICIT-08, ELICIT-17, ELICIT-24
    """

    mode: ClassVar[str] = "url"

    # spec ELICIT-17: elicitationId and url, both required (the rules check the URI).
    elicitation_id: ElicitationId = field(required=True)
    """The unique identifier for this elicitation."""
    url: str = field(required=True)
    """The URL to direct the user to."""
    scope: ElicitationScope = field(required=True, flatten=True)
    """What the elicitation belongs to: a session (``sessionId``, with an optional ``toolCallId``)
    or a request outside any session (``requestId``). Its keys sit in the request object itself.
    """


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
    """A human-readable message describing what input is needed."""
    mode: ElicitationMode = field(required=True, flatten=True)
    """How the user is asked: through a form or a URL, tagged by ``mode``. There is no default mode,
    and an unknown one is kept raw. The mode's keys, and its scope's, sit in the request object
    itself.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


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
    """The user-provided content, if any, as an object matching the requested schema."""


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

    action: ElicitationAction = field(required=True, flatten=True)
    """What the user did: ``accept`` (with the form's ``content``), ``decline`` or ``cancel``,
    tagged by ``action``; an unknown action is kept raw. Its keys sit in the response object itself.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """


@attrs.frozen(kw_only=True)
class CompleteElicitationNotification:
    """Params of ``elicitation/complete``: a URL elicitation's out-of-band interaction finished.

    Spec: elicitation.mdx (URL completion); ELICIT-26 .. ELICIT-28
    """

    elicitation_id: ElicitationId = field(required=True)
    """The ID of the elicitation that completed."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.

    Optional. Omitted and ``null`` are equivalent and mean no metadata.
    """
