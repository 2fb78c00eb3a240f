"""cancellation.mdx: ``$/cancel_request``, either way.

Either party may ask the other to stop working on one of its own requests still in flight
(CANCEL-01; a race with the answer is possible, so an unknown id is only a spec-gap warning).
The request is still answered, with its result or with -32800 (CANCEL-05). Cancelling a whole
prompt turn is ``session/cancel``, a different notification (``prompt_turn``).

The live sides ask this page what to do: ``reply_to_cancel_request`` (answer -32800 now, leave
the answer to the handler, or ignore), and ``turn_stop`` (which running turn a client's message
stops on the agent side: session/cancel, session/close, session/delete, $/cancel_request).
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Iterable, Optional

import attrs

from ..errors import ErrorCode
from ..methods import CANCEL_REQUEST
from .book import Message, check, transition
from .facts import ConnectionFacts
from .lifecycle import TurnPhase
from .findings import Finding, Party, finding
from .session_setup import ending_in_flight

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
    if req is not None:
        req.cancel_requested = True


@check("response", A, "session/prompt")
def _cancelled_prompt(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None or s.turn_phase is not TurnPhase.RUNNING or s.turn != m.id:
        return  # a turn cancelled by session/cancel has its own rules (PROMPT-23, PROMPT-24)
    if (
        m.request.cancel_requested
        and m.is_error
        and m.error.get("code") != ErrorCode.REQUEST_CANCELLED
    ):
        # spec CANCEL-05: a cancelled request is answered with a result or -32800.
        yield finding(
            "CANCEL-05", A, "cancelled prompt answered with an error other than -32800", m.index
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


@attrs.frozen
class TurnStop:
    """A running prompt turn an agent stops (``turn_stop``)."""

    session_id: str
    #: The session ends (close, delete): the client owes no answer to the turn's permission
    #: requests any more, so the agent stops waiting for them (SETUP-16).
    ending: bool
    clause: str


def turn_stop(state: ConnectionFacts, message: Dict[str, Any]) -> Optional[TurnStop]:
    """The turn a message from the client stops on the agent side, once the rules recorded it.

    Read from the turn table's phase (``lifecycle.TURN``): a turn stops when the message moved it
    to "cancel requested" (session/cancel, session/close), and, by acpref's readings, when the
    message ends its session or cancels its prompt request.
    """
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if "id" not in message and method == CANCEL_REQUEST:
        target = params.get("requestId")
        req = state.outstanding[C].get(target) if isinstance(target, (str, int)) else None
        s = state.session(req.params.get("sessionId")) if req is not None else None
        if s is not None and s.turn_phase.running and s.turn == target:
            # spec-gap cancel-request-prompt: $/cancel_request on a prompt acts as session/cancel.
            return TurnStop(s.id, False, "spec-gap:cancel-request-prompt")
        return None
    s = state.session(params.get("sessionId"))
    if s is None or not s.turn_phase.running:
        return None
    if "id" not in message:
        if method == "session/cancel" and s.turn_phase is TurnPhase.CANCEL_REQUESTED:
            # spec PROMPT-22: the agent stops the turn as soon as possible.
            return TurnStop(s.id, False, "PROMPT-22")
        return None
    if method == "session/close" and s.turn_phase is TurnPhase.CANCEL_REQUESTED:
        # spec SETUP-16: close cancels the running turn as if session/cancel arrived, and the
        # session ends.
        return TurnStop(s.id, True, "SETUP-16")
    if method == "session/delete":
        # spec-gap delete-active: deleting a session with a running turn cancels the turn first.
        return TurnStop(s.id, True, "spec-gap:delete-active")
    if method == "session/prompt" and s.turn == message["id"] and ending_in_flight(state, s.id):
        # spec-gap close-in-flight: a prompt read while its session is being closed is
        # cancelled at once, as the running one was (SETUP-16).
        return TurnStop(s.id, True, "spec-gap:close-in-flight")
    return None
