"""Session modes: the (legacy) mode selector, ``session/set_mode`` and ``current_mode_update``.

Spec: session-modes.mdx; clauses MODES-01 .. MODES-07, SCHEMA-03. Config options supersede modes;
agents keep both in sync (CONFIG-24).
"""

from typing import ClassVar, List

import attrs

from ._base import Meta, Unset, field
from .identifiers import SessionId, SessionModeId

__all__ = [
    "SessionMode",
    "SessionModeState",
    "SetSessionModeResponse",
    "CurrentModeUpdate",
    "SetSessionModeRequest",
]


@attrs.frozen(kw_only=True)
class SessionMode:
    """One mode the agent can work in.

    Spec: session-modes.mdx
    """

    id: SessionModeId = field(required=True)
    """Stable identifier used to refer to this protocol object in later messages."""
    name: str = field(required=True)
    """Human-readable name shown for this protocol object."""
    description: str | None | Unset = field(default_on_error=True)
    """Optional human-readable details shown with this protocol object."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionModeState:
    """The modes a session offers and the one in use.

    Spec: session-modes.mdx
    """

    current_mode_id: SessionModeId = field(required=True)
    """The current mode the Agent is in."""
    available_modes: List[SessionMode] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    """The set of modes that the Agent can operate in."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SetSessionModeResponse:
    """Result of `session/set_mode`.

    Spec: session-modes.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class CurrentModeUpdate:
    """Session update: the agent switched the current mode.

    Spec: session-modes.mdx
    """

    session_update: ClassVar[str] = "current_mode_update"

    # spec SCHEMA-03, spec-gap mode-update-field: currentModeId (the schema), not the docs' modeId.
    current_mode_id: SessionModeId = field(required=True)
    """The ID of the current mode."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SetSessionModeRequest:
    """Params of `session/set_mode`.

    Spec: session-modes.mdx
    """

    session_id: SessionId = field(required=True)
    """The ID of the session to set the mode for."""
    mode_id: SessionModeId = field(required=True)
    """The ID of the mode to set."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
