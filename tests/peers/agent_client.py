"""A small ACP client for the agent-side tests, on ``acpref.connection`` and ``acpref.schema``.

Not the reference client (``acpref.client``): a test fixture that does exactly what a test asks.
It drives an agent either in a subprocess (``spawn_echo``: ``python -m acpref.echo`` over its
pipes) or in this process (``in_process``: an ``AgentSideConnection`` over two ``os.pipe()``s).

* Every message both ways is recorded in wire order (``wire``), and judged by a **witness**: a
  ``ProtocolState`` that observes both directions and only collects findings (it never refuses
  anything, so tests may send broken messages on purpose and see how the agent answers).
* Client methods are served from real resources: files on disk, real subprocesses for
  terminals. Permission and elicitation answers come from policies a test sets.
* Every wait has a timeout (``WAIT``); waits are on conditions, never sleep-polling.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from acpref import codec
from acpref import schema as s
from acpref._core import Finding, Party, ProtocolState
from acpref._shell.transport import FdStream, spawn
from acpref.connection import Connection, PendingRequest
from acpref.errors import RpcError

#: The bound on any single wait in these tests.
WAIT = float(__import__("os").environ.get("ACPREF_TEST_WAIT", "10"))

FULL_CAPS = s.ClientCapabilities(
    fs=s.FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
    session=s.ClientSessionCapabilities(
        config_options=s.SessionConfigOptionsCapabilities(
            boolean=s.BooleanConfigOptionCapabilities()
        )
    ),
    elicitation=s.ElicitationCapabilities(
        form=s.ElicitationFormCapabilities(), url=s.ElicitationUrlCapabilities()
    ),
    meta={"acpref": {"echo": True}},
)
EMPTY_CAPS = s.ClientCapabilities()
CLIENT_INFO = s.Implementation(name="acpref-test-client", version="0")


class _Witness:
    """A connection observer that records findings both ways and never refuses anything.

    Its hooks run in true wire order (``on_send`` under the write lock, just before the write;
    ``on_receive`` on the reader thread), so they also keep the transcript: the connection's
    recorder logs a sent line only after writing it, when a reply may already have been read.
    """

    def __init__(self, on_message: Callable[[str, Dict[str, Any]], None]) -> None:
        self.state = ProtocolState()
        self.findings: List[Finding] = []
        self._lock = threading.Lock()
        self._on_message = on_message

    def on_send(self, message: Dict[str, Any]) -> None:
        with self._lock:
            self.findings += self.state.observe(Party.CLIENT, message)
            self._on_message("out", message)

    def on_receive(self, message: Dict[str, Any]) -> Optional[RpcError]:
        with self._lock:
            self.findings += self.state.observe(Party.AGENT, message)
            self._on_message("in", message)
        return None


class _Terminals:
    """Client terminals as real subprocesses (terminals.mdx), output gathered by a thread each."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: Dict[str, Tuple[subprocess.Popen, List[bytes], threading.Thread]] = {}
        self.created: List[s.CreateTerminalRequest] = []
        self.released: List[str] = []
        self.killed: List[str] = []

    def create(self, params: s.CreateTerminalRequest, ctx: Any) -> s.CreateTerminalResponse:
        self.created.append(params)
        argv = [params.command, *(params.args or [])]
        try:
            proc = subprocess.Popen(
                argv,
                cwd=params.cwd or None,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise RpcError.resource_not_found(f"cannot run {params.command!r}: {exc}") from None
        out: List[bytes] = []

        def drain() -> None:
            assert proc.stdout is not None
            for chunk in iter(lambda: proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
                out.append(chunk)

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        terminal_id = f"term_{len(self.created)}_{os.urandom(3).hex()}"
        with self._lock:
            self._procs[terminal_id] = (proc, out, thread)
        return s.CreateTerminalResponse(terminal_id=terminal_id)

    def _get(self, terminal_id: str) -> Tuple[subprocess.Popen, List[bytes], threading.Thread]:
        with self._lock:
            found = self._procs.get(terminal_id)
        if found is None:
            raise RpcError.resource_not_found(f"unknown terminal {terminal_id!r}")
        return found

    def _status(self, proc: subprocess.Popen) -> s.TerminalExitStatus:
        code = proc.returncode
        if code is not None and code < 0:
            import signal as _signal

            return s.TerminalExitStatus(exit_code=None, signal=_signal.Signals(-code).name)
        return s.TerminalExitStatus(exit_code=code, signal=None)

    def output(self, params: s.TerminalOutputRequest, ctx: Any) -> s.TerminalOutputResponse:
        proc, out, thread = self._get(params.terminal_id)
        if proc.poll() is not None:
            thread.join(WAIT)
        status = self._status(proc) if proc.poll() is not None else None
        return s.TerminalOutputResponse(
            output=b"".join(out).decode("utf-8", "replace"), truncated=False, exit_status=status
        )

    def wait_for_exit(
        self, params: s.WaitForTerminalExitRequest, ctx: Any
    ) -> s.WaitForTerminalExitResponse:
        proc, _, _ = self._get(params.terminal_id)
        proc.wait(timeout=WAIT * 3)
        status = self._status(proc)
        return s.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    def kill(self, params: s.KillTerminalRequest, ctx: Any) -> s.KillTerminalResponse:
        proc, _, _ = self._get(params.terminal_id)
        self.killed.append(params.terminal_id)
        if proc.poll() is None:
            proc.kill()
        return s.KillTerminalResponse()

    def release(self, params: s.ReleaseTerminalRequest, ctx: Any) -> s.ReleaseTerminalResponse:
        proc, _, thread = self._get(params.terminal_id)
        if proc.poll() is None:
            proc.kill()
        proc.wait(WAIT)
        thread.join(WAIT)
        with self._lock:
            del self._procs[params.terminal_id]
        self.released.append(params.terminal_id)
        return s.ReleaseTerminalResponse()

    def close(self) -> None:
        with self._lock:
            procs = list(self._procs.values())
        for proc, _, _ in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(WAIT)


def allow_first(params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
    """The default permission policy: pick the first allow option."""
    for option in params.options:
        if option.kind in (s.PermissionOptionKind.ALLOW_ONCE, s.PermissionOptionKind.ALLOW_ALWAYS):
            return s.RequestPermissionResponse(
                outcome=s.SelectedPermissionOutcome(option_id=option.option_id)
            )
    return s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())


def reject_first(params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
    for option in params.options:
        if option.kind in (
            s.PermissionOptionKind.REJECT_ONCE,
            s.PermissionOptionKind.REJECT_ALWAYS,
        ):
            return s.RequestPermissionResponse(
                outcome=s.SelectedPermissionOutcome(option_id=option.option_id)
            )
    return s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())


def accept_form(params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
    content: Dict[str, Any] = (
        {"name": "Ada", "echoes": 2} if isinstance(params.mode, s.ElicitationFormMode) else None
    )
    return s.CreateElicitationResponse(
        action=s.ElicitationAcceptAction(content=content if content else s.UNSET)
    )


class TestClient:
    """One client connection to one agent, with everything a test needs to look at."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        stream: FdStream,
        *,
        name: str = "test-client",
        on_close: Optional[Callable[[], None]] = None,
    ) -> None:
        self._cond = threading.Condition()
        self.witness = _Witness(self._record)
        #: Every well-formed message in wire order: ("in" | "out", message dict).
        self.wire: List[Tuple[str, Dict[str, Any]]] = []
        #: Every line as the connection's recorder saw it: ("in" | "out", bytes).
        self.lines: List[Tuple[str, bytes]] = []
        #: session/update notifications received, in order.
        self.notifications: List[s.SessionNotification] = []
        self.permission_requests: List[s.RequestPermissionRequest] = []
        self.elicitations: List[s.CreateElicitationRequest] = []
        self.completed_elicitations: List[str] = []
        self.ext_calls: List[Tuple[str, Any]] = []
        self.permission: Callable[[s.RequestPermissionRequest], s.RequestPermissionResponse] = (
            allow_first
        )
        self.elicit: Callable[[s.CreateElicitationRequest], s.CreateElicitationResponse] = (
            accept_form
        )
        self.terminals = _Terminals()
        self._on_close = on_close
        handlers = {
            "session/update": self._on_update,
            "session/request_permission": self._on_permission,
            "fs/read_text_file": self._on_read,
            "fs/write_text_file": self._on_write,
            "terminal/create": self.terminals.create,
            "terminal/output": self.terminals.output,
            "terminal/wait_for_exit": self.terminals.wait_for_exit,
            "terminal/kill": self.terminals.kill,
            "terminal/release": self.terminals.release,
            "elicitation/create": self._on_elicit,
            "elicitation/complete": self._on_elicit_complete,
            "_acpref/echo": self._on_ext_echo,
            "_acpref/notice": self._on_ext_notice,
        }
        self.connection = Connection(
            stream, handlers, name=name, recorder=self._record_line, observer=self.witness
        ).start()

    # -- recording -------------------------------------------------------------------------------

    def _record(self, direction: str, message: Dict[str, Any]) -> None:
        with self._cond:
            self.wire.append((direction, copy.deepcopy(message)))
            self._cond.notify_all()

    def _record_line(self, direction: str, line: bytes) -> None:
        with self._cond:
            self.lines.append((direction, line))

    def unparsable_lines(self) -> List[bytes]:
        """Lines received that are not JSON objects (spec TRANSPORT-08: there must be none)."""
        out = []
        with self._cond:
            lines = [line for d, line in self.lines if d == "in"]
        for line in lines:
            try:
                if not isinstance(json.loads(line), dict):
                    out.append(line)
            except ValueError:
                out.append(line)
        return out

    def wait_for(
        self, predicate: Callable[[], Any], timeout: float = WAIT, what: str = "condition"
    ) -> Any:
        """Wait until ``predicate()`` is true (re-checked whenever anything arrives, and every
        10 ms: a predicate may look at the agent's side, which tells us nothing when it changes)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            result = predicate()
            while not result:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(min(remaining, 0.01))
                result = predicate()
        assert result, f"timed out after {timeout}s waiting for {what}"
        return result

    @property
    def findings(self) -> List[Finding]:
        return list(self.witness.findings)

    def clauses(self) -> List[str]:
        return [f.clause for f in self.witness.findings]

    def updates(self, session_id: str) -> List[Any]:
        with self._cond:
            return [n.update for n in self.notifications if n.session_id == session_id]

    def updates_of(self, session_id: str, kind: type) -> List[Any]:
        return [u for u in self.updates(session_id) if isinstance(u, kind)]

    def inbound(self) -> List[Dict[str, Any]]:
        with self._cond:
            return [m for d, m in self.wire if d == "in"]

    # -- handlers --------------------------------------------------------------------------------

    def _on_update(self, params: s.SessionNotification, ctx: Any) -> None:
        with self._cond:
            self.notifications.append(params)
            self._cond.notify_all()

    def _on_permission(
        self, params: s.RequestPermissionRequest, ctx: Any
    ) -> s.RequestPermissionResponse:
        with self._cond:
            self.permission_requests.append(params)
            self._cond.notify_all()
        return self.permission(params)

    def _on_read(self, params: s.ReadTextFileRequest, ctx: Any) -> s.ReadTextFileResponse:
        try:
            with open(params.path, encoding="utf-8") as f:
                return s.ReadTextFileResponse(content=f.read())
        except FileNotFoundError:
            raise RpcError.resource_not_found(
                f"no file {params.path}", "file://" + params.path
            ) from None

    def _on_write(self, params: s.WriteTextFileRequest, ctx: Any) -> s.WriteTextFileResponse:
        with open(params.path, "w", encoding="utf-8") as f:
            f.write(params.content)
        return s.WriteTextFileResponse()

    def _on_elicit(
        self, params: s.CreateElicitationRequest, ctx: Any
    ) -> s.CreateElicitationResponse:
        with self._cond:
            self.elicitations.append(params)
            self._cond.notify_all()
        return self.elicit(params)

    def _on_elicit_complete(self, params: s.CompleteElicitationNotification, ctx: Any) -> None:
        with self._cond:
            self.completed_elicitations.append(params.elicitation_id)
            self._cond.notify_all()

    def _on_ext_echo(self, params: Any, ctx: Any) -> Any:
        with self._cond:
            self.ext_calls.append(("_acpref/echo", params))
        return {"echoed": params}

    def _on_ext_notice(self, params: Any, ctx: Any) -> None:
        with self._cond:
            self.ext_calls.append(("_acpref/notice", params))
            self._cond.notify_all()

    # -- calls -----------------------------------------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: float = WAIT) -> Any:
        return self.connection.request(method, params, timeout=timeout)

    def request_async(self, method: str, params: Any = None) -> PendingRequest:
        return self.connection.request_async(method, params)

    def notify(self, method: str, params: Any = None) -> None:
        self.connection.notify(method, params)

    def initialize(self, caps: Any = FULL_CAPS, *, version: Any = 1) -> s.InitializeResponse:
        params = s.InitializeRequest(
            protocol_version=version, client_capabilities=caps, client_info=CLIENT_INFO
        )
        return self.request("initialize", params)

    def new_session(self, cwd: str, **kwargs: Any) -> s.NewSessionResponse:
        kwargs.setdefault("mcp_servers", [])
        response = self.request("session/new", s.NewSessionRequest(cwd=cwd, **kwargs))
        return response

    def wait_commands(self, session_id: str) -> s.AvailableCommandsUpdate:
        """Wait for the ``available_commands_update`` that follows a session's setup."""
        self.wait_for(
            lambda: self.updates_of(session_id, s.AvailableCommandsUpdate),
            what="available commands",
        )
        return self.updates_of(session_id, s.AvailableCommandsUpdate)[-1]

    def prompt_async(self, session_id: str, prompt: Any) -> PendingRequest:
        blocks = [s.TextContent(text=prompt)] if isinstance(prompt, str) else list(prompt)
        return self.request_async(
            "session/prompt", s.PromptRequest(session_id=session_id, prompt=blocks)
        )

    def prompt(self, session_id: str, prompt: Any, *, timeout: float = WAIT) -> s.PromptResponse:
        return self.prompt_async(session_id, prompt).result(timeout)

    def cancel(self, session_id: str) -> None:
        self.notify("session/cancel", s.CancelNotification(session_id=session_id))

    def text_of(self, session_id: str, kind: type = s.AgentMessageChunk) -> str:
        """The text of the session's chunks of ``kind`` so far, joined."""
        return "".join(
            u.content.text
            for u in self.updates_of(session_id, kind)
            if isinstance(u.content, s.TextContent)
        )

    def close(self) -> None:
        self.connection.close()
        self.terminals.close()
        if self._on_close is not None:
            self._on_close()


def spawn_echo(
    *args: str, caps: Any = FULL_CAPS, initialize: bool = True, env: Optional[Dict[str, str]] = None
) -> TestClient:
    """``python -m acpref.echo ARGS`` driven over its pipes."""
    process = spawn([sys.executable, "-m", "acpref.echo", *args], env=env)
    assert process.popen.stdout is not None and process.popen.stdin is not None
    stream = FdStream(process.popen.stdout.fileno(), process.popen.stdin.fileno())
    client = TestClient(stream, name="echo-client", on_close=lambda: process.shutdown(grace=WAIT))
    client.process = process  # type: ignore[attr-defined]
    if initialize:
        client.init = client.initialize(caps)  # type: ignore[attr-defined]
    return client


def in_process(
    agent: Any, *, caps: Any = FULL_CAPS, initialize: bool = True, **side_kwargs: Any
) -> TestClient:
    """An ``AgentSideConnection`` serving ``agent`` in this process, joined by two pipes."""
    from acpref.agent import AgentSideConnection

    to_agent_r, to_agent_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    side = AgentSideConnection(
        agent, FdStream(to_agent_r, to_client_w, owns_fds=True), **side_kwargs
    ).start()
    client = TestClient(FdStream(to_client_r, to_agent_w, owns_fds=True), on_close=side.close)
    client.side = side  # type: ignore[attr-defined]
    if initialize:
        client.init = client.initialize(caps)  # type: ignore[attr-defined]
    return client


def strict_problems(client: TestClient) -> List[str]:
    """Everything the agent sent, decoded with the strict codec (the oracle's): the problems.

    Requests and notifications by their params type, responses by the result type of the
    request they answer (spec INIT-06: v1 messages only; EXT-04: no custom root keys).
    """
    from acpref.methods import lookup

    asked = {
        m["id"]: m["method"] for d, m in client.wire if d == "out" and "method" in m and "id" in m
    }
    problems: List[str] = []
    for direction, message in client.wire:
        if direction != "in":
            continue
        if "method" in message:
            row = lookup(message["method"])
            target, data = (row.params if row else None), message.get("params", {})
        elif "result" in message and message.get("id") in asked:
            row = lookup(asked[message["id"]])
            target, data = (row.result if row else None), message["result"]
        else:
            continue
        if target is None:
            continue
        try:
            codec.decode(data, target, strict=True)
        except codec.DecodeError as exc:
            problems.append(f"{message.get('method') or asked.get(message.get('id'))}: {exc}")
    return problems


def text_blocks(*texts: str) -> Sequence[s.TextContent]:
    return [s.TextContent(text=t) for t in texts]
