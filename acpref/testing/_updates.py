"""The session updates an ``AgentDriver`` received, kept per session within a bound.

Each session keeps its latest ``keep`` updates (typed, in wire order; ``None`` keeps all) and
counts every update received, so that a position taken before a prompt (``count``) still marks
where the turn's updates start after older ones were let go. One condition guards it all;
waiters wake on every update.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional

__all__ = ["SessionUpdates"]


class SessionUpdates:
    def __init__(self, keep: Optional[int]) -> None:
        self.keep = keep
        self._kept: Dict[str, Deque[Any]] = {}
        self._counts: Dict[str, int] = {}
        self._cond = threading.Condition()

    def add(self, session_id: str, update: Any) -> None:
        with self._cond:
            if session_id not in self._kept:
                self._kept[session_id] = deque(maxlen=self.keep)
            self._kept[session_id].append(update)
            self._counts[session_id] = self._counts.get(session_id, 0) + 1
            self._cond.notify_all()

    def count(self, session_id: str) -> int:
        """How many updates came for ``session_id`` (kept or let go)."""
        with self._cond:
            return self._counts.get(session_id, 0)

    def since(self, session_id: str, start: int) -> List[Any]:
        """The updates kept from the ``start``-th on (a ``count`` taken earlier)."""
        with self._cond:
            return self._since(session_id, start)

    def _since(self, session_id: str, start: int) -> List[Any]:
        kept = self._kept.get(session_id, ())
        first = self._counts.get(session_id, 0) - len(kept)
        return list(itertools.islice(kept, max(start - first, 0), None))

    def wait_count(self, session_id: str, count: int, timeout: float) -> bool:
        """Wait until ``count`` updates came for ``session_id``."""
        with self._cond:
            return self._cond.wait_for(lambda: self._counts.get(session_id, 0) >= count, timeout)

    def wait_any(
        self, session_id: str, start: int, accept: Callable[[Any], bool], timeout: float
    ) -> bool:
        """Wait until an update kept from the ``start``-th on is one ``accept`` takes."""
        with self._cond:
            return self._cond.wait_for(
                lambda: any(accept(u) for u in self._since(session_id, start)), timeout
            )
