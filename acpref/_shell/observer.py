"""The live sides' use of the rules: refuse what we must not send, answer what the peer broke.

Spec: see ``acpref._core.state``. Plugged into ``Connection`` as its ``observer``.

This is the threaded shell's side of the boundary: the protocol core (``acpref._core``) is plain
state with no lock, and a live connection touches it from several threads at once (its reader
thread records what arrives, handler and caller threads check what they send). The observer
serialises every look at the core through one lock, so that checking and recording a message is
one step that no other message can interleave.

* A message **we** send is checked first; a finding acpref enforces at MUST strength
  (``Finding.binding``: a MUST clause, or one of acpref's decisions enforced so) raises
  ``LocalProtocolError`` and the message is not sent nor recorded. Other findings are logged. One exception: an
  *error response* is never stopped, only reported. It is the last answer a request can get (the
  connection sends one in place of a refused result); stopping it too would leave the request
  unanswered for good (RPC-06), which is worse than any rule it breaks.
* A message the **peer** sends is recorded; a request that breaks a rule enforced at MUST
  strength whose finding names an answer code is refused with that error (its handler never
  runs): the core decides which (``Step.refused_by``), the observer only answers with it. Anything else the peer broke is logged, and ``on_finding`` (if given) hears of it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

from .._core import Finding, Party, ProtocolState, other
from .._core.effects import Effect
from ..errors import LocalProtocolError, RpcError

__all__ = ["RulesObserver"]

log = logging.getLogger("acpref.rules")

_T = TypeVar("_T")


class RulesObserver:
    def __init__(
        self,
        me: Party,
        state: Optional[ProtocolState] = None,
        *,
        on_finding: Optional[Callable[[Finding], None]] = None,
    ) -> None:
        self.me = me
        self.peer = other(me)
        self.state = state if state is not None else ProtocolState()
        self._on_finding = on_finding
        #: Every finding seen on this connection, both ways.
        self.findings: List[Finding] = []
        #: Held for every look at ``state`` (it has no lock of its own), never while a callback
        #: runs: ``on_finding`` may send, and sending takes it again.
        self._lock = threading.Lock()

    def _report(self, findings: List[Finding]) -> None:
        with self._lock:
            self.findings.extend(findings)
            if len(self.findings) > 10_000:
                del self.findings[:5_000]
        for f in findings:
            log.log(
                logging.WARNING if f.binding else logging.INFO,
                "%s broke %s: %s",
                f.blame.value,
                f.clause,
                f.message,
            )
            if self._on_finding is not None:
                try:
                    self._on_finding(f)
                except Exception:  # noqa: BLE001
                    log.exception("on_finding callback failed")

    def is_refusal(self, message: Dict[str, Any]) -> bool:
        """True when our error ``message`` answers a peer's request that reused a busy id."""
        request_id = message.get("id")
        if not isinstance(request_id, (str, int)):
            return False
        with self._lock:
            return bool(self.state.duplicates[self.peer].get(request_id))

    def ask(self, question: Callable[..., _T], *args: Any) -> _T:
        """``question(state, *args)`` under the lock: a read of the core's state, or a plain
        step of it that is no message."""
        with self._lock:
            return question(self.state, *args)

    def end_of_input(self) -> List[Effect]:
        """Record the end of the peer's input: the turns the core stops (``TurnStops``)."""
        with self._lock:
            return list(self.state.end_of_input())

    def on_send(self, message: Dict[str, Any]) -> None:
        self.send(message)

    def send(self, message: Dict[str, Any]) -> Tuple[Effect, ...]:
        """``on_send``, and the effects the core decided as it recorded our message (the answer
        to a session/load that failed refuses the requests that waited for it)."""
        is_error_response = "error" in message and "method" not in message
        # Checked and recorded in one step, unless a MUST rule stops the message (not recorded).
        with self._lock:
            step = self.state.step(
                self.me, message, refuse=None if is_error_response else self._stops
            )
        findings = step.findings
        if not findings:
            return step.effects  # the common case: nothing to refuse, nothing to report
        must = [f for f in findings if f.binding and f.blame is self.me]
        if must and not is_error_response:
            f = must[0]
            raise LocalProtocolError(
                f.clause, f.message, code=f.code if f.code is not None else -32600
            )
        self._report(findings)
        return step.effects

    def _stops(self, findings: List[Finding]) -> bool:
        """True when we must not send a message with these findings: a MUST rule we break."""
        return any(f.binding and f.blame is self.me for f in findings)

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        return self.receive(message)[0]

    def receive(self, message: Dict[str, Any]) -> Tuple[Optional[RpcError], Tuple[Effect, ...]]:
        """Record a message read: the error to refuse it with (or None), and the effects the core
        decided for us to carry out (``acpref._core.effects``)."""
        with self._lock:
            step = self.state.step(self.peer, message)
        if not step.findings:
            return None, step.effects  # the common case: nothing to report, nothing to refuse
        self._report(step.findings)
        # Rule 3, as the core decided it (``Step.refused_by``): the answer that refuses it.
        refused = step.refused_by
        return (refused.to_rpc_error() if refused is not None else None), step.effects
