"""What the core decided a message does to the running turns: effects, for the shells to carry out.

Spec: prompt-turn.mdx, session-setup.mdx, cancellation.mdx; clauses PROMPT-22, SETUP-16;
spec-gap cancel-request-prompt, delete-active, end-of-input, close-in-flight
(spec_notes/decisions.md).

The rules decide, as they record a message, that a prompt turn starts or must stop. A live agent
carries that out (it sets the turn's ``cancelled`` flag, ends its calls to the client); before
this module it asked the core again what it had just decided (``cancellation.turn_stop``).
``ProtocolState.step`` returns these values beside the findings, in wire order, so that the
shell executes them and keeps no copy of the core's turn table.

The table, one row per effect (the clause is the effect's ``clause`` field):

=============  ==========================================================  =============================
effect         when the core emits it                                      clause
=============  ==========================================================  =============================
TurnStarts     a client's session/prompt is recorded, not refused, and      spec-gap:concurrent-prompt
               its session's turn now runs with that request id            (one turn a session)
TurnStops      session/cancel reaches a running turn                       PROMPT-22
TurnStops      $/cancel_request names the running turn's prompt            spec-gap:cancel-request-prompt
TurnStops      session/close reaches a running turn (``ending``)           SETUP-16
TurnStops      session/delete reaches a running turn (``ending``)          spec-gap:delete-active
TurnStops      a prompt is read while a close/delete of its session        spec-gap:close-in-flight
               is in flight (``ending``: it is cancelled as it starts)
TurnStops      the end of the agent's input, every running turn            spec-gap:end-of-input
               (``ProtocolState.end_of_input``, ``ending``)
=============  ==========================================================  =============================

Still asked the old way (to move here next): which requests of a session an answer waits for
(``session_setup.answered_after``), requests refused because the reopen they waited on failed,
and, on the client side, permission asks answered ``cancelled`` (PROMPT-21).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import attrs

from ..methods import CANCEL_REQUEST
from .book import Message
from .facts import ConnectionFacts, SessionState
from .findings import Party
from .lifecycle import TurnEvent
from .session_setup import ending_in_flight

__all__ = ["Effect", "TurnStarts", "TurnStops", "effects_of", "stops_at_end_of_input"]

C = Party.CLIENT


@attrs.frozen
class TurnStarts:
    """A prompt turn starts: ``request_id`` is the running session/prompt of ``session_id``."""

    session_id: str
    request_id: Any
    clause: str = "spec-gap:concurrent-prompt"


@attrs.frozen
class TurnStops:
    """The running turn of ``session_id`` (its prompt is ``request_id``) must stop.

    ``ending``: the session ends (close, delete) or the connection does (end of input): the
    client owes no answer to the turn's permission requests any more, so the agent stops
    waiting for them (SETUP-16).
    """

    session_id: str
    request_id: Any
    ending: bool
    clause: str

    @property
    def session_ends(self) -> bool:
        """The turn's session is being closed or deleted (not the connection ending): a turn
        not started yet is answered "cancelled" without running (spec-gap close-in-flight)."""
        return self.ending and self.clause != "spec-gap:end-of-input"


Effect = Union[TurnStarts, TurnStops]

#: The client's messages that stop a running turn, by (method, is a request): the turn event,
#: the clause the agent stops it by, and whether the session ends with it.
_STOPS: Dict[Tuple[str, bool], Tuple[TurnEvent, str, bool]] = {
    # spec PROMPT-22: on session/cancel the agent stops the turn as soon as possible.
    ("session/cancel", False): (TurnEvent.CANCEL_SENT, "PROMPT-22", False),
    # spec-gap cancel-request-prompt: $/cancel_request on a prompt acts as session/cancel.
    (CANCEL_REQUEST, False): (TurnEvent.CANCEL_REQUEST_SENT, "spec-gap:cancel-request-prompt", False),
    # spec SETUP-16: close cancels the running turn as if session/cancel arrived; the session ends.
    ("session/close", True): (TurnEvent.CLOSE_SENT, "SETUP-16", True),
    # spec-gap delete-active: deleting a session with a running turn cancels the turn first.
    ("session/delete", True): (TurnEvent.DELETE_SENT, "spec-gap:delete-active", True),
}


def effects_of(state: ConnectionFacts, m: Message, refused: bool) -> List[Effect]:
    """The effects of ``m``, once recorded (``refused``: the receiver answers it with an error,
    so its handler never runs)."""
    if m.sender is not C or m.kind not in ("request", "notification") or refused:
        return []
    is_request = m.kind == "request"
    if m.method == "session/prompt" and is_request:
        return _prompt_effects(state, m)
    row = _STOPS.get((m.method or "", is_request))
    if row is None:
        return []
    _event, clause, ending = row  # the event moved the turn (cancellation, prompt_turn)
    if m.method == CANCEL_REQUEST:
        s = _session_of_prompt(state, m.params.get("requestId"))
    else:
        s = state.session(m.session_id)
    if s is None or not s.turn_phase.stopped:
        return []  # no turn runs: nothing to stop (a turn asked to stop before is asked again)
    return [TurnStops(s.id, s.turn, ending, clause)]


def _prompt_effects(state: ConnectionFacts, m: Message) -> List[Effect]:
    s = state.session(m.session_id)
    if s is None or not s.turn_phase.running or s.turn != m.id:
        return []
    out: List[Effect] = [TurnStarts(s.id, m.id)]
    if ending_in_flight(state, s.id):
        # spec-gap close-in-flight: a prompt read while its session is being closed is
        # cancelled at once, as the running one was (SETUP-16).
        out.append(TurnStops(s.id, m.id, True, "spec-gap:close-in-flight"))
    return out


def _session_of_prompt(state: ConnectionFacts, request_id: Any) -> Optional[SessionState]:
    """The session whose running turn the client's request ``request_id`` is the prompt of."""
    if not isinstance(request_id, (str, int)):
        return None
    req = state.outstanding[C].get(request_id)
    s = state.session(req.params.get("sessionId")) if req is not None else None
    return s if s is not None and s.turn_phase.running and s.turn == request_id else None


def stops_at_end_of_input(stopped: List[SessionState]) -> List[TurnStops]:
    """spec-gap end-of-input: the turns the end of the agent's input stopped, every one."""
    return [TurnStops(s.id, s.turn, True, "spec-gap:end-of-input") for s in stopped]
