"""``session/list`` and the ``session_info_update`` notification.

Spec: session-list.mdx; clauses LIST-01 .. LIST-17. Cursors are opaque (LIST-11). In a
``SessionInfoUpdate`` an absent field means "unchanged" and ``null`` means "clear" (LIST-15):
the models keep the two apart (``UNSET`` vs ``None``).
"""

from typing import ClassVar, List

import attrs

from ._base import Meta, Unset, field
from .identifiers import SessionId

__all__ = [
    "SessionInfo",
    "ListSessionsResponse",
    "SessionInfoUpdate",
    "ListSessionsRequest",
]


@attrs.frozen(kw_only=True)
class SessionInfo:
    """What `session/list` tells about one session.

    Spec: session-list.mdx
    """

    session_id: SessionId = field(required=True)
    """Unique identifier for the session."""
    cwd: str = field(required=True)
    """The working directory for this session. Must be an absolute path."""
    additional_directories: List[str] | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    """Additional workspace roots reported for this session. Each path must be absolute.

    When present, this is the complete ordered additional-root list reported by the Agent. Omitted
    and empty values are equivalent: the response reports no additional roots.
    """
    title: str | None | Unset = field(default_on_error=True)
    """Human-readable title for the session."""
    updated_at: str | None | Unset = field(default_on_error=True)
    """ISO 8601 timestamp of last activity."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ListSessionsResponse:
    """Result of `session/list`: one page of sessions and the cursor of the next.

    Spec: session-list.mdx
    """

    sessions: List[SessionInfo] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    """Array of session information objects."""
    next_cursor: str | None | Unset = field(default_on_error=True)
    """Opaque cursor token. If present, pass this in the next request's cursor parameter to fetch
    the next page. If absent, there are no more results.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionInfoUpdate:
    """Session update: new title or timestamp (absent: unchanged; null: cleared).

    Spec: session-list.mdx
    """

    session_update: ClassVar[str] = "session_info_update"

    title: str | None | Unset = field(default_on_error=True)
    """Human-readable title for the session. Set to null to clear."""
    updated_at: str | None | Unset = field(default_on_error=True)
    """ISO 8601 timestamp of last activity. Set to null to clear."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ListSessionsRequest:
    """Params of `session/list`: optional cwd filter and cursor.

    Spec: session-list.mdx
    """

    cwd: str | None | Unset = field()
    """Filter sessions by working directory. Must be an absolute path."""
    cursor: str | None | Unset = field()
    """Opaque cursor token from a previous response's nextCursor field for cursor-based pagination.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """

