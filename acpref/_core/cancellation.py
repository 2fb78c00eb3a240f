"""cancellation.mdx: ``$/cancel_request``, either way.

Either party may ask the other to stop working on one of its own requests still in flight
(CANCEL-01; a race with the answer is possible, so an unknown id is only a spec-gap warning).
The request is still answered, with its result or with -32800 (CANCEL-05). Cancelling a whole
prompt turn is ``session/cancel``, a different notification (``prompt_turn``).
"""

from __future__ import annotations

from typing import Iterable

from ..errors import ErrorCode
from ..methods import CANCEL_REQUEST
from .book import Message, check, transition
from .facts import ConnectionFacts
from .lifecycle import TurnPhase
from .findings import Finding, Party, finding

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
