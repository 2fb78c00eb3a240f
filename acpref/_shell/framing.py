"""Framing: a byte stream cut into lines, one JSON-RPC message each, with a bound on a line.

Spec: transports.mdx (stdio); clause TRANSPORT-04 (messages are delimited by newlines and
contain none).

``LineFramer`` is the one framing rule: the connection (``LineSplitter``, its lines from reads),
the recorder (``acpref.testing.RecordingStream``) and the proxy's judge all cut with it, so what
a line is and when it is oversize is decided here once (spec_notes/transports.md). It turns
bytes into lines without their ``\\n``. A line over the bound is dropped as it arrives, never
buffered whole, and reported as ``Oversize`` with its first and last
``OVERSIZE_HEAD`` bytes, from which the connection reads what the line belonged to
(``acpref._bounds.peek_envelope``); the stream goes on after it. A read that was interrupted
(``Stream.interrupt``, see ``acpref._shell.transport``) comes out as ``INTERRUPTED``, and the split
goes on afterwards.

Nothing here knows JSON.
"""

from __future__ import annotations

from typing import Callable, Iterator, List, Optional, Union

import attrs

__all__ = ["INTERRUPTED", "LineFramer", "LineSplitter", "Oversize", "OVERSIZE_HEAD"]

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


class LineFramer:
    """The one line-framing rule of acpref: the live sides, the recorder and the oracle use it.

    ``feed(chunk)`` returns the lines (without ``\\n``) the chunk completed, in order; ``end()``
    the unterminated last line at the end of input, if any. A line of more than
    ``max_line_bytes`` bytes (its newline not counted) is never held: it is dropped as it
    arrives and comes out, once its newline (or the end of input) arrives, as an ``Oversize``
    with its size and its first and last ``OVERSIZE_HEAD`` bytes. A line of exactly the bound is
    kept. Pieces of a line in progress are kept in a list and joined once, so a line of N bytes
    costs O(N) however it was cut. Not thread-safe: one framer per direction, fed by one thread
    at a time.
    """

    def __init__(self, max_line_bytes: int) -> None:
        self._max = max_line_bytes
        self._parts: List[bytes] = []
        self._pending = 0  # bytes held in `_parts`
        self._dropping = 0  # > 0 while discarding an oversize line: bytes seen so far
        self._head = self._tail = b""  # the first and last bytes of the line being dropped

    @property
    def in_line(self) -> bool:
        """A line is in progress (held or being dropped): the next read may be a large one."""
        return bool(self._pending or self._dropping)

    def feed(self, chunk: bytes) -> List[Union[bytes, Oversize]]:
        out: List[Union[bytes, Oversize]] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            if self._dropping:
                head = _more_head(self._head, chunk, start, nl)
                out.append(Oversize(self._dropping + nl - start, head,
                                    _tail(self._tail, chunk, start, nl)))
                self._dropping, self._head, self._tail = 0, b"", b""
            elif self._parts:
                self._parts.append(chunk[start:nl])
                self._pending = 0
                out.append(_joined(self._parts, self._max))
            elif nl - start > self._max:
                out.append(Oversize(
                    nl - start,
                    chunk[start : min(nl, start + OVERSIZE_HEAD)],
                    chunk[max(start, nl - OVERSIZE_HEAD) : nl],
                ))
            else:
                out.append(chunk[start:nl])
            start = nl + 1
        rest = len(chunk) - start
        if rest:
            self._keep(chunk, start, rest)
        return out

    def _keep(self, chunk: bytes, start: int, rest: int) -> None:
        """Hold (or go on dropping) the unterminated rest ``chunk[start:]``."""
        if self._dropping:
            self._dropping += rest
            self._head = _more_head(self._head, chunk, start, len(chunk))
            self._tail = _tail(self._tail, chunk, start, len(chunk))
        elif self._pending + rest > self._max:
            self._dropping = self._pending + rest
            self._head = _head(self._parts, chunk[start : start + OVERSIZE_HEAD])
            self._tail = _tail(_last(self._parts), chunk, start, len(chunk))
            self._parts, self._pending = [], 0
        else:
            self._parts.append(chunk[start:] if start else chunk)
            self._pending += rest

    def end(self) -> List[Union[bytes, Oversize]]:
        """At the end of input: the unterminated last line, if any (an ``Oversize`` if over)."""
        if self._dropping:
            last = Oversize(self._dropping, self._head, self._tail)
            self._dropping, self._head, self._tail = 0, b"", b""
            return [last]
        if self._parts:
            self._pending = 0
            return [_joined(self._parts, self._max)]
        return []


class LineSplitter:
    """A stream's lines as a live connection reads them: ``LineFramer`` over a ``read`` callable.

    ``read(size)`` returns bytes, ``b""`` at the end of input, or None when interrupted (that
    comes out as ``INTERRUPTED``, and the split goes on afterwards). ``seen(lines, ended)``
    (optional) gets each read's lines together before the first is yielded, ``ended`` at the
    end of input: a recorder's view of the wire, framed once (``acpref.testing.RecordingStream``).
    """

    def __init__(
        self,
        read: Callable[[int], Optional[bytes]],
        max_line_bytes: int,
        seen: Optional[Callable[[List[Union[bytes, Oversize]], bool], None]] = None,
    ) -> None:
        self._read = read
        self._max = max_line_bytes
        self._seen = seen

    def __iter__(self) -> Iterator[Union[bytes, Oversize, _Interrupted]]:
        # One generator is shared by every thread that takes the reading role in turn; only
        # the role's holder advances it, so its framer (a line in progress) carries over.
        framer = LineFramer(self._max)
        while True:
            chunk = self._read(_LARGE_READ if framer.in_line else _SMALL_READ)
            if chunk is None:
                yield INTERRUPTED
                continue
            lines = framer.feed(chunk) if chunk else framer.end()
            if self._seen is not None:
                self._seen(lines, not chunk)
            # Popped, never bound to a name, so that this frame holds no reference to a line
            # while it waits at the yield: a line is freed once its reader is done.
            lines.reverse()
            while lines:
                yield lines.pop()
            if not chunk:
                return


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
