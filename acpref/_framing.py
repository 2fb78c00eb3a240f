"""Framing: a byte stream cut into lines, one JSON-RPC message each, with a bound on a line.

Spec: transports.mdx (stdio); clause TRANSPORT-04 (messages are delimited by newlines and
contain none).

``LineSplitter`` turns reads into lines without their ``\\n``. A line over the bound is dropped as
it arrives, never buffered whole, and reported as ``Oversize`` with its first and last
``OVERSIZE_HEAD`` bytes, from which the connection reads what the line belonged to
(``acpref._bounds.peek_envelope``); the stream goes on after it. A read that was interrupted
(``Stream.interrupt``, see ``acpref._transport``) comes out as ``INTERRUPTED``, and the split
goes on afterwards.

Nothing here knows JSON.
"""

from __future__ import annotations

from typing import Callable, Iterator, List, Optional, Union

import attrs

__all__ = ["INTERRUPTED", "LineSplitter", "Oversize", "OVERSIZE_HEAD"]

#: Bytes asked for per read while between lines, and while inside a long line.
_SMALL_READ = 64 * 1024
_LARGE_READ = 1024 * 1024

#: How much of each end of an oversize line is kept: enough to read its envelope (``jsonrpc``,
#: ``id``, ``method``), whether the writer put it before the payload (most do) or after it, so
#: that the refusal can name the request it belongs to.
OVERSIZE_HEAD = 4096


@attrs.frozen
class Oversize:
    """A line longer than the bound was dropped: ``size`` is how many bytes it had, ``head`` its
    first ``OVERSIZE_HEAD`` bytes, ``tail`` its last ``OVERSIZE_HEAD`` bytes."""

    size: int
    head: bytes = b""
    tail: bytes = b""


class _Interrupted:
    """Yielded by ``LineSplitter`` when a read was interrupted; the split goes on afterwards."""

    def __repr__(self) -> str:
        return "INTERRUPTED"


INTERRUPTED = _Interrupted()


class LineSplitter:
    """Split a stream's bytes into lines without the ``\\n``; bound the length of one line.

    Pieces of a line in progress are kept in a list and joined once, when the newline arrives,
    so a line of N bytes costs O(N) however it was cut. A final line without a newline is
    delivered at the end of input.
    """

    def __init__(self, read: Callable[[int], Optional[bytes]], max_line_bytes: int) -> None:
        self._read = read
        self._max = max_line_bytes

    def __iter__(self) -> Iterator[Union[bytes, Oversize, _Interrupted]]:
        # One generator is shared by every thread that takes the reading role in turn; only
        # the role's holder advances it, so its state (a line in progress) carries over.
        parts: List[bytes] = []
        pending = 0  # bytes held in `parts`
        dropping = 0  # > 0 while discarding an oversize line: bytes seen so far
        head = tail = b""  # the first and last bytes of the line being dropped
        while True:
            chunk = self._read(_LARGE_READ if pending or dropping else _SMALL_READ)
            if chunk is None:
                yield INTERRUPTED
                continue
            if not chunk:
                if dropping:
                    yield Oversize(dropping, head, tail)
                elif parts:
                    yield b"".join(parts)
                return
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    break
                if dropping:
                    head = _more_head(head, chunk, start, nl)
                    yield Oversize(dropping + nl - start, head, _tail(tail, chunk, start, nl))
                    dropping, head, tail = 0, b"", b""
                elif parts:
                    parts.append(chunk[start:nl])
                    pending = 0
                    # Joined by a function, so that this frame holds no reference to the line
                    # while it waits at the yield: a line is freed once its reader is done.
                    yield _joined(parts, self._max)
                elif nl - start > self._max:
                    yield Oversize(
                        nl - start,
                        chunk[start : min(nl, start + OVERSIZE_HEAD)],
                        chunk[max(start, nl - OVERSIZE_HEAD) : nl],
                    )
                else:
                    yield chunk[start:nl]
                start = nl + 1
            rest = len(chunk) - start
            if not rest:
                continue
            if dropping:
                dropping += rest
                head = _more_head(head, chunk, start, len(chunk))
                tail = _tail(tail, chunk, start, len(chunk))
            elif pending + rest > self._max:
                dropping = pending + rest
                head = _head(parts, chunk[start : start + OVERSIZE_HEAD])
                tail = _tail(_last(parts), chunk, start, len(chunk))
                parts, pending = [], 0
            else:
                parts.append(chunk[start:] if start else chunk)
                pending += rest


def _joined(parts: List[bytes], limit: int) -> Union[bytes, Oversize]:
    """The line made of ``parts`` (emptied), or its ``Oversize`` when it passes ``limit``."""
    line = b"".join(parts)
    parts.clear()
    if len(line) > limit:
        return Oversize(len(line), line[:OVERSIZE_HEAD], line[-OVERSIZE_HEAD:])
    return line


def _head(parts: List[bytes], more: bytes) -> bytes:
    """The first ``OVERSIZE_HEAD`` bytes of ``parts`` followed by ``more``."""
    out = b""
    for part in parts:
        out += part[: OVERSIZE_HEAD - len(out)]
        if len(out) >= OVERSIZE_HEAD:
            return out
    return (out + more)[:OVERSIZE_HEAD]


def _more_head(head: bytes, chunk: bytes, start: int, end: int) -> bytes:
    """``head`` filled up to ``OVERSIZE_HEAD`` bytes from ``chunk[start:end]`` (a line found
    oversize before its first ``OVERSIZE_HEAD`` bytes had arrived: a bound under 4 KiB)."""
    if len(head) >= OVERSIZE_HEAD:
        return head
    return head + chunk[start : min(end, start + OVERSIZE_HEAD - len(head))]


def _last(parts: List[bytes]) -> bytes:
    """The last ``OVERSIZE_HEAD`` bytes of ``parts``."""
    out = b""
    for part in reversed(parts):
        out = part[-(OVERSIZE_HEAD - len(out)) :] + out
        if len(out) >= OVERSIZE_HEAD:
            break
    return out


def _tail(kept: bytes, chunk: bytes, start: int, end: int) -> bytes:
    """The last ``OVERSIZE_HEAD`` bytes of ``kept`` followed by ``chunk[start:end]``."""
    return (kept + chunk[max(start, end - OVERSIZE_HEAD) : end])[-OVERSIZE_HEAD:]
