"""``acpref client`` driven as a person would: in a pseudo-terminal, with keys and Ctrl-C.

Spec: tool-calls.mdx (Requesting Permission), prompt-turn.mdx (Cancellation); clauses TOOL-08,
PROMPT-19, PROMPT-21, TRANSPORT-07. The agent is ``peers/client_agent.py``; a prompt that is a
JSON script tells it what to do (see that file). Every read has a timeout.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from peers.client_harness import AGENT_SCRIPT

WAIT = 10.0
CLIENT = [sys.executable, "-m", "acpref", "client"]
AGENT = ["--", sys.executable, str(AGENT_SCRIPT)]

PERMISSION = {
    "call": "session/request_permission",
    "params": {
        "sessionId": "$sid",
        "toolCall": {"toolCallId": "t1", "title": "Delete everything", "kind": "delete"},
        "options": [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ],
    },
}


def script(*steps) -> bytes:
    return json.dumps({"steps": list(steps)}).encode() + b"\n"


class Terminal:
    """The CLI in a pseudo-terminal: ``send`` keys, ``expect`` text (bounded waits)."""

    def __init__(self, args, cwd: Path, agent=None) -> None:
        """``acpref client ARGS -- AGENT``; ``agent`` (an argv) defaults to the scripted agent."""
        master, slave = os.openpty()

        def controlling_tty() -> None:
            os.setsid()  # a session of its own, with the pty as its terminal: Ctrl-C -> SIGINT
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        env = {**os.environ, "TERM": "dumb", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [*CLIENT, *args, *(AGENT if agent is None else ["--", *agent])],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            preexec_fn=controlling_tty,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.seen = b""

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def expect(self, text: str, timeout: float = WAIT) -> str:
        deadline = time.monotonic() + timeout
        needle = text.encode()
        while needle not in self.seen:
            ready, _, _ = select.select(
                [self.master], [], [], max(0.0, deadline - time.monotonic())
            )
            if not ready:
                raise AssertionError(
                    f"no {text!r} within {timeout}s; the screen shows:\n{self.screen()}"
                )
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            if not data:
                raise AssertionError(
                    f"the CLI ended before {text!r}; the screen shows:\n{self.screen()}"
                )
            self.seen += data
        end = self.seen.index(needle) + len(needle)
        out, self.seen = self.seen[:end], self.seen[end:]
        return out.decode("utf-8", "replace")

    def screen(self) -> str:
        return self.seen.decode("utf-8", "replace")

    def wait(self, timeout: float = WAIT) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(WAIT)
        os.close(self.master)


@pytest.fixture
def terminal(tmp_path):
    made = []

    def start(*args: str) -> Terminal:
        made.append(Terminal(list(args), tmp_path))
        made[-1].expect("scripted-agent> ".replace("scripted-agent", "Scripted Agent"))
        return made[-1]

    yield start
    for t in made:
        t.close()


def run_cli(args, cwd, timeout=WAIT, **kwargs):
    return subprocess.run(
        [*CLIENT, *args, *AGENT], cwd=cwd, capture_output=True, timeout=timeout, **kwargs
    )


# -- In a terminal ---------------------------------------------------------------------------


def test_TOOL_08_permission_answered_at_the_terminal(terminal):
    t = terminal()
    t.send(script(PERMISSION))
    question = t.expect("(Enter: reject): ")
    assert "Delete everything (delete)" in question and "1) Allow [allow_once]" in question
    t.send(b"1\n")
    out = t.expect("Scripted Agent> ")
    assert '"optionId": "yes"' in out
    t.send(b"\x04")  # Ctrl-D quits
    assert t.wait() == 0


def test_PROMPT_19_ctrl_c_cancels_the_turn(terminal):
    t = terminal()
    t.send(script({"chunks": 1}, {"wait_cancel": WAIT}))
    t.expect("c0")
    t.send(b"\x03")
    out = t.expect("Scripted Agent> ")
    assert "[cancelling the turn" in out and "[turn ended: cancelled]" in out
    assert "true" in out  # the agent saw session/cancel
    t.send(b"\x04")
    assert t.wait() == 0


def test_PROMPT_21_ctrl_c_during_a_permission_question(terminal):
    # spec PROMPT-19: Ctrl-C at the question cancels the turn; the question is answered cancelled.
    t = terminal()
    t.send(script(PERMISSION, {"wait_cancel": WAIT}))
    t.expect("(Enter: reject): ")
    t.send(b"\x03")
    out = t.expect("Scripted Agent> ")
    assert '{"outcome": "cancelled"}' in out
    assert "[turn ended: cancelled]" in out


def test_second_ctrl_c_quits(terminal):
    t = terminal()
    t.send(script({"chunks": 1}, {"sleep": WAIT}))  # an agent that ignores the cancel
    t.expect("c0")
    t.send(b"\x03")
    t.expect("Ctrl-C again quits")
    t.send(b"\x03")
    assert t.wait() == 130


def test_SLASH_04_help_lists_the_agent_commands_and_tab_completes(terminal):
    t = terminal()
    commands = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "stream", "description": "Stream some chunks"}],
    }
    t.send(script({"update": commands}))
    t.expect("[commands] /stream")
    t.expect("Scripted Agent> ")
    t.send(b"/help\n")
    out = t.expect("Scripted Agent> ")
    assert "/stream  Stream some chunks" in out
    t.send(b"/str\t")
    t.expect("/stream")
    t.send(b"\x15\x04")  # clear the line, then Ctrl-D


def test_ELICIT_02_form_reviewed_and_edited_before_sending(terminal):
    t = terminal()
    form = {
        "message": "Who are you?",
        "mode": "form",
        "sessionId": "$sid",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
            "required": ["name"],
        },
    }
    t.send(script({"call": "elicitation/create", "params": form}))
    assert "[question from Scripted Agent] Who are you?" in t.expect("Name: ")
    t.send(b"Bob\n")
    t.expect("send (s), edit (e)")  # Enter sends
    t.send(b"e\n")
    t.expect("Name (default Bob): ")
    t.send(b"Ada\n")
    assert '"name": "Ada"' in t.expect("? ")
    t.send(b"s\n")
    out = t.expect("Scripted Agent> ")
    assert '{"result": {"action": "accept", "content": {"name": "Ada"}}}' in out


def test_ELICIT_33_34_url_shown_whole_and_never_opened(terminal):
    t = terminal()
    url = "https://xn--exmple-cua.com/consent?id=42"
    params = {
        "message": "Log in",
        "mode": "url",
        "sessionId": "$sid",
        "elicitationId": "e1",
        "url": url,
    }
    t.send(script({"call": "elicitation/create", "params": params}))
    shown = t.expect("cancel (Enter)? ")
    assert f"URL:  {url}" in shown and "Punycode" in shown and "never opens it" in shown
    t.send(b"a\n")
    out = t.expect("Scripted Agent> ")
    assert '{"result": {"action": "accept"}}' in out


# -- One shot ---------------------------------------------------------------------------------


@pytest.mark.parametrize("stop, status", [("end_turn", 0), ("max_tokens", 3), ("refusal", 5)])
def test_one_shot_exit_status_follows_the_stop_reason(tmp_path, stop, status):
    result = run_cli(["-p", json.dumps({"steps": [{"stop": stop}]})], tmp_path)
    assert result.returncode == status, result.stderr


def test_one_shot_prints_the_answer(tmp_path):
    result = run_cli(["-p", "hello there", "--deny"], tmp_path)
    assert result.returncode == 0
    assert "hello there" in result.stdout.decode()


def test_one_shot_agent_error_is_status_1(tmp_path):
    result = run_cli(["-p", json.dumps({"steps": [{"die": 7}]})], tmp_path)
    assert result.returncode == 1
    assert b"exited with status 7" in result.stderr


def test_json_prints_every_message_received(tmp_path):
    result = run_cli(["--json", "-p", "hi"], tmp_path)
    assert result.returncode == 0
    messages = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert messages and all(m["jsonrpc"] == "2.0" for m in messages)
    assert any(m.get("method") == "session/update" for m in messages)


def test_record_writes_both_directions(tmp_path):
    # An acpref-transcript/1 file: the oracle reads and judges it as it is.
    path = tmp_path / "t.jsonl"
    assert run_cli(["--record", str(path), "-p", "hi"], tmp_path).returncode == 0
    from acpref.oracle import read_transcript, validate

    records = [r for r in read_transcript(str(path)) if r.is_message]
    assert {r.sender for r in records} == {"client", "agent"}
    first = json.loads(records[0].raw)
    assert records[0].sender == "client" and first["method"] == "initialize"
    assert all(isinstance(r.ts, float) for r in records)
    assert validate(str(path)).ok


def test_load_reopens_a_session_instead_of_starting_one(tmp_path):
    path = tmp_path / "t.jsonl"
    result = run_cli(["--load", "sess-7", "--record", str(path), "-p", "hi"], tmp_path)
    assert result.returncode == 0, result.stderr
    from acpref.oracle import read_transcript

    sent = [json.loads(r.raw) for r in read_transcript(str(path)) if r.is_message]
    methods = [m.get("method") for m in sent if "method" in m and "id" in m]
    assert methods[:3] == ["initialize", "session/load", "session/prompt"]
    assert b"session sess-7" in result.stderr  # the banner: stdout is for the answer


def test_TRANSPORT_07_agent_stderr_prefixed_or_hidden(tmp_path):
    prompt = json.dumps({"steps": [{"stderr": 5}]})
    shown = run_cli(["-p", prompt], tmp_path)
    assert b"[agent stderr] eeeee" in shown.stderr
    hidden = run_cli(["--hide-agent-stderr", "-p", prompt], tmp_path)
    assert b"eeeee" not in hidden.stderr


def test_usage_without_an_agent(tmp_path):
    result = subprocess.run([*CLIENT, "-p", "x"], cwd=tmp_path, capture_output=True, timeout=WAIT)
    assert result.returncode == 2
    assert b"after --" in result.stderr


def test_terminal_output_without_newlines_is_written_as_it_comes():
    # A line that never ends (64 MB without a newline) used to be re-joined on every read: each
    # piece is now written once, and the renderer keeps nothing of it.
    from acpref.client import Renderer

    writes = []
    r = Renderer(writes.append)
    for _ in range(1000):
        r.terminal_output("t", "x" * 100)
    assert writes[0] == "  t| " and all(w == "x" * 100 for w in writes[1:])
    r.terminal_output("t", "y\nz")
    r.flush_terminals()
    assert "".join(writes).endswith("x" * 100 + "y\n  t| z\n")
    assert not [k for k, v in vars(r).items() if isinstance(v, dict) and v and k != "_titles"]
