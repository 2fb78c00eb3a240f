"""Agents for ``check-agent``'s own tests: one defect each, and real agents' harmless habits.

Run one with ``python tests/broken/check_agents.py NAME``. Each is a ``RawAgent`` (raw JSON
lines, single-threaded) bent one way:

* ``DEFECTS``: one MUST / MUST NOT sentence broken each (odd ids, notifications, non-ASCII
  text, ``_meta``, an update the client did not ask for...), at least one per area of the spec.
  ``scenario`` is the scenario that provokes it and ``clause`` the clause that must FAIL, at
  MUST, failing the run; ``options`` adds check options.
* ``LESSER_DEFECTS``: the same for clauses below MUST: ``level`` is the level their sentence
  gives (SHOULD), or ``spec-gap`` when no keyworded sentence states them. They FAIL at that
  level and fail the run only when asked to (``--fail-on``, ``--strict-gaps``).
* ``HARMLESS``: what real agents do that the spec allows (authentication required at the
  prompt, unstable fields, a slow start, a wrapper process...): ``check-agent`` must report no
  FAIL on them.

The busy prompt of the tests is ``slow`` (``RawAgent.prompt_slow``: it streams until cancelled).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _raw import RawAgent  # noqa: E402

M = Dict[str, Any]


def _is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message


# -- One defect each --------------------------------------------------------------------------------


def _answer_the_ping(agent: RawAgent) -> None:
    """Read (and answer) until check-agent's ping, which follows its cancel at once: then the
    wire shows the agent had read the cancel before what it writes next."""
    for _ in range(100):
        line = agent.readline(0.05)
        if line == b"":
            raise SystemExit(0)
        if line:
            agent.dispatch_line(line)
            if b"_acpref/ping" in line:
                return


class StringIdToInt(RawAgent):
    """Answers the string id "42" as the integer 42 (a JSON reader that coerces ids)."""

    scenario, clause = "bad-input", "RPC-04"

    def send(self, message: Any) -> None:
        if _is_response(message) and isinstance(message.get("id"), str):
            if message["id"].isdigit():
                message = {**message, "id": int(message["id"])}
        super().send(message)


class ZeroIdIsNoId(RawAgent):
    """Takes the id 0 for no id and answers it with id null."""

    scenario, clause = "bad-input", "RPC-04"

    def send(self, message: Any) -> None:
        if _is_response(message) and type(message.get("id")) is int and message["id"] == 0:
            message = {**message, "id": None}
        super().send(message)


class NotificationErrorNoId(RawAgent):
    """Answers the notifications it does not know with an error object without an id."""

    scenario, clause = "bad-input", "OVERVIEW-09"

    def dispatch(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        unknown = isinstance(method, str) and not hasattr(
            self, "on_" + method.replace("/", "_").replace("$", "dollar")
        )
        if unknown and "id" not in message:
            self.send({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}})
            return
        super().dispatch(message)


class ParseErrorNoId(RawAgent):
    """Answers an unparseable line -32700 but leaves the id out (it must be null)."""

    scenario, clause = "bad-input", "RPC-10"

    def parse_error(self) -> None:
        self.send({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}})


class NegativeIdUnread(RawAgent):
    """Cannot read a negative integer id: answers such a request with an id-less -32700, as
    codex-acp 0.16 does (its JSON-RPC reader fails on the whole line)."""

    scenario, clause = "bad-input", "RPC-04"

    def dispatch(self, message: Any) -> None:
        request_id = message.get("id") if isinstance(message, dict) else None
        if type(request_id) is int and request_id < 0:
            line = json.dumps(message)
            error = {"code": -32700, "message": "Parse error", "data": {"line": line}}
            self.send({"jsonrpc": "2.0", "error": error})
            return
        super().dispatch(message)


class CancelRequestAnswered(RawAgent):
    """Does not handle $/cancel_request and answers the notification with an id-less -32601, as
    codex-acp 0.16 does."""

    scenario, clause = "bad-input", "CANCEL-06"

    def on_dollar_cancel_request(self, m: M) -> None:
        error = {"code": -32601, "message": "Method not found", "data": m["method"]}
        self.send({"jsonrpc": "2.0", "error": error})


class InvalidRequestIgnored(RawAgent):
    """Takes a message with an id and a non-string method for a response to a request it never
    sent, and drops it: no answer, as codex-acp 0.16 does."""

    scenario, clause, level = "bad-input", "spec-gap:malformed-json", "spec-gap"

    def dispatch(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and not isinstance(
            message["method"], str
        ):
            return
        super().dispatch(message)


class ParseErrorIgnored(RawAgent):
    """Logs a line it cannot parse and answers nothing, as the TypeScript SDK before 2.0 does
    (gemini-cli 0.61 --acp, claude-agent-acp 0.23)."""

    scenario, clause, level = "bad-input", "spec-gap:malformed-json", "spec-gap"

    def parse_error(self) -> None:
        sys.stderr.write("Failed to parse JSON message\n")


class InvalidRequestMethodNotFound(RawAgent):
    """Dispatches a request whose method is not a string and answers -32601 under its id, as the
    TypeScript SDK before 2.0 does (gemini-cli 0.61 --acp, claude-agent-acp 0.23)."""

    scenario, clause, level = "bad-input", "spec-gap:malformed-json", "spec-gap"

    def dispatch(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and not isinstance(
            message["method"], str
        ):
            method = message["method"]
            error = {"code": -32601, "message": f'"Method not found": {method}'}
            self.send({"jsonrpc": "2.0", "id": message.get("id"), "error": error})
            return
        super().dispatch(message)


class UnknownMethodInternalError(RawAgent):
    """Answers unknown methods -32603 instead of -32601."""

    scenario, clause, level = "bad-input", "RPC-12", "spec-gap"

    def error(self, message: M, code: int, text: str) -> None:
        super().error(message, -32603 if code == -32601 else code, text)


class BadParamsInternalError(RawAgent):
    """Answers a session/new whose cwd is not a string with -32603 instead of -32602."""

    scenario, clause, level = "bad-input", "RPC-13", "spec-gap"

    def on_session_new(self, m: M) -> None:
        if not isinstance(m["params"].get("cwd"), str):
            self.error(m, -32603, "'int' object has no attribute 'startswith'")
            return
        super().on_session_new(m)


class ExitsOnBadInput(RawAgent):
    """Exits on the first line it cannot parse (no sentence keeps a connection open after a bad
    line: spec-gap malformed-json)."""

    scenario, clause, level = "bad-input", "spec-gap:malformed-json", "spec-gap"

    def parse_error(self) -> None:
        raise SystemExit(1)


class Latin1Writer(RawAgent):
    """Writes its messages in Latin-1 (identical to UTF-8 as long as the text is ASCII)."""

    scenario, clause = "prompt", "TRANSPORT-01"

    def send(self, message: Any) -> None:
        text = json.dumps(message, ensure_ascii=False)
        self.write(text.encode("latin-1", errors="replace") + b"\n")


class RefusesMeta(RawAgent):
    """Refuses a prompt that carries _meta (-32602), as a strict schema reader would."""

    scenario, clause = "prompt", "EXT-02"

    def on_session_prompt(self, m: M) -> None:
        params = m["params"]
        if "_meta" in params or any("_meta" in b for b in params.get("prompt", [])):
            self.error(m, -32602, "unknown field _meta")
            return
        super().on_session_prompt(m)


class NullPromptResult(RawAgent):
    """Answers session/prompt with "result": null."""

    scenario, clause = "prompt", "PROMPT-11"

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        self.say(session_id, "hi")
        self.reply(m, None)


class DiesAtPrompt(RawAgent):
    """Crashes on its first session/prompt."""

    scenario, clause = "prompt", "PROMPT-11"

    def on_session_prompt(self, m: M) -> None:
        sys.stderr.write("Traceback (most recent call last): KeyError: 'model'\n")
        raise SystemExit(3)


class UpdateBeforeNewAnswer(RawAgent):
    """Sends its available commands for a new session before answering session/new."""

    scenario, clause, level = "prompt", "spec-gap:unknown-session", "spec-gap"

    def on_session_new(self, m: M) -> None:
        session_id = f"sess-{self.count + 1}"
        commands = [{"name": "help", "description": "Show help"}]
        self.update(
            session_id,
            {"sessionUpdate": "available_commands_update", "availableCommands": commands},
            keep=False,
        )
        super().on_session_new(m)


class TwoAnswersPerTurn(RawAgent):
    """Answers each session/prompt twice: end_turn, then end_turn again."""

    scenario, clause = "prompt", "RPC-06"

    def on_session_prompt(self, m: M) -> None:
        super().on_session_prompt(m)
        self.reply(m, {"stopReason": "end_turn"})


class StopsDone(RawAgent):
    """Ends its turns with ``stopReason: "done"``, a value that neither carried schema defines
    (the adopter's small agent of issue 34, which passed as a forward-compatibility warning).

    PROMPT-17, prompt-turn.mdx: "When an Agent stops a turn, it must specify the corresponding
    `StopReason`" (decisions.md undefined-value); with ``newer_spec`` a warning."""

    scenario, clause = "prompt", "PROMPT-17"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and result.get("stopReason") == "end_turn":
            result = {**result, "stopReason": "done"}
        super().reply(message, result)


class ToolStatusExploded(RawAgent):
    """Reports a tool call whose ``status`` is ``"exploded"``, which ToolCallStatus does not
    define.

    OVERVIEW-01, transports.mdx: "The agent MUST NOT write anything to its `stdout` that is not
    a valid ACP message" (the set is a definition of schema.json: decisions.md undefined-value)."""

    scenario, clause = "prompt", "OVERVIEW-01"

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        if session_id in self.history:
            call = {"toolCallId": f"t-{self.ids}", "title": "Think", "kind": "think"}
            self.ids += 1
            self.update(session_id, {"sessionUpdate": "tool_call", **call, "status": "exploded"})
        super().on_session_prompt(m)


class IgnoresMcpServers(RawAgent):
    """Accepts mcpServers and never starts them (the most reported real-world defect)."""

    scenario, clause, level = "mcp", "SETUP-36", "SHOULD"

    def connect_mcp(self, servers: Any) -> None:
        pass


class McpHandshakeUnfinished(RawAgent):
    """Starts the stdio MCP server, sends initialize, never notifications/initialized."""

    scenario, clause = "mcp", "SETUP-30"

    def mcp_initialized(self, proc: Any) -> None:
        pass


class IgnoresCancelStreaming(RawAgent):
    """Ignores session/cancel: answers the next request, streams on, then ends end_turn (it
    answered a request sent after the cancel, so it had read it: PROMPT-23)."""

    scenario, clause = "cancel", "PROMPT-23"

    def prompt_slow(self, m: M, session_id: str) -> None:
        self.say(session_id, "working")
        while True:
            line = self.readline()
            if not line:
                raise SystemExit(0)
            message = json.loads(line)
            if message.get("method") == "$/cancel_request":
                self.reply(m, {"stopReason": "cancelled"})
                return
            self.dispatch(message)
            if message.get("method") == "_acpref/ping":
                self.say(session_id, "still working")
                self.reply(m, {"stopReason": "end_turn"})
                return


class CancelEndsEndTurn(RawAgent):
    """Like opencode: after session/cancel (or session/close) the turn streams on a little,
    answering every other request at once, then ends end_turn."""

    scenario, clause = "cancel", "PROMPT-23"

    def finish_cancelled(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        for _ in range(10):
            self.say(session_id, "still working")  # allowed after a cancel (PROMPT-25)
            line = self.readline(0.02)
            if line == b"":
                raise SystemExit(0)
            if line:
                self.dispatch_line(line)
        self.reply(m, {"stopReason": "end_turn"})  # the defect: not "cancelled"


class IgnoresCancelLate(RawAgent):
    """Ignores session/cancel without reading on: streams for a second more, ends end_turn."""

    scenario, clause, level = "cancel", "spec-gap:cancel-ignored", "spec-gap"

    def prompt_slow(self, m: M, session_id: str) -> None:
        self.say(session_id, "working")
        while True:
            line = self.readline()
            if not line:
                raise SystemExit(0)
            message = json.loads(line)
            if message.get("method") == "$/cancel_request":
                self.reply(m, {"stopReason": "cancelled"})
                return
            if message.get("method") == "session/cancel":
                for _ in range(10):
                    time.sleep(0.1)  # the defect: the turn goes on after the cancel
                    self.say(session_id, ".")
                self.reply(m, {"stopReason": "end_turn"})
                return
            self.dispatch(message)


class ErrorOnCancel(RawAgent):
    """Ends a cancelled busy turn with a JSON-RPC error, after it answered the request sent
    after the cancel (so the wire shows it had read the cancel: PROMPT-24's "these errors")."""

    scenario, clause = "cancel", "PROMPT-24"

    def finish_cancelled(self, m: M) -> None:
        _answer_the_ping(self)
        self.error(m, -32800, "Request cancelled")  # the defect: not stopReason "cancelled"


class ReplayAfterResume(RawAgent):
    """Answers session/resume, then replays the history anyway. SETUP-12's MUST NOT says
    "before responding": after it, only the page's description is broken (spec-gap
    replay-after-resume)."""

    scenario, clause, level = "resume", "spec-gap:replay-after-resume", "spec-gap"

    def on_session_resume(self, m: M) -> None:
        self.reply(m, {})
        session_id = m["params"]["sessionId"]
        for update in self.history.get(session_id, []):
            self.update(session_id, update, keep=False)


class PartialReplay(RawAgent):
    """Replays only the agent's side of the history on session/load."""

    scenario, clause = "load", "SETUP-05"

    def on_session_load(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        for update in self.history.get(session_id, []):
            if update.get("sessionUpdate") != "user_message_chunk":
                self.update(session_id, update, keep=False)
        self.reply(m, {})


class ForgetsUsersAfterRestart(RawAgent):
    """Keeps each session's history in a file beside it, so that a restarted process can load
    it; but from the file it replays only the agent's side of the conversation."""

    scenario, clause = "load-restarted", "SETUP-05"

    def new_session_id(self) -> str:
        self.count += 1
        return f"sess-{os.getpid()}-{self.count}"

    def _file(self, cwd: str, session_id: str) -> str:
        return os.path.join(cwd, f".raw-history-{session_id}.json")

    def on_session_prompt(self, m: M) -> None:
        super().on_session_prompt(m)
        session_id = m["params"]["sessionId"]
        with open(self._file(self.cwds[session_id], session_id), "w", encoding="utf-8") as f:
            json.dump(self.history[session_id], f)

    def on_session_load(self, m: M) -> None:
        session_id, cwd = m["params"]["sessionId"], m["params"]["cwd"]
        if session_id in self.history:
            super().on_session_load(m)
            return
        try:
            with open(self._file(cwd, session_id), encoding="utf-8") as f:
                history = json.load(f)
        except OSError:
            self.error(m, -32002, f"no session {session_id!r}")
            return
        self.history[session_id], self.cwds[session_id] = history, cwd
        for update in history:
            if update.get("sessionUpdate") != "user_message_chunk":
                self.update(session_id, update, keep=False)
        self.reply(m, {})


class BooleanOptionUnasked(RawAgent):
    """Offers a boolean config option to a client that did not advertise support for it."""

    scenario, clause = "prompt", "CONFIG-05"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and set(result) == {"sessionId"}:
            option = {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": False}
            result = {**result, "configOptions": [option]}
        super().reply(message, result)


class NullServersRefused(RawAgent):
    """Refuses session/new with mcpServers null (a reader without default-on-null)."""

    scenario, clause, level = "bad-input", "SCHEMA-18", "spec-gap"

    def on_session_new(self, m: M) -> None:
        if isinstance(m.get("params"), dict) and m["params"].get("mcpServers", []) is None:
            self.error(m, -32602, "mcpServers: expected an array")
            return
        super().on_session_new(m)


class RefusesOmittedParams(RawAgent):
    """Answers session/list sent without params, or with params null, -32602 (a reader that
    wants an object there), and serves it with {} (RPC-19 is implied: spec-gap level)."""

    scenario, clause, level = "bad-input", "RPC-19", "spec-gap"

    def on_session_list(self, m: M) -> None:
        if not isinstance(m.get("params"), dict):
            self.error(m, -32602, "params: expected an object")
            return
        super().on_session_list(m)


class RefusesMalformedAnnotations(RawAgent):
    """Refuses a prompt whose text block has annotations that are not an object (-32602)
    instead of reading that default-on-error field as absent (SCHEMA-11 has no keyworded
    sentence: spec-gap level)."""

    scenario, clause, level = "bad-input", "SCHEMA-11", "spec-gap"

    def on_session_prompt(self, m: M) -> None:
        blocks = m["params"].get("prompt") or []
        if any(not isinstance(b.get("annotations", {}), (dict, type(None))) for b in blocks):
            self.error(m, -32602, "prompt[0].annotations: expected an object")
            return
        super().on_session_prompt(m)


class RefusesMetaAtNew(RawAgent):
    """Refuses a session/new that carries _meta (-32602), and serves it without."""

    scenario, clause = "bad-input", "EXT-02"

    def on_session_new(self, m: M) -> None:
        if isinstance(m.get("params"), dict) and "_meta" in m["params"]:
            self.error(m, -32602, "unknown field _meta")
            return
        super().on_session_new(m)


class RefusesResourceLink(RawAgent):
    """Refuses a prompt with a resource_link block (-32602), a baseline content type."""

    scenario, clause = "prompt", "INIT-15"

    def on_session_prompt(self, m: M) -> None:
        if any(b.get("type") == "resource_link" for b in m["params"].get("prompt", [])):
            self.error(m, -32602, "unsupported content block: resource_link")
            return
        super().on_session_prompt(m)


class NoSessionNew(RawAgent):
    """Does not know session/new, a baseline method (-32601)."""

    scenario, clause = "prompt", "INIT-17"

    def on_session_new(self, m: M) -> None:
        self.error(m, -32601, "Method not found: session/new")


class McpServersBreakSessions(RawAgent):
    """Fails session/new when it is given MCP servers; serves it without."""

    scenario, clause = "mcp", "SETUP-30"

    def on_session_new(self, m: M) -> None:
        if isinstance(m.get("params"), dict) and m["params"].get("mcpServers"):
            self.error(m, -32603, "Internal error: MCP server startup failed")
            return
        super().on_session_new(m)


class UsesClientTools(RawAgent):
    """Asked to read a file, calls ``method`` of the client whatever it advertised."""

    method = "fs/read_text_file"

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        text = "".join(b.get("text", "") for b in m["params"]["prompt"])
        if "read the file" in text and session_id in self.cwds:
            path = os.path.join(self.cwds[session_id], "acpref-check-tools.txt")
            params: M = {"sessionId": session_id, "path": path}
            if self.method == "fs/write_text_file":
                params["content"] = "acpref\n"
            elif self.method == "terminal/create":
                params = {"sessionId": session_id, "command": "echo", "args": ["acpref"]}
            self.request(self.method, params)
        super().on_session_prompt(m)


class ReadsWithoutCapability(UsesClientTools):
    """Reads through the client that did not advertise fs.readTextFile."""

    scenario, clause = "no-capabilities", "FS-01"


class WritesWithoutCapability(UsesClientTools):
    """Writes through the client that did not advertise fs.writeTextFile."""

    scenario, clause, method = "no-capabilities", "FS-02", "fs/write_text_file"


class RunsWithoutTerminal(UsesClientTools):
    """Creates a terminal on a client that did not advertise terminal."""

    scenario, clause, method = "no-capabilities", "TERM-01", "terminal/create"


class ReadsRelative(RawAgent):
    """Serves ``/read NAME`` (as the echo agent does): reads NAME through the client, resolved
    against the session's cwd (SETUP-27), and answers with what it holds; ``/run CMD ARGS``
    runs in a client terminal in the session's cwd (SETUP-26). A correct agent, in
    ``HARMLESS``; ``base`` is what its defective kin bend."""

    def base(self, session_id: str) -> str:
        return self.cwds[session_id]

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        words = "".join(b.get("text", "") for b in m["params"]["prompt"]).split()
        if words[:1] == ["/read"] and len(words) > 1 and session_id in self.cwds:
            path = os.path.join(self.base(session_id), words[1])
            answer = self.request("fs/read_text_file", {"sessionId": session_id, "path": path})
            self.say(session_id, json.dumps(answer.get("result", answer.get("error"))))
            self.reply(m, {"stopReason": "end_turn"})
            return
        if words[:1] == ["/run"] and len(words) > 1 and session_id in self.cwds:
            params = {"sessionId": session_id, "command": words[1], "args": words[2:]}
            created = self.request("terminal/create", {**params, "cwd": self.base(session_id)})
            terminal = {"sessionId": session_id, "terminalId": created["result"]["terminalId"]}
            self.request("terminal/wait_for_exit", terminal)
            self.request("terminal/release", terminal)
            self.reply(m, {"stopReason": "end_turn"})
            return
        super().on_session_prompt(m)


class ReadsFromSpawnDir(ReadsRelative):
    """Resolves a relative name against its own process's directory, where it was started
    (``os.getcwd()``), not against the session's cwd."""

    scenario, clause = "cwd", "SETUP-27"

    def base(self, session_id: str) -> str:
        return os.getcwd()


class RunsInSpawnDir(ReadsFromSpawnDir):
    """Runs the session's commands in a client terminal in its own process's directory, where
    it was started, not in the session's cwd."""

    scenario, clause = "cwd", "SETUP-26"
    options = {"cwd_prompt": "/run cat {file}"}


class LoginLogout(RawAgent):
    """Gates every session method on its login, and offers logout (a correct agent)."""

    capabilities = {**RawAgent.capabilities, "auth": {"logout": {}}}
    authed = False

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            result = {**result, "authMethods": [{"id": "login", "name": "Log in"}]}
        super().reply(message, result)

    def dispatch(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        gated = isinstance(method, str) and method.startswith("session/") and "id" in message
        if gated and not self.authed:
            self.error(message, -32000, "Authentication required")
            return
        super().dispatch(message)

    def on_authenticate(self, m: M) -> None:
        self.authed = True
        self.reply(m, {})

    def on_logout(self, m: M) -> None:
        self.authed = False
        self.reply(m, {})


class NullAuthenticateResult(LoginLogout):
    """Answers a successful authenticate with result null."""

    scenario, clause, level = "auth", "AUTH-09", "spec-gap"
    options = {"auth_method": "login"}

    def on_authenticate(self, m: M) -> None:
        self.authed = True
        self.reply(m, None)


class LoginForgotten(LoginLogout):
    """Answers authenticate {} but keeps answering session/new -32000."""

    scenario, clause, level = "auth", "AUTH-10", "spec-gap"
    options = {"auth_method": "login"}

    def on_authenticate(self, m: M) -> None:
        self.reply(m, {})


class NullLogoutResult(LoginLogout):
    """Answers a successful logout with result null."""

    scenario, clause, level = "auth", "AUTH-16", "spec-gap"
    options = {"auth_method": "login"}

    def on_logout(self, m: M) -> None:
        self.authed = False
        self.reply(m, None)


class LogoutKeepsLogin(LoginLogout):
    """Answers logout {} but stays logged in: session/new is served after it."""

    scenario, clause, level = "auth", "AUTH-17", "spec-gap"
    options = {"auth_method": "login"}

    def on_logout(self, m: M) -> None:
        self.reply(m, {})


class LogoutOnly(LoginLogout):
    """Offers logout and no session/list: logout is its one method without required params.
    A correct agent (RPC-19 judged on logout); ``RefusesOmittedLogoutParams`` bends it."""

    capabilities = {
        "loadSession": True,
        "sessionCapabilities": {"resume": {}, "close": {}},
        "auth": {"logout": {}},
    }


class RefusesOmittedLogoutParams(LogoutOnly):
    """Answers logout without params, or with params null, -32602, and serves logout {}."""

    scenario, clause, level = "bad-input", "RPC-19", "spec-gap"
    options = {"auth_method": "login"}

    def on_logout(self, m: M) -> None:
        if not isinstance(m.get("params"), dict):
            self.error(m, -32602, "params: expected an object")
            return
        super().on_logout(m)


# -- One MUST sentence per area of the spec (issue 29) ---------------------------------------------
#
# Each breaks one MUST / MUST NOT sentence of its area (the table in tests/test_check_agent.py and
# spec_notes/oracle.md); the areas already covered above are not repeated here. What the client
# did not advertise (notices, compaction, plans, subagents, elicitation) is sent during the
# ordinary prompt: check-agent's client advertises only fs and terminal.


class VersionRefused(RawAgent):
    """Answers an initialize that asks a version it does not speak with an error."""

    scenario, clause = "version", "INIT-08"

    def on_initialize(self, m: M) -> None:
        if m["params"].get("protocolVersion") != 1:
            self.error(m, -32602, "unsupported protocol version")
            return
        super().on_initialize(m)


class TerminalAuthUnasked(RawAgent):
    """Offers a terminal login to a client that did not advertise auth.terminal."""

    scenario, clause = "handshake", "AUTH-05"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            tui = {"id": "tui", "name": "Log in", "type": "terminal", "args": ["--login"]}
            result = {**result, "authMethods": [tui]}
        super().reply(message, result)


class SameSessionId(RawAgent):
    """Answers every session/new with the same session id (one conversation per cwd)."""

    scenario, clause = "prompt", "SETUP-02"

    def new_session_id(self) -> str:
        self.count += 1
        return "sess-1"


class CloseKeepsTurn(RawAgent):
    """Answers session/close at once and lets the session's running turn go on to end_turn."""

    scenario, clause, options = "close", "SETUP-16", {"cancel_prompt": "tool"}

    def on_session_close(self, m: M) -> None:
        self.history.pop(m["params"]["sessionId"], None)
        self.stop_mcp(m["params"]["sessionId"])  # its one defect is the turn, not the servers
        self.reply(m, {})


class KeepsMcpAfterClose(RawAgent):
    """Answers session/close and keeps the closed session's stdio MCP servers running until the
    end of its input (a pool of servers that only the agent's exit empties).

    SETUP-16, session-setup.mdx: "The Agent MUST cancel any ongoing work for that session as if
    `session/cancel` had been called, then free the resources associated with the session."."""

    scenario, clause = "close", "SETUP-16"

    def stop_mcp(self, session_id: str) -> None:
        self.session_mcp.pop(session_id, None)  # still in self.mcp: stopped at the end of input


class NoMatchIsAnError(RawAgent):
    """Answers a session/list that matches no session with -32002 instead of an empty list."""

    scenario, clause = "list", "LIST-09"

    def on_session_list(self, m: M) -> None:
        cwd = (m.get("params") or {}).get("cwd")
        if cwd is not None and cwd not in self.cwds.values():
            self.error(m, -32002, f"no sessions in {cwd}")
            return
        super().on_session_list(m)


class RelativeToolLocation(RawAgent):
    """Reports the file its tool call reads by a path relative to the session's cwd."""

    scenario, clause = "prompt", "TOOL-15"

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        if session_id in self.history:
            call = {"toolCallId": f"read-{self.ids}", "title": "Read README.md", "kind": "read"}
            self.ids += 1
            where = {"locations": [{"path": "README.md"}]}
            self.update(session_id, {"sessionUpdate": "tool_call", **call, **where})
            done = {"toolCallId": call["toolCallId"], "status": "completed"}
            self.update(session_id, {"sessionUpdate": "tool_call_update", **done})
        super().on_session_prompt(m)


class ElicitsUnasked(RawAgent):
    """Asks the user a form through a client that did not advertise elicitation."""

    scenario, clause = "prompt", "ELICIT-06"

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        if session_id in self.history:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            form = {"mode": "form", "message": "Your name?", "requestedSchema": schema}
            self.request("elicitation/create", {"sessionId": session_id, **form})
        super().on_session_prompt(m)


class IgnoresCancelWhileAsking(RawAgent):
    """Ignores session/cancel: the turn that waited on a permission ends end_turn."""

    scenario, clause, options = "cancel", "PROMPT-23", {"cancel_prompt": "tool"}

    def on_session_cancel(self, m: M) -> None:
        pass


class UnaskedUpdate(RawAgent):
    """Sends ``unasked`` (a session update kind) in every turn, before its answer."""

    unasked: M = {}

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        if session_id in self.history:
            for update in self.unasked_updates():
                self.update(session_id, update, keep=False)
        super().on_session_prompt(m)

    def unasked_updates(self) -> List[M]:
        return [self.unasked]


class NoticeUnasked(UnaskedUpdate):
    """Shows a notice to a client that did not advertise session.notices."""

    scenario, clause = "prompt", "NOTICE-01"
    unasked = {"sessionUpdate": "notice", "severity": "info", "title": "Model switched"}


class CompactionUnasked(UnaskedUpdate):
    """Reports a compaction to a client that did not advertise session.compaction."""

    scenario, clause = "prompt", "COMPACT-01"

    def unasked_updates(self) -> List[M]:
        self.ids += 1
        start = {"sessionUpdate": "compaction_update", "compactionId": f"cmp-{self.ids}"}
        return [{**start, "status": "in_progress"}, {**start, "status": "completed"}]


class PlanUpdateUnasked(UnaskedUpdate):
    """Sends plan_update to a client that did not advertise plan."""

    scenario, clause = "prompt", "PLANOP-01"
    entry = {"content": "Answer", "priority": "high", "status": "completed"}
    unasked = {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": "plan-1", "entries": [entry]},
    }


class SubagentUnasked(UnaskedUpdate):
    """Announces a subagent to a client that did not advertise subagents."""

    scenario, clause = "prompt", "SUBAGENT-01"

    def unasked_updates(self) -> List[M]:
        self.ids += 1
        child = {"sessionUpdate": "subagent_update", "sessionId": f"child-{self.ids}"}
        return [
            {**child, "title": "Helper", "state": {"state": "running"}},
            {**child, "state": {"state": "idle", "stopReason": "end_turn"}},
        ]


class SystemPromptAgent(RawAgent):
    """Advertises a client system prompt in append mode only and refuses any other mode (a
    correct agent, in ``HARMLESS``)."""

    capabilities = {
        **RawAgent.capabilities,
        "sessionCapabilities": {**RawAgent.capabilities["sessionCapabilities"], "systemPrompt": {}},
    }

    def supports(self, mode: Any) -> bool:
        return mode == "append"

    def on_session_new(self, m: M) -> None:
        prompt = m["params"].get("systemPrompt")
        if isinstance(prompt, dict) and not self.supports(prompt.get("mode")):
            self.error(m, -32602, f"systemPrompt mode {prompt.get('mode')!r} is not supported")
            return
        super().on_session_new(m)


class OverrideUnadvertised(SystemPromptAgent):
    """Advertises append mode only, and applies an override system prompt anyway."""

    scenario, clause = "system-prompt", "SYSPROMPT-04"

    def supports(self, mode: Any) -> bool:
        return mode in ("append", "override")


class UnknownModeAsAppend(SystemPromptAgent):
    """Advertises both modes, and reads a mode it does not know as append."""

    scenario, clause = "system-prompt", "SYSPROMPT-05"
    capabilities = {
        **RawAgent.capabilities,
        "sessionCapabilities": {
            **RawAgent.capabilities["sessionCapabilities"],
            "systemPrompt": {"mode": {"override": {}}},
        },
    }

    def supports(self, mode: Any) -> bool:
        return True


class GoodbyeOnStdout(RawAgent):
    """Says goodbye on stdout when its input ends, then exits."""

    scenario, clause = "handshake", "TRANSPORT-08"

    def run(self) -> None:
        super().run()
        self.write(b"Goodbye.\n")


class DeletedStillListed(RawAgent):
    """Answers session/delete {} and keeps listing the session (DELETE-03 has no keyword)."""

    scenario, clause, level = "delete", "DELETE-03", "spec-gap"
    capabilities = {
        **RawAgent.capabilities,
        "sessionCapabilities": {**RawAgent.capabilities["sessionCapabilities"], "delete": {}},
    }

    def on_session_delete(self, m: M) -> None:
        self.reply(m, {})


class ReplaysLastExchange(RawAgent):
    """Replays only the last exchange of the history on session/load (its last prompt and what
    it answered): the user's and the agent's messages are there, the conversation is not."""

    scenario, clause = "load", "SETUP-05"

    def on_session_load(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        history = self.history.get(session_id, [])
        starts = [i for i, u in enumerate(history) if u["sessionUpdate"] == "user_message_chunk"]
        for update in history[starts[-1] if starts else 0 :]:
            self.update(session_id, update, keep=False)
        self.reply(m, {})


class ForgetsEarlierAnswers(RawAgent):
    """Replays every user message on session/load, but of its own messages only the last."""

    scenario, clause = "load", "SETUP-05"

    def on_session_load(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        history = self.history.get(session_id, [])
        answers = [i for i, u in enumerate(history) if u["sessionUpdate"] == "agent_message_chunk"]
        for i, update in enumerate(history):
            if update["sessionUpdate"] != "agent_message_chunk" or i == answers[-1]:
                self.update(session_id, update, keep=False)
        self.reply(m, {})


class ReplayBeforeResumeAnswer(RawAgent):
    """Replays the history on session/resume, then answers it (as if it were a load)."""

    scenario, clause = "resume", "SETUP-12"

    def on_session_resume(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        for update in self.history.get(session_id, []):
            self.update(session_id, update, keep=False)
        self.reply(m, {})


class TracebackInErrorMessage(RawAgent):
    """Puts a whole traceback in error.message instead of one sentence (RPC-21 says should)."""

    scenario, clause, level = "bad-input", "RPC-21", "SHOULD"

    def error(self, message: M, code: int, text: str) -> None:
        trace = f"{text}\nTraceback (most recent call last):\n  File agent.py, line 1"
        super().error(message, code, trace)


class ToolCallLeftRunning(RawAgent):
    """Reports a tool call in_progress at every prompt and ends the turn end_turn without its
    final status (PROMPT-16's sentence has no keyword: spec-gap unfinished-tool-call)."""

    scenario, clause, level = "prompt", "spec-gap:unfinished-tool-call", "spec-gap"

    def on_session_prompt(self, m: M) -> None:
        call = {"toolCallId": f"call-{m['id']}", "title": "Search", "status": "in_progress"}
        if m["params"].get("sessionId") in self.history:
            self.update(m["params"]["sessionId"], {"sessionUpdate": "tool_call", **call})
        super().on_session_prompt(m)


# -- Proof-table peers (spec_notes/proof.md): one MUST sentence each ---------------------------------


class AuthMethodWithoutName(RawAgent):
    """Advertises an authentication method with no ``name`` (AUTH-01: required: id, name)."""

    scenario, clause = "handshake", "AUTH-01"

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            result = {**result, "authMethods": [{"id": "login"}]}
        super().reply(message, result)


class RefusesResourceLinkBlock(RefusesResourceLink):
    """The same refusal of a resource_link prompt, on the sentence of content.mdx's baseline
    (CONTENT-09: "all Agents MUST support `ContentBlock::Text` and `ContentBlock::ResourceLink`
    in `session/prompt` requests")."""

    scenario, clause = "prompt", "CONTENT-09"


class NoSessionNewBaseline(NoSessionNew):
    """The same missing session/new (INIT-17 owns the baseline sentence; spec_notes/should.md)."""

    scenario, clause = "prompt", "INIT-17"


class CustomIdToInt(StringIdToInt):
    """The same coerced id, on the custom request's sentence (EXT-07: "implementations MUST
    respond accordingly with the provided `id`")."""

    scenario, clause = "bad-input", "EXT-07"


class InvalidRequestNoId(RawAgent):
    """Answers a request whose method is not a string -32600, but without an id (RPC-11: "it
    MUST be Null")."""

    scenario, clause = "bad-input", "RPC-11"

    def dispatch(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and not isinstance(
            message["method"], str
        ):
            error = {"code": -32600, "message": "Invalid Request"}
            self.send({"jsonrpc": "2.0", "error": error})
            return
        super().dispatch(message)


class ListsRelativeCwd(RawAgent):
    """Lists its sessions with a relative ``cwd`` (LIST-05: "All file paths in the protocol MUST
    be absolute.")."""

    scenario, clause = "list", "LIST-05"

    def on_session_list(self, m: M) -> None:
        sessions = [{"sessionId": sid, "cwd": "work"} for sid in self.history]
        self.reply(m, {"sessions": sessions})


class ListRefused(RawAgent):
    """Advertises session/list and answers it -32603 (LIST-02: "The Agent MUST respond with a
    list of sessions and optional pagination metadata")."""

    scenario, clause = "list", "LIST-02"

    def on_session_list(self, m: M) -> None:
        self.error(m, -32603, "Internal error: the session store is locked")


# -- Proof-table peers (spec_notes/proof.md), appended ------------------------------------------


class RefusesTextPrompts(RawAgent):
    """Answers every prompt that holds a text block -32602 (an agent that takes resource links
    only). CONTENT-02: "All Agents MUST support text content blocks when included in prompts."."""

    scenario, clause = "prompt", "CONTENT-02"

    def on_session_prompt(self, m: M) -> None:
        prompt = m["params"].get("prompt")
        if any(isinstance(b, dict) and b.get("type") == "text" for b in prompt or []):
            self.error(m, -32602, "text content is not supported")
            return
        super().on_session_prompt(m)


class SwapsCrossedAnswers(RawAgent):
    """Serves its first session/new together with the request that comes right after it (a
    session/list, sent before the new was answered), and writes each result under the other's
    id: it pairs answers with requests by position, not by id. RPC-07, schema.json
    ``RequestId``: "The Server MUST reply with the same value in the Response object if
    included. This member is used to correlate the context between the two objects."."""

    scenario, clause = "list", "RPC-07"
    #: The replies being held while the two requests are served, or None.
    held: Any = None

    def reply(self, message: M, result: Any) -> None:
        if self.held is not None:
            self.held.append((message, result))
            return
        super().reply(message, result)

    def on_session_new(self, m: M) -> None:
        if self.count:  # only the first session/new waits for a companion
            super().on_session_new(m)
            return
        line = self.readline(10.0)  # the request sent with it (bounded: a lone one goes on)
        self.held = []
        super().on_session_new(m)
        if line:
            self.dispatch_line(line)
        held, self.held = self.held, None
        if len(held) == 2:
            (first, first_result), (second, second_result) = held
            held = [(first, second_result), (second, first_result)]
        for message, result in held:
            super().reply(message, result)


class ConfigAgent(RawAgent):
    """Offers a select option ``model`` (small, large) and answers set_config_option with the
    complete list (a correct agent, the base of ConfigResultWithoutTheOption)."""

    def model(self, value: str) -> M:
        values = [{"value": v, "name": v.title()} for v in ("small", "large")]
        return {"id": "model", "name": "Model", "type": "select", "currentValue": value,
                "options": values}  # fmt: skip

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and set(result) == {"sessionId"}:
            result = {**result, "configOptions": [self.model("small")]}
        super().reply(message, result)

    def on_session_set_config_option(self, m: M) -> None:
        self.reply(m, {"configOptions": self.options_after(m["params"].get("value"))})

    def options_after(self, value: Any) -> List[M]:
        return [self.model(value)]


class ConfigResultWithoutTheOption(ConfigAgent):
    """Answers set_config_option with only the options that changed as a side effect (none),
    leaving out the one that was set. CONFIG-19: "The Agent MUST respond with the complete list
    of all configuration options and their current values"."""

    scenario, clause = "prompt", "CONFIG-19"

    def options_after(self, value: Any) -> List[M]:
        return []


class ExitsOnCancelRequest(RawAgent):
    """Exits when ``$/cancel_request`` names its running prompt, leaving the prompt unanswered
    (a receiver that tears its request down). CANCEL-05: "MUST send one of these responses for
    the original request"."""

    scenario, clause = "cancel", "CANCEL-05"

    def on_dollar_cancel_request(self, m: M) -> None:
        if m["params"].get("requestId") == getattr(self, "prompt_id", None):
            raise SystemExit(0)



class WrongErrorOnCancelRequest(RawAgent):
    """Supports $/cancel_request: answers the first prompt it names -32800 (so the wire shows
    support), and a later one, after it answered the request sent after that cancel, -32603 (a
    receiver whose aborted operation's error escapes). CANCEL-05: "MUST send one of these
    responses for the original request"."""

    scenario, clause = "cancel", "CANCEL-05"
    cancel_requests = 0
    by_cancel_request = False

    def on_dollar_cancel_request(self, m: M) -> None:
        if m["params"].get("requestId") == getattr(self, "prompt_id", None):
            self.cancel_requests += 1
            self.by_cancel_request = True
        super().on_dollar_cancel_request(m)

    def finish_cancelled(self, m: M) -> None:
        if not self.by_cancel_request:  # session/cancel, honoured
            super().finish_cancelled(m)
            return
        self.by_cancel_request = False
        if self.cancel_requests == 1:
            self.error(m, -32800, "Request cancelled")
            return
        _answer_the_ping(self)
        self.error(m, -32603, "Internal error: operation aborted")  # the defect: not -32800


_ONE_DEFECT = {
    name: cls
    for name, cls in list(globals().items())
    if isinstance(cls, type) and issubclass(cls, RawAgent) and hasattr(cls, "clause")
}
#: Each breaks a MUST / MUST NOT sentence: the run fails on its clause.
DEFECTS = {name: cls for name, cls in _ONE_DEFECT.items() if not hasattr(cls, "level")}
#: Each breaks a clause whose sentence says SHOULD, or that no keyworded sentence states
#: (``level``: spec-gap): reported at that level, failing the run only when asked to.
LESSER_DEFECTS = {name: cls for name, cls in _ONE_DEFECT.items() if hasattr(cls, "level")}


# -- What real agents do, and the spec allows --------------------------------------------------------


class AuthAtPrompt(RawAgent):
    """Opens sessions freely but answers session/prompt -32000 until authenticated (RPC-16)."""

    authed = False

    def on_initialize(self, m: M) -> None:
        super().on_initialize(m)

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "protocolVersion" in result:
            result = {**result, "authMethods": [{"id": "login", "name": "Log in"}]}
        super().reply(message, result)

    def on_authenticate(self, m: M) -> None:
        self.authed = m["params"].get("methodId") == "login"
        if self.authed:
            self.reply(m, {})
        else:
            self.error(m, -32602, "unknown auth method")

    def on_session_prompt(self, m: M) -> None:
        if not self.authed:
            self.error(m, -32000, "Authentication required")
            return
        super().on_session_prompt(m)


class AsksThenEnds(RawAgent):
    """Its busy prompt streams a chunk, asks permission and ends the turn end_turn without
    waiting for the answer, all in one write: check-agent cancels when it sees the request, but
    the turn had ended before the cancel went out. Neither the open request nor the probe's
    answer after the prompt's shows that the agent had read the cancel (PROMPT-23: no verdict)."""

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        text = "".join(b.get("text", "") for b in m["params"]["prompt"])
        if text != "slow" or session_id not in self.history:
            super().on_session_prompt(m)
            return
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "."}}
        user = {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
        self.history[session_id] += [user, chunk]
        self.ids += 1
        ask = {"sessionId": session_id, "toolCall": {"toolCallId": "t1", "title": "ask"},
               "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]}
        lines = [
            {"jsonrpc": "2.0", "method": "session/update",
             "params": {"sessionId": session_id, "update": chunk}},
            {"jsonrpc": "2.0", "id": self.ids, "method": "session/request_permission", "params": ask},
            {"jsonrpc": "2.0", "id": m["id"], "result": {"stopReason": "end_turn"}},
        ]  # fmt: skip
        self.write(b"".join(json.dumps(x).encode("utf-8") + b"\n" for x in lines))


class AuthAtNew(AuthAtPrompt):
    """Answers every session method -32000 until authenticated."""

    def dispatch(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        gated = isinstance(method, str) and method.startswith("session/") and "id" in message
        if gated and not self.authed:
            self.error(message, -32000, "Authentication required")
            return
        super().dispatch(message)


class UnstableFields(RawAgent):
    """Advertises unstable capabilities and adds the unstable PromptResponse.usage."""

    capabilities = {
        "loadSession": True,
        "sessionCapabilities": {"resume": {}, "close": {}, "list": {}, "fork": {}},
    }

    def reply(self, message: M, result: Any) -> None:
        if isinstance(result, dict) and "stopReason" in result:
            result = {**result, "usage": {"inputTokens": 10, "outputTokens": 3, "totalTokens": 13}}
        super().reply(message, result)


class OpenOrder(RawAgent):
    """Does, in orders the spec leaves open, what many agents do.

    Sends available commands right after each session/new answer and a session title after each
    turn's answer (neither belongs to a turn); keeps streaming a little after a cancel before
    answering it (PROMPT-25 allows it).
    """

    def on_session_new(self, m: M) -> None:
        super().on_session_new(m)
        session_id = f"sess-{self.count}"
        if session_id in self.history:
            commands = [{"name": "help", "description": "Show help"}]
            self.update(
                session_id,
                {"sessionUpdate": "available_commands_update", "availableCommands": commands},
                keep=False,
            )

    def finish_cancelled(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        self.say(session_id, "stopping")
        super().finish_cancelled(m)


class SlowStart(RawAgent):
    """Thinks a while before its first chunk; cancelled before any content, it ends cancelled."""

    def prompt_slow(self, m: M, session_id: str) -> None:
        self.running = session_id
        line = self.readline(0.5)  # no content at all for half a second (or until a message)
        if line:
            self.dispatch_line(line)
        if m["params"]["sessionId"] in self.cancelled:
            self.finish_cancelled(m)
            self.turn_ended(session_id)
            return
        super().prompt_slow(m, session_id)


class InvalidRequestNullId(RawAgent):
    """Refuses an invalid request with id null even when its id could be read (as the
    TypeScript SDK 2.4 does; JSON-RPC 2.0 allows it)."""

    def dispatch(self, message: Any) -> None:
        if isinstance(message, dict) and "method" in message and not isinstance(
            message["method"], str
        ):
            error = {"code": -32600, "message": "Invalid request", "data": message}
            self.send({"jsonrpc": "2.0", "id": None, "error": error})
            return
        super().dispatch(message)


class NewerVersion(RawAgent):
    """Speaks v1 and a newer draft: asked for a version it does not know, answers its newest, 2,
    in that version's shape (``info`` and ``capabilities``, no ``agentInfo``), as
    claude-agent-acp 0.101 does (INIT-08)."""

    def on_initialize(self, m: M) -> None:
        if m["params"].get("protocolVersion") == 1:
            super().on_initialize(m)
            return
        info = {"name": "raw-agent", "title": "Raw", "version": "1.0"}
        caps = {"session": {"prompt": {"image": {}}, "delete": {}}, "providers": {}}
        self.reply(m, {"protocolVersion": 2, "info": info, "capabilities": caps, "authMethods": []})


class SessionsRefusedHere(RawAgent):
    """Refuses every well-formed session/new with -32603 for a reason of its environment, as
    claude-agent-acp 0.101 does when it runs as root (its permission mode is refused there)."""

    def on_session_new(self, m: M) -> None:
        cwd = m["params"].get("cwd") if isinstance(m.get("params"), dict) else None
        if not isinstance(cwd, str):
            super().on_session_new(m)  # a malformed request is refused -32602 first
            return
        error = {
            "code": -32603,
            "message": "Internal error: --dangerously-skip-permissions cannot be used with "
            "root/sudo privileges for security reasons",
            "data": {"startupFailureReason": "bypass_root"},
        }
        self.send({"jsonrpc": "2.0", "id": m["id"], "error": error})


class AuthEveryOtherPrompt(RawAgent):
    """Not logged in: answers a prompt -32000, the next one end_turn with nothing in it, the next
    -32000 again..., as claude-agent-acp 0.23 does without credentials (RPC-16)."""

    failed = False

    def on_session_prompt(self, m: M) -> None:
        if m["params"]["sessionId"] not in self.history:
            super().on_session_prompt(m)  # an unknown session: -32002
            return
        self.failed = not self.failed
        if self.failed:
            self.error(m, -32000, "Authentication required")
        else:
            self.reply(m, {"stopReason": "end_turn"})


class Wrapper:
    """A wrapper process (as npx or a shell script is): runs the raw agent as its child."""

    def run(self) -> None:
        child = subprocess.run([sys.executable, __file__, "RawAgent"])
        sys.exit(child.returncode)


class ReplaysInOtherChunks(RawAgent):
    """Replays the whole history on session/load, but not as it streamed it: each user message
    wrapped in context of its own and cut into small chunks under a message id, a thought
    before each answer, and each answer re-cut on other boundaries with a line break added."""

    def on_session_load(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        if session_id not in self.history:
            super().on_session_load(m)  # made by an earlier process: unknown
            return
        for n, update in enumerate(self.history[session_id]):
            text = update["content"]["text"]
            if update["sessionUpdate"] == "user_message_chunk":
                kind, text = "user_message_chunk", f"<context>cwd</context>\n{text}"
            else:
                kind, text = "agent_message_chunk", text + "\n"
                thought = {"type": "text", "text": "replaying"}
                self.update(
                    session_id,
                    {"sessionUpdate": "agent_thought_chunk", "content": thought},
                    keep=False,
                )
            for i in range(0, len(text), 7):
                piece = {"type": "text", "text": text[i : i + 7]}
                chunk = {"sessionUpdate": kind, "messageId": f"m{n}", "content": piece}
                self.update(session_id, chunk, keep=False)
        self.reply(m, {})


class NoClose(RawAgent):
    """Offers no ``session/close`` (the capability is optional): SETUP-16 and SETUP-17 are
    SKIPPED with the reason, the freeing of a closed session's MCP servers with them."""

    capabilities = {"loadSession": True, "sessionCapabilities": {"resume": {}, "list": {}}}


HARMLESS = {
    "RawAgent": RawAgent,
    "AuthAtPrompt": AuthAtPrompt,
    "AuthAtNew": AuthAtNew,
    "LoginLogout": LoginLogout,
    "LogoutOnly": LogoutOnly,
    "UnstableFields": UnstableFields,
    "OpenOrder": OpenOrder,
    "SlowStart": SlowStart,
    "InvalidRequestNullId": InvalidRequestNullId,
    "NewerVersion": NewerVersion,
    "SessionsRefusedHere": SessionsRefusedHere,
    "AuthEveryOtherPrompt": AuthEveryOtherPrompt,
    "Wrapper": Wrapper,
    "SystemPromptAgent": SystemPromptAgent,
    "ReplaysInOtherChunks": ReplaysInOtherChunks,
    "ConfigAgent": ConfigAgent,
    "AsksThenEnds": AsksThenEnds,
    "ReadsRelative": ReadsRelative,
    "NoClose": NoClose,
}


# -- What acpref reads as a gap, and no more -------------------------------------------------------


class ModelRetries(RawAgent):
    """Retries an unreachable model for 30 s before it answers a prompt, and reads nothing
    meanwhile, so that it neither answers within the check's timeout nor exits at the end of its
    input (gemini-cli 0.61 ``--acp`` with an API key and no network): stopped by the check, it
    owes nothing (spec-gap stopped-agent); that it did not exit is spec-gap exit-on-eof."""

    def on_session_prompt(self, m: M) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.1)  # the model's retries: connection refused, backing off
        self.error(m, -32603, "Internal error: the model could not be reached")


class NoCancelRequest(RawAgent):
    """Does not support $/cancel_request (optional): a turn it names goes on, and fails on its
    own a second later with -32603 (codex-acp 0.16 with an unreachable model); session/cancel
    it honours. CANCEL-05 cannot be decided: spec-gap cancel-request-support."""

    slow_chunks = 20

    def on_dollar_cancel_request(self, m: M) -> None:
        pass

    def slow_end(self, m: M) -> None:
        self.error(m, -32603, "Internal error: stream disconnected before completion")


class ErrorCrossesCancel(RawAgent):
    """Its busy turn fails on its own (-32603, the model's stream broke) just as the cancel
    arrives: it answers the prompt when the cancel is on its stdin, before reading it. The wire
    shows an error after session/cancel, but not that the agent had read the cancel: no
    PROMPT-24 (whose errors are those of an aborted operation), spec-gap cancel-race."""

    def prompt_slow(self, m: M, session_id: str) -> None:
        self.say(session_id, "working")
        select.select([0], [], [], 10.0)  # the cancel is on stdin: not read yet
        self.error(m, -32603, "Internal error: stream disconnected before completion")


class ChunkCrossesResume(RawAgent):
    """Its ended turn streams one last chunk just as the client writes what comes next (in the
    resume scenario, session/resume): it writes the chunk when that request is on its stdin,
    before reading it, then reads and answers it (a resume without any replay). The wire shows an
    agent message chunk after session/resume and before its answer, but not that the agent had
    read the resume: no SETUP-12, the late chunk's own spec-gap (resume-crossing)."""

    def on_session_prompt(self, m: M) -> None:
        super().on_session_prompt(m)
        if select.select([0], [], [], 10.0)[0]:  # the client's next request is on stdin, unread
            self.say(m["params"]["sessionId"], " (one last chunk of the ended turn)")


class SilentAfterInitialize(RawAgent):
    """Answers initialize, then reads everything and answers nothing (an agent whose backend
    hangs): every request after the handshake waits for ever; it exits at the end of its input.
    check-agent must end within its documented bound, with no FAIL (spec-gap gave-up)."""

    def dispatch(self, message: Any) -> None:
        if isinstance(message, dict) and message.get("method") == "initialize":
            super().dispatch(message)

    def parse_error(self) -> None:
        pass


class PromptSilent(RawAgent):
    """Never answers session/prompt (and keeps reading): each scenario that prompts would wait
    a whole timeout; the first one does, the rest are SKIPPED at once (AgentDriver.stalled)."""

    def on_session_prompt(self, m: M) -> None:
        pass


GAPS = {
    "ModelRetries": ModelRetries,
    "ErrorCrossesCancel": ErrorCrossesCancel,
    "ChunkCrossesResume": ChunkCrossesResume,
    "NoCancelRequest": NoCancelRequest,
    "SilentAfterInitialize": SilentAfterInitialize,
    "PromptSilent": PromptSilent,
}



# -- What shows nothing either way ---------------------------------------------------------------


class ReadsElsewhere(ReadsRelative):
    """Reads the name of ``/read`` from a directory of its own (where its configuration would
    be), neither the session's cwd nor where it was started: no base is shown, no verdict."""

    def base(self, session_id: str) -> str:
        return os.path.join(os.path.expanduser("~"), ".config", "raw-agent")


class NoMethodWithoutParams(RawAgent):
    """Offers neither session/list nor logout, the methods without required params: RPC-19 is
    SKIPPED with the reason."""

    capabilities = {"loadSession": True, "sessionCapabilities": {"resume": {}, "close": {}}}


NO_VERDICT = {"ReadsElsewhere": ReadsElsewhere, "NoMethodWithoutParams": NoMethodWithoutParams}

if __name__ == "__main__":
    {**_ONE_DEFECT, **HARMLESS, **GAPS, **NO_VERDICT}[sys.argv[1]]().run()  # type: ignore[operator]
