"""Recording a live connection so that the transcript's order is the wire's, and validating it.

``RecordingStream`` wraps the stream of a ``Connection``: a line we send is recorded *before* it
is written (so the peer's reaction to it can never be recorded first), a line we receive as it is
read, and the end of each direction as an ``eof`` event. Every record goes to a ``RecordSink``,
which writes it to a transcript file (or keeps it, without one), feeds it to the oracle's
``Validator`` at once, and lets a test wait for a message of the peer.

What a sink holds is bounded by configuration, not by the peer: the records stream to the
transcript file (read back from it when asked for), the oracle judges as they pass, and the
peer's messages are kept for waiters while the last ``keep_bytes`` of them (counted decoded,
``acpref._bounds.held_cost``; 64 MiB by default) hold them, the newest always.

Raw bytes can be written through the same stream (``write_raw``) to send what ``Connection``
never would: broken JSON, a wrong ``jsonrpc``, a request with a string id. They are recorded and
judged like everything else.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple, Union

from .._bounds import held_cost
from .._core import Finding, Party
from .._shell.framing import LineFramer, Oversize
from .._shell.transport import Stream, read_accepts_timeout
from ..oracle import Record, Report, TranscriptRecorder, Validator
from ..oracle._transcript import iter_transcript

__all__ = ["RecordSink", "RecordingStream", "KEEP_BYTES"]

#: What the peer's messages kept for waiters may cost decoded, together (the newest is kept).
KEEP_BYTES = 64 * 1024 * 1024


log = logging.getLogger("acpref.testing")

#: A peer message the sink keeps for waiters: (message index, its JSON object or None).
Received = Tuple[int, Any]


class RecordSink:
    """Keeps, writes and validates the records of one connection, seen from party ``me``."""

    def __init__(
        self,
        me: str,
        transcript: Union[str, os.PathLike, None] = None,
        *,
        header: Optional[Dict[str, Any]] = None,
        keep_bytes: int = KEEP_BYTES,
        newer_spec: bool = False,
    ) -> None:
        self.me = Party(me)
        self.peer = Party.CLIENT if self.me is Party.AGENT else Party.AGENT
        self.validator = Validator(newer_spec=newer_spec)
        self.transcript_path = os.fspath(transcript) if transcript is not None else None
        self._file = TranscriptRecorder(transcript, me=me, header=header) if transcript else None
        #: The records, kept only when no transcript file holds them.
        self._records: Optional[List[Record]] = None if self._file is not None else []
        self._cond = threading.Condition()
        #: The peer's latest messages (index, parsed, cost); ``_base`` counts those let go.
        self._received: Deque[Tuple[int, Any, int]] = deque()
        self._base = 0
        self._held = 0
        self._keep_bytes = keep_bytes
        self._ended: Dict[Party, bool] = {Party.AGENT: False, Party.CLIENT: False}
        self._report: Optional[Report] = None

    def add(self, record: Record) -> List[Finding]:
        """Record, write and validate one record; wake whoever waits for it."""
        with self._cond:
            index = self.validator.messages
            if self._records is not None:
                self._records.append(record)
            if self._file is not None:
                self._file.add(record)
            found = self.validator.feed(record)
            if record.event == "eof":
                self._ended[Party(record.sender)] = True
            elif record.is_message and record.sender == self.peer.value:
                raw = record.raw or b""
                cost = held_cost(raw)
                # Decoded once, by the oracle: a line that holds no JSON object is kept as None.
                self._received.append((index, self.validator.last_message, cost))
                self._held += cost
                while self._held > self._keep_bytes and len(self._received) > 1:
                    self._held -= self._received.popleft()[2]
                    self._base += 1
            self._cond.notify_all()
        return found

    def records(self) -> Iterator[Record]:
        """Every record so far, in order: read back from the transcript file when there is one."""
        with self._cond:
            kept = None if self._records is None else list(self._records)
        if kept is not None:
            return iter(kept)
        assert self.transcript_path is not None
        return iter_transcript(self.transcript_path)

    @property
    def findings(self) -> List[Finding]:
        """What the oracle found so far (the end-of-transcript checks come with ``finish``)."""
        with self._cond:
            return list(self.validator.findings)

    def received(self, since: int = 0, until: Optional[int] = None) -> List[Received]:
        """The peer's messages from position ``since`` of the received list up to ``until``
        (excluded; positions as ``received_count`` counts them), those still kept."""
        with self._cond:
            skip = max(since - self._base, 0)
            stop = None if until is None else max(until - self._base, 0)
            return [(i, m) for i, m, _ in list(self._received)[skip:stop]]

    @property
    def received_count(self) -> int:
        """How many messages the peer sent so far (positions for ``since``)."""
        with self._cond:
            return self._base + len(self._received)

    def wait_for(
        self, predicate: Callable[[Any], bool], *, since: int = 0, timeout: float = 10.0
    ) -> Received:
        """The first peer message from position ``since`` that ``predicate`` accepts.

        Raises ``TimeoutError`` after ``timeout`` seconds, or at once when the peer has ended.
        Messages let go before they were looked at (``keep_bytes``) are not looked at.
        """
        deadline = time.monotonic() + timeout
        position = since
        with self._cond:
            while True:
                position = max(position, self._base)
                while position < self._base + len(self._received):
                    index, message, _ = self._received[position - self._base]
                    position += 1
                    if message is not None and predicate(message):
                        return index, message
                if self._ended[self.peer]:
                    raise TimeoutError("the peer closed its stream first")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"no matching message from the {self.peer.value} in {timeout}s"
                    )
                self._cond.wait(remaining)

    def wait_read_all(self, timeout: float) -> bool:
        """Wait until our side has provably read every message the peer has sent so far: it
        answered a request the peer sent then or later (stdio is ordered, so it had read all
        before it; ``ConnectionFacts.read``). False after ``timeout`` or once the peer ended."""
        state = self.validator.state
        with self._cond:
            sent = state.sent[self.peer]
            read = lambda: state.read[self.me][0] >= sent  # noqa: E731
            self._cond.wait_for(lambda: read() or self._ended[self.peer], timeout)
            return read()

    def wait_peer_eof(self, timeout: float) -> bool:
        """Wait until the peer closed its stream."""
        with self._cond:
            return self._cond.wait_for(lambda: self._ended[self.peer], timeout)

    def peer_stopped(self) -> None:
        """Record that we stop the peer process: it had not ended at the end of its input."""
        self.add(Record(sender=self.me.value, ts=time.time(), event="stop"))

    def gave_up(self) -> None:
        """Record that we stopped waiting for an answer at our own deadline (spec-gap
        client-gave-up): what the peer still owes when the connection ends is not judged."""
        self.add(Record(sender=self.me.value, ts=time.time(), event="gave-up"))

    def finish(self) -> Report:
        """The final report (end-of-transcript checks included); idempotent."""
        with self._cond:
            if self._report is None:
                self._report = self.validator.finish()
            if self._file is not None:
                self._file.close()
            return self._report


class RecordingStream:
    """A ``Stream`` that records every line both ways into a ``RecordSink`` (see the module doc).

    ``close_output`` (optional) ends our direction only, so that the peer sees end of input
    while we keep reading what it still sends; without it, ``end_output`` closes the whole
    stream.
    """

    def __init__(
        self,
        inner: Stream,
        sink: RecordSink,
        *,
        close_output: Optional[Callable[[], None]] = None,
        max_line_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self._inner = inner
        self._sink = sink
        self._close_output = close_output
        # The connection's own framing rule, so that the transcript's lines are its lines.
        self._out = LineFramer(max_line_bytes)
        #: Ours until a reading Connection frames the peer's lines itself (``framed_by_reader``).
        self._in: Optional[LineFramer] = LineFramer(max_line_bytes)
        self._write_lock = threading.Lock()  # guards _out, _output_ended and the write order
        self._output_ended = False
        self._input_ended = False

    def write(self, data: bytes) -> None:
        with self._write_lock:
            if self._output_ended:
                log.debug("dropped %d bytes written after the end of our output", len(data))
                return
            for line in self._out.feed(bytes(data)):
                self._record(self._sink.me, line)
            self._inner.write(data)

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are (no newline added): the way to send what is invalid."""
        self.write(data)

    def read(self, size: int, timeout: Optional[float] = None) -> Optional[bytes]:
        inner_read = self._inner.read
        data = inner_read(size, timeout) if read_accepts_timeout(inner_read) else inner_read(size)
        if data is None or self._in is None:  # nothing consumed, or the reader frames
            return data
        self._lines_read(self._in.feed(data) if data else self._in.end(), not data)
        return data

    def framed_by_reader(self) -> Callable[[List[Union[bytes, Oversize]], bool], None]:
        """Let the reading ``Connection`` frame the peer's lines, once, and hand them here.

        Called by ``Connection.start``: from then on ``read`` passes bytes through, and the
        returned callback (``LineSplitter``'s ``seen``) records each read's lines together, as
        they were read, before the connection dispatches the first of them.
        """
        self._in = None
        return self._lines_read

    def _lines_read(self, lines: List[Union[bytes, Oversize]], ended: bool) -> None:
        for line in lines:
            self._record(self._sink.peer, line)
        if ended and not self._input_ended:
            self._input_ended = True
            self._sink.add(Record(sender=self._sink.peer.value, ts=time.time(), event="eof"))

    def interrupt(self) -> None:
        interrupt = getattr(self._inner, "interrupt", None)
        if interrupt is not None:
            interrupt()

    def end_output(self) -> None:
        """Close our direction: the peer reads end of input. Idempotent."""
        with self._write_lock:
            if self._output_ended:
                return
            self._output_ended = True
            for line in self._out.end():
                self._record(self._sink.me, line)
            self._sink.add(Record(sender=self._sink.me.value, ts=time.time(), event="eof"))
            if self._close_output is not None:
                try:
                    self._close_output()
                except OSError:
                    pass
                return
        self._inner.close()

    def close(self) -> None:
        self._inner.close()

    def _record(self, sender: Party, line: Union[bytes, Oversize]) -> None:
        if isinstance(line, Oversize):
            event = Record(sender=sender.value, ts=time.time(), event="oversize", size=line.size)
            self._sink.add(event)
        else:
            self._sink.add(Record(sender=sender.value, ts=time.time(), raw=line))
