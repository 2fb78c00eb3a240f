"""Client-provided system prompt: ``systemPrompt`` on ``session/new``, ``load`` and ``resume``.

Spec: v1/system-prompt.md (PROVISIONAL); clauses SYSPROMPT-01 .. SYSPROMPT-16. The feature was
stabilized on 2026-11-06, after the stable schema of 2026-11-02; these shapes are those of
``schema.unstable.json`` of 2026-11-02, and every type here is provisional until a stable schema
confirms it (spec_notes/decisions.md, provisional-features).

The agent advertises ``sessionCapabilities.systemPrompt: {}`` (append mode) and, for override mode,
``systemPrompt.mode.override: {}``; the client then sends a ``SystemPrompt`` (a mode and text
content blocks) on the session lifecycle requests, re-sending it on load and resume.
"""

from typing import List

import attrs

from ._base import Meta, Unset, WireEnum, field
from .content import ContentBlock

__all__ = [
    "SystemPromptMode",
    "SystemPrompt",
    "SessionSystemPromptOverrideCapabilities",
    "SessionSystemPromptModeCapabilities",
    "SessionSystemPromptCapabilities",
]

#: What makes these types provisional (read by ``acpref.schema.PROVISIONAL``).
PROVISIONAL = "system prompt: stabilized 2026-11-06; shape from schema.unstable.json of 2026-11-02"


class SystemPromptMode(WireEnum):
    """How the Agent combines a client-provided system prompt with its own instructions.

    Provisional (unstable schema of 2026-11-02). Fields typed with it also accept any other
    string: unknown modes are preserved so they can be stored, proxied or forwarded, and an agent
    returns an error for a mode it does not support rather than treating it as ``append`` or
    ``override`` (spec SYSPROMPT-05). Spec: v1/system-prompt.md.
    """

    #: Add the content to the agent's own instructions (every advertising agent supports it).
    APPEND = "append"
    #: Replace the agent's built-in default instructions (needs ``mode.override``, SYSPROMPT-03).
    OVERRIDE = "override"


@attrs.frozen(kw_only=True)
class SystemPrompt:
    """Client-provided system-level instructions for a session.

    Provisional (unstable schema of 2026-11-02). Clients send it only when the agent advertises
    ``sessionCapabilities.systemPrompt`` (SYSPROMPT-02); agents that cannot apply it return an
    error instead of creating, loading or resuming the session (SYSPROMPT-04).
    Spec: v1/system-prompt.md.
    """

    mode: SystemPromptMode | str = field(required=True)
    """How the Agent combines ``content`` with its own instructions.

    Required. Agents MUST return an error for a mode they do not support rather than treating it as
    ``append`` or ``override``.
    """
    # spec SYSPROMPT-06, SYSPROMPT-07, SYSPROMPT-09: text blocks, never an empty array (the rules
    # check it; the type stays permissive so that the oracle can read what a peer really sent).
    content: List[ContentBlock] = field(required=True)
    """The system prompt content.

    Agents advertising the capability MUST accept ``text`` content blocks. Clients MUST NOT send
    other content block types until a future capability allows them, and Agents MUST return an error
    for content blocks they do not support.

    Clients MUST NOT send an empty array. Agents MAY reject one with ``-32602`` without creating,
    loading, resuming, or forking the session.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionSystemPromptOverrideCapabilities:
    """Capabilities for the ``override`` system prompt mode: ``{}`` means supported.

    Provisional (unstable schema of 2026-11-02). Spec: v1/system-prompt.md.
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionSystemPromptModeCapabilities:
    """System prompt delivery modes the agent supports in addition to ``append``.

    Provisional (unstable schema of 2026-11-02). ``append`` has no entry: every agent advertising
    ``sessionCapabilities.systemPrompt`` supports it. Spec: v1/system-prompt.md.
    """

    # spec SYSPROMPT-01: omitted or null means override is not advertised.
    override: SessionSystemPromptOverrideCapabilities | None | Unset = field(default_on_error=True)
    """Whether the agent supports ``override`` mode.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports replacing its built-in default instructions with the client-provided
    system prompt.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionSystemPromptCapabilities:
    """Capabilities for client-provided system prompts: ``{}`` means ``append`` mode.

    Provisional (unstable schema of 2026-11-02). Spec: v1/system-prompt.md (SYSPROMPT-01).
    """

    mode: SessionSystemPromptModeCapabilities | None | Unset = field(default_on_error=True)
    """Delivery modes the agent supports in addition to ``append``.

    Optional. Omitted or ``null`` both mean the agent supports only ``append``.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
