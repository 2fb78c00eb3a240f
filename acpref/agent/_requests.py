"""What the agent side tracks of the requests it is serving, in wire order.

Spec: session-setup.mdx, prompt-turn.mdx, cancellation.mdx; clauses SETUP-16, PROMPT-22,
SLASH-01; spec-gap close-in-flight, reopen-in-flight, concurrent-prompt, cancel-request-prompt
(spec_notes/decisions.md). Part of the agent side's shell (``_connection``):

* ``_AgentObserver``: the connection's observer. The protocol core judges each message first
  (``acpref._shell.observer.RulesObserver``) and says which turn starts or stops (its effects,
  ``acpref._core.effects``); then, on the reading thread and so in wire order, the turn flags
  (``_slots.TurnFlags``) carry the effects out and the session's requests in flight hear of it.
* ``_SessionRequests``: the requests naming a session that are read and not yet answered, which
  session/close and session/delete wait for, and which wait for a load or resume of theirs (the
  order is the protocol core's: ``acpref._core.session_setup.answered_after``).
* ``_AfterResponse``: jobs that run once a response is on the wire (``Agent.session_opened``).
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from .._core.effects import TurnStarts
from .._core.session_setup import answered_after
from .._shell.observer import RulesObserver
from ..errors import ConnectionClosed, LocalProtocolError, RpcError
from ._slots import TurnFlags

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

    Which of them a request waits for is the protocol core's order (``answered_after``,
    spec-gap close-in-flight, reopen-in-flight): session/close and session/delete are answered
    after the session's other requests, and a request read after a session/load or
    session/resume of its session waits until that one is answered. This only waits.
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

    def wait_turn(self, request_id: Any, timeout: float) -> bool:
        """Wait until the requests of its session that the protocol core says ``request_id`` is
        answered after are answered (``answered_after``: a close or delete after all the others
        but closes and deletes, read before or after it; a load or resume after the earlier ones
        but closes and deletes; any other request after the earlier loads and resumes). False on
        timeout."""

        def others_done() -> bool:
            me = self._running.get(request_id)
            if me is None:
                return True
            sid, mine, arrival = me
            return not any(
                other_sid == sid
                and n != arrival
                and answered_after(mine, other, earlier=n < arrival)
                for other_sid, other, n in self._running.values()
            )

        with self._changed:
            return self._changed.wait_for(others_done, timeout)

    def end(self, request_id: Any) -> None:
        with self._changed:
            if self._running.pop(request_id, None) is not None:
                self._changed.notify_all()

    def forget_all(self) -> None:
        """The connection ended: no answer will come; nothing waits for one."""
        with self._changed:
            self._running.clear()
            self._changed.notify_all()


class _AgentObserver:
    """The connection's observer: the rules first, then their effects, both in wire order."""

    def __init__(
        self,
        rules: RulesObserver,
        slots: TurnFlags,
        after: _AfterResponse,
        requests: _SessionRequests,
    ) -> None:
        self.rules = rules
        self._slots = slots
        self._after = after
        self._requests = requests

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        refusal, effects = self.rules.receive(message)
        # Which turn starts and which stops is the core's decision (acpref/_core/effects.py:
        # PROMPT-22, SETUP-16, spec-gap concurrent-prompt, cancel-request-prompt, delete-active,
        # close-in-flight); a refused message has none.
        for effect in effects:
            if isinstance(effect, TurnStarts):
                self._slots.start(effect.request_id)
            else:
                self._slots.cancel(
                    effect.request_id, ending=effect.ending, session_ends=effect.session_ends
                )
        method = message.get("method")
        if refusal is not None or method is None:
            return refusal
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        sid = params.get("sessionId")
        is_request = "id" in message
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


