"""What the core decided a message does to the running turns: effects, for the shells to carry out.

Spec: prompt-turn.mdx, session-setup.mdx, cancellation.mdx; clauses PROMPT-22, SETUP-16;
spec-gap cancel-request-prompt, delete-active, end-of-input, close-in-flight
(spec_notes/decisions.md).

The rules decide, as they record a message, that a prompt turn starts or must stop, which
requests of a session an answer waits for, that requests are refused because the reopen they
waited for failed, and what the client advertised. A live agent carries that out (it sets the
turn's ``cancelled`` flag, ends its calls to the client, holds a handler back, answers -32002);
before this module it asked the core again what it had just decided (``turn_stop``,
``answered_after``, the core's session and capabilities, read from the shell).
``ProtocolState.step`` returns these values beside the findings, in wire order, for a message
read and for one sent (the answer to a failed reopen), so that the shell executes them and
keeps no copy of the core's tables.

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
Waits          a client's request of a session (``session_setup.ORDERED``)  spec-gap:reopen-in-flight,
               is recorded, not refused: the requests in flight it is        close-in-flight
               answered after (``on``: ``session_setup.answered_after``),
               and the closes and deletes in flight answered after it
               (``before``)
Refuses        the answer to the last session/load or session/resume a      spec-gap:reopen-in-flight,
               request waited for leaves its session unknown (the reopen    unknown-session
               failed and nothing else keeps it): that request is -32002
ClientCaps     the client's initialize is recorded, not refused: what it     INIT-02, INIT-10
               advertised, for the agent to ask before sending (ELICIT-07)

AsksCancelled  the client's session/cancel is recorded while permission    PROMPT-21
               requests of the session (or of a child announced below it,  (SUBAGENT-44,
               spec-gap child-cancel-reach) are open                        child-cancel-reach)
AsksCancelled  the client's session/close likewise                         SETUP-16
AsksCancelled  a permission request of a session whose work the client     spec-gap:
               cancelled arrives before its next prompt (a child: before   permission-after-cancel
               it reports ``running``)
WorkCancelled  the client's session/cancel is recorded: the sessions       PROMPT-20
               whose work it cancels, the session and every child          (SUBAGENT-45, SUBAGENT-49,
               announced below it (questions to the user dismissed,        child-cancel-reach)
               unfinished tool calls marked cancelled)
WorkCancelled  the client's session/close likewise                         SETUP-16
CancelLifted   the client's session/prompt: an earlier cancel no longer    spec-gap:
               reaches the session's work, nor its children's              permission-after-cancel
CancelLifted   a child reports ``running``: its new work                   spec-gap:child-cancel-reach
CancelLifted   the answer to session/close or session/delete: the work     spec-gap:
               is over (the session's and its children's)                  permission-after-cancel
ChildrenRe-    the client's session/load is recorded, not refused: every     SUBAGENT-30
played         child announced below the session, whose history the load     (SUBAGENT-35)
               replays (what the client shows of them is the replay's)
AgentCaps      the agent's successful initialize response (the client's    INIT-13
               ``supports`` reads it with ``capabilities.gate_open``)
SystemPrompt-  a successful session/new, load or resume response (the      SYSPROMPT-11
Kept           value to re-send), and a session/delete (None: forgotten)
=============  ==========================================================  =============================

The rows from AsksCancelled on are the client's to carry out (``client/connection.py``): the
agent shell has no use for them, as the client shell has none for the rows above them.
WorkCancelled and CancelLifted name the sessions entering and leaving
``ConnectionFacts.work_cancelled``, the one reading of which work the client cancelled: the
client shell keeps its flags by them and computes no tree of children of its own; nor for a
load (ChildrenReplayed).

Which of the client's messages cancel a session's work is one table, ``_CANCELS``: a row says
how the agent stops the running turn (TurnStops) and, where the client's side reads it so, how
the client cancels the session's work (WorkCancelled, AsksCancelled).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import attrs

from ..methods import CANCEL_REQUEST
from .book import Message
from .facts import ConnectionFacts, SessionState
from .findings import Party
from .session_setup import ENDING, ORDERED, REOPENING, answered_after

__all__ = [
    "ClientCaps",
    "Effect",
    "Refuses",
    "TurnStarts",
    "TurnStops",
    "Waits",
    "effects_of",
    "stops_at_end_of_input",
    # the client's
    "AgentCaps",
    "AsksCancelled",
    "CancelLifted",
    "ChildrenReplayed",
    "ClientEffect",
    "SystemPromptKept",
    "WorkCancelled",
    "client_effects_of",
]

A, C = Party.AGENT, Party.CLIENT


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


@attrs.frozen
class Waits:
    """The request ``request_id``, just read, is answered only after each request of ``on``, and
    each request of ``before`` (a close or delete of its session read earlier) only after it.

    One for every ordered request of a session (``session_setup.ORDERED``; ``on`` and ``before``
    may be empty: a later close may still wait for it). Both name requests in flight; one already
    answered, or refused as it was read, is waited for by nobody.
    """

    request_id: Any
    on: Tuple[Any, ...]
    before: Tuple[Any, ...] = ()
    clause: str = "spec-gap:reopen-in-flight"


@attrs.frozen
class Refuses:
    """The requests ``request_ids`` of ``session_id`` are answered -32002 "unknown session"
    without running: ``because``, the last load or resume they waited for, was answered and left
    the session unknown (it failed, and no session was there before it)."""

    session_id: str
    request_ids: Tuple[Any, ...]
    because: Any
    clause: str = "spec-gap:reopen-in-flight"


@attrs.frozen
class ClientCaps:
    """What the client advertised in ``initialize`` (``clientCapabilities``, as on the wire; a
    missing or malformed one is ``{}``). The dict is the core's record: read it, never change
    it."""

    caps: Dict[str, Any]
    clause: str = "INIT-02"


Effect = Union[TurnStarts, TurnStops, Waits, Refuses, ClientCaps, "ClientEffect"]

@attrs.frozen
class _Cancels:
    """A row of ``_CANCELS``: a client's message that cancels a session's work."""

    #: The clause the agent stops the running turn by (TurnStops).
    stops: str
    #: The session ends with it (TurnStops.ending).
    ending: bool
    #: The clause the client cancels the session's work by (WorkCancelled: dialogs dismissed,
    #: tool calls marked), and the one its pending permission requests are answered "cancelled"
    #: by (AsksCancelled); None: the client's side does not read the message as a cancel.
    work: Optional[str] = None
    asks: Optional[str] = None


#: The client's messages that cancel a session's work, by (method, is a request). (The turn's
#: phase was moved by the pages as they recorded the message: ``prompt_turn.stop_turn``.)
_CANCELS: Dict[Tuple[str, bool], _Cancels] = {
    # spec PROMPT-22: on session/cancel the agent stops the turn as soon as possible; spec
    # PROMPT-20: the client marks the turn's unfinished tool calls cancelled; spec PROMPT-21: it
    # answers every pending permission request of the session "cancelled".
    ("session/cancel", False): _Cancels("PROMPT-22", False, work="PROMPT-20", asks="PROMPT-21"),
    # spec-gap cancel-request-prompt: $/cancel_request on a prompt acts as session/cancel.
    (CANCEL_REQUEST, False): _Cancels("spec-gap:cancel-request-prompt", False),
    # spec SETUP-16: close cancels the running turn as if session/cancel arrived; the session ends.
    ("session/close", True): _Cancels("SETUP-16", True, work="SETUP-16", asks="SETUP-16"),
    # spec-gap delete-active: deleting a session with a running turn cancels the turn first.
    ("session/delete", True): _Cancels("spec-gap:delete-active", True),
}


def effects_of(state: ConnectionFacts, m: Message, refused: bool) -> List[Effect]:
    """The effects of ``m``, once recorded (``refused``: the receiver answers it with an error,
    so its handler never runs)."""
    if m.kind == "response" and m.sender is A:
        return _answer_effects(state, m)
    if m.sender is not C or m.kind not in ("request", "notification") or refused:
        return []
    is_request = m.kind == "request"
    if is_request and m.method == "initialize":
        # The client's capabilities (INIT-02's clientCapabilities), handed over: the agent asks
        # them before it sends a gated request (ELICIT-07, CONFIG-06).
        return [ClientCaps(state.client_caps)]
    if m.method == "session/prompt" and is_request:
        out = _prompt_effects(state, m)
    else:
        out = _stop_effects(state, m, is_request)
    ordered = is_request and m.method in ORDERED and isinstance(m.session_id, str)
    if ordered and isinstance(m.id, (str, int)):  # an id of another shape is not in flight
        out.extend(_order_effects(state, m))
    return out


def _stop_effects(state: ConnectionFacts, m: Message, is_request: bool) -> List[Effect]:
    row = _CANCELS.get((m.method or "", is_request))
    if row is None:
        return []
    if m.method == CANCEL_REQUEST:
        s = _session_of_prompt(state, m.params.get("requestId"))
    else:
        s = state.session(m.session_id)
    if s is None or not s.turn_phase.stopped:
        return []  # no turn runs: nothing to stop (a turn asked to stop before is asked again)
    return [TurnStops(s.id, s.turn, row.ending, row.stops)]


def _prompt_effects(state: ConnectionFacts, m: Message) -> List[Effect]:
    s = state.session(m.session_id)
    if s is None or not s.turn_phase.running or s.turn != m.id:
        return []
    out: List[Effect] = [TurnStarts(s.id, m.id)]
    if any(
        req.method in ENDING and req.params.get("sessionId") == s.id
        for req in state.outstanding[C].values()
    ):
        # spec-gap close-in-flight: a prompt read while its session is being closed is
        # cancelled at once, as the running one was (SETUP-16).
        out.append(TurnStops(s.id, m.id, True, "spec-gap:close-in-flight"))
    return out


def _order_effects(state: ConnectionFacts, m: Message) -> List[Effect]:
    """The order of ``m`` among the requests of its session in flight (``answered_after``)."""
    on: List[Any] = []
    before: List[Any] = []
    for request_id, req in state.outstanding[C].items():
        if request_id == m.id or req.method not in ORDERED:
            continue
        if req.params.get("sessionId") != m.session_id:
            continue
        # spec-gap reopen-in-flight: after the loads and resumes read before it (a load or resume
        # after all but closes and deletes); spec-gap close-in-flight: a close or delete after
        # every other request of its session, read before or after it.
        if answered_after(m.method or "", req.method, earlier=True):
            on.append(request_id)
        if answered_after(req.method, m.method or "", earlier=False):
            before.append(request_id)
    ending = m.method in ENDING or before
    clause = "spec-gap:close-in-flight" if ending else "spec-gap:reopen-in-flight"
    return [Waits(m.id, tuple(on), tuple(before), clause)]


def _answer_effects(state: ConnectionFacts, m: Message) -> List[Effect]:
    """spec-gap reopen-in-flight, unknown-session: the answer to a load or resume was the last
    one some requests of its session waited for; if the session is unknown now (the reopen failed
    and nothing else keeps it), they are refused as a request for an unknown session would be."""
    req = m.request
    if req is None or m.method not in REOPENING:
        return []
    sid = req.params.get("sessionId")
    s = state.session(sid)
    if not isinstance(sid, str) or (s is not None and not s.created_by_reopen):
        return []  # the session is known: whoever waited runs
    in_flight = [
        (request_id, other)
        for request_id, other in state.outstanding[C].items()
        if other.method in ORDERED and other.params.get("sessionId") == sid
    ]
    refused = tuple(
        request_id
        for request_id, other in in_flight
        if other.method not in ENDING
        and other.method not in REOPENING
        and other.seq > req.seq  # it waited for this answer
        and not any(o.method in REOPENING and o.seq < other.seq for _, o in in_flight)
    )
    return [Refuses(sid, refused, m.id)] if refused else []


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


# -- The client's effects: permission asks answered "cancelled", values handed over once --------


@attrs.frozen
class AsksCancelled:
    """Answer the agent's permission requests ``request_ids`` with outcome ``cancelled``: a
    dialog still open is dismissed, a request not asked yet is answered without asking."""

    request_ids: Tuple[Any, ...]
    clause: str


@attrs.frozen
class AgentCaps:
    """The agent's capabilities, as wire JSON, as the rules read them from its initialize
    response (``capabilities.gate_open`` reads a dotted path in them)."""

    capabilities: Dict[str, Any]
    clause: str = "INIT-13"


@attrs.frozen
class SystemPromptKept:
    """The systemPrompt (wire JSON) that load and resume of ``session_id`` re-send; None: none
    (the session was set up without one, or deleted)."""

    session_id: str
    system_prompt: Any
    clause: str = "SYSPROMPT-11"


@attrs.frozen
class WorkCancelled:
    """The client cancelled the current work of ``session_ids``: the session its session/cancel
    or session/close names, then every child announced below it (spec-gap child-cancel-reach).
    Questions still asked of the user for them are dismissed (SUBAGENT-45), their unfinished tool
    calls are marked cancelled (PROMPT-20, SUBAGENT-49). Each is in ``work_cancelled`` now."""

    session_ids: Tuple[str, ...]
    clause: str


@attrs.frozen
class CancelLifted:
    """An earlier cancel no longer reaches the work of ``session_ids``: they left
    ``work_cancelled`` (new work: a prompt, a child reporting running; or none: the session was
    closed or deleted)."""

    session_ids: Tuple[str, ...]
    clause: str


@attrs.frozen
class ChildrenReplayed:
    """The client is loading ``session_id``: the agent replays its history, that of the children
    announced below it included, if at all (SUBAGENT-30); what the client shows of the children
    ``children`` (at any depth) is the replay's to rebuild (SUBAGENT-35)."""

    session_id: str
    children: Tuple[str, ...]
    clause: str = "SUBAGENT-30"


ClientEffect = Union[
    AsksCancelled, WorkCancelled, CancelLifted, ChildrenReplayed, AgentCaps, SystemPromptKept
]


def client_effects_of(state: ConnectionFacts, m: Message, refused: bool) -> List[ClientEffect]:
    """The client's effects of ``m``, once recorded (see the table): on the sessions whose work
    the client cancelled (``ConnectionFacts.work_cancelled``), and values handed over once."""
    if refused or m.method is None:
        return []
    if m.sender is C:
        return _client_sent(state, m)
    if m.kind == "request" and m.method == "session/request_permission":
        if isinstance(m.session_id, str) and m.session_id in state.work_cancelled:
            # spec-gap permission-after-cancel: the user said stop; the agent may not have seen
            # the cancel yet. Answered "cancelled" until the session's next prompt.
            return [AsksCancelled((m.id,), "spec-gap:permission-after-cancel")]
        return []
    if m.kind == "notification" and m.method == "session/update":
        update = m.update if m.update is not None else {}
        work = update.get("state") if update.get("sessionUpdate") == "subagent_update" else None
        child = update.get("sessionId")
        if isinstance(work, dict) and work.get("state") == "running" and isinstance(child, str):
            # spec-gap child-cancel-reach: a child reporting running has new work, which an
            # earlier cancel does not reach.
            return _lift(state, [child], "spec-gap:child-cancel-reach")
        return []
    if m.kind == "response" and not m.is_error:
        return _handed_over(state, m)
    return []


def _client_sent(state: ConnectionFacts, m: Message) -> List[ClientEffect]:
    if m.kind == "request" and m.method == "session/prompt" and isinstance(m.session_id, str):
        # spec-gap permission-after-cancel: a new turn; an earlier cancel no longer reaches it,
        # nor its children's work in it (spec-gap child-cancel-reach).
        below = state.descendants(m.session_id)
        return _lift(state, [m.session_id, *below], "spec-gap:permission-after-cancel")
    if m.kind == "request" and m.method == "session/load" and isinstance(m.session_id, str):
        below = state.descendants(m.session_id)
        return [ChildrenReplayed(m.session_id, tuple(below))] if below else []
    row = _CANCELS.get((m.method or "", m.kind == "request"))
    sid = m.params.get("sessionId")
    if m.kind == "response" or row is None or row.work is None or not isinstance(sid, str):
        return []
    # spec-gap child-cancel-reach: a cancel of any session, and a close, reaches the work of
    # every child announced below it (SUBAGENT-44).
    reached = (sid, *state.descendants(sid))
    state.work_cancelled.update(reached)
    out: List[ClientEffect] = [WorkCancelled(reached, row.work)]
    asks = tuple(
        request_id
        for request_id, req in state.outstanding[Party.AGENT].items()
        if req.method == "session/request_permission" and req.params.get("sessionId") in reached
    )
    if asks and row.asks is not None:
        out.append(AsksCancelled(asks, row.asks))
    return out


def _lift(state: ConnectionFacts, sessions: List[str], clause: str) -> List[ClientEffect]:
    """The sessions of ``sessions`` whose work was cancelled are no longer: ``CancelLifted``."""
    lifted = tuple(sid for sid in sessions if sid in state.work_cancelled)
    state.work_cancelled.difference_update(lifted)
    return [CancelLifted(lifted, clause)] if lifted else []


def _handed_over(state: ConnectionFacts, m: Message) -> List[ClientEffect]:
    """Values the client reads from a successful answer of the agent's, as the rules read them."""
    assert m.request is not None
    if m.method == "initialize":
        return [AgentCaps(state.agent_caps)]
    sid = m.request.params.get("sessionId")
    if m.method == "session/new":
        sid = m.result.get("sessionId") if isinstance(m.result, dict) else None
    if not isinstance(sid, str):
        return []
    if m.method in ("session/new", "session/load", "session/resume"):
        return [SystemPromptKept(sid, state.system_prompts.get(sid))]
    out: List[ClientEffect] = []
    if m.method in ("session/close", "session/delete"):
        # The session's work is over: no cancel of it is left to reach a later ask (a reopened
        # session starts clean), and what a connection keeps of its ended sessions stays bounded.
        out += _lift(state, [sid, *state.descendants(sid)], "spec-gap:permission-after-cancel")
    if m.method == "session/delete":
        out.append(SystemPromptKept(sid, None))
    return out
