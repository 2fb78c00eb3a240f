"""What a person sees of a session: the reference client's views and ``acpref client``.

Spec: prompt-turn.mdx (1. User Message, Stop Reasons, Cancellation), content.mdx (Embedded
Resource), terminals.mdx (Embedding in Tool Calls, Releasing Terminals), session-config-options.mdx
(Option Categories, Relationship to Session Modes), authentication.mdx (Active Sessions); clauses
PROMPT-04, PROMPT-05, PROMPT-18, PROMPT-27, CONTENT-05, TERM-08, TERM-15, CONFIG-12, CONFIG-23,
AUTH-19.

The CLI runs in a pseudo-terminal (``Terminal`` of ``test_cli_client``) or one-shot with
``--record``, against the echo agent or the scripted agent of ``peers/client_agent.py``; what
was sent is read back from the recorded transcript. Every wait has a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List

import pytest
from peers.client_agent import DEFAULT_CAPS
from peers.client_harness import AGENT_SCRIPT, Pair
from test_cli_client import CLIENT, WAIT, Terminal, script

from acpref import schema as s
from acpref.client import Allow, ClientSideConnection, ReferenceClient
from acpref.oracle import read_transcript, validate

ECHO = [sys.executable, "-m", "acpref", "echo"]
SCRIPTED = [sys.executable, str(AGENT_SCRIPT)]


@pytest.fixture
def cli(tmp_path):
    """``cli(agent, *args, ready=PROMPT)``: the CLI at its first prompt."""
    made: List[Terminal] = []

    def start(agent: List[str], *args: str, ready: str) -> Terminal:
        made.append(Terminal(list(args), tmp_path, agent))
        if agent[: len(ECHO)] == ECHO:
            # The echo agent's command list follows the session/new answer: it lands before
            # the first prompt or above it (the prompt is drawn again below it).
            made[-1].expect("[commands]")
        made[-1].expect(ready)
        return made[-1]

    yield start
    for t in made:
        t.close()


ECHO_READY = "acpref echo agent> "
SCRIPTED_READY = "Scripted Agent> "


def one_shot(agent: List[str], args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLIENT, *args, "--", *agent], cwd=cwd, capture_output=True, timeout=3 * WAIT
    )


def sent(path: Path, method: str) -> List[Dict[str, Any]]:
    """The params of every ``method`` request the client sent, from a transcript."""
    out = []
    for record in read_transcript(str(path)):
        if record.is_message and record.sender == "client":
            message = json.loads(record.raw)
            if message.get("method") == method:
                out.append(message["params"])
    return out


def caps(**prompt: bool) -> str:
    """The scripted agent's capabilities with these promptCapabilities."""
    return json.dumps({**DEFAULT_CAPS, "promptCapabilities": prompt})


class _SeesTools(ReferenceClient):
    """A reference client that says when a tool call reached its view."""

    def __init__(self) -> None:
        super().__init__()
        self.tool_seen = threading.Event()

    def session_update(self, params: s.SessionNotification) -> None:
        super().session_update(params)  # merged into the view first
        if isinstance(params.update, s.ToolCall):
            self.tool_seen.set()


# -- Cancellation: updates after session/cancel ---------------------------------------------------

TOOL_CALL = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "kind": "edit"}
LATE_UPDATE = {
    "sessionUpdate": "tool_call_update",
    "toolCallId": "t1",
    "status": "completed",
    "content": [{"type": "content", "content": {"type": "text", "text": "done anyway"}}],
}


def test_PROMPT_27_tool_call_update_after_cancel_is_applied(tmp_path):
    client = _SeesTools()
    pair = Pair(client)
    try:
        sid = pair.new_session(str(tmp_path))
        steps = [{"update": TOOL_CALL}, {"wait_cancel": WAIT}, {"update": LATE_UPDATE}]
        turn = pair.conn.prompt_async(sid, json.dumps({"steps": steps}))
        view = pair.client.view(sid)
        assert client.tool_seen.wait(WAIT)  # the tool call is in the view
        pair.conn.cancel(sid)
        assert str(turn.result(WAIT).stop_reason.value) == "cancelled"
        call = view.tool_calls["t1"]
        # The update sent after the agent saw session/cancel was applied, not dropped.
        assert call.status == "completed"
        assert [c.content.text for c in call.content] == ["done anyway"]
        results = json.loads(view.messages[-1].text)
        assert results[1] is True  # the agent had seen the cancel before it sent the update
    finally:
        pair.close()


def test_PROMPT_27_cli_shows_tool_call_update_after_ctrl_c(cli):
    t = cli(SCRIPTED, ready=SCRIPTED_READY)
    steps = [{"update": TOOL_CALL}, {"wait_cancel": WAIT}, {"update": LATE_UPDATE}]
    t.send(script(*steps))
    t.expect("[tool] Edit (edit): pending")
    t.send(b"\x03")
    out = t.expect(SCRIPTED_READY)
    assert out.index("[cancelling the turn") < out.index("[tool] Edit: completed")
    assert "| done anyway" in out and "[turn ended: cancelled]" in out


# -- Terminals ------------------------------------------------------------------------------------

WAITER = """\
print("first line", flush=True)
with open("go") as go:  # a FIFO: blocks until the test opens it for writing, and closes it
    go.read()
print("second line", flush=True)
"""


def test_TERM_08_cli_shows_terminal_output_while_the_command_runs(cli, tmp_path):
    (tmp_path / "waiter.py").write_text(WAITER)
    os.mkfifo(tmp_path / "go")
    t = cli(ECHO, "--allow", ready=ECHO_READY)
    t.send(f"/run {sys.executable} waiter.py\n".encode())
    # The first line is on screen while the command still runs: it waits on the FIFO "go",
    # which only this test opens, and only after seeing the line.
    before = t.expect("| first line")
    assert "[tool] Run" in before and "second line" not in before
    with open(tmp_path / "go", "w"):
        pass
    t.expect("| second line")
    after = t.expect(ECHO_READY)
    assert "exited with status 0" in after


def test_TERM_15_output_of_released_terminal_stays_available(tmp_path):
    client = ReferenceClient(permissions=Allow())
    with ClientSideConnection.spawn(client, ECHO) as conn:
        conn.initialize(timeout=WAIT)
        sid = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        command = f"/run {sys.executable} -c \"print('kept after release')\""
        assert str(conn.prompt(sid, command, timeout=WAIT).stop_reason.value) == "end_turn"
        (call,) = client.view(sid).tool_calls.values()
        (embedded,) = [c for c in call.content if isinstance(c, s.Terminal)]
        assert call.status == "completed"
        assert client.terminals.live(sid) == []  # the agent released it
        output, truncated, status = client.terminals.snapshot(embedded.terminal_id)
        assert "kept after release" in output and not truncated and status == (0, None)


# -- Stop reasons ---------------------------------------------------------------------------------


def test_PROMPT_18_cli_marks_a_refused_prompt_as_left_out(cli):
    t = cli(ECHO, ready=ECHO_READY)
    t.send(b"/refuse\n")
    out = t.expect(ECHO_READY)
    assert "[turn ended: refusal]" in out
    assert "[refused] the agent refused this prompt" in out
    assert "not be part of the next turn's context" in out
    t.send(b"still here\n")  # the session goes on
    assert "still here" in t.expect(ECHO_READY)


def test_PROMPT_18_one_shot_refusal_says_so_and_exits_5(tmp_path):
    result = one_shot(ECHO, ["-p", "/refuse"], tmp_path)
    assert result.returncode == 5
    assert b"not be part of the next turn's context" in result.stderr


# -- Referenced context: @path mentions ----------------------------------------------------------


def test_CONTENT_05_mention_sent_as_embedded_resource(tmp_path):
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    (tmp_path.parent / "outside.txt").write_text("not yours\n")
    record = tmp_path / "t.jsonl"
    prompt = "summarise @notes.txt, not @../outside.txt nor @someone"
    result = one_shot(ECHO, ["--record", str(record), "-p", prompt], tmp_path)
    assert result.returncode == 0, result.stderr
    assert b"[mention] @notes.txt: embedded" in result.stderr
    (params,) = sent(record, "session/prompt")
    # The line is sent as typed, then the file inside the session's cwd as a resource block.
    assert params["prompt"] == [
        {"type": "text", "text": prompt},
        {
            "type": "resource",
            "resource": {
                "uri": (tmp_path / "notes.txt").as_uri(),
                "text": "remember the milk\n",
                "mimeType": "text/plain",
            },
        },
    ]
    assert validate(str(record)).ok


def test_PROMPT_05_mention_sent_as_resource_link_without_embedded_context(tmp_path):
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    record = tmp_path / "t.jsonl"
    agent = [*SCRIPTED, "--caps", caps(image=False, audio=False, embeddedContext=False)]
    result = one_shot(agent, ["--record", str(record), "-p", "see @notes.txt"], tmp_path)
    assert result.returncode == 0, result.stderr
    (params,) = sent(record, "session/prompt")
    assert params["prompt"][0] == {"type": "text", "text": "see @notes.txt"}
    assert params["prompt"][1] == {
        "type": "resource_link",
        "uri": (tmp_path / "notes.txt").as_uri(),
        "name": "notes.txt",
        "mimeType": "text/plain",
        "size": 18,
    }
    assert b"sent as a link (the agent takes no embedded context)" in result.stderr
    assert validate(str(record)).ok


PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def test_PROMPT_04_image_mention_follows_the_image_capability(tmp_path):
    (tmp_path / "shot.png").write_bytes(PNG)
    record = tmp_path / "t.jsonl"
    # An agent that takes images gets an image block ...
    result = one_shot(ECHO, ["--record", str(record), "-p", "what is @shot.png"], tmp_path)
    assert result.returncode == 0, result.stderr
    (params,) = sent(record, "session/prompt")
    assert [b["type"] for b in params["prompt"]] == ["text", "image"]
    assert params["prompt"][1]["mimeType"] == "image/png"
    # ... one that takes none gets no image, nor the image as an embedded blob: a link.
    record.unlink()
    agent = [*SCRIPTED, "--caps", caps(image=False, audio=False, embeddedContext=True)]
    result = one_shot(agent, ["--record", str(record), "-p", "what is @shot.png"], tmp_path)
    assert result.returncode == 0, result.stderr
    (params,) = sent(record, "session/prompt")
    assert [b["type"] for b in params["prompt"]] == ["text", "resource_link"]
    assert b"@shot.png: sent as a link (the agent takes no image)" in result.stderr
    assert validate(str(record)).ok


def test_PROMPT_04_help_says_what_a_mention_becomes(cli):
    agent = [*SCRIPTED, "--caps", caps(image=False, audio=False, embeddedContext=True)]
    t = cli(agent, ready=SCRIPTED_READY)
    t.send(b"/help\n")
    out = t.expect(SCRIPTED_READY)
    assert "@PATH in a prompt brings a file of the session along: embedded" in out
    assert "this agent takes no image or audio (linked instead)" in out


# -- Config options and modes ---------------------------------------------------------------------


def test_CONFIG_23_cli_uses_config_options_and_never_set_mode(cli, tmp_path):
    record = tmp_path / "t.jsonl"
    t = cli(ECHO, "--allow", "--record", str(record), ready=ECHO_READY)
    t.send(b"/modes\n")
    shown = t.expect(ECHO_READY)
    assert "[config] mode = ask" in shown and "[modes]" not in shown
    t.send(b"/mode code\n")
    assert "[config] mode = code" in t.expect(ECHO_READY)
    # The agent switches back itself: current_mode_update and config_option_update arrive; the
    # change is shown through the config option only.
    t.send(b"//mode ask\n")
    out = t.expect("Switched to ask mode.")
    assert "[config] mode = ask" in out and "[mode] now" not in out
    t.expect(ECHO_READY)
    t.send(b"\x04")
    assert t.wait() == 0
    assert sent(record, "session/set_mode") == []
    assert [(p["configId"], p["value"]) for p in sent(record, "session/set_config_option")] == [
        ("mode", "code")
    ]


def test_CONFIG_23_cli_falls_back_to_modes(cli, tmp_path):
    record = tmp_path / "t.jsonl"
    t = cli([*SCRIPTED, "--modes-only"], "--record", str(record), ready=SCRIPTED_READY)
    t.send(b"/modes\n")
    assert "[modes] ask* code" in t.expect(SCRIPTED_READY)
    t.send(b"/mode code\n")
    assert "[mode] now code" in t.expect(SCRIPTED_READY)
    t.send(b"/modes\n")
    assert "[modes] ask code*" in t.expect(SCRIPTED_READY)
    t.send(b"\x04")
    assert t.wait() == 0
    assert [p["modeId"] for p in sent(record, "session/set_mode")] == ["code"]


def select(option_id: str, category: Any, values: List[str]) -> Dict[str, Any]:
    option = {
        "id": option_id,
        "name": option_id.title(),
        "type": "select",
        "currentValue": values[0],
        "options": [{"value": v, "name": v} for v in values],
    }
    if category is not None:
        option["category"] = category
    return option


def test_CONFIG_12_model_shortcut_sets_the_first_of_two_model_options(cli, tmp_path):
    options = [
        select("effort", "_vendor_effort", ["low", "high"]),  # a custom category: a hint only
        select("main_model", "model", ["small", "large"]),
        select("fallback_model", "model", ["small", "large"]),
    ]
    agent = [*SCRIPTED, "--options", json.dumps(options)]
    record = tmp_path / "t.jsonl"
    t = cli(agent, "--record", str(record), ready=SCRIPTED_READY)
    t.send(b"/model large\n")
    assert "[config] main_model = large" in t.expect(SCRIPTED_READY)
    t.send(b"/mode code\n")  # no option of category mode: said, nothing sent
    assert "this agent has no mode option; see /config" in t.expect(SCRIPTED_READY)
    t.send(b"\x04")
    assert t.wait() == 0
    assert [(p["configId"], p["value"]) for p in sent(record, "session/set_config_option")] == [
        ("main_model", "large")
    ]
    assert sent(record, "session/set_mode") == []


# -- Authentication -------------------------------------------------------------------------------


def test_AUTH_19_auth_required_after_logout_asks_to_authenticate_again(cli):
    t = cli([*ECHO, "--require-auth"], "--auth", "echo-login", ready=ECHO_READY)
    t.send(b"/logout\n")
    t.expect("[auth] logged out")
    t.expect(ECHO_READY)
    t.send(b"are you there\n")
    out = t.expect(ECHO_READY)
    assert "[authentication required: run /auth echo-login (the agent offers: echo-login)]" in out
    t.send(b"/auth echo-login\n")
    assert "[auth] authenticated with echo-login" in t.expect(ECHO_READY)
    t.send(b"back again\n")  # the same session works again
    assert "back again" in t.expect(ECHO_READY)
    t.send(b"\x04")
    assert t.wait() == 0


def test_AUTH_19_auth_required_at_startup_names_the_option(tmp_path):
    result = one_shot([*ECHO, "--require-auth"], ["-p", "hi"], tmp_path)
    assert result.returncode == 1
    assert b"authentication required: rerun with --auth echo-login" in result.stderr
