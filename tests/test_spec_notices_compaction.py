"""Clause tests for what the schema of 2026-11-02 made stable: notices, compaction, tool names.

Clauses: NOTICE-01 .. NOTICE-10, COMPACT-01 .. COMPACT-15, TOOL-16 .. TOOL-23, SCHEMA-22, SCHEMA-24;
and the forward compatibility acpref keeps with a newer v1 peer (spec-gap forward-compatible).
Each rule is tried where acpref has it: the oracle names the clause in a transcript that breaks it
(and stays quiet on one that keeps it), the echo agent sends the feature only to a client that
advertised it, and the reference client, over real pipes, folds what it receives as the spec says.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import attrs
import pytest

from acpref import codec
from acpref import schema as s
from acpref.client import ReferenceClient
from acpref._tools.terminal import Renderer, describe_listed, permission_lines
from acpref.echo import EchoAgent
from acpref.errors import ErrorCode, RpcError
from acpref.oracle import Report, validate

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import FULL_CAPS, TestClient, in_process  # noqa: E402
from client_agent import ScriptedAgent  # noqa: E402
from client_harness import run_steps  # noqa: E402
from spec_wire import RecordingPair, note, ok, records, req  # noqa: E402

pytestmark = pytest.mark.timeout(60)

#: FULL_CAPS with the two new session capabilities.
NEW_CAPS = attrs.evolve(
    FULL_CAPS,
    session=attrs.evolve(
        FULL_CAPS.session,
        notices=s.NoticeCapabilities(),
        compaction=s.CompactionCapabilities(),
    ),
)
NEW_SESSION_CAPS = {"notices": {}, "compaction": {}}


# -- helpers --------------------------------------------------------------------------------------


def _judged(
    *messages: Tuple[str, Dict[str, Any]],
    session_caps: Optional[Dict] = None,
    newer_spec: bool = False,
) -> Report:
    """The oracle on: initialize (``session`` capabilities as given), session/new, ``messages``."""
    client_caps = {"session": session_caps} if session_caps is not None else {}
    opening = [
        ("client", req(0, "initialize", {
            "protocolVersion": 1,
            "clientCapabilities": client_caps,
            "clientInfo": {"name": "c", "version": "1"},
        })),
        ("agent", ok(0, {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "agentInfo": {"name": "a", "version": "1"},
            "authMethods": [],
        })),
        ("client", req(1, "session/new", {"cwd": "/work", "mcpServers": []})),
        ("agent", ok(1, {"sessionId": "s1"})),
    ]  # fmt: skip
    return validate(records(*opening, *messages), newer_spec=newer_spec)


def _in_turn(
    *updates: Dict[str, Any], session_caps: Optional[Dict] = None, newer_spec: bool = False
) -> Report:
    """The updates inside a prompt turn that ends normally."""
    text = [{"type": "text", "text": "x"}]
    prompt = req(2, "session/prompt", {"sessionId": "s1", "prompt": text})
    return _judged(
        ("client", prompt),
        *[("agent", _update(u)) for u in updates],
        ("agent", ok(2, {"stopReason": "end_turn"})),
        session_caps=session_caps,
        newer_spec=newer_spec,
    )


def _update(update: Dict[str, Any]) -> Dict[str, Any]:
    return note("session/update", {"sessionId": "s1", "update": update})


def _found(report: Report) -> List[Tuple[str, str]]:
    return [(f.clause, f.level) for f in report.findings]


NOTICE = {"sessionUpdate": "notice", "severity": "warning", "title": "MCP server unavailable"}
UPDATE = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}


def _compaction(status: str, **more: Any) -> Dict[str, Any]:
    return {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": status, **more}


def _chunk(text: str, compaction_id: str = "c1") -> Dict[str, Any]:
    return {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": compaction_id,
        "content": {"type": "text", "text": text},
    }


@pytest.fixture
def echo() -> Iterator[TestClient]:
    client = in_process(lambda c: EchoAgent(c), caps=NEW_CAPS)
    yield client
    client.close()


@pytest.fixture
def plain_echo() -> Iterator[TestClient]:
    """The echo agent with a client that advertises neither notices nor compaction."""
    client = in_process(lambda c: EchoAgent(c))
    yield client
    client.close()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Tuple[RecordingPair, ReferenceClient, str]]:
    client = ReferenceClient()
    p = RecordingPair(client, ScriptedAgent())
    try:
        yield p, client, p.new_session(str(tmp_path))
    finally:
        p.close()


# -- SCHEMA-24: the three new kinds are stable ----------------------------------------------------


def test_SCHEMA_24_notice_and_compaction_updates_are_stable_kinds() -> None:
    updates = (NOTICE, _compaction("in_progress"), _chunk("a"))
    report = _in_turn(*updates, session_caps=NEW_SESSION_CAPS)
    assert report.findings == []
    for update in (NOTICE, _compaction("completed"), _chunk("x")):
        decoded = codec.decode(
            {"sessionId": "s1", "update": update}, s.SessionNotification, strict=True
        )
        assert not isinstance(decoded.update, s.Unknown)


# -- Notices --------------------------------------------------------------------------------------


def test_NOTICE_01_no_notice_to_a_client_without_the_capability() -> None:
    assert ("NOTICE-01", "MUST") in _found(_in_turn(NOTICE))
    assert ("NOTICE-01", "MUST") in _found(_in_turn(NOTICE, session_caps={"notices": None}))
    assert _in_turn(NOTICE, session_caps={"notices": {}}).findings == []


def test_NOTICE_01_02_echo_sends_a_notice_only_when_advertised(
    echo: TestClient, plain_echo: TestClient
) -> None:
    sid = echo.new_session("/tmp").session_id
    echo.prompt(sid, "/notice warning Disk almost full")
    (notice, *_) = echo.updates_of(sid, s.Notice)
    assert (notice.severity, notice.title) == (s.NoticeSeverity.WARNING, "Disk almost full")
    plain = plain_echo.new_session("/tmp").session_id
    plain_echo.prompt(plain, "/notice warning Disk almost full")
    assert plain_echo.updates_of(plain, s.Notice) == []
    # spec NOTICE-02: without the capability, the same words come as an agent message.
    said = "".join(u.content.text for u in plain_echo.updates_of(plain, s.AgentMessageChunk))
    assert "Disk almost full" in said


def test_NOTICE_03_a_notice_has_a_severity_and_a_non_empty_title() -> None:
    empty = {**NOTICE, "title": ""}
    assert ("NOTICE-03", "MUST") in _found(_in_turn(empty, session_caps=NEW_SESSION_CAPS))
    untitled = {"sessionUpdate": "notice", "severity": "info"}
    assert ("NOTICE-03", "MUST") in _found(_in_turn(untitled, session_caps=NEW_SESSION_CAPS))


def test_NOTICE_04_COMPACT_15_unknown_severity_and_status_are_kept(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    odd_notice = {**NOTICE, "severity": "_acme_critical"}
    odd_compaction = _compaction("_acme_paused")
    assert _in_turn(odd_notice, odd_compaction, session_caps=NEW_SESSION_CAPS).findings == []
    p, client, sid = pair
    run_steps(p.conn, client, sid, [{"update": odd_notice}, {"update": odd_compaction}])
    view = client.view(sid)
    assert [n.severity for n in view.notices] == ["_acme_critical"]
    assert view.compactions["c1"].status == "_acme_paused"
    assert not view.compactions["c1"].finished  # spec COMPACT-15: no lifecycle inferred
    lines: List[str] = []
    renderer = Renderer(lines.append)
    renderer.notice(codec.decode(odd_notice, s.Notice))
    assert "".join(lines).startswith("[notice] MCP server unavailable")  # generic, no severity


def test_NOTICE_06_notices_are_not_replayed(echo: TestClient, tmp_path: Path) -> None:
    sid = echo.new_session(str(tmp_path)).session_id
    echo.prompt(sid, "/notice info Hello")
    echo.wait_for(lambda: len(echo.updates_of(sid, s.Notice)) == 2, what="the later notice")
    count = len(echo.notifications)
    echo.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    replay = [n.update for n in echo.notifications[count:] if n.session_id == sid]
    assert replay and not [u for u in replay if isinstance(u, s.Notice)]


def test_NOTICE_07_an_error_notice_stops_nothing(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    p, client, sid = pair
    error = {**NOTICE, "severity": "error", "title": "Indexing failed"}
    assert run_steps(p.conn, client, sid, [{"update": error}, {"chunks": 1}]) == [None, None]
    view = client.view(sid)
    # The turn went on, and ended (the scripted agent's last message lists its step results).
    assert [m.text for m in view.messages][1:] == ["c0 ", "[null, null]"]
    assert [n.title for n in view.notices] == ["Indexing failed"]
    # spec NOTICE-08: dismissal is local: nothing is sent.
    sent = len(p.sent)
    view.dismiss_notices()
    assert view.notices == [] and len(p.sent) == sent


def test_NOTICE_08_repeated_notices_are_coalesced(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    p, client, sid = pair
    run_steps(p.conn, client, sid, [{"update": NOTICE}, {"update": NOTICE}])
    assert [(n.title, n.count) for n in client.view(sid).notices] == [
        ("MCP server unavailable", 2)
    ]


def test_NOTICE_09_a_malformed_notice_is_dropped_and_the_session_goes_on(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    p, client, sid = pair
    broken = {"sessionUpdate": "notice", "title": 5}
    assert run_steps(p.conn, client, sid, [{"update": broken}, {"chunks": 1}]) == [None, None]
    view = client.view(sid)
    assert view.notices == [] and [m.text for m in view.messages][1:] == ["c0 ", "[null, null]"]


def test_NOTICE_10_a_notice_outside_a_turn_is_no_violation(echo: TestClient) -> None:
    after = _judged(
        ("client", req(2, "session/prompt", {"sessionId": "s1", "prompt": []})),
        ("agent", ok(2, {"stopReason": "end_turn"})),
        ("agent", _update(NOTICE)),
        session_caps=NEW_SESSION_CAPS,
    )
    assert after.findings == []
    before = _judged(("agent", _update(NOTICE)), session_caps=NEW_SESSION_CAPS)
    assert before.findings == []
    # The echo agent sends its second notice after the prompt's answer.
    sid = echo.new_session("/tmp").session_id
    echo.prompt(sid, "/notice info Hello")
    echo.wait_for(lambda: len(echo.updates_of(sid, s.Notice)) == 2, what="the later notice")
    assert echo.findings == []


# -- Compaction -----------------------------------------------------------------------------------


def test_COMPACT_01_compaction_updates_need_the_capability(plain_echo: TestClient) -> None:
    for update in (_compaction("completed"), _chunk("x")):
        assert ("COMPACT-01", "MUST") in _found(_in_turn(update))
        assert ("COMPACT-01", "MUST") in _found(
            _in_turn(update, session_caps={"compaction": None})
        )
    sid = plain_echo.new_session("/tmp").session_id
    plain_echo.prompt(sid, "/compact")
    kinds = (s.CompactionUpdate, s.CompactionSummaryChunk)
    assert [u for u in plain_echo.updates(sid) if isinstance(u, kinds)] == []


def test_COMPACT_04_id_and_status_and_one_content_block_are_required() -> None:
    for update in (
        {"sessionUpdate": "compaction_update", "compactionId": "c1"},
        {"sessionUpdate": "compaction_update", "status": "completed"},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": []},
    ):
        assert ("COMPACT-04", "MUST") in _found(_in_turn(update, session_caps=NEW_SESSION_CAPS))


def test_COMPACT_02_09_10_11_12_echo_reports_one_entity_to_one_end(echo: TestClient) -> None:
    sid = echo.new_session("/tmp").session_id
    echo.prompt(sid, "first question")
    echo.prompt(sid, "/compact")
    updates = [u for u in echo.updates(sid) if isinstance(u, s.CompactionUpdate)]
    assert len({u.compaction_id for u in updates}) == 1
    statuses = [s.CompactionStatus.IN_PROGRESS, s.CompactionStatus.COMPLETED]
    assert [u.status for u in updates] == statuses
    # spec COMPACT-09: the completed update omits summary: the chunks are the summary.
    assert updates[-1].summary is s.UNSET
    chunks = echo.updates_of(sid, s.CompactionSummaryChunk)
    # spec COMPACT-11, COMPACT-12: what is retained, only words the user saw: their prompts.
    summary = "".join(c.content.text for c in chunks)
    assert summary == "## Retained context\n\n2 user prompts:\n- first question\n- /compact\n"
    assert echo.findings == []
    echo.prompt(sid, "/compact fail")
    failed = [u for u in echo.updates(sid) if isinstance(u, s.CompactionUpdate)][-1]
    assert failed.status == s.CompactionStatus.FAILED and isinstance(failed.error, str)


def test_COMPACT_10_a_compaction_ends_once() -> None:
    ended_twice = _in_turn(
        _compaction("completed"), _compaction("failed"), session_caps=NEW_SESSION_CAPS
    )
    assert ("COMPACT-10", "MUST") in _found(ended_twice)
    reopened = _in_turn(
        _compaction("cancelled"), _compaction("in_progress"), session_caps=NEW_SESSION_CAPS
    )
    assert ("COMPACT-10", "MUST") in _found(reopened)
    # spec COMPACT-03: a terminal status may be the first; the same again is no second end.
    fine = _in_turn(
        _compaction("completed"), _compaction("completed"), session_caps=NEW_SESSION_CAPS
    )
    assert fine.findings == []


def test_COMPACT_05_06_07_08_13_the_client_patches_one_entity_in_place(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    p, client, sid = pair
    steps: List[Dict[str, Any]] = [
        {"chunks": 1},
        # spec COMPACT-07: a chunk with a first-seen id creates an in-progress compaction.
        {"update": _chunk("one ")},
        {"update": _chunk("two")},
        {"update": _compaction("in_progress", error="slow", _meta={"k": 1})},
    ]
    run_steps(p.conn, client, sid, steps)
    view = client.view(sid)
    before = [m.text for m in view.messages][:2]  # the prompt and "c0 "
    entity = view.compactions["c1"]
    # spec COMPACT-05: the first notification fixed its place: after the first turn's messages.
    assert entity.position == 2
    assert [b.text for b in entity.summary] == ["one ", "two"]  # spec COMPACT-06: omitted keeps
    assert (entity.status, entity.error, entity.meta) == ("in_progress", "slow", {"k": 1})
    later: List[Dict[str, Any]] = [
        # spec COMPACT-08: a concrete summary replaces the chunks; later chunks append to it.
        {"update": _compaction("in_progress", summary=[{"type": "text", "text": "whole"}])},
        {"update": _chunk(" more")},
        # spec COMPACT-06: null clears error and _meta.
        {"update": _compaction("completed", error=None, _meta=None)},
    ]
    run_steps(p.conn, client, sid, later)
    assert [b.text for b in entity.summary] == ["whole", " more"]
    assert (entity.status, entity.error, entity.meta) == ("completed", None, None)
    assert entity.position == 2 and list(view.compactions) == ["c1"]
    run_steps(p.conn, client, sid, [{"update": _compaction("completed", summary=[])}])
    assert entity.summary == []  # spec COMPACT-06: [] clears the summary
    # spec COMPACT-13: the messages before the compaction are all still there.
    assert [m.text for m in view.messages][: len(before)] == before


def test_COMPACT_14_a_compaction_is_replayed_materialized(echo: TestClient, tmp_path: Path) -> None:
    sid = echo.new_session(str(tmp_path)).session_id
    echo.prompt(sid, "keep this")
    echo.prompt(sid, "/compact")
    live_chunks = echo.updates_of(sid, s.CompactionSummaryChunk)
    count = len(echo.notifications)
    echo.request(
        "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
    )
    replay = [n.update for n in echo.notifications[count:] if n.session_id == sid]
    kinds = (s.CompactionUpdate, s.CompactionSummaryChunk)
    compactions = [u for u in replay if isinstance(u, kinds)]
    (only,) = compactions
    assert only.status == s.CompactionStatus.COMPLETED
    assert only.summary == [c.content for c in live_chunks]
    # In its place: after the prompt "/compact" that made it, before that turn's reply.
    texts = [
        u.content.text if hasattr(u, "content") and hasattr(u.content, "text") else "compaction"
        for u in replay
        if isinstance(u, (s.UserMessageChunk, s.CompactionUpdate))
    ]
    assert texts == ["keep this", "/compact", "compaction"]
    assert echo.findings == []


# -- Tool call names ------------------------------------------------------------------------------


def test_TOOL_16_echo_names_its_tools_in_the_first_report(echo: TestClient) -> None:
    sid = echo.new_session("/tmp").session_id
    echo.prompt(sid, "/tool x")
    (call,) = echo.updates_of(sid, s.ToolCall)
    assert call.name == "echo_tool"
    (asked,) = echo.permission_requests
    assert asked.tool_call.name == "echo_tool"  # the request names the tool too


def test_TOOL_17_a_reported_name_is_not_changed() -> None:
    call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "name": "read"}
    renamed = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": "write",
               "status": "completed"}  # fmt: skip
    report = _in_turn(call, renamed)
    assert _found(report) == [("TOOL-17", "SHOULD NOT")]
    assert report.violations == []
    same = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "name": "read", "status": "failed"}
    assert _in_turn(call, same).findings == []


def test_TOOL_18_23_name_and_raw_input_null_or_omitted_leave_them(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    p, client, sid = pair
    steps = [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "T", "rawInput": 1}},
        {"update": {**UPDATE, "name": "grep"}},
        {"update": {**UPDATE, "name": None}},
        {"update": {**UPDATE, "rawInput": None}},
        {"update": {**UPDATE, "status": "completed"}},
    ]
    run_steps(p.conn, client, sid, steps)
    view = client.view(sid).tool_calls["t1"]
    # spec TOOL-18: a string sets the name; null or omitted leave it. TOOL-23: so for rawInput.
    assert (view.name, view.raw_input, view.status) == ("grep", 1, "completed")
    nameless = codec.decode({"toolCallId": "t", "title": "T", "name": None}, s.ToolCall)
    assert nameless.name is None


def test_TOOL_19_21_22_the_client_shows_name_and_what_is_approved() -> None:
    lines: List[str] = []
    Renderer(lines.append).tool_call(
        s.ToolCall(tool_call_id="t", title="Search the code", name="grep", kind=s.ToolKind.SEARCH)
    )
    # spec TOOL-19: the title first, the name as a secondary label.
    assert "".join(lines).startswith("[tool] Search the code (search, grep)")
    allow = s.PermissionOptionKind.ALLOW_ONCE
    options = [s.PermissionOption(option_id="a", name="Allow", kind=allow)]
    known = s.RequestPermissionRequest(
        session_id="s",
        tool_call=s.ToolCallUpdate(tool_call_id="t", name="grep", raw_input={"q": "x"}),
        options=options,
    )
    shown = permission_lines(known, "Search the code")
    assert shown[0] == "[permission] the agent wants to run: Search the code (grep)"
    assert "{'q': 'x'}" in shown[1]  # spec TOOL-21: the details being approved
    unknown = attrs.evolve(known, tool_call=s.ToolCallUpdate(tool_call_id="t", name="grep"))
    # spec TOOL-22: no rawInput: the arguments are shown as unknown.
    assert "unknown" in permission_lines(unknown, "Search the code")[1]


# -- Meaning changes ------------------------------------------------------------------------------


def test_SCHEMA_22_a_cost_in_credits_is_valid() -> None:
    usage = {
        "sessionUpdate": "usage_update",
        "used": 1,
        "size": 10,
        "cost": {"amount": 3, "currency": "credits"},
    }
    assert _in_turn(usage).findings == []


# -- Forward compatibility with a newer v1 peer ---------------------------------------------------


FUTURE = {"sessionUpdate": "weather_update", "forecast": "sunny", "_meta": {"v": 2}}


def test_an_undefined_update_kind_fails_the_oracle_and_is_kept_raw() -> None:
    # spec OVERVIEW-01 (decisions.md undefined-value): the closed oneOf of SCHEMA-24 has no such
    # kind, and no carried schema does; with newer_spec, a newer peer's kind: a warning.
    assert _found(_in_turn(FUTURE)) == [("OVERVIEW-01", "MUST NOT")]
    report = _in_turn(FUTURE, newer_spec=True)
    assert _found(report) == [("OVERVIEW-01", "warning")]
    assert report.violations == []
    params = {"sessionId": "s1", "update": FUTURE}
    decoded = codec.decode(params, s.SessionNotification, strict=True)
    assert decoded.update == s.Unknown(raw=FUTURE)
    # Kept raw: written back unchanged.
    assert codec.encode(decoded)["update"] == FUTURE


def test_an_undefined_value_fails_the_oracle_unless_newer_spec() -> None:
    call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "T", "kind": "teleport",
            "status": "completed"}  # fmt: skip
    assert _found(_in_turn(call)) == [("OVERVIEW-01", "MUST NOT")]
    report = _in_turn(call, newer_spec=True)
    assert _found(report) == [("OVERVIEW-01", "warning")]
    assert report.violations == [] and report.warnings == report.findings


def test_the_reference_client_ignores_an_undefined_update_kind(
    pair: Tuple[RecordingPair, ReferenceClient, str],
) -> None:
    p, client, sid = pair
    assert run_steps(p.conn, client, sid, [{"update": FUTURE}, {"chunks": 1}]) == [None, None]
    assert [m.text for m in client.view(sid).messages][1:] == ["c0 ", "[null, null]"]


# -- Leniency, live (SCHEMA-18, SCHEMA-20) --------------------------------------------------------


def test_SCHEMA_18_20_the_echo_agent_reads_null_as_empty_and_refuses_a_bad_server(
    plain_echo: TestClient, tmp_path: Path
) -> None:
    # spec SCHEMA-18: null mcpServers and additionalDirectories are the empty lists.
    opened = plain_echo.request(
        "session/new", {"cwd": str(tmp_path), "mcpServers": None, "additionalDirectories": None}
    )
    assert isinstance(opened.session_id, str)
    # spec SCHEMA-20: one malformed server is not dropped: the request is invalid params.
    bad = {"cwd": str(tmp_path), "mcpServers": [{"name": "no command"}]}
    with pytest.raises(RpcError) as caught:
        plain_echo.request("session/new", bad)
    assert caught.value.code == ErrorCode.INVALID_PARAMS


# -- LIST-18, INIT-22, SCHEMA-23 ------------------------------------------------------------------


def test_LIST_18_omitted_roots_are_not_reported_not_none() -> None:
    base = {"sessionId": "s1", "cwd": "/w"}
    omitted = codec.decode(base, s.SessionInfo)
    assert describe_listed(omitted).endswith("additional roots: not reported")
    empty = codec.decode({**base, "additionalDirectories": []}, s.SessionInfo)
    assert describe_listed(empty).endswith("additional roots: none")
    some = codec.decode({**base, "additionalDirectories": ["/a"]}, s.SessionInfo)
    assert describe_listed(some).endswith("additional roots: /a")


#: Capability keys of the provisional features (the unstable schema's; spec2's pages).
PROVISIONAL_KEYS = {"plan", "systemPrompt", "subagents"}


def _undefined_keys(value: Any, node: Dict[str, Any], defs: Dict[str, Any], path: str) -> List[str]:
    """The keys of a capability object that its schema $def does not define (``_meta`` aside)."""
    while "$ref" in node or "allOf" in node or "anyOf" in node:
        ref = node.get("$ref") or next(
            (b.get("$ref") for b in node.get("allOf", []) + node.get("anyOf", []) if "$ref" in b),
            None,
        )
        if ref is None:
            break
        node = defs[ref.rsplit("/", 1)[-1]]
    if not isinstance(value, dict):
        return []
    props = node.get("properties", {})
    out = [f"{path}.{k}" for k in value if k not in props]
    for key, inner in value.items():
        if key in props and key != "_meta":
            out += _undefined_keys(inner, props[key], defs, f"{path}.{key}")
    return out


def test_INIT_22_acpref_advertises_only_defined_keys_and_extensions_in_meta(
    echo: TestClient, spec_dir: Path
) -> None:
    import json

    # Every key is one the schema defines; the provisional features (spec-gap
    # provisional-features: stabilized after 2026-11-02) use keys of the unstable schema, never
    # keys of no schema. Custom capabilities live under _meta.
    defs = json.loads((spec_dir / "schema.unstable.json").read_text(encoding="utf-8"))["$defs"]
    client = ReferenceClient(capability_meta={"acpref": {"x": True}})
    client_caps = codec.encode(client.capabilities())
    assert _undefined_keys(client_caps, defs["ClientCapabilities"], defs, "client") == []
    assert client_caps["_meta"] == {"acpref": {"x": True}}  # the extension lives under _meta
    agent_caps = codec.encode(echo.init.agent_capabilities)
    assert _undefined_keys(agent_caps, defs["AgentCapabilities"], defs, "agent") == []
    assert "acpref" in agent_caps["_meta"]
    stable = json.loads((spec_dir / "schema.json").read_text(encoding="utf-8"))["$defs"]
    extra = _undefined_keys(client_caps, stable["ClientCapabilities"], stable, "client")
    extra += _undefined_keys(agent_caps, stable["AgentCapabilities"], stable, "agent")
    assert all(key.split(".")[-1] in PROVISIONAL_KEYS for key in extra), extra


def test_SCHEMA_23_an_unknown_session_is_resource_not_found(plain_echo: TestClient) -> None:
    with pytest.raises(RpcError) as caught:
        plain_echo.request("session/prompt", {"sessionId": "nope", "prompt": []})
    assert caught.value.code == ErrorCode.RESOURCE_NOT_FOUND
