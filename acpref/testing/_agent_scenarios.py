"""The scenarios of ``check-agent``: one function per conversation, each on a fresh agent.

Spec: initialization.mdx, session-setup.mdx, session-list.mdx, session-delete.mdx,
session-modes.mdx, session-config-options.mdx, prompt-turn.mdx, cancellation.mdx, overview.mdx,
extensibility.mdx, transports.mdx. Each scenario lists the clauses it decides; the oracle judges
every message besides (a finding blamed on the agent fails its clause whatever the scenario).

Scenarios stay lean: one process each, a handful of requests, prompts only where a turn is the
point (a real model answers each one).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Optional

from .. import schema as s
from .._rules.agent_sends import TURN_CONTENT
from ..errors import ConnectionClosed, ErrorCode, RequestTimeout, RpcError
from ._check_agent import Scenario, ScenarioContext
from ._driver import _TURN_CONTENT, PendingTurn

__all__ = ["SCENARIOS"]

_STOP_REASONS = {"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}


# -- handshake ------------------------------------------------------------------------------------


def _handshake(ctx: ScenarioContext) -> None:
    response = ctx.driver.initialize(1)
    raw = ctx.driver.initialize_raw if isinstance(ctx.driver.initialize_raw, dict) else {}
    # spec INIT-07: a supported requested version is answered with that same version.
    ctx.check(
        "INIT-07",
        response.protocol_version == 1,
        f"answered protocolVersion {response.protocol_version!r}",
    )
    caps = raw.get("agentCapabilities")
    caps = caps if isinstance(caps, dict) else {}
    # spec INIT-04: the negotiated protocolVersion; agentCapabilities may be omitted (the schema's
    # default: the baseline only), but when present it is an object.
    ctx.check(
        "INIT-04",
        "agentCapabilities" not in raw or isinstance(raw["agentCapabilities"], dict),
        f"agentCapabilities is {type(raw.get('agentCapabilities')).__name__}, not an object",
    )
    session_caps = caps.get("sessionCapabilities")
    # spec INIT-19: loadSession lives at the top level only.
    ctx.check(
        "INIT-19",
        not (isinstance(session_caps, dict) and "loadSession" in session_caps),
        "loadSession advertised inside sessionCapabilities",
    )
    methods = raw.get("authMethods", [])
    bad = (
        [m for m in methods if not (isinstance(m, dict) and m.get("id") and m.get("name"))]
        if isinstance(methods, list)
        else [methods]
    )
    # spec AUTH-01: each auth method has an id and a name.
    ctx.check("AUTH-01", not bad, f"auth methods without id or name: {bad!r}")
    ctx.passed("INIT-05", "AUTH-05", "SCHEMA-12", "TRANSPORT-08", "RPC-01", "RPC-04")


def _version(ctx: ScenarioContext) -> None:
    # spec INIT-08: an unsupported version is answered with the agent's newest, never an error.
    try:
        response = ctx.driver.initialize(65000)
    except RpcError as exc:
        ctx.check(
            "INIT-08", False, f"initialize with protocolVersion 65000 answered error {exc.code}"
        )
        return
    version = response.protocol_version
    ctx.check(
        "INIT-08",
        type(version) is int and version != 65000,
        f"answered protocolVersion {version!r}",
    )


# -- sessions and prompt turns --------------------------------------------------------------------


def _prompt(ctx: ScenarioContext) -> None:
    ctx.initialize()
    first = ctx.new_session()
    setup = ctx.driver.last_session_response
    second = ctx.new_session()
    # spec SETUP-02: every new session id is unique.
    ctx.check("SETUP-02", first != second, f"two session/new answered the same id {first!r}")
    ctx.passed("OVERVIEW-02", "INIT-17")
    turn = ctx.driver.prompt(first, ctx.options.prompt)
    # spec PROMPT-17: one of the five stop reasons.
    ctx.check("PROMPT-17", turn.stop_reason in _STOP_REASONS, f"stopReason {turn.stop_reason!r}")
    foreign = [u for u in ctx.driver.updates(second) if isinstance(u, _TURN_CONTENT)]
    # spec PROMPT-06: the turn's updates carry the prompt's sessionId.
    ctx.check(
        "PROMPT-06", not foreign, f"{len(foreign)} updates of the turn went to the other session"
    )
    ctx.passed("PROMPT-11", "CONTENT-02", "PROMPT-26")
    link = {
        "type": "resource_link",
        "uri": f"file://{ctx.cwd}/acpref-check.txt",
        "name": "acpref-check.txt",
    }
    try:
        ctx.driver.prompt(first, link)
        ctx.passed("INIT-15", "CONTENT-09")
    except RpcError as exc:
        # spec INIT-15 and spec CONTENT-09: resource_link is baseline prompt content.
        ctx.check("CONTENT-09", False, f"a prompt with a resource_link block was refused: {exc}")
    _modes_and_options(ctx, first, setup)


def _modes_and_options(
    ctx: ScenarioContext, session_id: str, setup: Optional[s.NewSessionResponse]
) -> None:
    modes = (
        setup.modes if setup is not None and isinstance(setup.modes, s.SessionModeState) else None
    )
    if modes is None:
        ctx.skip("MODES-03", "the session offers no modes")
    else:
        others = [m.id for m in modes.available_modes if m.id != modes.current_mode_id]
        target = others[0] if others else modes.current_mode_id
        ctx.driver.request("session/set_mode", {"sessionId": session_id, "modeId": target})
        ctx.passed("MODES-03", "MODES-05", "MODES-02")
    options = (
        setup.config_options if setup is not None and isinstance(setup.config_options, list) else []
    )
    choice = _other_select_value(options)
    if choice is None:
        ctx.skip("CONFIG-16", "the session offers no select option with two values")
        return
    config_id, value = choice
    ctx.driver.request(
        "session/set_config_option",
        {"sessionId": session_id, "configId": config_id, "value": value},
    )
    ctx.passed("CONFIG-16", "CONFIG-19", "CONFIG-04")


def _other_select_value(options: List[Any]) -> Optional[tuple]:
    for option in options:
        kind = getattr(option, "kind", None)
        if not isinstance(kind, s.SessionConfigSelect):
            continue
        values: List[s.SessionConfigValueId] = []
        for item in kind.options:
            values.extend(o.value for o in item.options) if isinstance(
                item, s.SessionConfigSelectGroup
            ) else values.append(item.value)
        others = [v for v in values if v != kind.current_value]
        if others:
            return option.id, others[0]
    return None


# -- cancellation ---------------------------------------------------------------------------------


def _start_and_wait(ctx: ScenarioContext, session_id: str) -> tuple:
    """Start a turn and wait for its first sign of life: ``(pending, "update" | "request" | "done")``."""
    since = ctx.driver.sink.received_count
    pending = ctx.driver.prompt_async(session_id, ctx.cancel_prompt)

    def sign(m: Dict[str, Any]) -> bool:
        if m.get("method") == "session/update":
            params = m.get("params")
            params = params if isinstance(params, dict) else {}
            update = params.get("update")
            update = update if isinstance(update, dict) else {}
            return (
                params.get("sessionId") == session_id
                and update.get("sessionUpdate") in TURN_CONTENT
            )
        if "method" in m:
            return m["method"] == "session/request_permission"
        return m.get("id") == pending.request_id

    _, message = ctx.driver.sink.wait_for(sign, since=since, timeout=ctx.options.timeout)
    return pending, (
        "done"
        if "method" not in message
        else "update"
        if message["method"] == "session/update"
        else "request"
    )


def _hold_permission_and_cancel(
    ctx: ScenarioContext, session_id: str, flag: Dict[str, bool]
) -> None:
    def policy(request: s.RequestPermissionRequest) -> None:
        # spec PROMPT-21: cancel first, then answer the pending permission request "cancelled".
        flag["asked"] = True
        ctx.driver.cancel(session_id)
        return None

    ctx.driver.permission = policy


def _cancel(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    flag = {"asked": False}
    _hold_permission_and_cancel(ctx, session_id, flag)
    pending, first = _start_and_wait(ctx, session_id)
    if first == "update":
        ctx.driver.cancel(session_id)
    _judge_cancelled(ctx, "PROMPT-23", pending, first, flag)
    # $/cancel_request on a prompt: answered with a result or -32800 (CANCEL-05).
    pending, first = _start_and_wait(ctx, session_id)
    if first == "done":
        ctx.skip("CANCEL-05", "the turn ended before it could be cancelled; see --cancel-prompt")
        pending.result()
        return
    ctx.driver.connection.notify("$/cancel_request", {"requestId": pending.request_id})
    try:
        pending.result()
        ctx.passed("CANCEL-05")
    except RpcError as exc:
        ctx.check(
            "CANCEL-05",
            exc.code == ErrorCode.REQUEST_CANCELLED,
            f"answered error {exc.code}, not -32800",
        )


def _judge_cancelled(
    ctx: ScenarioContext, clause: str, pending: PendingTurn, first: str, flag: Dict[str, bool]
) -> None:
    if first == "done" and not flag["asked"]:
        ctx.skip(clause, "the turn ended before it could be cancelled; see --cancel-prompt")
        pending.result()
        return
    try:
        turn = pending.result()
    except RpcError as exc:
        # spec PROMPT-24: a cancelled turn never ends with a JSON-RPC error.
        ctx.check("PROMPT-24", False, f"the cancelled prompt answered error {exc.code}: {exc}")
        return
    ctx.passed("PROMPT-24")
    if turn.stop_reason == "cancelled":
        ctx.passed(clause)
    elif flag["asked"]:
        ctx.check(
            clause, False, f"cancelled while asking permission, the turn ended {turn.stop_reason!r}"
        )
    else:
        ctx.skip(
            clause,
            f"the turn ended {turn.stop_reason!r} right after the cancel (a race); see --cancel-prompt",
        )


# -- load, resume, list, delete, close ------------------------------------------------------------


def _load(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    turn = ctx.driver.prompt(session_id, ctx.options.prompt)
    before = len(ctx.driver.updates(session_id))
    ctx.driver.request("session/load", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    replay = ctx.driver.updates(session_id)[before:]
    users = "".join(_text(u) for u in replay if isinstance(u, s.UserMessageChunk))
    # spec SETUP-05: the whole conversation is replayed, the user's messages included.
    ctx.check(
        "SETUP-05",
        ctx.options.prompt in users,
        f"the replay has no user_message_chunk with the prompt ({len(replay)} updates)",
    )
    if turn.text:
        agents = "".join(_text(u) for u in replay if isinstance(u, s.AgentMessageChunk))
        ctx.check("SETUP-05", bool(agents), "the replay has none of the agent's messages")
    ctx.passed("SETUP-07", "SETUP-08", "SETUP-06")


def _text(update: Any) -> str:
    content = getattr(update, "content", None)
    return content.text if isinstance(content, s.TextContent) else ""


def _resume(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    ctx.driver.prompt(session_id, ctx.options.prompt)
    ctx.driver.request(
        "session/resume", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []}
    )
    ctx.passed("SETUP-12", "SETUP-13")


def _list(ctx: ScenarioContext) -> None:
    ctx.initialize()
    ctx.new_session()
    ctx.driver.request("session/list", {})
    ctx.passed("LIST-02", "LIST-05", "LIST-06")
    ctx.driver.request("session/list", {"cwd": ctx.cwd})
    ctx.passed("LIST-04")
    nowhere = os.path.join(ctx.cwd, "acpref-no-sessions-here")
    result = ctx.driver.request("session/list", {"cwd": nowhere})
    # spec LIST-09: no match is an empty array, not an error.
    ctx.check(
        "LIST-09",
        result.sessions == [],
        f"{len(result.sessions)} sessions listed under an empty directory",
    )
    try:
        ctx.driver.request("session/list", {"cursor": "acpref-not-a-cursor"})
        ctx.check("LIST-12", False, "an invalid cursor was answered with a result")
    except RpcError:
        ctx.passed("LIST-12")


def _delete(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    ctx.driver.request("session/delete", {"sessionId": session_id})
    ctx.passed("DELETE-02")
    if ctx.driver.supports("sessionCapabilities.list"):
        listed = ctx.driver.request("session/list", {"cwd": ctx.cwd})
        ids = [info.session_id for info in listed.sessions]
        # spec DELETE-03: a deleted session is never listed again.
        ctx.check(
            "DELETE-03", session_id not in ids, f"deleted session {session_id!r} still listed"
        )
    try:
        ctx.driver.request("session/delete", {"sessionId": session_id})
        ctx.passed("DELETE-04")
    except RpcError as exc:
        # spec DELETE-04: deleting an already deleted session succeeds silently.
        ctx.check("DELETE-04", False, f"a second delete answered error {exc.code}")


def _close(ctx: ScenarioContext) -> None:
    ctx.initialize()
    idle = ctx.new_session()
    ctx.driver.request("session/close", {"sessionId": idle})
    ctx.passed("SETUP-17")
    busy = ctx.new_session()
    flag = {"asked": False}
    closing: List[Any] = []
    lock = threading.Lock()

    def close_once() -> None:
        with lock:
            if not closing:  # answered only once the turn has ended: never waited for here
                closing.append(
                    ctx.driver.connection.request_async("session/close", {"sessionId": busy})
                )

    def policy(request: s.RequestPermissionRequest) -> None:
        flag["asked"] = True
        close_once()
        return None  # spec PROMPT-21 applies to close too: the pending request ends cancelled

    ctx.driver.permission = policy
    pending, first = _start_and_wait(ctx, busy)
    if first == "update":
        close_once()
    _judge_cancelled(ctx, "SETUP-16", pending, first, flag)
    for request in closing:
        request.result(ctx.options.timeout)


# -- bad input ------------------------------------------------------------------------------------


def _bad_input(ctx: ScenarioContext) -> None:
    d = ctx.driver
    ctx.initialize()
    since = d.sink.received_count
    d.send_raw(b"this is not JSON\n")
    answer = d.wait_response(None, since=since)
    # spec RPC-10: an unparseable line gets -32700 with id null.
    ctx.check("RPC-10", _code(answer) == ErrorCode.PARSE_ERROR, f"answered {answer!r}")
    answer = d.request_raw({"method": "acpref/unknown", "params": {}})
    # spec RPC-12: an unknown method gets -32601.
    ctx.check("RPC-12", _code(answer) == ErrorCode.METHOD_NOT_FOUND, f"answered {answer!r}")
    answer = d.request_raw({"method": "_acpref/unknown", "params": {}})
    # spec EXT-08: an unknown custom request gets -32601.
    ctx.check("EXT-08", _code(answer) == ErrorCode.METHOD_NOT_FOUND, f"answered {answer!r}")
    d.send_raw({"jsonrpc": "2.0", "method": "_acpref/notice", "params": {}})
    answer = d.request_raw({"method": "session/new", "params": {"cwd": 5, "mcpServers": []}})
    # spec RPC-13: params of the wrong type get -32602.
    ctx.check("RPC-13", _code(answer) == ErrorCode.INVALID_PARAMS, f"answered {answer!r}")
    d.send_raw(
        {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": "acpref-never-sent"},
        }
    )
    missing = {"sessionId": "acpref-no-such-session", "prompt": [{"type": "text", "text": "hi"}]}
    answer = d.request_raw({"method": "session/prompt", "params": missing})
    # spec RPC-17: a missing session is answered -32002 (a SHOULD; an error at least).
    ctx.check("RPC-17", _code(answer) == ErrorCode.RESOURCE_NOT_FOUND, f"answered {answer!r}")
    d.send_raw(
        {
            "jsonrpc": "2.0",
            "method": "session/cancel",
            "params": {"sessionId": "acpref-no-such-session"},
        }
    )
    params = {
        "cwd": ctx.cwd,
        "mcpServers": [],
        "_meta": {"acpref.dev/check": {"any": ["thing", 1]}},
    }
    answer = d.request_raw({"id": "acpref-string-id", "method": "session/new", "params": params})
    # spec RPC-04: the response echoes a string id exactly; EXT-02: _meta never causes an error.
    ctx.check("RPC-04", answer.get("id") == "acpref-string-id", f"answered {answer!r}")
    ctx.check("EXT-02", "result" in answer, f"a request with a custom _meta answered {answer!r}")
    ctx.passed("OVERVIEW-09", "CANCEL-06", "EXT-10")
    since = d.sink.received_count
    d.send_raw(b'{"jsonrpc":"2.0","id":"acpref-bad","method":42}\n')
    try:
        answer = _first_answer(d, ["acpref-bad", None], since)
    except TimeoutError as exc:
        answer = {"no answer": str(exc)}
    # spec RPC-11: valid JSON that is no request gets -32600.
    ctx.check("RPC-11", _code(answer) == ErrorCode.INVALID_REQUEST, f"answered {answer!r}")
    # The connection survives all of it: a normal session and turn still work.
    try:
        session_id = ctx.new_session()
        ctx.driver.prompt(session_id, ctx.options.prompt)
    except (RpcError, ConnectionClosed, RequestTimeout) as exc:
        # spec RPC-11 (and RPC-10): bad input is answered, and the connection goes on.
        ctx.check("RPC-11", False, f"after bad input the agent no longer serves: {exc}")


def _code(answer: Any) -> Any:
    error = answer.get("error") if isinstance(answer, dict) else None
    return error.get("code") if isinstance(error, dict) else None


def _first_answer(driver: Any, ids: List[Any], since: int) -> Dict[str, Any]:
    def matches(m: Any) -> bool:
        return (
            isinstance(m, dict)
            and "method" not in m
            and any(m.get("id") == i and type(m.get("id")) is type(i) for i in ids)
        )

    return driver.sink.wait_for(matches, since=since, timeout=driver.timeout)[1]


SCENARIOS = [
    Scenario(
        "handshake",
        _handshake,
        (
            "INIT-04",
            "INIT-05",
            "INIT-07",
            "INIT-19",
            "AUTH-01",
            "AUTH-05",
            "SCHEMA-12",
            "TRANSPORT-08",
            "RPC-01",
            "RPC-04",
        ),
        main="INIT-04",
    ),
    Scenario("version", _version, ("INIT-08",), main="INIT-08"),
    Scenario(
        "prompt",
        _prompt,
        (
            "SETUP-02",
            "OVERVIEW-02",
            "INIT-17",
            "PROMPT-06",
            "PROMPT-11",
            "PROMPT-17",
            "PROMPT-26",
            "CONTENT-02",
            "INIT-15",
            "CONTENT-09",
            "MODES-03",
            "CONFIG-16",
        ),
        main="OVERVIEW-02",
    ),
    Scenario("cancel", _cancel, ("PROMPT-23", "PROMPT-24", "CANCEL-05"), main="PROMPT-23"),
    Scenario(
        "load",
        _load,
        ("SETUP-05", "SETUP-06", "SETUP-07", "SETUP-08"),
        needs="loadSession",
        main="SETUP-05",
    ),
    Scenario(
        "resume",
        _resume,
        ("SETUP-12", "SETUP-13"),
        needs="sessionCapabilities.resume",
        main="SETUP-12",
    ),
    Scenario(
        "list",
        _list,
        ("LIST-02", "LIST-04", "LIST-05", "LIST-06", "LIST-09", "LIST-12"),
        needs="sessionCapabilities.list",
        main="LIST-02",
    ),
    Scenario(
        "delete",
        _delete,
        ("DELETE-02", "DELETE-03", "DELETE-04"),
        needs="sessionCapabilities.delete",
        main="DELETE-02",
    ),
    Scenario(
        "close",
        _close,
        ("SETUP-16", "SETUP-17"),
        needs="sessionCapabilities.close",
        main="SETUP-17",
    ),
    Scenario(
        "bad-input",
        _bad_input,
        (
            "RPC-10",
            "RPC-11",
            "RPC-12",
            "RPC-13",
            "RPC-17",
            "EXT-02",
            "EXT-08",
            "EXT-10",
            "OVERVIEW-09",
            "CANCEL-06",
        ),
        main="RPC-10",
    ),
]
