"""``AgentDriver``: play the client to an agent under test, record everything, judge it.

The driver is a ``Connection`` over the agent's stdio (or any stream), behind a
``RecordingStream``: every line both ways goes to the oracle as it travels (framed once, by the
connection; decoded for waiters once, by the oracle), and ``close()`` returns the oracle's
``Report``. On top sit typed helpers for the client's requests (``initialize``, ``prompt``...),
the client's side of the agent's requests, and raw access (``send_raw``, ``request_raw``).

The boundary with the client library: the driver is not a ``ClientSideConnection``, which
keeps the protocol's rules on its own side and would refuse to send a bad line or give up on
a broken agent; a test client must send what no conforming client would and keep going. What
does the same job is shared: terminals are ``acpref.client.terminals`` (``_terminals`` only
types its calls), line selection is ``acpref.client.files.select_lines``, framing is the
``Connection``'s. The driver keeps its own answers where a test needs another policy:

* ``session/request_permission``: the first ``allow_once`` option (else ``allow_always``, else
  the first); ``permission`` replaces the policy. ``elicitation/create``: declined (ELICIT-29).
* ``fs/*``: reads ``files`` (path -> text), then the disk with the library's reader
  (``acpref.client.files.read_text``, anywhere: no roots of its own; missing: -32002; bounded
  as the library bounds a read, ``max_read_bytes``); writes go into ``files`` only. Nothing here judges the agent: the oracle does, from the transcript.
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import attrs

from .. import __version__, codec
from .. import schema as s
from .._core import gate_open
from .._shell.transport import FdStream, Process, Stream, spawn
from .._shell.connection import Connection, PendingRequest, RequestContext
from ..client import permissions
from ..client.files import DEFAULT_MAX_READ_BYTES, read_text, select_lines
from ..client.roots import Roots
from ..errors import ConnectionClosed, RpcError
from ..methods import PROTOCOL_VERSION
from ..oracle import Report
from ._deadlines import Deadlines
from ._recording import RecordingStream, RecordSink
from ._terminals import Terminals
from ._updates import SessionUpdates

#: Where the driver reads the disk: anywhere (a test's files lie where the test put them).
_ANYWHERE = Roots(["/"])

__all__ = ["AgentDriver", "Turn", "PendingTurn", "DEFAULT_CLIENT_CAPABILITIES", "KEEP_UPDATES"]

KEEP_UPDATES = 10_000  # typed updates kept per session; the oldest beyond are let go

#: What the driver advertises unless told otherwise: files and terminals, no elicitation.
DEFAULT_CLIENT_CAPABILITIES: Dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}

#: Updates that belong to a prompt turn (others, like available_commands_update, come anytime).
_TURN_CONTENT = (
    s.UserMessageChunk,
    s.AgentMessageChunk,
    s.AgentThoughtChunk,
    s.ToolCall,
    s.ToolCallUpdate,
    s.Plan,
)

#: A permission policy: the request -> an optionId to select, None to answer cancelled, or an
#: outcome model.
PermissionPolicy = Callable[[s.RequestPermissionRequest], Any]


@attrs.frozen
class Turn:
    """A finished prompt turn: its response and the session updates received during it (its
    last ``keep_updates`` when it streamed more: ``dropped`` counts the first ones let go)."""

    session_id: str
    response: s.PromptResponse
    updates: List[Any]
    dropped: int = 0

    @property
    def stop_reason(self) -> str:
        """The stop reason as its wire string (``"end_turn"``, ``"cancelled"``...)."""
        reason = self.response.stop_reason
        return reason.value if hasattr(reason, "value") else str(reason)

    @property
    def text(self) -> str:
        """The text of every agent message chunk of the turn, joined."""
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
        )

    def of_kind(self, kind: type) -> List[Any]:
        """The updates of one type (``s.ToolCall``, ``s.Plan``...)."""
        return [u for u in self.updates if isinstance(u, kind)]


class PendingTurn:
    """A prompt that was sent and is not answered yet (see ``AgentDriver.prompt_async``)."""

    def __init__(
        self, driver: "AgentDriver", session_id: str, pending: PendingRequest, start: int
    ) -> None:
        self.driver = driver
        self.session_id = session_id
        self.request_id = pending.id
        self._pending = pending
        self._start = start

    @property
    def done(self) -> bool:
        return self._pending.done

    @property
    def updates(self) -> List[Any]:
        """The updates received for the session since the prompt was sent (those still kept)."""
        return self.driver.updates(self.session_id, since=self._start)

    def wait_update(self, timeout: Optional[float] = None) -> bool:
        """Wait until the turn has streamed something (a chunk, a tool call or a plan)."""
        return self.driver._wait_turn_content(self.session_id, self._start, timeout)

    def result(self, timeout: Optional[float] = None) -> Turn:
        """Wait for the response (``RpcError`` if the agent answered an error)."""
        with self.driver.deadlines.waiting("session/prompt", sent=True):
            response = self._pending.result(self.driver.timeout if timeout is None else timeout)
        updates = self.driver.updates(self.session_id, since=self._start)
        dropped = self.driver.update_count(self.session_id) - self._start - len(updates)
        return Turn(self.session_id, response, updates, dropped)


class AgentDriver:
    """Drives one agent as its client; see the module doc. Use ``spawn`` for a process."""

    def __init__(
        self,
        stream: Stream,
        *,
        process: Optional[Process] = None,
        transcript: Union[str, os.PathLike, None] = None,
        timeout: float = 10.0,
        name: str = "agent-under-test",
        close_output: Optional[Callable[[], None]] = None,
        keep_updates: Optional[int] = KEEP_UPDATES,
        stalled: Optional[Dict[str, str]] = None,
        part: str = "",
        newer_spec: bool = False,
    ) -> None:
        self.process = process
        self.timeout = timeout
        self.sink = RecordSink(
            "client", transcript, header={"agent": name, "subject": "agent"}, newer_spec=newer_spec
        )
        self.deadlines = Deadlines(self.sink, timeout, stalled, part)
        self.stream = RecordingStream(stream, self.sink, close_output=close_output)
        self.connection = Connection(self.stream, name=name, drain_timeout=1.0)
        self.client_capabilities: Dict[str, Any] = {}
        self.agent_capabilities: Dict[str, Any] = {}
        self.initialize_response: Optional[s.InitializeResponse] = None
        self.last_session_response: Optional[s.NewSessionResponse] = None
        self.initialize_raw: Any = None
        #: The in-process agent side, for a driver made by ``memory_pair``.
        self.agent_side: Any = None
        self.exited_on_eof: Optional[bool] = None
        self.files: Dict[str, str] = {}
        self.read_disk = True
        #: The bound on one read of the disk, the library's (a file over it read whole: -32602).
        self.max_read_bytes = DEFAULT_MAX_READ_BYTES
        self.permission: Optional[PermissionPolicy] = None
        self.elicitation: Optional[
            Callable[[s.CreateElicitationRequest], s.CreateElicitationResponse]
        ] = None
        #: Every request the agent sent us, in order: (method, typed params).
        self.agent_requests: List[Any] = []
        self.terminals = Terminals()
        self._updates = SessionUpdates(keep_updates)
        self._raw_ids = itertools.count(1)
        self._report: Optional[Report] = None
        self._install_handlers()
        self.connection.start()

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        **kwargs: Any,
    ) -> "AgentDriver":
        """Start ``argv`` as the agent (stderr drained) and drive it over its stdio."""
        process = spawn(argv, cwd=cwd, env=env)
        assert process.popen.stdin is not None and process.popen.stdout is not None
        stream = FdStream(
            process.popen.stdout.fileno(), process.popen.stdin.fileno(), write_timeout=10.0
        )
        # The transcript's header names the agent by its whole command, not by its last argument
        # (``npx -y @acme/agent --acp`` is not "--acp").
        kwargs.setdefault("name", shlex.join(str(a) for a in argv) if argv else "agent")
        return cls(stream, process=process, close_output=process.popen.stdin.close, **kwargs)

    # -- The client's requests -------------------------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Any request; params as a model or wire JSON; the typed result (raw for ``_`` methods)."""
        with self.deadlines.waiting(method):
            return self.connection.request(
                method, params if params is not None else {}, timeout=self._t(timeout)
            )

    def notify(self, method: str, params: Any = None) -> None:
        self.connection.notify(method, params if params is not None else {})

    def initialize(
        self,
        protocol_version: Any = PROTOCOL_VERSION,
        *,
        client_capabilities: Optional[Dict[str, Any]] = None,
        client_info: Optional[Dict[str, Any]] = None,
    ) -> s.InitializeResponse:
        """``initialize``; remembers both sides' capabilities."""
        caps = DEFAULT_CLIENT_CAPABILITIES if client_capabilities is None else client_capabilities
        self.client_capabilities = json.loads(json.dumps(caps))
        params = {
            "protocolVersion": protocol_version,
            "clientCapabilities": self.client_capabilities,
            "clientInfo": client_info or {"name": "acpref-driver", "version": __version__},
        }
        since = self.sink.received_count
        with self.deadlines.waiting("initialize"):
            pending = self.connection.request_async("initialize", params)
            response = pending.result(self.timeout)
        self.initialize_response = response
        #: The initialize result exactly as the agent sent it (typed models drop unknown keys).
        self.initialize_raw = self.wait_response(pending.id, since=since).get("result")
        self.agent_capabilities = (
            codec.encode(response.agent_capabilities) if response.agent_capabilities else {}
        )
        return response

    def supports(self, gate: str) -> bool:
        """True when the agent advertised the capability path ``gate`` (``"loadSession"``...)."""
        return gate_open(gate, self.agent_capabilities)

    def new_session(
        self,
        cwd: Optional[str] = None,
        *,
        mcp_servers: Sequence[Any] = (),
        additional_directories: Optional[Sequence[str]] = None,
        **extra: Any,
    ) -> str:
        """``session/new`` (cwd defaults to this process's); returns the session id."""
        params: Dict[str, Any] = {
            "cwd": cwd or os.getcwd(),
            "mcpServers": list(mcp_servers),
            **extra,
        }
        if additional_directories is not None:
            params["additionalDirectories"] = list(additional_directories)
        response = self.request("session/new", params)
        self.last_session_response = response
        return response.session_id

    def prompt_async(
        self, session_id: str, *content: Any, meta: Optional[Dict[str, Any]] = None
    ) -> PendingTurn:
        """Send ``session/prompt`` (``str`` parts become text blocks); returns at once.

        ``meta`` goes into the params as ``_meta``.
        """
        blocks = [_block(c) for c in content]
        start = self.update_count(session_id)
        params: Dict[str, Any] = {"sessionId": session_id, "prompt": blocks}
        if meta is not None:
            params["_meta"] = meta
        self.deadlines.refuse("session/prompt")
        pending = self.connection.request_async("session/prompt", params)
        return PendingTurn(self, session_id, pending, start)

    def prompt(self, session_id: str, *content: Any, timeout: Optional[float] = None) -> Turn:
        """One prompt turn, waited for: the response and the updates that came with it."""
        return self.prompt_async(session_id, *content).result(timeout)

    def cancel(self, session_id: str) -> None:
        """``session/cancel`` for the running turn of ``session_id``."""
        self.notify("session/cancel", {"sessionId": session_id})

    # -- Session updates -------------------------------------------------------------------------

    def updates(self, session_id: str, *, since: int = 0) -> List[Any]:
        """The updates received for ``session_id`` (typed), in order, from the ``since``-th on
        (a count of ``update_count``); the latest ``keep_updates`` only, when more came."""
        return self._updates.since(session_id, since)

    def update_count(self, session_id: str) -> int:
        """How many updates were received for ``session_id`` (kept or let go)."""
        return self._updates.count(session_id)

    def wait_updates(self, session_id: str, count: int, timeout: Optional[float] = None) -> bool:
        """Wait until at least ``count`` updates have been received for ``session_id``."""
        return self._updates.wait_count(session_id, count, self._t(timeout))

    def _wait_turn_content(self, session_id: str, start: int, timeout: Optional[float]) -> bool:
        def streamed(update: Any) -> bool:
            return isinstance(update, _TURN_CONTENT)

        return self._updates.wait_any(session_id, start, streamed, self._t(timeout))

    # -- Raw access ------------------------------------------------------------------------------

    def send_raw(self, data: Union[bytes, str, Dict[str, Any]]) -> None:
        """Write a message as given: a dict is one JSON line; bytes and str are sent verbatim."""
        if isinstance(data, dict):
            data = json.dumps(data) + "\n"
        try:
            self.stream.write_raw(data.encode("utf-8") if isinstance(data, str) else data)
        except OSError as exc:  # the agent is gone (a broken pipe)
            raise ConnectionClosed(f"the agent no longer reads its input: {exc}") from None

    def request_raw(
        self, message: Dict[str, Any], *, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """Send a raw request (an id ``"raw-N"`` is added if it has none); the raw response."""
        return self.requests_raw_together(message, timeout=timeout)[0]

    def requests_raw_together(
        self, *messages: Dict[str, Any], timeout: Optional[float] = None
    ) -> List[Dict[str, Any]]:
        """Send raw requests one after the other, none waited for before the last is sent, so
        that all are in flight at once (RPC-07); their raw responses, in the same order."""
        sent = []
        for message in messages:
            message = dict(message)
            message.setdefault("jsonrpc", "2.0")
            message.setdefault("id", f"raw-{next(self._raw_ids)}")
            self.deadlines.refuse(str(message.get("method", "a raw request")))
            sent.append(message)
        since = self.sink.received_count
        for message in sent:
            self.send_raw(message)
        answers = []
        for message in sent:
            with self.deadlines.waiting(str(message.get("method", "a raw request")), sent=True):
                answers.append(self.wait_response(message["id"], since=since, timeout=timeout))
        return answers

    def wait_response(
        self, request_id: Any, *, since: int = 0, timeout: Optional[float] = None
    ) -> Dict[str, Any]:
        """The agent's response with exactly this id (same JSON type), received from ``since``."""

        def matches(m: Any) -> bool:
            return (
                isinstance(m, dict)
                and "method" not in m
                and "id" in m
                and type(m["id"]) is type(request_id)
                and m["id"] == request_id
            )

        return self.sink.wait_for(matches, since=since, timeout=self._t(timeout))[1]

    # -- Ending ----------------------------------------------------------------------------------

    def close(self, *, grace: float = 5.0) -> Report:
        """End the connection as a client does: close the agent's input, wait, then stop it.

        Returns the oracle's report of the whole transcript. ``exited_on_eof`` says whether the
        agent exited (a process) or closed its output (in memory) within ``grace`` seconds of
        the end of its input.
        """
        if self._report is not None:
            return self._report
        self.stream.end_output()
        if self.process is not None:
            # The agent process's exit is what counts: its output may be held open by a child it
            # left running, which the ladder below kills with the agent's group. Not reaped
            # here, so that the group stays the agent's until then.
            self.exited_on_eof = self.process.wait(grace) is not None
            if self.exited_on_eof:
                self.process.stop_group(5.0)  # what it left behind holds no pipe of ours now
                self.sink.wait_peer_eof(grace)  # so every answer it wrote is read first
        else:
            self.exited_on_eof = self.sink.wait_peer_eof(grace)
        if not self.exited_on_eof:
            self.sink.peer_stopped()  # spec-gap stopped-agent: what it still owed is not judged
        self.connection.close("test over")
        if self.agent_side is not None:
            self.agent_side.close()
        if self.process is not None:
            self.process.shutdown(grace=0.5, term_grace=2.0)
        self.terminals.close_all()
        self._report = self.sink.finish()
        return self._report

    @property
    def report(self) -> Report:
        """The report (closes the connection first if needed)."""
        return self.close()

    @property
    def stderr(self) -> str:
        """What the agent wrote to stderr (the last MiB)."""
        return self.process.stderr.text() if self.process is not None else ""

    @property
    def transcript_path(self) -> Optional[str]:
        return self.sink.transcript_path

    def __enter__(self) -> "AgentDriver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _t(self, timeout: Optional[float]) -> float:
        return self.timeout if timeout is None else timeout

    # -- The client's side of the agent's requests -----------------------------------------------

    def _install_handlers(self) -> None:
        c = self.connection
        c.set_handler("session/update", self._on_update)
        c.set_handler("session/request_permission", self._on_permission)
        c.set_handler("fs/read_text_file", self._gated("fs.readTextFile", self._on_read))
        c.set_handler("fs/write_text_file", self._gated("fs.writeTextFile", self._on_write))
        t = self.terminals
        c.set_handler("terminal/create", self._gated("terminal", lambda p, ctx: t.create(p)))
        c.set_handler("terminal/output", self._gated("terminal", lambda p, ctx: t.output(p)))
        c.set_handler("terminal/wait_for_exit", self._gated("terminal", t.wait_for_exit))
        c.set_handler("terminal/kill", self._gated("terminal", lambda p, ctx: t.kill(p)))
        c.set_handler("terminal/release", self._gated("terminal", lambda p, ctx: t.release(p)))
        c.set_handler("elicitation/create", self._on_elicitation)
        c.set_handler("elicitation/complete", lambda p, ctx: None)

    def _gated(
        self, gate: str, handler: Callable[[Any, RequestContext], Any]
    ) -> Callable[[Any, RequestContext], Any]:
        def handle(params: Any, ctx: RequestContext) -> Any:
            self.agent_requests.append((ctx.method, params))
            if not gate_open(gate, self.client_capabilities):
                raise RpcError.method_not_found(ctx.method)  # spec RPC-12: not advertised
            return handler(params, ctx)

        return handle

    def _on_update(self, params: s.SessionNotification, ctx: RequestContext) -> None:
        self._updates.add(params.session_id, params.update)

    def _on_permission(
        self, params: s.RequestPermissionRequest, ctx: RequestContext
    ) -> s.RequestPermissionResponse:
        self.agent_requests.append((ctx.method, params))
        policy = self.permission or _allow_first
        outcome = policy(params)
        if outcome is None or isinstance(outcome, str):  # the answers as the library makes them
            return permissions.cancelled() if outcome is None else permissions.selected(outcome)
        return s.RequestPermissionResponse(outcome=outcome)

    def _on_read(
        self, params: s.ReadTextFileRequest, ctx: RequestContext
    ) -> s.ReadTextFileResponse:
        line = params.line if isinstance(params.line, int) else None
        limit = params.limit if isinstance(params.limit, int) else None
        text = self.files.get(params.path)
        if text is not None:
            return s.ReadTextFileResponse(content=select_lines(text, line, limit))  # spec FS-04
        if not self.read_disk:
            raise RpcError.resource_not_found(
                f"no file {params.path!r}", uri=f"file://{params.path}"
            )
        # The library's reader, so the driver holds no more of a file than a client would.
        content = read_text(_ANYWHERE, params.path, line, limit, max_bytes=self.max_read_bytes)
        return s.ReadTextFileResponse(content=content)

    def _on_write(
        self, params: s.WriteTextFileRequest, ctx: RequestContext
    ) -> s.WriteTextFileResponse:
        self.files[params.path] = params.content  # spec FS-07: created if absent
        return s.WriteTextFileResponse()

    def _on_elicitation(
        self, params: s.CreateElicitationRequest, ctx: RequestContext
    ) -> s.CreateElicitationResponse:
        self.agent_requests.append((ctx.method, params))
        mode = codec.encode(params).get("mode")
        if not (
            isinstance(mode, str) and gate_open(f"elicitation.{mode}", self.client_capabilities)
        ):
            # spec ELICIT-29: a mode we did not advertise is invalid params.
            raise RpcError.invalid_params(f"elicitation mode {mode!r} was not advertised")
        if self.elicitation is not None:
            return self.elicitation(params)
        return s.CreateElicitationResponse(action=s.ElicitationDeclineAction())


def _block(content: Any) -> Any:
    """A prompt part as wire JSON: text for ``str``, a tagged block for a model, dicts as given."""
    if isinstance(content, str):
        return {"type": "text", "text": content}
    if isinstance(content, dict):
        return content
    return codec.encode(content, s.ContentBlock)


def _allow_first(request: s.RequestPermissionRequest) -> Any:
    options = list(request.options)
    for kind in ("allow_once", "allow_always"):
        for option in options:
            if getattr(option.kind, "value", option.kind) == kind:
                return option.option_id
    return options[0].option_id if options else None
