"""The echo agent with MCP servers: the integration proposed for the agent side and the echo agent.

Test-only, for ``tests/test_mcp_agent.py``: it proves the integration plan before it is pasted
into the agent side (spec_notes/mcp.md, "Integration"). ``McpEchoAgent`` subclasses the echo
agent and adds, in the places the plan names:

* ``capabilities``: ``mcpCapabilities: {http: true, sse: false}`` (SETUP-31; no SSE).
* ``session_new`` and ``_reopen`` (load, resume): connect the session's ``mcpServers`` with an
  ``McpManager`` kept in ``session.live["mcp"]`` (never persisted); failures are kept in
  ``session.live["mcp_notices"]`` and told once, at the start of the next prompt turn.
* ``session_close``, ``session_delete`` and ``connection_closed``: close the managers.
* ``/mcp`` (``run_mcp``): lists the servers and their tools; ``/mcp SERVER TOOL {json}`` calls a
  tool, shown to the client as a tool call with its result.

The echo agent's ``COMMANDS`` table is not touched (``/mcp`` is dispatched here), so that other
tests in the same process see the echo agent unchanged.
"""

from __future__ import annotations

import json
from typing import Any, List, Optional

import attrs

from acpref import schema as s
from acpref._rules import gate_open
from acpref.agent import PromptTurn, Session
from acpref.echo import EchoAgent
from acpref.echo._commands import Invocation, _ask, _rejected, _split_first, _status, _text_content
from acpref.mcp import McpError, McpFailure, McpManager

END = s.StopReason.END_TURN
CANCELLED = s.StopReason.CANCELLED

#: How long session/new, load and resume wait for the servers; how long one /mcp call may take.
MCP_CONNECT_TIMEOUT = 30.0
MCP_CALL_TIMEOUT = 30.0


class McpEchoAgent(EchoAgent):
    """The echo agent, connecting to the MCP servers each session names."""

    def capabilities(self) -> s.AgentCapabilities:
        # spec SETUP-30: stdio always; SETUP-31: HTTP too; SSE (deprecated by MCP) is not offered.
        caps = super().capabilities()
        return attrs.evolve(caps, mcp_capabilities=s.McpCapabilities(http=True, sse=False))

    # -- sessions --------------------------------------------------------------------------------

    def session_new(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        response = super().session_new(params)
        self._connect_mcp(self.require_session(response.session_id), params.mcp_servers)
        return response

    def _reopen(self, params: Any) -> Session:
        # Load and resume: the context is restored, then the servers connected (before the
        # replay of a load, as the spec's diagram has it).
        session = super()._reopen(params)
        servers = params.mcp_servers if isinstance(params.mcp_servers, list) else []
        self._connect_mcp(session, servers)
        return session

    def _connect_mcp(self, session: Session, servers: List[Any]) -> None:
        # spec SETUP-23: a load or resume names the servers anew; the old ones go.
        old = session.live.pop("mcp", None)
        if old is not None:
            old.close()
        manager = McpManager()
        session.live["mcp"] = manager
        # spec SETUP-36: connect to every server the client named.
        outcomes = manager.connect(
            servers,
            http_allowed=gate_open("mcpCapabilities.http", self.advertised),
            sse_allowed=gate_open("mcpCapabilities.sse", self.advertised),
            timeout=MCP_CONNECT_TIMEOUT,
            cwd=session.cwd,
        )
        # spec-gap mcp-failure: the session exists without the servers that failed; the user
        # is told at the start of the next turn (content outside a turn is not sent).
        failures = [str(o) for o in outcomes if isinstance(o, McpFailure)]
        if failures:
            session.live["mcp_notices"] = failures

    def session_close(self, params: s.CloseSessionRequest) -> s.CloseSessionResponse:
        session = self.require_session(params.session_id)
        manager = session.live.get("mcp")
        if manager is not None:
            manager.close()
        return super().session_close(params)

    def session_delete(self, params: s.DeleteSessionRequest) -> s.DeleteSessionResponse:
        session = self.sessions.get(params.session_id)
        if session is not None and session.live.get("mcp") is not None:
            session.live.pop("mcp").close()
        return super().session_delete(params)

    def connection_closed(self) -> None:
        """The hook the plan adds to ``Agent``, called when the ACP connection ends."""
        for session in self.sessions:
            manager = session.live.pop("mcp", None)
            if manager is not None:
                manager.close()

    # -- the prompt turn -------------------------------------------------------------------------

    def session_prompt(self, params: s.PromptRequest, turn: PromptTurn) -> Any:
        session = self.require_session(params.session_id)
        notices = session.live.pop("mcp_notices", None)
        if notices:
            turn.say("Some MCP servers of this session are not connected:\n" + "\n".join(notices))
        first = params.prompt[0] if params.prompt else None
        if isinstance(first, s.TextContent) and (
            first.text == "/mcp" or first.text.startswith("/mcp ")
        ):
            invocation = Invocation(
                agent=self, turn=turn, session=session, args=first.text[4:].strip(), extra=[]
            )
            return run_mcp(invocation)
        return super().session_prompt(params, turn)


# -- the /mcp command, as it would sit in acpref/echo/_commands.py --------------------------------


# @command("mcp", "List this session's MCP servers and tools, or call one", "server tool {json}")
def run_mcp(inv: Invocation) -> s.StopReason:
    manager: Optional[McpManager] = inv.session.live.get("mcp")
    if not inv.args.strip():
        return _mcp_list(inv, manager)
    server, rest = _split_first(inv.args)
    tool, rest = _split_first(rest)
    if not server or not tool:
        inv.say(
            "/mcp takes a server, a tool and JSON arguments: "
            '/mcp time get_current_time {"timezone": "UTC"}'
        )
        return END
    try:
        arguments = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        inv.say(f"The arguments of /mcp are not JSON: {exc}.")
        return END
    if not isinstance(arguments, dict):
        inv.say("The arguments of /mcp are a JSON object.")
        return END
    if manager is None or server not in manager.servers:
        inv.say(f"This session has no connected MCP server named {server!r}; /mcp lists them.")
        return END
    turn = inv.turn
    call_id = turn.new_tool_call_id()
    title = f"{server}: {tool}"
    # spec TOOL-01: the tool call is reported before any update of it.
    turn.update(
        s.ToolCall(
            tool_call_id=call_id,
            title=title,
            kind=s.ToolKind.OTHER,
            status=s.ToolCallStatus.PENDING,
            raw_input={"server": server, "tool": tool, "arguments": arguments},
        )
    )
    if inv.agent.asks_permission(inv.session):
        allowed = _ask(inv, call_id, f"Call {title}", "Do not call it")
        if allowed is None:
            return CANCELLED
        if not allowed:
            return _rejected(inv, call_id, f"calling {title}")
    _status(inv, call_id, s.ToolCallStatus.IN_PROGRESS)
    try:
        result = manager.call(server, tool, arguments, timeout=MCP_CALL_TIMEOUT)
    except McpError as exc:
        _status(inv, call_id, s.ToolCallStatus.FAILED, content=_text_content(exc.reason))
        inv.say(f"{title} could not be called: {exc.reason}")
        return END
    if turn.cancelled.is_set():
        _status(inv, call_id, s.ToolCallStatus.FAILED, content=_text_content("cancelled"))
        return CANCELLED
    # spec PROMPT-16: a final status; MCP: a tool's own failure comes back as isError.
    _status(
        inv,
        call_id,
        s.ToolCallStatus.FAILED if result.is_error else s.ToolCallStatus.COMPLETED,
        content=_text_content(result.text()),
        raw_output=result.raw,
    )
    inv.say(f"{title} {'failed' if result.is_error else 'answered'}:\n{result.text()}")
    return END


def _mcp_list(inv: Invocation, manager: Optional[McpManager]) -> s.StopReason:
    servers = manager.servers if manager is not None else {}
    failures = manager.failures if manager is not None else []
    if not servers and not failures:
        inv.say("This session has no MCP servers (the client named none in mcpServers).")
        return END
    lines = ["MCP servers of this session:"]
    for name, server in servers.items():
        state = "" if server.alive else ", stopped"
        lines.append(
            f"  {name} ({server.transport}, MCP {server.protocol_version}{state}): "
            f"{len(server.tools)} tools"
        )
        for tool in server.tools:
            lines.append(f"    {tool.name}: {tool.description or tool.title or ''}".rstrip(": "))
    for failure in failures:
        lines.append(f"  {failure.name} ({failure.transport}): not connected: {failure.reason}")
    lines.append('Call a tool with /mcp SERVER TOOL {"argument": "value"}.')
    inv.say("\n".join(lines))
    return END
