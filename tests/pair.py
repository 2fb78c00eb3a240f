"""A deterministic in-memory pair: the client's and the agent's ``ProtocolState``, no I/O.

The core is sans-I/O (``acpref._core.state``, Rule 1 .. Rule 3), so its rules are tested the way
h11 tests its own: two protocol states, one per side, and a test that says "the client sends X,
the agent sends Y". No threads, no pipes, no processes, no clock: a rule test here is as fast as
the rule and fails the same way every time.

One message goes through both sides exactly as the live sides pass it
(``acpref._shell.observer.RulesObserver``, which the agent's and the client's connections use):

* the **sender** checks and records it in one step (``step`` with a ``refuse`` that stops a
  message breaking a MUST rule the sender is blamed for; an error response is never stopped).
  A stopped message is not sent: the step says so (``Step.stopped``, the ``LocalProtocolError``
  the live side would raise) and the receiver never sees it;
* the **receiver** records it (``step``); a request that breaks a binding rule whose finding
  names an answer code is refused with that error (the core's ``Step.refused_by``): the
  receiver's answer, an error response, goes back through both sides (as the live connection
  sends it, observed), and ``Step.refusal`` is the error it carried.

Findings are collected per side (``Pair.findings[Party.AGENT]`` is what the agent's rules saw),
and every message that crossed is kept in wire order (``Pair.wire``; a finding's ``index`` is the
message's place there). Both sides see one wire, so their rules agree: ``Pair.check`` asks the
sender's rules what a message would break, and the receiver's must say the same.

A side named ``lax`` sends what its rules find, as a peer that is not acpref may: its findings
are kept, nothing is stopped, and so the receiver's view of the violation (its finding and its
refusal) can be tested too.

Real pipes, framing, threads and processes are tested elsewhere, on the live sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Dict, Iterable, List, Optional, Tuple

from acpref._core import Finding, Party, ProtocolState, other
from acpref._core.effects import Effect
from acpref.errors import LocalProtocolError, RpcError

__all__ = ["Pair", "Step", "A", "C", "req", "note", "ok", "err", "initialize", "initialized"]

A, C = Party.AGENT, Party.CLIENT
#: A message and who sends it.
Msg = Tuple[Party, Dict[str, Any]]


def req(i: Any, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params or {}}


def note(method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


def ok(i: Any, result: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result if result is not None else {}}


def err(i: Any, code: int = -32603, message: str = "failed") -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "error": {"code": code, "message": message}}


def initialize(capabilities: Optional[Dict[str, Any]] = None, i: Any = 0) -> Dict[str, Any]:
    """The client's initialize request, protocol version 1."""
    return req(i, "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {},
                                 "clientInfo": {"name": "c", "version": "1"}})


def initialized(
    capabilities: Optional[Dict[str, Any]] = None,
    auth_methods: Optional[List[Dict[str, Any]]] = None,
    i: Any = 0,
) -> Dict[str, Any]:
    """The agent's answer to it: version 1, its capabilities and authentication methods."""
    return ok(i, {"protocolVersion": 1, "agentCapabilities": capabilities or {},
                  "authMethods": auth_methods or [], "agentInfo": {"name": "a", "version": "1"}})


@dataclass
class Step:
    """What one message did on both sides."""

    sender: Party
    message: Dict[str, Any]
    #: The sender's findings (those it would log or refuse on).
    sent_findings: List[Finding] = field(default_factory=list)
    #: The receiver's findings (empty when the message was stopped).
    received_findings: List[Finding] = field(default_factory=list)
    #: The ``LocalProtocolError`` the sender raised instead of sending, if it stopped the message.
    stopped: Optional[LocalProtocolError] = None
    #: The error the receiver answered the request with, if it refused it.
    refusal: Optional[RpcError] = None
    #: What the sender's and the receiver's cores decided each side carries out beside
    #: answering (``acpref._core.effects``: a turn starts, a turn stops).
    sent_effects: Tuple[Effect, ...] = ()
    received_effects: Tuple[Effect, ...] = ()

    @property
    def sent(self) -> bool:
        return self.stopped is None

    @property
    def findings(self) -> List[Finding]:
        """Both sides' findings, sender's first."""
        return self.sent_findings + self.received_findings

    @property
    def clauses(self) -> List[str]:
        return [f.clause for f in self.findings]


class Pair:
    """Both sides' protocol states, fed one message at a time in wire order."""

    def __init__(
        self,
        *,
        client: Optional[ProtocolState] = None,
        agent: Optional[ProtocolState] = None,
        answer_refusals: bool = True,
        lax: Collection[Party] = (),
    ) -> None:
        self.states: Dict[Party, ProtocolState] = {
            C: client if client is not None else ProtocolState(),
            A: agent if agent is not None else ProtocolState(),
        }
        #: Every finding each side's rules saw, in order.
        self.findings: Dict[Party, List[Finding]] = {C: [], A: []}
        #: Every step, in wire order.
        self.steps: List[Step] = []
        #: Every message that crossed (not those stopped), in wire order.
        self.wire: List[Msg] = []
        self._answer_refusals = answer_refusals
        self._lax = frozenset(lax)

    @property
    def client(self) -> ProtocolState:
        return self.states[C]

    @property
    def agent(self) -> ProtocolState:
        return self.states[A]

    def client_sends(self, message: Dict[str, Any]) -> Step:
        return self.send(C, message)

    def agent_sends(self, message: Dict[str, Any]) -> Step:
        return self.send(A, message)

    def send(self, sender: Party, message: Dict[str, Any]) -> Step:
        """``sender`` sends ``message``: its own rules first, then the receiver's."""
        step = Step(sender, message)
        self.steps.append(step)
        step.sent_findings, step.sent_effects, step.stopped = self._on_send(sender, message)
        self.findings[sender].extend(step.sent_findings)
        if step.stopped is not None:
            return step
        self.wire.append((sender, message))
        receiver = other(sender)
        step.received_findings, step.received_effects, step.refusal = self._on_receive(
            receiver, message
        )
        self.findings[receiver].extend(step.received_findings)
        if step.refusal is not None and self._answer_refusals:
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": step.refusal.to_wire()}
            self.send(receiver, answer)  # as the live side writes it, data and all
        return step

    def exchange(self, *messages: Msg) -> List[Step]:
        """Send each ``(sender, message)`` in turn."""
        return [self.send(sender, message) for sender, message in messages]

    def quietly(self, messages: Iterable[Msg], *, allowed: Collection[str] = ()) -> "Pair":
        """Send each message, none of which may break a rule (but the ``allowed`` clauses) on
        either side: the traffic that sets the scene of a test."""
        for sender, message in messages:
            step = self.send(sender, message)
            broken = [f.clause for f in step.findings if f.clause not in allowed]
            assert step.sent and not broken, f"{sender.value} sent {message}: broke {broken}"
        return self

    def handshake(
        self,
        client_capabilities: Optional[Dict[str, Any]] = None,
        agent_capabilities: Optional[Dict[str, Any]] = None,
        auth_methods: Optional[List[Dict[str, Any]]] = None,
    ) -> "Pair":
        """The client sends initialize, the agent answers it: nothing broken."""
        return self.quietly([
            (C, initialize(client_capabilities)),
            (A, initialized(agent_capabilities, auth_methods)),
        ])

    def check(self, sender: Party, message: Dict[str, Any]) -> List[Finding]:
        """What ``message`` would break if ``sender`` sent it next (Rule 2: nothing changes). The
        receiver's rules, which saw the same wire, find the same."""
        index = len(self.wire)
        found = self.states[sender].check(sender, message, index)
        seen = self.states[other(sender)].check(sender, message, index)
        assert [(f.clause, f.blame) for f in seen] == [(f.clause, f.blame) for f in found]
        return found

    def finish(self, *, complete: bool = True) -> Dict[Party, List[Finding]]:
        """What each side's rules find at the end of the connection."""
        return {party: state.finish(complete=complete) for party, state in self.states.items()}

    # -- As RulesObserver does it -----------------------------------------------------------------

    def _on_send(
        self, me: Party, message: Dict[str, Any]
    ) -> "tuple[List[Finding], Tuple[Effect, ...], Optional[LocalProtocolError]]":
        is_error_response = "error" in message and "method" not in message
        enforces = not is_error_response and me not in self._lax

        def stops(findings: List[Finding]) -> bool:
            return any(f.binding and f.blame is me for f in findings)

        step = self.states[me].step(me, message, len(self.wire), refuse=stops if enforces else None)
        must = [f for f in step.findings if f.binding and f.blame is me]
        if must and enforces:
            f = must[0]
            code = f.code if f.code is not None else -32600
            return step.findings, (), LocalProtocolError(f.clause, f.message, code=code)
        return step.findings, step.effects, None

    def _on_receive(
        self, me: Party, message: Dict[str, Any]
    ) -> "tuple[List[Finding], Tuple[Effect, ...], Optional[RpcError]]":
        step = self.states[me].step(other(me), message, len(self.wire) - 1)
        # Rule 3, as the core decided it (``refused_by``).
        refused = step.refused_by
        return step.findings, step.effects, (refused.to_rpc_error() if refused else None)
