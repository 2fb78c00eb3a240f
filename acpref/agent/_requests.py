"""What the agent side tracks of the requests it is serving, in wire order.

Spec: session-setup.mdx, prompt-turn.mdx, cancellation.mdx; clauses SETUP-16, PROMPT-22,
SLASH-01; spec-gap close-in-flight, reopen-in-flight, concurrent-prompt, cancel-request-prompt
(spec_notes/decisions.md). Part of the agent side's shell (``_connection``):

* ``_AgentObserver``: the connection's observer. The protocol core judges each message first
  (``acpref._shell.observer.RulesObserver``) and says what follows from it (its effects,
  ``acpref._core.effects``: which turn starts or stops, whom a request waits for, which are
  refused, what the client advertised); then, on the reading thread and so in wire order (or on
  the writing thread, for the answer to a failed reopen), the turn flags and the session's
  requests in flight carry the effects out. Nothing here reads the core.
* ``TurnFlags``: the ``cancelled`` flag of each running prompt turn, by its request id. A flag
  is made when the core's ``TurnStarts`` is executed, by the thread reading the stream, so in
  wire order, and dropped when the prompt's response is *written*. Made in wire order is what
  makes the rules hold under races: a ``session/cancel`` that follows a prompt on the wire
  always finds the prompt's flag, even when the prompt's handler has not started yet (cancel
  before the first update). ``PromptTurn`` reads the flag (a waitable copy of the core's
  decision, for the handler's threads). Nothing here knows sessions: the effects name the request.
* ``_SessionRequests``: the requests naming a session that are read and not yet answered, which
  session/close and session/delete wait for, and which wait for a load or resume of theirs (the
  order is the protocol core's, handed over as effects: ``Waits``, ``Refuses``).
* ``_AfterResponse``: jobs that run once a response is on the wire (``Agent.session_opened``).
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import attrs

from .._core.effects import ClientCaps, Effect, Refuses, TurnStarts, TurnStops, Waits
from .._shell.observer import RulesObserver
from .._shell.threads import Flag
from ..errors import ConnectionClosed, LocalProtocolError, RpcError
from ._turn import PromptTurn

log = logging.getLogger("acpref.agent")

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


class _AfterResponse:
    """Jobs to run once a response is on the wire, on one thread of their own, in order.

    ``fire`` is called from ``on_send``, under the connection's write lock, just before the
    response is written: it only queues. The job's own writes wait for that lock, so they follow
    the response on the wire.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._jobs: Dict[Any, Callable[[], None]] = {}
        self._queue: "queue.SimpleQueue[Optional[Callable[[], None]]]" = queue.SimpleQueue()
        self._thread: Optional[threading.Thread] = None
        self._stopped = False
        # Jobs queued and jobs done, counted, for ``wait_queued``.
        self._counted = threading.Condition(threading.Lock())
        self._queued = 0
        self._done = 0

    def schedule(self, request_id: Any, job: Callable[[], None]) -> None:
        with self._lock:
            self._jobs[request_id] = job

    def fire(self, request_id: Any, ok: bool) -> None:
        with self._lock:
            job = self._jobs.pop(request_id, None)
            if job is None or not ok or self._stopped:
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"{self._name}-after", daemon=True
                )
                self._thread.start()
        with self._counted:
            self._queued += 1
        self._queue.put(job)

    def wait_queued(self, timeout: float) -> bool:
        """Wait until every job queued so far has run; False on timeout."""
        with self._counted:
            target = self._queued
            return self._counted.wait_for(lambda: self._done >= target or self._stopped, timeout)

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                job()
            except ConnectionClosed:
                log.debug("%s: follow-up after a response dropped: connection closed", self._name)
            except Exception:  # noqa: BLE001 - a failed follow-up must not stop the others
                log.exception("%s: follow-up after a response failed", self._name)
            with self._counted:
                self._done += 1
                self._counted.notify_all()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._jobs.clear()
        with self._counted:
            self._counted.notify_all()
        self._queue.put(None)


@attrs.define(eq=False)
class _Ordered:
    """One request of a session in flight (``Waits``): whom it waits for, whether it is refused."""

    waits_on: List["_Ordered"] = attrs.Factory(list)
    answered: bool = False
    #: The session it names is unknown now (``Refuses``): answered -32002 without running.
    refused: Optional[str] = None


class _SessionRequests:
    """The requests of a session that are read and not yet answered, and whom each waits for.

    The order is the protocol core's, handed over as effects while the requests are read
    (``_core.effects.Waits``: spec-gap close-in-flight, reopen-in-flight): session/close and
    session/delete are answered after the session's other requests, and a request read after a
    session/load or session/resume of its session waits until that one is answered. A request
    whose reopened session turned out unknown is refused (``Refuses``). This only waits.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._running: Dict[Any, _Ordered] = {}

    def execute(self, effect: Union[Waits, Refuses]) -> None:
        """Carry out one of the core's order effects (on the reading or the writing thread)."""
        with self._changed:
            if isinstance(effect, Refuses):
                for request_id in effect.request_ids:
                    me = self._running.get(request_id)
                    if me is not None:
                        me.refused = f"unknown session {effect.session_id!r}"
                return
            # Read just now: its handler has not run, so it cannot have been answered. Those it
            # names that are not here any more were answered (or refused as they were read).
            if effect.request_id in self._running:
                return  # a reused id is refused: this is not its request
            me = _Ordered([self._running[i] for i in effect.on if i in self._running])
            self._running[effect.request_id] = me
            for close in effect.before:
                if close in self._running:
                    self._running[close].waits_on.append(me)

    def wait_turn(self, request_id: Any, timeout: float) -> Tuple[bool, Optional[str]]:
        """Wait until the requests ``request_id`` is answered after are answered: (False, None)
        on timeout; else (True, why it is refused, or None)."""
        me = self._running.get(request_id)
        if me is None:
            return True, None

        def others_done() -> bool:
            return all(other.answered for other in me.waits_on)

        with self._changed:
            done = self._changed.wait_for(others_done, timeout)
            return done, me.refused if done else None

    def end(self, request_id: Any) -> None:
        with self._changed:
            me = self._running.pop(request_id, None)
            if me is not None:
                me.answered = True
                self._changed.notify_all()

    def forget_all(self) -> None:
        """The connection ended: no answer will come; nothing waits for one."""
        with self._changed:
            for me in self._running.values():
                me.answered = True
            self._running.clear()
            self._changed.notify_all()


class _AgentObserver:
    """The connection's observer: the rules first, then their effects, both in wire order."""

    def __init__(
        self,
        rules: RulesObserver,
        flags: TurnFlags,
        after: _AfterResponse,
        requests: _SessionRequests,
    ) -> None:
        self.rules = rules
        self._flags = flags
        self._after = after
        self._requests = requests
        #: Told what the client advertised in ``initialize`` (``ClientHandle``, once it exists).
        self.told_client_caps: Callable[[Dict[str, Any]], None] = lambda caps: None

    def _execute(self, effects: Tuple[Effect, ...]) -> None:
        # What the core decided (acpref/_core/effects.py): which turn starts and which stops
        # (PROMPT-22, SETUP-16, spec-gap concurrent-prompt, cancel-request-prompt, delete-active,
        # close-in-flight), the session's order (spec-gap reopen-in-flight, close-in-flight),
        # what the client advertised (INIT-02). A refused message has none.
        for effect in effects:
            if isinstance(effect, TurnStarts):
                self._flags.start(effect.request_id)
            elif isinstance(effect, TurnStops):
                self._flags.cancel(
                    effect.request_id, ending=effect.ending, session_ends=effect.session_ends
                )
            elif isinstance(effect, ClientCaps):
                self.told_client_caps(effect.caps)
            elif isinstance(effect, (Waits, Refuses)):
                self._requests.execute(effect)
            # the client's effects (AsksCancelled, AgentCaps, SystemPromptKept) are not ours

    def end_of_input(self) -> None:
        """spec-gap end-of-input: which turns stop, and that they answer stopReason "cancelled",
        is the core's decision (``ProtocolState.end_of_input``); the flags carry it out."""
        self._execute(tuple(self.rules.end_of_input()))

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        refusal, effects = self.rules.receive(message)
        self._execute(effects)
        return refusal

    def on_send(self, message: Dict[str, Any]) -> None:
        is_response = "method" not in message and "id" in message
        if is_response and "error" in message and self.rules.is_refusal(message):
            # spec-gap duplicate-id: the refusal of a request that reused the id of a running
            # prompt answers that reuse, not the prompt: its turn goes on.
            self.rules.on_send(message)
            return
        try:
            # The answer to a failed load may refuse the requests that waited for it: they hear
            # of it before they wake (``end`` below).
            self._execute(self.rules.send(message))
        except LocalProtocolError:
            if is_response:  # the handler is done either way; the answer is replaced, not sent
                self._flags.release(message["id"])
                self._requests.end(message["id"])
            raise
        if is_response:
            self._flags.release(message["id"])
            self._requests.end(message["id"])
            self._after.fire(message["id"], "result" in message)
