"""The permission desk and the client's observer: what the connection needs beyond the rules.

Spec: prompt-turn.mdx (Cancellation), tool-calls.mdx (Requesting Permission); clauses PROMPT-21,
SETUP-16. Used only by ``connection.ClientSideConnection``.

**The desk** answers ``session/request_permission``. The user's decision is made on a thread of
its own (an *asker*), while the request's handler waits for either that decision or a
cancellation. Which requests a cancel reaches is the core's decision, not the desk's: as the
rules record our ``session/cancel`` (or ``session/close``) they name the pending requests of the
session and of the children below it (``effects.AsksCancelled``), and the desk answers them
``cancelled`` at once (PROMPT-21), even while a dialog is still open; a request the rules name
as it arrives (the session's work was cancelled and no prompt followed, spec-gap
permission-after-cancel) is answered ``cancelled`` without asking. A decision made just before
the cancel may not be on the wire yet: while a cancel is being sent (``holding``), decided
answers are written first and new ones wait, so that no answer other than ``cancelled`` follows
our ``session/cancel``.

**The observer** wraps ``RulesObserver``: the rules see every message first (and may refuse ours);
then it hands the effects the core decided to the connection, tells the desk when a permission
answer went out, and the client (``on_agent_result``) when the agent answered one of our
requests, on the reading thread, in wire order.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from .. import codec
from .. import schema as s
from .._core import Party
from .._core.effects import Effect
from .._core.findings import finding
from .._core.register import WARNING
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
    __slots__ = ("done", "answer", "error", "cancelled")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Optional[s.RequestPermissionResponse] = None
        self.error: Optional[BaseException] = None
        self.cancelled = False


class PermissionDesk:
    """Pending permission requests by request id; those the core names are answered
    ``cancelled`` (see the module)."""

    def __init__(self, *, flush_timeout: float = 1.0) -> None:
        self._cond = threading.Condition()  # guards everything below
        self._asks: Dict[Any, _Ask] = {}
        #: Answers decided (not cancelled) and not yet written, by request id.
        self._unsent: Set[Any] = set()
        #: Requests the core named before their handler asked (``cancel_asks``): each is answered
        #: ``cancelled`` once, without asking, and forgotten when its answer goes out.
        self._due: Set[Any] = set()
        #: Cancels being sent (``holding``): no decided answer is handed over meanwhile.
        self._holds = 0
        self._askers: List[threading.Thread] = []
        self._closed = False
        self._flush_timeout = flush_timeout

    def ask(
        self, params: s.RequestPermissionRequest, ctx: Any, decide: Decide
    ) -> s.RequestPermissionResponse:
        """Handle one request (on its worker thread); see the module's doc."""
        entry = _Ask()
        with self._cond:
            if self._closed or ctx.id in self._due:
                # spec PROMPT-21 (and spec-gap permission-after-cancel): the core named it.
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
            # A cancel on its way: wait until the rules have recorded it (and named this request,
            # if it reaches it). Bounded by that one write, and by the connection closing.
            while self._holds and not self._closed and not ctx.cancelled.is_set():
                self._cond.wait(0.1)
            self._asks.pop(ctx.id, None)
            if entry.cancelled or self._closed or not entry.done.is_set():
                return cancelled()  # spec PROMPT-21
            if entry.error is not None:
                raise entry.error
            assert entry.answer is not None
            self._unsent.add(ctx.id)
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
            self._due.discard(request_id)
            if request_id in self._unsent:
                self._unsent.discard(request_id)
                self._cond.notify_all()

    def cancel_asks(self, request_ids: Iterable[Any]) -> None:
        """Answer these requests ``cancelled`` (the core's ``AsksCancelled``): a dialog still open
        is dismissed, a request not asked yet will be answered without asking."""
        with self._cond:
            for request_id in request_ids:
                entry = self._asks.get(request_id)
                if entry is not None:
                    entry.cancelled = True  # spec PROMPT-21
                    entry.done.set()
                elif request_id not in self._unsent:
                    self._due.add(request_id)

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """Around sending a message that cancels work (session/cancel, session/close): decided
        answers are written first (bounded wait), new ones wait until the rules recorded it."""
        deadline = time.monotonic() + self._flush_timeout
        with self._cond:
            self._holds += 1
            while self._unsent:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    log.warning("a permission answer was decided but not sent in time")
                    break
                self._cond.wait(remaining)
        try:
            yield
        finally:
            with self._cond:
                self._holds -= 1
                self._cond.notify_all()

    def close(self, timeout: float = 2.0) -> None:
        """Answer everything ``cancelled`` and join the askers (bounded: a user may not answer)."""
        with self._cond:
            self._closed = True
            for entry in self._asks.values():
                entry.cancelled = True
                entry.done.set()
            self._unsent.clear()
            self._due.clear()
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
        on_effect: Callable[[Effect], None],
    ) -> None:
        self.rules = rules
        self._desk = desk
        #: Carries out what the core decided (``acpref._core.effects``), in wire order.
        self._on_effect = on_effect
        self._on_result = on_result
        #: Whether ``on_result`` cares about answers to ``method``: the others are not decoded
        #: twice (a prompt's answer is decoded once, for its caller).
        self._wants_result = wants_result
        self._lock = threading.Lock()  # guards _sent
        #: Our requests in flight: id -> (method, wire params).
        self._sent: Dict[Any, Tuple[str, Any]] = {}

    def on_send(self, message: Dict[str, Any]) -> None:
        try:
            effects = self.rules.send(message)  # may raise LocalProtocolError: nothing is sent
        finally:
            if "method" not in message and "id" in message:
                self._desk.sent(message["id"])
        for effect in effects:
            self._on_effect(effect)
        if "method" in message and "id" in message and self._wants_result(message["method"]):
            with self._lock:
                self._sent[message["id"]] = (message["method"], message.get("params"))

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        refusal, effects = self.rules.receive(message)
        for effect in effects:
            self._on_effect(effect)
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
