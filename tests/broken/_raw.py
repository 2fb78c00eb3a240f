"""Raw peers for the oracle's tests: an agent and a client that write JSON lines by hand.

``RawAgent`` is a small, single-threaded, *correct* agent over stdin/stdout: it answers
initialize, session/new, load, resume, close, list and prompt, replays history on load, asks a
permission for the prompt ``tool``, and honours session/cancel. ``agents.py`` bends it, one rule
per variant. ``RawClient`` is the same for a client: it spawns its agent (through
``acpref proxy --record``, so that the traffic is recorded by a third party) and offers
``call``/``send``/``read``; ``clients.py`` bends it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))


class RawAgent:
    """A correct raw agent (see the module doc); override ``on_<method>`` to break it."""

    capabilities: Dict[str, Any] = {
        "loadSession": True,
        "sessionCapabilities": {"resume": {}, "close": {}, "list": {}},
    }

    def __init__(self) -> None:
        self._buf = b""
        self.out = sys.stdout.buffer
        self.client_caps: Dict[str, Any] = {}
        self.history: Dict[str, List[Dict[str, Any]]] = {}
        self.cancelled: set = set()
        self.responses: Dict[Any, Dict[str, Any]] = {}
        self.count = 0
        self.ids = 1000
        self.cwds: Dict[str, str] = {}
        self.mcp: List["subprocess.Popen[bytes]"] = []  # the MCP servers started
        self.session_mcp: Dict[str, List["subprocess.Popen[bytes]"]] = {}  # each session's
        self.running: Optional[str] = None  # the session of the slow turn in progress
        self.deferred: List[Dict[str, Any]] = []  # session/close requests waiting for it

    # -- writing ---------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()

    def send(self, message: Any) -> None:
        self.write(json.dumps(message).encode("utf-8") + b"\n")

    def reply(self, message: Dict[str, Any], result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def error(self, message: Dict[str, Any], code: int, text: str) -> None:
        self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": text}})

    def update(self, session_id: str, update: Dict[str, Any], *, keep: bool = True) -> None:
        if keep:
            self.history.setdefault(session_id, []).append(update)
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session_id, "update": update},
            }
        )

    def say(self, session_id: str, text: str) -> None:
        self.update(
            session_id,
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        )

    def request(
        self, method: str, params: Dict[str, Any], then: Optional[Callable[[], None]] = None
    ) -> Dict[str, Any]:
        """Send a request; read and dispatch until its response arrives. ``then``, if given,
        runs once it is sent (what it sends follows the request on the wire)."""
        self.ids += 1
        request_id = self.ids
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if then is not None:
            then()
        while request_id not in self.responses:
            line = self.readline()
            if not line:
                raise SystemExit(0)
            self.dispatch_line(line)
        return self.responses.pop(request_id)

    # -- reading ---------------------------------------------------------------------------------

    def readline(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next line of stdin; ``b""`` at its end, None when ``timeout`` passed first."""
        while b"\n" not in self._buf:
            if timeout is not None and not select.select([0], [], [], timeout)[0]:
                return None
            chunk = os.read(0, 65536)
            if not chunk:
                line, self._buf = self._buf, b""
                return line
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line + b"\n"

    def run(self) -> None:
        try:
            while True:
                line = self.readline()
                if not line:
                    return
                if line.strip():
                    self.dispatch_line(line)
        finally:
            for proc in self.mcp:  # end of input for each MCP server: it exits
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(10)

    def dispatch_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.parse_error()
            return
        self.dispatch(message)

    def parse_error(self) -> None:
        self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})

    def dispatch(self, message: Dict[str, Any]) -> None:
        if not isinstance(message, dict):
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}})
            return
        if "method" not in message:
            self.responses[message.get("id")] = message
            return
        if not isinstance(message["method"], str):
            request_id = message.get("id") if isinstance(message.get("id"), (str, int)) else None
            error = {"code": -32600, "message": "Invalid request"}
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        name = "on_" + message["method"].replace("/", "_").replace("$", "dollar")
        handler = getattr(self, name, None)
        if handler is not None:
            handler(message)
        elif "id" in message:
            self.error(message, -32601, f"Method not found: {message['method']}")

    # -- the agent methods -----------------------------------------------------------------------

    def on_initialize(self, m: Dict[str, Any]) -> None:
        self.client_caps = m["params"].get("clientCapabilities") or {}
        self.reply(
            m,
            {
                "protocolVersion": 1,
                "agentCapabilities": self.capabilities,
                "authMethods": [],
                "agentInfo": {"name": "raw-agent", "version": "1.0"},
            },
        )

    def new_session_id(self) -> str:
        self.count += 1
        return f"sess-{self.count}"

    def on_session_new(self, m: Dict[str, Any]) -> None:
        cwd = m.get("params", {}).get("cwd") if isinstance(m.get("params"), dict) else None
        if not (isinstance(cwd, str) and os.path.isabs(cwd)):
            self.error(m, -32602, "cwd must be an absolute path")
            return
        session_id = self.new_session_id()
        self.history[session_id] = []
        self.cwds[session_id] = cwd
        started = len(self.mcp)
        self.connect_mcp(m["params"].get("mcpServers") or [])
        self.session_mcp[session_id] = self.mcp[started:]
        self.reply(m, {"sessionId": session_id})

    def connect_mcp(self, servers: List[Dict[str, Any]]) -> None:
        """Start each stdio MCP server and go through the MCP handshake with it."""
        for server in servers:
            if server.get("type") not in (None, "stdio"):
                continue
            env = {**os.environ, **{e["name"]: e["value"] for e in server.get("env", [])}}
            proc = subprocess.Popen(
                [server["command"], *server.get("args", [])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )
            assert proc.stdin is not None and proc.stdout is not None
            self.mcp.append(proc)
            init = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-agent", "version": "1"},
            }
            self.mcp_send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
            proc.stdout.readline()
            self.mcp_initialized(proc)

    def stop_mcp(self, session_id: str) -> None:
        """Stop the MCP servers of a closed session (SETUP-16: its resources are freed)."""
        for proc in self.session_mcp.pop(session_id, []):
            if proc.stdin is not None:
                proc.stdin.close()  # end of input: it exits
            proc.wait(10)
            self.mcp.remove(proc)

    def mcp_send(self, proc: "subprocess.Popen[bytes]", message: Dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def mcp_initialized(self, proc: "subprocess.Popen[bytes]") -> None:
        self.mcp_send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})

    def on_session_load(self, m: Dict[str, Any]) -> None:
        session_id = m["params"]["sessionId"]
        if session_id not in self.history:
            # Sessions live in this process only: one made by an earlier process is unknown.
            self.error(m, -32002, f"no session {session_id!r}")
            return
        for update in self.history.get(session_id, []):
            self.update(session_id, update, keep=False)
        self.reply(m, {})

    def on_session_resume(self, m: Dict[str, Any]) -> None:
        self.reply(m, {})

    def on_session_close(self, m: Dict[str, Any]) -> None:
        session_id = m["params"]["sessionId"]
        if session_id == self.running:
            self.cancelled.add(session_id)  # answered once the turn has ended cancelled
            self.deferred.append(m)
            return
        self.history.pop(session_id, None)
        self.stop_mcp(session_id)
        self.reply(m, {})

    def on_session_list(self, m: Dict[str, Any]) -> None:
        params = m.get("params") or {}
        if params.get("cursor") is not None:
            self.error(m, -32602, "invalid cursor")
            return
        cwd = params.get("cwd")
        sessions = [
            {"sessionId": sid, "cwd": self.cwds.get(sid, "/tmp")}
            for sid in self.history
            if cwd is None or self.cwds.get(sid, "/tmp") == cwd
        ]
        self.reply(m, {"sessions": sessions})

    def on_session_cancel(self, m: Dict[str, Any]) -> None:
        self.cancelled.add(m["params"]["sessionId"])

    def on_session_prompt(self, m: Dict[str, Any]) -> None:
        session_id = m["params"]["sessionId"]
        if session_id not in self.history:
            self.error(m, -32002, f"no session {session_id!r}")
            return
        text = "".join(b.get("text", "") for b in m["params"]["prompt"])
        self.cancelled.discard(session_id)
        self.prompt_id = m["id"]
        self.history.setdefault(session_id, []).append(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
        )
        if text == "tool":
            self.prompt_tool(m, session_id)
            return
        if text == "slow":
            self.prompt_slow(m, session_id)
            return
        self.say(session_id, text)
        self.reply(m, {"stopReason": "end_turn"})

    #: How many chunks the busy prompt streams before it ends on its own (``slow_end``).
    slow_chunks = 100

    def slow_end(self, m: Dict[str, Any]) -> None:
        """How a busy prompt that was not cancelled ends."""
        self.reply(m, {"stopReason": "end_turn"})

    def prompt_slow(self, m: Dict[str, Any], session_id: str) -> None:
        """Stream until cancelled (at most ``slow_chunks`` chunks), reading stdin meanwhile."""
        self.running = session_id
        try:
            for _ in range(self.slow_chunks):
                self.say(session_id, ".")
                line = self.readline(0.05)
                if line == b"":
                    raise SystemExit(0)
                if line:
                    self.dispatch_line(line)
                if session_id in self.cancelled:
                    self.finish_cancelled(m)
                    return
            self.slow_end(m)
        finally:
            self.turn_ended(session_id)

    def turn_ended(self, session_id: str) -> None:
        """Answer the session/close requests that waited for the turn's end."""
        self.running = None
        for close in self.deferred:
            self.history.pop(session_id, None)
            self.stop_mcp(session_id)
            self.reply(close, {})
        self.deferred = []

    def on_dollar_cancel_request(self, m: Dict[str, Any]) -> None:
        if m["params"].get("requestId") == getattr(self, "prompt_id", None):
            self.cancelled.update(self.history)

    #: Whether an allowed tool call reports in_progress before its end (PROMPT-14).
    reports_in_progress = True

    def prompt_tool(self, m: Dict[str, Any], session_id: str) -> None:
        """A tool call that asks permission; a session/close meanwhile cancels it (SETUP-16)."""
        self.running = session_id
        try:
            call_id = f"call-{m['id']}"  # spec TOOL-02: unique within the session
            call = {"toolCallId": call_id, "title": "Edit", "kind": "edit"}
            self.update(session_id, {"sessionUpdate": "tool_call", **call})
            answer = self.ask_permission(session_id, call_id)
            if session_id in self.cancelled:
                self.finish_cancelled(m)
                return
            outcome = answer.get("result", {}).get("outcome", {})
            status = "completed" if outcome.get("outcome") == "selected" else "failed"
            if status == "completed" and self.reports_in_progress:
                # spec PROMPT-14: once allowed, the tool runs: in_progress, then its end.
                running = {"toolCallId": call_id, "status": "in_progress"}
                self.update(session_id, {"sessionUpdate": "tool_call_update", **running})
            self.update(
                session_id,
                {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status},
            )
            self.reply(m, {"stopReason": "end_turn"})
        finally:
            self.turn_ended(session_id)

    def ask_permission(self, session_id: str, call: str, probe: bool = False) -> Dict[str, Any]:
        """Ask permission; with ``probe``, an extension request follows it at once, which a
        client answers without its user: answered before a cancel, it shows the client had read
        the permission request (spec-gap permission-crossing)."""
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        return self.request(
            "session/request_permission",
            {"sessionId": session_id, "toolCall": {"toolCallId": call}, "options": options},
            then=self.send_probe if probe else None,
        )

    def send_probe(self) -> None:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": "_acpref/ping", "params": {}})

    def finish_cancelled(self, m: Dict[str, Any]) -> None:
        self.reply(m, {"stopReason": "cancelled"})


class RawClient:
    """A raw client of an agent spawned behind ``acpref proxy --record TRANSCRIPT``."""

    def __init__(self, transcript: str, agent: Optional[List[str]] = None) -> None:
        agent = agent or [sys.executable, os.path.join(HERE, "well_behaved_agent.py")]
        argv = [
            sys.executable,
            "-m",
            "acpref",
            "proxy",
            "--quiet",
            "--record",
            transcript,
            "--",
            *agent,
        ]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids = 0

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(json.dumps(message).encode("utf-8") + b"\n")

    def read(self) -> Dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("the agent closed its output")
        return json.loads(line)

    def call(
        self, method: str, params: Dict[str, Any], *, on_request: Any = None
    ) -> Dict[str, Any]:
        """Send a request; return its response, handing the agent's messages to ``on_request``."""
        self.ids += 1
        request_id = self.ids
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.read()
            if "method" not in message and message.get("id") == request_id:
                return message
            if on_request is not None:
                on_request(message)
            elif "method" in message and "id" in message:
                self.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "no"},
                    }
                )

    def initialize(self, caps: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        return self.call(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": caps or {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )

    def new_session(self, cwd: str = "/tmp") -> str:
        return self.call("session/new", {"cwd": cwd, "mcpServers": []})["result"]["sessionId"]

    def prompt(self, session_id: str, text: str, **kwargs: Any) -> Dict[str, Any]:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return self.call("session/prompt", params, **kwargs)

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(30)
