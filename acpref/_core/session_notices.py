"""session-notices.md: short messages the agent shows the user about a session.

A ``notice`` update goes only to a client that advertised ``session.notices`` (NOTICE-01), with
a non-empty plain-text title (NOTICE-03). It may come at any point while the session exists, in
a turn or not (NOTICE-10): it is not a turn's content, and never history.
"""

from __future__ import annotations

from typing import Iterable

from .book import Message, update_check, update_of
from .facts import ConnectionFacts
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT


@update_check("notice")
def _notice(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if state.session(m.session_id) is None:
        return
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
