"""Findings: a broken rule, the clause it breaks, its level, and who broke it.

Spec: clauses.tsv levels (MUST, MUST NOT, SHOULD, SHOULD NOT, MAY); acpref's own decisions are
``spec-gap:<name>``, reported at level ``spec-gap``; forward-compatibility notes are level
``warning``. The levels and what fails a run are defined in ``register``.
"""

from __future__ import annotations

import enum
from typing import Any, Dict, Optional, Tuple

import attrs

from ..errors import ErrorCode, RpcError
from .register import (
    FAILING,
    WARNING,
    Quote,
    fails,
    is_provisional,
    level_of,
    quote_of,
    strength_of,
)

__all__ = ["Party", "Finding", "other"]


class Party(str, enum.Enum):
    """The two sides of an ACP connection."""

    AGENT = "agent"
    CLIENT = "client"


# Read once: looking a member up on an Enum class (``Party.AGENT``) is a slow attribute access, and
# ``other`` runs several times for every message.
_AGENT, _CLIENT = Party.AGENT, Party.CLIENT


def other(party: Party) -> Party:
    return _CLIENT if party is _AGENT else _AGENT


@attrs.frozen(kw_only=True)
class Finding:
    """One broken rule, seen in one message.

    ``level`` is what the report says (``register.LEVELS``); ``strength`` is how acpref's own
    sides enforce the rule live (``register.strength_of``): a decision of acpref can be enforced
    at MUST strength by acpref's agent while another agent breaking it is only a ``spec-gap``.
    ``index`` is the offending message's index in the transcript (``None``: at its end).
    ``code`` is set on findings about a *request* that its receiver should refuse: the JSON-RPC
    error code to answer with (``-32601`` for a gated method, ``-32602`` for bad params, ...).
    """

    clause: str
    level: str
    blame: Party
    message: str
    index: Optional[int] = None
    code: Optional[int] = None
    strength: str = ""
    #: The clause is provisional and no sentence of a carried page states it (its shape comes
    #: from the unstable schema alone): reported at level ``warning``, enforced live at its
    #: ``strength`` (spec-gap provisional-features).
    provisional: bool = False

    @property
    def is_violation(self) -> bool:
        """MUST / MUST NOT findings are violations: they fail a run."""
        return self.level in FAILING

    def fails(self, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()) -> bool:
        """True when this finding fails a run (``register.fails``)."""
        return fails(self.level, strict_gaps=strict_gaps, fail_on=fail_on)

    @property
    def binding(self) -> bool:
        """True when acpref's own sides enforce the rule live (refuse, or do not send)."""
        return (self.strength or self.level) in FAILING

    @property
    def quote(self) -> Optional[Quote]:
        """The sentence of the spec this finding's clause states (``register.quotes``)."""
        return quote_of(self.clause)

    def to_rpc_error(self) -> RpcError:
        """The answer a receiver gives to a request refused because of this finding."""
        return RpcError(
            self.code if self.code is not None else ErrorCode.INVALID_REQUEST,
            f"{self.message} [spec {self.clause}]",
            {"clause": self.clause},
        )

    def as_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "clause": self.clause,
            "level": self.level,
            "blame": self.blame.value,
            "index": self.index,
            "message": self.message,
        }
        if self.provisional:
            out["provisional"] = True  # reported as a warning; the clause's level is its strength
            out["strength"] = self.strength
        quote = self.quote if self.is_violation else None
        if quote is not None:
            out["quote"] = {"source": quote.source, "text": quote.text}
        return out


def finding(
    clause: str,
    blame: Party,
    message: str,
    index: Optional[int] = None,
    code: Any = None,
    *,
    level: Optional[str] = None,
) -> Finding:
    """Build a finding; its level comes from the register (spec_notes/clauses.tsv).

    ``level`` overrides it for a finding that is not a breach of the clause it names: a
    forward-compatibility note (``"warning"``) about a field a newer schema may define.
    """
    level = level if level is not None else level_of(clause)
    return Finding(
        clause=clause,
        level=level,
        blame=blame,
        # A message quotes what the peer sent, which may hold a lone surrogate (legal in JSON
        # text as an escape): it is written as that escape, so every finding prints as UTF-8.
        message=message.encode("utf-8", "backslashreplace").decode("utf-8"),
        index=index,
        code=int(code) if code is not None else None,
        strength=WARNING if level == WARNING else strength_of(clause),
        provisional=level == WARNING and is_provisional(clause),
    )
