"""The JSON-RPC 2.0 envelope, once: what a decoded line is, and what is wrong with it.

Spec: overview.mdx (Communication Model, Error Handling), schema.json (RequestId, Error,
ErrorCode); clauses OVERVIEW-01, OVERVIEW-09, OVERVIEW-11, RPC-01 .. RPC-05, RPC-09 .. RPC-11,
RPC-20. Decisions where the spec is silent: spec_notes/decisions.md (batch, blank-line,
malformed-json, no-method-id, response-without-id).

Sans-I/O, like the rest of the core: bytes or a decoded value in, a verdict out. Three readers
use it and so cannot disagree on the envelope: the threaded connection (``acpref.connection``)
decides from it what to answer, the oracle (``acpref.oracle``) turns its faults into findings,
and ``ProtocolState`` reads a message's kind from it.

* ``decode(line)`` parses one line: the value, or the -32700 fault (RPC-10).
* ``inspect(value)`` says what the value is (``REQUEST``, ``NOTIFICATION``, ``RESPONSE``,
  ``BATCH`` or ``INVALID``) and lists its ``Fault``\\s, each naming its clause.
* ``kind_of(raw)`` is the short form the protocol rules need: the kind of a message they can
  read (a string method, or an id with a result or error), else None.

What a receiver does with a fault follows from the kind (``Envelope.answer``):

* a **request** with a refusing fault is answered with that fault's error, under its id when
  the id is valid, else under ``null`` (RPC-11);
* a **notification** is never answered, whatever is wrong with it (OVERVIEW-09): it is dropped;
* a **response** (an object with ``result`` or ``error`` and no ``method``) is never answered:
  one with a breaking fault (RPC-05, RPC-09) fails the request it answers, which the receiver's
  caller then learns; one without an id answers no request and is dropped; one without
  ``"jsonrpc"`` is accepted, and reported;
* anything else (``INVALID``, ``BATCH``) is answered -32600 under ``null``.

``blank(line)`` says whether a line carries no message at all (spec-gap blank-line).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple, Union

from .._bounds import NO_ID as _NO_ID
from ..errors import ErrorCode, RpcError

__all__ = [
    "BATCH",
    "Envelope",
    "Fault",
    "INVALID",
    "NO_ID",
    "NOTIFICATION",
    "REQUEST",
    "RESPONSE",
    "blank",
    "decode",
    "inspect",
    "kind_of",
    "response_faults",
    "valid_id",
]

REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
BATCH = "batch"
INVALID = "invalid"


#: The id of a message without an ``"id"`` member (a notification), apart from ``"id": null``:
#: one sentinel with the unread line's (``acpref._bounds``).
NO_ID: Any = _NO_ID


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: Built once (``json.loads`` with options builds a decoder on every call). NaN and Infinity are
#: not JSON: a line holding one is a parse error.
DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class Fault:
    """One thing wrong with an envelope: the clause it breaks, why, and what it costs.

    ``code`` is the JSON-RPC error a receiver answers a refused request with, or None for a fault
    that is only reported (the message is served, or accepted). For a response, a fault with a
    ``code`` makes the response unusable: the request it answers fails.
    """

    __slots__ = ("clause", "message", "code")

    def __init__(self, clause: str, message: str, code: Optional[int] = None) -> None:
        self.clause = clause
        self.message = message
        self.code = code

    def __repr__(self) -> str:
        return f"Fault({self.clause!r}, {self.message!r}, {self.code!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fault) and (self.clause, self.message, self.code) == (
            other.clause,
            other.message,
            other.code,
        )

    def __hash__(self) -> int:
        return hash((self.clause, self.message, self.code))

    def to_rpc_error(self) -> RpcError:
        """The error that answers a line refused for this fault (one with a ``code``), naming
        the clause, as ``Finding.to_rpc_error`` does for a rule."""
        assert self.code is not None
        return RpcError(self.code, f"{self.message} [spec {self.clause}]", {"clause": self.clause})


_NO_FAULTS: Tuple[Fault, ...] = ()


class Envelope:
    """What a decoded value is as a JSON-RPC message, and its faults (empty when sound)."""

    __slots__ = ("kind", "id", "method", "faults")

    def __init__(
        self, kind: str, id: Any = NO_ID, method: Any = None, faults: Tuple[Fault, ...] = ()
    ) -> None:
        self.kind = kind
        #: The ``id`` member as sent, or ``NO_ID`` when there is none.
        self.id = id
        #: The ``method`` member as sent (not always a string), or None.
        self.method = method
        self.faults = faults

    def __repr__(self) -> str:
        return f"Envelope({self.kind!r}, id={self.id!r}, method={self.method!r}, {self.faults!r})"

    @property
    def refusal(self) -> Optional[Fault]:
        """The first fault that refuses the message (one with an error code), or None."""
        for fault in self.faults:
            if fault.code is not None:
                return fault
        return None

    @property
    def answer(self) -> Optional[Tuple[Any, Fault]]:
        """``(reply id, fault)`` when a receiver answers this message with an error at once.

        None for a sound message, a notification (never answered, OVERVIEW-09) and a response
        (a response is never answered; a broken one fails the request it answers).
        """
        fault = self.refusal
        if fault is None or self.kind in (NOTIFICATION, RESPONSE):
            return None
        if self.kind == REQUEST and valid_id(self.id):
            # spec RPC-11: -32600 under the request's id when it can be read as one.
            return self.id, fault
        # spec RPC-11: with id null when it cannot (spec-gap no-method-id: an object with an id
        # and no method, result or error is answered under null, as its id may be one of the
        # receiver's own requests, and an error under it would look like that request's answer).
        return None, fault


def valid_id(value: Any) -> bool:
    """spec RPC-02: an id is a string, an integer or null (floats and booleans are not)."""
    return value is None or type(value) is str or type(value) is int


#: JSON's whitespace (RFC 8259, section 2): space, tab, carriage return (and the newline that
#: ends the line). Python's ``bytes.isspace`` also takes form feed and vertical tab, which are not.
_JSON_WHITESPACE = b" \t\r\n"


def blank(line: bytes) -> bool:
    """True for a line that carries no message: empty, or JSON whitespace only. Any other byte
    makes the line a JSON text or a parse error (RPC-10), a lone form feed or NUL included."""
    # spec-gap blank-line: a line of JSON whitespace only is skipped, never answered.
    return not line.strip(_JSON_WHITESPACE)


def decode(line: bytes) -> Union[Tuple[Any, None], Tuple[None, Fault]]:
    """``(value, None)`` for a line of JSON, else ``(None, fault)`` (-32700, RPC-10)."""
    try:
        # spec TRANSPORT-01: messages are UTF-8; decoding is strict.
        return DECODER.decode(line.decode("utf-8")), None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # spec RPC-10: an unparseable line gets -32700 with id null.
        text = str(exc) or type(exc).__name__
        text = text if len(text) <= 200 else text[:197] + "..."
        return None, Fault("RPC-10", f"Parse error: {text}", ErrorCode.PARSE_ERROR)


def kind_of(raw: Any) -> Optional[str]:
    """``REQUEST``, ``NOTIFICATION`` or ``RESPONSE`` for a message the rules can read, else None.

    Readable means: an object with a string ``method`` (a request when it has an ``id``), or one
    with an ``id`` and a ``result`` or an ``error``. Anything else is judged by ``inspect``.
    """
    if not isinstance(raw, dict):
        return None
    if "method" in raw:
        if not isinstance(raw["method"], str):
            return None
        return REQUEST if "id" in raw else NOTIFICATION
    if "id" in raw and ("result" in raw or "error" in raw):
        return RESPONSE
    return None


def response_faults(raw: Any) -> Tuple[Fault, ...]:
    """What makes a response (``kind_of`` says ``RESPONSE``) unusable: RPC-05, RPC-09."""
    has_result, has_error = "result" in raw, "error" in raw
    if has_result and has_error:
        # spec RPC-05: exactly one of result or error.
        return (_fault("RPC-05", "a response carries both result and error"),)
    if has_error:
        error = raw["error"]
        # spec OVERVIEW-08, RPC-09: a failure carries an error with an integer code and a string
        # message (a success its result).
        if not isinstance(error, dict):
            why = f"the error is {_clip(error)}, not an object"
        elif type(error.get("code")) is not int:
            why = f"error.code is {_clip(error.get('code'))}, not an integer"
        elif type(error.get("message")) is not str:
            why = f"error.message is {_clip(error.get('message'))}, not a string"
        else:
            return _NO_FAULTS
        return (_fault("RPC-09", f"malformed error object: {why}"),)
    return _NO_FAULTS


def inspect(value: Any) -> Envelope:
    """What ``value`` (one decoded line) is, and everything wrong with its envelope."""
    if type(value) is dict and value.get("jsonrpc") == "2.0":
        # The sound messages, as nearly all are, first: they have no fault to look for.
        method = value.get("method")
        if type(method) is str:
            params = value.get("params")
            if params is None or type(params) is dict:
                request_id = value.get("id", NO_ID)
                if request_id is NO_ID:
                    return Envelope(NOTIFICATION, NO_ID, method, _NO_FAULTS)
                if type(request_id) is int or type(request_id) is str:
                    return Envelope(REQUEST, request_id, method, _NO_FAULTS)
        elif "result" in value and "error" not in value and "method" not in value:
            request_id = value.get("id", NO_ID)
            if type(request_id) is int or type(request_id) is str:
                return Envelope(RESPONSE, request_id, None, _NO_FAULTS)
    return _inspect(value)


def _inspect(value: Any) -> Envelope:
    if not isinstance(value, dict):
        if isinstance(value, list):
            # spec RPC-20, OVERVIEW-01: ACP's schema defines no batches; supporting them is
            # optional. spec-gap batch: a batch is refused as a whole, with one -32600.
            why = "a JSON-RPC batch (ACP defines none)"
            return Envelope(BATCH, faults=(_fault("OVERVIEW-01", why),))
        # spec RPC-11: valid JSON that is not a request object.
        return Envelope(INVALID, faults=(_fault("RPC-11", "a message must be a JSON object"),))
    request_id = value.get("id", NO_ID)
    if "method" in value:
        return _inspect_call(value, request_id)
    if "result" in value or "error" in value:
        # spec-gap response-without-id: a response is never answered, whatever is wrong with
        # it. JSON-RPC 2.0, section 2: the Server is "the handler of Request objects", the
        # Client "the handler of Response objects", and the Server replies when "a rpc call is
        # made" (section 5): a response is no call. A response without "jsonrpc" is accepted
        # (reported): its caller is owed its answer.
        faults = _jsonrpc(value, None) + response_faults(value)
        if request_id is NO_ID:
            # spec RPC-04: a response echoes its request's id; without one it answers nothing.
            faults += (_fault("RPC-04", "a response without an id answers no request"),)
        return Envelope(RESPONSE, request_id, None, faults)
    faults = _jsonrpc(value, ErrorCode.INVALID_REQUEST)
    if request_id is not NO_ID:
        # spec RPC-05: a response carries exactly one of result or error, never neither.
        why = f"response {_clip(request_id)} has neither result nor error"
        return Envelope(INVALID, request_id, None, faults + (_fault("RPC-05", why),))
    # spec OVERVIEW-01: a request, a response or a notification; nothing else.
    # spec OVERVIEW-11: with the JSON-RPC member names (a renamed "Method" or "ID" is none).
    why = "neither a request, a response nor a notification"
    return Envelope(INVALID, NO_ID, None, faults + (_fault("OVERVIEW-01", why),))


def _inspect_call(value: Dict[str, Any], request_id: Any) -> Envelope:
    method = value["method"]
    is_request = request_id is not NO_ID
    kind = REQUEST if is_request else NOTIFICATION
    faults = _jsonrpc(value, ErrorCode.INVALID_REQUEST)
    if type(method) is not str:
        # spec RPC-02: the method is a string. Without one, no request and no notification
        # (JSON-RPC 2.0: an "Invalid Request", answered under null unless its id is readable).
        fault = _fault("RPC-02", f"method {_clip(method)} is not a string")
        return Envelope(REQUEST if is_request else INVALID, request_id, method, faults + (fault,))
    if is_request:
        if not valid_id(request_id):
            # spec RPC-02: ids are strings, integers or null.
            why = f"request id {_clip(request_id)} is not a string, an integer or null"
            faults += (_fault("RPC-02", why),)
        elif request_id is None:
            # spec RPC-03: ids should not be null (reported; the request is served).
            faults += (Fault("RPC-03", "request id is null"),)
    params = value.get("params")
    if params is not None and type(params) is not dict:
        # spec RPC-02: ACP params are JSON objects (-32602 Invalid params).
        why = f"{method} params are {type(params).__name__}, not an object"
        faults += (Fault("RPC-02", why, ErrorCode.INVALID_PARAMS),)
    return Envelope(kind, request_id, method, faults)


def _jsonrpc(value: Dict[str, Any], code: Optional[int]) -> Tuple[Fault, ...]:
    if value.get("jsonrpc") == "2.0":
        return _NO_FAULTS
    # spec RPC-01: every message has jsonrpc "2.0" (a request without it is refused -32600).
    got = _clip(value["jsonrpc"]) if "jsonrpc" in value else "absent"
    return (Fault("RPC-01", f"jsonrpc is {got}, not '2.0'", code),)


def _fault(clause: str, message: str) -> Fault:
    return Fault(clause, message, ErrorCode.INVALID_REQUEST)


def _clip(value: Any, size: int = 60) -> str:
    """A peer's value in a message, bounded: it may be any JSON, of any size."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = repr(value)
    return text if len(text) <= size else text[: size - 3] + "..."
