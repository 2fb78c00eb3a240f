"""The protocol's rules, as one state machine that watches a connection from both ends.

Spec: every page; the clause of each rule is cited where it is checked (the page modules,
listed in ``pages``). Decisions where the spec is silent: spec_notes/decisions.md.

The contract, in the manner of h11:

* **Rule 1.** ``ProtocolState`` sees every well-formed message of one connection, in wire order,
  in both directions, and knows who sent it. It keeps only what the rules need: the negotiated
  version and capabilities, requests in flight, sessions (and their running turn, tool calls,
  modes and options), terminals, URL elicitations.
* **Rule 2.** ``check(sender, message)`` says which rules the message breaks, as ``Finding``s
  naming the clause, its level, and who is to blame; it changes nothing. ``apply`` records the
  message. ``observe`` is both.
* **Rule 3.** The same object serves three masters: the agent side and the client side (each
  refuses to *send* a message that breaks a MUST rule, raising ``LocalProtocolError``, and answers
  a *received* request that breaks one with the error the finding names, ``Step.refused_by``:
  decided here once; such a request is only owed its answer, no page records it: decision
  refused-changes-nothing), and the oracle (which only collects findings over a transcript). So
  the live code and the oracle cannot disagree.

Shape (a string where an integer is due, unknown keys) is the codec's business, not this one's;
the rules read raw wire dicts defensively. Each rule runs on its own: one that raises does not
stop the others (``_rule_failed``). A JSON array or object where a rule keys on an id or a name
(``TypeError: unhashable``) is the message's fault, and that rule has nothing to say about it;
any other exception is the rule's own bug: raised as ``RuleError`` when ``RAISE_RULE_ERRORS`` is
set (the test suite sets it), else logged on ``acpref.rules`` and skipped, so a live side or an
oracle run never dies of it (spec_notes/decisions.md, rule-bug).
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import attrs

from ..methods import CANCEL_REQUEST, METHODS, is_extension
from . import envelope
from .book import UPDATE, CheckFn, Message, Outstanding, TransitionFn, params_of
from .bounded import AnsweredIds
from .effects import Effect, TurnStops, client_effects_of, effects_of, stops_at_end_of_input
from .lifecycle import TurnEvent
from .prompt_turn import stop_turn
from .facts import ConnectionFacts, SessionState, TerminalState
from .findings import Finding, Party, finding, other
from .pages import RULES

__all__ = [
    "AnsweredIds",
    "ProtocolState",
    "RuleError",
    "SessionState",
    "Step",
    "TerminalState",
    "classify",
]


#: ``request``, ``notification``, ``response``, or None for something else (the envelope's
#: verdict on what the rules can read: ``envelope.kind_of``).
classify = envelope.kind_of

log = logging.getLogger("acpref.rules")

#: Raise ``RuleError`` when a rule has a bug, instead of logging it. The core reads no
#: environment (it does no I/O): ``acpref``'s command line sets this from
#: ``ACPREF_RULE_ERRORS=raise``, and the test suite sets both (tests/conftest.py).
RAISE_RULE_ERRORS = False


class RuleError(RuntimeError):
    """A rule of the core raised on a message: a bug of acpref, not of the peer."""



@attrs.frozen
class Step:
    """What one message did (``ProtocolState.step``): the rules it broke, the effects the core
    decided for the receiver to carry out (``effects``: a turn starts, a turn stops), and, for a
    received request refused under Rule 3, the finding it is refused for (``refused_by``: its
    ``to_rpc_error()`` is the answer, and its handler never runs).

    ``refused_by`` is the core's one decision of Rule 3; the live sides read it, they do not
    decide again. It is not the ``"refusal"`` kind of message (``_message``): that is the error
    answer a receiver owes a request that reused a busy id (spec-gap duplicate-id), which the
    connection decides before the rules see the request.
    """

    findings: List[Finding]
    effects: Tuple[Effect, ...] = ()
    refused_by: Optional[Finding] = None


class ProtocolState(ConnectionFacts):
    """Everything the rules need to know about one ACP connection, and the machine that feeds
    them its messages (Rule 1 .. Rule 3 above).

    Not thread-safe, on purpose: it is plain state. A live connection, which touches it from its
    reader thread and its senders' threads, holds the lock of ``acpref._shell.observer.RulesObserver``.
    """

    # -- The public face -------------------------------------------------------------------------

    def observe(
        self,
        sender: Party,
        raw: Dict[str, Any],
        index: Optional[int] = None,
        *,
        refuse: Optional[Callable[[List[Finding]], bool]] = None,
    ) -> List[Finding]:
        """Check a message, then record it; returns the findings (Rule 2).

        ``refuse(findings)``, when given, decides between the two: if it says True, the message
        is not recorded (a live side will not send it). One look at the message serves both
        steps.
        """
        return self.step(sender, raw, index, refuse=refuse).findings

    def step(
        self,
        sender: Party,
        raw: Dict[str, Any],
        index: Optional[int] = None,
        *,
        refuse: Optional[Callable[[List[Finding]], bool]] = None,
    ) -> Step:
        """``observe``, and the effects the core decided (``effects``): what the receiver does
        about the message beside answering it, in wire order."""
        m = self._message(sender, raw, index)
        if m is None:
            return Step([])
        rules = RULES.rules_for(m, self.in_play)
        findings = list(self._check(m, rules.checks))
        if findings and refuse is not None and refuse(findings):
            return Step(findings)
        refused_by = _refused_by(m, findings) if findings else None
        refused = refused_by is not None
        # spec-gap refused-changes-nothing: a request refused under Rule 3 is owed its error
        # answer and changes nothing else: no page records it (so no later message is judged
        # against a close, a permission ask or an elicitation that never happened).
        self._apply(m, [] if refused else rules.transitions)
        effects = [*effects_of(self, m, refused), *client_effects_of(self, m, refused)]
        return Step(findings, tuple(effects), refused_by)

    def end_of_input(self) -> List[TurnStops]:
        """The end of the agent's input, recorded: every running turn stops.

        spec-gap end-of-input: the client can send nothing more, not even session/cancel, and will
        answer none of the turns' requests; each turn is stopped now and answers stopReason
        "cancelled" (``prompt_turn.prompt_answer``), which a client that only half-closed still
        reads.
        """
        stopped = []
        for s in self.sessions.values():
            if s.turn_phase.running:
                stop_turn(self, s, TurnEvent.INPUT_ENDED)
                if s.turn_phase.stopped:
                    stopped.append(s)
        return list(stops_at_end_of_input(stopped))

    def check(
        self, sender: Party, raw: Dict[str, Any], index: Optional[int] = None
    ) -> List[Finding]:
        """The findings a message would cause; changes nothing."""
        m = self._message(sender, raw, index)
        return [] if m is None else list(self._check(m, RULES.checks_for(m, self.in_play)))

    def apply(self, sender: Party, raw: Dict[str, Any], index: Optional[int] = None) -> None:
        """Record a message without checking it."""
        m = self._message(sender, raw, index)
        if m is not None:
            self._apply(m, RULES.transitions_for(m, self.in_play))

    def finish(self, *, complete: bool = True) -> List[Finding]:
        """Findings that only the end of a transcript shows.

        ``complete`` says the transcript ended cleanly (not cut off): then requests never answered
        break RPC-06, and terminals never released break TERM-07.
        """
        out: List[Finding] = []
        if not complete:
            return out
        for party, table in self.outstanding.items():
            for request_id, req in table.items():
                # spec RPC-06: every request is answered, the failed and cancelled ones too.
                # spec CANCEL-05: one that $/cancel_request named breaks that page's own MUST.
                out.append(
                    finding(
                        "CANCEL-05" if req.cancel_requested else "RPC-06",
                        other(party),
                        f"{req.method} request {request_id!r} was never answered",
                        req.index,
                    )
                )
        for terminal_id, term in self.terminals.items():
            if not term.released:
                out.append(
                    finding(
                        "TERM-07",
                        Party.AGENT,
                        f"terminal {terminal_id!r} was never released",
                        term.created_index,
                    )
                )
        return out

    # -- Internals --------------------------------------------------------------------------------

    def _message(
        self, sender: Party, raw: Dict[str, Any], index: Optional[int]
    ) -> Optional[Message]:
        kind = classify(raw)
        if kind is None:
            return None
        if kind == "response":
            request_id = raw.get("id")
            asker = other(sender)
            duplicates = self.duplicates[asker]
            if "error" in raw and _hashable(request_id) and duplicates.get(request_id):
                return Message(
                    sender=sender, raw=raw, index=index, kind="refusal", method=None, id=request_id
                )
            # spec RPC-07: a response is matched to its request by id, whatever the order.
            req = self.outstanding[asker].get(request_id) if _hashable(request_id) else None
            return Message(
                sender=sender,
                raw=raw,
                index=index,
                kind=kind,
                method=req.method if req is not None else None,
                id=request_id,
                request=req,
            )
        params = params_of(raw)
        update = params.get("update") if raw["method"] == UPDATE else None
        session_id = params.get("sessionId")
        return Message(
            sender=sender,
            raw=raw,
            index=index,
            kind=kind,
            method=raw["method"],
            id=raw.get("id"),
            params=params,
            update=update if isinstance(update, dict) else None,
            session_id=session_id,
            session=self.session(session_id),
        )

    def _check(self, m: Message, checks: List[CheckFn]) -> Iterable[Finding]:
        if m.kind == "refusal":
            return  # the answer owed to a duplicate request: nothing to judge (see duplicates)
        if m.kind == "response":
            yield from self._check_response(m)
            if m.request is None:
                return  # an answer to no request in flight: no method's rules apply
        else:
            yield from self._check_call(m)
        for fn in checks:
            try:
                yield from fn(self, m)
            except Exception as exc:  # noqa: BLE001 -- told apart in _rule_failed
                _rule_failed(fn, m, exc)

    def _check_call(self, m: Message) -> Iterable[Finding]:
        """Rules every request and notification obeys, whatever its method."""
        method = m.method or ""
        receiver = other(m.sender)
        row = METHODS.get(method)
        if row is None:
            if not (is_extension(method) or method.startswith("$/")):
                # spec EXT-05: names without a leading underscore are reserved for the protocol.
                yield finding(
                    "EXT-05",
                    m.sender,
                    f"unknown method {method!r} (custom methods start with '_')",
                    m.index,
                    -32601,
                )
            return
        if row.receiver not in (receiver, "both"):  # a Party is its wire name
            # spec RPC-12: a method the receiver does not implement.
            yield finding(
                "RPC-12",
                m.sender,
                f"{method} is {'an' if row.receiver == 'agent' else 'a'} {row.receiver} method; "
                f"the {m.sender.value} cannot send it",
                m.index,
                -32601,
            )
            return
        if (m.kind == "request") != (not row.is_notification):
            what = "a notification" if row.is_notification else "a request"
            yield finding("OVERVIEW-01", m.sender, f"{method} is {what}", m.index, -32600)
        if m.kind == "request" and _hashable(m.id) and m.id in self.outstanding[m.sender]:
            # spec-gap duplicate-id: an id still in flight is not reused.
            yield finding(
                "spec-gap:duplicate-id",
                m.sender,
                f"request id {m.id!r} is still in flight",
                m.index,
                -32600,
            )
        yield from self._check_phase_and_gate(m, row, receiver)

    def _check_phase_and_gate(self, m: Message, row: Any, receiver: Party) -> Iterable[Finding]:
        """A known method, sent the right way: may it be sent now, to this receiver?"""
        method = m.method or ""
        if (
            m.sender is Party.CLIENT
            and method not in ("initialize", CANCEL_REQUEST)
            and not self.initialized
        ):
            # spec INIT-01: initialize and its response come before any other request
            # (spec-gap before-initialize: refused -32600 Invalid request).
            if m.kind == "request":
                yield finding(
                    "INIT-01",
                    m.sender,
                    f"{method} sent before initialize completed",
                    m.index,
                    -32600,
                )
            return
        gate = row.gate
        if gate == "elicitation":
            # spec-gap elicitation-mode-error: the mode decides (ELICIT-06, elicitation._elicit),
            # answered -32602 per ELICIT-29 even when no elicitation is advertised, not RPC-12's
            # -32601.
            return
        if gate is not None and not self.gate_open(gate, receiver):
            # spec RPC-12, OVERVIEW-03, FS-01, FS-02, TERM-01: a gated method (the row's clause
            # names the gate) is not available unless the receiver advertised the capability;
            # spec SUBAGENT-13: for a child's session as for any other.
            yield finding(
                row.clause,
                m.sender,
                f"{method} needs {receiver.value} capability {gate!r}, which was not advertised",
                m.index,
                -32601,
            )

    def _check_response(self, m: Message) -> Iterable[Finding]:
        """JSON-RPC bookkeeping for responses (RPC-04 .. RPC-09, RPC-21)."""
        faults = envelope.response_faults(m.raw)
        for fault in faults:
            # spec RPC-05, RPC-09: exactly one of result or error; a well-formed error object.
            yield finding(fault.clause, m.sender, fault.message, m.index)
        message = m.raw["error"].get("message") if m.is_error and not faults else None
        if isinstance(message, str) and len(message.splitlines()) > 1:
            # spec RPC-21: the message is limited to one concise sentence; lines of detail (a
            # traceback) belong in error.data. Only line breaks are judged: no sentence names a
            # length, and a period does not end every sentence ("e.g.", "v1.2").
            yield finding(
                "RPC-21",
                m.sender,
                f"error.message runs over {len(message.splitlines())} lines",
                m.index,
            )
        if m.request is None:
            if _hashable(m.id) and m.id in self.answered[other(m.sender)]:
                # spec RPC-06, SUBAGENT-48: exactly one response per request (a child's too).
                yield finding(
                    "RPC-06", m.sender, f"request {m.id!r} answered more than once", m.index
                )
            elif m.id is not None:
                yield finding(
                    "RPC-04",
                    m.sender,
                    f"response id {m.id!r} matches no request in flight",
                    m.index,
                )

    def _apply(self, m: Message, transitions: List[TransitionFn]) -> None:
        if m.kind == "refusal":
            duplicates = self.duplicates[other(m.sender)]
            duplicates[m.id] -= 1
            if not duplicates[m.id]:
                del duplicates[m.id]
            return
        self.sent[m.sender] += 1
        if m.kind == "request" and _hashable(m.id):
            if m.id in self.outstanding[m.sender]:
                # spec-gap duplicate-id: the first request keeps the id; the reuse is refused.
                duplicates = self.duplicates[m.sender]
                duplicates[m.id] = duplicates.get(m.id, 0) + 1
                return
            self.outstanding[m.sender][m.id] = Outstanding(
                method=m.method or "", params=m.params, index=m.index, seq=self.sent[m.sender]
            )
        elif m.kind == "response" and m.request is not None:
            asker = other(m.sender)
            self.outstanding[asker].pop(m.id, None)
            self.answered[asker].add(m.id)
            if m.request.seq > self.read[m.sender][0]:
                # Stdio is ordered: whoever answers a request has read all its peer sent before.
                self.read[m.sender] = (m.request.seq, m.index)
        for fn in transitions:
            try:
                fn(self, m)
            except Exception as exc:  # noqa: BLE001 -- told apart in _rule_failed
                _rule_failed(fn, m, exc)


def _rule_failed(fn: Callable[..., Any], m: Message, exc: Exception) -> None:
    """A rule (a check or a transition) raised on ``m``; the other rules still run.

    A list or an object where the rule keys on an id or a name (unhashable) is the message's
    fault: it is ill-formed, which the codec reports (-32602, SCHEMA-*), and this rule has nothing
    to say about it. In well-formed JSON every id and name is a string or an integer, so any other
    exception is the rule's own bug: the tests see it raised; a live side logs it and carries on,
    for a rule's bug must not take a peer's connection down with it.
    """
    # spec-gap rule-bug: an unhashable id or name is the message's fault; anything else is ours.
    if isinstance(exc, TypeError) and str(exc).startswith("unhashable type"):
        return
    where = f"{fn.__module__}.{fn.__qualname__} on the {m.kind} {m.method or m.id!r}"
    if RAISE_RULE_ERRORS:
        raise RuleError(f"rule {where} (message {m.index}) raised {exc!r}") from exc
    log.error("rule %s (message %s) raised; rule skipped", where, m.index, exc_info=exc)


def _refused_by(m: Message, findings: List[Finding]) -> Optional[Finding]:
    """Rule 3: a received request that breaks a MUST rule naming an answer code is refused with
    the first such finding, and its handler never runs (so it has no effects either)."""
    if m.kind != "request":
        return None
    for f in findings:
        if f.binding and f.code is not None and f.blame is m.sender:
            return f
    return None


def _hashable(value: Any) -> bool:
    return value is None or isinstance(value, (str, int))
