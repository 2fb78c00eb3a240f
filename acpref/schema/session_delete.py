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


@attrs.frozen(kw_only=True)
class DeleteSessionRequest:
    """Params of `session/delete`.

    Spec: session-delete.mdx
    """

    session_id: SessionId = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)
