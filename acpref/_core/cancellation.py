"""cancellation.mdx: ``$/cancel_request``, either way.

Either party may ask the other to stop working on one of its own requests still in flight
(CANCEL-01; a race with the answer is possible, so an unknown id is only a spec-gap warning).
The request is still answered, with its result or with -32800 (CANCEL-05, by a receiver that
supports it). Cancelling a whole prompt turn is ``session/cancel``, a different notification
(``prompt_turn``).

The live sides ask this page what to do: ``reply_to_cancel_request`` (answer -32800 now, leave
the answer to the handler, or ignore), ``turn_stop`` (which running turn a client's message
stops on the agent side: session/cancel, session/close, session/delete, $/cancel_request) and
``input_ended`` (the turns the end of the agent's input stops: all that run). Both are read from
the turn table (``lifecycle.TURN``): a turn stops when the event moved it to "cancel requested"
or "stop requested".
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Iterable, List, Optional, Tuple

import attrs

from ..errors import ErrorCode
from ..methods import CANCEL_REQUEST
from .book import Message, check, transition
from .facts import ConnectionFacts, SessionState
from .lifecycle import TurnEvent, TurnPhase
from .findings import Finding, Party, finding
from .prompt_turn import stop_turn
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
    if req is None:
        return
    req.cancel_requested = True
    s = _turn_of(state, req, target) if m.sender is C else None
    if s is not None:
        # spec-gap cancel-request-prompt: $/cancel_request of a running prompt stops its turn.
        stop_turn(state, s, TurnEvent.CANCEL_REQUEST_SENT)


def _turn_of_prompt(state: ConnectionFacts, request_id: Any) -> Optional[SessionState]:
    """The session whose running turn the client's request ``request_id`` is the prompt of."""
    req = state.outstanding[C].get(request_id) if isinstance(request_id, (str, int)) else None
    return _turn_of(state, req, request_id) if req is not None else None


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


@attrs.frozen
class TurnStop:
    """A running prompt turn an agent stops (``turn_stop``, ``input_ended``)."""

    session_id: str
    #: The session ends (close, delete) or the connection does (the end of input): the client
    #: owes no answer to the turn's permission requests any more, so the agent stops waiting for
    #: them (SETUP-16).
    ending: bool
    clause: str


#: The turn table's events that stop a running turn on the agent side: the clause the agent
#: stops it by, and whether the turn's session (or the connection) ends with it.
_STOPS: Dict[TurnEvent, Tuple[str, bool]] = {
    # On session/cancel the agent stops the turn as soon as possible.
    TurnEvent.CANCEL_SENT: ("PROMPT-22", False),
    # acpref's reading: $/cancel_request on a prompt acts as session/cancel.
    TurnEvent.CANCEL_REQUEST_SENT: ("spec-gap:cancel-request-prompt", False),
    # Close cancels the running turn as if session/cancel arrived, and the session ends.
    TurnEvent.CLOSE_SENT: ("SETUP-16", True),
    # acpref's reading: deleting a session with a running turn cancels the turn first.
    TurnEvent.DELETE_SENT: ("spec-gap:delete-active", True),
    # acpref's reading: the client can send nothing more, not even session/cancel.
    TurnEvent.INPUT_ENDED: ("spec-gap:end-of-input", True),
}
#: The client's messages that are events of a session's turn, by (method, is a request).
_EVENTS: Dict[Tuple[Any, bool], TurnEvent] = {
    ("session/cancel", False): TurnEvent.CANCEL_SENT,
    ("session/close", True): TurnEvent.CLOSE_SENT,
    ("session/delete", True): TurnEvent.DELETE_SENT,
}


def _stop(s: Optional[SessionState], event: TurnEvent) -> Optional[TurnStop]:
    """The stop of ``s``'s turn once ``event`` was recorded: when it left the turn asked to stop."""
    if s is None or not s.turn_phase.stopped:
        return None
    # spec PROMPT-22, SETUP-16, spec-gap cancel-request-prompt, delete-active, end-of-input:
    # the agent stops a turn asked to stop, by the clause of the event (``_STOPS``).
    clause, ending = _STOPS[event]
    return TurnStop(s.id, ending, clause)


def turn_stop(state: ConnectionFacts, message: Dict[str, Any]) -> Optional[TurnStop]:
    """The turn a message from the client stops on the agent side, once the rules recorded it.

    Read from the turn table's phase (``lifecycle.TURN``): a turn stops when the message moved it
    to "cancel requested" (session/cancel, session/close) or "stop requested" (session/delete, a
    $/cancel_request of its prompt).
    """
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    is_request = "id" in message
    if method == CANCEL_REQUEST and not is_request:
        return _stop(_turn_of_prompt(state, params.get("requestId")), TurnEvent.CANCEL_REQUEST_SENT)
    event = _EVENTS.get((method, is_request))
    if event is not None:
        return _stop(state.session(params.get("sessionId")), event)
    s = state.session(params.get("sessionId"))
    if (
        method == "session/prompt"
        and is_request
        and s is not None
        and s.turn_phase.running
        and s.turn == message["id"]
        and ending_in_flight(state, s.id)
    ):
        # spec-gap close-in-flight: a prompt read while its session is being closed is
        # cancelled at once, as the running one was (SETUP-16).
        return TurnStop(s.id, True, "spec-gap:close-in-flight")
    return None


def input_ended(state: ConnectionFacts) -> List[TurnStop]:
    """The end of the agent's input, recorded: the turns the agent stops, every one that runs.

    spec-gap end-of-input: the client can send nothing more, not even session/cancel, and will
    answer none of the turns' requests; each turn is stopped now and answers stopReason
    "cancelled" (``prompt_turn.prompt_answer``), which a client that only half-closed still reads.
    """
    stops: List[TurnStop] = []
    for s in state.sessions.values():
        if s.turn_phase.running:
            stop_turn(state, s, TurnEvent.INPUT_ENDED)
            stop = _stop(s, TurnEvent.INPUT_ENDED)
            if stop is not None:
                stops.append(stop)
    return stops
