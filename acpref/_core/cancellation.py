"""cancellation.mdx: ``$/cancel_request``, either way.

Either party may ask the other to stop working on one of its own requests still in flight
(CANCEL-01; a race with the answer is possible, so an unknown id is only a spec-gap warning).
The request is still answered, with its result or with -32800 (CANCEL-05, by a receiver that
supports it). Support is optional (CANCEL-02) and advertised nowhere: the wire shows it once the
receiver answered a request of the connection as cancelled after a ``$/cancel_request`` of it
(``ConnectionFacts.cancel_support``); until then an error after a cancel is a spec-gap
(cancel-request-support), since a receiver that does not support it answers as it would have.
Cancelling a whole prompt turn is ``session/cancel``, a different notification
(``prompt_turn``).

The live sides ask this page what to do with ``$/cancel_request``: ``reply_to_cancel_request``
(answer -32800 now, leave the answer to the handler, or ignore). Which running turn a client's
message stops on the agent side is not asked: the core says so as it records the message
(``effects.TurnStops``), read from the turn table (``lifecycle.TURN``).
"""

from __future__ import annotations

import enum
from typing import Any, Iterable, Optional

from ..errors import ErrorCode
from ..methods import AGENT_METHODS, CANCEL_REQUEST, CLIENT_METHODS
from .book import Message, check, transition
from .facts import ConnectionFacts, SessionState
from .lifecycle import TurnEvent, TurnPhase
from .findings import Finding, Party, finding
from .prompt_turn import stop_turn

A, C = Party.AGENT, Party.CLIENT


@check("notification", (C, A), CANCEL_REQUEST)
def _cancel_request(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    target = m.params.get("requestId")
    if not (isinstance(target, (str, int)) and target in state.outstanding[m.sender]):
        # spec CANCEL-01, spec-gap unknown-cancel-id: a party cancels only its own outstanding
        # requests (a race with the response is possible, so this is a warning).
        yield finding(
            "spec-gap:unknown-cancel-id",
            m.sender,
            f"$/cancel_request for {target!r}, not in flight",
            m.index,
        )


@transition("notification", (C, A), CANCEL_REQUEST)
def _cancel_request_apply(state: ConnectionFacts, m: Message) -> None:
    target = m.params.get("requestId")
    req = state.outstanding[m.sender].get(target) if isinstance(target, (str, int)) else None
    if req is None:
        return
    if not req.cancel_requested:
        req.cancel_requested = True
        req.cancel_seq = state.sent[m.sender]
    s = _turn_of(state, req, target) if m.sender is C else None
    if s is not None:
        # spec-gap cancel-request-prompt: $/cancel_request of a running prompt stops its turn.
        stop_turn(state, s, TurnEvent.CANCEL_REQUEST_SENT)


def _turn_of(state: ConnectionFacts, req: Any, request_id: Any) -> Optional[SessionState]:
    """The session whose running turn ``req`` (the client's ``request_id``) is the prompt of."""
    s = state.session(req.params.get("sessionId"))
    return s if s is not None and s.turn_phase.running and s.turn == request_id else None


#: The requests each party receives, whose answers may follow a $/cancel_request of them.
_TO_AGENT = tuple(name for name, method in AGENT_METHODS.items() if not method.is_notification)
_TO_CLIENT = tuple(name for name, method in CLIENT_METHODS.items() if not method.is_notification)


def _cancelled_by_session_cancel(state: ConnectionFacts, m: Message) -> bool:
    """True for the answer to a prompt whose turn session/cancel or session/close also stopped:
    that turn's answer has its own rules (PROMPT-23, PROMPT-24, SETUP-16: ``prompt_turn``)."""
    assert m.request is not None
    if m.method != "session/prompt":
        return False
    s = state.sessions.get(m.request.params.get("sessionId"))
    # Before the answer is recorded the turn is still running; after, it has ended cancelled.
    running = s is not None and s.turn == m.id and s.turn_phase is TurnPhase.CANCEL_REQUESTED
    return running or (s is not None and s.turn is None and s.turn_phase is TurnPhase.CANCEL_ENDED)


@check("response", A, *_TO_AGENT)
@check("response", C, *_TO_CLIENT)
def _cancelled_answer(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    req = m.request
    if req is None or not req.cancel_requested or not m.is_error:
        return
    code = m.error.get("code")
    if code == ErrorCode.REQUEST_CANCELLED or _cancelled_by_session_cancel(state, m):
        return
    who = m.sender.value
    support = state.cancel_support[m.sender]
    read, proof = state.read[m.sender]
    if support is not None and read >= req.cancel_seq:
        # spec CANCEL-05: "MUST send one of these responses for the original request" (a result
        # or -32800), binding a receiver that supports $/cancel_request. This one does: it
        # answered an earlier request of this connection -32800 (or "cancelled") after our
        # $/cancel_request of it. And it had read this cancel: it answered a request sent after
        # it (stdio is ordered), so the request was in flight when the cancel reached it.
        witness, at = support
        yield finding(
            "CANCEL-05",
            m.sender,
            f"{req.method} request {m.id!r}, cancelled by $/cancel_request, answered error "
            f"{code}, not -32800; the {who} supports $/cancel_request (it answered request "
            f"{witness!r}{_at(at)} as cancelled after one) and had read this one (it answered a "
            f"request sent after it{_at(proof)})",
            m.index,
        )
    elif req.method == "session/prompt":
        # spec-gap cancel-request-support: CANCEL-05 (a result or -32800) binds a receiver that
        # supports $/cancel_request, which is optional (CANCEL-02) and advertised nowhere: one
        # that does not answers as it would have. The wire shows support only by an earlier
        # request answered as cancelled, and the cancel read only by a later request answered.
        why = (
            "it had shown support, but not that it had read this cancel before it answered"
            if support is not None
            else "CANCEL-05 binds a receiver that supports $/cancel_request"
        )
        yield finding(
            "spec-gap:cancel-request-support",
            A,
            f"a prompt cancelled by $/cancel_request answered error {code}, not -32800 ({why})",
            m.index,
        )


@transition("response", A, *_TO_AGENT)
@transition("response", C, *_TO_CLIENT)
def _support_shown(state: ConnectionFacts, m: Message) -> None:
    req = m.request
    if req is None or not req.cancel_requested or state.cancel_support[m.sender] is not None:
        return
    if m.is_error:
        shown = m.error.get("code") == ErrorCode.REQUEST_CANCELLED
    else:
        # A prompt's "cancellation marker" (CANCEL-05): stopReason "cancelled", unless
        # session/cancel or session/close of its turn asked for it anyway.
        stop = m.result.get("stopReason") if isinstance(m.result, dict) else None
        shown = stop == "cancelled" and not _cancelled_by_session_cancel(state, m)
    if shown:
        # The receiver answered a request as cancelled after a $/cancel_request of it: it
        # supports $/cancel_request (CANCEL-02), for every request of this connection.
        state.cancel_support[m.sender] = (m.id, m.index)


def _at(index: Optional[int]) -> str:
    return f" (#{index})" if index is not None else ""


# -- What a live receiver does (the shells ask; the oracle judges the same rules above) ----------


class CancelReply(enum.Enum):
    """What a receiver does with ``$/cancel_request`` (``reply_to_cancel_request``)."""

    #: Nothing: no request of that id is in flight (unknown, finished, or no id at all).
    IGNORE = "ignore"
    #: Flag the request cancelled and answer it -32800 now; the handler's later answer is dropped.
    ANSWER_CANCELLED = "answer -32800"
    #: Flag the request cancelled; its handler sends the one answer (a prompt turn answers
    #: stopReason "cancelled").
    HANDLER_ANSWERS = "the handler answers"


def reply_to_cancel_request(in_flight: bool, handler_answers: bool) -> CancelReply:
    """``$/cancel_request`` names one of the peer's requests: ``in_flight`` when it is received
    and not yet answered; ``handler_answers`` when its handler answers a cancellation itself."""
    if not in_flight:
        # spec CANCEL-06: an unknown or finished request id is silently ignored; nothing answers
        # the notification itself.
        return CancelReply.IGNORE
    if handler_answers:
        # spec CANCEL-05: the request still gets exactly one response: here its handler's.
        return CancelReply.HANDLER_ANSWERS
    # spec CANCEL-05: the request still gets exactly one response: -32800, sent now.
    return CancelReply.ANSWER_CANCELLED
