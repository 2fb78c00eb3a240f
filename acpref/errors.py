"""Error codes and exceptions: the wire registry apart from the exception classes.

Spec: schema.json ``ErrorCode`` and ``Error``; clauses RPC-09 .. RPC-18, CANCEL-05, CANCEL-07.

Three families live here:

* ``ErrorCode``: the registry of codes ACP names. Unknown codes are kept as plain integers
  wherever they travel (spec RPC-18), never rejected.
* ``RpcError``: an error *response*. A handler raises it to answer its request with an error; a
  caller receives it when the peer answered with one.
* ``ProtocolError``: a broken rule of the protocol, naming the clause and who broke it, in the
  manner of h11's Local/Remote protocol errors. ``LocalProtocolError`` is raised before we would
  send something that breaks a rule (nothing is sent); ``RemoteProtocolError`` reports that the
  peer broke one. Both carry the wire code to answer with, where an answer is due.

Nothing here does I/O or knows about threads.
"""

from __future__ import annotations

import enum
import json as _json
from typing import Any, Dict, Optional

__all__ = [
    "ErrorCode",
    "RpcError",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "ConnectionClosed",
    "RequestTimeout",
]


class ErrorCode(enum.IntEnum):
    """Codes ACP names for JSON-RPC errors. Spec: schema.json ``ErrorCode``."""

    #: The line is not valid JSON (or not UTF-8). Spec RPC-10: answered with ``id: null``.
    PARSE_ERROR = -32700
    #: Valid JSON that is not a valid JSON-RPC request object. Spec RPC-11.
    INVALID_REQUEST = -32600
    #: Unknown method, or an optional method that was not advertised. Spec RPC-12.
    METHOD_NOT_FOUND = -32601
    #: Params of the wrong shape. Spec RPC-13.
    INVALID_PARAMS = -32602
    #: An unexpected failure of the implementation. Spec RPC-14.
    INTERNAL_ERROR = -32603
    #: The request was cancelled, aborted by a limit, or by shutdown. Spec RPC-15, CANCEL-05.
    REQUEST_CANCELLED = -32800
    #: The request needs authentication first. Spec RPC-16.
    AUTH_REQUIRED = -32000
    #: A referenced file, session or terminal does not exist. Spec RPC-17.
    RESOURCE_NOT_FOUND = -32002


#: How much of an error's ``data`` its text shows.
_DATA_SHOWN = 300

_DEFAULT_MESSAGES = {
    ErrorCode.PARSE_ERROR: "Parse error",
    ErrorCode.INVALID_REQUEST: "Invalid request",
    ErrorCode.METHOD_NOT_FOUND: "Method not found",
    ErrorCode.INVALID_PARAMS: "Invalid params",
    ErrorCode.INTERNAL_ERROR: "Internal error",
    ErrorCode.REQUEST_CANCELLED: "Request cancelled",
    ErrorCode.AUTH_REQUIRED: "Authentication required",
    ErrorCode.RESOURCE_NOT_FOUND: "Resource not found",
}


def code_name(code: int) -> str:
    """A readable name for any integer code; unknown codes are generic errors (spec RPC-18)."""
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


class RpcError(Exception):
    """A JSON-RPC error response: raise it from a handler, catch it around a request.

    ``code`` is any integer (known codes come back as ``ErrorCode`` members); ``data`` is any
    JSON value or absent. Spec RPC-09: integer code, string message, optional data.
    """

    code: int
    message: str
    data: Any

    #: Marks "no data member" apart from ``data: null``.
    NO_DATA: Any = object()

    def __init__(self, code: int, message: Optional[str] = None, data: Any = NO_DATA) -> None:
        try:
            code = ErrorCode(code)
        except ValueError:
            pass  # spec RPC-18: any other integer code is kept as it is: a generic error
        if message is None:
            message = _DEFAULT_MESSAGES.get(code, code_name(code))  # type: ignore[call-overload]
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        text = f"{self.message} ({int(self.code)})"
        return text if self.data is RpcError.NO_DATA else f"{text}; data: {self._data_text()}"

    @property
    def detail(self) -> str:
        """The message, and the ``data`` when there is one: what evidence quotes of an error."""
        if self.data is RpcError.NO_DATA:
            return self.message
        return f"{self.message}; data: {self._data_text()}"

    def _data_text(self) -> str:
        # error.data often says what was wrong (a field, a missing login): evidence keeps it.
        data = _json.dumps(self.data, ensure_ascii=False, default=repr)
        if len(data) > _DATA_SHOWN:
            data = data[:_DATA_SHOWN] + f"... ({len(data)} chars)"
        return data

    def __repr__(self) -> str:
        data = "" if self.data is RpcError.NO_DATA else f", data={self.data!r}"
        return f"RpcError({code_name(self.code)}, {self.message!r}{data})"

    def to_wire(self) -> Dict[str, Any]:
        """The ``error`` member of a response."""
        out: Dict[str, Any] = {"code": int(self.code), "message": self.message}
        if self.data is not RpcError.NO_DATA:
            out["data"] = self.data
        return out

    @classmethod
    def from_wire(cls, error: Dict[str, Any]) -> "RpcError":
        """Build from a received ``error`` member (already checked to have code and message)."""
        return cls(error["code"], error["message"], error.get("data", RpcError.NO_DATA))

    # Shorthands for the codes handlers raise most.
    @classmethod
    def invalid_params(cls, message: str, data: Any = NO_DATA) -> "RpcError":
        return cls(ErrorCode.INVALID_PARAMS, message, data)

    @classmethod
    def method_not_found(cls, method: str) -> "RpcError":
        return cls(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})

    @classmethod
    def resource_not_found(cls, message: str, uri: Optional[str] = None) -> "RpcError":
        # spec RPC-17: a missing file, session or terminal, with data {uri} when applicable.
        return cls(ErrorCode.RESOURCE_NOT_FOUND, message, {"uri": uri} if uri else RpcError.NO_DATA)

    @classmethod
    def auth_required(cls, message: str = "Authentication required") -> "RpcError":
        return cls(ErrorCode.AUTH_REQUIRED, message)

    @classmethod
    def cancelled(cls, message: str = "Request cancelled") -> "RpcError":
        return cls(ErrorCode.REQUEST_CANCELLED, message)


class ProtocolError(Exception):
    """A rule of the protocol was broken: which clause, by whom, and the code to answer with.

    ``clause`` is an id of ``spec_notes/clauses.tsv`` (``"SETUP-03"``) or a ``spec-gap`` decision;
    ``blame`` is ``"local"`` (we were about to break it) or ``"remote"`` (the peer broke it).
    """

    blame: str = "?"

    def __init__(
        self,
        clause: str,
        message: str,
        *,
        code: int = ErrorCode.INVALID_REQUEST,
        data: Any = RpcError.NO_DATA,
    ) -> None:
        super().__init__(f"{message} [spec {clause}]")
        self.clause = clause
        self.message = message
        self.code = code
        self.data = data

    def to_rpc_error(self) -> RpcError:
        """The error response that tells the peer about this broken rule."""
        data = self.data
        if data is RpcError.NO_DATA:
            data = {"clause": self.clause}
        elif isinstance(data, dict) and "clause" not in data:
            data = {**data, "clause": self.clause}
        return RpcError(self.code, f"{self.message} [spec {self.clause}]", data)


class LocalProtocolError(ProtocolError):
    """We were about to break a rule; nothing was sent."""

    blame = "local"


class RemoteProtocolError(ProtocolError):
    """The peer broke a rule."""

    blame = "remote"


class ConnectionClosed(Exception):
    """The connection ended (end of input, a dead peer, or ``close()``) before an answer came."""


class RequestTimeout(TimeoutError):
    """No answer came within the caller's timeout; ``$/cancel_request`` was sent for it."""
