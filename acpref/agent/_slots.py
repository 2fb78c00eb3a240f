"""The turn flags: the ``cancelled`` flag of each running prompt turn, by its request id.

Spec: prompt-turn.mdx, cancellation.mdx, session-setup.mdx; clauses PROMPT-22, SETUP-16;
spec-gap concurrent-prompt, cancel-request-prompt (spec_notes/decisions.md).

Which turn starts and which must stop is the protocol core's decision, returned as effects as the
message is recorded (``acpref._core.effects``: ``TurnStarts``, ``TurnStops``); this only carries
them out. A flag is made when the core's ``TurnStarts`` is executed, by the thread reading the
stream, so in wire order, and dropped when the prompt's response is *written*. Made in wire order
is what makes the rules hold under races: a ``session/cancel`` that follows a prompt on the wire
always finds the prompt's flag, even when the prompt's handler has not started yet (cancel before
the first update). ``PromptTurn`` reads the flag (a waitable copy of the core's decision, for the
handler's threads). Nothing here knows sessions: the core's effects name the request.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import attrs

from .._shell.threads import Flag
from ._turn import PromptTurn

__all__ = ["TurnFlags"]

#: The longest a cancel read waits for a sealed turn's answer to be written. The answer is on its
#: way (no handler code runs any more), so only a write blocked on a full pipe makes this long; a
#: short bound would let a busy machine answer a later request first and show the cancel read
#: before an end_turn (a false PROMPT-23 against this agent). A closed connection ends the wait.
_SEALED_WAIT = 60.0


@attrs.define(eq=False)
class _Running:
    cancelled: Flag = attrs.Factory(Flag)  # an Event that costs a bool until waited on
    turn: Optional[PromptTurn] = None
    #: The turn has chosen its answer (``seal``), which is being written.
    sealed: bool = False
    #: Cancelled because its session is being closed or deleted (``TurnStops.session_ends``).
    session_ends: bool = False


class TurnFlags:
    """The running turns of one connection, by prompt request id, made in wire order.

    ``start``, ``cancel`` run on the reading thread as the core's effects are executed;
    ``release`` runs as the prompt's response is written. One lock, never held across I/O: the
    ``$/cancel_request`` cascade of a cancelled turn is sent after it is let go.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._running: Dict[Any, _Running] = {}
        self._closed = False

    def start(self, request_id: Any) -> None:
        """The core's ``TurnStarts``: the prompt ``request_id`` runs a turn now."""
        with self._lock:
            self._running[request_id] = _Running()

    def attach(self, request_id: Any, make_turn: Any) -> Optional[PromptTurn]:
        """Build the prompt's turn with ``make_turn(cancelled_event)`` and attach it to its flag."""
        with self._lock:
            running = self._running.get(request_id)
        if running is None:
            return None
        turn = make_turn(running.cancelled)
        with self._lock:
            running.turn = turn
        return turn

    def is_cancelled(self, request_id: Any) -> bool:
        """True when the turn of this prompt request has been flagged cancelled."""
        with self._lock:
            running = self._running.get(request_id)
        return running is not None and running.cancelled.is_set()

    def cancel(self, request_id: Any, *, ending: bool = False, session_ends: bool = False) -> bool:
        """The core's ``TurnStops``: cancel the turn of ``request_id``; False if none runs.

        ``ending``: the session is being closed or deleted (see ``PromptTurn._cascade_cancel``).
        A turn that has chosen its answer already (``seal``) is not cancelled: this (the reading
        thread) waits until that answer is written, so that nothing read after the cancel is
        answered before it. Stdio is ordered: an answer to a later request would show the cancel
        read before the turn's end, and the turn would owe "cancelled" (PROMPT-23).
        """
        with self._lock:
            running = self._running.get(request_id)
            if running is None:
                return False
            if running.sealed:
                self._changed.wait_for(
                    lambda: self._closed or self._running.get(request_id) is not running,
                    _SEALED_WAIT,
                )
                return True
            running.cancelled.set()
            running.session_ends = running.session_ends or session_ends
            turn = running.turn
        if turn is not None:
            turn._cascade_cancel(ending=ending)
        return True

    def session_ends(self, request_id: Any) -> bool:
        """True when the turn was cancelled because its session is being closed or deleted."""
        with self._lock:
            running = self._running.get(request_id)
        return running is not None and running.session_ends

    def seal(self, request_id: Any) -> bool:
        """The prompt's handler is done and its answer is chosen now: True when the turn was
        cancelled first (it answers "cancelled"); a cancel read later waits for the answer."""
        with self._lock:
            running = self._running.get(request_id)
            if running is None:
                return False
            running.sealed = True
            return running.cancelled.is_set()

    def cancel_all(self) -> None:
        """The connection is closed: no answer can be written any more, so every turn is
        cancelled, as by a close, for its threads to end. (At the end of input the core decides
        which turns stop: ``cancel`` each.)"""
        turns: List[PromptTurn] = []
        with self._lock:
            self._closed = True  # no sealed answer will be written: a cancel waiting for one ends
            self._changed.notify_all()
            for running in self._running.values():
                running.cancelled.set()
                if running.turn is not None:
                    turns.append(running.turn)
        for turn in turns:
            turn._cascade_cancel(ending=True)

    def release(self, request_id: Any) -> None:
        """The prompt's response is being written: its flag goes."""
        with self._lock:
            if self._running.pop(request_id, None) is not None:
                self._changed.notify_all()
