"""schema.mdx: results that are objects, in both directions.

Some methods answer "nothing" on success. The schema makes that an object (``{}`` at least,
possibly with fields added later), never ``null`` (SCHEMA-09; spec-gap result-null, where a page's
example shows null). Each method's own page names the clause, listed here once for both senders.
"""

from __future__ import annotations

from typing import Dict, Iterable, Tuple

from .book import Message, check
from .facts import ConnectionFacts
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT

#: method -> (who answers it, the clause its page gives the rule).
OBJECT_RESULTS: Dict[str, Tuple[Party, str]] = {
    "authenticate": (A, "AUTH-09"),
    "logout": (A, "AUTH-16"),
    "session/load": (A, "SETUP-08"),
    "session/resume": (A, "SETUP-13"),
    "session/close": (A, "SETUP-17"),
    "session/delete": (A, "DELETE-02"),
    "session/set_mode": (A, "MODES-05"),
    "fs/write_text_file": (C, "FS-08"),
    "terminal/release": (C, "SCHEMA-09"),
    "terminal/kill": (C, "TERM-12"),
}


@check("response", A, *(k for k, (who, _) in OBJECT_RESULTS.items() if who is A))
@check("response", C, *(k for k, (who, _) in OBJECT_RESULTS.items() if who is C))
def _object_result(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if not m.is_error and not isinstance(m.result, dict):
        # spec SCHEMA-09, AUTH-09, AUTH-16, SETUP-08, SETUP-17, DELETE-02, MODES-05, FS-08,
        # TERM-12: these results are objects ({} at least), never null (spec-gap result-null).
        sender, clause = OBJECT_RESULTS[m.method or ""]
        yield finding(clause, sender, f"{m.method} result is {m.result!r}, not an object", m.index)
