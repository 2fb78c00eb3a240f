"""prompt-turn.mdx: one exchange, from the user's prompt to the agent's stop reason.

The client sends ``session/prompt`` to a session set up on this connection (PROMPT-01), with
content blocks the agent accepts (PROMPT-02, PROMPT-03, CONTENT-04), one turn at a time
(spec-gap concurrent-prompt). While the turn runs the agent streams ``session/update``s: message
chunks (grouped by ``messageId``, PROMPT-07), tool calls (``tool_calls``), plans. The turn ends
when the agent answers the prompt with a ``stopReason``; nothing of the turn comes after that
(PROMPT-26). The client may cancel with ``session/cancel``: every permission request still open
is then answered "cancelled" (PROMPT-21), and the turn ends with ``stopReason: "cancelled"``, not
an error (PROMPT-23, PROMPT-24). A turn asked to stop in another way (``cancellation``) owes no
"cancelled" answer.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from ..errors import ErrorCode
from .book import Message, check, transition, update_check, update_of, update_transition
from .capabilities import prompt_block_gate
from .bounded import NO_IDS
from .facts import ConnectionFacts, SessionState
from .lifecycle import TURN, SessionPhase, TurnEvent, TurnPhase
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.RESOURCE_NOT_FOUND

CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
#: Updates that belong to a prompt turn (or to a load replay); the others may come at any time.
TURN_CONTENT = CHUNKS | {
    "tool_call",
    "tool_call_update",
    "plan",
    # spec-gap plan-operations-turn: provisional plan operations are a turn's content too.
    "plan_update",
    "plan_removed",
}


# -- The client prompts ---------------------------------------------------------------------------


@check("request", C, "session/prompt")
def _prompt(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = m.session
    unknown = s is None and not state.announced(m.session_id)
    if unknown and state.reopen_failure_unread(m.session_id):
        yield reopen_failed_crossing(m)
    elif unknown:
        # spec PROMPT-01: a prompt goes to a session set up on this connection (a prompt to an
        # announced child is SUBAGENT-18's, subagents.py: the client knows that session).
        yield finding(
            "PROMPT-01",
            C,
            f"session/prompt for unknown session {m.session_id!r}",
            m.index,
            NOT_FOUND,
        )
    elif s is not None and TURN.refusal(s.turn_phase, TurnEvent.PROMPT_SENT) is not None:
        # spec-gap concurrent-prompt: one turn at a time per session.
        yield finding(
            "spec-gap:concurrent-prompt",
            C,
            f"a turn is already running in session {s.id!r}",
            m.index,
            -32600,
        )
    prompt = m.params.get("prompt")
    if not isinstance(prompt, list):
        # spec PROMPT-02: the prompt is an array of content blocks.
        yield finding("PROMPT-02", C, "session/prompt has no prompt array", m.index, INVALID)
    for block in prompt if isinstance(prompt, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        gate = prompt_block_gate(kind)
        if gate is not None and not state.gate_open(gate, A):
            # spec PROMPT-03: "Clients MUST restrict types of content according to the Prompt
            # Capabilities" (prompt-turn.mdx, the sentence's own page).
            # spec CONTENT-04: the same rule as the content page states it ("Requires the
            # `image` prompt capability"), with no keyword: filed under PROMPT-03's sentence.
            yield finding(
                "PROMPT-03",
                C,
                f"prompt has {'an' if str(kind)[:1] in 'aeiou' else 'a'} {kind} block but the agent "
                f"did not advertise {gate}",
                m.index,
                INVALID,
            )


def reopen_failed_crossing(m: Message) -> Finding:
    """A request of a session whose failed load or resume the client may not have read."""
    # spec-gap reopen-failed-crossing: PROMPT-01 and SETUP-15 bind a request of a session set
    # up, or active; one written while its load or resume was in flight (reopen-in-flight),
    # before the client read that it failed, crossed the failure on the wire.
    said = f"{m.method} for session {m.session_id!r}, whose session/load or session/resume "
    said += "failed in an answer the client may not have read yet (the two crossed on the wire)"
    return finding("spec-gap:reopen-failed-crossing", C, said, m.index, NOT_FOUND)


@transition("request", C, "session/prompt")
def _turn_starts(state: ConnectionFacts, m: Message) -> None:
    s = m.session
    row = TURN.row(s.turn_phase, TurnEvent.PROMPT_SENT) if s is not None else None
    if s is None or row is None:
        return
    s.turn_phase = row.target
    s.turn = m.id
    s.cancel_clause = None
    s.cancelled_permissions = NO_IDS
    s.crossed_permissions = NO_IDS


# -- The agent streams the turn -------------------------------------------------------------------


@update_check(*TURN_CONTENT)
def _turn_content(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = m.session
    if s is None:
        return
    kind = update_of(m).get("sessionUpdate")
    if s.phase is SessionPhase.RESUMING and not s.turn_phase.running:
        # Content while a turn of the session runs is that turn's (spec-gap reopen-in-flight):
        # never refused. Between turns it is a replay, or a late update of the last turn.
        yield from _while_resuming(state, s, m, kind)
    elif s.phase is not SessionPhase.LOADING:
        clause = TURN.refusal(s.turn_phase, TurnEvent.CONTENT)
        if clause is not None:
            # spec PROMPT-26, SETUP-07, spec-gap content-after-turn, content-outside-turn: the
            # turn table names what a turn's content breaks between turns: nothing of a
            # cancelled turn after its session/prompt response, of a replay after the
            # session/load response; after an ordinary answer or before any turn it is
            # acpref's reading.
            yield finding(clause, A, f"{kind} sent {_OUTSIDE[s.turn_phase]}", m.index)


def _while_resuming(
    state: ConnectionFacts, s: SessionState, m: Message, kind: Any
) -> Iterable[Finding]:
    """A turn's update between turns while a session/resume of ``s`` is in flight.

    Each direction of stdio is ordered, but where the two are observed they interleave in the
    observer's order: an update recorded after the resume may have been written before the
    agent read it, a late update of the turn that had ended (``TURN.refusal``). Two witnesses
    show the agent wrote it as part of its handling of the resume: it had provably read the
    resume (``ConnectionFacts.reopen_read``), or the update is a user message chunk, which is
    no turn's own output (the user's message of a turn is the prompt the client sent; the
    turn's content is the agent's): it is the history replayed.
    """
    if state.reopen_read(s.id) or kind == "user_message_chunk":
        # spec SETUP-12: no history replay before the session/resume response.
        why = (
            "a user message of the history"
            if kind == "user_message_chunk"
            else "the agent had read the resume: it answered a request sent at or after it, "
            "or replayed a user message since"
        )
        said = f"{kind} sent before the session/resume answer ({why})"
        yield finding("SETUP-12", A, said, m.index)
        return
    clause = TURN.refusal(s.turn_phase, TurnEvent.CONTENT)
    if clause is not None and not clause.startswith("spec-gap:"):
        # spec PROMPT-26, SETUP-07: after a cancelled turn's answer, or a load's, the agent's own
        # order shows it: the update came after that answer, whatever it had read.
        yield finding(clause, A, f"{kind} sent {_OUTSIDE[s.turn_phase]}", m.index)
        return
    # spec-gap resume-crossing: a replay before the resume's answer (SETUP-12), or a late update
    # of the ended turn written before the agent read the resume: the wire does not tell which.
    yield finding(
        "spec-gap:resume-crossing",
        A,
        f"{kind} sent while session/resume was in flight, {_OUTSIDE[s.turn_phase]}: a replay "
        "before the answer, or a late update of the turn that crossed the resume",
        m.index,
    )


@update_transition("user_message_chunk")
def _user_message_replayed(state: ConnectionFacts, m: Message) -> None:
    s = m.session
    reopening = s is not None and s.phase in (SessionPhase.LOADING, SessionPhase.RESUMING)
    if s is None or not reopening or s.turn_phase.running:
        return
    # A user message between turns is the history replayed: the agent had read the load or
    # resume in flight (``ConnectionFacts.reopen_read``), and all it writes next comes after.
    seq = state.reopen_seq(s.id)
    if seq is not None:
        s.replay_read = max(s.replay_read, seq)


#: What a stray update of a turn is sent after, by the phase it finds (``TURN.refusal``).
_OUTSIDE = {
    TurnPhase.ENDED: "after the prompt turn ended",
    TurnPhase.CANCEL_ENDED: "after the cancelled prompt turn ended",
    TurnPhase.REPLAYED: "after the session/load response",
    TurnPhase.NO_TURN: "outside any prompt turn",
}


@update_transition(*CHUNKS)
def _chunk(state: ConnectionFacts, m: Message) -> None:
    s = m.session
    message_id = update_of(m).get("messageId")
    if s is not None and isinstance(message_id, str) and message_id != s.message_id:
        s.finish_message(state.max_remembered)
        s.message_id = message_id


# -- The client cancels ---------------------------------------------------------------------------


@transition("notification", C, "session/cancel")
def _cancel(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    if s is not None:
        stop_turn(state, s, TurnEvent.CANCEL_SENT)


def stop_turn(state: ConnectionFacts, s: SessionState, event: TurnEvent) -> None:
    """An event that may stop the session's turn reaches it (``lifecycle.TURN``): session/cancel,
    session/close, session/delete, a $/cancel_request of its prompt, the end of input."""
    row = TURN.row(s.turn_phase, event)
    if row is None:
        return
    if row.target is TurnPhase.CANCEL_REQUESTED and s.turn_phase is not row.target:
        # The row's clause makes "cancelled" due: PROMPT-23, or SETUP-16 for a close.
        s.cancel_clause = row.clause
        s.cancel_seq = state.sent[Party.CLIENT]
        # spec PROMPT-21: every permission request pending now is answered "cancelled".
        s.cancelled_permissions = set(s.permissions)
        # spec-gap permission-crossing: those the client had not provably read may have crossed
        # its cancel on the wire: they were not pending for it.
        s.crossed_permissions = state.unread_requests(C, s.cancelled_permissions) or NO_IDS
    s.turn_phase = row.target


@check("response", C, "session/request_permission")
def _permission_after_cancel(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None or m.id not in s.cancelled_permissions:
        return
    kind = m.permission_outcome
    if kind == "cancelled":
        return
    got = "an error" if m.is_error else f"outcome {kind!r}"
    if m.id in s.crossed_permissions:
        # spec-gap permission-crossing: the client had answered no request of the agent sent at
        # or after this one when it cancelled: it may not have read it, so it was not pending.
        yield finding(
            "spec-gap:permission-crossing",
            C,
            f"permission request {m.id!r} answered {got} after a session/cancel it may have "
            "crossed on the wire (not provably read before the cancel)",
            m.index,
        )
        return
    # spec PROMPT-21: after session/cancel, pending permission requests are answered cancelled.
    yield finding(
        "PROMPT-21",
        C,
        f"permission request {m.id!r} answered {got} after session/cancel",
        m.index,
    )


# -- The agent ends the turn ----------------------------------------------------------------------


@check("response", A, "session/prompt")
def _turn_ends(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None or s.turn_phase is not TurnPhase.CANCEL_REQUESTED or s.turn != m.id:
        return
    stop = m.result.get("stopReason") if isinstance(m.result, dict) else None
    if not m.is_error and stop == "cancelled":
        return
    ended = "answered with an error" if m.is_error else f"ended with stopReason {stop!r}"
    read, proof = state.read[A]
    if read >= s.cancel_seq:
        # The agent had read the cancel before it answered the prompt: it had answered a request
        # that came after the cancel on the wire. Each direction of stdio is ordered: it read the
        # cancel before that request, and wrote that answer before the prompt's. Nothing else on
        # the wire shows the read: an agent that asked the client something may have written its
        # answer to the prompt before it read the cancel and the client's answer, however the
        # two directions interleave where they are observed (spec-gap cancel-race).
        at = f" (#{proof})" if proof is not None else ""
        how = f"the agent had read the cancel: it answered a request sent after it{at}"
        # spec PROMPT-24: the errors of an aborted operation become stopReason "cancelled";
        # spec PROMPT-23 (SETUP-16 for close): the cancelled turn answers "cancelled".
        clause = "PROMPT-24" if m.is_error else s.cancel_clause or "PROMPT-23"
        yield finding(clause, A, f"cancelled turn {ended}; {how}", m.index)
    else:
        # spec-gap cancel-race: the turn may have ended (or failed) before the agent read the
        # cancel; an error it raised then is none of the aborted operation's (PROMPT-24).
        yield finding(
            "spec-gap:cancel-race",
            A,
            f"turn {ended} after session/cancel (possibly a race)",
            m.index,
        )


def _answered_from(state: ConnectionFacts, s: SessionState, m: Message) -> TurnPhase:
    """The phase the turn's answer ``m`` steps from. A turn answered otherwise than "cancelled"
    by an agent that had not provably read the cancel (``_turn_ends``'s witness) may have ended
    before the cancel reached it: to the agent it was an ordinary turn."""
    stop = m.result.get("stopReason") if isinstance(m.result, dict) else None
    cancelled = not m.is_error and stop == "cancelled"
    if s.turn_phase is TurnPhase.CANCEL_REQUESTED and not cancelled:
        if state.read[A][0] < s.cancel_seq:
            # spec-gap cancel-race: PROMPT-26 binds the updates an agent sends "after receiving
            # the session/cancel notification"; one that answered before it read the cancel
            # sent none such, and a late update of its turn is content-after-turn's.
            return TurnPhase.RUNNING
    return s.turn_phase


def prompt_answer(cancelled: bool, stop_reason: Optional[str]) -> Optional[str]:
    """The ``stopReason`` a live agent answers its turn's session/prompt with.

    ``stop_reason`` is the one its handler chose, or None when the handler raised; ``cancelled``
    when the turn was stopped (``effects.TurnStops``). None: the handler's error is the
    answer.
    """
    if cancelled and stop_reason is None:
        # spec PROMPT-24: an abort exception after cancel becomes stopReason "cancelled": a
        # cancelled turn never yields a JSON-RPC error.
        return "cancelled"
    if cancelled and stop_reason is not None:
        # spec PROMPT-23: a cancelled turn is answered with stopReason "cancelled", whatever the
        # handler chose.
        return "cancelled"
    return stop_reason


@transition("response", A, "session/prompt")
def _turn_over(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is not None and s.turn_phase.running and s.turn == m.id:
        s.turn_phase = TURN.step(_answered_from(state, s, m), TurnEvent.ANSWERED)
        s.turn = None
        s.cancel_clause = None
        if s.phase is SessionPhase.LOADING:
            # The turn ran while a session/load was in flight: its message ids are not the
            # replay's (SETUP-06 judges the replay's own), which may start now.
            s.forget_message_ids()
        else:
            s.finish_message(state.max_remembered)
