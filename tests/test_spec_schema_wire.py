"""Clause tests for wire shapes the schema states (content blocks, updates, results, ids).

Clauses: CONTENT-06, CONTENT-07, CONTENT-08, SCHEMA-01, SCHEMA-02, SCHEMA-09, SCHEMA-14,
SCHEMA-16, RPC-03, RPC-16. Each shape is tried from every side acpref has it on: the typed models
put it on the wire (through ``ClientSideConnection`` over real pipes, or the echo agent), a live
receiver refuses or ignores the wrong shape as the spec says, and the oracle names the clause in a
transcript that breaks it. Every wait is bounded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from acpref import codec
from acpref import schema as s
from acpref._core import Party
from acpref.client import ReferenceClient
from acpref.echo import AUTH_METHOD_ID, EchoAgent
from acpref.errors import ErrorCode, LocalProtocolError, RpcError
from acpref.oracle import Report, validate
from acpref.schema._base import UNIONS

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import EMPTY_CAPS, TestClient, in_process, spawn_echo  # noqa: E402
from client_agent import DEFAULT_CAPS, ScriptedAgent  # noqa: E402
from client_harness import call, run_steps  # noqa: E402
from pair import Pair  # noqa: E402
from spec_wire import WAIT, RecordingPair, note, ok, records, req  # noqa: E402

PNG = "iVBORw0KGgo="
ALL_PROMPT_CAPS = {
    **DEFAULT_CAPS,
    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
}
TEXT_RESOURCE = {"uri": "file:///a.txt", "text": "hello", "mimeType": "text/plain"}
BLOB_RESOURCE = {"uri": "file:///a.bin", "blob": "AAEC"}
#: The eleven stable session/update tags of schema.json.
# spec SCHEMA-24: the 14 stable kinds of the 2026-11-02 schema.
STABLE_UPDATES = {
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
}


# -- helpers --------------------------------------------------------------------------------------


@pytest.fixture
def echo() -> Iterator[TestClient]:
    client = in_process(lambda c: EchoAgent(c))
    yield client
    client.close()


def _judged(
    *messages: Tuple[str, Dict[str, Any]],
    client_caps: Optional[Dict[str, Any]] = None,
    agent_caps: Optional[Dict[str, Any]] = None,
) -> Report:
    """The oracle's report on: initialize, session/new (session "s1"), then ``messages``."""
    opening = [
        ("client", req(0, "initialize", {
            "protocolVersion": 1,
            "clientCapabilities": client_caps or {},
            "clientInfo": {"name": "c", "version": "1"},
        })),
        ("agent", ok(0, {
            "protocolVersion": 1,
            "agentCapabilities": ALL_PROMPT_CAPS if agent_caps is None else agent_caps,
            "agentInfo": {"name": "a", "version": "1"},
            "authMethods": [],
        })),
        ("client", req(1, "session/new", {"cwd": "/work", "mcpServers": []})),
        ("agent", ok(1, {
            "sessionId": "s1",
            "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]},
        })),
    ]  # fmt: skip
    return validate(records(*opening, *messages))


def _prompted(*blocks: Any) -> Report:
    """A client prompt made of ``blocks``, answered end_turn."""
    prompt = req(2, "session/prompt", {"sessionId": "s1", "prompt": list(blocks)})
    return _judged(("client", prompt), ("agent", ok(2, {"stopReason": "end_turn"})))


def _chunk(content: Any, kind: str = "agent_message_chunk") -> Tuple[str, Dict[str, Any]]:
    update = {"sessionUpdate": kind, "content": content}
    return ("agent", note("session/update", {"sessionId": "s1", "update": update}))


def _updated(*updates: Tuple[str, Dict[str, Any]]) -> Report:
    """Agent updates inside a turn that then ends normally."""
    prompt = req(
        2, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "x"}]}
    )
    return _judged(("client", prompt), *updates, ("agent", ok(2, {"stopReason": "end_turn"})))


def _blamed(report: Report, clause: str) -> List[str]:
    return [f.blame.value for f in report.findings if f.clause == clause]


def _refused_by_agent(echo: TestClient, *blocks: Any) -> int:
    sid = echo.new_session("/tmp").session_id
    with pytest.raises(RpcError) as info:
        echo.request("session/prompt", {"sessionId": sid, "prompt": list(blocks)})
    return int(info.value.code)


def _prompt_pair(*blocks: Any) -> Dict[str, Any]:
    """What ClientSideConnection puts on the wire for a prompt of typed ``blocks``."""
    pair = RecordingPair(agent=ScriptedAgent(caps=ALL_PROMPT_CAPS))
    try:
        sid = pair.new_session("/tmp")
        pair.conn.prompt(sid, list(blocks), timeout=WAIT)
        (params,) = pair.sent_params("session/prompt")
        return params
    finally:
        pair.close()


# -- content blocks -------------------------------------------------------------------------------


def test_CONTENT_06_image_and_audio_carry_data_and_mime_type(echo: TestClient) -> None:
    sent = _prompt_pair(
        s.ImageContent(data=PNG, mime_type="image/png", uri="file:///a.png"),
        s.AudioContent(data="UklGRg==", mime_type="audio/wav"),
    )
    assert sent["prompt"] == [
        {"type": "image", "data": PNG, "mimeType": "image/png", "uri": "file:///a.png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    ]
    with pytest.raises(TypeError):
        s.ImageContent(data=PNG)  # type: ignore[call-arg]  # the model will not go without
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    for kind in ("image", "audio"):
        whole = {**image, "type": kind}
        for key in ("data", "mimeType"):
            broken = {k: v for k, v in whole.items() if k != key}
            assert _refused_by_agent(echo, broken) == ErrorCode.INVALID_PARAMS, broken
            assert _blamed(_prompted(broken), "CONTENT-06") == ["client"], broken
            assert _blamed(_updated(_chunk(broken)), "CONTENT-06") == ["agent"], broken
    assert _prompted(image).findings == []
    assert _updated(_chunk({**image, "type": "audio"})).findings == []


def test_CONTENT_07_resource_is_text_or_blob_contents(echo: TestClient) -> None:
    sent = _prompt_pair(
        s.EmbeddedResource(resource=s.TextResourceContents(**_snake(TEXT_RESOURCE))),
        s.EmbeddedResource(resource=s.BlobResourceContents(**_snake(BLOB_RESOURCE))),
    )
    assert sent["prompt"] == [
        {"type": "resource", "resource": TEXT_RESOURCE},
        {"type": "resource", "resource": BLOB_RESOURCE},
    ]
    for contents in ({"uri": "file:///a"}, {"text": "no uri"}, {"blob": "AAEC"}):
        broken = {"type": "resource", "resource": contents}
        assert _refused_by_agent(echo, broken) == ErrorCode.INVALID_PARAMS, contents
        assert _blamed(_prompted(broken), "CONTENT-07") == ["client"], contents
        assert _blamed(_updated(_chunk(broken)), "CONTENT-07") == ["agent"], contents
    assert _prompted({"type": "resource", "resource": BLOB_RESOURCE}).findings == []


def _snake(wire: Dict[str, Any]) -> Dict[str, Any]:
    return {"mime_type" if k == "mimeType" else k: v for k, v in wire.items()}


def test_CONTENT_08_resource_link_needs_uri_and_name(echo: TestClient) -> None:
    full = s.ResourceLink(
        uri="file:///a.py",
        name="a.py",
        mime_type="text/x-python",
        title="A",
        description="the a module",
        size=12,
    )
    sent = _prompt_pair(full, s.ResourceLink(uri="file:///b.py", name="b.py"))
    assert sent["prompt"] == [
        {
            "type": "resource_link",
            "uri": "file:///a.py",
            "name": "a.py",
            "mimeType": "text/x-python",
            "title": "A",
            "description": "the a module",
            "size": 12,
        },
        {"type": "resource_link", "uri": "file:///b.py", "name": "b.py"},
    ]
    link = {"type": "resource_link", "uri": "file:///a.py", "name": "a.py"}
    for key in ("uri", "name"):
        broken = {k: v for k, v in link.items() if k != key}
        assert _refused_by_agent(echo, broken) == ErrorCode.INVALID_PARAMS, key
        assert _blamed(_prompted(broken), "CONTENT-08") == ["client"], key
        assert _blamed(_updated(_chunk(broken)), "CONTENT-08") == ["agent"], key
    assert _prompted(link).findings == []


# -- session/update -------------------------------------------------------------------------------


def test_SCHEMA_01_update_has_session_id_and_a_stable_tag() -> None:
    # The provisional variants (plan operations: spec-gap provisional-features) come on top.
    stable = {
        tag
        for tag, variant in UNIONS[s.SessionUpdate].by_tag.items()
        if variant.__module__.rsplit(".", 1)[-1] not in s.PROVISIONAL_PAGES
    }
    assert stable == STABLE_UPDATES
    no_tag = {"text": "x"}
    bad_tag = _updated(("agent", note("session/update", {"sessionId": "s1", "update": no_tag})))
    assert _blamed(bad_tag, "SCHEMA-01") == ["agent"]
    plan = {"sessionUpdate": "plan", "entries": []}
    no_session = _updated(("agent", note("session/update", {"update": plan})))
    assert "agent" in _blamed(no_session, "SCHEMA-01")
    good = _updated(("agent", note("session/update", {"sessionId": "s1", "update": plan})))
    assert good.findings == []


def test_SCHEMA_01_client_ignores_an_update_it_cannot_read(tmp_path: Path) -> None:
    client = ReferenceClient()
    pair = RecordingPair(client, ScriptedAgent())
    try:
        sid = pair.new_session(str(tmp_path))
        steps = [{"update": {"sessionUpdate": "notice", "text": "x"}}, {"chunks": 1}]
        assert run_steps(pair.conn, client, sid, steps) == [None, None]
        texts = [m.text for m in client.view(sid).messages]
        assert texts[1:] == ["c0 ", "[null, null]"]  # the prompt, then nothing of the notice
    finally:
        pair.close()


def test_SCHEMA_02_chunks_carry_one_content_block(echo: TestClient) -> None:
    sid = echo.new_session("/tmp").session_id
    echo.prompt(sid, "/stream 2")
    chunks = [
        m["params"]["update"]
        for m in echo.inbound()
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"].endswith("_chunk")
    ]
    assert {c["sessionUpdate"] for c in chunks} >= {"agent_message_chunk", "agent_thought_chunk"}
    assert all(isinstance(c["content"], dict) and "type" in c["content"] for c in chunks)
    text = {"type": "text", "text": "hi"}
    for kind in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
        as_array = _updated(_chunk([text], kind))
        assert _blamed(as_array, "SCHEMA-02") == ["agent"], kind
        with_id = {"sessionUpdate": kind, "content": text, "messageId": "m1"}
        clean = _updated(("agent", note("session/update", {"sessionId": "s1", "update": with_id})))
        assert clean.findings == [], kind


# -- results --------------------------------------------------------------------------------------


def test_SCHEMA_09_agent_results_are_objects(tmp_path: Path) -> None:
    client = spawn_echo("--require-auth")
    try:
        client.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
        sid = client.new_session(str(tmp_path)).session_id
        client.request(
            "session/load", s.LoadSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[])
        )
        client.request(
            "session/resume",
            s.ResumeSessionRequest(session_id=sid, cwd=str(tmp_path), mcp_servers=[]),
        )
        client.request("session/set_mode", s.SetSessionModeRequest(session_id=sid, mode_id="code"))
        client.request("session/close", s.CloseSessionRequest(session_id=sid))
        client.request("session/delete", s.DeleteSessionRequest(session_id=sid))
        client.request("logout", s.LogoutRequest())
        asked = {m["id"]: m["method"] for d, m in client.wire if d == "out" and "id" in m}
        results = {asked[m["id"]]: m["result"] for m in client.inbound() if "result" in m}
    finally:
        client.close()
    for method in ("authenticate", "logout", "session/load", "session/resume", "session/close",
                   "session/delete", "session/set_mode"):  # fmt: skip
        assert isinstance(results[method], dict), (method, results.get(method))


def test_SCHEMA_09_client_results_are_objects(tmp_path: Path) -> None:
    client = ReferenceClient()
    pair = RecordingPair(client, ScriptedAgent())
    try:
        sid = pair.new_session(str(tmp_path))
        run_steps(
            pair.conn,
            client,
            sid,
            [
                call("fs/write_text_file", path=str(tmp_path / "f.txt"), content="x"),
                call("terminal/create", command=sys.executable, args=["-c", "pass"]),
                call("terminal/kill", terminalId="$r1.terminalId"),
                call("terminal/release", terminalId="$r1.terminalId"),
            ],
        )
        asked = {m["id"]: m["method"] for m in pair.received if "method" in m and "id" in m}
        answers = {asked[m["id"]]: m for m in pair.sent if "method" not in m and m["id"] in asked}
    finally:
        pair.close()
    for method in ("fs/write_text_file", "terminal/kill", "terminal/release"):
        assert answers[method].get("result") == {}, answers[method]


def test_SCHEMA_09_oracle_reports_null_results() -> None:
    set_mode = req(2, "session/set_mode", {"sessionId": "s1", "modeId": "ask"})
    report = _judged(("client", set_mode), ("agent", ok(2, None)))
    assert _blamed(report, "MODES-05") == ["agent"]
    create = req("t1", "terminal/create", {"sessionId": "s1", "command": "/bin/true", "args": []})
    release = req("t2", "terminal/release", {"sessionId": "s1", "terminalId": "term-1"})
    prompt = req(
        2, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "x"}]}
    )
    report = _judged(
        ("client", prompt),
        ("agent", create),
        ("client", ok("t1", {"terminalId": "term-1"})),
        ("agent", release),
        ("client", ok("t2", None)),
        ("agent", ok(2, {"stopReason": "end_turn"})),
        client_caps={"terminal": True},
    )
    assert _blamed(report, "SCHEMA-09") == ["client"]


# -- capabilities ---------------------------------------------------------------------------------


class _SilentAgent(ScriptedAgent):
    """Answers initialize with the version alone: every capability and authMethods omitted."""

    def initialize(self, params: Any, ctx: Any) -> Any:
        return {"protocolVersion": 1}


GATES = (
    "loadSession",
    "promptCapabilities.image",
    "promptCapabilities.audio",
    "promptCapabilities.embeddedContext",
    "mcpCapabilities.http",
    "mcpCapabilities.sse",
)
CLIENT_GATES = ("fs.readTextFile", "fs.writeTextFile", "terminal", "auth.terminal")


def test_SCHEMA_14_omitted_capabilities_read_as_false(tmp_path: Path) -> None:
    pair = RecordingPair(agent=_SilentAgent())
    try:
        assert not any(pair.conn.supports(gate) for gate in GATES)
        assert pair.conn.auth_methods == []
        sid = pair.new_session(str(tmp_path))
        with pytest.raises(LocalProtocolError) as info:
            pair.conn.load_session(sid, str(tmp_path), timeout=WAIT)
        assert info.value.clause == "SETUP-03"
        with pytest.raises(LocalProtocolError) as info:
            pair.conn.prompt(sid, [s.ImageContent(data=PNG, mime_type="image/png")], timeout=WAIT)
        assert info.value.clause == "PROMPT-03"
    finally:
        pair.close()
    # The rules read the same on both sides of the in-memory pair.
    pair = Pair().handshake({}, {})
    for state in (pair.agent, pair.client):
        assert not any(state.gate_open(g, Party.AGENT) for g in GATES)
        assert not any(state.gate_open(g, Party.CLIENT) for g in CLIENT_GATES)
    # {} decodes with every flag absent, never true.
    caps = codec.decode({}, s.AgentCapabilities, strict=True)
    assert caps.load_session is not True and caps.prompt_capabilities is s.UNSET


def test_SCHEMA_14_agent_never_calls_unadvertised_client_methods(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("secret")
    client = in_process(lambda c: EchoAgent(c), caps=EMPTY_CAPS)
    try:
        sid = client.new_session(str(tmp_path)).session_id
        client.prompt(sid, f"/read {tmp_path / 'f.txt'}")
        client.prompt(sid, "/run true")
        asked = [m.get("method") for m in client.inbound() if "id" in m and "method" in m]
    finally:
        client.close()
    assert not any(m.startswith(("fs/", "terminal/")) for m in asked), asked


def test_SCHEMA_16_blocks_may_carry_annotations(echo: TestClient) -> None:
    annotations = {"audience": ["user", "assistant"], "lastModified": "2025-01-01T00:00:00Z",
                   "priority": 0.5}  # fmt: skip
    blocks = [
        {"type": "text", "text": "hi", "annotations": annotations},
        {"type": "image", "data": PNG, "mimeType": "image/png", "annotations": annotations},
        {"type": "resource_link", "uri": "file:///a", "name": "a", "annotations": annotations},
    ]
    for block in blocks:
        decoded = codec.decode(block, s.ContentBlock, strict=True)
        assert decoded.annotations.priority == 0.5
        request = s.PromptRequest(session_id="s", prompt=[decoded])
        assert codec.encode(request)["prompt"] == [block]  # kept as sent
    sid = echo.new_session("/tmp").session_id
    answer = echo.request("session/prompt", {"sessionId": sid, "prompt": blocks})
    assert answer.stop_reason == s.StopReason.END_TURN
    assert _prompted(*blocks).findings == []
    with pytest.raises(codec.DecodeError):
        wrong = {"type": "text", "text": "hi", "annotations": {"audience": ["robot"]}}
        codec.decode(wrong, s.ContentBlock, strict=True)


# -- JSON-RPC -------------------------------------------------------------------------------------


def test_RPC_03_ids_are_integers_never_null(tmp_path: Path) -> None:
    client = ReferenceClient()
    pair = RecordingPair(client, ScriptedAgent())
    try:
        sid = pair.new_session(str(tmp_path))
        pair.conn.prompt(sid, "hi", timeout=WAIT)
        list(pair.conn.list_sessions(timeout=WAIT))
        ids = [m["id"] for m in pair.sent if "method" in m and "id" in m]
    finally:
        pair.close()
    assert len(ids) >= 4 and all(type(i) is int for i in ids)
    # The agent side's requests to the client too.
    (tmp_path / "f.txt").write_text("x")
    echo = in_process(lambda c: EchoAgent(c))
    try:
        sid = echo.new_session(str(tmp_path)).session_id
        echo.prompt(sid, f"/read {tmp_path / 'f.txt'}")
        agent_ids = [m["id"] for m in echo.inbound() if "method" in m and "id" in m]
    finally:
        echo.close()
    assert agent_ids and all(type(i) is int for i in agent_ids)


def test_RPC_03_oracle_warns_of_null_ids() -> None:
    null_id = {"jsonrpc": "2.0", "id": None, "method": "session/list", "params": {}}
    report = _judged(("client", null_id), ("agent", ok(None, {"sessions": []})))
    (finding,) = [f for f in report.findings if f.clause == "RPC-03"]
    assert finding.blame is Party.CLIENT and not finding.is_violation  # SHOULD NOT: a warning
    fractional = {"jsonrpc": "2.0", "id": 2.5, "method": "session/list", "params": {}}
    assert "client" in _blamed(_judged(("client", fractional)), "RPC-02")


def test_RPC_16_unauthenticated_session_methods_answer_auth_required(tmp_path: Path) -> None:
    client = spawn_echo("--require-auth")
    try:
        assert client.init.auth_methods
        for method, params in (
            ("session/new", s.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])),
            ("session/list", s.ListSessionsRequest()),
        ):
            with pytest.raises(RpcError) as info:
                client.request(method, params)
            assert info.value.code == ErrorCode.AUTH_REQUIRED == -32000, method
        client.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
        assert client.new_session(str(tmp_path)).session_id
        client.request("logout", s.LogoutRequest())
        with pytest.raises(RpcError) as info:
            client.new_session(str(tmp_path))
        assert info.value.code == -32000
    finally:
        client.close()
