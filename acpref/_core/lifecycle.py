"""The two lifecycles of ACP, as tables: a session's phases and a prompt turn's.

Spec: session-setup.mdx (a session is created, loaded, resumed, closed), session-delete.mdx,
prompt-turn.mdx (a turn runs from ``session/prompt`` to its answer, and may be cancelled).

Each table has one row per allowed transition: the phase it starts from, the event, the phase it
leads to, and the clause that says so. The rule modules change a phase only through ``step``, and
a check asks ``allows`` whether an event may happen in the current phase: an event with no row
from that phase is what a rule reports. Where the clause it breaks depends on the phase, the
table says which (``refusal``: a turn's content after the turn's answer breaks PROMPT-26, after
a load's answer SETUP-07). So the tables are the truth; spec_notes/lifecycles.md is drawn from
them (``markdown``, reached with ``acpref spec --lifecycles``), and a test keeps the committed
file current.

Between turns the turn table remembers what the session did last (no turn since it was set up or
resumed, a turn answered, a load answered): that is what names the clause of a stray update.
Loads and resumes of one session may overlap; ``SessionState.reopening`` counts those in flight,
and the count only chooses which of the session table's "reopen answered" events an answer is.

A running turn is asked to stop by session/cancel or session/close ("cancel requested": the
answer must be stopReason "cancelled", PROMPT-23, SETUP-16), or by a $/cancel_request of its
prompt, a session/delete of its session, or the end of the agent's input ("stop requested": no
clause says how it is answered). Either way the agent side stops it: which turn a message stops
is read from the phase it leads to (``effects.TurnStops``, ``ProtocolState.end_of_input``).

A session in phase ``UNKNOWN`` has no record in ``facts.ConnectionFacts.sessions``: never set up
on this connection, closed, deleted, or made by a reopen that failed. Nothing is kept of it.
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Iterable, List, Optional, Tuple, TypeVar

import attrs

__all__ = [
    "SESSION",
    "SessionEvent",
    "SessionPhase",
    "TURN",
    "Table",
    "TurnEvent",
    "TurnPhase",
    "markdown",
]


class _Member(enum.Enum):
    """A phase or an event: a singleton, hashed by identity (as it compares) for the tables."""

    __hash__ = object.__hash__


class SessionPhase(_Member):
    UNKNOWN = "unknown"
    #: A session/load is in flight: the agent replays the history (SETUP-05).
    LOADING = "loading"
    #: Only session/resume requests are in flight: no replay may come (SETUP-12).
    RESUMING = "resuming"
    ACTIVE = "active"


class SessionEvent(_Member):
    NEW_ANSWERED = "session/new answered"
    LOAD_SENT = "session/load sent"
    RESUME_SENT = "session/resume sent"
    #: A load or resume is answered while a load of the session is still in flight.
    ANSWERED_LOAD_LEFT = "reopen answered, a load left"
    #: A load or resume is answered while only resumes are still in flight.
    ANSWERED_RESUME_LEFT = "reopen answered, resumes left"
    REOPENED = "last reopen answered"
    #: The last reopen failed, and the record was made by a reopen (dropped).
    REOPEN_FAILED = "last reopen failed"
    #: The last reopen failed, and the session was set up before it (it stays).
    REOPEN_FAILED_KEPT = "last reopen failed, set up before"
    #: A request names the session (set_mode, prompt, an agent's fs or terminal request...).
    NAMED = "named by a request"
    CLOSE_SENT = "session/close sent"
    CLOSED = "session/close answered"
    DELETE_SENT = "session/delete sent"
    DELETED = "session/delete answered"


class TurnPhase(_Member):
    #: No turn has run since the session was set up (session/new, or a first load or resume) or
    #: resumed: a turn's content now belongs to nothing.
    NO_TURN = "no turn"
    RUNNING = "running"
    #: The client asked the turn to stop other than by session/cancel or session/close: a
    #: $/cancel_request naming its prompt (CANCEL-05: answered with a result or -32800),
    #: session/delete of its session (DELETE-05: implementation-defined), or the end of the
    #: agent's input. acpref's agent stops it as session/cancel would (spec-gap
    #: cancel-request-prompt, delete-active, end-of-input); no clause holds a peer to a
    #: "cancelled" answer.
    STOP_REQUESTED = "stop requested"
    CANCEL_REQUESTED = "cancel requested"
    #: The last turn was answered: nothing of it may follow (spec-gap content-after-turn: the
    #: sentence binds only a cancelled turn, PROMPT-26).
    ENDED = "turn answered"
    #: The last turn was cancelled and answered: its updates had to come before the answer
    #: (PROMPT-26: "it MUST ensure that it does so before responding").
    CANCEL_ENDED = "cancelled turn answered"
    #: A session/load was answered since the last turn: its replay is over (SETUP-07).
    REPLAYED = "load answered"

    @property
    def running(self) -> bool:
        """True while a turn runs (asked to stop or not), until its prompt is answered."""
        return (
            self is TurnPhase.RUNNING
            or self is TurnPhase.STOP_REQUESTED
            or self is TurnPhase.CANCEL_REQUESTED
        )

    @property
    def stopped(self) -> bool:
        """True once the client asked the running turn to stop, in any way: the agent stops it
        (``effects.TurnStops``)."""
        return self is TurnPhase.STOP_REQUESTED or self is TurnPhase.CANCEL_REQUESTED


class TurnEvent(_Member):
    PROMPT_SENT = "session/prompt sent"
    #: A turn's content arrives (a message chunk, a tool call, a plan).
    CONTENT = "turn content sent"
    CANCEL_SENT = "session/cancel sent"
    #: A $/cancel_request naming the running turn's session/prompt request.
    CANCEL_REQUEST_SENT = "$/cancel_request of the prompt sent"
    CLOSE_SENT = "session/close sent"
    DELETE_SENT = "session/delete sent"
    #: The agent's input ended: the client can send nothing more, not even session/cancel.
    INPUT_ENDED = "end of the agent's input"
    ANSWERED = "session/prompt answered"
    #: The session's session/load or session/resume succeeded.
    LOAD_ANSWERED = "session/load answered"
    RESUME_ANSWERED = "session/resume answered"


P = TypeVar("P", bound=enum.Enum)


@attrs.frozen
class Row:
    """One allowed transition: from ``source``, ``event`` leads to ``target`` (``clause``)."""

    source: Any
    event: Any
    target: Any
    clause: str


class Table:
    """A lifecycle: its phases, its events, one row per allowed transition, and the clause an
    event breaks where it has no row (``refusals``: ``(phase, event, clause)``)."""

    def __init__(
        self,
        name: str,
        initial: enum.Enum,
        rows: Iterable[Tuple[Any, Any, Any, str]],
        refusals: Iterable[Tuple[Any, Any, str]] = (),
    ):
        self.name = name
        self.initial = initial
        self.rows: List[Row] = [Row(*row) for row in rows]
        self._index: Dict[Tuple[enum.Enum, enum.Enum], Row] = {}
        for row in self.rows:
            assert (row.source, row.event) not in self._index, f"{name}: two rows for {row}"
            self._index[(row.source, row.event)] = row
        self.refusals: List[Tuple[Any, Any, str]] = list(refusals)
        self._refused: Dict[Tuple[enum.Enum, enum.Enum], str] = {}
        for source, event, clause in self.refusals:
            assert (source, event) not in self._index, f"{name}: {event} is allowed from {source}"
            self._refused[(source, event)] = clause

    def row(self, phase: enum.Enum, event: enum.Enum) -> Optional[Row]:
        """The row of ``event`` from ``phase``, or None when the event is not allowed there."""
        return self._index.get((phase, event))

    def allows(self, phase: enum.Enum, event: enum.Enum) -> bool:
        return (phase, event) in self._index

    def refusal(self, phase: enum.Enum, event: enum.Enum) -> Optional[str]:
        """The clause ``event`` breaks in ``phase``; None when it is allowed there, or when the
        table does not name one (the rule that reports it does)."""
        return self._refused.get((phase, event))

    def step(self, phase: P, event: enum.Enum) -> P:
        """The phase after ``event``. An event with no row leaves the phase as it was: a rule
        has reported it (the rules record what was sent, whether or not it was allowed)."""
        row = self._index.get((phase, event))
        return row.target if row is not None else phase  # type: ignore[return-value]


S, SE = SessionPhase, SessionEvent
_OPEN = (S.LOADING, S.RESUMING, S.ACTIVE)

SESSION = Table(
    "session",
    S.UNKNOWN,
    [
        (S.UNKNOWN, SE.NEW_ANSWERED, S.ACTIVE, "SETUP-02"),
        # A session not set up on this connection may be loaded or resumed by its id.
        *((p, SE.LOAD_SENT, S.LOADING, "SETUP-05") for p in (S.UNKNOWN, *_OPEN)),
        (S.UNKNOWN, SE.RESUME_SENT, S.RESUMING, "SETUP-12"),
        (S.ACTIVE, SE.RESUME_SENT, S.RESUMING, "SETUP-12"),
        (S.RESUMING, SE.RESUME_SENT, S.RESUMING, "SETUP-12"),
        # spec-gap reopen-in-flight: a load in flight may still replay, whatever else is sent.
        (S.LOADING, SE.RESUME_SENT, S.LOADING, "spec-gap:reopen-in-flight"),
        (S.LOADING, SE.ANSWERED_LOAD_LEFT, S.LOADING, "spec-gap:reopen-in-flight"),
        (S.LOADING, SE.ANSWERED_RESUME_LEFT, S.RESUMING, "spec-gap:reopen-in-flight"),
        (S.RESUMING, SE.ANSWERED_RESUME_LEFT, S.RESUMING, "spec-gap:reopen-in-flight"),
        (S.LOADING, SE.REOPENED, S.ACTIVE, "SETUP-07"),
        (S.RESUMING, SE.REOPENED, S.ACTIVE, "SETUP-12"),
        (S.LOADING, SE.REOPEN_FAILED, S.UNKNOWN, "spec-gap:unknown-session"),
        (S.RESUMING, SE.REOPEN_FAILED, S.UNKNOWN, "spec-gap:unknown-session"),
        # A failed load or resume of a session set up before leaves it as it was.
        (S.LOADING, SE.REOPEN_FAILED_KEPT, S.ACTIVE, "spec-gap:reopen-in-flight"),
        (S.RESUMING, SE.REOPEN_FAILED_KEPT, S.ACTIVE, "spec-gap:reopen-in-flight"),
        *((p, SE.NAMED, p, "spec-gap:unknown-session") for p in _OPEN),
        *((p, SE.CLOSE_SENT, p, "SETUP-15") for p in _OPEN),
        *((p, SE.CLOSED, S.UNKNOWN, "SETUP-17") for p in _OPEN),
        # Deleting a session never set up here (or deleted already) is no fault (DELETE-04).
        (S.UNKNOWN, SE.DELETE_SENT, S.UNKNOWN, "DELETE-04"),
        *((p, SE.DELETE_SENT, p, "DELETE-02") for p in _OPEN),
        *((p, SE.DELETED, S.UNKNOWN, "DELETE-03") for p in (S.UNKNOWN, *_OPEN)),
    ],
    [
        (S.UNKNOWN, SE.NAMED, "spec-gap:unknown-session"),
        (S.UNKNOWN, SE.CLOSE_SENT, "SETUP-15"),
    ],
)

T, TE = TurnPhase, TurnEvent
#: The phases between two turns: they differ only in what a stray update of a turn breaks.
_IDLE = (T.NO_TURN, T.ENDED, T.CANCEL_ENDED, T.REPLAYED)
_RUNNING = (T.RUNNING, T.STOP_REQUESTED, T.CANCEL_REQUESTED)
_STOPPED = (T.STOP_REQUESTED, T.CANCEL_REQUESTED)

TURN = Table(
    "turn",
    T.NO_TURN,
    [
        # spec-gap concurrent-prompt: one turn at a time per session.
        *((p, TE.PROMPT_SENT, T.RUNNING, "spec-gap:concurrent-prompt") for p in _IDLE),
        (T.RUNNING, TE.CONTENT, T.RUNNING, "PROMPT-06"),
        # A turn asked to stop may still send its pending updates before its answer.
        (T.STOP_REQUESTED, TE.CONTENT, T.STOP_REQUESTED, "CANCEL-04"),
        (T.CANCEL_REQUESTED, TE.CONTENT, T.CANCEL_REQUESTED, "PROMPT-25"),
        *((p, TE.CANCEL_SENT, p, "PROMPT-19") for p in _IDLE),
        # session/cancel and session/close make "cancelled" due (PROMPT-23, SETUP-16), also of
        # a turn asked to stop before in another way.
        *((p, TE.CANCEL_SENT, T.CANCEL_REQUESTED, "PROMPT-23") for p in _RUNNING),
        *((p, TE.CLOSE_SENT, p, "SETUP-16") for p in _IDLE),
        *((p, TE.CLOSE_SENT, T.CANCEL_REQUESTED, "SETUP-16") for p in _RUNNING),
        # spec-gap cancel-request-prompt: $/cancel_request of the prompt stops the turn; the
        # request is answered once, with a result or -32800 (CANCEL-05).
        (T.RUNNING, TE.CANCEL_REQUEST_SENT, T.STOP_REQUESTED, "spec-gap:cancel-request-prompt"),
        *((p, TE.CANCEL_REQUEST_SENT, p, "spec-gap:cancel-request-prompt") for p in _STOPPED),
        # spec-gap delete-active: deleting a session whose turn runs stops the turn (DELETE-05
        # leaves it to the agent, so no "cancelled" is due); the session goes with the answer.
        *((p, TE.DELETE_SENT, p, "DELETE-02") for p in _IDLE),
        (T.RUNNING, TE.DELETE_SENT, T.STOP_REQUESTED, "spec-gap:delete-active"),
        *((p, TE.DELETE_SENT, p, "spec-gap:delete-active") for p in _STOPPED),
        # spec-gap end-of-input: the client can send nothing more; the agent stops the turn.
        *((p, TE.INPUT_ENDED, p, "spec-gap:end-of-input") for p in _IDLE),
        (T.RUNNING, TE.INPUT_ENDED, T.STOP_REQUESTED, "spec-gap:end-of-input"),
        *((p, TE.INPUT_ENDED, p, "spec-gap:end-of-input") for p in _STOPPED),
        (T.RUNNING, TE.ANSWERED, T.ENDED, "PROMPT-11"),
        (T.STOP_REQUESTED, TE.ANSWERED, T.ENDED, "PROMPT-11"),
        (T.CANCEL_REQUESTED, TE.ANSWERED, T.CANCEL_ENDED, "PROMPT-23"),
        # What the session did last, between turns: a load's replay, or a resume (no replay).
        *((p, TE.LOAD_ANSWERED, T.REPLAYED, "SETUP-07") for p in _IDLE),
        *((p, TE.RESUME_ANSWERED, T.NO_TURN, "SETUP-12") for p in _IDLE),
        # spec-gap reopen-in-flight: a turn may run while its session is loaded or resumed.
        *((p, e, p, "spec-gap:reopen-in-flight") for p in _RUNNING
          for e in (TE.LOAD_ANSWERED, TE.RESUME_ANSWERED)),
    ],
    [
        *((p, TE.PROMPT_SENT, "spec-gap:concurrent-prompt") for p in _RUNNING),
        # A turn's content outside a turn (a load's own replay is the session's LOADING phase).
        (T.NO_TURN, TE.CONTENT, "spec-gap:content-outside-turn"),
        (T.ENDED, TE.CONTENT, "spec-gap:content-after-turn"),
        (T.CANCEL_ENDED, TE.CONTENT, "PROMPT-26"),
        (T.REPLAYED, TE.CONTENT, "SETUP-07"),
    ],
)


def markdown(tables: Iterable[Table] = (SESSION, TURN)) -> str:
    """spec_notes/lifecycles.md: each table as a mermaid state diagram and a markdown table."""
    out = [
        "# Lifecycles",
        "",
        "Generated from `acpref/_core/lifecycle.py` by `acpref spec --lifecycles`; do not edit.",
        "The rules change a phase only through these tables; an event with no row from the",
        "current phase is what a rule reports.",
        "",
    ]
    for table in tables:
        out += [f"## The {table.name}", "", "```mermaid", "stateDiagram-v2"]
        out.append(f"    [*] --> {_node(table.initial)}")
        for row in table.rows:
            label = f"{row.event.value} ({row.clause})"
            out.append(f"    {_node(row.source)} --> {_node(row.target)}: {label}")
        out += ["```", "", "| from | event | to | clause |", "|---|---|---|---|"]
        for row in table.rows:
            out.append(
                f"| {row.source.value} | {row.event.value} | {row.target.value} | {row.clause} |"
            )
        out.append("")
        if table.refusals:
            out += ["Not allowed (no row), and the clause it breaks:", ""]
            out += ["| in | event | breaks |", "|---|---|---|"]
            out += [f"| {p.value} | {e.value} | {clause} |" for p, e, clause in table.refusals]
            out.append("")
    return "\n".join(out)


def _node(phase: enum.Enum) -> str:
    return phase.name.lower()
