"""``session/delete``: remove a session from ``session/list`` results.

Spec: session-delete.mdx; clauses DELETE-01 .. DELETE-05.
"""

import attrs

from ._base import Meta, Unset, field
from .identifiers import SessionId

__all__ = [
    "DeleteSessionResponse",
    "DeleteSessionRequest",
]


@attrs.frozen(kw_only=True)
class DeleteSessionResponse:
    """Result of `session/delete`.

    Spec: session-delete.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class DeleteSessionRequest:
    """Params of `session/delete`.

    Spec: session-delete.mdx
    """

    session_id: SessionId = field(required=True)
    """The ID of the session to delete."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """

