"""The two lifecycles of ACP, as tables: a session's phases and a prompt turn's.

Spec: session-setup.mdx (a session is created, loaded, resumed, closed), session-delete.mdx,
prompt-turn.mdx (a turn runs from ``session/prompt`` to its answer, and may be cancelled).

Each table has one row per allowed transition: the phase it starts from, the event, the phase it
leads to, and the clause that says so. The rule modules change a phase only through ``step``, and
a check asks ``allows`` whether an event may happen in the current phase: an event with no row
from that phase is what a rule reports (its finding names the row's clause, or a narrower one).
So the tables are the truth; spec_notes/lifecycles.md is drawn from them (``markdown``, reached
with ``acpref spec --lifecycles``), and a test keeps the committed file current.

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
    #: A request names the session (set_mode, prompt, an agent's fs or terminal request...).
    NAMED = "named by a request"
    CLOSE_SENT = "session/close sent"
    CLOSED = "session/close answered"
    DELETED = "session/delete answered"


class TurnPhase(_Member):
    NO_TURN = "no turn"
    RUNNING = "running"
    CANCEL_REQUESTED = "cancel requested"


class TurnEvent(_Member):
    PROMPT_SENT = "session/prompt sent"
    #: A turn's content arrives (a message chunk, a tool call, a plan).
    CONTENT = "turn content sent"
    CANCEL_SENT = "session/cancel sent"
    CLOSE_SENT = "session/close sent"
    ANSWERED = "session/prompt answered"


P = TypeVar("P", bound=enum.Enum)


@attrs.frozen
class Row:
    """One allowed transition: from ``source``, ``event`` leads to ``target`` (``clause``)."""

    source: Any
    event: Any
    target: Any
    clause: str


class Table:
    """A lifecycle: its phases, its events, and one row per allowed transition."""

    def __init__(self, name: str, initial: enum.Enum, rows: Iterable[Tuple[Any, Any, Any, str]]):
        self.name = name
        self.initial = initial
        self.rows: List[Row] = [Row(*row) for row in rows]
        self._index: Dict[Tuple[enum.Enum, enum.Enum], Row] = {}
        for row in self.rows:
            assert (row.source, row.event) not in self._index, f"{name}: two rows for {row}"
            self._index[(row.source, row.event)] = row

    def row(self, phase: enum.Enum, event: enum.Enum) -> Optional[Row]:
        """The row of ``event`` from ``phase``, or None when the event is not allowed there."""
        return self._index.get((phase, event))

    def allows(self, phase: enum.Enum, event: enum.Enum) -> bool:
        return (phase, event) in self._index

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
        *((p, SE.NAMED, p, "spec-gap:unknown-session") for p in _OPEN),
        *((p, SE.CLOSE_SENT, p, "SETUP-15") for p in _OPEN),
        *((p, SE.CLOSED, S.UNKNOWN, "SETUP-17") for p in _OPEN),
        *((p, SE.DELETED, S.UNKNOWN, "DELETE-03") for p in (S.UNKNOWN, *_OPEN)),
    ],
)

T, TE = TurnPhase, TurnEvent

TURN = Table(
    "turn",
    T.NO_TURN,
    [
        # spec-gap concurrent-prompt: one turn at a time per session.
        (T.NO_TURN, TE.PROMPT_SENT, T.RUNNING, "spec-gap:concurrent-prompt"),
        (T.RUNNING, TE.CONTENT, T.RUNNING, "PROMPT-06"),
        (T.CANCEL_REQUESTED, TE.CONTENT, T.CANCEL_REQUESTED, "PROMPT-25"),
        (T.NO_TURN, TE.CANCEL_SENT, T.NO_TURN, "PROMPT-19"),
        (T.RUNNING, TE.CANCEL_SENT, T.CANCEL_REQUESTED, "PROMPT-23"),
        (T.CANCEL_REQUESTED, TE.CANCEL_SENT, T.CANCEL_REQUESTED, "PROMPT-23"),
        (T.NO_TURN, TE.CLOSE_SENT, T.NO_TURN, "SETUP-16"),
        (T.RUNNING, TE.CLOSE_SENT, T.CANCEL_REQUESTED, "SETUP-16"),
        (T.CANCEL_REQUESTED, TE.CLOSE_SENT, T.CANCEL_REQUESTED, "SETUP-16"),
        (T.RUNNING, TE.ANSWERED, T.NO_TURN, "PROMPT-11"),
        (T.CANCEL_REQUESTED, TE.ANSWERED, T.NO_TURN, "PROMPT-23"),
        # (no row for CONTENT from NO_TURN: PROMPT-26, or SETUP-07 after a load's answer; a
        # load's own replay is the session's LOADING phase, not a turn)
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
    return "\n".join(out)


def _node(phase: enum.Enum) -> str:
    return phase.name.lower()
