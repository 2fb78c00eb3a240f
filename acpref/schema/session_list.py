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
    cwd: str = field(required=True)
    additional_directories: List[str] | Unset = field(
        default_on_error=True, skip_invalid_items=True
    )
    title: str | None | Unset = field(default_on_error=True)
    updated_at: str | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ListSessionsResponse:
    """Result of `session/list`: one page of sessions and the cursor of the next.

    Spec: session-list.mdx
    """

    sessions: List[SessionInfo] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    next_cursor: str | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class SessionInfoUpdate:
    """Session update: new title or timestamp (absent: unchanged; null: cleared).

    Spec: session-list.mdx
    """

    session_update: ClassVar[str] = "session_info_update"

    title: str | None | Unset = field(default_on_error=True)
    updated_at: str | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ListSessionsRequest:
    """Params of `session/list`: optional cwd filter and cursor.

    Spec: session-list.mdx
    """

    cwd: str | None | Unset = field()
    cursor: str | None | Unset = field()
    meta: Meta | Unset = field(default_on_error=True)
