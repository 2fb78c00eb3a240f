"""session-notices.md: short messages the agent shows the user about a session.

A ``notice`` update goes only to a client that advertised ``session.notices`` (NOTICE-01), with
a non-empty plain-text title (NOTICE-03). It may come at any point while the session exists, in
a turn or not (NOTICE-10): it is not a turn's content, and never history, so it is not part of
the replay of ``session/load`` (NOTICE-06: SHOULD NOT; graded as the decision notice-in-replay,
since a notice in the replay's window may be a new live one, NOTICE-11).
"""

from __future__ import annotations

from typing import Iterable

from .book import Message, update_check, update_of
from .facts import ConnectionFacts
from .lifecycle import SessionPhase
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT


@update_check("notice")
def _notice(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    if s is None:
        return
    # spec-gap reopen-in-flight: a turn's updates may interleave the replay; a notice then is live.
    if s.phase is SessionPhase.LOADING and not s.turn_phase.running:
        # spec NOTICE-06: a notice is a live event, not history: it is not replayed on load.
        # spec-gap notice-in-replay: but a new notice of a condition still relevant may come on
        # reconnecting (NOTICE-11), and the wire cannot tell it from a replayed one.
        yield finding(
            "spec-gap:notice-in-replay", A, "notice sent in the replay of session/load", m.index
        )
    # spec NOTICE-10: a notice may come at any point while the session exists, in a turn or not:
    # it is not turn content (no PROMPT-26 here), and never history.
    if not state.gate_open("session.notices", C):
        # spec NOTICE-01: only to a client that advertised session.notices (an object).
        yield finding("NOTICE-01", A, "notice sent to a client without session.notices", m.index)
    title = update_of(m).get("title")
    # spec-gap notice-title-rule: minLength 1 is checked here, not by the codec.
    if isinstance(title, str) and not title:
        # spec NOTICE-03: the title is a non-empty plain-text string (minLength 1).
        yield finding("NOTICE-03", A, "notice with an empty title", m.index)
