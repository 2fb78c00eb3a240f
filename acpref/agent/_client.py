"""The agent's typed handle on the connected client: one method per client method of ACP v1.

Spec: overview.mdx (Client methods), file-system.mdx, terminals.mdx, elicitation.mdx,
tool-calls.mdx (requesting permission), extensibility.mdx; ``spec_notes/spec/meta.json``
(``clientMethods`` names: ``fs/read_text_file`` is ``fs_read_text_file``).

Every call goes through the connection's rules observer before a byte is written: a method the
client did not advertise (``fs/*``: FS-01, FS-02; ``terminal/*``: TERM-01; an elicitation mode:
ELICIT-06), a boolean config option for a client without ``session.configOptions.boolean``
(CONFIG-05), an update for a session the client does not know, raise ``LocalProtocolError``
naming the clause, and nothing is sent. ``supports(gate)`` asks first, for code that wants to
fall back gracefully (ELICIT-07).

Most agent code calls the client through ``PromptTurn`` (``_turn``), which fills in the session
and ties the call to the turn's cancellation; this handle is the layer below it.

What must not live here: the rules themselves (``acpref._core``), turn bookkeeping.
"""

from __future__ import annotations

import typing

from typing import Any, Dict, Optional

from .. import schema as s
from .._core import gate_open
from .._shell.connection import Connection, PendingRequest

__all__ = ["ClientHandle"]


def check_update(update: Any) -> None:
    """Raise ``TypeError`` unless ``update`` is a session update model of the schema.

    A string or a dict would be sent as it is (``"update": "hello"``), which no client can read.
    """
    kinds = typing.get_args(s.SessionUpdate)
    if not isinstance(update, (*kinds, s.Unknown)):
        names = ", ".join(k.__name__ for k in kinds)
        shown = repr(update)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise TypeError(
            f"a session update is one of the schema's update models ({names}), "
            f"not {type(update).__name__}: {shown}"
        )


class ClientHandle:
    """Typed calls from the agent to the client, named after meta.json's ``clientMethods`` keys.

    ``timeout`` bounds the wait for an answer; ``None`` waits until the answer comes or the
    connection ends (``ConnectionClosed``). An error answer raises ``RpcError``.
    """

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        #: ``clientCapabilities`` as the client sent them, handed over by the protocol core as it
        #: recorded ``initialize`` (its ``ClientCaps`` effect): the same the rules judge by.
        self._caps: Dict[str, Any] = {}
        #: What the client sent in ``initialize`` (set by the agent side; spec INIT-02, INIT-03).
        self.capabilities: s.ClientCapabilities = s.ClientCapabilities()
        self.info: Optional[s.Implementation] = None

    def supports(self, gate: str) -> bool:
        """True when the client advertised the capability path ``gate``.

        ``gate`` is dotted, in wire names: ``"fs.readTextFile"``, ``"terminal"``,
        ``"elicitation.form"``, ``"session.configOptions.boolean"``, ``"auth.terminal"``.
        Omitted, null or false anywhere on the path means unsupported (INIT-11, INIT-13).
        """
        # spec ELICIT-07, CONFIG-06: asked before sending, so that the agent can fall back (a
        # select for a boolean option, another mode) instead of being refused.
        return gate_open(gate, self._caps)

    @property
    def meta(self) -> Dict[str, Any]:
        """``clientCapabilities._meta``: where custom capabilities live (EXT-09, EXT-11)."""
        meta = self._caps.get("_meta")
        return meta if isinstance(meta, dict) else {}

    def _told_caps(self, caps: Dict[str, Any]) -> None:
        self._caps = caps

    # -- notifications ---------------------------------------------------------------------------

    def session_update(self, params: s.SessionNotification) -> None:
        """Send one ``session/update`` notification as it is."""
        self._connection.notify("session/update", params)

    def update(self, session_id: str, update: "s.SessionUpdate") -> None:
        """Send one ``session/update`` for ``session_id`` (not recorded in any history).

        ``update`` is one of the schema's session update models (``s.AgentMessageChunk``,
        ``s.ToolCall``, ``s.Plan``...); anything else raises ``TypeError`` before a byte is sent.
        """
        check_update(update)
        self.session_update(s.SessionNotification(session_id=session_id, update=update))

    def elicitation_complete(self, params: s.CompleteElicitationNotification) -> None:
        """Tell the client a URL elicitation finished (``elicitation/complete``)."""
        self._connection.notify("elicitation/complete", params)

    def ext_notification(self, method: str, params: Any = None) -> None:
        """A custom ``_``-prefixed notification (spec EXT-05); raw JSON params."""
        self._connection.notify(method, params)

    # -- requests --------------------------------------------------------------------------------

    def session_request_permission(
        self, params: s.RequestPermissionRequest, *, timeout: Optional[float] = None
    ) -> s.RequestPermissionResponse:
        """Ask the user for permission for a tool call (spec TOOL-08); the answer is the
        option picked, or ``cancelled``.
        """
        return self._connection.request("session/request_permission", params, timeout=timeout)

    def fs_read_text_file(
        self, params: s.ReadTextFileRequest, *, timeout: Optional[float] = None
    ) -> s.ReadTextFileResponse:
        """Read a file through the client (spec FS-01); refused unless ``fs.readTextFile``."""
        return self._connection.request("fs/read_text_file", params, timeout=timeout)

    def fs_write_text_file(
        self, params: s.WriteTextFileRequest, *, timeout: Optional[float] = None
    ) -> s.WriteTextFileResponse:
        """Write a file through the client (spec FS-05); refused unless ``fs.writeTextFile``."""
        return self._connection.request("fs/write_text_file", params, timeout=timeout)

    def terminal_create(
        self, params: s.CreateTerminalRequest, *, timeout: Optional[float] = None
    ) -> s.CreateTerminalResponse:
        """Start a command in a client terminal (spec TERM-03); refused unless ``terminal``."""
        return self._connection.request("terminal/create", params, timeout=timeout)

    def terminal_output(
        self, params: s.TerminalOutputRequest, *, timeout: Optional[float] = None
    ) -> s.TerminalOutputResponse:
        """A terminal's output so far and its exit status once it exited (spec TERM-09)."""
        return self._connection.request("terminal/output", params, timeout=timeout)

    def terminal_release(
        self, params: s.ReleaseTerminalRequest, *, timeout: Optional[float] = None
    ) -> s.ReleaseTerminalResponse:
        """Kill the command if it runs and free the terminal (spec TERM-13)."""
        return self._connection.request("terminal/release", params, timeout=timeout)

    def terminal_wait_for_exit(
        self, params: s.WaitForTerminalExitRequest, *, timeout: Optional[float] = None
    ) -> s.WaitForTerminalExitResponse:
        """Wait for the command to exit (spec TERM-11)."""
        return self._connection.request("terminal/wait_for_exit", params, timeout=timeout)

    def terminal_kill(
        self, params: s.KillTerminalRequest, *, timeout: Optional[float] = None
    ) -> s.KillTerminalResponse:
        """Stop the command; the terminal stays readable (spec TERM-12)."""
        return self._connection.request("terminal/kill", params, timeout=timeout)

    def elicitation_create(
        self, params: s.CreateElicitationRequest, *, timeout: Optional[float] = None
    ) -> s.CreateElicitationResponse:
        """Ask the user for input through the client (spec ELICIT-01); refused unless the client
        advertised the mode.
        """
        return self._connection.request("elicitation/create", params, timeout=timeout)

    def ext_method(
        self, method: str, params: Any = None, *, timeout: Optional[float] = None
    ) -> Any:
        """A custom ``_``-prefixed request (spec EXT-05, EXT-06); returns the raw JSON result."""
        return self._connection.request(method, params, timeout=timeout)

    def request_async(self, method: str, params: Any) -> PendingRequest:
        """Send any request and return at once; ``.result(timeout)`` waits for the answer."""
        return self._connection.request_async(method, params)
