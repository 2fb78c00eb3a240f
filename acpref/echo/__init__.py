"""The echo agent: deterministic, no model, every agent capability of ACP v1 really supported.

Run it with ``acpref echo`` or ``python -m acpref.echo``; ``--help`` lists the options and the
slash commands, and spec_notes/echo-agent.md says what each command exercises in a client.

Modules: ``_agent`` (``EchoAgent``: capabilities, authentication, modes and config options,
echoing), ``_menu`` (the slash commands, listed in order), ``_commands`` (what they share),
and the commands by what they exercise: ``_prompt``, ``_tools``, ``_elicitation``, ``_session``, ``_mcp``,
``_plans``, ``_subagents``, ``_system_prompt``. The command line lives in ``acpref._cli.echo``.
"""

from ._agent import AUTH_METHOD_ID, PING_METHOD, EchoAgent
from ._commands import EXT_CLIENT_METHOD, EXT_NOTICE
from ._menu import COMMANDS, available_commands

__all__ = [
    "EchoAgent",
    "COMMANDS",
    "AUTH_METHOD_ID",
    "PING_METHOD",
    "EXT_CLIENT_METHOD",
    "EXT_NOTICE",
    "available_commands",
]
