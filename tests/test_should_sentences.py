"""SHOULD sentences and definitions on the wire: a SHOULD finding, or a spec-gap one, never a FAIL.

Spec: schema.json (Error: "The message should be limited to a concise single sentence", RPC-21),
initialization.mdx (INIT-09: a client answered with a version it does not support closes the
connection), session-notices.md (NOTICE-06, graded as spec-gap notice-in-replay), and the
definitions "A unique identifier for this tool call" (TOOL-02), currentModeId among the
available modes (MODES-02); session-setup.mdx (SETUP-28: the root set is a boundary for file
operations) and session-config-options.mdx (CONFIG-24: modes and the mode option kept in sync).
The list of SHOULD sentences reviewed is spec_notes/should.md.
"""

from __future__ import annotations

import json
from typing import Any, List, Tuple

from acpref.oracle import validate

C, A = "client", "agent"


def _init(version: int = 1, requested: int = 1, caps: Any = None) -> List[Tuple[str, Any]]:
    return [
        (
            C,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": requested,
                    "clientCapabilities": caps or {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            },
        ),
        (
            A,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "result": {
                    "protocolVersion": version,
                    "agentCapabilities": {"loadSession": True},
                    "agentInfo": {"name": "a", "version": "1"},
                    "authMethods": [],
                },
            },
        ),
    ]


NEW = [
    (
        C,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        },
    ),
    (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
]


def _report(*messages: Tuple[str, Any], init: Any = None) -> Any:
    records = [
        {"from": sender, "ts": 0, "line": json.dumps(message)}
        for sender, message in [*(init or _init()), *messages]
    ]
    records.append({"from": C, "ts": 0, "event": "eof"})
    return validate(records)


def _levels(report: Any) -> List[Tuple[str, str, str]]:
    return [(f.clause, f.level, f.blame.value) for f in report.findings]


def _update(update: Any) -> Tuple[str, Any]:
    params = {"sessionId": "s1", "update": update}
    return (A, {"jsonrpc": "2.0", "method": "session/update", "params": params})


def test_RPC_21_an_error_message_over_several_lines_is_a_SHOULD_finding() -> None:
    ask = (C, {"jsonrpc": "2.0", "id": 2, "method": "_x/ask", "params": {}})
    trace = "Traceback (most recent call last):\n  File x, line 1\nKeyError: 'cwd'"
    answer = (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": trace}})
    report = _report(ask, answer)
    assert _levels(report) == [("RPC-21", "SHOULD", A)]
    assert report.ok and not report.findings[0].is_violation
    # One sentence, however long, and a trailing newline, are not judged.
    one = (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "boom, e.g. x.\n"}})
    assert _levels(_report(ask, one)) == []


def test_INIT_09_a_client_going_on_after_a_version_it_did_not_ask_for_is_a_SHOULD_finding() -> None:
    report = _report(*NEW, init=_init(version=2, requested=1))
    # The agent broke INIT-07 (a MUST); the client going on is a SHOULD finding, never failing.
    assert _levels(report) == [("INIT-07", "MUST", A), ("INIT-09", "SHOULD", C)]
    assert not [f for f in report.findings if f.clause == "INIT-09"][0].is_violation
    # An older version than asked for may be one the client speaks: not judged.
    older = _report(*NEW, init=_init(version=1, requested=2))
    assert "INIT-09" not in [c for c, _, _ in _levels(older)]


def _load_with(*replay: Tuple[str, Any]) -> Any:
    load = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/load",
            "params": {"sessionId": "s1", "cwd": "/tmp", "mcpServers": []},
        },
    )
    return _report(
        *NEW,
        load,
        *replay,
        (A, {"jsonrpc": "2.0", "id": 3, "result": {}}),
        init=_init(caps={"session": {"notices": {}}}),
    )


NOTICE = {"sessionUpdate": "notice", "severity": "info", "title": "MCP server down"}


def test_NOTICE_06_a_notice_in_the_replay_is_reported_as_a_gap_not_a_failure() -> None:
    # spec-gap notice-in-replay: the wire cannot tell a replayed notice from a new live one.
    report = _load_with(_update(NOTICE))
    assert _levels(report) == [("spec-gap:notice-in-replay", "spec-gap", A)]
    assert report.ok
    # After the load's answer, a notice is live (NOTICE-10, NOTICE-11).
    live = _report(*NEW, _update(NOTICE), init=_init(caps={"session": {"notices": {}}}))
    assert _levels(live) == []


def test_TOOL_02_MODES_02_definitions_broken_are_spec_gaps() -> None:
    call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "status": "pending"}
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
        },
    )
    again = {**call, "title": "Write", "status": "completed"}  # finished (PROMPT-16)
    end = (A, {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn"}})
    report = _report(*NEW, prompt, _update(call), _update(again), end)
    assert _levels(report) == [("TOOL-02", "spec-gap", A)] and report.ok
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}
    result = {"sessionId": "s1", "modes": modes}
    with_modes = [NEW[0], (A, {"jsonrpc": "2.0", "id": 1, "result": result})]
    unknown = _update({"sessionUpdate": "current_mode_update", "currentModeId": "yolo"})
    report = _report(*with_modes, unknown)
    assert _levels(report) == [("MODES-02", "spec-gap", A)] and report.ok


def test_CONFIG_22_a_mode_option_without_modes_is_a_SHOULD_finding() -> None:
    option = {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": "ask",
        "options": [{"value": "ask", "name": "Ask"}],
    }
    result = {"sessionId": "s1", "configOptions": [option]}
    report = _report(NEW[0], (A, {"jsonrpc": "2.0", "id": 1, "result": result}))
    assert _levels(report) == [("CONFIG-22", "SHOULD", A)] and report.ok
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}
    both = {**result, "modes": modes}
    assert _levels(_report(NEW[0], (A, {"jsonrpc": "2.0", "id": 1, "result": both}))) == []


FORM_SCHEMA = {
    "type": "object",
    "properties": {
        "strategy": {"type": "string", "enum": ["conservative", "balanced"]},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}},
    },
    "required": ["strategy"],
}


def _elicited(content: Any, mode: str = "form") -> Any:
    params: Any = {"sessionId": "s1", "mode": mode, "message": "How?"}
    if mode == "form":
        params["requestedSchema"] = FORM_SCHEMA
    else:
        params.update(elicitationId="e1", url="https://example.com/x")
    ask = (A, {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": params})
    result: Any = {"action": "accept"}
    if content is not None:
        result["content"] = content
    answer = (C, {"jsonrpc": "2.0", "id": 7, "result": result})
    return _report(*NEW, ask, answer, init=_init(caps={"elicitation": {"form": {}, "url": {}}}))


def test_ELICIT_22_accepted_form_content_off_its_schema_is_a_SHOULD_finding() -> None:
    # spec ELICIT-22: "For an accepted form elicitation, `content` SHOULD conform to the
    # requested schema": a required field missing, a value of the wrong type, outside its enum.
    for content in (
        {"count": 2},
        {"strategy": "reckless"},
        {"strategy": "balanced", "count": "2"},
        {"strategy": "balanced", "count": True},
        {"strategy": "balanced", "tags": ["c"]},
        None,
    ):
        report = _elicited(content)
        assert _levels(report) == [("ELICIT-22", "SHOULD", C)], content
        assert report.ok
    # Content that conforms, and a URL elicitation (its content is out of band), are not judged.
    assert _levels(_elicited({"strategy": "balanced", "count": 2, "tags": ["a", "b"]})) == []
    assert _levels(_elicited(None, mode="url")) == []


def _permitted_then(kind: str, *statuses: str) -> Any:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]},
        },
    )
    call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "status": "pending"}
    options = [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    ask = {"sessionId": "s1", "toolCall": {"toolCallId": "t1"}, "options": options}
    chosen = {"outcome": {"outcome": "selected", "optionId": kind}}
    return _report(
        *NEW,
        prompt,
        _update(call),
        (A, {"jsonrpc": "2.0", "id": 9, "method": "session/request_permission", "params": ask}),
        (C, {"jsonrpc": "2.0", "id": 9, "result": chosen}),
        *[
            _update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": status})
            for status in statuses
        ],
        (A, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
    )


def test_PROMPT_14_an_allowed_tool_call_done_without_in_progress_is_a_SHOULD_finding() -> None:
    # spec PROMPT-14: "Once permission is granted (if required), the Agent SHOULD invoke the tool
    # and report a status update marking the tool as `in_progress`".
    for done in ("completed", "failed"):
        report = _permitted_then("yes", done)
        assert _levels(report) == [("PROMPT-14", "SHOULD", A)], done
        assert report.ok
    # in_progress first, and a tool call the client rejected, are not judged.
    assert _levels(_permitted_then("yes", "in_progress", "completed")) == []
    assert _levels(_permitted_then("no", "failed")) == []
    # Only the first status after the permission is judged.
    assert _levels(_permitted_then("yes", "in_progress", "failed", "completed")) == []


FS_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}}


def _fs_report(*paths: str, dirs: Any = None, method: str = "fs/read_text_file") -> Any:
    params: Any = {"cwd": "/home/u/project", "mcpServers": []}
    if dirs is not None:
        params["additionalDirectories"] = dirs
    new = (C, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params})
    created = (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}})
    messages = []
    for i, path in enumerate(paths, start=10):
        ask: Any = {"sessionId": "s1", "path": path}
        if method == "fs/write_text_file":
            ask["content"] = "x"
        messages.append((A, {"jsonrpc": "2.0", "id": i, "method": method, "params": ask}))
        result = {"content": "x"} if method == "fs/read_text_file" else {}
        messages.append((C, {"jsonrpc": "2.0", "id": i, "result": result}))
    caps = {**FS_CAPS}
    agent_caps = {"loadSession": True, "sessionCapabilities": {"additionalDirectories": {}}}
    init = _init(caps=caps)
    init[1][1]["result"]["agentCapabilities"] = agent_caps
    return _report(new, created, *messages, init=init)


def test_SETUP_28_a_file_request_outside_the_roots_is_a_SHOULD_finding() -> None:
    # spec SETUP-28: "This root set SHOULD serve as a boundary for tool operations on the file
    # system": the root set is [cwd, ...additionalDirectories].
    for method in ("fs/read_text_file", "fs/write_text_file"):
        for path in ("/etc/passwd", "/home/u/project/../other/x", "/home/u/projectile/x"):
            report = _fs_report(path, method=method)
            assert _levels(report) == [("SETUP-28", "SHOULD", A)], (method, path)
            assert report.ok and not report.findings[0].is_violation
    # Inside the cwd, the cwd itself, inside an additional directory: not judged.
    inside = ("/home/u/project/a.py", "/home/u/project", "/home/u/project/./b/../c.txt")
    assert _levels(_fs_report(*inside)) == []
    assert _levels(_fs_report("/home/u/shared/lib.py", dirs=["/home/u/shared/"])) == []
    # Without that directory among the roots, the same path is outside.
    assert _levels(_fs_report("/home/u/shared/lib.py")) == [("SETUP-28", "SHOULD", A)]


def test_SETUP_28_windows_paths_compare_without_case_or_slash_style() -> None:
    def report(path: str) -> Any:
        params = {"cwd": "C:\\Users\\u\\Project", "mcpServers": []}
        ask = {"sessionId": "s1", "path": path}
        return _report(
            (C, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params}),
            (A, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}),
            (A, {"jsonrpc": "2.0", "id": 4, "method": "fs/read_text_file", "params": ask}),
            (C, {"jsonrpc": "2.0", "id": 4, "result": {"content": ""}}),
            init=_init(caps=FS_CAPS),
        )

    assert _levels(report("c:/users/U/project/main.py")) == []
    assert _levels(report("C:\\Users\\u\\Other\\x")) == [("SETUP-28", "SHOULD", A)]


MODES = {"availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}


def _mode_option(value: str, values: Any = ("ask", "code")) -> Any:
    return {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": value,
        "options": [{"value": v, "name": v.title()} for v in values],
    }


def _both(mode: str = "ask", option: str = "ask", values: Any = ("ask", "code")) -> Any:
    result = {
        "sessionId": "s1",
        "modes": {**MODES, "currentModeId": mode},
        "configOptions": [_mode_option(option, values)],
    }
    return [NEW[0], (A, {"jsonrpc": "2.0", "id": 1, "result": result})]


SET_MODE = (
    C,
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "session/set_mode",
        "params": {"sessionId": "s1", "modeId": "code"},
    },
)
MODE_SET = (A, {"jsonrpc": "2.0", "id": 2, "result": {}})


def _options(value: str, values: Any = ("ask", "code")) -> Tuple[str, Any]:
    options = [_mode_option(value, values)]
    return _update({"sessionUpdate": "config_option_update", "configOptions": options})


def _mode(value: str) -> Tuple[str, Any]:
    return _update({"sessionUpdate": "current_mode_update", "currentModeId": value})


def test_CONFIG_24_modes_and_the_mode_option_out_of_step_is_a_SHOULD_finding() -> None:
    # spec CONFIG-24: "Agents SHOULD keep both in sync to ensure consistent behavior regardless of
    # which field the Client uses".
    out_of_step = [
        _both(mode="ask", option="code"),  # the session result disagrees with itself
        [*_both(), SET_MODE, MODE_SET, _options("ask")],  # mode moved, the option repeated
        [*_both(), _options("code"), _mode("ask")],  # option moved, the mode repeated
        [*_both(), SET_MODE, MODE_SET, _options("ask"), _options("ask"), _mode("code")],  # once
    ]
    for messages in out_of_step:
        report = _report(*messages)
        assert _levels(report) == [("CONFIG-24", "SHOULD", A)], messages
        assert report.ok and not report.findings[0].is_violation
    in_step = [
        [*_both(), SET_MODE, MODE_SET, _options("code")],
        [*_both(), SET_MODE, _options("code"), MODE_SET, _options("code")],  # option went first
        [*_both(), _options("code"), _mode("code"), _options("code")],
        [*_both(), _mode("code"), _options("code")],
    ]
    for messages in in_step:
        assert _levels(_report(*messages)) == [], messages
    # spec-gap mode-option-values: an option whose values are not the mode ids is not compared.
    other = ("fast", "slow")
    assert _levels(_report(*_both(option="fast", values=other))) == []
    assert _levels(_report(*_both(values=("ask", "code", "x")), _mode("code"))) == []


def _turn(*updates: Any, stop: Any = "end_turn", cancel: bool = False) -> Any:
    prompt = (
        C,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]},
        },
    )
    cancelled = (C, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
    answer: Any = {"stopReason": stop} if stop is not None else None
    end = (A, {"jsonrpc": "2.0", "id": 2, "result": answer})
    if stop is None:
        end = (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "model down"}})
    return _report(*NEW, prompt, *[_update(u) for u in updates], *([cancelled] * cancel), end)


def _call(status: Any = None, call_id: str = "t1") -> Any:
    call = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "Read"}
    return call if status is None else {**call, "status": status}


def _status(status: str, call_id: str = "t1") -> Any:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status}


def test_PROMPT_16_a_turn_ended_with_a_tool_call_unfinished_is_a_gap_finding() -> None:
    # spec PROMPT-16: "When the tool completes, the Agent sends another update with the final
    # status and any content" (no keyword: spec-gap unfinished-tool-call).
    gap = [("spec-gap:unfinished-tool-call", "spec-gap", A)]
    for updates in (
        [_call()],  # pending by default
        [_call("pending"), _status("in_progress")],
        [_call("in_progress")],
        [_call(), _status("completed"), _status("in_progress")],  # set going again
        [_call(call_id="t1"), _call(call_id="t2"), _status("failed", "t1")],
    ):
        report = _turn(*updates)
        assert _levels(report) == gap, updates
        assert report.ok and not report.findings[0].is_violation
    assert "'t2'" in _turn(_call(), _call(call_id="t2"), _status("failed")).findings[0].message
    # Finished tool calls, and a turn cut short (cancelled, another stop reason, an error), are
    # not judged: the client marks a cancelled turn's tool calls cancelled (PROMPT-20).
    assert _levels(_turn(_call(), _status("in_progress"), _status("completed"))) == []
    assert _levels(_turn(_call("completed"))) == []
    assert _levels(_turn(_call("in_progress"), stop="cancelled", cancel=True)) == []
    raced = _turn(_call("in_progress"), cancel=True)  # end_turn after the cancel: its own gap
    assert [c for c, _, _ in _levels(raced)] == ["spec-gap:cancel-race"]
    for stop in ("max_tokens", "max_turn_requests", "refusal", None):
        assert _levels(_turn(_call("in_progress"), stop=stop)) == [], stop
