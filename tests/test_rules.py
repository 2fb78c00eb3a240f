"""Tests of the protocol rules (``acpref._core``) on hand-written message sequences, on the
in-memory pair (tests/pair.py: both sides' ``ProtocolState``, no I/O).

Spec: every page; each case names the clause (or ``spec-gap:`` decision) its last message breaks.

A case is a *prelude* (messages that break nothing: each is sent and neither side may find
anything, which also tests that the rules stay quiet on good traffic) and a *last message*, which
``check`` must find the clause in on both sides, blaming the right party, without changing the
state. Then it is sent: the sender's rules find it and stop it if it is a MUST the sender is
blamed for; sent anyway (by a peer that is not acpref), the receiver finds it and refuses a request
with the code the finding names. Then the observer that plugs the rules into a live side is
tested, and a full echo-agent transcript is replayed through a fresh ``ProtocolState`` the way
the oracle will: not one finding.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any, Collection, Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpref._core import Party, ProtocolState, clauses, level_of, other
from acpref._shell.observer import RulesObserver
from acpref._core.state import AnsweredIds
from acpref.errors import LocalProtocolError
from pair import Pair, err, note, ok, req

A, C = Party.AGENT, Party.CLIENT
Msg = Tuple[Party, Dict[str, Any]]

CLIENT_CAPS = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    "elicitation": {"form": {}},
}
AGENT_CAPS = {
    "loadSession": True,
    "promptCapabilities": {"image": False},
    "mcpCapabilities": {"http": False},
    "sessionCapabilities": {"list": {}, "delete": {}, "resume": {}, "close": {}},
    "auth": {"logout": {}},
}
OPTIONS = [
    {
        "id": "model",
        "name": "Model",
        "type": "select",
        "currentValue": "a",
        "options": [{"value": "a", "name": "A"}],
    },
]
MODES = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}


def update(sid: str, body: Dict[str, Any]) -> Msg:
    return (A, note("session/update", {"sessionId": sid, "update": body}))


def chunk(
    text: str = "x", message_id: Optional[str] = None, kind: str = "agent_message_chunk"
) -> Dict[str, Any]:
    body: Dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        body["messageId"] = message_id
    return body


def init(
    client_caps: Any = CLIENT_CAPS, agent_caps: Any = AGENT_CAPS, auth: Any = None
) -> List[Msg]:
    return [
        (
            C,
            req(
                0,
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": client_caps,
                    "clientInfo": {"name": "c", "version": "1"},
                },
            ),
        ),
        (
            A,
            ok(
                0,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": agent_caps,
                    "agentInfo": {"name": "a", "version": "1"},
                    "authMethods": auth or [],
                },
            ),
        ),
    ]


def new(i: int = 1, sid: str = "s1", cwd: str = "/p", **result: Any) -> List[Msg]:
    return [
        (C, req(i, "session/new", {"cwd": cwd, "mcpServers": []})),
        (A, ok(i, {"sessionId": sid, **result})),
    ]


def started(**kw: Any) -> List[Msg]:
    """Initialized, one session s1 with modes and options, and a turn (prompt id 2) running."""
    return (
        init(**kw)
        + new(modes=MODES, configOptions=OPTIONS)
        + [
            (
                C,
                req(
                    2,
                    "session/prompt",
                    {"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]},
                ),
            )
        ]
    )


def probed(i: int = 101) -> List[Msg]:
    """An agent request (an extension method) and the client's answer: the client had read
    everything the agent sent before it (stdio is ordered, ``ConnectionFacts.read``)."""
    return [(A, req(i, "_acpref/ping")), (C, err(i, -32601))]


def asking(i: int = 100, options: Optional[List[str]] = None) -> Msg:
    opts = [{"optionId": o, "name": o, "kind": "allow_once"} for o in (options or ["ok"])]
    return (
        A,
        req(
            i,
            "session/request_permission",
            {"sessionId": "s1", "toolCall": {"toolCallId": "c1"}, "options": opts},
        ),
    )


def terminal(i: int = 200) -> List[Msg]:
    return [
        (A, req(i, "terminal/create", {"sessionId": "s1", "command": "ls"})),
        (C, ok(i, {"terminalId": "t1"})),
    ]


# (name, prelude, last message, clause, blame)
# fmt: off
#: A session/resume of s1 in flight (id 7).
RESUME: List[Msg] = [(C, req(7, "session/resume", {"sessionId": "s1", "cwd": "/p", "mcpServers": []}))]

CASES: List[Tuple[str, List[Msg], Msg, str, Party]] = [
    # -- any request: method names, directions, ids, phases, gates (state._check_call)
    ("reserved name", init(), (C, req(1, "foo/bar")), "EXT-05", C),
    ("wrong direction", init(), (C, req(1, "fs/read_text_file", {"sessionId": "s", "path": "/a"})), "RPC-12", C),
    ("notification as request", init(), (C, req(1, "session/cancel", {"sessionId": "s"})), "OVERVIEW-01", C),
    ("id reused in flight", started(), (C, req(2, "session/list")), "spec-gap:duplicate-id", C),
    ("before initialize", [], (C, req(1, "session/new", {"cwd": "/p", "mcpServers": []})), "INIT-01", C),
    ("gate closed", init(agent_caps={}), (C, req(1, "session/load", {"sessionId": "s", "cwd": "/p", "mcpServers": []})), "SETUP-03", C),
    ("logout not advertised", init(agent_caps={}), (C, req(1, "logout")), "AUTH-03", C),
    # -- responses (state._check_response)
    ("result and error", init() + [(C, req(1, "session/list"))], (A, {**ok(1, {"sessions": []}), "error": {"code": 1, "message": "x"}}), "RPC-05", A),
    ("malformed error", init() + [(C, req(1, "session/list"))], (A, {"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}), "RPC-09", A),
    ("answered twice", init() + [(C, req(1, "session/list")), (A, ok(1, {"sessions": []}))], (A, ok(1, {"sessions": []})), "RPC-06", A),
    ("answer to nothing", init(), (A, ok(77)), "RPC-04", A),
    # -- initialize and authentication (client side)
    ("initialize twice", init(), (C, req(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "c", "version": "1"}})), "spec-gap:initialize-twice", C),
    ("no client capabilities", [], (C, req(0, "initialize", {"protocolVersion": 1, "clientInfo": {"name": "c", "version": "1"}})), "INIT-02", C),
    ("no client info", [], (C, req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})), "INIT-03", C),
    ("unadvertised auth method", init(auth=[{"id": "a", "name": "A"}]), (C, req(1, "authenticate", {"methodId": "b"})), "AUTH-07", C),
    ("terminal auth method", init(client_caps={"auth": {"terminal": True}}, auth=[{"id": "t", "name": "T", "type": "terminal"}]), (C, req(1, "authenticate", {"methodId": "t"})), "AUTH-08", C),
    # -- session setup (client side)
    ("relative cwd", init(), (C, req(1, "session/new", {"cwd": "p", "mcpServers": []})), "SETUP-25", C),
    ("roots not advertised", init(), (C, req(1, "session/new", {"cwd": "/p", "mcpServers": [], "additionalDirectories": ["/q"]})), "SETUP-24", C),
    ("relative root", init(agent_caps={**AGENT_CAPS, "sessionCapabilities": {"additionalDirectories": {}}}), (C, req(1, "session/new", {"cwd": "/p", "mcpServers": [], "additionalDirectories": ["q"]})), "SETUP-20", C),
    ("resume without servers", init() + new(), (C, req(2, "session/resume", {"sessionId": "s1", "cwd": "/p"})), "SETUP-11", C),
    ("new without servers", init(), (C, req(1, "session/new", {"cwd": "/p"})), "SETUP-01", C),
    ("http server not advertised", init(), (C, req(1, "session/new", {"cwd": "/p", "mcpServers": [{"type": "http", "name": "h", "url": "http://x", "headers": []}]})), "SETUP-35", C),
    ("relative server command", init(), (C, req(1, "session/new", {"cwd": "/p", "mcpServers": [{"name": "m", "command": "srv", "args": [], "env": []}]})), "SETUP-32", C),
    ("load without cwd", init() + new(), (C, req(2, "session/load", {"sessionId": "s1", "mcpServers": []})), "SETUP-04", C),
    ("load with another cwd", init() + new(), (C, req(2, "session/load", {"sessionId": "s1", "cwd": "/q", "mcpServers": []})), "SETUP-22", C),
    ("close of unknown session", init(), (C, req(1, "session/close", {"sessionId": "nope"})), "SETUP-15", C),
    # -- list (client side)
    ("relative list filter", init(), (C, req(1, "session/list", {"cwd": "p"})), "LIST-03", C),
    ("forged cursor", init(), (C, req(1, "session/list", {"cursor": "made-up"})), "LIST-11", C),
    # -- modes, config options, prompts (client side)
    ("prompt to unknown session", init(), (C, req(1, "session/prompt", {"sessionId": "nope", "prompt": []})), "PROMPT-01", C),
    ("set_mode of unknown session", init(), (C, req(1, "session/set_mode", {"sessionId": "nope", "modeId": "a"})), "spec-gap:unknown-session", C),
    ("unknown mode", init() + new(modes=MODES), (C, req(2, "session/set_mode", {"sessionId": "s1", "modeId": "zzz"})), "MODES-04", C),
    ("boolean without capability", init() + new(configOptions=OPTIONS), (C, req(2, "session/set_config_option", {"sessionId": "s1", "configId": "model", "type": "boolean", "value": True})), "INIT-13", C),
    ("unknown option", init() + new(configOptions=OPTIONS), (C, req(2, "session/set_config_option", {"sessionId": "s1", "configId": "zzz", "value": "a"})), "CONFIG-17", C),
    ("boolean option set as a string", init(client_caps={"session": {"configOptions": {"boolean": {}}}}) + new(configOptions=[{"id": "b", "name": "B", "type": "boolean", "currentValue": False}]), (C, req(2, "session/set_config_option", {"sessionId": "s1", "configId": "b", "value": "true"})), "CONFIG-18", C),
    ("select value not offered", init() + new(configOptions=OPTIONS), (C, req(2, "session/set_config_option", {"sessionId": "s1", "configId": "model", "value": "zzz"})), "CONFIG-17", C),
    ("second prompt", started(), (C, req(3, "session/prompt", {"sessionId": "s1", "prompt": []})), "spec-gap:concurrent-prompt", C),
    ("image not advertised", init() + new(), (C, req(2, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "image", "data": "x", "mimeType": "image/png"}]})), "PROMPT-03", C),
    ("cancel of nothing", init(), (C, note("$/cancel_request", {"requestId": 5})), "spec-gap:unknown-cancel-id", C),
    # -- the client's answers
    # The probe (an agent request after the ask, answered before the cancel) proves the client
    # had read the ask when it cancelled: it was pending (without it: spec-gap
    # permission-crossing, test_PROMPT_21_... below).
    ("permission answered after cancel", started() + [asking(), *probed(), (C, note("session/cancel", {"sessionId": "s1"}))], (C, ok(100, {"outcome": {"outcome": "selected", "optionId": "ok"}})), "PROMPT-21", C),
    ("option not offered", started() + [asking()], (C, ok(100, {"outcome": {"outcome": "selected", "optionId": "other"}})), "TOOL-08", C),
    ("write answered null", started() + [(A, req(100, "fs/write_text_file", {"sessionId": "s1", "path": "/p/a", "content": ""}))], (C, ok(100, None) | {"result": None}), "FS-08", C),
    ("released terminal answered", started() + terminal() + [(A, req(201, "terminal/release", {"sessionId": "s1", "terminalId": "t1"})), (C, ok(201)), (A, req(202, "terminal/output", {"sessionId": "s1", "terminalId": "t1"}))], (C, ok(202, {"output": "", "truncated": False})), "TERM-14", C),
    ("unadvertised mode not refused", started(client_caps={}) + [(A, req(100, "elicitation/create", {"sessionId": "s1", "mode": "form", "message": "q", "requestedSchema": {}}))], (C, ok(100, {"action": "accept"})), "ELICIT-29", C),
    ("bad elicitation action", started() + [(A, req(100, "elicitation/create", {"sessionId": "s1", "mode": "form", "message": "q", "requestedSchema": {}}))], (C, ok(100, {"action": "maybe"})), "ELICIT-20", C),
    # -- initialize and authentication (agent side)
    ("unsupported version refused", [(C, req(0, "initialize", {"protocolVersion": 9, "clientCapabilities": {}, "clientInfo": {"name": "c", "version": "1"}}))], (A, err(0)), "INIT-08", A),
    ("version 1 refused", [(C, req(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "c", "version": "1"}}))], (A, err(0)), "INIT-04", A),
    ("protocolVersion not an integer", [init()[0]], (A, ok(0, {"protocolVersion": "1", "agentInfo": {"name": "a", "version": "1"}})), "INIT-04", A),
    ("other version for 1", [init()[0]], (A, ok(0, {"protocolVersion": 2, "agentCapabilities": {}, "agentInfo": {"name": "a", "version": "1"}})), "INIT-07", A),
    ("no agent info", [init()[0]], (A, ok(0, {"protocolVersion": 1, "agentCapabilities": {}})), "INIT-05", A),
    ("terminal auth offered", [init()[0]], (A, ok(0, {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": {"name": "a", "version": "1"}, "authMethods": [{"id": "t", "name": "T", "type": "terminal"}]})), "AUTH-05", A),
    ("authenticate answered null", init(auth=[{"id": "a", "name": "A"}]) + [(C, req(1, "authenticate", {"methodId": "a"}))], (A, {"jsonrpc": "2.0", "id": 1, "result": None}), "AUTH-09", A),
    ("load answered null", init() + new() + [(C, req(2, "session/load", {"sessionId": "s1", "cwd": "/p", "mcpServers": []}))], (A, {"jsonrpc": "2.0", "id": 2, "result": None}), "SETUP-08", A),
    ("auth_required after authenticate", init(auth=[{"id": "a", "name": "A"}]) + [(C, req(1, "authenticate", {"methodId": "a"})), (A, ok(1)), (C, req(2, "session/new", {"cwd": "/p", "mcpServers": []}))], (A, err(2, -32000)), "AUTH-10", A),
    # -- session setup, list, delete (agent side)
    ("boolean option offered", init() + [(C, req(1, "session/new", {"cwd": "/p", "mcpServers": []}))], (A, ok(1, {"sessionId": "s1", "configOptions": [{"id": "b", "name": "B", "type": "boolean", "currentValue": True}]})), "CONFIG-05", A),
    ("select value outside", init() + [(C, req(1, "session/new", {"cwd": "/p", "mcpServers": []}))], (A, ok(1, {"sessionId": "s1", "configOptions": [{**OPTIONS[0], "currentValue": "z"}]})), "CONFIG-04", A),
    ("current mode unavailable", init() + [(C, req(1, "session/new", {"cwd": "/p", "mcpServers": []}))], (A, ok(1, {"sessionId": "s1", "modes": {**MODES, "currentModeId": "zzz"}})), "MODES-02", A),
    ("session id reused", init() + new() + [(C, req(2, "session/new", {"cwd": "/p", "mcpServers": []}))], (A, ok(2, {"sessionId": "s1"})), "SETUP-02", A),
    ("close answered with the turn running", started() + [(C, req(3, "session/close", {"sessionId": "s1"}))], (A, ok(3)), "spec-gap:close-order", A),
    ("listed relative cwd", init() + [(C, req(1, "session/list"))], (A, ok(1, {"sessions": [{"sessionId": "x", "cwd": "p"}]})), "LIST-05", A),
    ("listed outside the filter", init() + [(C, req(1, "session/list", {"cwd": "/a"}))], (A, ok(1, {"sessions": [{"sessionId": "x", "cwd": "/b"}]})), "LIST-04", A),
    ("deleted yet listed", init() + [(C, req(1, "session/delete", {"sessionId": "x"})), (A, ok(1)), (C, req(2, "session/list"))], (A, ok(2, {"sessions": [{"sessionId": "x", "cwd": "/b"}]})), "DELETE-03", A),
    ("bad updatedAt", init() + [(C, req(1, "session/list"))], (A, ok(1, {"sessions": [{"sessionId": "x", "cwd": "/b", "updatedAt": "yesterday"}]})), "LIST-06", A),
    ("roots listed without capability", init() + [(C, req(1, "session/list"))], (A, ok(1, {"sessions": [{"sessionId": "x", "cwd": "/b", "additionalDirectories": []}]})), "LIST-07", A),
    ("incomplete option list", init() + new(configOptions=OPTIONS + [{**OPTIONS[0], "id": "m2"}]) + [(C, req(2, "session/set_config_option", {"sessionId": "s1", "configId": "m2", "value": "a"}))], (A, ok(2, {"configOptions": OPTIONS})), "CONFIG-19", A),
    # -- the end of a turn (agent side)
    ("cancel_request answered by another error", started() + [(C, note("$/cancel_request", {"requestId": 2}))], (A, err(2, -32603)), "spec-gap:cancel-request-support", A),
    # PROMPT-24 binds "these errors", those of an operation the cancel aborted: the wire shows
    # the agent had read the cancel when it answered a request sent after it.
    ("cancelled while asking, answered with an error: a race", started() + [asking(), (C, note("session/cancel", {"sessionId": "s1"})), (C, ok(100, {"outcome": {"outcome": "cancelled"}}))], (A, err(2, -32603)), "spec-gap:cancel-race", A),
    ("cancelled, a later request answered, answered with an error", started() + [(C, note("session/cancel", {"sessionId": "s1"})), (C, req(9, "_x/ping")), (A, err(9, -32601))], (A, err(2, -32800)), "PROMPT-24", A),
    ("cancelled, answered with an error: a race", started() + [(C, note("session/cancel", {"sessionId": "s1"}))], (A, err(2, -32603)), "spec-gap:cancel-race", A),
    # Asking the client is no witness: the agent may have written its answer to the prompt
    # before it read the cancel and the client's answer, wherever the two directions are seen.
    ("cancelled while asking, ended normally: a race", started() + [asking(), (C, note("session/cancel", {"sessionId": "s1"})), (C, ok(100, {"outcome": {"outcome": "cancelled"}}))], (A, ok(2, {"stopReason": "end_turn"})), "spec-gap:cancel-race", A),
    # Stdio is ordered: an answer to a request sent after the cancel shows the cancel was read.
    ("cancelled, a later request answered, ended normally", started() + [(C, note("session/cancel", {"sessionId": "s1"})), (C, req(9, "_x/ping")), (A, err(9, -32601))], (A, ok(2, {"stopReason": "end_turn"})), "PROMPT-23", A),
    ("closed, a later request answered, ended normally", started() + [(C, req(3, "session/close", {"sessionId": "s1"})), (C, req(9, "_x/ping")), (A, err(9, -32601))], (A, ok(2, {"stopReason": "end_turn"})), "SETUP-16", A),
    ("cancelled, an earlier request answered, ended normally: a race", started() + [(C, req(9, "_x/ping")), (C, note("session/cancel", {"sessionId": "s1"})), (A, err(9, -32601))], (A, ok(2, {"stopReason": "end_turn"})), "spec-gap:cancel-race", A),
    ("cancelled, ended normally: a race", started() + [(C, note("session/cancel", {"sessionId": "s1"}))], (A, ok(2, {"stopReason": "end_turn"})), "spec-gap:cancel-race", A),
    ("cancelled while asking, ended before the answer: a race", started() + [asking(), (C, note("session/cancel", {"sessionId": "s1"}))], (A, ok(2, {"stopReason": "end_turn"})), "spec-gap:cancel-race", A),
    ("closed while asking, ended normally: a race", started() + [asking(), (C, req(3, "session/close", {"sessionId": "s1"})), (C, ok(100, {"outcome": {"outcome": "cancelled"}}))], (A, ok(2, {"stopReason": "end_turn"})), "spec-gap:cancel-race", A),
    ("cancelled while asking, a later request answered, ended normally", started() + [asking(), (C, note("session/cancel", {"sessionId": "s1"})), (C, req(9, "_x/ping")), (C, ok(100, {"outcome": {"outcome": "cancelled"}})), (A, err(9, -32601))], (A, ok(2, {"stopReason": "end_turn"})), "PROMPT-23", A),
    # -- session/update (agent side)
    ("update for unknown session", init(), update("nope", chunk()), "spec-gap:unknown-session", A),
    ("mode update unavailable", init() + new(modes=MODES), update("s1", {"sessionUpdate": "current_mode_update", "currentModeId": "zzz"}), "MODES-02", A),
    ("boolean option update", init() + new(), update("s1", {"sessionUpdate": "config_option_update", "configOptions": [{"id": "b", "name": "B", "type": "boolean", "currentValue": True}]}), "CONFIG-05", A),
    ("info update with cwd", init() + new(), update("s1", {"sessionUpdate": "session_info_update", "cwd": "/x"}), "LIST-16", A),
    # SETUP-12: an update recorded while the resume is in flight may have crossed it on the wire;
    # the agent had read the resume only when it answered a request sent at or after it, or when
    # the update is a user message chunk (no turn's output: the history replayed).
    ("chunk during resume: it may have crossed the resume", init() + new() + RESUME, update("s1", chunk()), "spec-gap:resume-crossing", A),
    ("chunk of an ended turn during resume", started() + [(A, ok(2, {"stopReason": "end_turn"}))] + RESUME, update("s1", chunk()), "spec-gap:resume-crossing", A),
    ("user chunk during resume", init() + new() + RESUME, update("s1", chunk(kind="user_message_chunk")), "SETUP-12", A),
    ("chunk during resume, a request after it answered", init() + new() + RESUME + [(C, req(9, "_x/ping")), (A, err(9, -32601))], update("s1", chunk()), "SETUP-12", A),
    ("chunk of a cancelled turn during resume", started() + [(C, note("session/cancel", {"sessionId": "s1"})), (A, ok(2, {"stopReason": "cancelled"}))] + RESUME, update("s1", chunk()), "PROMPT-26", A),
    ("chunk after the turn", started() + [(A, ok(2, {"stopReason": "end_turn"}))], update("s1", chunk()), "spec-gap:content-after-turn", A),
    ("chunk after the cancelled turn", started() + [(C, note("session/cancel", {"sessionId": "s1"})), (A, ok(2, {"stopReason": "cancelled"}))], update("s1", chunk()), "PROMPT-26", A),
    ("chunk after the load", init() + new() + [(C, req(2, "session/load", {"sessionId": "s1", "cwd": "/p", "mcpServers": []})), (A, ok(2))], update("s1", chunk()), "SETUP-07", A),
    ("chunk outside any turn", init() + new(), update("s1", chunk()), "spec-gap:content-outside-turn", A),
    ("replayed message id reused", init() + new() + [(C, req(2, "session/load", {"sessionId": "s1", "cwd": "/p", "mcpServers": []})), update("s1", chunk("a", "m1")), update("s1", chunk("b", "m2"))], update("s1", chunk("c", "m1")), "SETUP-06", A),
    ("tool call id reused", started() + [update("s1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t"})], update("s1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t"}), "TOOL-02", A),
    ("update of unknown tool call", started(), update("s1", {"sessionUpdate": "tool_call_update", "toolCallId": "zz"}), "TOOL-05", A),
    ("relative diff path", started(), update("s1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "content": [{"type": "diff", "path": "a", "newText": ""}]}), "TOOL-13", A),
    ("unknown terminal embedded", started(), update("s1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "content": [{"type": "terminal", "terminalId": "zz"}]}), "spec-gap:embedded-terminal-id", A),
    ("relative location", started(), update("s1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "locations": [{"path": "a"}]}), "TOOL-15", A),
    ("location line 0", started(), update("s1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "locations": [{"path": "/a", "line": 0}]}), "OVERVIEW-07", A),
    # -- the agent's requests
    ("read for unknown session", init(), (A, req(100, "fs/read_text_file", {"sessionId": "nope", "path": "/a"})), "spec-gap:unknown-session", A),
    ("read not advertised", init(client_caps={}) + new(), (A, req(100, "fs/read_text_file", {"sessionId": "s1", "path": "/a"})), "FS-01", A),
    ("repeated option ids", started(), asking(options=["x", "x"]), "spec-gap:unique-option-ids", A),
    ("relative read path", started(), (A, req(100, "fs/read_text_file", {"sessionId": "s1", "path": "a"})), "FS-03", A),
    ("relative write path", started(), (A, req(100, "fs/write_text_file", {"sessionId": "s1", "path": "a", "content": ""})), "FS-06", A),
    ("read line 0", started(), (A, req(100, "fs/read_text_file", {"sessionId": "s1", "path": "/a", "line": 0})), "OVERVIEW-07", A),
    ("relative terminal cwd", started(), (A, req(100, "terminal/create", {"sessionId": "s1", "command": "ls", "cwd": "x"})), "TERM-02", A),
    ("output of released terminal", started() + terminal() + [(A, req(201, "terminal/release", {"sessionId": "s1", "terminalId": "t1"})), (C, ok(201))], (A, req(202, "terminal/output", {"sessionId": "s1", "terminalId": "t1"})), "spec-gap:released-terminal", A),
    ("url mode not advertised", started(), (A, req(100, "elicitation/create", {"sessionId": "s1", "mode": "url", "message": "q", "elicitationId": "e", "url": "https://x"})), "ELICIT-06", A),
    ("elicitation for unknown session", started(), (A, req(100, "elicitation/create", {"sessionId": "zz", "mode": "form", "message": "q", "requestedSchema": {}})), "ELICIT-09", A),
    ("elicitation for no request", started(), (A, req(100, "elicitation/create", {"requestId": 999, "mode": "form", "message": "q", "requestedSchema": {}})), "ELICIT-09", A),
    ("url elicitation id reused", started(client_caps={"elicitation": {"url": {}}}) + [(A, req(100, "elicitation/create", {"sessionId": "s1", "mode": "url", "message": "q", "elicitationId": "e", "url": "https://x"}))], (A, req(101, "elicitation/create", {"sessionId": "s1", "mode": "url", "message": "q", "elicitationId": "e", "url": "https://x"})), "ELICIT-24", A),
    ("url not a URI", started(client_caps={"elicitation": {"url": {}}}), (A, req(100, "elicitation/create", {"sessionId": "s1", "mode": "url", "message": "q", "elicitationId": "e", "url": "nope"})), "ELICIT-17", A),
    ("completion of unknown id", started(), (A, note("elicitation/complete", {"elicitationId": "zz"})), "ELICIT-27", A),
]
# fmt: on


#: Cases whose prelude must break a rule of the other party to set the scene.
PRELUDE_BREAKS = {
    "released terminal answered": {"spec-gap:released-terminal"},
    "unadvertised mode not refused": {"ELICIT-06"},
}


def _scene(prelude: List[Msg], allowed: Collection[str] = (), **kw: Any) -> Pair:
    """The in-memory pair after ``prelude``, none of whose messages may break a rule (but the
    ``allowed`` ones) on either side."""
    return Pair(**kw).quietly(prelude, allowed=allowed)


def _is_error_response(message: Dict[str, Any]) -> bool:
    return "error" in message and "method" not in message


@pytest.mark.parametrize("name, prelude, last, clause, blame", CASES, ids=[c[0] for c in CASES])
def test_rule_finds(name: str, prelude: List[Msg], last: Msg, clause: str, blame: Party) -> None:
    sender, message = last
    allowed = PRELUDE_BREAKS.get(name, set())
    # A prelude that breaks a rule of the other party comes from a peer that is not acpref.
    scene = {"lax": {other(blame)}, "answer_refusals": False} if allowed else {}
    pair = _scene(prelude, allowed, **scene)
    before = copy.deepcopy(message)
    found = pair.check(sender, message)  # the sender's rules; the receiver's say the same
    assert clause in [f.clause for f in found], [f.as_dict() for f in found]
    hit = next(f for f in found if f.clause == clause)
    assert hit.blame is blame and hit.index == len(prelude)
    assert hit.level == level_of(clause)
    # Rule 2: check changes nothing; the same message finds the same again.
    assert [f.clause for f in pair.check(sender, message)] == [f.clause for f in found]
    assert message == before
    # Sent: the sender's rules find it; one it must not send (a MUST it is blamed for, in
    # anything but an error answer) it stops, and the receiver never sees it.
    step = pair.send(sender, message)
    assert clause in [f.clause for f in step.sent_findings]
    if hit.binding and blame is sender and not _is_error_response(message):
        assert step.stopped is not None and step.received_findings == []
        # A peer that is not acpref sends it all the same: the receiver finds it.
        pair = _scene(prelude, allowed, **{**scene, "lax": {sender} | scene.get("lax", set())})
        step = pair.send(sender, message)
        assert step.sent
    else:
        assert step.sent
    got = next(f for f in step.received_findings if f.clause == clause)
    assert got.blame is blame and got.index == len(prelude)
    # Rule 3: the receiver refuses a request that breaks a MUST naming an answer code.
    if "method" in message and "id" in message and hit.binding and hit.code is not None:
        first = next(f for f in step.received_findings if f.binding and f.code is not None)
        assert step.refusal is not None and step.refusal.code == first.code


def test_every_clause_cited_by_a_case_is_known() -> None:
    known = set(clauses())
    for _, _, _, clause, _ in CASES:
        assert clause in known or clause.startswith("spec-gap:"), clause


def test_requests_refused_on_receipt_carry_their_codes() -> None:
    """The findings the receiver answers with: the error code each names, and the error answer
    that goes back over the wire."""
    expected = {
        "relative cwd": -32602,
        "gate closed": -32601,
        "before initialize": -32600,
        "prompt to unknown session": -32002,
        "set_mode of unknown session": -32002,
        "image not advertised": -32602,
        "unknown mode": -32602,
        "read not advertised": -32601,
        "url mode not advertised": -32602,
    }
    for name, prelude, (sender, message), clause, _ in CASES:
        if name in expected:
            pair = _scene(prelude, lax={sender})
            step = pair.send(sender, message)
            found = next(f for f in step.received_findings if f.clause == clause)
            assert found.code == expected[name], name
            assert step.refusal is not None and step.refusal.code == expected[name], name
            receiver, answer = pair.wire[-1]
            assert receiver is other(sender) and answer["id"] == message["id"]
            assert answer["error"]["code"] == expected[name]


# -- what only the end of a transcript shows ------------------------------------------------------


def test_finish_finds_unanswered_requests_and_unreleased_terminals() -> None:
    pair = _scene(started() + terminal())
    for side in (A, C):
        found = {(f.clause, f.blame) for f in pair.finish()[side]}
        assert ("RPC-06", A) in found  # the prompt was never answered
        assert ("TERM-07", A) in found
    assert pair.finish(complete=False) == {A: [], C: []}


def _model_withdrawn(witness: bool) -> List[Msg]:
    """A session whose model "a" the agent withdraws (a config_option_update offering "b"
    only); with ``witness``, the client then answers a request the agent sent after it."""
    changed = [{**OPTIONS[0], "currentValue": "b", "options": [{"value": "b", "name": "B"}]}]
    out = init() + new(configOptions=OPTIONS)
    out.append(update("s1", {"sessionUpdate": "config_option_update", "configOptions": changed}))
    if witness:
        read = {"sessionId": "s1", "path": "/p/a"}
        out += [(A, req(100, "fs/read_text_file", read)), (C, ok(100, {"content": ""}))]
    return out


def test_CONFIG_17_a_request_that_crossed_the_options_update_is_no_violation() -> None:
    # A client that set model "a" as the agent withdrew it wrote its request against the
    # options it had read; the wire (wherever observed) does not show it had read the update:
    # spec-gap config-crossing, not CONFIG-17 at MUST. Once the client answered a request sent
    # after the update, it had read it: "a" breaks CONFIG-17.
    params = {"sessionId": "s1", "configId": "model", "value": "a"}
    set_a = req(2, "session/set_config_option", params)
    crossed = _scene(_model_withdrawn(witness=False)).check(C, set_a)
    assert [(f.clause, f.level) for f in crossed] == [("spec-gap:config-crossing", "spec-gap")]
    assert crossed[0].code == -32602  # acpref's agent refuses it all the same
    step = Pair(lax={C}).quietly(_model_withdrawn(witness=False)).client_sends(set_a)
    assert step.refusal is not None and step.refusal.code == -32602
    read = _scene(_model_withdrawn(witness=True)).check(C, set_a)
    assert [(f.clause, f.level) for f in read] == [("CONFIG-17", "MUST")]
    # "b", the value now offered, is fine either way; a value never offered is CONFIG-17.
    set_b = {**set_a, "params": {**set_a["params"], "value": "b"}}
    assert _scene(_model_withdrawn(witness=False)).client_sends(set_b).findings == []
    set_z = {**set_a, "params": {**set_a["params"], "value": "z"}}
    step = _scene(_model_withdrawn(witness=False)).client_sends(set_z)
    assert [f.clause for f in step.sent_findings] == ["CONFIG-17"] and step.stopped is not None


def test_CONFIG_17_the_options_a_client_may_still_go_by_stay_bounded() -> None:
    # A client that answers none of the agent's requests may be behind any number of updates:
    # the session keeps a few superseded tables, and once it forgot one, a value none of the kept
    # ones offers is still no violation (the client may go by a forgotten one).
    msgs = init() + new(configOptions=OPTIONS)
    for n in range(12):
        value = f"v{n}"
        opts = [{**OPTIONS[0], "currentValue": value, "options": [{"value": value, "name": value}]}]
        msgs.append(update("s1", {"sessionUpdate": "config_option_update", "configOptions": opts}))
    pair = _scene(msgs)
    for state in (pair.agent, pair.client):
        session = state.sessions["s1"]
        assert len(session.config_before) <= 8 and session.config_forgot
    params = {"sessionId": "s1", "configId": "model", "value": "a"}
    set_a = req(2, "session/set_config_option", params)
    assert [f.clause for f in pair.check(C, set_a)] == ["spec-gap:config-crossing"]


def test_PROMPT_21_a_permission_request_that_crossed_the_cancel_is_no_violation() -> None:
    # The agent wrote its permission request as the client wrote session/cancel: recorded first,
    # it was not pending for the client, which had not read it when it cancelled (spec-gap
    # permission-crossing). Once the client answered a request sent after the ask before it
    # cancelled, it had read the ask: "selected" breaks PROMPT-21 at MUST.
    selected = ok(100, {"outcome": {"outcome": "selected", "optionId": "ok"}})
    cancel = (C, note("session/cancel", {"sessionId": "s1"}))
    crossed = _scene(started() + [asking(), cancel]).client_sends(selected)
    assert [(f.clause, f.level) for f in crossed.sent_findings] == [
        ("spec-gap:permission-crossing", "spec-gap")
    ]
    # acpref's own client, which read it, never sends it.
    assert crossed.sent_findings[0].binding and crossed.stopped is not None
    read = _scene(started() + [asking(), *probed(), cancel]).check(C, selected)
    assert [(f.clause, f.level) for f in read] == [("PROMPT-21", "MUST")]
    # A probe answered only after the cancel proves nothing of the moment of the cancel.
    ping, pong = (A, req(101, "_acpref/ping")), (C, err(101, -32601))
    late = _scene(started() + [asking(), ping, cancel, pong])
    assert [f.clause for f in late.check(C, selected)] == ["spec-gap:permission-crossing"]
    # "cancelled" is the answer due either way.
    cancelled = ok(100, {"outcome": {"outcome": "cancelled"}})
    assert _scene(started() + [asking(), cancel]).client_sends(cancelled).findings == []


def test_a_clean_turn_finds_nothing() -> None:
    turn = started() + [
        update("s1", {"sessionUpdate": "plan", "entries": []}),
        update("s1", chunk("a", "m1")),
        update(
            "s1",
            {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "status": "pending"},
        ),
        asking(),
        (C, ok(100, {"outcome": {"outcome": "selected", "optionId": "ok"}})),
        update(
            "s1", {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}
        ),
        update(
            "s1", {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}
        ),
        (A, ok(2, {"stopReason": "end_turn"})),
        (C, req(3, "session/load", {"sessionId": "s1", "cwd": "/p", "mcpServers": []})),
        update("s1", chunk("hi", "u1", "user_message_chunk")),
        update("s1", chunk("a", "m1")),
        (A, ok(3)),
        (C, note("session/cancel", {"sessionId": "s1"})),  # after the turn: nothing to cancel
    ]
    assert _scene(turn).finish() == {A: [], C: []}


# -- the observer that plugs the rules into a live side -------------------------------------------


def test_observer_refuses_to_send_a_must_violation() -> None:
    observer = RulesObserver(A)
    for sender, message in init(client_caps={}) + new():
        (observer.on_send if sender is A else observer.on_receive)(message)
    with pytest.raises(LocalProtocolError) as info:
        observer.on_send(req(100, "fs/read_text_file", {"sessionId": "s1", "path": "/a"}))
    assert info.value.clause == "FS-01"
    assert 100 not in observer.state.outstanding[A]  # nothing recorded: it was not sent


def test_observer_never_stops_an_error_response() -> None:
    """An error answer is the last answer a request can get: reported, never stopped (RPC-06)."""
    observer = RulesObserver(A)
    observer.on_receive(init()[0][1])
    observer.on_send(err(0))  # breaks INIT-04, but the client must get an answer
    assert [f.clause for f in observer.findings] == ["INIT-04"]
    assert 0 not in observer.state.outstanding[C]


def test_observer_answers_a_broken_request_and_logs_the_rest() -> None:
    observer = RulesObserver(A)
    for sender, message in init():
        (observer.on_send if sender is A else observer.on_receive)(message)
    refusal = observer.on_receive(req(1, "session/new", {"cwd": "relative", "mcpServers": []}))
    assert refusal is not None and refusal.code == -32602 and refusal.data == {"clause": "SETUP-25"}
    # A SHOULD-level finding is not a refusal.
    assert observer.on_receive(note("$/cancel_request", {"requestId": 42})) is None
    assert [f.clause for f in observer.findings] == ["SETUP-25", "spec-gap:unknown-cancel-id"]


def test_step_carries_the_rule_3_refusal_and_the_observer_answers_with_it() -> None:
    """Rule 3 is decided once, by the core (``Step.refused_by``); the observer only reads it."""
    state, observer = ProtocolState(), RulesObserver(A)
    for sender, message in init():
        state.step(sender, message)
        (observer.on_send if sender is A else observer.on_receive)(message)
    broken = req(1, "session/new", {"cwd": "relative", "mcpServers": []})
    step = state.step(C, broken)
    assert step.refused_by is not None and step.refused_by.clause == "SETUP-25"
    assert step.refused_by in step.findings and step.effects == ()
    refusal = observer.on_receive(broken)
    assert refusal is not None and refusal.to_wire() == step.refused_by.to_rpc_error().to_wire()
    # A SHOULD-level finding refuses nothing; nor does anything but a request.
    assert state.step(C, note("$/cancel_request", {"requestId": 42})).refused_by is None
    assert state.step(A, err(1)).refused_by is None


def test_a_reused_id_is_refused_by_the_core_and_its_error_answer_is_no_refusal() -> None:
    """spec-gap duplicate-id: the reuse is refused (Rule 3); the error that answers it is the
    ``"refusal"`` kind of message, which closes the duplicate and refuses nothing itself."""
    observer = RulesObserver(A)
    for sender, message in init():
        (observer.on_send if sender is A else observer.on_receive)(message)
    first = req(7, "session/new", {"cwd": "/tmp", "mcpServers": []})
    assert observer.on_receive(first) is None
    refusal = observer.on_receive(first)  # the same id again, still in flight
    assert refusal is not None and refusal.code == -32600
    assert refusal.data == {"clause": "spec-gap:duplicate-id"}
    answer = err(7, -32600)
    assert observer.is_refusal(answer)
    observer.on_send(answer)  # the duplicate's answer: the first request keeps the id
    assert not observer.is_refusal(answer) and 7 in observer.state.outstanding[C]


def test_observer_lets_should_level_findings_through_on_send() -> None:
    observer = RulesObserver(A)
    for sender, message in init() + new():
        (observer.on_send if sender is A else observer.on_receive)(message)
    observer.on_send(update("s1", chunk())[1])  # content outside a turn: a SHOULD, logged
    assert [f.clause for f in observer.findings] == ["spec-gap:content-outside-turn"]


# -- a real transcript, judged the way the oracle will --------------------------------------------


def test_echo_transcript_replayed_through_fresh_rules_finds_nothing(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent / "peers"))
    from agent_client import in_process

    from acpref.echo import EchoAgent

    (tmp_path / "r.txt").write_text("x", encoding="utf-8")
    client = in_process(EchoAgent)
    try:
        sid = client.new_session(str(tmp_path)).session_id
        client.wait_commands(sid)
        for prompt in (
            "hi",
            "/stream 4",
            "/tool",
            "/read r.txt",
            "/write w.txt y",
            f"/run {sys.executable} -V",
            "/form",
            "/url",
            "/ext",
            "/mode code",
        ):
            client.prompt(sid, prompt)
        client.request("session/load", {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []})
        client.wait_for(
            lambda: (
                len(
                    [
                        m
                        for d, m in client.wire
                        if d == "in"
                        and m.get("params", {}).get("update", {}).get("sessionUpdate")
                        == "available_commands_update"
                    ]
                )
                == 2
            )
        )
    finally:
        client.close()
    state = ProtocolState()
    found = []
    for index, (direction, message) in enumerate(client.wire):
        found += state.observe(C if direction == "out" else A, message, index)
    assert found == [] and state.finish() == []


# -- answered ids ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 60), st.sampled_from(["a", "b", None])), max_size=80))
def test_RPC_06_answered_ids_remember_exactly_what_a_set_would(answers: List[Any]) -> None:
    # spec RPC-06: a second answer is found by id. The rules keep integer ids as runs, not a
    # set: whatever the order of the answers, they must hold exactly what a set would.
    kept = AnsweredIds()
    seen = set()
    for request_id in answers:
        kept.add(request_id)
        seen.add(request_id)
        assert all((x in kept) == (x in seen) for x in [*range(-7, 63), "a", "b", "c", None])
    assert kept._firsts == sorted(kept._firsts)
    # Runs never touch: two runs that meet are one.
    assert all(f > last + 1 for f, last in zip(kept._firsts[1:], kept._lasts))
