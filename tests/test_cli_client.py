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
import struct
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

    def __init__(self, args, cwd: Path, agent=None, columns: int = 0) -> None:
        """``acpref client ARGS -- AGENT``; ``agent`` (an argv) defaults to the scripted agent;
        ``columns``, the terminal's width (default: the pty's)."""
        master, slave = os.openpty()
        if columns:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))

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
        self.log = b""  # everything read, for a test that replays the screen

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
            self.log += data
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
    # The agent ignores the cancel: the CLI says it is still waiting, rather than nothing.
    t.expect("the agent has not ended the cancelled turn yet; still waiting; Ctrl-C quits")
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
    from acpref._tools.terminal import Renderer

    writes = []
    r = Renderer(writes.append)
    for _ in range(1000):
        r.terminal_output("t", "x" * 100)
    assert writes[0] == "  t| " and all(w == "x" * 100 for w in writes[1:])
    r.terminal_output("t", "y\nz")
    r.flush_terminals()
    assert "".join(writes).endswith("x" * 100 + "y\n  t| z\n")
    assert not [k for k, v in vars(r).items() if isinstance(v, dict) and v and k != "_titles"]


# -- The interactive items of a first contact (issue 18), in a pseudo-terminal ----------------


def test_quit_exits_0_like_ctrl_d(terminal):
    t = terminal()
    t.send(b"/quit\n")
    assert t.wait() == 0


def test_a_tool_call_cut_short_by_ctrl_c_is_shown_cancelled(terminal):
    t = terminal()
    call = {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Long job",
            "status": "in_progress",
        }
    }
    t.send(script(call, {"wait_cancel": WAIT}))
    t.expect("[tool] Long job (other): in_progress")
    t.send(b"\x03")
    out = t.expect("Scripted Agent> ")
    # spec PROMPT-20: the client marks what the cancelled turn left unfinished.
    assert "[tool] Long job: cancelled" in out and "[turn ended: cancelled]" in out


def test_config_refuses_a_boolean_that_is_neither_on_nor_off(terminal):
    t = terminal()
    t.send(b"/config fast maybe\n")
    assert "[config] fast is on or off; 'maybe' is neither" in t.expect("Scripted Agent> ")
    t.send(b"/config fast on\n")
    assert "[config] fast = on" in t.expect("Scripted Agent> ")


def test_form_enter_sends_the_answers(terminal):
    t = terminal()
    form = {
        "message": "Who are you?",
        "mode": "form",
        "sessionId": "$sid",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    t.send(script({"call": "elicitation/create", "params": form}))
    t.expect("name (optional): ")
    t.send(b"Ada\n")
    assert "Enter sends" in t.expect("? ")
    t.send(b"\n")
    out = t.expect("Scripted Agent> ")
    assert '{"result": {"action": "accept", "content": {"name": "Ada"}}}' in out


def test_help_marks_an_agent_command_named_like_a_local_one(terminal):
    t = terminal()
    commands = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {"name": "mode", "description": "Switch mode, the agent's way"},
            {"name": "stream", "description": "Stream some chunks"},
        ],
    }
    t.send(script({"update": commands}))
    t.expect("Scripted Agent> ")
    t.send(b"/help\n")
    out = t.expect("Scripted Agent> ")
    assert "//mode  Switch mode, the agent's way" in out and "  /stream  Stream" in out
    assert "/modes (show the settings) /mode ID" in out


def test_a_plan_update_shows_what_changed(terminal):
    def plan(first: str, second: str):
        entries = [
            {"content": "Read", "priority": "high", "status": first},
            {"content": "Write", "priority": "low", "status": second},
        ]
        return {"update": {"sessionUpdate": "plan", "entries": entries}}

    t = terminal()
    t.send(script(plan("in_progress", "pending"), plan("completed", "in_progress")))
    out = t.expect("Scripted Agent> ")
    assert "[plan] 2 entries" in out and "[>] Read (high)" in out
    assert "[plan 1/2] [x] Read (high)" in out and "[plan 1/2] [>] Write (low)" in out
    t.send(script(plan("completed", "completed")))
    out = t.expect("Scripted Agent> ")
    assert "[plan 2/2] [x] Write (low)" in out and "Read" not in out  # only what changed


def test_extension_notifications_are_shown(terminal):
    t = terminal()
    t.send(script({"notify": "_acme/progress", "params": {"done": 3}}))
    assert '[extension] _acme/progress {"done": 3}' in t.expect("Scripted Agent> ")


def test_mentions_are_set_apart_and_a_missing_file_is_said(tmp_path):
    (tmp_path / "notes.txt").write_text("milk\n")
    echo = [sys.executable, "-m", "acpref", "echo"]
    done = subprocess.run(
        [*CLIENT, "-p", "see @notes.txt and @missing.txt", "--", *echo],
        cwd=tmp_path,
        capture_output=True,
        timeout=WAIT * 3,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert b"[mention] @missing.txt: no such file; sent as plain text" in done.stderr
    # The echoed file is a marker of its own, not glued to the text before it.
    assert b"@missing.txt [resource file://" in done.stdout


def test_the_command_list_does_not_run_into_the_prompt(tmp_path):
    echo = [sys.executable, "-m", "acpref", "echo"]
    t = Terminal([], tmp_path, agent=echo)
    try:
        before = t.expect("[commands]")
        out = t.expect("acpref echo agent> ")
        t.send(b"\x04")
        assert t.wait() == 0
    finally:
        t.close()
    # Drawn before the first prompt, or above it with the prompt drawn again; never after it.
    assert not before.endswith("agent> [commands]") and "/help" in out


def test_repeated_warnings_are_counted_not_repeated(tmp_path):
    # 1,000 malformed updates: three warnings shown, then counts at 10, 100 and 1,000.
    bad = {
        "notify": "session/update",
        "params": {
            "sessionId": "$sid",
            "update": {"sessionUpdate": "agent_message_chunk", "content": 5},
        },
    }
    result = run_cli(["-p", json.dumps({"steps": [bad] * 1000})], tmp_path, timeout=WAIT * 3)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.decode().splitlines() if "dropped" in line]
    assert len(warnings) == 6, warnings
    assert "1,000 warnings like:" in warnings[-1]


def _screen_rows(data: bytes, columns: int) -> list:
    """The rows a terminal of ``columns`` shows after ``data`` (text, CR, LF, BS; wraps at the
    edge; escape sequences ignored): enough to see what a redraw leaves behind."""
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", data.decode("utf-8", "replace"))
    rows, row, col = [[]], 0, 0
    for ch in text:
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row += 1
            rows += [[] for _ in range(row + 1 - len(rows))]
        elif ch == "\b":
            col = max(0, col - 1)
        elif ch.isprintable():
            if col == columns:  # the wrap is deferred until the next character
                row, col = row + 1, 0
                rows += [[] for _ in range(row + 1 - len(rows))]
            line = rows[row]
            line += [" "] * (col + 1 - len(line))
            line[col] = ch
            col += 1
    return ["".join(r).rstrip() for r in rows]


def test_output_at_a_prompt_wider_than_the_terminal_leaves_no_blank_row_or_fragment(tmp_path):
    # The agent's command list arrives while a prompt wider than the terminal (a long title)
    # is shown. Cleared with spaces as if it were one row, the spaces wrapped into a blank row
    # (and, where the terminal wraps the prompt, left its first rows as a fragment).
    title = "A Scripted Agent With A Long Title"
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    agent = [sys.executable, str(AGENT_SCRIPT), "--title", title]
    t = Terminal([], tmp_path, agent=agent, columns=20)
    try:
        t.expect("Title> ")  # readline scrolls a line wider than the terminal sideways
        commands = {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"name": "web", "description": "search the web"}],
        }
        t.send(script({"later": str(fifo), "update": commands}).replace(b"\n", b"\r"))
        t.expect("[null]")
        t.expect("Title> ")
        t.send(b"hi")
        t.expect("hi")
        with open(fifo, "wb") as f:  # now the agent sends the command list
            f.write(b"go")
        t.expect("[commands]")
        t.expect(f"{title}> hi")
        t.send(b"\x15\x04")
        assert t.wait() == 0
    finally:
        t.close()
    rows = _screen_rows(t.log, 20)
    at = max(i for i, r in enumerate(rows) if r.startswith("[commands]"))
    assert rows[at - 1].endswith("hi"), rows[-8:]  # the prompt left whole above, no blank row
    end = next(i for i in range(at + 1, len(rows) + 1) if "".join(rows[at + 1 : i]).endswith("hi"))
    assert "".join(rows[at + 1 : end]) == f"{title}> hi", rows[-8:]  # and drawn again below
