"""What a line may cost once decoded, and what can be read of a line that is refused unread.

The connection's default bounds (``DEFAULT_MAX_LINE_BYTES``, ``DEFAULT_MAX_ITEMS``,
``DEFAULT_MAX_HELD_BYTES``: what each costs, beside them), and helpers of the connection
(``acpref.connection``), all on raw bytes, none decoding the line whole:

* ``count_items(line, limit)``: about how many JSON values ``line`` holds (its ``,``, ``[`` and
  ``{`` outside strings). A decoded value costs tens of bytes whatever its size on the wire
  (``{}`` is 2 bytes and a 64-byte dict; ``[{},{},...]`` costs 24 times its size), so the number
  of values, not the bytes, bounds what a message costs after ``json.loads``. Counted before
  decoding: a refused line never costs more than its own bytes.
* ``held_cost(line)``: an upper estimate of what a request costs in memory once decoded, in
  bytes (its bytes, plus ``VALUE_COST`` for each ``,``, ``[`` and ``{``): the measure of the
  connection's bound on all the requests it holds at once (``max_held_bytes``), running or
  waiting, since the bound on one message does not stop a peer from sending many.
* ``nesting(line, limit)``: how deeply ``line`` nests its arrays and objects, when that passes
  ``limit`` (``MAX_DEPTH``). Python's decoder stops where the stack of the thread that reads
  runs out, which moves with that thread, the Python version and anything that raised the
  recursion limit: a fixed bound, checked before decoding, makes the same line refused by every
  reader, and leaves what reads a decoded message room to walk it.
* ``peek_envelope(head, tail)``: the ``id`` and kind (request or response) of a line from its
  first and last bytes, so that a line refused unread (over the line bound, or over the item
  bound) can still fail the request it belonged to. Most writers put the envelope first (acpref
  writes ``jsonrpc``, ``id``, then ``method``/``params`` or ``result``/``error``); some put
  ``id`` after the payload, where the tail shows it: read backwards from the closing ``}``, the
  scalar members at the end of the object are top-level members whatever the payload holds.

See spec_notes/threat-model.md (the bounds) and spec_notes/reliability.md.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any, Dict, Tuple

__all__ = ["count_items", "held_cost", "nesting", "peek_envelope", "MAX_DEPTH", "NO_ID",
           "VALUE_COST", "DEFAULT_MAX_LINE_BYTES", "DEFAULT_MAX_ITEMS", "DEFAULT_MAX_HELD_BYTES"]

class _NoId:
    def __repr__(self) -> str:
        return "NO_ID"


#: The id of a message without an ``"id"`` member (a notification), apart from ``"id": null``:
#: ``peek_envelope``'s when the line shows none, and the envelope's (``_core.envelope``).
NO_ID: Any = _NoId()

#: Default bound on one line: 64 MiB (peers broke at 64 KiB; the issue asks for >= 32 MiB).
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: Default bound on the JSON values of one message (``count_items``): what a line
#: may cost once decoded. 1 000 000 tiny values cost about 70 MiB decoded; without the bound a
#: line of 64 MiB could cost 1.5 GiB.
DEFAULT_MAX_ITEMS = 1_000_000
#: Default bound on what the requests received and not finished (running or waiting) cost at
#: once, decoded (``held_cost``): a message at both bounds above costs about
#: 160 MiB, so one is always taken alone, and thousands of ordinary ones fit together.
DEFAULT_MAX_HELD_BYTES = 256 * 1024 * 1024

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_WS_BYTES = b" \t\r\n"
_SCALAR = b"-+.0123456789eEtruefalsn"


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


#: The deepest nesting of arrays and objects a line may have, the message's own object included
#: (RFC 8259, section 9: "An implementation may set limits on the maximum depth of nesting").
#: Far beyond what a message needs, well within what Python decodes and walks on any thread.
MAX_DEPTH = 512

#: A JSON string: from a quote to the next one not escaped, or to the end of the line.
_STRING = re.compile(rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)')
#: Every byte but the four brackets, deleted to leave a line's structure.
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: One step of the depth: +1 for an opening bracket, -1 for a closing one.
_STEP = tuple(1 if b in b"[{" else -1 for b in range(256))


def nesting(line: bytes, limit: int = MAX_DEPTH) -> int:
    """The most arrays and objects open at once in ``line`` (outside strings) if that is more
    than ``limit``, else 0. Read on the bytes, valid JSON or not: a line is judged the same
    whatever else is wrong with it."""
    if line.count(b"[") + line.count(b"{") <= limit:
        return 0  # the common case: too few brackets to pass the bound
    structure = (_STRING.sub(b"", line) if b'"' in line else line).translate(None, _NOT_BRACKETS)
    if structure.count(b"[") + structure.count(b"{") <= limit:
        return 0
    depth = max(accumulate(map(_STEP.__getitem__, structure)))
    return depth if depth > limit else 0


#: What one JSON value is counted to cost once decoded, beyond its bytes: an empty dict is 64
#: bytes in CPython, an empty list 56, each plus the pointer that holds it (tests/test_hostile.py
#: checks the estimate against tracemalloc for tiny values, nesting, numbers and text).
VALUE_COST = 96
_COUNTED_FROM = 1024


def held_cost(line: bytes) -> int:
    """An upper estimate of the bytes ``json.loads(line)`` holds: never below the truth.

    Every value after the first is preceded by ``,`` or opens with ``[`` or ``{``; those inside
    strings are counted too, which only overestimates. Strings cost about their UTF-8 bytes.
    """
    size = len(line)
    if size <= _COUNTED_FROM:
        # At most one value per byte: counting would cost more than it could save (so many
        # small requests pass max_queued first: 1088 of 1 KiB count about 100 MiB).
        return size * (VALUE_COST + 1)
    values = line.count(b",") + line.count(b"{") + line.count(b"[") + 1
    return size + VALUE_COST * values


def peek_envelope(head: bytes, tail: bytes = b"") -> Tuple[Any, str]:
    """``(id, kind)`` read from the first and last bytes of a JSON-RPC line, without its payload.

    ``kind`` is ``"request"`` (a ``method`` or ``params`` member was seen), ``"response"``
    (``result`` or ``error``), or ``""`` (neither). ``id`` is ``NO_ID`` when no top-level ``id``
    came before the payload began in ``head``, nor among the scalar members that end ``tail``.
    """
    request_id, kind = _peek_head(head)
    if tail and (request_id is NO_ID or not kind):
        members = _peek_tail(tail)
        if request_id is NO_ID:
            request_id = members.get("id", NO_ID)
        if not kind:
            if "method" in members or "params" in members:
                kind = "request"
            elif "result" in members or "error" in members:
                kind = "response"
    return request_id, kind


def _peek_head(head: bytes) -> Tuple[Any, str]:
    """``(id, kind)`` from the members before the payload, read forwards."""
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


def _peek_tail(tail: bytes) -> Dict[str, Any]:
    """The scalar members that end the object whose last bytes are ``tail``, read backwards.

    Backwards from the final ``}``, each member is ``"key": value`` preceded by ``,``; the scan
    stops at the first value that is not a string, number, ``true``, ``false`` or ``null`` (the
    payload), or at anything it cannot read (the tail began inside it). A string is read back
    to the first ``"`` not escaped (preceded by an even number of backslashes): inside a JSON
    string every ``"`` is escaped, so that one opens it.
    """
    members: Dict[str, Any] = {}
    pos = _skip_back(tail, len(tail))
    if not tail[:pos].endswith(b"}"):
        return members
    pos = _skip_back(tail, pos - 1)
    try:
        while pos > 0:
            value, pos = _scalar_back(tail, pos)
            pos = _skip_back(tail, pos)
            if not tail[:pos].endswith(b":"):
                break
            key, pos = _scalar_back(tail, _skip_back(tail, pos - 1))
            if not isinstance(key, str):
                break
            members.setdefault(key, value)
            pos = _skip_back(tail, pos)
            if not tail[:pos].endswith(b","):
                break
            pos = _skip_back(tail, pos - 1)
    except ValueError:  # not a scalar, or cut: the payload, or the tail's start
        pass
    return members


def _scalar_back(data: bytes, end: int) -> Tuple[Any, int]:
    """The scalar JSON value that ends at ``data[end]`` and where it starts; ValueError if none."""
    if data[end - 1 : end] == b'"':
        start = end - 1
        while True:
            start = data.rfind(b'"', 0, start)
            if start < 0:
                raise ValueError("string cut")
            slashes = start
            while slashes > 0 and data[slashes - 1] == 0x5C:  # a backslash
                slashes -= 1
            if slashes == 0 and start > 0:
                raise ValueError("string cut")  # backslashes back to the tail's start
            if (start - slashes) % 2 == 0:
                break
    else:
        start = end
        while start > 0 and data[start - 1] in _SCALAR:
            start -= 1
    if start == end or start == 0:
        raise ValueError("no scalar, or cut")
    return json.loads(data[start:end]), start


def _skip_back(data: bytes, pos: int) -> int:
    while pos > 0 and data[pos - 1] in _WS_BYTES:
        pos -= 1
    return pos


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos
