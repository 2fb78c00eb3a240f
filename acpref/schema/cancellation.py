"""``$/cancel_request``: cancel one of the sender's own outstanding requests.

Spec: cancellation.mdx; clauses CANCEL-01 .. CANCEL-08. The cancelled request still receives
exactly one response (CANCEL-05); the notification itself is never answered (CANCEL-06). Prompt
turns have their own cancellation, ``session/cancel`` (prompt-turn.mdx).
"""

import attrs

from ._base import Meta, Unset, field
from .identifiers import RequestId

__all__ = [
    "CancelRequestNotification",
]


@attrs.frozen(kw_only=True)
class CancelRequestNotification:
    """Params of `$/cancel_request`: the id of one of the sender's own outstanding requests.

    Spec: cancellation.mdx
    """

    request_id: RequestId = field(required=True, fmt="int64")  # spec RPC-02: integer ids are int64
    """The ID of the request to cancel."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
