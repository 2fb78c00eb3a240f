"""Deliberately broken agents: each breaks one rule, and the oracle must name its clause.

Run one with ``python tests/broken/agents.py NAME``. Each class says in its docstring what it
does wrong, ``expect`` is the clause the oracle must report (blamed on the agent), and ``drive``
names the conversation of ``tests/test_oracle_broken.py`` that provokes it. Most bend
``RawAgent`` (raw JSON lines); the ``Conn*`` ones misuse ``acpref.connection.Connection``
directly, without the rules layer that would have stopped them.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _raw import RawAgent  # noqa: E402

M = Dict[str, Any]


class WrongResponseId(RawAgent):
    """Answers session/prompt under another id first (then correctly)."""

    expect, drive = "RPC-04", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.send({"jsonrpc": "2.0", "id": m["id"] + 100, "result": {"stopReason": "end_turn"}})
        super().on_session_prompt(m)


class LogOnStdout(RawAgent):
    """Prints a log line on stdout, the protocol stream."""

    expect, drive = "TRANSPORT-08", "handshake"

    def on_initialize(self, m: M) -> None:
        self.write(b"Starting raw agent v1.0...\n")
        super().on_initialize(m)


class UpdateAfterResponse(RawAgent):
    """Streams one more chunk after answering session/prompt (no sentence forbids it after an
    ordinary answer: acpref's reading, content-after-turn)."""

    expect, drive = "spec-gap:content-after-turn", "prompt"

    def on_session_prompt(self, m: M) -> None:
        super().on_session_prompt(m)
        self.say(m["params"]["sessionId"], "one more thing")


class UpdateAfterCancelledAnswer(RawAgent):
    """Streams one more chunk after answering a cancelled session/prompt."""

    expect, drive = "PROMPT-26", "cancel"

    def finish_cancelled(self, m: M) -> None:
        super().finish_cancelled(m)
        self.say(m["params"]["sessionId"], "one more thing")


class ReplayAfterLoadResponse(RawAgent):
    """Answers session/load first, then replays the history."""

    expect, drive = "SETUP-07", "load"

    def on_session_load(self, m: M) -> None:
        self.reply(m, {})
        session_id = m["params"]["sessionId"]
        for update in self.history.get(session_id, []):
            self.update(session_id, update, keep=False)


class AnswersNotification(RawAgent):
    """Answers the session/cancel notification."""

    expect, drive = "OVERVIEW-09", "idle_cancel"

    def on_session_cancel(self, m: M) -> None:
        super().on_session_cancel(m)
        self.send({"jsonrpc": "2.0", "id": None, "result": None})


class ReadsWithoutCapability(RawAgent):
    """Calls fs/read_text_file although the client did not advertise fs.readTextFile."""

    expect, drive = "FS-01", "prompt_nocaps"

    def on_session_prompt(self, m: M) -> None:
        self.request(
            "fs/read_text_file", {"sessionId": m["params"]["sessionId"], "path": "/etc/hostname"}
        )
        super().on_session_prompt(m)


class ErrorInsteadOfCancelled(RawAgent):
    """Ends a cancelled turn with a JSON-RPC error instead of stopReason cancelled."""

    expect, drive = "PROMPT-24", "cancel"

    def finish_cancelled(self, m: M) -> None:
        self.error(m, -32800, "Request cancelled")


class NonUtf8(RawAgent):
    """Writes a message in Latin-1."""

    expect, drive = "TRANSPORT-01", "prompt"

    def on_session_prompt(self, m: M) -> None:
        sid = json.dumps(m["params"]["sessionId"]).encode()
        self.write(
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
            + sid
            + b',"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"caf\xe9"}}}}\n'
        )
        self.reply(m, {"stopReason": "end_turn"})


class MissingJsonrpc(RawAgent):
    """Answers without the jsonrpc member."""

    expect, drive = "RPC-01", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.send({"id": m["id"], "result": {"stopReason": "end_turn"}})


class RelativeLocation(RawAgent):
    """Reports a tool call location with a relative path."""

    expect, drive = "TOOL-15", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.update(
            m["params"]["sessionId"],
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call-1",
                "title": "Read",
                "locations": [{"path": "src/main.py"}],
            },
        )
        super().on_session_prompt(m)


class RelativeReadPath(RawAgent):
    """Asks the client to read a relative path."""

    expect, drive = "FS-03", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.request(
            "fs/read_text_file", {"sessionId": m["params"]["sessionId"], "path": "notes.txt"}
        )
        super().on_session_prompt(m)


class RelativeWritePath(RawAgent):
    """Asks the client to write a relative path."""

    expect, drive = "FS-06", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.request(
            "fs/write_text_file",
            {"sessionId": m["params"]["sessionId"], "path": "notes.txt", "content": "x"},
        )
        super().on_session_prompt(m)


class DuplicateSessionIds(RawAgent):
    """Gives every new session the same id."""

    expect, drive = "SETUP-02", "two_sessions"

    def new_session_id(self) -> str:
        return "sess-1"


class UnknownVersionError(RawAgent):
    """Refuses an unknown protocolVersion with an error instead of answering its own."""

    expect, drive = "INIT-08", "unknown_version"

    def on_initialize(self, m: M) -> None:
        if m["params"].get("protocolVersion") != 1:
            self.error(m, -32602, "unsupported protocol version")
        else:
            super().on_initialize(m)


class WrongVersion(RawAgent):
    """Answers protocolVersion 2 to a client that asked for 1."""

    expect, drive = "INIT-07", "handshake"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            result = {**result, "protocolVersion": 2}
        super().reply(message, result)


class ReplayDuringResume(RawAgent):
    """Replays history on session/resume, before answering."""

    expect, drive = "SETUP-12", "resume"

    def on_session_resume(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        for update in self.history.get(session_id, []):
            self.update(session_id, update, keep=False)
        self.reply(m, {})


class ResultAndError(RawAgent):
    """Answers with both result and error."""

    expect, drive = "RPC-05", "prompt"

    def on_session_prompt(self, m: M) -> None:
        error = {"code": -32603, "message": "and yet"}
        self.send(
            {"jsonrpc": "2.0", "id": m["id"], "result": {"stopReason": "end_turn"}, "error": error}
        )


class AnswersTwice(RawAgent):
    """Answers session/prompt twice."""

    expect, drive = "RPC-06", "prompt"

    def on_session_prompt(self, m: M) -> None:
        super().on_session_prompt(m)
        self.reply(m, {"stopReason": "end_turn"})


class UnknownToolCallUpdate(RawAgent):
    """Updates a tool call it never announced."""

    expect, drive = "TOOL-05", "prompt"

    def on_session_prompt(self, m: M) -> None:
        update = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-404",
            "status": "completed",
        }
        self.update(m["params"]["sessionId"], update)
        super().on_session_prompt(m)


class DuplicateToolCall(RawAgent):
    """Announces two tool calls with the same id."""

    expect, drive = "TOOL-02", "prompt"

    def on_session_prompt(self, m: M) -> None:
        for title in ("Read", "Write"):
            self.update(
                m["params"]["sessionId"],
                {"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": title},
            )
        super().on_session_prompt(m)


class LeaksTerminal(RawAgent):
    """Creates a terminal and never releases it."""

    expect, drive = "TERM-07", "prompt"

    def on_session_prompt(self, m: M) -> None:
        params = {
            "sessionId": m["params"]["sessionId"],
            "command": sys.executable,
            "args": ["-c", "pass"],
        }
        self.request("terminal/create", params)
        super().on_session_prompt(m)


class TerminalWithoutCapability(RawAgent):
    """Calls terminal/create although the client did not advertise terminal."""

    expect, drive = "TERM-01", "prompt_nocaps"

    def on_session_prompt(self, m: M) -> None:
        self.request(
            "terminal/create", {"sessionId": m["params"]["sessionId"], "command": "/bin/true"}
        )
        super().on_session_prompt(m)


class IgnoresCancel(RawAgent):
    """Ends a turn cancelled while it waited for permission with stopReason end_turn."""

    expect, drive = "PROMPT-23", "cancel"

    def finish_cancelled(self, m: M) -> None:
        self.reply(m, {"stopReason": "end_turn"})


class ModeIdField(RawAgent):
    """Sends current_mode_update with the docs' modeId instead of currentModeId."""

    expect, drive = "SCHEMA-03", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.update(
            m["params"]["sessionId"],
            {"sessionUpdate": "current_mode_update", "modeId": "code"},
            keep=False,
        )
        super().on_session_prompt(m)


class PrettyJson(RawAgent):
    """Pretty-prints a notification over several lines."""

    expect, drive = "TRANSPORT-05", "prompt"

    def on_session_prompt(self, m: M) -> None:
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": m["params"]["sessionId"], "update": update},
        }
        self.write(json.dumps(message, indent=2).encode() + b"\n")
        self.reply(m, {"stopReason": "end_turn"})


class UnprefixedExtension(RawAgent):
    """Sends a custom notification whose name lacks the leading underscore."""

    expect, drive = "EXT-05", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.send({"jsonrpc": "2.0", "method": "acme/status", "params": {"busy": True}})
        super().on_session_prompt(m)


class CustomRootField(RawAgent):
    """Adds a custom field at the root of the session/new result instead of _meta."""

    expect, drive = "EXT-04", "prompt"

    def on_session_new(self, m: M) -> None:
        self.count += 1
        self.history[f"sess-{self.count}"] = []
        self.reply(m, {"sessionId": f"sess-{self.count}", "acmeDebug": True})


class MalformedError(RawAgent):
    """Answers with an error whose code is a string."""

    expect, drive = "RPC-09", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": "oops", "message": "failed"}})


class NeverAnswers(RawAgent):
    """Never answers session/prompt."""

    expect, drive = "RPC-06", "prompt_nowait"

    def on_session_prompt(self, m: M) -> None:
        pass


class Batch(RawAgent):
    """Sends a JSON-RPC batch (an array), which ACP does not define."""

    expect, drive = "OVERVIEW-01", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.send([{"jsonrpc": "2.0", "method": "_raw/tick", "params": {}}])
        super().on_session_prompt(m)


class BadStopReason(RawAgent):
    """Ends a turn with a stop reason that is no string (an undefined string would be a newer v1
    peer's value: a warning, spec-gap forward-compatible)."""

    expect, drive = "PROMPT-17", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.reply(m, {"stopReason": ["end_turn"]})


class NullLoadResult(RawAgent):
    """Answers session/load with result null (as the docs' example shows)."""

    expect, drive = "SETUP-08", "load"

    def on_session_load(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        for update in self.history.get(session_id, []):
            self.update(session_id, update, keep=False)
        self.reply(m, None)


class TerminalAuthOffered(RawAgent):
    """Offers a terminal auth method to a client without auth.terminal."""

    expect, drive = "AUTH-05", "handshake"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "authMethods" in result:
            login = {
                "type": "terminal",
                "id": "login",
                "name": "Log in",
                "args": ["--login"],
                "env": {},
            }
            result = {**result, "authMethods": [login]}
        super().reply(message, result)


class UpdateUnknownSession(RawAgent):
    """Sends an update for a session that does not exist."""

    expect, drive = "spec-gap:unknown-session", "prompt"

    def on_session_prompt(self, m: M) -> None:
        self.say("sess-404", "lost")
        super().on_session_prompt(m)


# -- Agents that misuse acpref's Connection -------------------------------------------------------


def _conn_agent(prompt: Any, initialize_result: Any = None) -> None:
    """Serve an agent on a bare ``Connection``: no rules layer, so nothing stops it."""
    from acpref import schema as s
    from acpref._shell.transport import FdStream
    from acpref.connection import Connection

    conn: Connection

    def initialize(params: Any, ctx: Any) -> Any:
        return initialize_result or s.InitializeResponse(
            protocol_version=1,
            agent_capabilities=s.AgentCapabilities(),
            agent_info=s.Implementation(name="c", version="1"),
        )

    handlers = {
        "initialize": initialize,
        "session/new": lambda params, ctx: s.NewSessionResponse(session_id="sess-1"),
        "session/prompt": lambda params, ctx: prompt(conn, params),
    }
    conn = Connection(
        FdStream(0, 1, write_timeout=None), handlers, name="conn-agent", drain_timeout=1.0
    )
    conn.start()
    conn.wait_closed()


class ConnWriteWithoutCapability:
    """On a bare Connection: calls fs/write_text_file the client did not advertise."""

    expect, drive = "FS-02", "prompt_nocaps"

    def run(self) -> None:
        from acpref import schema as s
        from acpref.errors import RpcError

        def prompt(conn: Any, params: Any) -> Any:
            try:
                conn.request(
                    "fs/write_text_file",
                    {"sessionId": params.session_id, "path": "/tmp/x", "content": "x"},
                    timeout=5,
                )
            except RpcError:
                pass
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)

        _conn_agent(prompt)


class ConnStringVersion:
    """On a bare Connection: answers initialize with protocolVersion "1", a string."""

    expect, drive = "INIT-04", "handshake"

    def run(self) -> None:
        result = {
            "protocolVersion": "1",
            "agentCapabilities": {},
            "agentInfo": {"name": "c", "version": "1"},
        }
        _conn_agent(lambda conn, params: None, initialize_result=result)


# -- Proof-table peers (spec_notes/proof.md): one MUST sentence each, judged by validate ----------


class _UpdatesOnce(RawAgent):
    """Sends one bent session/update (``bent``) before it answers the prompt normally."""

    def bent(self, session_id: str) -> Dict[str, Any]:
        raise NotImplementedError

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        params = {"sessionId": session_id, **self.bent(session_id)}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        super().on_session_prompt(m)


class UpdateWithoutUpdate(_UpdatesOnce):
    """Sends a session/update with no ``update`` (SCHEMA-01: required: sessionId, update)."""

    expect, drive = "SCHEMA-01", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        return {}


class ChunkWithoutContent(_UpdatesOnce):
    """Sends an agent_message_chunk with no ``content`` (SCHEMA-02: required: content)."""

    expect, drive = "SCHEMA-02", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        return {"update": {"sessionUpdate": "agent_message_chunk"}}


class ImageChunkWithoutMimeType(_UpdatesOnce):
    """Streams an image block with no ``mimeType`` (CONTENT-06: required: data, mimeType)."""

    expect, drive = "CONTENT-06", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        content = {"type": "image", "data": "aGk="}
        return {"update": {"sessionUpdate": "agent_message_chunk", "content": content}}


class ResourceWithoutUri(_UpdatesOnce):
    """Streams an embedded text resource with no ``uri`` (CONTENT-07: required: text, uri)."""

    expect, drive = "CONTENT-07", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        content = {"type": "resource", "resource": {"text": "hello"}}
        return {"update": {"sessionUpdate": "agent_message_chunk", "content": content}}


class ResourceLinkWithoutName(_UpdatesOnce):
    """Streams a resource_link with no ``name`` (CONTENT-08: required: name, uri)."""

    expect, drive = "CONTENT-08", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        content = {"type": "resource_link", "uri": "file:///tmp/a.txt"}
        return {"update": {"sessionUpdate": "agent_message_chunk", "content": content}}


class UsageWithoutSize(_UpdatesOnce):
    """Sends a usage_update with no ``size`` (PROMPT-10: required: used, size)."""

    expect, drive = "PROMPT-10", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        return {"update": {"sessionUpdate": "usage_update", "used": 5}}


class RelativeDiffPath(_UpdatesOnce):
    """Reports a tool call whose diff names a relative path (TOOL-13: "All file paths in the
    protocol MUST be absolute.")."""

    expect, drive = "TOOL-13", "prompt"

    def bent(self, session_id: str) -> Dict[str, Any]:
        diff = {"type": "diff", "path": "src/main.py", "oldText": "a", "newText": "b"}
        update = {
            "sessionUpdate": "tool_call",
            "toolCallId": "call-diff",
            "title": "Edit",
            "kind": "edit",
            "status": "completed",
            "content": [diff],
        }
        return {"update": update}


class TerminalInRelativeCwd(RawAgent):
    """Runs a terminal in a relative working directory (TERM-02: "All file paths in the
    protocol MUST be absolute.")."""

    expect, drive = "TERM-02", "prompt"

    def on_session_prompt(self, m: M) -> None:
        params = {"sessionId": m["params"]["sessionId"], "command": "true", "cwd": "build"}
        self.request("terminal/create", params)
        super().on_session_prompt(m)


class InitializeWithoutVersion(RawAgent):
    """Answers initialize without ``protocolVersion`` (INIT-04: "The Agent MUST respond with the
    chosen protocol version and the capabilities it supports.")."""

    expect, drive = "INIT-04", "handshake"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            result = {k: v for k, v in result.items() if k != "protocolVersion"}
        super().reply(message, result)


class ObjectRequestId(RawAgent):
    """Sends a request whose id is a JSON object (RPC-02: "MUST contain a String, Number, or
    NULL value if included")."""

    expect, drive = "RPC-02", "prompt"

    def on_session_prompt(self, m: M) -> None:
        params = {"sessionId": m["params"]["sessionId"], "path": "/etc/hostname"}
        self.send({"jsonrpc": "2.0", "id": {"n": 1}, "method": "fs/read_text_file", "params": params})
        super().on_session_prompt(m)


class EmbedsReleasedTerminal(RawAgent):
    """Runs a command in a terminal, releases it, then reports a tool call that embeds it.
    TOOL-14, schema Terminal: "The terminal must be added before calling `terminal/release`."."""

    expect, drive = "TOOL-14", "prompt"

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        params = {"sessionId": session_id, "command": sys.executable, "args": ["-c", "pass"]}
        terminal_id = self.request("terminal/create", params)["result"]["terminalId"]
        self.request("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})
        self.request("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
        embed = [{"type": "terminal", "terminalId": terminal_id}]
        call = {"toolCallId": f"call-{m['id']}", "title": "Run", "status": "completed"}
        self.update(session_id, {"sessionUpdate": "tool_call", **call, "content": embed})
        super().on_session_prompt(m)


class PermissionOptionWithoutKind(RawAgent):
    """Asks permission with options that have no ``kind``. TOOL-10, schema PermissionOption:
    "required: optionId, name, kind"."""

    expect, drive = "TOOL-10", "cancel"

    def ask_permission(self, session_id: str, call: str) -> Dict[str, Any]:
        options = [{"optionId": "allow", "name": "Allow"}, {"optionId": "reject", "name": "Reject"}]
        return self.request(
            "session/request_permission",
            {"sessionId": session_id, "toolCall": {"toolCallId": call}, "options": options},
        )


class ReadsOutsideTheRoots(RawAgent):
    """Asks the client to read a file outside the session's cwd (SETUP-28 says SHOULD)."""

    expect, drive = "SETUP-28", "prompt"

    def on_session_prompt(self, m: M) -> None:
        outside = {"sessionId": m["params"]["sessionId"], "path": "/etc/hostname"}
        self.request("fs/read_text_file", outside)
        super().on_session_prompt(m)


class DoneWithoutInProgress(RawAgent):
    """Reports an allowed tool call completed with no in_progress first (PROMPT-14: SHOULD)."""

    expect, drive = "PROMPT-14", "tool"
    reports_in_progress = False


class ToolCallLeftRunning(RawAgent):
    """Reports a tool call in_progress and ends the turn end_turn without its final status
    (PROMPT-16's sentence has no keyword: spec-gap unfinished-tool-call)."""

    expect, drive = "spec-gap:unfinished-tool-call", "prompt"

    def on_session_prompt(self, m: M) -> None:
        call = {"toolCallId": f"call-{m['id']}", "title": "Search", "status": "in_progress"}
        self.update(m["params"]["sessionId"], {"sessionUpdate": "tool_call", **call})
        super().on_session_prompt(m)


class ModeOptionLagsBehind(RawAgent):
    """Offers modes and a mode option; at a prompt it switches the mode to ``code`` and then
    sends the config options with the mode option still ``ask`` (CONFIG-24: SHOULD)."""

    expect, drive = "CONFIG-24", "prompt"

    def option(self, value: str) -> M:
        values = [{"value": v, "name": v.title()} for v in ("ask", "code")]
        return {
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "type": "select",
            "currentValue": value,
            "options": values,
        }

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and message.get("method") == "session/new":
            modes = [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]
            modes_object = {"currentModeId": "ask", "availableModes": modes}
            result = {**result, "modes": modes_object, "configOptions": [self.option("ask")]}
        super().reply(message, result)

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        self.update(session_id, {"sessionUpdate": "current_mode_update", "currentModeId": "code"})
        lagging = {"sessionUpdate": "config_option_update", "configOptions": [self.option("ask")]}
        self.update(session_id, lagging)
        super().on_session_prompt(m)


BROKEN = {
    name: cls
    for name, cls in globals().items()
    if isinstance(cls, type) and hasattr(cls, "expect") and cls is not RawAgent
    and not name.startswith("_")
}

if __name__ == "__main__":
    {**BROKEN, "RawAgent": RawAgent}[sys.argv[1]]().run()  # RawAgent: the base, unbent
