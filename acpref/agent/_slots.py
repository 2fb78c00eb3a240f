"""The turn slots: which session has a prompt turn running, on one connection, in wire order.

Spec: prompt-turn.mdx, cancellation.mdx, session-setup.mdx; clauses PROMPT-22, SETUP-16;
spec-gap concurrent-prompt, cancel-request-prompt (spec_notes/decisions.md).

A slot is claimed when the ``session/prompt`` is *read* (by the thread reading the stream, so in
wire order) and freed when its response is *written*. Claiming in wire order is what makes the
rules hold under races: a ``session/cancel`` that follows a prompt on the wire always finds the
prompt's slot, even when the prompt's handler has not started yet (cancel before the first
update). Whether a prompt may start at all is the protocol core's decision, taken just before
(a second one while a turn runs is refused, spec-gap concurrent-prompt), and so is which turn a
message stops (``acpref._core.cancellation.turn_stop``, read from the core's turn phase): the
slots only carry it out. Each slot carries the turn's ``cancelled`` flag, which ``PromptTurn``
reads (a waitable copy of the core's decision, for the handler's threads).
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import attrs

from .._shell.threads import Flag
from ._turn import PromptTurn

__all__ = ["TurnSlots"]

#: The longest a cancel read waits for a sealed turn's answer to be written (it is being written:
#: the bound only matters when the connection breaks meanwhile).
_SEALED_WAIT = 2.0


@attrs.define(eq=False)
class _Slot:
    session_id: str
    request_id: Any
    cancelled: Flag = attrs.Factory(Flag)  # an Event that costs a bool until waited on
    turn: Optional[PromptTurn] = None
    #: The turn has chosen its answer (``seal``), which is being written.
    sealed: bool = False


class TurnSlots:
    """The running turn of each session on one connection, claimed in wire order.

    ``claim``, ``cancel_*`` run on the reading thread as messages are read;
    ``release`` runs as the prompt's response is written. One lock, never held across I/O: the
    ``$/cancel_request`` cascade of a cancelled turn is sent after it is let go.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._by_session: Dict[str, _Slot] = {}
        self._by_request: Dict[Any, _Slot] = {}

    def claim(self, session_id: str, request_id: Any) -> None:
        """Take the session's slot for this prompt.

        The protocol core refuses a prompt while the session has a turn (spec-gap
        concurrent-prompt) before this runs; a slot still taken is a bug of ours, and raises.
        """
        with self._lock:
            if session_id in self._by_session:
                raise RuntimeError(f"session {session_id!r} has a turn already")
            slot = _Slot(session_id=session_id, request_id=request_id)
            self._by_session[session_id] = slot
            self._by_request[request_id] = slot

    def attach(self, request_id: Any, make_turn: Any) -> Optional[PromptTurn]:
        """Build the prompt's turn with ``make_turn(cancelled_event)`` and attach it to its slot."""
        with self._lock:
            slot = self._by_request.get(request_id)
        if slot is None:
            return None
        turn = make_turn(slot.cancelled)
        with self._lock:
            slot.turn = turn
        return turn

    def _cancel(self, slots: List[_Slot], ending: bool = False) -> None:
        turns = []
        with self._lock:
            for slot in slots:
                slot.cancelled.set()
                if slot.turn is not None:
                    turns.append(slot.turn)
        for turn in turns:
            turn._cascade_cancel(ending=ending)

    def is_cancelled(self, request_id: Any) -> bool:
        """True when the turn of this prompt request has been flagged cancelled."""
        with self._lock:
            slot = self._by_request.get(request_id)
        return slot is not None and slot.cancelled.is_set()

    def cancel_session(self, session_id: str, *, ending: bool = False) -> bool:
        """Cancel the session's running turn, as the core decided; False if none runs.

        ``ending``: the session is being closed or deleted (see ``PromptTurn._cascade_cancel``).
        A turn that has chosen its answer already (``seal``) is not cancelled: this (the reading
        thread) waits until that answer is written, so that nothing read after the cancel is
        answered before it. Stdio is ordered: an answer to a later request would show the cancel
        read before the turn's end, and the turn would owe "cancelled" (PROMPT-23).
        """
        with self._lock:
            slot = self._by_session.get(session_id)
            if slot is None:
                return False
            if slot.sealed:
                self._changed.wait_for(
                    lambda: self._by_request.get(slot.request_id) is not slot, _SEALED_WAIT
                )
                return True
            slot.cancelled.set()
            turn = slot.turn
        if turn is not None:
            turn._cascade_cancel(ending=ending)
        return True

    def seal(self, request_id: Any) -> bool:
        """The prompt's handler is done and its answer is chosen now: True when the turn was
        cancelled first (it answers "cancelled"); a cancel read later waits for the answer."""
        with self._lock:
            slot = self._by_request.get(request_id)
            if slot is None:
                return False
            slot.sealed = True
            return slot.cancelled.is_set()

    def cancel_all(self) -> None:
        """The connection is closed: no answer can be written any more, so every turn is
        cancelled, as by a close, for its threads to end. (At the end of input the core decides
        which turns stop: ``cancel_session`` each.)"""
        with self._lock:
            slots = list(self._by_session.values())
        self._cancel(slots, ending=True)

    def release(self, request_id: Any) -> None:
        """The prompt's response is being written: the session is free for the next turn."""
        with self._lock:
            slot = self._by_request.pop(request_id, None)
            if slot is not None and self._by_session.get(slot.session_id) is slot:
                del self._by_session[slot.session_id]
                self._changed.notify_all()

    def running(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._by_session

    def wait_idle(self, session_id: str, timeout: float) -> bool:
        """Wait until no turn runs in the session; False on timeout."""
        with self._lock:
            return self._changed.wait_for(lambda: session_id not in self._by_session, timeout)
