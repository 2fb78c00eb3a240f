"""session-compaction.md: the agent reports that it compacts a session's context.

Two updates, ``compaction_update`` (a status) and ``compaction_summary_chunk`` (the summary,
streamed), go only to a client that advertised ``session.compaction`` (COMPACT-01). The first
update or chunk of a ``compactionId`` opens a compaction (COMPACT-03, COMPACT-07); it reaches
exactly one terminal status, and its id is never reused (COMPACT-04, COMPACT-10); any other
status string is an open one (COMPACT-15). Both updates are replayed with the history
(COMPACT-14), yet the spec ties a compaction to no turn.
"""

from __future__ import annotations

from typing import Iterable

from .book import Message, update_check, update_of, update_transition
from .bounded import remember
from .facts import ConnectionFacts
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT

# spec-gap compaction-not-turn-content: replayed, yet no PROMPT-26 or SETUP-07 check applies.
COMPACTION = frozenset({"compaction_update", "compaction_summary_chunk"})
#: The statuses that end a compaction (COMPACT-10); any other string is open (COMPACT-15).
COMPACTION_ENDS = frozenset({"completed", "failed", "cancelled"})


@update_check(*COMPACTION)
def _compaction(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    if s is None:
        return
    update = update_of(m)
    kind = update.get("sessionUpdate")
    if not state.gate_open("session.compaction", C):
        # spec COMPACT-01: both compaction updates need clientCapabilities.session.compaction.
        yield finding(
            "COMPACT-01", A, f"{kind} sent to a client without session.compaction", m.index
        )
    compaction_id = update.get("compactionId")
    if not isinstance(compaction_id, str) or compaction_id not in s.compactions:
        return  # spec COMPACT-03, COMPACT-07: the first update (any status) or chunk opens it
    before = s.compactions[compaction_id]
    status = update.get("status") if kind == "compaction_update" else None
    if before in COMPACTION_ENDS and status is not None and status != before:
        # spec COMPACT-10, COMPACT-04: a compaction reaches exactly one terminal status, and its
        # id is never reused for another compaction.
        yield finding(
            "COMPACT-10",
            A,
            f"compaction {compaction_id!r} ended {before!r}, then reported {status!r}",
            m.index,
        )


@update_transition(*COMPACTION)
def _compaction_apply(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    update = update_of(m)
    compaction_id = update.get("compactionId")
    if s is None or not isinstance(compaction_id, str):
        return
    status = update.get("status") if update.get("sessionUpdate") == "compaction_update" else None
    known = s.compactions.get(compaction_id)
    # spec COMPACT-07: a first-seen id (a chunk) is an in-progress compaction. spec-gap
    # remembered-bound: past max_remembered the least recently updated are forgotten (a
    # forgotten one then opens anew: COMPACT-10 is missed, never reported falsely).
    status = status or known or "in_progress"
    s.compactions = remember(s.compactions, compaction_id, status, state.max_remembered)
