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


@attrs.frozen(kw_only=True)
class AgentAuthCapabilities:
    """Authentication-related agent capabilities.

    Spec: authentication.mdx
    """

    logout: LogoutCapabilities | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class AuthMethodAgent:
    """Agent-handled login, completed with `authenticate`.

    Spec: authentication.mdx
    """

    type: ClassVar[str] = "agent"

    id: AuthMethodId = field(required=True)
    name: str = field(required=True)
    description: str | None | Unset = field(default_on_error=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class AuthMethodTerminal:
    """Terminal login: the client reruns the agent command interactively with these args and env.

    Spec: authentication.mdx
    """

    type: ClassVar[str] = "terminal"

    id: AuthMethodId = field(required=True)
    name: str = field(required=True)
    description: str | None | Unset = field(default_on_error=True)
    # spec SCHEMA-18, SCHEMA-20, SCHEMA-21: null reads as [] (env: {}); malformed is an error.
    args: List[str] | Unset = field(default_on_null=True)
    env: Dict[str, str] | Unset = field(default_on_null=True)
    meta: Meta | Unset = field(default_on_error=True)


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


@attrs.frozen(kw_only=True)
class LogoutResponse:
    """Result of `logout`.

    Spec: authentication.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class AuthenticateRequest:
    """Params of `authenticate`: the id of an agent-handled method.

    Spec: authentication.mdx
    """

    method_id: AuthMethodId = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class LogoutRequest:
    """Params of `logout`.

    Spec: authentication.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
