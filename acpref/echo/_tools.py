"""The echo agent's tool calls: a pretend tool, files and terminals through the client, modes.

Spec: tool-calls.mdx, file-system.mdx, terminals.mdx, session-modes.mdx, tool-call-name.md.
Each command reports its tool call before any update of it (TOOL-01), asks permission where the
user's consent is due, and ends the call with a final status (PROMPT-16).
"""

from __future__ import annotations

import shlex
from typing import List, Optional

from .. import schema as s
from ..agent import TerminalHandle
from ..errors import RpcError
from ..schema import UNSET
from ._commands import (
    CANCELLED,
    END,
    Invocation,
    _ask,
    _missing_named,
    _rejected,
    _resolve,
    _split_first,
    _status,
    _text_content,
)

__all__: List[str] = []


def tool(inv: Invocation) -> s.StopReason:
    turn = inv.turn
    call_id = turn.new_tool_call_id()
    # spec TOOL-01: report the tool call before any update of it.
    call = s.ToolCall(
        tool_call_id=call_id,
        title="Echo tool",
        name="echo_tool",  # spec TOOL-16: the tool's programmatic name, in the first report
        kind=s.ToolKind.OTHER,
        status=s.ToolCallStatus.PENDING,
        raw_input={"args": inv.args},
    )
    turn.update(call)
    allowed = _ask(inv, call, "Run the echo tool", "Do not run it")
    if allowed is None:
        return CANCELLED
    if not allowed:
        return _rejected(inv, call_id, "the echo tool")
    # spec PROMPT-14: once permitted, in_progress; PROMPT-16: then a final status with content.
    _status(inv, call_id, s.ToolCallStatus.IN_PROGRESS)
    # spec PROMPT-15: progress while the tool runs.
    _status(inv, call_id, s.ToolCallStatus.IN_PROGRESS, content=_text_content("working..."))
    _status(
        inv,
        call_id,
        s.ToolCallStatus.COMPLETED,
        content=_text_content(f"The echo tool ran with {inv.args!r}."),
        raw_output={"ok": True, "args": inv.args},
    )
    inv.say("The echo tool ran.")
    return END

def read(inv: Invocation) -> s.StopReason:
    path, _ = _split_first(inv.args)
    if not path:
        inv.say("/read needs a path.")
        return END
    if not inv.turn.client.supports("fs.readTextFile"):
        return _missing_named(inv, "read", "fs/read_text_file", "fs.readTextFile")
    absolute, inside = _resolve(inv.session, path)
    if not inside:  # spec SETUP-28: refused outside the roots
        inv.say(f"{absolute} is outside this session's roots {inv.session.roots}; not reading it.")
        return END
    call_id = inv.turn.new_tool_call_id()
    location = [s.ToolCallLocation(path=absolute)]
    inv.turn.update(
        s.ToolCall(
            tool_call_id=call_id,
            title=f"Read {absolute}",
            name="read_text_file",  # spec TOOL-16
            kind=s.ToolKind.READ,
            status=s.ToolCallStatus.IN_PROGRESS,
            locations=location,
        )
    )
    try:
        content = inv.turn.read_text_file(absolute)
    except RpcError as exc:
        _status(
            inv,
            call_id,
            s.ToolCallStatus.FAILED,
            content=_text_content(f"error {int(exc.code)}: {exc.message}"),
        )
        inv.say(f"The client could not read {absolute}: {exc.message} ({int(exc.code)}).")
        return END
    _status(inv, call_id, s.ToolCallStatus.COMPLETED, content=_text_content(content))
    inv.say(f"{absolute} holds {len(content)} characters:\n{content}")
    return END

def write(inv: Invocation) -> s.StopReason:
    path, text = _split_first(inv.args)
    if not path:
        inv.say("/write needs a path and the text to write.")
        return END
    if not inv.turn.client.supports("fs.writeTextFile"):
        return _missing_named(inv, "write", "fs/write_text_file", "fs.writeTextFile")
    absolute, inside = _resolve(inv.session, path)
    if not inside:  # spec SETUP-28: refused outside the roots
        inv.say(f"{absolute} is outside this session's roots {inv.session.roots}; not writing it.")
        return END
    turn = inv.turn
    old: Optional[str] = None
    if turn.client.supports("fs.readTextFile"):
        try:
            old = turn.read_text_file(absolute)
        except RpcError:
            old = None  # spec TOOL-13: a new file has no old text
    call_id = turn.new_tool_call_id()
    call = s.ToolCall(
        tool_call_id=call_id,
        title=f"Write {absolute}",
        name="write_text_file",  # spec TOOL-16
        kind=s.ToolKind.EDIT,
        status=s.ToolCallStatus.PENDING,
        content=[s.Diff(path=absolute, old_text=old, new_text=text)],
        locations=[s.ToolCallLocation(path=absolute, line=1)],
    )
    turn.update(call)
    if inv.agent.asks_permission(inv.session):
        allowed = _ask(inv, call, f"Write {absolute}", "Do not write")
        if allowed is None:
            return CANCELLED
        if not allowed:
            return _rejected(inv, call_id, f"writing {absolute}")
    _status(inv, call_id, s.ToolCallStatus.IN_PROGRESS)
    try:
        turn.write_text_file(absolute, text)
    except RpcError as exc:
        _status(
            inv,
            call_id,
            s.ToolCallStatus.FAILED,
            content=_text_content(f"error {int(exc.code)}: {exc.message}"),
        )
        inv.say(f"The client could not write {absolute}: {exc.message} ({int(exc.code)}).")
        return END
    _status(inv, call_id, s.ToolCallStatus.COMPLETED)
    inv.say(f"Wrote {len(text)} characters to {absolute}.")
    return END

def run(inv: Invocation) -> s.StopReason:
    try:
        argv = shlex.split(inv.args)
    except ValueError as exc:
        inv.say(f"/run could not split {inv.args!r}: {exc}.")
        return END
    if not argv:
        inv.say("/run needs a command.")
        return END
    if not inv.turn.client.supports("terminal"):
        return _missing_named(inv, "run", "terminals", "terminal")
    turn = inv.turn
    call_id = turn.new_tool_call_id()
    title = "Run " + " ".join(shlex.quote(a) for a in argv)
    call = s.ToolCall(
        tool_call_id=call_id,
        title=title,
        name="run_command",  # spec TOOL-16
        kind=s.ToolKind.EXECUTE,
        status=s.ToolCallStatus.PENDING,
        raw_input={"command": argv[0], "args": argv[1:], "cwd": inv.session.cwd},
    )
    turn.update(call)
    if inv.agent.asks_permission(inv.session):
        allowed = _ask(inv, call, title, "Do not run it")
        if allowed is None:
            return CANCELLED
        if not allowed:
            return _rejected(inv, call_id, title)
    try:
        # spec SETUP-26: the command runs in the session's cwd, not the agent's.
        terminal = turn.create_terminal(
            argv[0], argv[1:], cwd=inv.session.cwd, output_byte_limit=1 << 20
        )
    except RpcError as exc:
        _status(
            inv,
            call_id,
            s.ToolCallStatus.FAILED,
            content=_text_content(f"error {int(exc.code)}: {exc.message}"),
        )
        inv.say(f"The client could not start {argv[0]!r}: {exc.message} ({int(exc.code)}).")
        return END
    return _in_terminal(inv, call_id, title, terminal)


def _in_terminal(
    inv: Invocation, call_id: str, title: str, terminal: TerminalHandle
) -> s.StopReason:
    """Show the running ``terminal`` in the tool call, wait for its exit, report its output."""
    try:
        # spec TOOL-14: the terminal is embedded while it is alive (before release).
        _status(
            inv,
            call_id,
            s.ToolCallStatus.IN_PROGRESS,
            content=[s.Terminal(terminal_id=terminal.terminal_id)],
        )
        # On cancel the turn kills the command, so the wait ends (PROMPT-22).
        terminal.wait_for_exit()
        out = terminal.output()
        if inv.turn.cancelled.is_set():
            return CANCELLED
    finally:
        terminal.release()  # spec TERM-07: always released
    status = out.exit_status if isinstance(out.exit_status, s.TerminalExitStatus) else None
    code = status.exit_code if status is not None else None
    signal = status.signal if status is not None else None
    ok = code == 0
    _status(
        inv,
        call_id,
        s.ToolCallStatus.COMPLETED if ok else s.ToolCallStatus.FAILED,
        raw_output={"exitCode": code, "signal": signal, "truncated": out.truncated},
    )
    ending = f"exited with status {code}" if signal in (None, UNSET) else f"was killed by {signal}"
    inv.say(f"{title} {ending}{' (output truncated)' if out.truncated else ''}:\n{out.output}")
    return END

def mode(inv: Invocation) -> s.StopReason:
    wanted = inv.args.strip()
    modes = inv.session.modes
    ids = [m.id for m in modes.available_modes] if modes else []
    if wanted not in ids or modes is None:
        inv.say(f"/mode takes one of {', '.join(ids)}; got {wanted!r}.")
        return END
    if modes.current_mode_id == wanted:
        inv.say(f"Already in {wanted} mode.")
        return END
    turn = inv.turn
    call_id = turn.new_tool_call_id()
    # spec MODES-07: a mode-switch tool asks permission like any tool.
    call = s.ToolCall(
        tool_call_id=call_id,
        title=f"Switch to {wanted} mode",
        name="switch_mode",  # spec TOOL-16
        kind=s.ToolKind.SWITCH_MODE,
        status=s.ToolCallStatus.PENDING,
    )
    turn.update(call)
    allowed = _ask(inv, call, f"Switch to {wanted}", f"Stay in {modes.current_mode_id}")
    if allowed is None:
        return CANCELLED
    if not allowed:
        return _rejected(inv, call_id, f"switching to {wanted} mode")
    _status(inv, call_id, s.ToolCallStatus.IN_PROGRESS)
    # spec MODES-06, CONFIG-24: current_mode_update, and the mode option follows.
    inv.agent.set_current_mode(inv.session, wanted, turn.update)
    _status(inv, call_id, s.ToolCallStatus.COMPLETED)
    inv.say(f"Switched to {wanted} mode.")
    return END
