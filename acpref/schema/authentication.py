"""Authentication: the methods an agent advertises, ``authenticate`` and ``logout``.

Spec: authentication.mdx; clauses AUTH-01 .. AUTH-19, SCHEMA-05. An auth method without ``type``
is handled by the agent through ``authenticate``; a ``terminal`` method is run by the client as an
interactive login process and never passed to ``authenticate`` (AUTH-08).
"""

from typing import ClassVar, Dict, List, Union

import attrs

from ._base import Meta, Unset, field, tagged_union
from .identifiers import AuthMethodId

__all__ = [
    "LogoutCapabilities",
    "AgentAuthCapabilities",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "AuthMethod",
    "AuthenticateResponse",
    "LogoutResponse",
    "AuthenticateRequest",
    "LogoutRequest",
]


@attrs.frozen(kw_only=True)
class LogoutCapabilities:
    """Present when the agent supports `logout`.

    Spec: authentication.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AgentAuthCapabilities:
    """Authentication-related agent capabilities.

    Spec: authentication.mdx
    """

    logout: LogoutCapabilities | None | Unset = field(default_on_error=True)
    """Whether the agent supports the logout method.

    Optional. Omitted or ``null`` both mean the agent does not advertise support. Supplying ``{}``
    means the agent supports the logout method.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AuthMethodAgent:
    """Agent-handled login, completed with `authenticate`.

    Spec: authentication.mdx
    """

    type: ClassVar[str] = "agent"

    id: AuthMethodId = field(required=True)
    """Unique identifier for this authentication method."""
    name: str = field(required=True)
    """Human-readable name of the authentication method."""
    description: str | None | Unset = field(default_on_error=True)
    """Optional human-readable description of this authentication method."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AuthMethodTerminal:
    """Terminal login: the client reruns the agent command interactively with these args and env.

    Spec: authentication.mdx
    """

    type: ClassVar[str] = "terminal"

    id: AuthMethodId = field(required=True)
    """Unique identifier for this authentication method."""
    name: str = field(required=True)
    """Human-readable name of the authentication method."""
    description: str | None | Unset = field(default_on_error=True)
    """Optional human-readable description of this authentication method."""
    # spec SCHEMA-18, SCHEMA-20, SCHEMA-21: null reads as [] (env: {}); malformed is an error.
    args: List[str] | Unset = field(default_on_null=True)
    """Additional arguments to append to the configured agent invocation for terminal auth."""
    env: Dict[str, str] | Unset = field(default_on_null=True)
    """Additional environment variables to set on the configured agent invocation for terminal auth.
    These values override same-named variables in the base launch configuration.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: An advertised way to authenticate. An entry without ``type`` (or with ``type: "agent"``) is
#: handled by the agent through ``authenticate``. Spec: authentication.mdx; AUTH-04, SCHEMA-05.
# spec AUTH-04: no "type" (or "agent") reads as the agent-handled method; it is written
# without a type.
AuthMethod = Union[AuthMethodTerminal, AuthMethodAgent]
tagged_union(AuthMethod, tag="type", untagged=AuthMethodAgent)


@attrs.frozen(kw_only=True)
class AuthenticateResponse:
    """Result of `authenticate`.

    Spec: authentication.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class LogoutResponse:
    """Result of `logout`.

    Spec: authentication.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AuthenticateRequest:
    """Params of `authenticate`: the id of an agent-handled method.

    Spec: authentication.mdx
    """

    method_id: AuthMethodId = field(required=True)
    """The ID of the authentication method to use. Must be one of the methods advertised in the
    initialize response.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class LogoutRequest:
    """Params of `logout`.

    Spec: authentication.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
