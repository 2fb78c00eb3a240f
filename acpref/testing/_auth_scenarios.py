"""The authentication scenario of ``check-agent``: log in, open a session, log out.

Spec: authentication.mdx. Whether an agent gates its session methods on authentication is its
own policy, so the scenario first asks for a session before logging in: an answer -32000 tells
that ``session/new`` is gated, which is what makes the login and the logout visible. It needs
``--auth METHOD_ID`` (one of the agent's ``authMethods``); without it every clause is SKIPPED
with the reason: the run's notes ask for ``--auth`` only when the agent requires it (answers
session/new -32000), not when it merely offers a method.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List

from ..errors import ErrorCode, RpcError
from ._scenario import AUTH_HINT, ScenarioContext

__all__ = ["CLAUSES", "authentication"]

#: What the scenario decides, in the order it decides them.
CLAUSES = ("AUTH-09", "AUTH-10", "AUTH-16", "AUTH-17")


def authentication(ctx: ScenarioContext) -> None:
    ctx.initialize()
    raw = ctx.driver.initialize_raw if isinstance(ctx.driver.initialize_raw, dict) else {}
    offered = _offered(raw.get("authMethods"))
    method = ctx.options.auth_method
    if method is None or method not in offered:
        reason = _why_not(method, offered)
        if method is None and offered:
            ctx.at()  # an unexpected error here is no verdict either
            if not _needs_login(ctx):
                # Offered, not required: nothing was left unreached, so no note asks for --auth.
                reason = (f"the agent offers authentication ({', '.join(offered)}) and serves "
                          "sessions without it: --auth METHOD_ID would check the login too")
        for clause in CLAUSES:
            ctx.skip(clause, reason)
        return
    # An unexpected error before the login is no verdict: what follows needs the login.
    ctx.at()
    gated = _needs_login(ctx)
    # spec AUTH-09: a successful authenticate answers an (empty) object.
    if not _answers_an_object(ctx, "AUTH-09", "authenticate", {"methodId": method}, CLAUSES):
        return
    ctx.at()
    # spec AUTH-10: after the login, session/new is no longer answered auth_required.
    if _needs_login(ctx):
        ctx.check("AUTH-10", False, "session/new answered -32000 after a successful authenticate")
    else:
        ctx.passed("AUTH-10")
    if not ctx.driver.supports("auth.logout"):
        for clause in ("AUTH-16", "AUTH-17"):
            ctx.skip(clause, "the agent does not advertise auth.logout")
        return
    _logout(ctx, gated)


def _answers_an_object(
    ctx: ScenarioContext,
    clause: str,
    method: str,
    params: Dict[str, Any],
    not_reached: Iterable[str],
) -> bool:
    """Send ``method``: an error skips ``not_reached``; a success must answer an object.

    "On success" is what the page rules on, so a refused call is no violation we can name. Keys
    a newer schema may add to the answer are the oracle's forward-compatibility warnings.
    """
    ctx.at(clause)
    result = ctx.driver.request_raw({"method": method, "params": params})
    if "error" in result:
        for skipped in not_reached:
            ctx.skip(skipped, f"not reached: {method} {params} answered error {result['error']!r}")
        return False
    ctx.check(
        clause,
        isinstance(result.get("result"), dict),
        f"{method} answered result {result.get('result')!r}, not an object",
    )
    return True


def _logout(ctx: ScenarioContext, gated: bool) -> None:
    """``logout``, then a session asked for again: it needs the login again when it did first."""
    # spec AUTH-16: a successful logout answers an (empty) object.
    if not _answers_an_object(ctx, "AUTH-16", "logout", {}, ("AUTH-16", "AUTH-17")):
        return
    if not gated:
        ctx.skip(
            "AUTH-17",
            "session/new needed no authentication before the login, so none is due after logout",
        )
        return
    ctx.at()
    # spec AUTH-17, spec-gap logout-gate: a session that needed the login needs it again.
    ctx.check(
        "AUTH-17",
        _needs_login(ctx),
        "session/new, answered -32000 before the login, was served after logout",
    )


def _why_not(method: Any, offered: List[str]) -> str:
    if not offered:
        return "the agent offers no authentication method it completes via authenticate"
    if method is None:
        return f"{AUTH_HINT} (the agent offers: {', '.join(offered)})"
    return f"--auth {method!r} is not one of the agent's authMethods ({', '.join(offered)})"


def _offered(methods: Any) -> List[str]:
    """The ids of the advertised methods completed via ``authenticate`` (not terminal ones)."""
    out: List[str] = []
    for m in methods if isinstance(methods, list) else []:
        if isinstance(m, dict) and isinstance(m.get("id"), str) and m.get("type") != "terminal":
            out.append(m["id"])
    return out


def _needs_login(ctx: ScenarioContext) -> bool:
    """Ask for a session: True when it is answered -32000 (auth required)."""
    params: Dict[str, Any] = {"cwd": ctx.cwd, "mcpServers": []}
    try:
        ctx.driver.request("session/new", params)
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            return True
        raise
    return False
