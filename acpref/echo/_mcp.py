"""The echo agent's ``/mcp`` command: the session's MCP servers, their tools, and a tool call.

Spec: session-setup.mdx (MCP Servers); SETUP-29 .. SETUP-36, TOOL-01, PROMPT-14, PROMPT-16.
The servers are connected by the ``Agent`` base class when the session is set up
(``Agent.connect_mcp``); this module only shows them and calls them. ``/mcp`` lists the servers
(and those that failed to connect); ``/mcp SERVER TOOL {json}`` calls a tool, shown to the
client as a tool call with its result.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple

from .. import schema as s
from ._commands import (
    Invocation,
    _ask,
    _rejected,
    _split_first,
    _status,
    _text_content,
)

END = s.StopReason.END_TURN
CANCELLED = s.StopReason.CANCELLED

#: How long one /mcp tool call may take.
CALL_TIMEOUT = 30.0
#: Characters of a tool's description that /mcp shows: its first line, cut there.
SUMMARY_CHARS = 120


def mcp(inv: Invocation) -> s.StopReason:
    manager = inv.agent.mcp(inv.session)
    if not inv.args.strip():
        return _list(inv, manager)
    parsed = _parse_call(inv)
    if parsed is None:
        return END
    server, tool, arguments = parsed
    if manager is None or server not in manager.servers:
        inv.say(f"This session has no connected MCP server named {server!r}; /mcp lists them.")
        return END
    from ..mcp import McpError

    turn = inv.turn
    call_id = turn.new_tool_call_id()
    title = f"{server}: {tool}"
    # spec TOOL-01: the tool call is reported before any update of it.
    call = s.ToolCall(
        tool_call_id=call_id,
        title=title,
        kind=s.ToolKind.OTHER,
        status=s.ToolCallStatus.PENDING,
        raw_input={"server": server, "tool": tool, "arguments": arguments},
    )
    turn.update(call)
    if inv.agent.asks_permission(inv.session):
        allowed = _ask(inv, call, f"Call {title}", "Do not call it")
        if allowed is None:
            return CANCELLED
        if not allowed:
            return _rejected(inv, call_id, f"calling {title}")
    _status(inv, call_id, s.ToolCallStatus.IN_PROGRESS)  # spec PROMPT-14
    try:
        result = manager.call(server, tool, arguments, timeout=CALL_TIMEOUT)
    except McpError as exc:
        _status(inv, call_id, s.ToolCallStatus.FAILED, content=_text_content(exc.reason))
        inv.say(f"{title} could not be called: {exc.reason}")
        return END
    if turn.cancelled.is_set():
        _status(inv, call_id, s.ToolCallStatus.FAILED, content=_text_content("cancelled"))
        return CANCELLED
    # spec PROMPT-16: a final status; a tool's own failure comes back from MCP as isError.
    _status(
        inv,
        call_id,
        s.ToolCallStatus.FAILED if result.is_error else s.ToolCallStatus.COMPLETED,
        content=_text_content(result.text()),
        raw_output=result.raw,
    )
    inv.say(f"{title} {'failed' if result.is_error else 'answered'}:\n{result.text()}")
    return END


def _parse_call(inv: Invocation) -> Optional[Tuple[str, str, Dict[str, Any]]]:
    """``SERVER TOOL {json}`` from the command's text, or None (and the reason said)."""
    server, rest = _split_first(inv.args)
    tool, rest = _split_first(rest)
    if not server or not tool:
        inv.say(
            '/mcp takes a server, a tool and JSON arguments: /mcp time get_current_time {"timezone": "UTC"}'
        )
        return None
    try:
        arguments = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        inv.say(f"The arguments of /mcp are not JSON: {exc}.")
        return None
    if not isinstance(arguments, dict):
        inv.say("The arguments of /mcp are a JSON object.")
        return None
    return server, tool, arguments


def _list(inv: Invocation, manager: Any) -> s.StopReason:
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
            lines.append(f"    {tool.name}: {_summary(tool.description or tool.title)}".rstrip(": "))
        if server.tools_cut is not None:
            lines.append(f"    (not all of its tools: {server.tools_cut})")
    for failure in failures:
        lines.append(f"  {failure.name} ({failure.transport}): not connected: {failure.reason}")
    lines.append('Call a tool with /mcp SERVER TOOL {"argument": "value"}.')
    inv.say("\n".join(lines))
    return END


def _summary(description: Optional[str]) -> str:
    """The first line of a tool's description, at most ``SUMMARY_CHARS`` characters: a list
    stays readable (and small) whatever a server wrote there."""
    first = (description or "").strip().split("\n", 1)[0]
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"
