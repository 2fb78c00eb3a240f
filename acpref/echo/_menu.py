"""The echo agent's slash commands, in the order ``/help`` and ``available_commands_update``
list them (SLASH-01, SLASH-02): one row per command, with the module that holds it.

A prompt whose first word is ``/name`` runs the command of that name (SLASH-05; the rest of the
text is its input, SLASH-06); spec_notes/echo-agent.md says what each one exercises in a client.
"""

from __future__ import annotations

from typing import Dict, List

from .. import schema as s
from ..schema import UNSET
from . import _elicitation, _mcp, _plans, _prompt, _session, _subagents, _system_prompt, _tools
from ._commands import END, EXT_CLIENT_METHOD, EXT_NOTICE, Command, Invocation

__all__ = ["COMMANDS", "available_commands"]


def _help(inv: Invocation) -> s.StopReason:
    lines = ["The echo agent repeats your prompt back. Commands:"]
    for c in COMMANDS.values():
        hint = f" <{c.hint}>" if c.hint else ""
        lines.append(f"  /{c.name}{hint}: {c.description}")
    modes = inv.session.modes
    lines.append("")
    lines.append(f"Mode: {modes.current_mode_id if modes else '-'}")
    for option in inv.session.config_options or []:
        lines.append(f"Option {option.id}: {option.kind.current_value!r}")
    inv.say("\n".join(lines))
    return END


_ROWS = (
    # name, function, description, input hint (None: the command takes no input)
    ("help", _help, "List the echo agent's commands and this session's settings", None),
    ("stream", _prompt.stream,
     "Stream many chunks, a thought, a plan, a session title and a usage report",
     "number of chunks"),
    ("tool", _tools.tool,
     "Run a pretend tool: a tool call, a permission request, status updates to the end", None),
    ("read", _tools.read,
     "Read a file through the client (fs/read_text_file); a relative path is the session's cwd's",
     "path"),
    ("write", _tools.write,
     "Write a file through the client (fs/write_text_file), shown as a diff", "path text"),
    ("run", _tools.run,
     "Run a command in a client terminal (terminal/*), embedded in a tool call",
     "command and arguments"),
    ("form", _elicitation.form,
     "Ask for a few answers with a form elicitation (elicitation/create, form mode)", None),
    ("url", _elicitation.url,
     "Ask the user to visit a URL (elicitation/create, URL mode), then elicitation/complete",
     None),
    ("wait", _prompt.wait,
     "Keep the turn going, with an update every half second, until you cancel it", None),
    ("error", _prompt.error,
     "Answer the prompt with a JSON-RPC error instead of a stop reason", None),
    ("refuse", _prompt.refuse, "Refuse the prompt: end the turn with stopReason refusal", None),
    ("ext", _session.ext,
     f"Call the client's {EXT_CLIENT_METHOD} extension method and send {EXT_NOTICE}", "text"),
    ("mode", _tools.mode,
     "Switch this session's mode myself: a switch_mode tool call, then current_mode_update",
     "mode id"),
    ("notice", _session.notice,
     "Send a live notice (session.notices), then another one after the turn has ended",
     "[info|warning|error|_custom] text"),
    ("compact", _session.compact,
     "Compact the context: a compaction with a streamed summary (session.compaction)",
     "[fail]"),
    ("mcp", _mcp.mcp, "List this session's MCP servers and their tools, or call one",
     "server tool {json}"),
    # The provisional features (their schema is the unstable one).
    ("plans", _plans.plans,
     "Send plan operations: two plans, one replaced then removed (or a legacy plan)", None),
    ("subagent", _subagents.subagent,
     "Delegate the text to a child session (subagent_update, messages)", "task"),
    ("system", _system_prompt.system,
     "Show the system instructions of this session (client systemPrompt, if any)", None),
)

#: Every command, by name, in the order ``/help`` lists them.
COMMANDS: Dict[str, Command] = {
    name: Command(name=name, description=description, hint=hint, run=run)
    for name, run, description, hint in _ROWS
}


def available_commands() -> List[s.AvailableCommand]:
    """The commands as ``available_commands_update`` advertises them (SLASH-01, SLASH-02)."""
    return [
        s.AvailableCommand(
            name=c.name,
            description=c.description,
            input=s.UnstructuredCommandInput(hint=c.hint) if c.hint else UNSET,
        )
        for c in COMMANDS.values()
    ]
