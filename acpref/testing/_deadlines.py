"""Deadlines of the checks: each wait bounded, one deadline per kind of request left unanswered.

No spec sentence sets a time limit on an answer (an agent's model may take minutes), so a request
that got no answer within the check's ``--timeout`` is no proof that the peer never answers it
(spec-gap gave-up). ``Deadlines`` records, once, that we stopped waiting (a ``gave-up`` event:
the oracle then judges nothing the peer still owed when the connection ended), and remembers the
kind of request (its method) so that the rest of the run does not send it again: a peer that
stops answering one kind of request costs one deadline, not one per request.
"""

from __future__ import annotations

import contextlib
from typing import Dict, Iterator, Optional

from ._recording import RecordSink

__all__ = ["Deadlines", "Stalled"]


class Stalled(Exception):
    """A request not sent: one of its kind already got no answer within the timeout. Its
    message says which, and where."""


class Deadlines:
    """The deadline of one connection's requests, and the kinds that stalled (``stalled``:
    method -> where, shared by the connections of one run; None: nothing remembered)."""

    def __init__(
        self,
        sink: RecordSink,
        timeout: float,
        stalled: Optional[Dict[str, str]] = None,
        part: str = "",
    ) -> None:
        self.sink = sink
        self.timeout = timeout
        self.stalled = stalled
        #: Where this connection is (``scenario 'prompt'``), named in the reason of a stall.
        self.part = part
        self._gave_up = False

    def give_up(self) -> None:
        """Record (once) that we stopped waiting for an answer at our own deadline."""
        if not self._gave_up:
            self._gave_up = True
            self.sink.gave_up()

    def refuse(self, method: str) -> None:
        """Raise ``Stalled`` when a request of ``method`` already got no answer in time."""
        where = self.stalled.get(method) if self.stalled is not None else None
        if where is not None:
            raise Stalled(
                f"{method} not sent: one got no answer within {self.timeout:g}s {where} "
                "(see --timeout)"
            )

    def missed(self, method: str) -> None:
        """A request of ``method`` got no answer in time: give up, and remember its kind."""
        self.give_up()
        if self.stalled is not None:
            self.stalled.setdefault(method, f"in {self.part}" if self.part else "before")

    @contextlib.contextmanager
    def waiting(self, method: str, *, sent: bool = False) -> Iterator[None]:
        """A request of ``method`` sent (unless ``sent``: already) and waited for: refused at
        once when its kind stalled; its kind stalled when it gets no answer in time."""
        if not sent:
            self.refuse(method)
        try:
            yield
        except TimeoutError:
            if not self.sink.wait_peer_eof(0):  # the peer is there, and did not answer in time
                self.missed(method)
            raise
