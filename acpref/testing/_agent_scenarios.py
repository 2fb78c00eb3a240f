"""The scenarios of ``check-agent``: one function per conversation, each on a fresh agent.

Spec: initialization.mdx, session-setup.mdx, session-list.mdx, session-delete.mdx,
session-modes.mdx, session-config-options.mdx, prompt-turn.mdx, cancellation.mdx, overview.mdx,
extensibility.mdx, transports.mdx. Each scenario lists the clauses it decides; the oracle judges
every message besides (a finding blamed on the agent fails its clause whatever the scenario).

Scenarios stay lean: one process each, a handful of requests, prompts only where a turn is the
point (a real model answers each one).
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import schema as s
from .._core.prompt_turn import TURN_CONTENT
from ..errors import ConnectionClosed, ErrorCode, RequestTimeout, RpcError
from ._check_agent import AUTH_HINT, BUSY_HINT, Scenario, ScenarioContext
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
        evidence = f"initialize with protocolVersion 65000 answered error {exc.code}: {exc.detail}"
        ctx.check("INIT-08", False, evidence)
        return
    version = response.protocol_version
    ctx.check(
        "INIT-08",
        type(version) is int and version != 65000,
        f"answered protocolVersion {version!r}",
    )


# -- sessions and prompt turns --------------------------------------------------------------------


#: ``_meta`` values no agent defines: they must never cause an error (EXT-02).
_META = {"acpref.dev/check": {"any": ["thing", 1, None], "\u00e9": "\u65e5\u672c"}}


def _prompt(ctx: ScenarioContext) -> None:
    ctx.initialize()
    ctx.at("OVERVIEW-02", "INIT-17")
    first = ctx.new_session()
    setup = ctx.driver.last_session_response
    second = ctx.new_session()
    # spec SETUP-02: every new session id is unique.
    ctx.check("SETUP-02", first != second, f"two session/new answered the same id {first!r}")
    ctx.passed("OVERVIEW-02", "INIT-17")
    ctx.at("PROMPT-11")
    # Non-ASCII text both ways (TRANSPORT-01: every byte the agent writes must be UTF-8), and
    # _meta at the params root and on the content block (EXT-02).
    block = {"type": "text", "text": ctx.options.prompt, "_meta": _META}
    try:
        turn = ctx.driver.prompt_async(first, block, meta=_META).result()
        ctx.passed("EXT-02")
    except RpcError as exc:
        turn = ctx.driver.prompt(first, ctx.options.prompt)
        # spec EXT-02: the same prompt without _meta was served, so _meta caused the error.
        evidence = f"a prompt with _meta answered error {exc.code}: {exc.detail}"
        ctx.check("EXT-02", False, evidence)
    ctx.passed("PROMPT-11", "CONTENT-02", "TRANSPORT-01")
    # spec PROMPT-17: one of the five stop reasons.
    ctx.check("PROMPT-17", turn.stop_reason in _STOP_REASONS, f"stopReason {turn.stop_reason!r}")
    foreign = [u for u in ctx.driver.updates(second) if isinstance(u, _TURN_CONTENT)]
    # spec PROMPT-06: the turn's updates carry the prompt's sessionId.
    ctx.check(
        "PROMPT-06", not foreign, f"{len(foreign)} updates of the turn went to the other session"
    )
    link = {
        "type": "resource_link",
        "uri": f"file://{ctx.cwd}/acpref-check.txt",
        "name": "acpref-check.txt",
    }
    ctx.at("INIT-15", "CONTENT-09")
    try:
        ctx.driver.prompt(first, link)
        ctx.passed("INIT-15", "CONTENT-09")
    except RpcError as exc:
        # spec INIT-15 and spec CONTENT-09: resource_link is baseline prompt content.
        ctx.check("INIT-15", False, f"a prompt with a resource_link block was refused: {exc}")
        ctx.check("CONTENT-09", False, f"a prompt with a resource_link block was refused: {exc}")
    # The oracle judges every update of both turns; one more round trip lets late ones arrive
    # while the connection is still open (PROMPT-26: none after the answer).
    _round_trip(ctx)
    ctx.passed("PROMPT-26")
    _modes_and_options(ctx, first, setup)


def _round_trip(ctx: ScenarioContext) -> Dict[str, Any]:
    """A request every agent answers at once (an unknown custom method): a point in time."""
    return ctx.driver.request_raw({"method": "_acpref/ping", "params": {}})


def _modes_and_options(
    ctx: ScenarioContext, session_id: str, setup: Optional[s.NewSessionResponse]
) -> None:
    modes = (
        setup.modes if setup is not None and isinstance(setup.modes, s.SessionModeState) else None
    )
    if modes is None:
        for clause in ("MODES-03", "MODES-05", "MODES-02"):
            ctx.skip(clause, "the session offers no modes")
    else:
        others = [m.id for m in modes.available_modes if m.id != modes.current_mode_id]
        target = others[0] if others else modes.current_mode_id
        ctx.at("MODES-03", "MODES-05", "MODES-02")
        ctx.driver.request("session/set_mode", {"sessionId": session_id, "modeId": target})
        ctx.passed("MODES-03", "MODES-05", "MODES-02")
    options = (
        setup.config_options if setup is not None and isinstance(setup.config_options, list) else []
    )
    choice = _other_select_value(options)
    if choice is None:
        for clause in ("CONFIG-16", "CONFIG-19", "CONFIG-04"):
            ctx.skip(clause, "the session offers no select option with two values")
        return
    config_id, value = choice
    ctx.at("CONFIG-16", "CONFIG-19", "CONFIG-04")
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

#: acpref's own reading of a cancellation: the agent had the cancel and went on (see _judge).
IGNORED = "spec-gap:cancel-ignored"


class _Cancel:
    """Sends the cancel of one busy turn once, and remembers when (wall clock and wire)."""

    def __init__(self, ctx: ScenarioContext, send: Callable[[], None]) -> None:
        self.ctx = ctx
        self._send = send
        self._lock = threading.Lock()
        self.sent_at: Optional[float] = None
        self.since = 0
        self.asked = False  # a permission request was pending when we cancelled
        self.probe_id = f"acpref-after-cancel-{id(self)}"

    def __call__(self) -> None:
        with self._lock:
            if self.sent_at is not None:
                return
            self.since = self.ctx.driver.sink.received_count
            self._send()
            self.sent_at = time.monotonic()
            # A request sent after the cancel: an agent that answers it has read the cancel.
            self.ctx.driver.send_raw(
                {"jsonrpc": "2.0", "id": self.probe_id, "method": "_acpref/ping", "params": {}}
            )

    def policy(self, request: s.RequestPermissionRequest) -> None:
        # spec PROMPT-21: cancel first, then answer the pending permission request "cancelled".
        self.asked = True
        self()
        return None


def _busy_turn(ctx: ScenarioContext, session_id: str) -> Tuple[PendingTurn, str]:
    """Start the busy prompt and wait for its first sign of life, at most ``cancel_after`` s.

    ``"update"`` (it streamed), ``"request"`` (it asked permission), ``"done"`` (it ended
    already) or ``"quiet"`` (nothing yet: it is cancelled anyway, before any content).
    """
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

    try:
        _, message = ctx.driver.sink.wait_for(sign, since=since, timeout=ctx.options.cancel_after)
    except TimeoutError:
        if pending.done:
            return pending, "done"
        return pending, "quiet"
    if "method" not in message:
        return pending, "done"
    return pending, "update" if message["method"] == "session/update" else "request"


def _cancel_busy_turn(
    ctx: ScenarioContext, session_id: str, clause: str, send: Callable[[], None]
) -> None:
    """Cancel a busy turn (``send``: session/cancel, session/close...) and judge how it ends."""
    cancel = _Cancel(ctx, send)
    ctx.driver.permission = cancel.policy
    pending, first = _busy_turn(ctx, session_id)
    if first == "done" and not cancel.asked:
        pending.result()
        for c in (clause, IGNORED):
            ctx.skip(c, f"the turn ended before it could be cancelled; {BUSY_HINT}")
        return
    cancel()  # when the agent asked permission, the policy may have sent it already
    _judge(ctx, clause, pending, cancel)


def _judge(ctx: ScenarioContext, clause: str, pending: PendingTurn, cancel: _Cancel) -> None:
    try:
        turn = pending.result()
    except RpcError as exc:
        evidence = f"the cancelled prompt answered error {exc.code}: {exc.detail}"
        # spec PROMPT-24: a cancelled turn never ends with a JSON-RPC error.
        ctx.check("PROMPT-24", False, evidence)
        ctx.check(clause, False, evidence)
        ctx.skip(IGNORED, f"the turn ended with an error: see {clause}")
        return
    ended_at = time.monotonic()
    ctx.passed("PROMPT-24")
    if turn.stop_reason == "cancelled":
        ctx.passed(clause, IGNORED)
        return
    ended = f"the turn ended {turn.stop_reason!r}, not 'cancelled'"
    if cancel.asked:
        # spec PROMPT-23: the agent waited on our permission answer, which came after the
        # cancel: it cannot have finished before it read the cancel.
        evidence = f"cancelled while asking permission, {ended}"
        ctx.check(clause, False, evidence)
        ctx.check(IGNORED, False, evidence)
        return
    after = _after_cancel(ctx, cancel, pending.request_id)
    late = ended_at - (cancel.sent_at or ended_at)
    if late > ctx.options.cancel_grace or after["streamed_after_probe"]:
        # spec-gap cancel-ignored: the agent demonstrably had the cancel and kept working.
        facts = [f"{ended} {late:.1f}s after session/cancel"]
        facts.append(f"{after['updates']} turn updates came after the cancel")
        if after["streamed_after_probe"]:
            facts.append(
                "it answered a request sent after the cancel and streamed "
                f"{after['streamed_after_probe']} more updates before ending the turn"
            )
        ctx.check(IGNORED, False, "; ".join(facts))
        ctx.skip(
            clause,
            f"{ended}; that the agent had read the cancel is acpref's reading ({IGNORED})",
        )
        return
    reason = f"{ended} {late:.1f}s after the cancel (a race); {BUSY_HINT}"
    for c in (clause, IGNORED):
        ctx.skip(c, reason)


def _after_cancel(ctx: ScenarioContext, cancel: _Cancel, prompt_id: Any) -> Dict[str, int]:
    """What the agent sent between the cancel and the prompt's answer."""
    updates = probe_answered = streamed_after_probe = 0
    for _, m in ctx.driver.sink.received(cancel.since):
        if not isinstance(m, dict):
            continue
        if "method" not in m and m.get("id") == prompt_id:
            break
        if "method" not in m and m.get("id") == cancel.probe_id:
            probe_answered = 1
        elif m.get("method") == "session/update" and _is_turn_content(m):
            updates += 1
            streamed_after_probe += probe_answered
    return {"updates": updates, "streamed_after_probe": streamed_after_probe}


def _is_turn_content(m: Dict[str, Any]) -> bool:
    params = m.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") in TURN_CONTENT


def _cancel(ctx: ScenarioContext) -> None:
    ctx.initialize()
    ctx.at("PROMPT-23")
    session_id = ctx.new_session()
    _cancel_busy_turn(ctx, session_id, "PROMPT-23", lambda: ctx.driver.cancel(session_id))
    # $/cancel_request on a prompt: answered with a result or -32800 (CANCEL-05).
    ctx.at("CANCEL-05")
    ctx.driver.permission = None
    pending, first = _busy_turn(ctx, session_id)
    if first == "done":
        ctx.skip("CANCEL-05", f"the turn ended before it could be cancelled; {BUSY_HINT}")
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
            f"answered error {exc.code} ({exc.detail}), not -32800",
        )


# -- load, resume, list, delete, close ------------------------------------------------------------


def _load(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    turn = ctx.driver.prompt(session_id, ctx.options.prompt)
    ctx.at("SETUP-05", "SETUP-08")
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
    ctx.at("SETUP-13")
    before = len(ctx.driver.updates(session_id))
    ctx.driver.request(
        "session/resume", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []}
    )
    ctx.passed("SETUP-13")
    _round_trip(ctx)  # a replay sent just after the answer arrives before this one's
    replayed = [
        u for u in ctx.driver.updates(session_id)[before:] if isinstance(u, s.UserMessageChunk)
    ]
    # spec SETUP-12: resume restores the session without replaying it (before or after its
    # answer: the oracle judges what comes before it).
    ctx.check(
        "SETUP-12",
        not replayed,
        f"{len(replayed)} user_message_chunk updates of the history came with session/resume",
    )


def _list(ctx: ScenarioContext) -> None:
    ctx.initialize()
    ctx.new_session()
    ctx.at("LIST-02")
    ctx.driver.request("session/list", {})
    ctx.passed("LIST-02", "LIST-05", "LIST-06")
    ctx.at("LIST-04")
    ctx.driver.request("session/list", {"cwd": ctx.cwd})
    ctx.passed("LIST-04")
    ctx.at("LIST-09")
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
    ctx.at("DELETE-02")
    ctx.driver.request("session/delete", {"sessionId": session_id})
    ctx.passed("DELETE-02")
    ctx.at("DELETE-03")
    if not ctx.driver.supports("sessionCapabilities.list"):
        ctx.skip("DELETE-03", "the agent does not advertise sessionCapabilities.list")
    else:
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
        evidence = f"a second delete answered error {exc.code}: {exc.detail}"
        ctx.check("DELETE-04", False, evidence)


def _close(ctx: ScenarioContext) -> None:
    ctx.initialize()
    ctx.at("SETUP-17")
    idle = ctx.new_session()
    ctx.driver.request("session/close", {"sessionId": idle})
    ctx.passed("SETUP-17")
    ctx.at("SETUP-16")
    busy = ctx.new_session()
    closing: List[Any] = []

    def close() -> None:  # answered only once the turn has ended: never waited for here
        closing.append(ctx.driver.connection.request_async("session/close", {"sessionId": busy}))

    _cancel_busy_turn(ctx, busy, "SETUP-16", close)
    for request in closing:
        request.result(ctx.options.timeout)


# -- MCP servers ----------------------------------------------------------------------------------


def _mcp(ctx: ScenarioContext) -> None:
    from ._mcp_check import McpProbe, initialized

    ctx.initialize()
    http = ctx.driver.supports("mcpCapabilities.http")
    with McpProbe(http=http) as probe:
        ctx.at("SETUP-30")
        session_id = ctx.new_session(mcp_servers=probe.servers())
        # Most agents connect while they open the session; some only at the first turn.
        if not probe.wait_initialized(ctx.options.mcp_wait):
            ctx.at("SETUP-36")
            ctx.driver.prompt(session_id, ctx.options.prompt)
            probe.wait_initialized(ctx.options.mcp_wait)
        stdio = list(probe.stdio.items)
        http_items = list(probe.http.items) if probe.http is not None else []
    when = "after session/new and one prompt turn"
    if not stdio:
        evidence = f"the agent never started the stdio MCP server it was given ({when})"
        # spec SETUP-36: the agent connects to every MCP server the client supplied.
        ctx.check("SETUP-36", False, evidence)
        ctx.skip("SETUP-30", "the agent never started the stdio MCP server: see SETUP-36")
    elif not initialized(stdio):
        sent = [m.get("method") for m in stdio if isinstance(m, dict) and "method" in m]
        evidence = (
            f"the agent started the stdio MCP server but never completed its handshake "
            f"(initialize, then notifications/initialized); it sent {sent}"
        )
        # spec SETUP-30: stdio MCP servers are supported, which takes the MCP handshake.
        ctx.check("SETUP-30", False, evidence)
        ctx.check("SETUP-36", False, evidence)
    else:
        ctx.passed("SETUP-30")
        started = stdio[0].get("started", {}) if isinstance(stdio[0], dict) else {}
        if started.get("env") != "1":
            ctx.report.notes.append(
                "[mcp] the agent started the stdio MCP server without the env it was given "
                "(ACPREF_PROBE=1)"
            )
        if not http:
            ctx.passed("SETUP-36")
    if not http:
        ctx.skip("SETUP-31", "the agent does not advertise mcpCapabilities.http")
        return
    if initialized(http_items):
        ctx.passed("SETUP-31")
        if initialized(stdio):
            ctx.passed("SETUP-36")
        return
    evidence = (
        f"the agent advertises mcpCapabilities.http but never initialized the HTTP MCP server "
        f"it was given ({when}; it sent "
        f"{[m.get('method') for m in http_items if isinstance(m, dict) and 'method' in m]})"
    )
    # spec SETUP-31, SETUP-36: an advertised HTTP transport is used for the servers given.
    ctx.check("SETUP-31", False, evidence)
    ctx.check("SETUP-36", False, evidence)


# -- bad input ------------------------------------------------------------------------------------


def _bad_input(ctx: ScenarioContext) -> None:
    d = ctx.driver
    ctx.initialize()
    ctx.authenticate()
    ctx.at("RPC-10")
    answer = _answer(ctx, b"this is not JSON\n")
    # spec RPC-10: an unparseable line gets -32700 with id null (present, and null).
    ctx.check(
        "RPC-10",
        _code(answer) == ErrorCode.PARSE_ERROR and "id" in answer and answer["id"] is None,
        _describe(answer, "-32700 with id null"),
    )
    answer = _answer(ctx, b'{"jsonrpc":"2.0","id":"acpref-bad","method":42}\n')
    # spec RPC-11: valid JSON that is no request gets -32600, under its id or id null.
    ctx.check(
        "RPC-11",
        _code(answer) == ErrorCode.INVALID_REQUEST and answer.get("id", 0) in ("acpref-bad", None),
        _describe(answer, "-32600 with id 'acpref-bad' or null"),
    )
    answer = _answer(ctx, {"id": "acpref-unknown", "method": "acpref/unknown", "params": {}})
    # spec RPC-12: an unknown method gets -32601.
    ctx.check(
        "RPC-12", _code(answer) == ErrorCode.METHOD_NOT_FOUND, _describe(answer, "-32601")
    )
    answer = _answer(ctx, {"id": "acpref-ext", "method": "_acpref/unknown", "params": {}})
    # spec EXT-08: an unknown custom request gets -32601.
    ctx.check(
        "EXT-08", _code(answer) == ErrorCode.METHOD_NOT_FOUND, _describe(answer, "-32601")
    )
    _ids(ctx)
    _notifications(ctx)
    bad = {"id": "acpref-bad-params", "method": "session/new", "params": {"cwd": 5, "mcpServers": []}}
    answer = _answer(ctx, bad)
    if not _auth_skipped(ctx, "RPC-13", answer):
        # spec RPC-13: params of the wrong type get -32602.
        ctx.check(
            "RPC-13", _code(answer) == ErrorCode.INVALID_PARAMS, _describe(answer, "-32602")
        )
    missing = {"sessionId": "acpref-no-such-session", "prompt": [{"type": "text", "text": "hi"}]}
    answer = _answer(ctx, {"id": "acpref-missing", "method": "session/prompt", "params": missing})
    if not _auth_skipped(ctx, "RPC-17", answer):
        # spec RPC-17: a missing session is answered -32002 (a SHOULD).
        ctx.check(
            "RPC-17", _code(answer) == ErrorCode.RESOURCE_NOT_FOUND, _describe(answer, "-32002")
        )
    params = {"cwd": ctx.cwd, "mcpServers": [], "_meta": _META}
    answer = _answer(ctx, {"id": "acpref-string-id", "method": "session/new", "params": params})
    # spec RPC-04: the response echoes a string id exactly (the id checks above use errors).
    ctx.check("RPC-04", answer.get("id") == "acpref-string-id", _describe(answer, "id 'acpref-string-id'"))
    if not _auth_skipped(ctx, "EXT-02", answer):
        # spec EXT-02: _meta never causes an error.
        ctx.check("EXT-02", "result" in answer, f"a session/new with _meta answered {answer!r}")
    # The connection survives all of it: a normal session and turn still work.
    ctx.at("RPC-10", "RPC-11")
    session_id = ctx.new_session()
    ctx.driver.prompt(session_id, ctx.options.prompt)


#: Request ids of every JSON shape the spec allows (RequestId: integer or string), each of
#: which must come back with the same type and value (RPC-04). 2**53 - 1 is the largest integer
#: every JSON reader keeps exactly.
_IDS: List[Any] = [0, -7, 2**53 - 1, "42", "0", "", "\u00e9t\u00e9 \u65e5\u672c \U0001f642"]


def _ids(ctx: ScenarioContext) -> None:
    wrong = []
    for request_id in _IDS:
        answer = _answer(ctx, {"id": request_id, "method": "_acpref/unknown", "params": {}})
        got = answer.get("id", "(no id)") if "no answer" not in answer else "(no answer)"
        if not (type(got) is type(request_id) and got == request_id):
            wrong.append(f"id {json.dumps(request_id)} answered as {json.dumps(got)}")
    # spec RPC-04: a response echoes the request id exactly, same value and JSON type.
    ctx.check("RPC-04", not wrong, "; ".join(wrong))


#: Notifications, each of which must get no answer at all (not even an error without an id).
_NOTIFICATIONS = [
    ("EXT-10", {"method": "_acpref/notice", "params": {"\u00e9": 1}}),
    ("OVERVIEW-09", {"method": "acpref/notice", "params": {}}),
    ("OVERVIEW-09", {"method": "session/cancel", "params": {"sessionId": "acpref-no-such-session"}}),
    ("OVERVIEW-09", {"method": "session/cancel", "params": {"sessionId": 5}}),
    ("CANCEL-06", {"method": "$/cancel_request", "params": {"requestId": "acpref-never-sent"}}),
]


def _notifications(ctx: ScenarioContext) -> None:
    d = ctx.driver
    answered: Dict[str, List[str]] = {}
    for clause, message in _NOTIFICATIONS:
        since = d.sink.received_count
        d.send_raw({"jsonrpc": "2.0", **message})
        probe = d.request_raw({"method": "_acpref/ping", "params": {}})
        for _, m in d.sink.received(since):
            if isinstance(m, dict) and "method" not in m and m is not probe:
                answered.setdefault(clause, []).append(
                    f"the {message['method']} notification was answered {json.dumps(m)[:200]}"
                )
    # spec OVERVIEW-09, CANCEL-06, EXT-10: a notification is never answered, not even with an
    # error (an error without an id is an answer too).
    for clause in ("OVERVIEW-09", "CANCEL-06", "EXT-10"):
        ctx.check(clause, clause not in answered, "; ".join(answered.get(clause, [])))


def _answer(ctx: ScenarioContext, message: Any) -> Dict[str, Any]:
    """Send one raw line or request with nothing else in flight; the first response to come.

    Any response counts (whatever its id, with none at all): its envelope is what is judged.
    ``{"no answer": ...}`` when none came within the timeout.
    """
    d = ctx.driver
    since = d.sink.received_count
    if isinstance(message, dict):
        d.send_raw({"jsonrpc": "2.0", **message})
    else:
        d.send_raw(message)
    try:
        return d.sink.wait_for(
            lambda m: isinstance(m, dict) and "method" not in m,
            since=since,
            timeout=ctx.options.timeout,
        )[1]
    except TimeoutError as exc:
        if d.sink.wait_peer_eof(0):
            raise ConnectionClosed(f"the agent closed its output after {_line(message)}") from None
        return {"no answer": str(exc)}


def _line(message: Any) -> str:
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else json.dumps(message)
    return text.strip()[:120]


def _describe(answer: Dict[str, Any], wanted: str) -> str:
    if "no answer" in answer:
        return f"no answer ({answer['no answer']}), wanted {wanted}"
    if "id" not in answer:
        return f"answered without an id: {json.dumps(answer)[:300]}, wanted {wanted}"
    return f"answered {json.dumps(answer)[:300]}, wanted {wanted}"


def _auth_skipped(ctx: ScenarioContext, clause: str, answer: Dict[str, Any]) -> bool:
    """spec RPC-16: -32000 may come before any other check of a session method: no verdict."""
    if _code(answer) != ErrorCode.AUTH_REQUIRED or ctx.options.auth_method:
        return False
    ctx.skip(clause, f"answered -32000 auth required before anything else; {AUTH_HINT}")
    return True


def _code(answer: Any) -> Any:
    error = answer.get("error") if isinstance(answer, dict) else None
    return error.get("code") if isinstance(error, dict) else None


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
            "TRANSPORT-01",
            "EXT-02",
            "INIT-15",
            "CONTENT-09",
            "MODES-02",
            "MODES-03",
            "MODES-05",
            "CONFIG-04",
            "CONFIG-16",
            "CONFIG-19",
        ),
        main="OVERVIEW-02",
    ),
    Scenario(
        "cancel", _cancel, ("PROMPT-23", "PROMPT-24", IGNORED, "CANCEL-05"), main="PROMPT-23"
    ),
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
        ("SETUP-16", "SETUP-17", "PROMPT-24", IGNORED),
        needs="sessionCapabilities.close",
        main="SETUP-17",
    ),
    Scenario("mcp", _mcp, ("SETUP-30", "SETUP-31", "SETUP-36"), main="SETUP-30"),
    Scenario(
        "bad-input",
        _bad_input,
        (
            "RPC-04",
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
