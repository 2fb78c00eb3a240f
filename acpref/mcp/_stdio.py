"""MCP over stdio: spawn the server, speak JSON-RPC on its pipes, stop its whole process group.

Spec: ACP session-setup.mdx, MCP Servers / Stdio Transport (SETUP-30, SETUP-32); MCP 2025-06-18,
Transports, stdio: newline-delimited JSON-RPC on the server's stdin and stdout, stderr free for
logs, shutdown by closing stdin, then SIGTERM, then SIGKILL. That framing is ACP's own
(TRANSPORT-04, TRANSPORT-05), so the channel is an ``acpref.connection.Connection`` over the
server's pipes: its reading role, its pending requests, its write lock, its drained stderr.

Three things are MCP's own here:

* **No ACP table.** The connection is made with ``methods={}``: MCP's ``initialize`` shares
  ACP's name, not its shape, so params and results stay raw JSON; and with no automatic
  ``$/cancel_request`` (MCP cancels with ``notifications/cancelled``, sent by ``_client``).
* **The environment.** The server gets the agent's environment overlaid with the ``env`` the
  client named (spec-gap mcp-env).
* **The process group.** Each server starts in a session of its own, so that one that forks
  (``npx`` -> ``node``, a shell script) is stopped whole: the shutdown ladder signals the group,
  and whatever the leader left behind in it is killed at the end.

Never logged: ``env`` values (only their names), and server text is passed through the
``Redactor`` first. What must not live here: the MCP handshake and tools (``_client``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, Mapping, Optional

from .._shell.transport import FdStream, Process, StderrBuffer, spawn
from .._shell.connection import Connection, RequestContext
from ..errors import ConnectionClosed, ErrorCode, ProtocolError, RequestTimeout, RpcError
from ..schema import McpServerStdio
from ._model import McpError, McpLimits, McpTimeout, McpTooLarge, server_request_answer
from ._secrets import Redactor

__all__ = ["StdioChannel"]

log = logging.getLogger("acpref.mcp")

#: Bytes of a server's stderr kept for failure reasons (all of it is logged at DEBUG).
_STDERR_KEEP = 64 * 1024
#: Characters of stderr quoted in a failure reason.
_STDERR_QUOTE = 600


def _child_env(base: Mapping[str, str], server: McpServerStdio) -> Dict[str, str]:
    """The server's environment: ``base`` overlaid with the variables the client named.

    spec-gap mcp-env: the spec does not say whether ``env`` replaces or extends the agent's
    environment. acpref extends it (a server needs PATH, HOME, locale...), as editors do; the
    ``base_env`` of ``McpManager`` narrows what is inherited. Values are never logged.
    """
    env = dict(base)  # spec-gap mcp-env: inherit, then overlay the client's variables
    for variable in server.env:
        name, value = variable.name, variable.value
        if not name or "=" in name or "\0" in name:
            raise McpError(f"environment variable name {name!r} is not valid")
        if "\0" in value:
            raise McpError(f"the value of environment variable {name!r} holds a NUL byte")
        env[name] = value
    return env


def _answer_ping(params: Any, ctx: RequestContext) -> Any:
    answer = server_request_answer(ctx.method, params)
    if "error" in answer:  # pragma: no cover - only "ping" is registered
        raise RpcError(answer["error"]["code"], answer["error"]["message"])
    return answer["result"]


def _spawn(
    server: McpServerStdio,
    *,
    env: Dict[str, str],
    cwd: Optional[str],
    label: str,
    redact: Redactor,
) -> Process:
    """Start the server in a session of its own, its stderr drained into the log."""

    def on_line(line: str) -> None:
        log.debug("%s stderr: %s", label, redact(line))

    try:
        # spec-gap mcp-process-group: a session of its own, so the group can be signalled.
        return spawn(
            # spec-gap mcp-command-path: a bare command is looked up on the server's PATH.
            [server.command, *server.args],
            env=env,
            # spec-gap mcp-cwd: the server starts in the session's cwd (when given).
            cwd=cwd,
            # spec TRANSPORT-07 (as for an agent): stderr is drained and logged, never parsed.
            stderr=StderrBuffer(_STDERR_KEEP, on_line),
            new_session=True,
        )
    except OSError as exc:
        where = f" in {cwd!r}" if cwd and exc.filename == cwd else ""
        raise McpError(f"cannot start {server.command!r}{where}: {exc.strerror or exc}") from None
    except ValueError as exc:  # an argument with a NUL byte
        raise McpError(f"cannot start {server.command!r}: {redact(str(exc))}") from None


def _connect(process: Process, label: str, limits: McpLimits) -> Connection:
    """A JSON-RPC connection over the server's pipes, not yet started."""
    assert process.popen.stdout is not None and process.popen.stdin is not None
    stream = FdStream(
        process.popen.stdout.fileno(), process.popen.stdin.fileno(), write_timeout=10.0
    )
    return Connection(
        stream,
        # MCP utilities: answer ping; anything else a server asks gets -32601 (we
        # declared no client capabilities); notifications we do not use are ignored.
        {"ping": _answer_ping},
        name=label,
        # spec-gap mcp-bounds: one message from the server (a tools/list page, a tools/call
        # result) is bounded in bytes and in values.
        max_line_bytes=limits.max_message_bytes,
        max_items=limits.max_message_items,
        max_handlers=4,
        drain_timeout=0.5,
        methods={},
        cancel_method=None,
    )


class StdioChannel:
    """A running stdio MCP server and the JSON-RPC connection on its pipes.

    ``request`` and ``notify`` take raw JSON; ``close`` stops the server's whole process group
    with a bounded ladder, and is idempotent.
    """

    def __init__(
        self,
        process: Process,
        connection: Connection,
        label: str,
        redact: Redactor,
        limits: McpLimits,
    ) -> None:
        self._process = process
        self._limits = limits
        self._connection = connection
        self._label = label
        self._redact = redact
        self._close_lock = threading.Lock()  # guards _closing
        self._closing = False
        self._exit_status: Optional[int] = None

    @classmethod
    def start(
        cls,
        server: McpServerStdio,
        *,
        label: str,
        base_env: Mapping[str, str],
        cwd: Optional[str],
        redact: Redactor,
        limits: McpLimits,
    ) -> "StdioChannel":
        """Spawn ``server.command`` with ``server.args`` and connect to its pipes.

        spec SETUP-30: every agent connects to stdio servers. spec-gap mcp-command-path: a
        command that is not absolute (SETUP-32 asks the client for an absolute path) is still
        run, looked up on the server's PATH, rather than refused.
        """
        env = _child_env(base_env, server)
        log.debug(
            "%s: starting %s with %d argument(s), env names %s, cwd %s",
            label,
            server.command,
            len(server.args),
            sorted(v.name for v in server.env),
            cwd or "(the agent's)",
        )

        process = _spawn(server, env=env, cwd=cwd, label=label, redact=redact)
        try:
            connection = _connect(process, label, limits)
        except BaseException:
            process.shutdown(grace=0.0, term_grace=0.5)  # out of descriptors, say: no orphan
            raise
        channel = cls(process, connection, label, redact, limits)
        connection.start()
        return channel

    # -- what callers see -------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """The server's process id, which is also its process group id."""
        return self._process.pid

    @property
    def alive(self) -> bool:
        return not self._connection.closed and self._wait_leader(0.0) is None

    def set_protocol_version(self, version: str) -> None:
        """Nothing to do over stdio (HTTP sends the version in a header)."""

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request; wait up to ``timeout`` seconds for its raw result."""
        try:
            pending = self._connection.request_async(method, params)
        except ConnectionClosed:
            raise McpError(self._gone_reason()) from None
        try:
            return pending.result(max(0.0, timeout))
        except RequestTimeout:
            raise McpTimeout(
                f"{method} got no answer within {timeout:.1f}s", request_id=pending.id
            ) from None
        except ConnectionClosed:
            raise McpError(self._gone_reason()) from None
        except RpcError as exc:
            too_large = self._over_bound(exc)
            if too_large is not None:
                raise McpTooLarge(f"the answer to {method} {too_large}") from None
            raise McpError(
                f"{method} failed: {self._redact(exc.message)} ({int(exc.code)})",
                code=int(exc.code),
            ) from None
        except ProtocolError as exc:
            raise McpError(f"{method}: {self._redact(exc.message)}") from None

    def _over_bound(self, exc: RpcError) -> Optional[str]:
        """The bound of ours an answer was refused for, in words; None for a server's error.

        The connection fails a request whose answer it refused unread with -32603 and the
        figures in ``data``: ``{size, limit}`` or ``{items, limit}``, the limit being ours.
        """
        data = exc.data
        if not isinstance(data, dict) or exc.code != ErrorCode.INTERNAL_ERROR:
            return None
        limits = self._limits
        if data.get("limit") == limits.max_message_bytes and "size" in data:
            return (
                f"was {data['size']} bytes, over the bound of {limits.max_message_bytes} "
                "(max_message_bytes)"
            )
        if data.get("limit") == limits.max_message_items and "items" in data:
            return (
                f"held about {data['items']} JSON values, over the bound of "
                f"{limits.max_message_items} (max_message_items)"
            )
        return None

    def notify(self, method: str, params: Any, timeout: float = 5.0) -> None:
        """Send a notification (the connection's write is bounded by its write timeout)."""
        try:
            self._connection.notify(method, params)
        except ConnectionClosed:
            raise McpError(self._gone_reason()) from None

    # -- ending ----------------------------------------------------------------------------------

    def _gone_reason(self) -> str:
        """Why the server stopped answering: its exit status and the end of its stderr."""
        status = self._wait_leader(0.5)
        if status is None:
            what = "closed its stdout"
        elif status < 0:
            what = f"was killed by signal {-status}"
        else:
            what = f"exited with status {status}"
        self._process.wait_drained(0.5)
        tail = self._redact(self._process.stderr.text().strip())[-_STDERR_QUOTE:]
        return f"the server {what}" + (f"; its stderr ends: {tail}" if tail else "")

    def close(
        self, *, grace: float = 2.0, term_grace: float = 2.0, kill_wait: float = 2.0
    ) -> Optional[int]:
        """Stop the server: close its stdin, wait ``grace``; SIGTERM the group, wait
        ``term_grace``; SIGKILL the group, wait ``kill_wait``. Returns the exit status.

        MCP's stdio shutdown is ACP's own ladder for agents (TRANSPORT-10). Idempotent; a
        second call returns at once.
        """
        with self._close_lock:
            if self._closing:
                return self._exit_status
            self._closing = True
        self._connection.close("MCP server closed by acpref")
        # spec TRANSPORT-10: close the server's stdin, then terminate it, as a client does an
        # agent; spec-gap mcp-process-group: the signals go to its group, and children it left
        # in the group are killed, and waited for, before this returns.
        status = self._process.shutdown(grace=grace, term_grace=term_grace, kill_wait=kill_wait)
        if status is None:
            log.error("%s: process %d did not die after SIGKILL", self._label, self._process.pid)
        self._process.wait_drained(1.0)
        self._exit_status = status
        log.debug("%s: stopped (status %s)", self._label, status)
        return status

    def _wait_leader(self, timeout: float) -> Optional[int]:
        """Wait up to ``timeout`` for the server process to end *without reaping it*.

        Returns its exit status (negative: the signal), or None if it is still running. Not
        reaping keeps its pid, which is the group id, from being reused before the group's
        last signal.
        """
        return self._process.wait(timeout)
