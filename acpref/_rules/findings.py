"""Findings: a broken rule, the clause it breaks, its level, and who broke it.

Spec: clauses.tsv levels (MUST, MUST NOT, SHOULD, SHOULD NOT, MAY); acpref's own decisions are
``spec-gap:<name>`` with the level given in ``register.GAP_LEVELS``.
"""

from __future__ import annotations

import enum
from typing import Any, Optional

import attrs

from ..errors import ErrorCode, RpcError
from .register import is_provisional, level_of

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

    ``code`` is set on findings about a *request* that its receiver should refuse: the JSON-RPC
    error code to answer with (``-32601`` for a gated method, ``-32602`` for bad params, ...).
    """

    clause: str
    level: str
    blame: Party
    message: str
    index: Optional[int] = None
    code: Optional[int] = None
    #: The clause is provisional (its shape comes from the unstable schema): graded a warning.
    provisional: bool = False

    @property
    def binds(self) -> bool:
        """MUST / MUST NOT: the live sides obey it, provisional or not."""
        return self.level in ("MUST", "MUST NOT")

    @property
    def is_violation(self) -> bool:
        """MUST / MUST NOT findings are violations; SHOULD-level and provisional ones are warnings.

        spec-gap provisional-features: a provisional clause is graded as a warning until a stable
        schema confirms its shape.
        """
        return self.binds and not self.provisional

    def to_rpc_error(self) -> RpcError:
        """The answer a receiver gives to a request refused because of this finding."""
        return RpcError(
            self.code if self.code is not None else ErrorCode.INVALID_REQUEST,
            f"{self.message} [spec {self.clause}]",
            {"clause": self.clause},
        )

    def as_dict(self) -> dict:
        return {
            "clause": self.clause,
            "level": self.level,
            "blame": self.blame.value,
            "index": self.index,
            "message": self.message,
            **({"provisional": True} if self.provisional else {}),
        }


def finding(
    clause: str, blame: Party, message: str, index: Optional[int] = None, code: Any = None
) -> Finding:
    """Build a finding; its level comes from the register (spec_notes/clauses.tsv)."""
    return Finding(
        clause=clause,
        level=level_of(clause),
        blame=blame,
        message=message,
        index=index,
        code=int(code) if code is not None else None,
        provisional=is_provisional(clause),
    )
