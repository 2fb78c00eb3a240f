"""Spec tests of the client-provided system prompt (PROVISIONAL): one test per clause.

Spec: v1/system-prompt.md; clauses SYSPROMPT-01 .. SYSPROMPT-16, whose shape comes from the
unstable schema of 2026-11-02 (the feature was stabilized on 2026-11-06). The agent side is the
echo agent (both modes) or the ``Agent`` base advertising append only, served in this process and
driven by a raw ``TestClient`` that can break the rules; the client side is the
``ClientSideConnection``, whose rules refuse what it must not send; a rule alone is asked on the
in-memory pair (tests/pair.py: both sides' ``ProtocolState``, no I/O). The oracle tests check
that these findings fail a run at their sentence's level (spec_notes/decisions.md,
provisional-features).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from acpref import schema as s
from acpref._core import Party, gate_open
from acpref._shell.transport import FdStream
from acpref.agent import Agent, AgentSideConnection
from acpref.client import ClientSideConnection, ReferenceClient
from acpref.echo import EchoAgent
from acpref.errors import LocalProtocolError, RpcError
from acpref.oracle import validate

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import TestClient, in_process  # noqa: E402
from pair import Pair  # noqa: E402

pytestmark = pytest.mark.timeout(60)
WAIT = 10.0


class AppendOnly(Agent):
    """An agent that advertises the system prompt in append mode only."""

    def capabilities(self) -> s.AgentCapabilities:
        caps = super().capabilities()
        assert isinstance(caps.session_capabilities, s.SessionCapabilities)
        return s.AgentCapabilities(
            load_session=True,
            session_capabilities=s.SessionCapabilities(
                list=caps.session_capabilities.list,
                resume=caps.session_capabilities.resume,
                system_prompt=s.SessionSystemPromptCapabilities(),
            ),
        )

    def session_prompt(self, params: s.PromptRequest, turn: Any) -> Any:
        return s.StopReason.END_TURN


def text_prompt(mode: str = "append", *texts: str) -> Dict[str, Any]:
    return {"mode": mode, "content": [{"type": "text", "text": t} for t in texts or ("Be terse.",)]}


@pytest.fixture
def raw() -> Iterator[Any]:
    """``raw(agent) -> TestClient``: a client that sends whatever it is told."""
    made: List[TestClient] = []

    def factory(agent: Any = EchoAgent) -> TestClient:
        client = in_process(agent)
        made.append(client)
        return client

    yield factory
    for client in made:
        client.close()


@pytest.fixture
def pair() -> Iterator[Any]:
    """``pair(agent) -> ClientSideConnection``: acpref's own client, rules on, initialized."""
    made: List[Any] = []

    def factory(agent: Any = EchoAgent) -> ClientSideConnection:
        a_in, c_out = os.pipe()
        c_in, a_out = os.pipe()
        side = AgentSideConnection(agent, FdStream(a_in, a_out, owns_fds=True)).start()
        conn = ClientSideConnection(ReferenceClient(), FdStream(c_in, c_out, owns_fds=True))
        made.append((conn, side))
        conn.initialize(timeout=WAIT)
        return conn

    yield factory
    for conn, side in made:
        conn.close()
        side.close()


def new_raw(client: TestClient, cwd: Path, prompt: Any) -> Any:
    params: Dict[str, Any] = {"cwd": str(cwd), "mcpServers": []}
    if prompt is not ...:
        params["systemPrompt"] = prompt
    return client.request("session/new", params)


def listed(client: TestClient) -> List[str]:
    return [i.session_id for i in client.request("session/list", {}).sessions]


def system_text(conn: ClientSideConnection, sid: str) -> str:
    conn.prompt(sid, "/system", timeout=WAIT)
    view = conn.client.view(sid)  # type: ignore[attr-defined]
    return view.messages[-1].text


# -- Capability gate ------------------------------------------------------------------------------


def test_SYSPROMPT_01_capability_reads_append_and_override(raw: Any) -> None:
    append_only = {"sessionCapabilities": {"systemPrompt": {}}}
    both = {"sessionCapabilities": {"systemPrompt": {"mode": {"override": {}}}}}
    assert gate_open("sessionCapabilities.systemPrompt", append_only)
    assert not gate_open("sessionCapabilities.systemPrompt.mode.override", append_only)
    assert gate_open("sessionCapabilities.systemPrompt.mode.override", both)
    assert not gate_open("sessionCapabilities.systemPrompt", {"sessionCapabilities": {}})
    # The echo agent advertises both modes.
    init = raw().init
    assert init.agent_capabilities.session_capabilities.system_prompt == (
        s.SessionSystemPromptCapabilities(
            mode=s.SessionSystemPromptModeCapabilities(
                override=s.SessionSystemPromptOverrideCapabilities()
            )
        )
    )


def test_SYSPROMPT_02_client_sends_no_system_prompt_without_the_capability(
    pair: Any, tmp_path: Path
) -> None:
    conn = pair(Agent)  # the base Agent advertises no systemPrompt
    prompt = s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[s.TextContent(text="x")])
    with pytest.raises(LocalProtocolError) as info:
        conn.new_session(str(tmp_path), system_prompt=prompt, timeout=WAIT)
    assert info.value.clause == "SYSPROMPT-02"
    conn.new_session(str(tmp_path), timeout=WAIT)  # without it: fine


def test_SYSPROMPT_03_client_uses_override_only_when_advertised(pair: Any, tmp_path: Path) -> None:
    conn = pair(AppendOnly)
    override = s.SystemPrompt(mode=s.SystemPromptMode.OVERRIDE, content=[s.TextContent(text="x")])
    with pytest.raises(LocalProtocolError) as info:
        conn.new_session(str(tmp_path), system_prompt=override, timeout=WAIT)
    assert info.value.clause == "SYSPROMPT-03"
    append = s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[s.TextContent(text="x")])
    assert conn.new_session(str(tmp_path), system_prompt=append, timeout=WAIT).session_id


# -- The agent's errors ---------------------------------------------------------------------------


def test_SYSPROMPT_04_unadvertised_mode_is_an_error_and_no_session(
    raw: Any, tmp_path: Path
) -> None:
    client = raw(AppendOnly)
    with pytest.raises(RpcError):
        new_raw(client, tmp_path, text_prompt("override"))
    assert listed(client) == []


def test_SYSPROMPT_05_unknown_mode_is_an_error_never_an_append(raw: Any, tmp_path: Path) -> None:
    client = raw(EchoAgent)
    with pytest.raises(RpcError) as info:
        new_raw(client, tmp_path, text_prompt("_custom"))
    assert info.value.code == -32602
    assert listed(client) == []


def test_SYSPROMPT_06_text_blocks_are_accepted(pair: Any, tmp_path: Path) -> None:
    conn = pair(EchoAgent)
    prompt = s.SystemPrompt(
        mode=s.SystemPromptMode.APPEND, content=[s.TextContent(text="Review for security.")]
    )
    sid = conn.new_session(str(tmp_path), system_prompt=prompt, timeout=WAIT).session_id
    text = system_text(conn, sid)
    assert "System prompt mode: append" in text and "Review for security." in text


def test_SYSPROMPT_07_client_sends_text_blocks_only(pair: Any, tmp_path: Path) -> None:
    conn = pair(EchoAgent)
    image = s.ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    with pytest.raises(LocalProtocolError) as info:
        conn.new_session(
            str(tmp_path),
            system_prompt=s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[image]),
            timeout=WAIT,
        )
    assert info.value.clause == "SYSPROMPT-07"


def test_SYSPROMPT_08_unsupported_block_is_an_error_and_no_session(
    raw: Any, tmp_path: Path
) -> None:
    client = raw(EchoAgent)
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    with pytest.raises(RpcError):
        new_raw(client, tmp_path, {"mode": "append", "content": [image]})
    assert listed(client) == []


def test_SYSPROMPT_08_agent_base_refuses_what_it_cannot_apply() -> None:
    # The Agent base's own check, apart from the rules that refuse before it runs.
    agent = AppendOnly(client=None)  # type: ignore[arg-type]
    agent.advertised = agent.capabilities()
    image = s.ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    for prompt in (
        s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[image]),  # SYSPROMPT-08
        s.SystemPrompt(mode=s.SystemPromptMode.OVERRIDE, content=[s.TextContent(text="x")]),
        s.SystemPrompt(mode="_custom", content=[s.TextContent(text="x")]),  # SYSPROMPT-05
        s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[]),  # SYSPROMPT-10
    ):
        with pytest.raises(RpcError) as info:
            agent.accept_system_prompt(prompt)
        assert info.value.code == -32602
    ok = s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[s.TextContent(text="x")])
    assert agent.accept_system_prompt(ok) is ok


def test_SYSPROMPT_09_client_never_sends_empty_content(pair: Any, tmp_path: Path) -> None:
    conn = pair(EchoAgent)
    with pytest.raises(LocalProtocolError) as info:
        conn.new_session(
            str(tmp_path),
            system_prompt=s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[]),
            timeout=WAIT,
        )
    assert info.value.clause == "SYSPROMPT-09"


def test_SYSPROMPT_10_empty_content_refused_with_32602_and_no_session(
    raw: Any, tmp_path: Path
) -> None:
    client = raw(EchoAgent)
    with pytest.raises(RpcError) as info:
        new_raw(client, tmp_path, {"mode": "append", "content": []})
    assert info.value.code == -32602
    assert listed(client) == []


# -- Load and resume ------------------------------------------------------------------------------


def test_SYSPROMPT_11_client_resends_the_prompt_on_load_and_resume(
    pair: Any, tmp_path: Path
) -> None:
    conn = pair(EchoAgent)
    prompt = s.SystemPrompt(mode=s.SystemPromptMode.OVERRIDE, content=[s.TextContent(text="P")])
    sid = conn.new_session(str(tmp_path), system_prompt=prompt, timeout=WAIT).session_id
    sent: List[Dict[str, Any]] = []
    conn.load_session(sid, str(tmp_path), timeout=WAIT)
    sent.append(conn.rules.state.system_prompts[sid])
    conn.resume_session(sid, str(tmp_path), timeout=WAIT)
    sent.append(conn.rules.state.system_prompts[sid])
    assert sent == [{"mode": "override", "content": [{"type": "text", "text": "P"}]}] * 2
    assert not [f for f in conn.rules.findings if f.clause == "SYSPROMPT-11"]


def test_SYSPROMPT_11_oracle_warns_when_load_drops_the_prompt() -> None:
    report = validate(transcript(load_prompt=...))
    (found,) = [f for f in report.findings if f.clause == "SYSPROMPT-11"]
    assert found.blame is Party.CLIENT and found in report.warnings


def test_SYSPROMPT_12_load_without_prompt_keeps_the_stored_one(pair: Any, tmp_path: Path) -> None:
    conn = pair(EchoAgent)
    prompt = s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[s.TextContent(text="Kept.")])
    sid = conn.new_session(str(tmp_path), system_prompt=prompt, timeout=WAIT).session_id
    for explicit in (s.UNSET, None):  # omitted and null are the same
        conn.load_session(sid, str(tmp_path), system_prompt=explicit, timeout=WAIT)
        assert "Kept." in system_text(conn, sid)


def test_SYSPROMPT_13_null_on_new_means_the_default_instructions(
    raw: Any, tmp_path: Path
) -> None:
    client = raw(EchoAgent)
    for prompt in (None, ...):
        sid = new_raw(client, tmp_path, prompt).session_id
        client.wait_commands(sid)
        client.prompt(sid, "/system")
        assert "System prompt mode: none" in client.text_of(sid)
    assert client.findings == []


def test_SYSPROMPT_16_override_changes_only_the_instructions(pair: Any, tmp_path: Path) -> None:
    conn = pair(EchoAgent)
    results = {}
    for mode in (s.SystemPromptMode.APPEND, s.SystemPromptMode.OVERRIDE):
        prompt = s.SystemPrompt(mode=mode, content=[s.TextContent(text="Mine.")])
        results[mode] = conn.new_session(str(tmp_path), system_prompt=prompt, timeout=WAIT)
        text = system_text(conn, results[mode].session_id)
        assert ("Repeat the user's prompt back" in text) is (mode == s.SystemPromptMode.APPEND)
    append, override = results.values()
    assert (append.modes, append.config_options) == (override.modes, override.config_options)


# -- The oracle: each finding at its sentence's level ---------------------------------------------


def transcript(*, caps: Any = None, prompt: Any = None, load_prompt: Any = None) -> List[dict]:
    caps = {"sessionCapabilities": {"systemPrompt": {}}} if caps is None else caps
    prompt = text_prompt() if prompt is None else prompt
    load = {"sessionId": "s1", "cwd": "/w", "mcpServers": []}
    if load_prompt is not ...:
        load["systemPrompt"] = prompt if load_prompt is None else load_prompt
    caps = {"loadSession": True, **caps}
    messages = [
        ("client", {"id": 0, "method": "initialize", "params": {
            "protocolVersion": 1, "clientCapabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        ("agent", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": caps}}),
        ("client", {"id": 1, "method": "session/new", "params": {
            "cwd": "/w", "mcpServers": [], "systemPrompt": prompt}}),
        ("agent", {"id": 1, "result": {"sessionId": "s1"}}),
        ("client", {"id": 2, "method": "session/load", "params": load}),
        ("agent", {"id": 2, "result": {}}),
    ]  # fmt: skip
    return [
        {"from": who, "line": json.dumps({"jsonrpc": "2.0", **m})} for who, m in messages
    ] + [{"from": "client", "event": "eof"}]


@pytest.mark.parametrize(
    ("kwargs", "clause", "blame"),
    [
        ({"caps": {}}, "SYSPROMPT-02", Party.CLIENT),
        ({"prompt": text_prompt("override")}, "SYSPROMPT-03", Party.CLIENT),
        ({"caps": {"sessionCapabilities": {"systemPrompt": {}}}, "prompt": text_prompt("_x")},
         "SYSPROMPT-05", Party.AGENT),
        ({"prompt": {"mode": "append", "content": []}}, "SYSPROMPT-09", Party.CLIENT),
    ],
)  # fmt: skip
def test_SYSPROMPT_findings_fail_the_run_at_their_sentence(
    kwargs: Dict[str, Any], clause: str, blame: Party
) -> None:
    # provisional-features: the feature's rules are sentences of the carried unstable schema.
    report = validate(transcript(**kwargs))
    found = [f for f in report.findings if f.clause == clause]
    assert found and all(f.blame is blame and f.is_violation for f in found)
    assert found[0].quote is not None and found[0].level == found[0].quote.level
    assert not report.ok, report.format_text()


def test_SYSPROMPT_04_the_rules_blame_an_agent_that_accepts_an_unadvertised_mode() -> None:
    # A client that is not acpref (lax) asks for override where only append is advertised: the
    # agent's rules find SYSPROMPT-03 and refuse it; an agent that accepted it all the same
    # breaks SYSPROMPT-04 (its own rules stop that answer).
    caps = {"loadSession": True, "sessionCapabilities": {"systemPrompt": {}}}
    pair = Pair(lax={Party.CLIENT}, answer_refusals=False).handshake({}, caps)
    opening = [(Party(r["from"]), json.loads(r["line"])) for r in transcript()[2:4]]
    pair.quietly(opening)  # a session with an appended system prompt
    params = {"cwd": "/w", "mcpServers": [], "systemPrompt": text_prompt("override")}
    step = pair.client_sends({"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": params})
    assert [f.clause for f in step.sent_findings] == ["SYSPROMPT-03"]
    assert [(f.clause, f.blame) for f in step.received_findings] == [("SYSPROMPT-03", Party.CLIENT)]
    assert step.refusal is not None and step.refusal.data == {"clause": "SYSPROMPT-03"}
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"sessionId": "s2"}}
    assert [f.clause for f in pair.check(Party.AGENT, answer)] == ["SYSPROMPT-04"]
    sent = pair.agent_sends(answer)
    assert sent.stopped is not None and sent.stopped.clause == "SYSPROMPT-04"


def test_SYSPROMPT_14_append_mode_is_system_level_not_user_content(
    pair: Any, tmp_path: Path
) -> None:
    conn = pair(EchoAgent)
    prompt = s.SystemPrompt(mode=s.SystemPromptMode.APPEND, content=[s.TextContent(text="Mine.")])
    sid = conn.new_session(str(tmp_path), system_prompt=prompt, timeout=WAIT).session_id
    text = system_text(conn, sid)
    # After the agent's own instructions, at system level; never part of a user turn.
    assert text.index("Repeat the user's prompt back") < text.index("Mine.")
    view = conn.client.view(sid)  # type: ignore[attr-defined]
    assert not [m for m in view.messages if m.role == "user" and "Mine." in m.text]
