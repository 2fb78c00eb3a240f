"""Lines refused before they are decoded: over the line bound, over the item bound, too deep.

Spec: overview.mdx (Error Handling); clauses RPC-10 (a parse error is answered -32700 with
``id: null``), RPC-06 (a request is answered once, a refused one too). Decisions:
spec_notes/decisions.md (``oversize-line``, ``nesting-bound``); the bounds and what they cost:
spec_notes/threat-model.md, spec_notes/reliability.md.

A line can cost more decoded than its bytes (``acpref._bounds``), and can nest deeper than a
reading thread's stack: such a line is judged on its bytes and never decoded. What it belonged
to is read from its first and last bytes (``acpref._bounds.peek_envelope``), so that a refused
request is still answered under its id and a refused answer still fails the request of ours it
answered. This module says *what* a line refused unread is (``Unread``); the connection routes
it (``Connection._refuse_unread``), since only it holds the books of requests.

The order, as a line travels: the framer drops a line over ``max_line_bytes`` as it arrives
(``over_line_bound``: -32600), then ``before_decoding`` counts a kept line's values against
``max_items`` (-32600) and measures its nesting against ``MAX_DEPTH`` (-32700, ``id: null``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import attrs

from .._bounds import MAX_DEPTH, NO_ID, count_items, nesting, peek_envelope
from ..errors import ErrorCode, RpcError
from .framing import OVERSIZE_HEAD, Oversize

__all__ = ["Unread", "before_decoding", "over_line_bound"]


@attrs.frozen
class Unread:
    """A line refused before decoding: the error that answers it, and what it belonged to.

    ``id`` and ``kind`` (``"request"``, ``"response"`` or ``""``) are read from the line's ends;
    ``NO_ID`` and ``""`` when it shows none, or when it was not read at all (a line nested too
    deep is a parse error, answered ``id: null`` whatever it was: RPC-10).
    """

    code: int
    why: str
    data: Dict[str, Any]
    id: Any = NO_ID
    kind: str = ""

    @property
    def error(self) -> RpcError:
        return RpcError(self.code, self.why, self.data)


def over_line_bound(event: Oversize, limit: int) -> Unread:
    """A line the framer dropped for being over ``limit`` bytes (``max_line_bytes``)."""
    request_id, kind = peek_envelope(event.head, event.tail)
    why = f"message of {event.size} bytes exceeds the line limit of {limit} bytes"
    return Unread(
        ErrorCode.INVALID_REQUEST, why, {"size": event.size, "limit": limit}, request_id, kind
    )


def before_decoding(line: bytes, max_items: int) -> Optional[Unread]:
    """What refuses a kept line before it is decoded, or None for the line to be decoded."""
    if len(line) > max_items:  # at most one value per byte: a shorter line is never counted
        items = count_items(line, max_items)
        if items > max_items:
            # What a line costs decoded is bounded as well as its bytes: refused unread.
            request_id, kind = peek_envelope(line[:OVERSIZE_HEAD], line[-OVERSIZE_HEAD:])
            why = f"message of about {items} JSON values exceeds the limit of {max_items} values"
            figures: Dict[str, Any] = {"items": items, "limit": max_items}
            return Unread(ErrorCode.INVALID_REQUEST, why, figures, request_id, kind)
    depth = nesting(line, MAX_DEPTH)
    if depth:
        # spec RPC-10: -32700, id null. spec-gap nesting-bound: nested deeper than MAX_DEPTH
        # is more than this receiver parses (RFC 8259, 9), the same for every reader.
        why = f"Parse error: nested {depth} levels deep, more than the limit of {MAX_DEPTH}"
        data: Dict[str, Any] = {"clause": "RPC-10", "depth": depth, "limit": MAX_DEPTH}
        return Unread(ErrorCode.PARSE_ERROR, f"{why} [spec RPC-10]", data)
    return None
