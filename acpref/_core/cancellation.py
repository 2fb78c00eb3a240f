"""cancellation.mdx: ``$/cancel_request``, either way.

Either party may ask the other to stop working on one of its own requests still in flight
(CANCEL-01; a race with the answer is possible, so an unknown id is only a spec-gap warning).
The request is still answered, with its result or with -32800 (CANCEL-05, by a receiver that
supports it). Cancelling a whole prompt turn is ``session/cancel``, a different notification
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
from ..methods import CANCEL_REQUEST
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
    req.cancel_requested = True
    s = _turn_of(state, req, target) if m.sender is C else None
    if s is not None:
        # spec-gap cancel-request-prompt: $/cancel_request of a running prompt stops its turn.
        stop_turn(state, s, TurnEvent.CANCEL_REQUEST_SENT)


def _turn_of(state: ConnectionFacts, req: Any, request_id: Any) -> Optional[SessionState]:
    """The session whose running turn ``req`` (the client's ``request_id``) is the prompt of."""
    s = state.session(req.params.get("sessionId"))
    return s if s is not None and s.turn_phase.running and s.turn == request_id else None


@check("response", A, "session/prompt")
def _cancelled_prompt(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None or not s.turn_phase.running or s.turn != m.id:
        return
    if s.turn_phase is TurnPhase.CANCEL_REQUESTED:
        return  # a turn cancelled by session/cancel has its own rules (PROMPT-23, PROMPT-24)
    code = m.error.get("code") if m.is_error else None
    if m.request.cancel_requested and m.is_error and code != ErrorCode.REQUEST_CANCELLED:
        # spec-gap cancel-request-support: CANCEL-05 (a result or -32800) binds a receiver that
        # supports $/cancel_request, which is optional (CANCEL-02) and advertised nowhere: one
        # that does not answers as it would have, so the wire cannot show CANCEL-05 broken.
        yield finding(
            "spec-gap:cancel-request-support",
            A,
            f"a prompt cancelled by $/cancel_request answered error {code}, not -32800 "
            "(CANCEL-05 binds a receiver that supports $/cancel_request)",
            m.index,
        )


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
