"""Session notices: fire-and-forget, user-facing information that is not history.

Spec: spec_notes/spec/v1/session-notices.md (stable since 2026-10-09; schema of 2026-11-02);
clauses NOTICE-01 .. NOTICE-11. A ``notice`` is a ``session/update`` variant the agent sends only
to a client that advertised ``clientCapabilities.session.notices`` (NOTICE-01). It has no id, no
answer and no removal; it is not replayed (NOTICE-06) and not a turn update (NOTICE-10).
"""

from typing import ClassVar

import attrs

from ._base import Meta, Unset, WireEnum, field

__all__ = ["NoticeSeverity", "NoticeCapabilities", "Notice"]


class NoticeSeverity(WireEnum):
    """Severity hint for a session notice.

    Open: fields typed with it also accept any other string, kept as the plain string. Values
    beginning with ``_`` are reserved for implementation-specific extensions; other unknown values
    are reserved for future ACP severities (spec NOTICE-04).
    Spec: session-notices.md.
    """

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@attrs.frozen(kw_only=True)
class NoticeCapabilities:
    """Client support for presenting live notices to the user.

    Spec: session-notices.md (``clientCapabilities.session.notices: {}``).
    """


@attrs.frozen(kw_only=True)
class Notice:
    """Fire-and-forget information for the user.

    Notices are live events rather than session history. Agents must not rely on a notice being
    received, displayed, or seen by the user. Agents MUST only send notices when the Client
    advertised the ``session.notices`` Client capability. Otherwise, Agents may use an agent
    message when the information should still be surfaced to the user.
    Spec: session-notices.md; NOTICE-01 .. NOTICE-05.
    """

    session_update: ClassVar[str] = "notice"

    severity: NoticeSeverity | str = field(required=True)
    """Presentation severity hint."""
    title: str = field(required=True)
    """Required non-empty plain-text title that can stand alone.

    The schema's ``minLength: 1`` is a rule of ``acpref._core`` (NOTICE-03), not of the codec: a
    receiver still reads ``""``.
    """
    description: str | None | Unset = field(default_on_error=True)
    """Optional plain-text detail or guidance.

    Omitted and ``null`` are equivalent and mean no description was supplied.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """Metadata scoped to this notice.

    Omitted and ``null`` are equivalent and mean no metadata was supplied.
    """
