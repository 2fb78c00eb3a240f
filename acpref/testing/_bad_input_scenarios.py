"""The bad-input scenario of ``check-agent``: what an agent answers to what no client should send.

Spec: overview.mdx (JSON-RPC errors, notifications), extensibility.mdx, cancellation.mdx
($/cancel_request), schema.json (params a method needs none of, ``x-deserialize-*``). The requests break rules on purpose: the oracle's findings blamed on the
driver fail nothing; what is judged is the agent's answer, and that the connection survives.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from ..errors import ConnectionClosed, ErrorCode, RpcError
from ._bad_lines import INVALID_REQUEST, UNPARSED, judge_bad_lines
from ._deadlines import Stalled
from ._scenario import AUTH_HINT, META, ScenarioContext

__all__ = ["bad_input"]


def bad_input(ctx: ScenarioContext) -> None:
    d = ctx.driver
    ctx.initialize()
    ctx.authenticate()
    # An agent that stops on these lines breaks no sentence: its end is the gap's finding.
    ctx.at("spec-gap:malformed-json")
    # spec RPC-10, RPC-11, spec-gap malformed-json: the answers to two lines no client sends.
    unparsed = _answer(ctx, UNPARSED)
    judge_bad_lines(ctx, unparsed, _answer(ctx, INVALID_REQUEST))
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
    params = {"cwd": ctx.cwd, "mcpServers": [], "_meta": META}
    answer = _answer(ctx, {"id": "acpref-string-id", "method": "session/new", "params": params})
    # spec RPC-04: the response echoes a string id exactly (the id checks above use errors).
    ctx.check("RPC-04", answer.get("id") == "acpref-string-id", _describe(answer, "id 'acpref-string-id'"))
    plain = _Plain(ctx)
    if not _auth_skipped(ctx, "EXT-02", answer):
        # spec EXT-02: _meta never causes an error.
        plain.judge("EXT-02", answer, "a session/new with _meta")
    _null_servers(ctx, plain)
    method = _method_without_params(ctx)
    if method == "session/list":
        _no_params(ctx, method)
    # The connection survives all of it: a normal session and turn still work.
    ctx.at("RPC-10", "RPC-11")
    session_id = ctx.new_session()
    ctx.prompt(session_id, ctx.options.prompt)
    _malformed_annotations(ctx, session_id)
    if method == "logout":
        _no_params(ctx, method)  # last: a logout ends the login the steps before it need


def _null_servers(ctx: ScenarioContext, plain: "_Plain") -> None:
    params = {"cwd": ctx.cwd, "mcpServers": None}
    answer = _answer(ctx, {"id": "acpref-null-servers", "method": "session/new", "params": params})
    if not _auth_skipped(ctx, "SCHEMA-18", answer):
        # spec SCHEMA-18: mcpServers is default-on-null: null reads as the empty list.
        plain.judge("SCHEMA-18", answer, "a session/new with mcpServers null")


def _malformed_annotations(ctx: ScenarioContext, session_id: str) -> None:
    """The prompt just served, again, its text block with ``annotations: 5``.

    TextContent.annotations is marked x-deserialize-default-on-error in schema.json, and a
    prompt is the one request of a client that carries such a field outside ``_meta`` (a
    ``_meta`` refused for its value alone is EXT-02's, judged by the oracle); session/new's
    mcpServers and additionalDirectories lost the mark (SCHEMA-20, SCHEMA-21).
    """
    block = {"type": "text", "text": ctx.options.prompt, "annotations": 5}
    ctx.at("SCHEMA-11")
    try:
        ctx.prompt(session_id, block, judged=True)
    except RpcError as exc:
        if exc.code != ErrorCode.INVALID_PARAMS:
            raise
        what = "a session/prompt whose text block has annotations 5 (marked default-on-error)"
        served = "the same prompt without it was served just before"
        # spec SCHEMA-11: a malformed default-on-error field is read as absent, not refused.
        ctx.check("SCHEMA-11", False, f"{what} answered error {exc.code}: {exc.detail}; {served}")
        return
    ctx.passed("SCHEMA-11")


#: The methods of an agent whose params have no required key, each with the capability that
#: offers it: what a client may send without params or with ``null`` (RPC-19). session/list
#: first: it changes nothing; logout ends the login.
_WITHOUT_REQUIRED_PARAMS = (("session/list", "sessionCapabilities.list"), ("logout", "auth.logout"))


def _method_without_params(ctx: ScenarioContext) -> Optional[str]:
    for method, gate in _WITHOUT_REQUIRED_PARAMS:
        if ctx.driver.supports(gate):
            return method
    gates = " nor ".join(gate for _, gate in _WITHOUT_REQUIRED_PARAMS)
    reason = f"the agent advertises neither {gates}: no method it offers takes no required params"
    ctx.skip("RPC-19", reason)
    return None


def _no_params(ctx: ScenarioContext, method: str) -> None:
    """``method`` sent without params and with ``"params": null``; a refusal counts only if the
    same request with ``{}`` is served (else the method is refused here, not its params)."""
    sent = [
        ("without params", {"id": "acpref-no-params", "method": method}),
        ("with params null", {"id": "acpref-null-params", "method": method, "params": None}),
    ]
    refused = []
    for how, message in sent:
        answer = _answer(ctx, message)
        if "result" not in answer:
            refused.append(f"{method} {how} {_describe(answer, 'the result {} gets')}")
    if not refused:
        ctx.passed("RPC-19")
        return
    plain = _answer(ctx, {"id": "acpref-empty-params", "method": method, "params": {}})
    if _auth_skipped(ctx, "RPC-19", plain):
        return
    if "result" not in plain:
        why = f"{method} with params {{}} was refused too: {_describe(plain, 'a result')}"
        ctx.skip("RPC-19", f"not reached: {why}")
        return
    # spec RPC-19: omitted or null params of a method with no required params read as {}.
    ctx.check("RPC-19", False, "; ".join(refused))


class _Plain:
    """The plain ``session/new`` a refusal is measured against, sent once, when first needed.

    A session/new that carries what a clause is about (``_meta``, ``mcpServers: null``) and is
    refused proves the clause broken only if the same request without it is served: an agent
    that cannot open any session here (its environment refused) breaks neither.
    """

    def __init__(self, ctx: ScenarioContext) -> None:
        self.ctx = ctx
        self._answer: Dict[str, Any] = {}

    def answer(self) -> Dict[str, Any]:
        if not self._answer:
            params = {"cwd": self.ctx.cwd, "mcpServers": []}
            message = {"id": "acpref-plain", "method": "session/new", "params": params}
            self._answer = _answer(self.ctx, message)
        return self._answer

    def judge(self, clause: str, answer: Dict[str, Any], what: str) -> None:
        if "result" in answer:
            self.ctx.passed(clause)
        elif "result" in self.answer():
            wanted = "a session, as for a plain session/new"
            self.ctx.check(clause, False, f"{what} {_describe(answer, wanted)}")
        else:
            refused = _describe(self.answer(), "a session")
            reason = f"not reached: {what} was refused, and so was a plain one: {refused}"
            self.ctx.skip(clause, reason)


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
    # spec EXT-07: these are custom requests (_acpref/unknown): answered under their own ids.
    ctx.check("EXT-07", not wrong, "; ".join(wrong))


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
    ``{"no answer": ...}`` when none came within the timeout to a line that is no request.
    """
    d = ctx.driver
    method = message.get("method") if isinstance(message, dict) else None
    # A line no client sends may go unanswered (spec-gap malformed-json: judged as such); a
    # request of a string method that gets no answer in time stops the scenario (what comes
    # after it is not reached), and its kind is not sent again in the run (AgentDriver.stalled).
    kind = method if isinstance(method, str) else f"a bad line ({_line(message)[:40]})"
    since = d.sink.received_count
    try:
        with d.deadlines.waiting(kind):
            if isinstance(message, dict):
                d.send_raw({"jsonrpc": "2.0", **message})
            else:
                d.send_raw(message)
            return d.sink.wait_for(
                lambda m: isinstance(m, dict) and "method" not in m,
                since=since,
                timeout=ctx.options.timeout,
            )[1]
    except TimeoutError as exc:
        if d.sink.wait_peer_eof(0):
            raise ConnectionClosed(f"the agent closed its output after {_line(message)}") from None
        if isinstance(method, str):
            raise
        return {"no answer": f"{exc} (see --timeout)"}
    except Stalled as exc:
        if isinstance(method, str):
            raise
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
