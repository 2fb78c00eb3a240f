"""The MCP servers of one ACP session: connect them all, list their tools, call them, stop them.

Spec: session-setup.mdx, MCP Servers and Checking Transport Support; clauses SETUP-29 (the
client may name servers, its own among them), SETUP-30 (stdio: every agent), SETUP-31 (HTTP:
new agents should), SETUP-35 (only transports the agent advertised), SETUP-36 (the agent
connects to every server named). The spec says nothing of a server that fails; acpref's answer
is spec-gap mcp-failure, below and in spec_notes/mcp.md.

``McpManager.connect`` is what ``session/new``, ``session/load`` and ``session/resume`` call
with their ``mcpServers``: every server is reached on a thread of its own, all at once, under
one deadline for them all (spec-gap mcp-deadline), and the outcome comes back per server, in
the order given: an ``McpServerConnection`` (connected, tools listed) or an ``McpFailure``
(name, reason). It returns at the deadline whatever the servers do: a server still starting
then is a failure, and is stopped on a thread of its own. It never raises for a server's sake.
``close`` stops them all, at once, and leaves no process behind.

What must not live here: ACP wire I/O (the agent tells the user about failures), spawning and
HTTP (``_stdio``, ``_http``).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ._client import QUICK_CLOSE, McpServerConnection, transport_of
from ._model import (
    McpError,
    McpFailure,
    McpLimits,
    McpServerEntry,
    McpTimeout,
    McpTool,
    McpToolResult,
)

__all__ = ["McpManager", "ConnectOutcome", "McpServerEntry", "notices_for"]

log = logging.getLogger("acpref.mcp")

#: One server's outcome: connected, or not (and why).
ConnectOutcome = Union[McpServerConnection, McpFailure]

#: Managers not closed yet: closed at interpreter exit, should the agent have forgotten one.
_OPEN: "weakref.WeakSet[McpManager]" = weakref.WeakSet()


@atexit.register
def _close_forgotten() -> None:
    # spec-gap mcp-process-group: servers live in sessions of their own, so nothing else would
    # stop them if the agent exits without closing its managers.
    for manager in list(_OPEN):
        manager.close(timeout=5.0)


class _Attempt:
    """One server being connected on its own thread; the manager may give up waiting for it."""

    def __init__(self, server: McpServerEntry) -> None:
        self.server = server
        #: Set under the manager's lock, by the thread or (when it overran) by the manager.
        self.outcome: Optional[ConnectOutcome] = None
        #: The server once started (under the manager's lock): what to stop should it overrun.
        self.connection: Optional[McpServerConnection] = None
        self.abandoned = False
        self.thread: Optional[threading.Thread] = None


class McpManager:
    """The MCP servers of one session. Thread-safe; ``close`` is idempotent.

    ``base_env`` is the environment stdio servers inherit before their own ``env`` is laid
    over it (default: the agent's, ``os.environ``; spec-gap mcp-env). ``cwd`` given to
    ``connect`` is where stdio servers start (the session's cwd; spec-gap mcp-cwd). ``limits``
    bounds what each server may make the agent hold (spec-gap mcp-bounds; the defaults of
    ``McpLimits`` are in spec_notes/mcp.md).
    """

    def __init__(
        self, *, base_env: Optional[Mapping[str, str]] = None, limits: McpLimits = McpLimits()
    ) -> None:
        self._base_env = base_env
        self.limits = limits
        self._lock = threading.Lock()  # guards the six fields below
        self._servers: Dict[str, McpServerConnection] = {}
        #: The servers being started: ``close`` stops those still starting.
        self._attempts: List[_Attempt] = []
        #: The threads that start servers, and those that stop the ones that missed a deadline:
        #: ``close`` waits for those still running.
        self._threads: List[threading.Thread] = []
        #: Names of the servers connected or being connected (one name, one server).
        self._names: Set[str] = set()
        self._failures: List[McpFailure] = []
        self._closed = False
        _OPEN.add(self)

    # -- connecting ------------------------------------------------------------------------------

    def connect(
        self,
        servers: Sequence[McpServerEntry],
        *,
        http_allowed: bool,
        sse_allowed: bool,
        timeout: float = 30.0,
        cwd: Optional[str] = None,
    ) -> List[ConnectOutcome]:
        """Connect every server of ``servers`` (``mcpServers`` entries), in parallel.

        ``http_allowed`` / ``sse_allowed`` are what the agent advertised in
        ``mcpCapabilities``. Returns one outcome per server, in order, within ``timeout``
        seconds for them all, whatever the servers do. Never raises for a server's sake; raises
        ``McpError`` only if the manager is closed already.
        """
        # spec-gap mcp-deadline: one deadline for the whole start-up, not one per server.
        deadline = time.monotonic() + timeout
        outcomes: List[Optional[ConnectOutcome]] = [None] * len(servers)
        attempts: List[Tuple[int, _Attempt]] = []
        chosen: List[Tuple[int, McpServerEntry]] = []
        with self._lock:
            if self._closed:
                raise McpError("this MCP manager is closed")
            # spec SETUP-29: the client's own MCP server, if it names one, is one like the others.
            for i, server in enumerate(servers):
                refusal = self._refusal(
                    server, http_allowed=http_allowed, sse_allowed=sse_allowed, taken=self._names
                )
                if refusal is not None:
                    outcomes[i] = refusal
                    self._failures.append(refusal)
                else:
                    self._names.add(server.name)
                    chosen.append((i, server))
        for i, server in chosen:
            # spec SETUP-36: connect to every server the client named, each on its own thread.
            attempt = _Attempt(server)
            with self._lock:
                self._attempts = [a for a in self._attempts if a.outcome is None]
                self._attempts.append(attempt)
            attempt.thread = self._thread(
                self._run, (attempt, deadline, timeout, cwd), f"mcp-connect-{server.name}"
            )
            attempts.append((i, attempt))
        for i, attempt in attempts:
            assert attempt.thread is not None
            attempt.thread.join(max(0.0, deadline - time.monotonic()))
            outcomes[i] = self._settle(attempt, timeout)
        for outcome in outcomes:
            if isinstance(outcome, McpFailure):
                log.warning("%s", outcome)
        return [o for o in outcomes if o is not None]

    def _thread(self, target: Any, args: Tuple[Any, ...], name: str) -> threading.Thread:
        """Start ``target(*args)`` on a thread that ``close`` will wait for."""
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return thread

    def _refusal(
        self, server: Any, *, http_allowed: bool, sse_allowed: bool, taken: Set[str]
    ) -> Optional[McpFailure]:
        """The failure of a server refused before any attempt, or None to go on."""
        transport = transport_of(server)
        name = getattr(server, "name", "?")
        if transport == "http" and not http_allowed:
            # spec SETUP-35: the client must not send an http server unless mcpCapabilities.http;
            # the agent side refuses one it did not advertise rather than reach it anyway.
            return McpFailure(
                name, transport, "the agent did not advertise mcpCapabilities.http", "SETUP-35"
            )
        if transport == "sse" and not sse_allowed:
            # spec SETUP-35: likewise for sse without mcpCapabilities.sse.
            return McpFailure(
                name, transport, "the agent did not advertise mcpCapabilities.sse", "SETUP-35"
            )
        if transport == "sse":
            return McpFailure(
                name, transport, "the SSE transport (deprecated by MCP) is not supported by acpref"
            )
        if name in taken:
            # spec-gap mcp-duplicate-name: tools are addressed by server name, so a second
            # server of the same name is not connected.
            return McpFailure(
                name, transport, "another MCP server of this session has the same name"
            )
        return None

    def _run(self, attempt: _Attempt, deadline: float, timeout: float, cwd: Optional[str]) -> None:
        """On the server's own thread: connect, then hand the result over (or stop it)."""
        server = attempt.server
        transport = transport_of(server)
        outcome: ConnectOutcome
        try:
            # spec SETUP-30, SETUP-31: a stdio server (every agent), an http one (when advertised).
            connection = McpServerConnection.start(
                server, cwd=cwd, base_env=self._base_env, limits=self.limits
            )
            with self._lock:
                attempt.connection = connection
                stopped = attempt.abandoned or self._closed
            if stopped:  # connect gave up, or the session closed, while it was starting
                connection.close(**QUICK_CLOSE)
                raise McpError("the session was closed while the server was starting")
            connection.handshake(deadline)  # stops the server if it fails
        except McpTimeout:
            # The deadline passed: said as the manager says it of a server it gave up on.
            outcome = McpFailure(server.name, transport, _late(timeout, attempt.connection))
        except McpError as exc:
            # spec-gap mcp-failure: a server that cannot start or answer does not fail the
            # session: it becomes an McpFailure, handed back for the agent to tell the user.
            outcome = McpFailure(server.name, transport, exc.reason, exc.clause)
        except Exception as exc:  # noqa: BLE001 - a bug must not lose the server's outcome
            log.exception("mcp:%s: connecting failed", server.name)
            outcome = McpFailure(server.name, transport, f"internal error: {type(exc).__name__}")
        else:
            outcome = connection
        with self._lock:
            late = self._closed or attempt.abandoned
            if isinstance(outcome, McpServerConnection) and not late:
                self._servers[server.name] = outcome
            if not attempt.abandoned:
                attempt.outcome = outcome
        if isinstance(outcome, McpServerConnection):
            if late:
                outcome.close()  # the session closed, or connect gave up, while it was starting
            else:
                log.info(
                    "mcp:%s: connected (%s, %d tools)", server.name, transport, len(outcome.tools)
                )

    def _settle(self, attempt: _Attempt, timeout: float) -> ConnectOutcome:
        stop: Optional[McpServerConnection] = None
        with self._lock:
            outcome = attempt.outcome
            if outcome is None:
                # spec-gap mcp-deadline: still starting at the deadline: a failure, and the
                # server is stopped (with its group) on a thread of its own, so that nothing
                # waits for it. ``close`` waits for that thread.
                attempt.abandoned = True
                server, stop = attempt.server, attempt.connection
                outcome = McpFailure(server.name, transport_of(server), _late(timeout, stop))
            elif isinstance(outcome, McpServerConnection) and self._closed:
                outcome = McpFailure(
                    outcome.name, outcome.transport, "the session was closed meanwhile"
                )
            if isinstance(outcome, McpFailure):
                self._failures.append(outcome)
                self._names.discard(outcome.name)  # the name is free for a later connect
        if stop is not None:
            stopper = self._thread(lambda: stop.close(**QUICK_CLOSE), (), f"mcp-stop-{stop.name}")
            if self._closed:  # close has come and gone meanwhile: nobody else waits for it
                stopper.join(10.0)
        return outcome

    # -- using -----------------------------------------------------------------------------------

    @property
    def servers(self) -> Dict[str, McpServerConnection]:
        """The connected servers by name (some may have died since: see ``alive``)."""
        with self._lock:
            return dict(self._servers)

    @property
    def failures(self) -> List[McpFailure]:
        """Every server that was not connected, from every ``connect``."""
        with self._lock:
            return list(self._failures)

    def tools(self) -> List[Tuple[str, McpTool]]:
        """``(server name, tool)`` for every tool of every live server."""
        return [
            (name, tool)
            for name, server in self.servers.items()
            if server.alive
            for tool in server.tools
        ]

    def call(
        self,
        server_name: str,
        tool: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: float = 60.0,
    ) -> McpToolResult:
        """Call ``tool`` on the server named ``server_name``; ``McpError`` if it cannot be done."""
        server = self.servers.get(server_name)
        if server is None:
            raise McpError(f"no connected MCP server is named {server_name!r}")
        return server.call_tool(tool, arguments, timeout=timeout)

    # -- ending ----------------------------------------------------------------------------------

    def close(self, timeout: float = 10.0) -> None:
        """Stop every server, all at once, each with its bounded ladder; idempotent.

        Waits up to ``timeout`` seconds; a stdio server's ladder is bounded well below it.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            servers = list(self._servers.values())
            # Servers still starting (the session closes during its setup) are stopped too.
            servers += [
                a.connection
                for a in self._attempts
                if a.connection is not None and a.outcome is None
            ]
            starting_or_stopping = list(self._threads)
        _OPEN.discard(self)
        threads = [
            threading.Thread(target=server.close, name=f"mcp-close-{server.name}", daemon=True)
            for server in servers
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + timeout
        threads += starting_or_stopping
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.warning("some MCP servers were still stopping after %.1fs", timeout)

    def __enter__(self) -> "McpManager":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _late(timeout: float, connection: Optional[McpServerConnection]) -> str:
    """Why a server missed the start-up deadline: what it had not answered yet."""
    waiting = connection.waiting_for if connection is not None else None
    doing = f"no answer to {waiting} yet" if waiting else "still starting"
    return f"not connected within {timeout:.1f}s: {doing}"


def notices_for(outcomes: Sequence[ConnectOutcome]) -> List[Tuple[str, str]]:
    """What to tell the user of ``connect``'s outcomes, as ``(title, text)`` pairs: each server
    that is not connected (spec-gap mcp-failure), and each whose tools were cut at a bound
    (spec-gap mcp-bounds)."""
    notices = []
    for o in outcomes:
        if isinstance(o, McpFailure):
            notices.append((f"MCP server {o.name!r} is not connected", str(o)))
        elif o.tools_cut is not None:
            text = f"MCP server {o.name!r} ({o.transport}): {o.tools_cut}"
            notices.append((f"MCP server {o.name!r} has only some of its tools", text))
    return notices
