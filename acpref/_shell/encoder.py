"""What we write: a message's JSON-RPC envelope, and the message as one line within the bound.

Spec: overview.mdx, transports.mdx; clauses OVERVIEW-11 (the JSON-RPC 2.0 members), RPC-04 (an
answer carries its request's id), RPC-19 (``{}`` rather than no params), TRANSPORT-01 (UTF-8),
TRANSPORT-04 (one message per line, ended by a newline), TRANSPORT-05 (no raw newline inside).

``call`` and ``answer`` build every envelope a live connection sends; ``encode_line`` is the one
way it turns a message into bytes (``Connection._write``). What that refuses to write
(``TooLarge``) is refused before the write lock is taken, so nothing of it reaches the stream.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from .._bounds import NO_ID
from ..errors import ErrorCode, RpcError

__all__ = ["TooLarge", "answer", "call", "encode_line"]


def call(method: str, params: Any, request_id: Any = NO_ID) -> Dict[str, Any]:
    """A request (``request_id`` given) or a notification (none), its params already JSON."""
    # spec OVERVIEW-11: the JSON-RPC 2.0 members, under their own names and meanings.
    message: Dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not NO_ID:
        message["id"] = request_id
    message["method"] = method
    # spec RPC-19: methods with no required params are sent {} rather than no params.
    message["params"] = params if params is not None else {}
    return message


def answer(request_id: Any, result: Any = None, error: Optional[RpcError] = None) -> Dict[str, Any]:
    """The response to ``request_id``: its ``error`` if given, else its ``result``."""
    # spec RPC-04: the request's id exactly as it was read, the same value and JSON type.
    message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error.to_wire()
    else:
        message["result"] = result
    return message

# Built once: json.dumps with options builds a new encoder on every call. NaN and Infinity are
# not JSON: never written (and a line holding one is a parse error, ``envelope.decode``).
# check_circular=False: a message is a tree made by the codec or a handler; a handler's circular
# value still fails (RecursionError, answered -32603 like any value that is not JSON), without a
# check that costs every message a seventh of its encoding.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_ASCII_ENCODER = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
)


class TooLarge(RpcError):
    """A message of ours over the line bound: never written (-32603, with the figures)."""


def encode_line(message: Dict[str, Any], max_line_bytes: int) -> bytes:
    """``message`` as one line, its newline included; ``TooLarge`` past ``max_line_bytes``.

    A value that is not JSON raises what ``json`` raises (``TypeError``, ``ValueError``,
    ``RecursionError``): the caller's bug, answered -32603 where it answers a request.
    """
    try:
        data = _ENCODER.encode(message).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8 (TRANSPORT-01): escape it as a \\u escape instead.
        data = _ASCII_ENCODER.encode(message).encode("ascii")
    # spec TRANSPORT-05: json.dumps escapes every newline inside strings, so the only raw
    # newline is the delimiter (TRANSPORT-04).
    if len(data) > max_line_bytes:
        # Bounds are the same on both sides (64 MiB by default): a line over ours would be
        # refused by a peer like us, and the request it answers left waiting. Refused here,
        # measured as encoded (a control character is six bytes there).
        size = len(data)
        raise TooLarge(
            ErrorCode.INTERNAL_ERROR,
            f"the message is {size} bytes once encoded, more than the line limit of "
            f"{max_line_bytes} bytes",
            {"size": size, "limit": max_line_bytes},
        )
    return data + b"\n"  # spec TRANSPORT-04: one message per line, ended by a newline
