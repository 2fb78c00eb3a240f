"""Closed sessions kept compact: the registry's record of a session that was closed.

Spec: session-setup.mdx (closing a session, SETUP-16), session-list.mdx (LIST-06).

A closed session stays listable and loadable, so the registry keeps what ``session/list``,
``session/load`` and ``session/resume`` show of it. A hostile client may open and close sessions
forever, and most closed sessions hold nothing but their settings, set up alike. So
``ClosedRecords.record`` turns such a session into one ``int``: the index of its *shape* (cwd,
additional roots, title, and the index of its *settings*: MCP servers, modes, config options,
system prompt), its ``updated_at`` in milliseconds and its ``touched`` counter, packed with
``pack`` (below). Shapes and settings are kept once each (``Interned``), for as long as a record
holds them. ``ClosedRecords.session`` rebuilds the ``Session`` as it was.

The registry (``_sessions.SessionRegistry``) decides when a session is closed and holds the
records; this module only makes and reads them. The caller holds the registry's lock.
"""

from __future__ import annotations

import calendar
import functools
import time
from typing import Any, Dict, Hashable, List, Optional, Sequence, Tuple

from ._session import Session

__all__ = ["ClosedRecords"]

#: A record's fields: the index of its shape in 20 bits, ``updated_at`` in milliseconds since
#: 1970 in 44 bits, and ``touched`` above them.
_WIDTHS = (20, 44)

#: A shape: ``(cwd, additional_directories, title, settings index)``; settings:
#: ``(mcp_servers, modes, config_options as a tuple or None, system_prompt)``.
_Shape = Tuple[str, Tuple[str, ...], Optional[str], int]
_Settings = Tuple[Tuple[Any, ...], Any, Optional[Tuple[Any, ...]], Any]


class ClosedRecords:
    """The shapes and settings the compact records of one registry share."""

    def __init__(self) -> None:
        self._shapes = Interned()  # _Shape values
        self._settings = Interned()  # _Settings values

    def record(self, session: Session) -> Optional[int]:
        """The compact record of ``session``, or None if it does not fit one (it stays whole)."""
        stamp = _stamp_ms(session.updated_at)
        if stamp is None:  # not a stamp of ours (a session read back from disk, say)
            return None
        options = None if session.config_options is None else tuple(session.config_options)
        settings: _Settings = (session.mcp_servers, session.modes, options, session.system_prompt)
        # Equal settings are looked for by the identity of the agent's records (an agent reuses
        # its modes and options) and the repr of the client's, and compared with ==.
        key = (
            id(session.modes),
            None if options is None else tuple(map(id, options)),
            hash(repr((session.mcp_servers, session.system_prompt))),
        )
        settings_index = self._settings.take(key, settings)
        shape: _Shape = (
            session.cwd,
            session.additional_directories,
            session.title,
            settings_index,
        )
        shape_index = self._shapes.take(shape, shape)
        if self._shapes.holders(shape_index) > 1:  # a shape kept before holds the settings
            self._settings.release(settings_index)
        record = pack((shape_index, stamp, session.touched), _WIDTHS)
        if record is None:
            self._release(shape_index)
        return record

    def session(self, session_id: str, record: int, *, release: bool) -> Session:
        """The session ``record`` keeps; ``release``: the record is done with (the session is
        whole again, or deleted), else the session is a copy."""
        shape_index, stamp, touched = unpack(record, _WIDTHS)
        cwd, additional_directories, title, settings_index = self._shapes[shape_index]
        mcp_servers, modes, config_options, system_prompt = self._settings[settings_index]
        if release:
            self._release(shape_index)
        return Session(
            id=session_id,
            cwd=cwd,
            additional_directories=additional_directories,
            mcp_servers=mcp_servers,
            modes=modes,
            config_options=None if config_options is None else list(config_options),
            title=title,
            system_prompt=system_prompt,
            updated_at=_stamp_text(stamp),
            touched=touched,
        )

    def listing_key(self, record: int) -> Tuple[Tuple[str, int], str]:
        """``((updated_at, touched), cwd)`` of a record: what ``session/list`` sorts and filters."""
        shape_index, stamp, touched = unpack(record, _WIDTHS)
        return (_stamp_text(stamp), touched), self._shapes[shape_index][0]

    def _release(self, shape_index: int) -> None:
        """A record of the shape ``shape_index`` is gone."""
        settings_index = self._shapes[shape_index][3]
        if self._shapes.release(shape_index):
            self._settings.release(settings_index)

    def counts(self) -> Tuple[int, int]:
        """How many distinct shapes and settings are kept."""
        return len(self._shapes), len(self._settings)


def _stamp_ms(text: str) -> Optional[int]:
    """An ``updated_at`` of ours (``_session._now``: ``2026-11-30T07:24:52.123Z``) in
    milliseconds since 1970, or None for any other text (``_stamp_text`` must give it back)."""
    try:
        fields = (text[0:4], text[5:7], text[8:10], text[11:13], text[14:16], text[17:19])
        seconds = calendar.timegm(tuple(int(f) for f in fields) + (0, 0, 0))
        stamp = seconds * 1000 + int(text[20:23])
    except (ValueError, OverflowError):
        return None
    return stamp if stamp >= 0 and _stamp_text(stamp) == text else None


def _stamp_text(stamp: int) -> str:
    # spec LIST-06: the format of ``_now``: ISO 8601 in UTC, to the millisecond.
    seconds, milli = divmod(stamp, 1000)
    return f"{_second_text(seconds)}.{milli:03d}Z"


@functools.lru_cache(maxsize=1024)
def _second_text(seconds: int) -> str:
    # Sessions close in bursts: listing many closed ones formats few distinct seconds.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


# -- The containers the records are made of ---------------------------------------------------


class Interned:
    """Equal values kept once, each under a small integer, for as long as something holds it.

    ``take(key, value)`` counts one more holder of ``value`` and returns its index: the index of
    an equal value taken before under the same key, else a new one. ``release(index)`` counts
    one fewer, and forgets the value when none is left (its index is reused). Values are
    compared with ``==``; ``key`` only finds candidates, so it may be a hash that collides.
    Values are shared by their holders, so they must not be changed in place.
    """

    def __init__(self) -> None:
        self._values: List[Any] = []
        self._holders: List[int] = []  # per index; 0 for a free index
        self._free: List[int] = []
        self._by_key: Dict[Hashable, List[int]] = {}
        self._keys: List[Hashable] = []  # per index, to forget it

    def take(self, key: Hashable, value: Any) -> int:
        candidates = self._by_key.setdefault(key, [])
        for index in candidates:
            if self._values[index] == value:
                self._holders[index] += 1
                return index
        if self._free:
            index = self._free.pop()
            self._values[index], self._holders[index], self._keys[index] = value, 1, key
        else:
            index = len(self._values)
            self._values.append(value)
            self._holders.append(1)
            self._keys.append(key)
        candidates.append(index)
        return index

    def __getitem__(self, index: int) -> Any:
        return self._values[index]

    def holders(self, index: int) -> int:
        """How many hold the value ``index`` (0 once it is forgotten)."""
        return self._holders[index]

    def release(self, index: int) -> bool:
        """One holder fewer; True if that was the last one (the value is forgotten)."""
        self._holders[index] -= 1
        if self._holders[index]:
            return False
        key = self._keys[index]
        candidates = self._by_key[key]
        candidates.remove(index)
        if not candidates:
            del self._by_key[key]
        self._values[index] = self._keys[index] = None
        self._free.append(index)
        return True

    def __len__(self) -> int:
        """How many distinct values are held."""
        return len(self._values) - len(self._free)


def pack(fields: Sequence[int], widths: Sequence[int]) -> Optional[int]:
    """Non-negative integers as one ``int``, or None if one does not fit its width.

    ``fields[i]`` takes ``widths[i]`` bits, from the lowest; the last field, which has no width,
    takes the bits above. An ``int`` below 2**90 costs 36 bytes; a tuple of three small ints,
    64 bytes and theirs.
    """
    assert len(fields) == len(widths) + 1
    packed = fields[-1]
    if packed < 0:
        return None
    for value, width in zip(reversed(fields[:-1]), reversed(widths)):
        if not 0 <= value < 1 << width:
            return None
        packed = packed << width | value
    return packed


def unpack(packed: int, widths: Sequence[int]) -> Tuple[int, ...]:
    """The fields ``pack(fields, widths)`` packed into ``packed``."""
    fields = []
    for width in widths:
        fields.append(packed & ((1 << width) - 1))
        packed >>= width
    fields.append(packed)
    return tuple(fields)
