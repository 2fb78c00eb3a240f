"""The JSON-RPC 2.0 envelope of ACP messages: requests, responses, notifications, errors.

Spec: overview.mdx (Communication Model, Error Handling); schema.json top-level ``anyOf``;
clauses OVERVIEW-01, OVERVIEW-08, OVERVIEW-11, RPC-01 .. RPC-09.

These models describe whole messages for readers, the oracle and tests. The live connection does
not build them on its hot path: it reads the envelope as a plain ``dict`` (it is five keys) and
decodes only ``params`` and ``result`` into the typed models of ``acpref.methods``. ``params`` and
``result`` are therefore kept here as raw JSON values.

The "Agent"/"Client" prefix names the *sender*: an ``AgentRequest`` is a request the agent sends
to the client (``fs/read_text_file``, ...), a ``ClientResponse`` is the client's answer to it.
"""

from typing import Union

import attrs

from ..errors import ErrorCode
from ._base import JsonValue, Unset, field, keyed_union
from .identifiers import RequestId

__all__ = [
    "ErrorCode",
    "Error",
    "AgentRequest",
    "ClientRequest",
    "AgentNotification",
    "ClientNotification",
    "ResultResponse",
    "ErrorResponse",
    "AgentResponse",
    "ClientResponse",
]


@attrs.frozen(kw_only=True)
class Error:
    """The error member of a failed JSON-RPC response: integer code, message, optional data.

    ``code`` is any integer (spec RPC-18: unknown codes are generic errors); ``data`` is any JSON.
    Spec: overview.mdx (Error Handling); RPC-09.
    """

    # spec OVERVIEW-08: a failed response's error has an integer code and a string message.
    # spec-gap error-meta: no _meta here (custom data goes in data): the schema's Error has none.
    code: int = field(required=True, fmt="int32")  # spec RPC-09: an integer (int32, ErrorCode)
    """A number indicating the error type that occurred. This must be an integer as defined in the
    JSON-RPC specification.
    """
    message: str = field(required=True)
    """A string providing a short description of the error. The message should be limited to a
    concise single sentence.
    """
    data: JsonValue | Unset = field(default_on_error=True)
    """Optional primitive or structured value that contains additional information about the error.
    This may include debugging information or context-specific details.
    """


@attrs.frozen(kw_only=True)
class _Request:
    id: RequestId = field(required=True, fmt="int64")  # spec RPC-02: integer ids are int64
    """The request id used to correlate the matching response."""
    method: str = field(required=True)
    """The method name to invoke."""
    params: JsonValue | Unset = field()
    """Method-specific request parameters."""


@attrs.frozen(kw_only=True)
class AgentRequest(_Request):
    """A JSON-RPC request that the agent sends to the client (``fs/*``, ``terminal/*``, ...).

    Spec: overview.mdx (Client methods); RPC-02.
    """


@attrs.frozen(kw_only=True)
class ClientRequest(_Request):
    """A JSON-RPC request that the client sends to the agent (``initialize``, ``session/*``, ...).

    Spec: overview.mdx (Agent methods); RPC-02.
    """


@attrs.frozen(kw_only=True)
class _Notification:
    method: str = field(required=True)
    """The notification method name."""
    params: JsonValue | Unset = field()
    """Method-specific notification parameters."""


@attrs.frozen(kw_only=True)
class AgentNotification(_Notification):
    """A JSON-RPC notification that the agent sends (``session/update``, ...); never answered.

    Spec: overview.mdx; OVERVIEW-09.
    """


@attrs.frozen(kw_only=True)
class ClientNotification(_Notification):
    """A JSON-RPC notification that the client sends (``session/cancel``, ...); never answered.

    Spec: overview.mdx; OVERVIEW-09.
    """


@attrs.frozen(kw_only=True)
class ResultResponse:
    """A successful response: the request's id and its ``result``. Spec: RPC-04, RPC-05."""

    id: RequestId = field(required=True, fmt="int64")  # spec RPC-02: integer ids are int64
    """The id of the request this response answers."""
    result: JsonValue = field(required=True)
    """Method-specific response data."""


@attrs.frozen(kw_only=True)
class ErrorResponse:
    """A failed response: the request's id (``null`` if unreadable) and the ``error``.

    Spec: RPC-04, RPC-05, RPC-10, RPC-11.
    """

    id: RequestId = field(required=True, fmt="int64")  # spec RPC-02: integer ids are int64
    """The id of the request this response answers."""
    error: Error = field(required=True)
    """Method-specific error data."""


#: A response the agent sends: exactly one of ``result`` / ``error``, told apart by which key is
#: present (strict decoding reports the other key if both are there). Spec: RPC-05.
AgentResponse = Union[ResultResponse, ErrorResponse]
keyed_union(AgentResponse, ("result", ResultResponse), ("error", ErrorResponse))
#: A response the client sends: the same shape as ``AgentResponse``. Spec: RPC-05.
ClientResponse = AgentResponse
