"""The permission desk and the client's observer: what the connection needs beyond the rules.

Spec: prompt-turn.mdx (Cancellation), tool-calls.mdx (Requesting Permission); clauses PROMPT-21,
SETUP-16. Used only by ``connection.ClientSideConnection``.

**The desk** answers ``session/request_permission``. The user's decision is made on a thread of
its own (an *asker*), while the request's handler waits for either that decision or a
cancellation. So ``cancel(session_id)`` can have every pending request of the session answered
``cancelled`` at once (PROMPT-21), even while a dialog is still open; until the next prompt of
that session, new requests are answered ``cancelled`` too (spec-gap permission-after-cancel). A
decision made just before the cancel may not be on the wire yet: ``cancel`` waits (bounded) until
it is, so that no answer other than ``cancelled`` follows our ``session/cancel``.

**The observer** wraps ``RulesObserver``: the rules see every message first (and may refuse ours);
then it tells the desk when a permission answer went out, and the client (``on_agent_result``)
when the agent answered one of our requests, on the reading thread, in wire order.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .. import codec
from .. import schema as s
from .._core import Party
from .._core.findings import finding
from .._core.register import WARNING
from .._core.subagents import descendants
from .._shell.observer import RulesObserver
from ..errors import RpcError
from ..methods import lookup
from .permissions import cancelled

__all__ = ["ClientObserver", "PermissionDesk"]

#: The stop reasons this version defines (PROMPT-17).
_STOP_REASONS = frozenset(reason.value for reason in s.StopReason)

log = logging.getLogger("acpref.client")

Decide = Callable[[s.RequestPermissionRequest], s.RequestPermissionResponse]


class _Ask:
    __slots__ = ("session_id", "done", "answer", "error", "cancelled")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.done = threading.Event()
        self.answer: Optional[s.RequestPermissionResponse] = None
        self.error: Optional[BaseException] = None
        self.cancelled = False


class PermissionDesk:
    """Pending permission requests by request id, and the sessions whose turn was cancelled."""

    def __init__(self, *, flush_timeout: float = 1.0, children: Any = None) -> None:
        #: The rules' state, whose announced children a cancel reaches too (SUBAGENT-44).
        self._children = children
        self._cond = threading.Condition()  # guards everything below
        self._asks: Dict[Any, _Ask] = {}
        #: Answers decided (not cancelled) and not yet written: request id -> session id.
        self._unsent: Dict[Any, str] = {}
        self._cancelled: Set[str] = set()
        self._askers: List[threading.Thread] = []
        self._closed = False
        self._flush_timeout = flush_timeout

    def ask(
        self, params: s.RequestPermissionRequest, ctx: Any, decide: Decide
    ) -> s.RequestPermissionResponse:
        """Handle one request (on its worker thread); see the module's doc."""
        session_id = params.session_id
        entry = _Ask(session_id)
        with self._cond:
            if self._closed or session_id in self._cancelled:
                # spec PROMPT-21 (and spec-gap permission-after-cancel): the turn is cancelled.
                return cancelled()
            self._asks[ctx.id] = entry
            asker = threading.Thread(
                target=self._run,
                args=(entry, params, decide),
                name="acpref-permission-asker",
                daemon=True,
            )
            self._askers = [t for t in self._askers if t.is_alive()] + [asker]
        asker.start()
        # Wake up now and then to notice a cancelled context (the connection closing).
        while not entry.done.wait(0.1):
            if ctx.cancelled.is_set():
                break
        with self._cond:
            self._asks.pop(ctx.id, None)
            if (
                entry.cancelled
                or self._closed
                or session_id in self._cancelled
                or not entry.done.is_set()
            ):
                return cancelled()  # spec PROMPT-21
            if entry.error is not None:
                raise entry.error
            assert entry.answer is not None
            self._unsent[ctx.id] = session_id
            return entry.answer

    @staticmethod
    def _run(entry: _Ask, params: s.RequestPermissionRequest, decide: Decide) -> None:
        try:
            entry.answer = decide(params)
        except BaseException as exc:  # noqa: BLE001 - handed to the handler thread
            entry.error = (
                exc if isinstance(exc, Exception) else RpcError(-32603, "permission asker stopped")
            )
        finally:
            entry.done.set()

    def sent(self, request_id: Any) -> None:
        """An answer to ``request_id`` went out (called by the observer, under the write lock)."""
        with self._cond:
            if self._unsent.pop(request_id, None) is not None:
                self._cond.notify_all()

    def turn_started(self, session_id: str) -> None:
        """A new turn of ``session_id``: an earlier cancel no longer reaches it, nor its
        children's work in it."""
        below = descendants(self._children, session_id) if self._children is not None else []
        with self._cond:
            self._cancelled.discard(session_id)
            self._cancelled.difference_update(below)

    def update_seen(self, update: Any) -> None:
        """A child that reports running has new work, which a cancel before it does not reach
        (the same reading as for its elicitations, spec-gap child-cancel-reach)."""
        if isinstance(update, s.SubagentUpdate) and isinstance(update.state, s.RunningStateUpdate):
            with self._cond:
                self._cancelled.discard(update.session_id)

    def cancel(self, session_id: str) -> None:
        """Answer the session's pending requests ``cancelled``, and those of its descendants
        (spec SUBAGENT-44: a child's cancel, or its root's close, reaches them); wait for
        decided ones to be sent."""
        below = descendants(self._children, session_id) if self._children is not None else []
        for child in below:
            self._cancel_one(child)
        self._cancel_one(session_id)

    def _cancel_one(self, session_id: str) -> None:
        deadline = time.monotonic() + self._flush_timeout
        with self._cond:
            self._cancelled.add(session_id)
            for entry in self._asks.values():
                if entry.session_id == session_id:
                    entry.cancelled = True
                    entry.done.set()
            while session_id in self._unsent.values():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.warning(
                        "a permission answer for %s was decided but not sent in time", session_id
                    )
                    break
                self._cond.wait(remaining)

    def close(self, timeout: float = 2.0) -> None:
        """Answer everything ``cancelled`` and join the askers (bounded: a user may not answer)."""
        with self._cond:
            self._closed = True
            for entry in self._asks.values():
                entry.cancelled = True
                entry.done.set()
            self._unsent.clear()
            self._cond.notify_all()
            askers = list(self._askers)
        deadline = time.monotonic() + timeout
        for thread in askers:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.warning("a permission callback did not return after the connection closed")


class ClientObserver:
    """The rules, then the desk and the client's ``on_agent_result`` hook (see the module)."""

    def __init__(
        self,
        rules: RulesObserver,
        desk: PermissionDesk,
        on_result: Callable[[str, Any, Any], None],
        wants_result: Callable[[str], bool],
    ) -> None:
        self.rules = rules
        self._desk = desk
        self._on_result = on_result
        #: Whether ``on_result`` cares about answers to ``method``: the others are not decoded
        #: twice (a prompt's answer is decoded once, for its caller).
        self._wants_result = wants_result
        self._lock = threading.Lock()  # guards _sent
        #: Our requests in flight: id -> (method, wire params).
        self._sent: Dict[Any, Tuple[str, Any]] = {}

    def on_send(self, message: Dict[str, Any]) -> None:
        try:
            self.rules.on_send(message)  # may raise LocalProtocolError: nothing is sent
        finally:
            if "method" not in message and "id" in message:
                self._desk.sent(message["id"])
        if "method" in message and "id" in message and self._wants_result(message["method"]):
            with self._lock:
                self._sent[message["id"]] = (message["method"], message.get("params"))

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        refusal = self.rules.on_receive(message)
        result = message.get("result")
        stop = result.get("stopReason") if isinstance(result, dict) else None
        if isinstance(stop, str) and stop not in _STOP_REASONS:
            # spec PROMPT-17, spec-gap forward-compatible: a stop reason this version does not
            # define may be a newer v1 peer's: the turn ends with it (decoded as the enum's
            # stand-in), reported as a warning.
            text = f"the turn ended with stopReason {stop!r}, undefined here"
            self.rules._report([finding("PROMPT-17", Party.AGENT, text, level=WARNING)])
        if "method" not in message and "id" in message:
            with self._lock:
                sent = self._sent.pop(message["id"], None)
            if sent is not None and "result" in message and "error" not in message:
                self._result(sent[0], sent[1], message["result"])
        return refusal

    def _result(self, method: str, wire_params: Any, wire_result: Any) -> None:
        row = lookup(method)
        if row is None or row.result is None:
            return  # an extension method: raw JSON, nothing to record
        try:
            params = codec.decode(wire_params or {}, row.params)
            result = codec.decode({} if wire_result is None else wire_result, row.result)
        except codec.DecodeError:
            return  # the caller gets the error from its own decode
        try:
            self._on_result(method, params, result)
        except Exception:  # noqa: BLE001 - a hook must not stop the reader
            log.exception("on_agent_result hook failed for %s", method)
