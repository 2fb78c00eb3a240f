"""Server-sent events framing: bytes in, events out, with a bound on one event's size.

Spec: the WHATWG HTML standard, "Server-sent events", section "Interpreting an event stream";
MCP 2025-06-18, Transports, Streamable HTTP (a POST may be answered with ``text/event-stream``
whose ``message`` events each carry one JSON-RPC message in ``data``).

``SseParser`` is fed whatever the socket gave and returns the events completed so far, in the
manner of ``acpref._shell.transport.LineSplitter``: framing apart from I/O, so that the HTTP client
can bound every read with its deadline. Lines end with CRLF, LF or CR (a CR at the end of one
chunk waits for the next, which may begin with the LF of the same line ending). A field line
``data: x`` adds ``x`` to the event's data; ``event:`` names its type; a blank line ends it;
``:`` lines are comments (keep-alives); ``id`` and ``retry`` are read and ignored (acpref does
not resume streams). An event left unfinished at the end of the stream is dropped, as the
standard says.

Nothing here does I/O.
"""

from __future__ import annotations

from typing import List, Optional

import attrs

__all__ = ["SseEvent", "SseParser", "SseTooLarge"]


class SseTooLarge(ValueError):
    """An event (or one line) grew past the parser's bound."""


@attrs.frozen
class SseEvent:
    """One dispatched event: its type (``"message"`` unless named) and its data."""

    type: str
    data: str


class SseParser:
    """Turns chunks of an event stream into ``SseEvent``s."""

    def __init__(self, max_event_bytes: int) -> None:
        self._max = max_event_bytes
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no line ending
        self._data: List[str] = []
        self._data_size = 0
        self._type: Optional[str] = None
        self._first_line = True

    def feed(self, chunk: bytes) -> List[SseEvent]:
        """Parse ``chunk``; return the events it completed (maybe none)."""
        self._buffer += chunk
        events: List[SseEvent] = []
        while True:
            end, skip = _line_end(self._buffer, self._scanned)
            if end < 0:
                # Scan only the new bytes next time: a long line costs O(n), however cut.
                self._scanned = max(0, len(self._buffer) - 1)
                break
            line = bytes(self._buffer[:end])
            del self._buffer[: end + skip]
            self._scanned = 0
            event = self._on_line(line.decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
        if len(self._buffer) > self._max:
            raise SseTooLarge(f"an event stream line exceeds {self._max} bytes")
        return events

    def finish(self) -> List[SseEvent]:
        """The end of the stream: a last CR ends its line; an unfinished event is dropped."""
        events = self.feed(b"\n") if self._buffer.endswith(b"\r") else []
        self._buffer.clear()
        self._data, self._data_size, self._type = [], 0, None
        return events

    def _on_line(self, line: str) -> Optional[SseEvent]:
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")  # the standard allows one leading BOM
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: servers send them as keep-alives
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._data_size += len(value) + 1
            if self._data_size > self._max:
                raise SseTooLarge(f"an event exceeds {self._max} bytes")
        elif field == "event":
            self._type = value
        # "id" and "retry" serve reconnection, which acpref does not do; other fields are ignored.
        return None

    def _dispatch(self) -> Optional[SseEvent]:
        data, kind = self._data, self._type
        self._data, self._data_size, self._type = [], 0, None
        if not data:
            return None  # the standard: an event without data is not dispatched
        return SseEvent(type=kind or "message", data="\n".join(data))


def _line_end(buffer: bytearray, start: int) -> "tuple[int, int]":
    """Where the first complete line of ``buffer`` ends, and the length of its line ending.

    ``start``: no line ending lies before it (but a CR just before it is looked at again).
    """
    lf, cr = buffer.find(b"\n", start), buffer.find(b"\r", start)
    if cr < 0 or (0 <= lf < cr):
        return lf, 1
    if cr == len(buffer) - 1:
        return -1, 0  # a CR at the very end: the LF of a CRLF may come with the next chunk
    return cr, 2 if buffer[cr + 1 : cr + 2] == b"\n" else 1
