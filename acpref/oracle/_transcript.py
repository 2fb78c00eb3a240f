"""Transcripts: ACP traffic recorded both ways, one JSON line per message, bytes kept exactly.

Format (``acpref-transcript/1``), one JSON object per line:

* a message: ``{"from": "client" | "agent", "ts": <float, Unix seconds>, "line": "<the raw
  line as travelled, without its newline>"}``; a line that is not valid UTF-8 is kept as
  ``"b64": "<base64 of the raw bytes>"`` instead of ``"line"``, so malformed traffic is kept;
* an event: ``{"from": ..., "ts": ..., "event": "eof"}`` when that party closed its stream
  (the transcript then ended cleanly for it), ``"event": "oversize", "size": N`` for a line
  longer than the recorder's bound, which is not kept, or ``{"from": "client", "event": "stop"}``
  when the client stopped the agent process (with a signal) because it had not exited at the end
  of its input: whatever the agent still owed then is not judged (spec-gap stopped-agent);
  ``"event": "gave-up"`` when that party stopped waiting for an answer at a deadline of its own
  (``--timeout``): what its peer still owed when the connection ended is not judged (spec-gap
  gave-up).

The first line may be a header ``{"format": "acpref-transcript/1", ...}``; readers skip it.
Its ``"subject"`` (``"agent"`` or ``"client"``), when present, names the party under test: the
other one is acpref's own driver (check-agent, the pytest plugin) or grading agent
(check-client), whose deliberate rule-breaking (bad input, probes) a report shows as acpref's
probes, not as the subject's findings (``subject_of``).
Message indices used in reports count message records only (header and events excluded).
"""

from __future__ import annotations

import base64
import io
import json
import os
import threading
import time
from typing import IO, Any, Dict, Iterable, Iterator, List, Optional, Union

import attrs

__all__ = [
    "Record",
    "TranscriptRecorder",
    "read_transcript",
    "iter_transcript",
    "dumps",
    "subject_of",
    "FORMAT",
]

FORMAT = "acpref-transcript/1"


@attrs.frozen
class Record:
    """One record of a transcript: a message (``raw`` bytes) or an event."""

    sender: str  # "client" or "agent"
    ts: float
    raw: Optional[bytes] = None
    event: Optional[str] = None
    size: Optional[int] = None

    @property
    def is_message(self) -> bool:
        return self.event is None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"from": self.sender, "ts": round(self.ts, 6)}
        if self.event is not None:
            out["event"] = self.event
            if self.size is not None:
                out["size"] = self.size
            return out
        assert self.raw is not None
        try:
            out["line"] = self.raw.decode("utf-8")
        except UnicodeDecodeError:
            out["b64"] = base64.b64encode(self.raw).decode("ascii")
        return out

    @classmethod
    def from_json(cls, data: Any) -> "Record":
        """A record from its JSON object; ``ValueError`` naming what is wrong, for any bad shape."""
        if not isinstance(data, dict):
            raise ValueError(f"a record must be a JSON object, not {_kind(data)}")
        sender = data.get("from")
        if sender not in ("client", "agent"):
            raise ValueError(f"'from' must be \"client\" or \"agent\", not {_short(sender)}")
        ts = data.get("ts", 0.0)
        if type(ts) not in (int, float) or ts != ts or ts in (float("inf"), float("-inf")):
            raise ValueError(f"'ts' must be a number of seconds, not {_short(ts)}")
        ts = float(ts)
        if "event" in data:
            event, size = data["event"], data.get("size")
            if type(event) is not str:
                raise ValueError(f"'event' must be a string, not {_short(event)}")
            if size is not None and type(size) is not int:
                raise ValueError(f"'size' must be an integer, not {_short(size)}")
            return cls(sender=sender, ts=ts, event=event, size=size)
        if "line" in data:
            line = data["line"]
            if type(line) is not str:
                raise ValueError(f"'line' must be a string, not {_short(line)}")
            try:
                return cls(sender=sender, ts=ts, raw=line.encode("utf-8"))
            except UnicodeEncodeError:
                raise ValueError("'line' is not Unicode text (a lone surrogate)") from None
        if "b64" in data:
            b64 = data["b64"]
            if type(b64) is not str:
                raise ValueError(f"'b64' must be a base64 string, not {_short(b64)}")
            try:
                return cls(sender=sender, ts=ts, raw=base64.b64decode(b64, validate=True))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"'b64' is not base64: {exc}") from None
        raise ValueError("a record needs 'line', 'b64' or 'event'")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def read_transcript(source: Union[str, os.PathLike, IO[str], Iterable[Any]]) -> List[Record]:
    """Read a transcript from a path, a text file, or an iterable of records/dicts/lines."""
    return list(iter_transcript(source))


def iter_transcript(source: Union[str, os.PathLike, IO[str], Iterable[Any]]) -> Iterator[Record]:
    """The records of a transcript one by one, as ``read_transcript`` reads them, holding none:
    a path is read as the records are taken (a transcript can be larger than memory)."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            yield from iter_transcript(f)
        return
    for number, item in enumerate(source, start=1):
        if isinstance(item, Record):
            yield item
            continue
        try:
            if isinstance(item, (str, bytes)):
                if not item.strip():
                    continue  # a blank line
                data = json.loads(item)
            else:
                data = item
            if isinstance(data, dict) and "format" in data and "from" not in data:
                continue  # header
            record = Record.from_json(data)
        except ValueError as exc:  # json.JSONDecodeError is one
            raise ValueError(f"line {number}: {exc}") from None
        except RecursionError:
            raise ValueError(f"line {number}: nested too deep") from None
        yield record


def subject_of(path: Union[str, os.PathLike]) -> Optional[str]:
    """The party under test a transcript's header names (``"agent"``, ``"client"``), or None.

    Transcripts recorded before the header said so are known by their recorder's header:
    ``{"check": "client"}`` (check-client's grading agent), ``{"agent": NAME}`` (the driver).
    An unreadable header, or none, names no subject: then both parties are judged alike.
    """
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline(65536)
        header = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(header, dict) or "format" not in header or "from" in header:
        return None
    subject = header.get("subject")
    if subject in ("agent", "client"):
        return str(subject)
    if header.get("check") == "client":
        return "client"
    if header.get("recorder") == "client" and "agent" in header:
        return "agent"
    return None


class TranscriptRecorder:
    """Writes a transcript as traffic flows; usable as a ``Connection`` recorder.

    ``me`` is the party whose connection records (``"client"`` or ``"agent"``): its outgoing lines
    are from ``me``, incoming from the other. Thread-safe; each record is flushed as written.
    ``records`` keeps them in memory as well when ``keep=True``.
    """

    def __init__(
        self,
        target: Union[str, os.PathLike, IO[str], None] = None,
        *,
        me: str = "client",
        keep: bool = False,
        header: Optional[Dict[str, Any]] = None,
    ) -> None:
        if me not in ("client", "agent"):
            raise ValueError("me must be 'client' or 'agent'")
        self.me = me
        self.peer = "agent" if me == "client" else "client"
        self._lock = threading.Lock()
        self._own = isinstance(target, (str, os.PathLike))
        self._file: Optional[IO[str]] = (
            open(target, "w", encoding="utf-8")
            if isinstance(target, (str, os.PathLike))
            else target
        )
        self.records: Optional[List[Record]] = [] if keep or target is None else None
        if self._file is not None:
            self._file.write(
                json.dumps({"format": FORMAT, "recorder": me, **(header or {})}) + "\n"
            )
            self._file.flush()

    def __call__(self, direction: str, line: Any) -> None:
        """The ``Connection`` recorder hook: ``direction`` is ``"in"`` or ``"out"``, ``line`` the
        bytes; a line over the bound comes as the connection's ``Oversize`` (not bytes: its
        ``size`` only, for the line was never held). An empty line is a line, kept as one."""
        sender = self.me if direction == "out" else self.peer
        if not isinstance(line, (bytes, bytearray, memoryview)):
            self.add(Record(sender=sender, ts=time.time(), event="oversize", size=line.size))
        else:
            self.add(Record(sender=sender, ts=time.time(), raw=bytes(line)))

    def add(self, record: Record) -> None:
        with self._lock:
            if self.records is not None:
                self.records.append(record)
            if self._file is not None and not self._file.closed:
                self._file.write(json.dumps(record.to_json(), ensure_ascii=False) + "\n")
                self._file.flush()

    def eof(self, sender: str) -> None:
        """Record that ``sender`` closed its stream."""
        self.add(Record(sender=sender, ts=time.time(), event="eof"))

    def close(self) -> None:
        with self._lock:
            if self._own and self._file is not None and not self._file.closed:
                self._file.close()

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records or [])


def dumps(records: Iterable[Record]) -> str:
    """A whole transcript as text (header included)."""
    buf = io.StringIO()
    buf.write(json.dumps({"format": FORMAT}) + "\n")
    for r in records:
        buf.write(json.dumps(r.to_json(), ensure_ascii=False) + "\n")
    return buf.getvalue()
