"""The session capabilities of ``initialize``: what each side says it does with sessions.

Spec: initialization.mdx (Session Capabilities), with the page of each feature: session-list.mdx,
session-delete.mdx, session-setup.mdx (resume, close, additional directories),
session-config-options.mdx (boolean options). Part of ``initialization``, which re-exports
nothing of it: ``acpref.schema`` names every type. Each capability is an object whose presence
(not ``null``) means "supported" (INIT-11).
"""

import attrs

from ._base import Meta, Unset, field
from .session_compaction import CompactionCapabilities
from .session_notices import NoticeCapabilities
from .system_prompt import SessionSystemPromptCapabilities

__all__ = [
    "SessionListCapabilities",
    "SessionDeleteCapabilities",
    "SessionResumeCapabilities",
    "SessionCloseCapabilities",
    "SessionAdditionalDirectoriesCapabilities",
    "SessionCapabilities",
    "BooleanConfigOptionCapabilities",
    "SessionConfigOptionsCapabilities",
    "ClientSessionCapabilities",
]


# -- The agent's -----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class SessionListCapabilities:
    """Present when the agent supports `session/list`.

    Spec: session-list.mdx (Checking for Support), initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionDeleteCapabilities:
    """Present when the agent supports `session/delete`.

    Spec: session-delete.mdx, initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionResumeCapabilities:
    """Present when the agent supports `session/resume`.

    Spec: session-setup.mdx, initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionCloseCapabilities:
    """Present when the agent supports `session/close`.

    Spec: session-setup.mdx, initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionAdditionalDirectoriesCapabilities:
    """Present when the agent accepts `additionalDirectories`.

    Spec: session-setup.mdx, initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionCapabilities:
    """Optional session methods the agent supports (each: an object means yes).

    Spec: initialization.mdx
    """

    list: SessionListCapabilities | None | Unset = field(default_on_error=True)
    """Whether the agent supports ``session/list``.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports listing sessions.
    """
    delete: SessionDeleteCapabilities | None | Unset = field(default_on_error=True)
    """Whether the agent supports ``session/delete``.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports deleting sessions from ``session/list``.
    """
    additional_directories: SessionAdditionalDirectoriesCapabilities | None | Unset = field(
        default_on_error=True
    )
    """Whether the agent supports ``additionalDirectories`` on supported session lifecycle requests.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports ``additionalDirectories`` on supported session lifecycle requests.

    Agents that also support ``session/list`` may return ``SessionInfo.additionalDirectories`` to
    report the complete ordered additional-root list associated with a listed session.
    """
    resume: SessionResumeCapabilities | None | Unset = field(default_on_error=True)
    """Whether the agent supports ``session/resume``.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports resuming sessions.
    """
    close: SessionCloseCapabilities | None | Unset = field(default_on_error=True)
    """Whether the agent supports ``session/close``.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports closing sessions.
    """
    # spec SYSPROMPT-01 (provisional): {} is append mode; mode.override: {} adds override.
    system_prompt: SessionSystemPromptCapabilities | None | Unset = field(
        default_on_error=True, provisional=True
    )
    """UNSTABLE. This capability is not part of the spec yet, and may be removed or changed at any
    point.

    Whether the agent supports ``systemPrompt`` on session lifecycle requests.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports ``systemPrompt`` in ``append`` mode.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


# -- The client's ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class BooleanConfigOptionCapabilities:
    """Present when the client supports boolean config options.

    Spec: session-config-options.mdx (Boolean Config Options), initialization.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionConfigOptionsCapabilities:
    """Config option kinds the client supports beyond select.

    Spec: session-config-options.mdx (Boolean Config Options), initialization.mdx
    """

    boolean: BooleanConfigOptionCapabilities | None | Unset = field(default_on_error=True)
    """Whether the client supports boolean session configuration options.

    Optional. Omitted or ``null`` both mean the client does not advertise support. Supplying ``{}``
    means agents may include ``type: "boolean"`` entries in ``configOptions``, and the client may
    send ``session/set_config_option`` requests with ``type: "boolean"`` and a boolean ``value``.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ClientSessionCapabilities:
    """Session-related client capabilities.

    Spec: initialization.mdx
    """

    config_options: SessionConfigOptionsCapabilities | None | Unset = field(default_on_error=True)
    """Config option capabilities supported by the client.

    Omitted or ``null`` both mean the client does not advertise support for any config option
    extensions.
    """
    # spec NOTICE-01: {} advertises live `notice` updates; omitted or null, it is not advertised.
    notices: NoticeCapabilities | None | Unset = field(default_on_error=True)
    """Support for live user-facing ``notice`` session updates.

    Optional. Omitted or ``null`` both mean the client does not advertise support. Supplying ``{}``
    means the client can present notices to the user.
    """
    # spec COMPACT-01: {} advertises the whole compaction contract; omitted or null, unsupported.
    compaction: CompactionCapabilities | None | Unset = field(default_on_error=True)
    """Support for ID-addressed context compaction updates. Omitted or ``null`` means unsupported.
    ``{}`` advertises the complete compaction contract.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
