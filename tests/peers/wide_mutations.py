"""Structural mutations of valid JSON-RPC lines, drawn from a seed: the generator of
``tests/test_wide_mutations.py``.

The byte flips of ``tests/test_bad_lines.py`` rarely make the lines that break a receiver's
bookkeeping: a member name changed whole (``"id"`` to ``"ID"``, ``"iid"``, ``"\\u0069d"``),
nesting close to and beyond the receiver's depth bound, two messages merged into one line or
one cut in two, members given twice, ids of every type. These are made here on purpose, on the
text of the line (so that an escape or a repeated member survives), and in short sequences
sent in one write: the line before can change what the next is read as (a response whose
``id`` was renamed, then a deeply nested request, is issue 34's example).

``blob(rng, lines)`` draws one blob (one or more lines joined by ``\\n``, without the last
newline) from ``lines`` (valid messages, one per line, without newlines) with the ``random.Random``
``rng``: the same seed gives the same blobs on every run and machine (no hypothesis: it raises
the recursion limit of the process it runs in, which moves the nesting a parser accepts).
``FAMILIES`` names the mutations; ``blob`` picks one, or a sequence of two or three.
"""

from __future__ import annotations

import random
import re
from typing import Callable, Dict, List

#: The envelope's members, as JSON-RPC names them.
MEMBERS = ["jsonrpc", "id", "method", "params", "result", "error"]

#: Depths of nesting: well within any bound, around acpref's (``acpref._bounds.MAX_DEPTH``,
#: 1000 before it existed: Python's recursion limit), and far beyond.
DEPTHS = [1, 2, 30, 127, 128, 200, 256, 500, 509, 510, 511, 512, 513, 900, 980, 990, 1000, 1010,
          1500, 3000, 100_000]

#: What an id may be replaced with (JSON text): valid ids and every other type.
ID_TEXTS = ["0", "-1", "1.0", "1.5", "-0", "1e2", "true", "false", "null", '""', '"x"', "[]",
            "[1]", "{}", '{"id":1}', str(2**63), str(2**64 + 7), str(-(2**70)), "1" * 5000,
            '"' + "i" * 3000 + '"', '"\\u0000"', '"\\ud800"']


def renamed_member(name: str, rng: random.Random) -> str:
    """A JSON string (with quotes) that is or resembles the member name ``name``."""
    choices = [
        name.upper(),
        name.capitalize(),
        name[:-1],
        name[1:],
        name + name[-1],
        name[0] + name,
        " " + name,
        name + " ",
        "",
        name + "\\u0000",
        # The same name, escaped: a JSON reader sees the member itself.
        "\\u%04x" % ord(name[0]) + name[1:],
        "".join("\\u%04x" % ord(c) for c in name),
        rng.choice(MEMBERS),  # another member's name: now given twice, or swapped
    ]
    return '"' + rng.choice(choices) + '"'


def _member_spans(text: str, name: str) -> List[re.Match]:
    return list(re.finditer(r'"%s"\s*:' % re.escape(name), text))


def rename_key(rng: random.Random, line: bytes) -> bytes:
    """One envelope member's name changed (or escaped, or made another's)."""
    text = line.decode("utf-8", "surrogateescape")
    present = [m for m in MEMBERS if _member_spans(text, m)]
    if not present:
        return line
    name = rng.choice(present)
    spans = _member_spans(text, name)
    span = spans[0] if rng.random() < 0.8 else rng.choice(spans)
    new = renamed_member(name, rng) + ":"
    return (text[: span.start()] + new + text[span.end() :]).encode("utf-8", "surrogateescape")


def _nest(depth: int, inner: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return "[" * depth + inner + "]" * depth
    return '{"a":' * depth + inner + "}" * depth


def _value_span(text: str, name: str) -> tuple:
    """(start, end) of the top-level value of member ``name`` in a compact line, or ()."""
    spans = _member_spans(text, name)
    if not spans:
        return ()
    start = spans[0].end()
    end = _value_end(text, start)
    return (start, end) if end > start else ()


def _value_end(text: str, start: int) -> int:
    """Where the JSON value that starts at ``text[start]`` ends (``start`` if none does); read
    by its brackets and quotes, at any depth."""
    depth = 0
    pos = start
    while pos < len(text):
        c = text[pos]
        if c == '"':
            pos += 1
            while pos < len(text) and text[pos] != '"':
                pos += 2 if text[pos] == "\\" else 1
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth < 0:
                return pos  # the end of the object the value was in
        elif c == "," and depth == 0:
            return pos
        pos += 1
        if depth == 0 and pos > start and text[start] in '"[{':
            return pos
    return pos


def nest(rng: random.Random, line: bytes) -> bytes:
    """A value of the line (or the whole line) nested ``depth`` levels deep."""
    text = line.decode("utf-8", "surrogateescape")
    depth = rng.choice(DEPTHS)
    where = rng.choice(["params", "result", "error", "id", "method", "inside", "whole", "meta"])
    if where == "whole":
        return _nest(depth, text, rng).encode("utf-8", "surrogateescape")
    if where in ("inside", "meta"):
        # Somewhere inside the payload: after a ':' past the envelope, or a new member at the
        # end of the object (the depth then lies after the envelope, where an id may be).
        colons = [m.end() for m in re.finditer(r'":', text)][1:]
        if where == "meta" or not colons:
            deep = _nest(depth, "1", rng)
            return (text[:-1] + ',"_meta":' + deep + "}").encode("utf-8", "surrogateescape")
        at = rng.choice(colons)
        end = _value_end(text, at)
        deep = _nest(depth, text[at:end], rng)
        return (text[:at] + deep + text[end:]).encode("utf-8", "surrogateescape")
    span = _value_span(text, where)
    if not span:
        return line
    start, end = span
    deep = _nest(depth, text[start:end], rng)
    return (text[:start] + deep + text[end:]).encode("utf-8", "surrogateescape")


def merge(rng: random.Random, line: bytes, other: bytes) -> bytes:
    """Two lines made one: joined by nothing or by a separator, or the first cut short."""
    how = rng.choice(["join", "join", "cut", "comma", "array"])
    if how == "join":
        return line + rng.choice([b"", b" ", b"\r", b"\t", b"\x00", b"\x0c"]) + other
    if how == "cut":
        return line[: rng.randrange(len(line) + 1)] + other
    if how == "comma":
        return line + b"," + other
    return b"[" + line + b"," + other + b"]"


def split(rng: random.Random, line: bytes) -> bytes:
    """A newline put into the line: it arrives as two lines (or three)."""
    out = bytearray(line)
    for _ in range(rng.choice([1, 1, 2])):
        at = rng.randrange(len(out) + 1)
        out[at:at] = b"\n"
    return bytes(out)


def duplicate_key(rng: random.Random, line: bytes) -> bytes:
    """An envelope member given a second time, before or after the first, with another value."""
    text = line.decode("utf-8", "surrogateescape")
    name = rng.choice(MEMBERS)
    value = rng.choice(
        {
            "jsonrpc": ['"2.0"', '"1.0"', "2", "null"],
            "id": ID_TEXTS[:12] + ["7", '"7"'],
            "method": ['"session/list"', '"session/prompt"', '"_x/y"', "1", "null"],
            "params": ["{}", "[]", "null", "1"],
            "result": ["{}", "null", "1"],
            "error": ['{"code":-1,"message":"x"}', "null", "{}"],
        }[name]
    )
    member = '"%s":%s' % (name, value)
    if rng.random() < 0.5 and text.startswith("{"):
        text = "{" + member + ("," if len(text) > 2 else "") + text[1:]
    elif text.endswith("}"):
        text = text[:-1] + ("," if len(text) > 2 else "") + member + "}"
    return text.encode("utf-8", "surrogateescape")


def id_type(rng: random.Random, line: bytes) -> bytes:
    """The id replaced by one of another type or size, or dropped, or put in."""
    text = line.decode("utf-8", "surrogateescape")
    span = _value_span(text, "id")
    value = rng.choice(ID_TEXTS)
    if not span:
        if text.endswith("}"):
            text = text[:-1] + ',"id":' + value + "}"
        return text.encode("utf-8", "surrogateescape")
    start, end = span
    if rng.random() < 0.15:
        # Dropped with its name: a request becomes a notification, a response one without id.
        name = _member_spans(text, "id")[0]
        cut_start, cut_end = name.start(), end
        if text[cut_end : cut_end + 1] == ",":
            cut_end += 1
        elif text[cut_start - 1 : cut_start] == ",":
            cut_start -= 1
        return (text[:cut_start] + text[cut_end:]).encode("utf-8", "surrogateescape")
    return (text[:start] + value + text[end:]).encode("utf-8", "surrogateescape")


def flip(rng: random.Random, line: bytes) -> bytes:
    """A byte or three changed, as the older fuzz does (a control for the structural ones)."""
    out = bytearray(line)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(out) + 1)
        op = rng.choice(["flip", "insert", "delete"])
        if op == "flip" and at < len(out):
            out[at] = rng.randrange(256)
        elif op == "insert":
            out[at:at] = bytes([rng.randrange(256)])
        else:
            del out[at : at + rng.randint(1, 4)]
    return bytes(out)


#: The mutations of one line; ``merge`` takes two.
FAMILIES: Dict[str, Callable[..., bytes]] = {
    "rename-key": rename_key,
    "nest": nest,
    "split": split,
    "duplicate-key": duplicate_key,
    "id-type": id_type,
    "flip": flip,
}


def mutate(rng: random.Random, lines: List[bytes]) -> bytes:
    """One mutated line (which may hold newlines, or two messages)."""
    line = rng.choice(lines)
    for _ in range(rng.choice([1, 1, 1, 2])):
        family = rng.choice(list(FAMILIES) + ["merge"])
        if family == "merge":
            line = merge(rng, line, rng.choice(lines))
        else:
            line = FAMILIES[family](rng, line)
    return line


def blob(rng: random.Random, lines: List[bytes]) -> bytes:
    """One mutated line, or a sequence of two or three (a valid one among them, at times),
    joined by newlines: sent in one write."""
    count = rng.choice([1, 1, 2, 2, 3])
    parts = [mutate(rng, lines) if rng.random() < 0.85 else rng.choice(lines) for _ in range(count)]
    return b"\n".join(parts)
