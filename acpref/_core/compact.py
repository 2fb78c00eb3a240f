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

Nothing here knows a protocol rule: these are sets and mappings with a memory bound. The figures
behind the choices are in benchmarks/README.md ("Memory per session").
"""

from __future__ import annotations

import types
from bisect import bisect_right
from typing import AbstractSet, Any, Dict, FrozenSet, List, Mapping, Set

__all__ = ["NO_IDS", "NOTHING", "AnsweredIds", "SharedRecords", "grow", "put"]

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
    ids are kept as runs of consecutive ids (``[first, last]``). Other ids go in a set. Bounded:
    a long connection forgets (and then reports a second answer as RPC-04, not RPC-06).
    """

    LIMIT = 100_000

    def __init__(self) -> None:
        self._firsts: List[int] = []
        self._lasts: List[int] = []
        self._others: Set[Any] = set()

    def add(self, request_id: Any) -> None:
        if type(request_id) is not int:  # a string, None, or a bool (which is no int here)
            if len(self._others) >= self.LIMIT:
                self._others.clear()
            self._others.add(request_id)
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
        if type(request_id) is not int:
            return request_id in self._others
        i = bisect_right(self._firsts, request_id)
        return bool(i) and self._lasts[i - 1] >= request_id
