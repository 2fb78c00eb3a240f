"""What a line may cost once decoded, and what can be read of a line that is refused unread.

Two helpers of the connection (``acpref.connection``), both on raw bytes, neither decoding the
line whole:

* ``count_items(line, limit)``: about how many JSON values ``line`` holds (its ``,``, ``[`` and
  ``{`` outside strings). A decoded value costs tens of bytes whatever its size on the wire
  (``{}`` is 2 bytes and a 64-byte dict; ``[{},{},...]`` costs 24 times its size), so the number
  of values, not the bytes, bounds what a message costs after ``json.loads``. Counted before
  decoding: a refused line never costs more than its own bytes.
* ``peek_envelope(head)``: the ``id`` and kind (request or response) of a line from its first
  bytes, so that a line refused unread (over the line bound, or over the item bound) can still
  fail the request it belonged to. Writers put the envelope first (acpref writes ``jsonrpc``,
  ``id``, then ``method``/``params`` or ``result``/``error``); a line whose ``id`` comes after
  its payload cannot be matched, and is answered with ``id: null``.

See spec_notes/threat-model.md (the bounds) and spec_notes/reliability.md.
"""

from __future__ import annotations

import json
from typing import Any, Tuple

__all__ = ["count_items", "peek_envelope", "NO_ID"]

#: ``peek_envelope``'s id when the head shows none.
NO_ID: Any = object()

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


def count_items(line: bytes, limit: int) -> int:
    """About the number of JSON values in ``line``: exact enough to bound, never below the truth
    by more than one per container; counting stops soon after passing ``limit``.

    A line has at most one value per byte, so a line shorter than ``limit`` is never counted.
    """
    if len(line) <= limit:
        return len(line)
    total = line.count(b",") + line.count(b"{") + line.count(b"[")
    if total <= limit or b'"' not in line:
        return total
    # Over the limit, counting strings' contents too: count again outside strings. Escaped
    # backslashes, then escaped quotes, are taken out first, so every '"' left is a delimiter.
    text = line.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in line else line
    total = 0
    pos = 0
    while True:
        quote = text.find(b'"', pos)
        end = len(text) if quote < 0 else quote
        total += text.count(b",", pos, end) + text.count(b"{", pos, end) + text.count(b"[", pos, end)
        if total > limit or quote < 0:
            return total
        close = text.find(b'"', quote + 1)
        if close < 0:
            return total
        pos = close + 1


def peek_envelope(head: bytes) -> Tuple[Any, str]:
    """``(id, kind)`` read from the first bytes of a JSON-RPC line, without its payload.

    ``kind`` is ``"request"`` (a ``method`` or ``params`` member was seen), ``"response"``
    (``result`` or ``error``), or ``""`` (neither, before the head ended). ``id`` is ``NO_ID``
    when no top-level ``id`` came before the head ended or before the payload began.
    """
    text = head.decode("utf-8", "replace")
    request_id: Any = NO_ID
    kind = ""
    pos = _skip(text, 0)
    if not text.startswith("{", pos):
        return NO_ID, ""
    pos += 1
    try:
        while True:
            pos = _skip(text, pos)
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if not isinstance(key, str) or not text.startswith(":", pos):
                break
            pos = _skip(text, pos + 1)
            if key in ("method", "params"):
                kind = "request"
            elif key in ("result", "error"):
                kind = "response"
            if key in ("params", "result", "error"):
                break  # the payload: the rest of the line
            value, pos = _DECODER.raw_decode(text, pos)
            if key == "id":
                request_id = value
            pos = _skip(text, pos)
            if not text.startswith(",", pos):
                break
            pos += 1
    except (ValueError, RecursionError):  # the head ended inside a value
        pass
    return request_id, kind


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos
