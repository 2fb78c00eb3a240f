"""Hardening, not on the reading path: what the core remembers per session and per connection,
as containers with a memory bound.

A reader of the rules needs only what each one is: ``AnsweredIds`` a set of answered request
ids, ``Remembered`` (``remember``) a mapping of ids a peer chose, ``NO_IDS`` and ``NOTHING``
an empty set and mapping; how they stay within their bound is told here.

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

Nothing here knows a protocol rule: these are sets and mappings with a memory bound. The figures
behind the choices are in benchmarks/README.md ("Memory per session").
"""

from __future__ import annotations

import sys
import types
from bisect import bisect_right
from collections import OrderedDict
from typing import AbstractSet, Any, Dict, FrozenSet, Iterator, List, Mapping, Set

__all__ = [
    "NO_IDS",
    "NOTHING",
    "AnsweredIds",
    "Remembered",
    "SharedRecords",
    "forgot_any",
    "grow",
    "put",
    "remember",
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
