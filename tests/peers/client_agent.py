"""A scripted ACP agent for the client's tests: obeys what each prompt tells it to do.

Run as ``python client_agent.py [--version N] [--caps JSON] [--flood-stderr BYTES]
[--load-null] [--modes-only] [--options JSON] [--title TITLE]`` (``--modes-only``: sessions have modes and no
config options; ``--options``: the sessions' config options, instead of a ``model`` select) (an agent on stdin/stdout), or use ``ScriptedAgent`` in-process over any stream.
It uses a plain ``acpref.connection.Connection`` *without* the protocol's rules, so a test can
make it misbehave.

A prompt whose text is a JSON object ``{"steps": [...]}`` runs the steps in order; any other
prompt is echoed back as one agent_message_chunk. Steps:

* ``{"call": METHOD, "params": {...}}``: a request to the client; its result or error is recorded.
* ``{"notify": METHOD, "params": {...}}``, ``{"update": {...}}`` (a session/update).
* ``{"chunks": N, "message_id": "m", "delay": seconds}``: N agent_message_chunks ``c0 c1 ...``.
* ``{"wait_cancel": seconds}``: wait until session/cancel arrives (recorded: true/false).
* ``{"poll_output": TERMINAL_ID, "until": TEXT, "timeout": seconds}``: poll terminal/output.
* ``{"sleep": seconds}``: do nothing, even if cancelled. ``{"die": CODE}``: exit at once, mid-turn. ``{"stderr": BYTES}``: write that many ``e`` and a newline to stderr.
* ``{"later": FIFO, "update": {...}}``: the turn goes on; the session/update is sent after it,
  once the test has written to the named pipe FIFO and closed it (an update that arrives while
  the user types at the prompt, at a moment the test chooses).
* ``{"stop": REASON}``: the stop reason to answer with (default end_turn; cancelled if cancelled).

In params, the string ``"$sid"`` is the session id and ``"$rN.key"`` the ``key`` of step N's
result. Before answering, the agent sends the recorded results as a chunk with messageId
``"results"`` (JSON text), so a test reads them from the client's view.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional

from acpref import codec
from acpref import schema as s
from acpref._shell.transport import FdStream
from acpref.connection import Connection
from acpref.errors import RpcError

DEFAULT_CAPS: Dict[str, Any] = {
    "loadSession": True,
    "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
    "mcpCapabilities": {"http": False, "sse": False},
    "sessionCapabilities": {
        "list": {},
        "delete": {},
        "resume": {},
        "close": {},
        "additionalDirectories": {},
    },
    "auth": {"logout": {}},
}


class ScriptedAgent:
    def __init__(
        self,
        *,
        version: int = 1,
        caps: Optional[Dict[str, Any]] = None,
        load_null: bool = False,
        flood_stderr: int = 0,
        modes_only: bool = False,
        options: Optional[List[Dict[str, Any]]] = None,
        title: str = "Scripted Agent",
    ) -> None:
        self.version = version
        self.title = title
        self.caps = DEFAULT_CAPS if caps is None else caps
        self.load_null = load_null
        self.flood_stderr = flood_stderr
        self.modes_only = modes_only
        self.options = options
        self.sessions: Dict[str, Dict[str, Any]] = {}
        self.cancelled: Dict[str, threading.Event] = {}
        self.client_caps: Dict[str, Any] = {}
        self.conn: Optional[Connection] = None
        self._lock = threading.Lock()

    def handlers(self) -> Dict[str, Any]:
        return {
            "initialize": self.initialize,
            "authenticate": lambda p, ctx: s.AuthenticateResponse(),
            "logout": lambda p, ctx: s.LogoutResponse(),
            "session/new": self.new,
            "session/load": self.load,
            "session/resume": self.resume,
            "session/close": lambda p, ctx: s.CloseSessionResponse(),
            "session/delete": lambda p, ctx: s.DeleteSessionResponse(),
            "session/list": self.list,
            "session/set_mode": self.set_mode,
            "session/set_config_option": self.set_config,
            "session/prompt": self.prompt,
            "session/cancel": self.cancel,
        }

    def serve(self, stream: Any, name: str = "scripted-agent") -> Connection:
        self.conn = Connection(stream, self.handlers(), name=name)
        return self.conn.start()

    # -- Setup --------------------------------------------------------------------------------

    def initialize(self, params: s.InitializeRequest, ctx: Any) -> Any:
        if self.flood_stderr:
            chunk = b"x" * 65535 + b"\n"
            for _ in range(self.flood_stderr // len(chunk) + 1):
                os.write(2, chunk)
        self.client_caps = (
            codec.encode(params.client_capabilities) if params.client_capabilities else {}
        )
        return {
            "protocolVersion": self.version,
            "agentCapabilities": self.caps,
            "agentInfo": {"name": "scripted-agent", "title": self.title, "version": "0.0.1"},
            "authMethods": [],
        }

    def _options(self) -> List[Dict[str, Any]]:
        if self.options is not None:
            return json.loads(json.dumps(self.options))
        options: List[Dict[str, Any]] = [
            {
                "id": "model",
                "name": "Model",
                "type": "select",
                "currentValue": "small",
                "options": [
                    {"value": "small", "name": "Small"},
                    {"value": "large", "name": "Large"},
                ],
            },
        ]
        boolean = ((self.client_caps.get("session") or {}).get("configOptions") or {}).get(
            "boolean"
        )
        if isinstance(boolean, dict):
            options.append({"id": "fast", "name": "Fast", "type": "boolean", "currentValue": False})
        return options

    def _setup_result(self) -> Dict[str, Any]:
        modes = {
            "currentModeId": "ask",
            "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
        }
        if self.modes_only:
            return {"modes": modes}
        return {"modes": modes, "configOptions": self._options()}

    def new(self, params: s.NewSessionRequest, ctx: Any) -> Any:
        with self._lock:
            sid = f"sess-{len(self.sessions) + 1}"
            self.sessions[sid] = {"cwd": params.cwd, "history": []}
        return {"sessionId": sid, **self._setup_result()}

    def load(self, params: s.LoadSessionRequest, ctx: Any) -> Any:
        sid = params.session_id
        history = self.sessions.get(sid, {}).get("history", [])
        self.sessions.setdefault(sid, {"cwd": params.cwd, "history": history})
        for n, (role, text) in enumerate(history):
            kind = "user_message_chunk" if role == "user" else "agent_message_chunk"
            self.update(
                sid,
                {
                    "sessionUpdate": kind,
                    "content": {"type": "text", "text": text},
                    "messageId": f"h{n}",
                },
            )
        return None if self.load_null else self._setup_result()

    def resume(self, params: s.ResumeSessionRequest, ctx: Any) -> Any:
        self.sessions.setdefault(params.session_id, {"cwd": params.cwd, "history": []})
        return self._setup_result()

    def list(self, params: s.ListSessionsRequest, ctx: Any) -> Any:
        items = [{"sessionId": sid, "cwd": v["cwd"]} for sid, v in sorted(self.sessions.items())]
        if params.cursor == "page2":
            return {"sessions": items[1:]}
        return (
            {"sessions": items[:1], "nextCursor": "page2"}
            if len(items) > 1
            else {"sessions": items}
        )

    def set_mode(self, params: s.SetSessionModeRequest, ctx: Any) -> Any:
        return {}

    def set_config(self, params: s.SetSessionConfigOptionRequest, ctx: Any) -> Any:
        options = self._options()
        for option in options:
            if option["id"] == params.config_id:
                option["currentValue"] = params.value
        return {"configOptions": options}

    # -- Turns --------------------------------------------------------------------------------

    def cancel(self, params: s.CancelNotification, ctx: Any) -> None:
        self.cancelled.setdefault(params.session_id, threading.Event()).set()

    def update(self, sid: str, update: Dict[str, Any]) -> None:
        assert self.conn is not None
        self.conn.notify("session/update", {"sessionId": sid, "update": update})

    def prompt(self, params: s.PromptRequest, ctx: Any) -> Any:
        sid = params.session_id
        # A session/cancel may be handled before this handler starts (notifications and
        # requests run on different threads): the flag is reset when a turn ends, not here.
        self.cancelled.setdefault(sid, threading.Event())
        try:
            return self._prompt(sid, params)
        finally:
            self.cancelled[sid] = threading.Event()

    def _prompt(self, sid: str, params: s.PromptRequest) -> Any:
        text = "".join(b.text for b in params.prompt if isinstance(b, s.TextContent))
        self.sessions.setdefault(sid, {"cwd": "/", "history": []})["history"].append(("user", text))
        try:
            script = json.loads(text)
        except ValueError:
            script = None
        if not isinstance(script, dict) or "steps" not in script:
            self.update(
                sid,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                    "messageId": f"echo-{len(self.sessions[sid]['history'])}",
                },
            )
            self.sessions[sid]["history"].append(("agent", text))
            return {"stopReason": "end_turn"}
        stop = "end_turn"
        results: List[Any] = []
        for step in script["steps"]:
            if "stop" in step:
                stop = step["stop"]
                continue
            results.append(self._step(sid, step, results))
        self.update(
            sid,
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": json.dumps(results)},
                "messageId": "results",
            },
        )
        if self.cancelled[sid].is_set():
            stop = "cancelled"
        return {"stopReason": stop}

    def _later(self, sid: str, fifo: str, update: Dict[str, Any]) -> None:
        """Send ``update`` once the test has written to (and closed) the named pipe ``fifo``."""
        with open(fifo, "rb") as f:
            f.read()
        self.update(sid, update)

    def _step(self, sid: str, step: Dict[str, Any], results: List[Any]) -> Any:
        assert self.conn is not None
        params = _substitute(step.get("params", {}), sid, results)
        if "call" in step:
            try:
                return {"result": codec.encode(self.conn.request(step["call"], params, timeout=30))}
            except RpcError as exc:
                return {"error": exc.to_wire()}
        if "notify" in step:
            self.conn.notify(step["notify"], params)
            return None
        if "later" in step:
            update = _substitute(step["update"], sid, results)
            threading.Thread(
                target=self._later, args=(sid, step["later"], update), daemon=True
            ).start()
            return None
        if "update" in step:
            self.update(sid, _substitute(step["update"], sid, results))
            return None
        if "chunks" in step:
            for n in range(step["chunks"]):
                self.update(
                    sid,
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": f"c{n} "},
                        "messageId": step.get("message_id", "m1"),
                    },
                )
                if step.get("delay"):
                    time.sleep(step["delay"])
            return None
        if "wait_cancel" in step:
            return self.cancelled[sid].wait(step["wait_cancel"])
        if "poll_output" in step:
            tid = _substitute(step["poll_output"], sid, results)
            deadline = time.monotonic() + step.get("timeout", 5)
            while time.monotonic() < deadline:
                out = self.conn.request(
                    "terminal/output", {"sessionId": sid, "terminalId": tid}, timeout=10
                )
                if step["until"] in out.output:
                    return True
                time.sleep(0.02)
            return False
        if "sleep" in step:
            time.sleep(step["sleep"])  # a turn that ignores session/cancel meanwhile
            return None
        if "die" in step:
            os._exit(step["die"])
        if "stderr" in step:
            os.write(2, b"e" * step["stderr"] + b"\n")
            return None
        raise ValueError(f"unknown step {step!r}")


def _substitute(value: Any, sid: str, results: List[Any]) -> Any:
    if isinstance(value, str):
        if value == "$sid":
            return sid
        if value.startswith("$r") and "." in value:
            index, key = value[2:].split(".", 1)
            return results[int(index)]["result"][key]
        return value
    if isinstance(value, list):
        return [_substitute(v, sid, results) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, sid, results) for k, v in value.items()}
    return value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", type=int, default=1)
    parser.add_argument("--caps", type=json.loads, default=None)
    parser.add_argument("--load-null", action="store_true")
    parser.add_argument("--flood-stderr", type=int, default=0)
    parser.add_argument("--modes-only", action="store_true")
    parser.add_argument("--options", type=json.loads, default=None)
    parser.add_argument("--title", default="Scripted Agent")
    args = parser.parse_args()
    agent = ScriptedAgent(
        version=args.version,
        caps=args.caps,
        load_null=args.load_null,
        flood_stderr=args.flood_stderr,
        modes_only=args.modes_only,
        options=args.options,
        title=args.title,
    )
    conn = agent.serve(FdStream(sys.stdin.fileno(), sys.stdout.fileno()))
    conn.wait_closed()


if __name__ == "__main__":
    main()
