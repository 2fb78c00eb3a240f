"""What the echo agent's slash commands share: the invocation, the host, the helpers.

Spec: slash-commands.mdx (SLASH-01 .. SLASH-06). The commands themselves are listed, in order,
in ``_menu``, each with the module that holds it; the modules group them by what they
exercise: ``_prompt`` (streaming, stop reasons), ``_tools`` (tool calls, files, terminals,
modes), ``_elicitation`` (forms, URLs), ``_session`` (extensions, notices, compaction), and
``_mcp``, ``_plans``, ``_subagents``, ``_system_prompt``.

A command is a function ``run(inv) -> stop reason``. It streams through ``inv.turn``, checks
``inv.turn.cancelled`` between steps, and, where the client lacks a capability the command
needs, says so in its reply instead of calling it (ELICIT-07, INIT-11). Commands that need the
user's consent ask it with ``session/request_permission``; in the ``ask`` mode (unless brave
mode is on) so do ``/write`` and ``/run``.

What must not live here: the agent's setup (``_agent``), the protocol rules.
"""

from __future__ import annotations

import io
import os
import shlex
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, Union

import attrs

from .. import schema as s
from .._core.values import is_below
from ..agent import ClientHandle, PromptTurn, Session
from ..schema import UNSET

__all__ = ["Command", "Host", "Invocation"]

END = s.StopReason.END_TURN
CANCELLED = s.StopReason.CANCELLED

#: The extension method the agent calls on the client, and the notification it sends (EXT-05).
EXT_CLIENT_METHOD = "_acpref/echo"
EXT_NOTICE = "_acpref/notice"


class Host(Protocol):
    """What a command asks of the agent that runs it (the ``EchoAgent`` of ``_agent``)."""

    client: ClientHandle
    #: What the children of ``/subagent`` sent (``_subagents.Children``).
    children: Any

    def asks_permission(self, session: Session) -> bool: ...

    def set_current_mode(
        self, session: Session, mode_id: str, send: Callable[[Any], None]
    ) -> None: ...

    def mcp(self, session: Session) -> Any: ...


@attrs.frozen
class Invocation:
    """One run of a command: its turn and session, the text after its name, the other blocks."""

    agent: Host
    turn: PromptTurn
    session: Session
    args: str
    #: The prompt's other content blocks (SLASH-06: commands may come with images, files...).
    extra: List[Any]

    def say(self, text: str) -> str:
        return self.turn.say(text)


@attrs.frozen
class Command:
    name: str
    description: str
    hint: Optional[str]
    run: Callable[[Invocation], Any]


# -- helpers --------------------------------------------------------------------------------------


def _split_first(args: str) -> Tuple[Optional[str], str]:
    """The first shell-style word of ``args`` (quotes allowed) and the raw rest."""
    stream = io.StringIO(args)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split = True
    first = lexer.get_token()
    return first, stream.read().lstrip()


def _resolve(session: Session, path: str) -> Tuple[str, bool]:
    """An absolute path for ``path``, and whether it lies inside the session's roots.

    spec SETUP-19, SETUP-27: relative paths resolve against cwd, never an additional root;
    SETUP-28: file-system tools stay inside the effective root set [cwd, *additionalDirectories].
    """
    # spec SETUP-27: a relative path resolves against cwd.
    absolute = os.path.normpath(path if os.path.isabs(path) else os.path.join(session.cwd, path))
    # spec SETUP-28: the file-system commands stay inside [cwd, *additionalDirectories].
    inside = any(is_below(absolute, os.path.normpath(root), os.sep) for root in session.roots)
    return absolute, inside


def _ask(inv: Invocation, call: Union[s.ToolCall, str], allow: str, reject: str) -> Optional[bool]:
    """Ask permission for a tool call: True (allowed), False (rejected), None (cancelled).

    ``call`` is the reported ``ToolCall`` (its title, kind and status go along, TOOL-07; a mode
    switch says so in its kind, MODES-07), or just its id.
    """
    if isinstance(call, str):
        shown = s.ToolCallUpdate(tool_call_id=call)
    else:
        # spec TOOL-07: the request carries the call's details (its name and input too).
        shown = s.ToolCallUpdate(
            tool_call_id=call.tool_call_id,
            title=call.title,
            name=call.name,
            kind=call.kind,
            status=call.status,
            raw_input=call.raw_input,
        )
    outcome = inv.turn.request_permission(
        shown,
        [
            s.PermissionOption(
                option_id="allow", name=allow, kind=s.PermissionOptionKind.ALLOW_ONCE
            ),
            s.PermissionOption(
                option_id="reject", name=reject, kind=s.PermissionOptionKind.REJECT_ONCE
            ),
        ],
    )
    if isinstance(outcome, s.SelectedPermissionOutcome):
        return outcome.option_id == "allow"
    return None


def _status(inv: Invocation, tool_call_id: str, status: s.ToolCallStatus, **fields: Any) -> None:
    inv.turn.update(s.ToolCallUpdate(tool_call_id=tool_call_id, status=status, **fields))


def _text_content(text: str) -> List[Any]:
    return [s.Content(content=s.TextContent(text=text))]


def _rejected(inv: Invocation, tool_call_id: str, what: str) -> s.StopReason:
    # spec PROMPT-16: the tool call ends with a final status; a rejection is a failure.
    _status(
        inv,
        tool_call_id,
        s.ToolCallStatus.FAILED,
        content=_text_content(f"{what}: rejected by the user"),
    )
    inv.say(f"You rejected it, so nothing happened ({what}).")
    return END


def _missing_named(inv: Invocation, name: str, what: str, gate: str) -> s.StopReason:
    inv.say(
        f"This client did not advertise {what} (clientCapabilities.{gate}), so /{name} cannot run "
        "here. Nothing was sent."
    )
    return END
