"""Findings: a broken rule, the clause it breaks, its level, and who broke it.

Spec: clauses.tsv levels (MUST, MUST NOT, SHOULD, SHOULD NOT, MAY); acpref's own decisions are
``spec-gap:<name>`` with the level given in ``register.GAP_LEVELS``.
"""

from __future__ import annotations

import enum
from typing import Any, Optional

import attrs

from ..errors import ErrorCode, RpcError
from .register import level_of

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

    @property
    def is_violation(self) -> bool:
        """MUST / MUST NOT findings are violations; SHOULD-level ones are warnings."""
        return self.level in ("MUST", "MUST NOT")

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
    )
