"""The rule modules, one per spec page, in protocol order; the rule book is built from them.

Read them in this order to follow a connection from its first message to its last. Each module
opens with the page it implements and what a reader learns there; each holds the rules of that
page in both directions (what the client sends, what the agent sends). The provisional features
(shapes from the unstable schema) come last, one module each, after the reading order: they
hook into the stable pages (their rules on a stable method are marked with their feature and
run only once it is in play on the connection, ``book``), and no stable page imports one.
"""

from __future__ import annotations

from . import (
    authentication,
    cancellation,
    elicitation,
    file_system,
    initialization,
    plan_operations,
    prompt_turn,
    results,
    session_compaction,
    session_list,
    session_modes,
    session_notices,
    session_setup,
    subagents,
    system_prompt,
    tool_calls,
)
from .book import RuleBook

__all__ = ["PAGES", "PROVISIONAL", "RULES"]

#: The stable pages, in the order a connection meets them.
PAGES = (
    initialization,
    authentication,
    session_setup,
    session_list,
    session_modes,
    prompt_turn,
    tool_calls,
    file_system,
    elicitation,
    cancellation,
    session_notices,
    session_compaction,
    results,
)

#: Provisional features, each in a module of its own, hooked into the stable pages.
PROVISIONAL = (plan_operations, subagents, system_prompt)

#: The rule book every ``ProtocolState`` consults.
RULES = RuleBook(PAGES + PROVISIONAL)
