"""Small containers for what the core remembers per session and per connection.

A connection may hold many sessions for a long time (an editor keeps its sessions open; an agent
serves thousands over one pipe), and the bounds acpref promises hold in decoded memory. So the
per-session records start from shared empty values and get their own only when they need one:

* ``NO_IDS`` and ``NOTHING`` are the empty set and mapping every session starts with; ``grow``
  and ``put`` give a session its own set or dict on first use. The shared values are immutable,
  so nothing a session does can change another's.
* ``SharedRecords`` keeps one copy of equal read-only records (mode id sets, config option
  tables): sessions are mostly set up alike.
* ``AnsweredIds`` remembers which requests were answered (so a second answer is RPC-06, not an
  unknown id, RPC-04) as runs of consecutive integers, and forgets beyond a bound.
* ``Remembered`` keeps ids a peer chose (a session's tool call ids, message ids, compaction
  ids), each with a small value, up to a bound in what they cost; past it, the least recently
  put are forgotten, and it counts how many (``remember`` gives a session its own on first use).
* ``Interned`` keeps one copy of equal values for as long as something holds it, each named by
  a small integer, and ``pack``/``unpack`` keep a few such integers as one ``int``: a record of
  many things that are alike (the agent registry's closed sessions) costs one small ``int``.

Nothing here knows a protocol rule: these are sets and mappings with a memory bound. The figures
behind the choices are in benchmarks/README.md ("Memory per session").
"""

from __future__ import annotations

import sys
import types
from bisect import bisect_right
from collections import OrderedDict
from typing import (
    AbstractSet,
    Any,
    Dict,
    FrozenSet,
    Hashable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
)

__all__ = [
    "NO_IDS",
    "NOTHING",
    "AnsweredIds",
    "Remembered",
    "Interned",
    "SharedRecords",
    "forgot_any",
    "grow",
    "pack",
    "put",
    "remember",
    "unpack",
]

#: The empty set every session starts with (see ``grow``).
NO_IDS: FrozenSet[Any] = frozenset()

#: The empty mapping every session's tables start as (see ``put``).
NOTHING: Mapping[Any, Any] = types.MappingProxyType({})


def grow(ids: AbstractSet[Any], item: Any) -> Set[Any]:
    """``ids`` with ``item`` added: in place once it is a session's own set, else a new set."""
    if isinstance(ids, set):
        ids.add(item)
        return ids
    return {*ids, item}


def put(table: Mapping[Any, Any], key: Any, value: Any) -> Dict[Any, Any]:
    """``table`` with ``key`` set: in place once it is a session's own dict, else a new dict."""
    if isinstance(table, dict):
        table[key] = value
        return table
    return {**table, key: value}


class Remembered(Mapping[Any, Any]):
    """Ids with a value each, at most ``limit`` counted bytes of them; the least recently put
    are forgotten first.

    An entry costs ``sys.getsizeof`` of its id and of its value when that is a string, plus
    ``ENTRY`` (the ordered table's own share, measured): near what Python holds. ``forgotten``
    counts the entries let go, so that a rule can tell "never seen" from "perhaps forgotten".
    """

    ENTRY = 140

    __slots__ = ("_items", "_cost", "limit", "forgotten")

    def __init__(self, limit: int) -> None:
        self._items: "OrderedDict[Any, Any]" = OrderedDict()
        self._cost = 0
        self.limit = limit
        self.forgotten = 0

    def put(self, key: Any, value: Any = None) -> None:
        """Set ``key`` (it becomes the most recent), then forget the oldest past the bound."""
        items = self._items
        if key in items:
            self._cost -= self._cost_of(key, items.pop(key))
        items[key] = value
        self._cost += self._cost_of(key, value)
        while self._cost > self.limit and len(items) > 1:
            old, old_value = items.popitem(last=False)
            self._cost -= self._cost_of(old, old_value)
            self.forgotten += 1

    def discard(self, key: Any) -> None:
        """Let ``key`` go, if it is kept (not counted as forgotten: it was let go on purpose)."""
        if key in self._items:
            self._cost -= self._cost_of(key, self._items.pop(key))

    @classmethod
    def _cost_of(cls, key: Any, value: Any) -> int:
        extra = sys.getsizeof(value) if isinstance(value, str) else 0
        return sys.getsizeof(key) + extra + cls.ENTRY

    @property
    def cost(self) -> int:
        """What the entries kept cost, counted."""
        return self._cost

    def __getitem__(self, key: Any) -> Any:
        return self._items[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def remember(table: Mapping[Any, Any], key: Any, value: Any, limit: int) -> Remembered:
    """``table`` with ``key`` put: in place once it is a ``Remembered``, else a new one."""
    if not isinstance(table, Remembered):
        own = Remembered(limit)
        for old, old_value in table.items():
            own.put(old, old_value)
        table = own
    table.put(key, value)
    return table


def forgot_any(table: Mapping[Any, Any]) -> bool:
    """True when ``table`` is a ``Remembered`` that has forgotten an entry."""
    return isinstance(table, Remembered) and table.forgotten > 0


class SharedRecords:
    """One copy of equal read-only records, by key, up to ``LIMIT`` distinct ones.

    Records handed out are shared between sessions, so they are replaced, never changed in place.
    """

    #: Enough for any agent's few session shapes; beyond it, records are simply not shared.
    LIMIT = 256

    def __init__(self) -> None:
        self._kept: Dict[Any, Any] = {}

    def get(self, record: Any, key: Any) -> Any:
        """``record``, or the equal one kept under ``key``."""
        kept = self._kept.get(key)
        if kept is not None:
            return kept
        if len(self._kept) < self.LIMIT:
            self._kept[key] = record
        return record


class AnsweredIds:
    """The ids of the requests one party sent that are answered.

    Peers number their requests 0, 1, 2, ... and these are answered roughly in order, so integer
    ids are kept as runs of consecutive ids (``[first, last]``). Other ids (strings, ``None``,
    and integers beyond 64 bits) go in a set. Bounded, in runs and in what the other ids cost
    decoded (a peer's id may be a string of megabytes): a long connection forgets (and then
    reports a second answer as RPC-04, not RPC-06).
    """

    LIMIT = 100_000
    #: What the other ids may cost together (``sys.getsizeof``), before they are forgotten.
    OTHERS_BYTES = 4 << 20

    def __init__(self) -> None:
        self._firsts: List[int] = []
        self._lasts: List[int] = []
        self._others: Set[Any] = set()
        self._others_bytes = 0

    def add(self, request_id: Any) -> None:
        # A string, None, a bool (which is no int here), or an integer of up to 4300 digits.
        if type(request_id) is not int or not -(1 << 63) <= request_id < 1 << 63:
            cost = sys.getsizeof(request_id)
            if len(self._others) >= self.LIMIT or self._others_bytes + cost > self.OTHERS_BYTES:
                self._others.clear()
                self._others_bytes = 0
            if cost <= self.OTHERS_BYTES and request_id not in self._others:
                self._others.add(request_id)
                self._others_bytes += cost
            return
        n = request_id
        firsts, lasts = self._firsts, self._lasts
        if lasts and lasts[-1] == n - 1:  # the usual case: the next id in order
            lasts[-1] = n
            return
        i = bisect_right(firsts, n)  # the runs before i start at or below n
        if i and lasts[i - 1] >= n:
            return
        joins_before = bool(i) and lasts[i - 1] == n - 1
        joins_after = i < len(firsts) and firsts[i] == n + 1
        if joins_before and joins_after:
            lasts[i - 1] = lasts.pop(i)
            del firsts[i]
        elif joins_before:
            lasts[i - 1] = n
        elif joins_after:
            firsts[i] = n
        else:
            if len(firsts) >= self.LIMIT:
                firsts.clear()
                lasts.clear()
                i = 0
            firsts.insert(i, n)
            lasts.insert(i, n)

    def __contains__(self, request_id: Any) -> bool:
        if type(request_id) is not int or not -(1 << 63) <= request_id < 1 << 63:
            return request_id in self._others
        i = bisect_right(self._firsts, request_id)
        return bool(i) and self._lasts[i - 1] >= request_id


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
