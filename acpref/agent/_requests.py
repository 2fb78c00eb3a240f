"""What the agent side tracks of the requests it is serving, in wire order.

Spec: session-setup.mdx, prompt-turn.mdx, cancellation.mdx; clauses SETUP-16, PROMPT-22,
SLASH-01; spec-gap close-in-flight, reopen-in-flight, concurrent-prompt, cancel-request-prompt
(spec_notes/decisions.md). Part of the agent side's shell (``_connection``):

* ``_AgentObserver``: the connection's observer. The protocol core judges each message first
  (``acpref._core.RulesObserver``); then, on the reading thread and so in wire order, the turn
  slots (``_slots.TurnSlots``) and the session's requests in flight hear of it.
* ``_SessionRequests``: the requests naming a session that are read and not yet answered, which
  session/close and session/delete wait for, and which wait for a load or resume of theirs.
* ``_AfterResponse``: jobs that run once a response is on the wire (``Agent.session_opened``).
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from .._observer import RulesObserver
from ..errors import ConnectionClosed, LocalProtocolError, RpcError
from ..methods import CANCEL_REQUEST
from ._slots import TurnSlots

log = logging.getLogger("acpref.agent")

#: The agent methods that name a session (``sessionId``) and run a handler of their own.
_SESSION_METHODS = frozenset(
    {
        "session/prompt",
        "session/load",
        "session/resume",
        "session/close",
        "session/delete",
        "session/set_mode",
        "session/set_config_option",
    }
)

#: The requests that end a session.
_ENDING = ("session/close", "session/delete")
#: The requests that reopen a session (and replay its history, for load).
_REOPENING = ("session/load", "session/resume")


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


class _SessionRequests:
    """The requests naming a session that are being handled: read, not yet answered.

    spec-gap close-in-flight: session/close and session/delete are answered after the session's
    other requests, so that no handler still running sends an update (or a request) for a
    session the client was already told is gone; a prompt that arrives while they wait is
    cancelled at once, as the running one was.

    spec-gap reopen-in-flight: a request of a session read after a session/load or
    session/resume of it waits until that one is answered, so that a turn's updates never
    interleave a replay, and a session whose reopening failed is known to be gone before any
    handler of it runs.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        # request id -> (session id, method, arrival number)
        self._running: Dict[Any, Tuple[str, str, int]] = {}
        self._arrivals = itertools.count()

    def begin(self, session_id: str, request_id: Any, method: str) -> None:
        with self._changed:
            if request_id not in self._running:  # a reused id is refused
                self._running[request_id] = (session_id, method, next(self._arrivals))

    def wait_reopens(self, request_id: Any, timeout: float) -> bool:
        """Wait for the requests of its session read before ``request_id`` that it must follow
        (spec-gap reopen-in-flight): a load or resume follows all of them but closes and
        deletes (which wait for it in turn); any other request follows the loads and resumes.
        False on timeout."""

        def earlier_done() -> bool:
            me = self._running.get(request_id)
            if me is None:
                return True
            sid, mine, arrival = me
            barrier = mine in _REOPENING
            return not any(
                other_sid == sid
                and n < arrival
                and (method in _REOPENING or (barrier and method not in _ENDING))
                for other_sid, method, n in self._running.values()
            )

        with self._changed:
            return self._changed.wait_for(earlier_done, timeout)

    def end(self, request_id: Any) -> None:
        with self._changed:
            if self._running.pop(request_id, None) is not None:
                self._changed.notify_all()

    def closing(self, session_id: str) -> bool:
        """True while a session/close or session/delete of the session waits or runs."""
        with self._changed:
            return any(
                sid == session_id and method in _ENDING for sid, method, _ in self._running.values()
            )

    def forget_all(self) -> None:
        """The connection ended: no answer will come; nothing waits for one."""
        with self._changed:
            self._running.clear()
            self._changed.notify_all()

    def wait_others(self, session_id: str, timeout: float) -> bool:
        """Wait until the session's requests but closes and deletes are answered.

        Closes and deletes do not wait for each other (two of them would wait forever): the
        first one ends the session, the next finds none. False on timeout.
        """

        def others_done() -> bool:
            return all(
                sid != session_id or method in _ENDING for sid, method, _ in self._running.values()
            )

        with self._changed:
            return self._changed.wait_for(others_done, timeout)


class _AgentObserver:
    """The connection's observer: the rules first, then the turn slots, both in wire order."""

    def __init__(
        self,
        rules: RulesObserver,
        slots: TurnSlots,
        after: _AfterResponse,
        requests: _SessionRequests,
    ) -> None:
        self.rules = rules
        self._slots = slots
        self._after = after
        self._requests = requests

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        refusal = self.rules.on_receive(message)
        method = message.get("method")
        if refusal is not None or method is None:
            return refusal
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        sid = params.get("sessionId")
        is_request = "id" in message
        if method == "session/prompt" and is_request and isinstance(sid, str):
            # A second prompt while the session's turn runs was refused by the protocol core
            # above (spec-gap concurrent-prompt, acpref/_core/prompt_turn.py): this one is the
            # session's only turn.
            self._slots.claim(sid, message["id"])
            if self._requests.closing(sid):
                # spec-gap close-in-flight: the session is being closed; the turn is cancelled
                # at once, as a running one was (SETUP-16).
                self._slots.cancel_session(sid, ending=True)
        elif method == "session/cancel" and not is_request and isinstance(sid, str):
            self._slots.cancel_session(sid)  # spec PROMPT-22: stop as soon as possible
        elif method in _ENDING and is_request and isinstance(sid, str):
            # spec SETUP-16: as if session/cancel had arrived, and the session ends.
            self._slots.cancel_session(sid, ending=True)
        elif method == CANCEL_REQUEST and not is_request:
            self._slots.cancel_request(params.get("requestId"))
        if is_request and isinstance(sid, str) and method in _SESSION_METHODS:
            self._requests.begin(sid, message["id"], method)
        return None

    def on_send(self, message: Dict[str, Any]) -> None:
        is_response = "method" not in message and "id" in message
        if is_response and "error" in message and self.rules.is_refusal(message):
            # spec-gap duplicate-id: the refusal of a request that reused the id of a running
            # prompt answers that reuse, not the prompt: its turn goes on.
            self.rules.on_send(message)
            return
        try:
            self.rules.on_send(message)
        except LocalProtocolError:
            if is_response:  # the handler is done either way; the answer is replaced, not sent
                self._slots.release(message["id"])
                self._requests.end(message["id"])
            raise
        if is_response:
            self._slots.release(message["id"])
            self._requests.end(message["id"])
            self._after.fire(message["id"], "result" in message)


