"""authentication.mdx: how a client signs in before it uses sessions.

The agent lists its ``authMethods`` in the ``initialize`` answer; a terminal method only to a
client that can run one (AUTH-05). The client calls ``authenticate`` with the id of a listed
method that is not a terminal one (AUTH-07, AUTH-08); after a successful ``authenticate`` the
agent no longer answers ``auth_required`` (AUTH-10) until ``logout``. Whether an agent gates
its session methods on authentication is its own policy: a live agent declares it
(``ProtocolState.requires_auth``), and its gated requests are then answered -32000 until
``authenticate`` succeeds (RPC-16, again after ``logout``, AUTH-17); the oracle, which cannot
know the policy, does not judge it.
"""

from __future__ import annotations

from typing import Iterable

from ..errors import ErrorCode
from .book import Message, check, transition
from .facts import ConnectionFacts
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS


@check("response", A, "initialize")
def _offered_methods(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    methods = m.result.get("authMethods") if isinstance(m.result, dict) else None
    if state.gate_open("auth.terminal", C):
        return
    for method in methods if isinstance(methods, list) else []:
        if isinstance(method, dict) and method.get("type") == "terminal":
            # spec AUTH-05: terminal auth methods only for a client with auth.terminal.
            yield finding(
                "AUTH-05",
                A,
                f"terminal auth method {method.get('id')!r} offered to a client without auth.terminal",
                m.index,
            )


#: The requests that need a successful ``authenticate`` first when the agent requires it.
AUTH_GATED = (
    "session/new",
    "session/load",
    "session/resume",
    "session/list",
    "session/delete",
    "session/close",
    "session/set_mode",
    "session/set_config_option",
    "session/prompt",
)


@check("request", C, *AUTH_GATED)
def _needs_authentication(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    requires = state.requires_auth
    if requires is not None and not state.authenticated and requires():
        # spec RPC-16, AUTH-17: authentication first (again after logout): -32000.
        # spec AUTH-18, spec-gap logout-sessions: the sessions set up before a logout as well.
        yield finding(
            "RPC-16",
            C,
            f"{m.method} needs authentication first",
            m.index,
            ErrorCode.AUTH_REQUIRED,
        )


@check("request", C, "authenticate")
def _authenticate(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    method_id = m.params.get("methodId")
    advertised = {a.get("id"): a for a in state.auth_methods if isinstance(a, dict)}
    if method_id not in advertised:
        # spec AUTH-07: methodId is the id of an advertised method.
        yield finding(
            "AUTH-07", C, f"authenticate with unadvertised method {method_id!r}", m.index, INVALID
        )
    elif advertised[method_id].get("type") == "terminal":
        # spec AUTH-08: a terminal method is never passed to authenticate.
        yield finding(
            "AUTH-08", C, f"authenticate with terminal method {method_id!r}", m.index, INVALID
        )


@transition("response", A, "authenticate")
def _authenticated(state: ConnectionFacts, m: Message) -> None:
    if not m.is_error:
        state.authenticated = True


@transition("response", A, "logout")
def _logged_out(state: ConnectionFacts, m: Message) -> None:
    if not m.is_error:
        state.authenticated = False


@check(
    "response", A, "session/new", "session/load", "session/resume", "session/prompt", "session/list"
)
def _auth_sticks(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if m.is_error and m.error.get("code") == ErrorCode.AUTH_REQUIRED and state.authenticated:
        # spec AUTH-10: after a successful authenticate, auth_required no longer comes back.
        yield finding(
            "AUTH-10",
            A,
            f"{m.method} answered auth_required after a successful authenticate",
            m.index,
        )
