"""``acpref client`` against a hostile agent, over real pipes: nothing it sends reaches the
terminal as a control sequence, and no answer of the wrong shape ends in a traceback.

Spec: elicitation.mdx (URL security), tool-calls.mdx (Requesting Permission), transports.mdx;
clauses ELICIT-34, ELICIT-36, TRANSPORT-08. The agent is ``peers/client_agent.py`` (a prompt that
is a JSON script), or ``RAW_AGENT`` below (fixed answers, for what that agent cannot get wrong).
Every displayed field gets the same payload: OSC 52 (clipboard), OSC 0 (window title), OSC 8
(a hidden link), a one-byte C1 CSI, a carriage return and an erase-line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from peers.client_harness import AGENT_SCRIPT

WAIT = 20.0
CLIENT = [sys.executable, "-m", "acpref", "client"]

EVIL = (
    "run ls\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b]8;;https://evil.test/\x1b\\"
    "docs\x1b]8;;\x1b\\\x9b2K\r\x1b[2Kreally rm -rf ~"
)
#: What a terminal would obey: ESC, the one-byte CSI, BEL, a carriage return.
FORBIDDEN = [b"\x1b", "\x9b".encode(), b"\x07", b"\r"]


def script(*steps) -> str:
    return json.dumps({"steps": list(steps)})


def one_shot(prompt: str, tmp_path, *options: str, stdin: bytes = b"", agent=None):
    argv = agent if agent is not None else [sys.executable, str(AGENT_SCRIPT)]
    return subprocess.run(
        [*CLIENT, *options, "-p", prompt, "--", *argv],
        cwd=tmp_path,
        input=stdin,
        capture_output=True,
        timeout=WAIT,
    )


def assert_inert(result) -> str:
    """Nothing a terminal obeys on stdout or stderr; the payload shown with visible escapes."""
    for name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
        for byte in FORBIDDEN:
            assert byte not in data, f"{byte!r} reached the terminal on {name}:\n{data!r}"
    both = (result.stdout + result.stderr).decode("utf-8")
    assert "really rm -rf ~" in both  # what came after the erase is shown too
    if "\\u001b]52" not in both:  # JSON (an extension's params) escapes them its own way
        assert "\\x1b]52;c;" in both and "\\x9b2K" in both and "\\x0d" in both  # visible
    return both


def update(kind: str, **fields):
    return {"update": {"sessionUpdate": kind, **fields}}


TEXT = {"type": "text", "text": EVIL}
FIELDS = {
    "message": update("agent_message_chunk", content=TEXT),
    "thought": update("agent_thought_chunk", content=TEXT),
    "tool title": update("tool_call", toolCallId="t1", title=EVIL),
    "tool content": update(
        "tool_call", toolCallId="t1", title="t", content=[{"type": "content", "content": TEXT}]
    ),
    "diff": update(
        "tool_call",
        toolCallId="t1",
        title="edit",
        content=[{"type": "diff", "path": f"/w/{EVIL}", "oldText": "a\n", "newText": EVIL}],
    ),
    "plan": update("plan", entries=[{"content": EVIL, "priority": "high", "status": "pending"}]),
    "session title": update("session_info_update", title=EVIL),
    "commands": update(
        "available_commands_update", availableCommands=[{"name": EVIL, "description": EVIL}]
    ),
    "config options": update(
        "config_option_update",
        configOptions=[
            {
                "id": "model",
                "name": EVIL,
                "type": "select",
                "currentValue": EVIL,
                "options": [{"value": EVIL, "name": "x"}],
            }
        ],
    ),
    "extension notification": {"notify": "_evil/notice", "params": {"text": EVIL}},
}


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_updates_reach_the_terminal_inert(tmp_path, field):
    result = one_shot(script(FIELDS[field]), tmp_path)
    assert result.returncode == 0, result.stderr
    assert_inert(result)


def test_permission_prompt_shows_the_real_request_inert(tmp_path):
    permission = {
        "call": "session/request_permission",
        "params": {
            "sessionId": "$sid",
            "toolCall": {"toolCallId": "t1", "title": EVIL, "rawInput": {"command": EVIL}},
            "options": [
                {"optionId": "yes", "name": EVIL, "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        },
    }
    result = one_shot(script(permission), tmp_path, "--ask", stdin=b"2\n")
    assert result.returncode == 0, result.stderr
    shown = assert_inert(result)
    # The whole request is on one line each: what is drawn is all there is.
    title = next(line for line in shown.splitlines() if line.startswith("[permission]"))
    assert "really rm -rf ~" in title and "\\x0d" in title
    assert '"optionId": "no"' in shown


def test_ELICIT_34_36_url_consent_cannot_hide_the_host(tmp_path):
    # spec ELICIT-34: the complete URL; spec ELICIT-36: the host stands out, oddities flagged.
    url = "https://good.test\x1b[8m.evil.test\x1b[0m/\u200blogin"
    params = {
        "message": EVIL,
        "mode": "url",
        "sessionId": "$sid",
        "elicitationId": "e1",
        "url": url,
    }
    result = one_shot(script({"call": "elicitation/create", "params": params}), tmp_path,
                      "--ask", stdin=b"d\n")
    assert result.returncode == 0, result.stderr
    shown = assert_inert(result)
    assert "URL:  https://good.test\\x1b[8m.evil.test\\x1b[0m/\\u200blogin" in shown
    assert "invisible or control characters" in shown
    assert '{"result": {"action": "decline"}}' in shown


def test_form_field_titles_are_inert(tmp_path):
    form = {
        "message": EVIL,
        "mode": "form",
        "sessionId": "$sid",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": EVIL}},
        },
    }
    result = one_shot(script({"call": "elicitation/create", "params": form}), tmp_path,
                      "--ask", stdin=b"Ada\nd\n")
    assert result.returncode == 0, result.stderr
    assert_inert(result)


def test_terminal_output_of_a_command_the_agent_runs_is_inert(tmp_path):
    create = {
        "call": "terminal/create",
        "params": {
            "sessionId": "$sid",
            "command": sys.executable,
            "args": ["-c", f"import sys; sys.stdout.write({EVIL!r})"],
        },
    }
    wait = {
        "call": "terminal/wait_for_exit",
        "params": {"sessionId": "$sid", "terminalId": "$r0.terminalId"},
    }
    result = one_shot(script(create, wait), tmp_path)
    assert result.returncode == 0, result.stderr
    assert_inert(result)


# -- A raw agent: fixed answers, its name, its stderr, its error messages ---------------------

RAW_AGENT = textwrap.dedent(
    """
    import json, sys
    answers = json.loads(sys.argv[1])
    sys.stderr.write(answers.pop("stderr", "") + "\\n"); sys.stderr.flush()
    defaults = {
        "initialize": {"result": {"protocolVersion": 1, "agentCapabilities": {},
                                  "authMethods": [],
                                  "agentInfo": {"name": "raw", "version": "1"}}},
        "session/new": {"result": {"sessionId": "s1"}},
        "session/prompt": {"result": {"stopReason": "end_turn"}},
    }
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message or method not in defaults:
            continue
        answer = answers.get(method, defaults[method])
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}) + "\\n")
        sys.stdout.flush()
    """
)


@pytest.fixture
def raw_agent(tmp_path):
    path = tmp_path / "raw_agent.py"
    path.write_text(RAW_AGENT)
    return lambda answers: [sys.executable, str(path), json.dumps(answers)]


def test_agent_name_stderr_and_error_message_are_inert(tmp_path, raw_agent):
    agent = raw_agent(
        {
            "stderr": EVIL,
            "initialize": {
                "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {},
                    "authMethods": [],
                    "agentInfo": {"name": "raw", "title": EVIL, "version": "1"},
                }
            },
            "session/prompt": {"error": {"code": -32603, "message": EVIL}},
        }
    )
    result = one_shot("hi", tmp_path, agent=agent)
    assert result.returncode == 1
    shown = assert_inert(result)
    assert "[agent stderr] run ls\\x1b]52;c;" in shown
    assert "Traceback" not in shown


BAD_ANSWERS = {
    "initialize: not an object": {"initialize": {"result": 5}},
    "initialize: version a string": {
        "initialize": {"result": {"protocolVersion": "1", "agentCapabilities": {}}}
    },
    "initialize: no version": {"initialize": {"result": {"agentCapabilities": {}}}},
    "initialize: null": {"initialize": {"result": None}},
    "session/new: no sessionId": {"session/new": {"result": {}}},
    "session/new: sessionId a number": {"session/new": {"result": {"sessionId": 3}}},
    "session/new: sessionId null": {"session/new": {"result": {"sessionId": None}}},
    "session/new: null": {"session/new": {"result": None}},
    "session/prompt: no stopReason": {"session/prompt": {"result": {}}},
    "session/prompt: stopReason a number": {"session/prompt": {"result": {"stopReason": 7}}},
    "session/prompt: a list": {"session/prompt": {"result": []}},
    "session/prompt: error code a string": {
        "session/prompt": {"error": {"code": "bad", "message": "x"}}
    },
    "session/prompt: result and error": {
        "session/prompt": {"result": {"stopReason": "end_turn"}, "error": {"code": 1, "message": "x"}}
    },
    "session/prompt: error without message": {"session/prompt": {"error": {"code": -32603}}},
}


@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
def test_an_answer_of_the_wrong_shape_is_one_line_and_status_1(tmp_path, raw_agent, case):
    result = one_shot("hi", tmp_path, agent=raw_agent(BAD_ANSWERS[case]))
    err = result.stderr.decode()
    assert "Traceback" not in err, err
    assert result.returncode == 1, (result.returncode, err)
    diagnosis = [line for line in err.splitlines() if line.startswith("acpref client: ")]
    assert diagnosis and not diagnosis[-1].startswith("acpref client: warning"), err


def test_TRANSPORT_08_a_log_line_on_the_agents_stdout_is_reported_live(tmp_path):
    agent = tmp_path / "chatty.py"
    agent.write_text(
        f"import runpy, sys\nsys.stdout.write('Starting agent v1.0...\\n'); sys.stdout.flush()\n"
        f"sys.argv = [{str(AGENT_SCRIPT)!r}]\nrunpy.run_path({str(AGENT_SCRIPT)!r}, "
        f"run_name='__main__')\n"
    )
    result = one_shot("hello", tmp_path, agent=[sys.executable, str(agent)])
    assert result.returncode == 0, result.stderr
    err = result.stderr.decode()
    assert "agent broke TRANSPORT-08" in err and "Starting agent v1.0" in err
    assert result.stdout == b"hello\n"  # stdout: the answer only
