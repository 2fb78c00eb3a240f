"""The echo agent's slash commands: each one exercises one feature of the client.

Spec: slash-commands.mdx (SLASH-01 .. SLASH-06), prompt-turn.mdx, tool-calls.mdx,
agent-plan.mdx, session-list.mdx (session_info_update), file-system.mdx, terminals.mdx,
elicitation.mdx, session-modes.mdx, extensibility.mdx, session-notices.md,
session-compaction.md, tool-call-name.md. The list, with what each command
exercises, is in spec_notes/echo-agent.md and ``acpref echo --help``.

A command is a function ``run(inv) -> stop reason`` registered with ``@command``. It streams
through ``inv.turn``, checks ``inv.turn.cancelled`` between steps, and, where the client lacks a
capability the command needs, says so in its reply instead of calling it (ELICIT-07, INIT-11).
Commands that need the user's consent ask it with ``session/request_permission``; in the ``ask``
mode (unless brave mode is on) so do ``/write`` and ``/run``.

What must not live here: the agent's setup (``_agent``), the protocol rules.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import shlex
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

import attrs

from .. import schema as s
from ..agent import PromptTurn, Session
from ..client.forms import validate as validate_form
from ..errors import ErrorCode, RpcError
from ..schema import UNSET

if TYPE_CHECKING:  # pragma: no cover
    from ._agent import EchoAgent

__all__ = ["Command", "Invocation", "COMMANDS", "available_commands"]

END = s.StopReason.END_TURN
CANCELLED = s.StopReason.CANCELLED

#: The extension method the agent calls on the client, and the notification it sends (EXT-05).
EXT_CLIENT_METHOD = "_acpref/echo"
EXT_NOTICE = "_acpref/notice"


@attrs.frozen
class Invocation:
    """One run of a command: its turn and session, the text after its name, the other blocks."""

    agent: "EchoAgent"
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


#: Every command, by name, in the order ``/help`` lists them.
COMMANDS: Dict[str, Command] = {}


def command(
    name: str, description: str, hint: Optional[str] = None
) -> Callable[[Callable[[Invocation], Any]], Any]:
    def register(fn: Callable[[Invocation], Any]) -> Callable[[Invocation], Any]:
        COMMANDS[name] = Command(name=name, description=description, hint=hint, run=fn)
        return fn

    return register


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


# -- helpers --------------------------------------------------------------------------------------


def _now() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


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
    inside = any(_within(absolute, root) for root in session.roots)
    return absolute, inside


def _within(path: str, root: str) -> bool:
    root = os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


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


# -- the commands ---------------------------------------------------------------------------------


@command("help", "List the echo agent's commands and this session's settings")
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


@command(
    "stream",
    "Stream many chunks, a thought, a plan, a session title and a usage report",
    "number of chunks",
)
def _stream(inv: Invocation) -> s.StopReason:
    try:
        count = max(0, min(int(inv.args.strip() or 8), 100_000))
    except ValueError:
        inv.say(f"/stream takes a number of chunks, not {inv.args.strip()!r}.")
        return END
    turn = inv.turn
    P, S = s.PlanEntryPriority, s.PlanEntryStatus
    steps: List[Tuple[str, s.PlanEntryPriority]] = [
        ("Think about the reply", P.HIGH),
        (f"Stream {count} chunks", P.MEDIUM),
        ("Report usage", P.LOW),
    ]

    def plan(*statuses: s.PlanEntryStatus) -> None:
        # spec PLAN-04: every plan update carries the complete list, with current statuses.
        entries = [
            s.PlanEntry(content=c, priority=p, status=st) for (c, p), st in zip(steps, statuses)
        ]
        turn.update(s.Plan(entries=entries))

    # spec PLAN-01: the turn's plan, reported as a plan update with its entries.
    plan(S.IN_PROGRESS, S.PENDING, S.PENDING)
    turn.say(f"The user asked for {count} chunks; I will stream them, then report.", thought=True)
    # spec PLAN-03: updated plans follow the progress.
    plan(S.COMPLETED, S.IN_PROGRESS, S.PENDING)
    message_id = turn.new_message_id()
    for i in range(1, count + 1):
        if turn.cancelled.is_set():
            return CANCELLED
        turn.say(f"chunk {i}/{count} ", message_id=message_id)
    # spec PLAN-06: entries may be added between updates.
    steps.insert(2, ("Name the session", P.LOW))
    plan(S.COMPLETED, S.COMPLETED, S.IN_PROGRESS, S.PENDING)
    # spec LIST-14: the agent names the session; only title and updatedAt change (LIST-16).
    turn.update(s.SessionInfoUpdate(title=f"Echo: streamed {count} chunks", updated_at=_now()))
    plan(S.COMPLETED, S.COMPLETED, S.COMPLETED, S.IN_PROGRESS)
    # spec PROMPT-09: the turn reports context usage and cost;
    # spec PROMPT-10: integer used and size; cost with an ISO 4217 currency.
    turn.update(
        s.UsageUpdate(
            used=1000 + 10 * count,
            size=200_000,
            cost=s.Cost(amount=round(0.0001 * count, 6), currency="USD"),
        )
    )
    plan(S.COMPLETED, S.COMPLETED, S.COMPLETED, S.COMPLETED)
    return END


@command("tool", "Run a pretend tool: a tool call, a permission request, status updates to the end")
def _tool(inv: Invocation) -> s.StopReason:
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


@command("read", "Read a file through the client (fs/read_text_file)", "path")
def _read(inv: Invocation) -> s.StopReason:
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


@command(
    "write", "Write a file through the client (fs/write_text_file), shown as a diff", "path text"
)
def _write(inv: Invocation) -> s.StopReason:
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


@command(
    "run",
    "Run a command in a client terminal (terminal/*), embedded in a tool call",
    "command and arguments",
)
def _run(inv: Invocation) -> s.StopReason:
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
        if turn.cancelled.is_set():
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


@command("form", "Ask for a few answers with a form elicitation (elicitation/create, form mode)")
def _form(inv: Invocation) -> s.StopReason:
    if not inv.turn.client.supports("elicitation.form"):
        # spec ELICIT-06, ELICIT-07: never an unadvertised mode; say so instead.
        return _missing_named(inv, "form", "form elicitation", "elicitation.form")
    # spec ELICIT-15, ELICIT-32: nothing secret is asked (no password, key, token or payment
    # field), and no URL is in the message, titles or descriptions.
    schema = s.ElicitationSchema(
        type=s.ElicitationSchemaType.OBJECT,
        title="About you",
        properties={
            "name": s.StringPropertySchema(
                title="Name", description="What should I call you?", min_length=1, max_length=100
            ),
            "colour": s.StringPropertySchema(
                title="Favourite colour",
                one_of=[s.EnumOption(const=c, title=c.title()) for c in ("red", "green", "blue")],
                default="blue",
            ),
            "echoes": s.IntegerPropertySchema(
                title="How many echoes", minimum=1, maximum=5, default=1
            ),
            "news": s.BooleanPropertySchema(title="Send me news", default=False),
        },
        required=["name"],
    )
    answer = inv.turn.elicit_form("The echo agent would like to know a little about you.", schema)
    action = answer.action
    if isinstance(action, s.ElicitationAcceptAction):
        # spec ELICIT-21: content omitted and null read the same (no answers).
        content = action.content if isinstance(action.content, dict) else {}
        # spec ELICIT-13: the agent validates the answers again, against the schema it sent;
        # ELICIT-23: answers that do not fit are not used (nothing is guessed).
        problems = validate_form(schema, content)
        if problems:
            listed = "; ".join(f"{field} {problem}" for field, problem in sorted(problems.items()))
            inv.say(
                f"The form came back with answers that do not fit it ({listed}); not using them."
            )
            return END
        name = content["name"]
        times = content.get("echoes", 1)
        assert isinstance(times, int)  # validated above: a whole number
        inv.say(f"Hello {name}! " * times + f"You answered {json.dumps(content, sort_keys=True)}.")
    elif isinstance(action, s.ElicitationDeclineAction):
        # spec ELICIT-23: nothing is presumed: a decline (or a cancel) ends the command safely.
        inv.say("You declined the form; that is fine.")
    else:
        inv.say("You dismissed the form without choosing.")
    return END


@command(
    "url", "Ask the user to visit a URL (elicitation/create, URL mode), then elicitation/complete"
)
def _url(inv: Invocation) -> s.StopReason:
    if not inv.turn.client.supports("elicitation.url"):
        # spec ELICIT-16: no fallback to form mode for what needs URL mode: say so, ask nothing.
        return _missing_named(inv, "url", "URL elicitation", "elicitation.url")
    # spec ELICIT-24, ELICIT-30, ELICIT-31: unique among outstanding URL elicitations; no
    # credentials or personal data in the URL; https.
    elicitation_id = "echo-" + os.urandom(6).hex()
    url = f"https://example.com/acpref-echo/consent?elicitation={elicitation_id}"
    answer = inv.turn.elicit_url(
        "The echo agent would like you to open a page.", url, elicitation_id=elicitation_id
    )
    if isinstance(answer.action, s.ElicitationAcceptAction):
        # An accept is consent to open the URL; the echo "interaction" is over at once.
        # spec ELICIT-26: elicitation/complete when the (pretend) interaction finishes.
        inv.turn.complete_elicitation(elicitation_id)
        inv.say(f"You agreed to open {url}; I sent elicitation/complete for {elicitation_id}.")
    elif isinstance(answer.action, s.ElicitationDeclineAction):
        inv.say("You declined to open the page.")
    else:
        inv.say("You dismissed the request to open the page.")
    return END


@command("wait", "Keep the turn going, with an update every half second, until you cancel it")
def _wait(inv: Invocation) -> s.StopReason:
    turn = inv.turn
    message_id = turn.say("Waiting until you cancel this turn...")
    beat = 0
    while not turn.cancelled.wait(0.5):
        beat += 1
        turn.say(f" still waiting ({beat})", message_id=message_id)
    return CANCELLED


@command("error", "Answer the prompt with a JSON-RPC error instead of a stop reason")
def _error(inv: Invocation) -> s.StopReason:
    raise RpcError(
        ErrorCode.INTERNAL_ERROR,
        "The /error command answers with a JSON-RPC error, on purpose.",
        {"command": "/error"},
    )


@command("refuse", "Refuse the prompt: end the turn with stopReason refusal")
def _refuse(inv: Invocation) -> s.StopReason:
    # schema StopReason "refusal": the agent refuses to continue; the client shows that this
    # prompt will not be part of the next turn's context (PROMPT-18).
    inv.say("The echo agent refuses this prompt (on purpose).")
    return s.StopReason.REFUSAL


@command(
    "ext", f"Call the client's {EXT_CLIENT_METHOD} extension method and send {EXT_NOTICE}", "text"
)
def _ext(inv: Invocation) -> s.StopReason:
    client = inv.turn.client
    text = inv.args.strip() or "hello"
    # spec EXT-10: notifications are safe to send; an unaware client ignores them.
    client.ext_notification(EXT_NOTICE, {"sessionId": inv.session.id, "text": text})
    advertised = client.meta.get("acpref")
    if not (isinstance(advertised, dict) and advertised.get("echo") is True):
        # spec EXT-09: custom methods are called only when the peer advertised them.
        inv.say(
            f"Sent {EXT_NOTICE}. The client did not advertise {EXT_CLIENT_METHOD} "
            "(clientCapabilities._meta.acpref.echo: true), so I did not call it."
        )
        return END
    try:
        result = client.ext_method(EXT_CLIENT_METHOD, {"text": text})
    except RpcError as exc:
        inv.say(
            f"Sent {EXT_NOTICE}; {EXT_CLIENT_METHOD} answered error {int(exc.code)}: {exc.message}"
        )
        return END
    inv.say(f"Sent {EXT_NOTICE}; {EXT_CLIENT_METHOD} answered {json.dumps(result, sort_keys=True)}")
    return END


@command(
    "mode",
    "Switch this session's mode myself: a switch_mode tool call, then current_mode_update",
    "mode id",
)
def _mode(inv: Invocation) -> s.StopReason:
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


def _missing_named(inv: Invocation, name: str, what: str, gate: str) -> s.StopReason:
    inv.say(
        f"This client did not advertise {what} (clientCapabilities.{gate}), so /{name} cannot run "
        "here. Nothing was sent."
    )
    return END


@command(
    "notice",
    "Send a live notice (session.notices), then another one after the turn has ended",
    "[info|warning|error|_custom] text",
)
def _notice(inv: Invocation) -> s.StopReason:
    first, rest = _split_first(inv.args)
    if first and rest.strip():
        severity, title = first, rest.strip()
    else:
        severity, title = "info", inv.args.strip()
    title = title or "A notice from the echo agent"
    # spec NOTICE-04: any severity string goes out as given (known or not).
    if not inv.turn.notice(severity, title, "Sent by /notice; nothing depends on it."):
        # spec NOTICE-01, NOTICE-02: no session.notices: the same words as an agent message.
        inv.say(f"(notice, {severity}) {title}\nThis client does not take notices.")
        return END
    client, session_id = inv.turn.client, inv.session.id

    def later() -> None:
        # spec NOTICE-10: a notice outside any prompt turn, while the session exists.
        client.update(
            session_id,
            s.Notice(severity=s.NoticeSeverity.INFO, title="The /notice turn has ended"),
        )

    inv.turn.after_answer(later)
    inv.say("Sent a notice; another one follows the end of this turn.")
    return END


@command(
    "compact",
    "Compact the context: a compaction with a streamed summary (session.compaction)",
    "[fail]",
)
def _compact(inv: Invocation) -> s.StopReason:
    turn = inv.turn
    if not turn.client.supports("session.compaction"):
        # spec COMPACT-01: without session.compaction no compaction update is sent.
        inv.say("This client does not take compaction updates; nothing was compacted.")
        return END
    # spec COMPACT-04: unique within the session for good (the tool call ids are).
    compaction_id = "cmp" + turn.new_tool_call_id()[len("call"):]
    # spec COMPACT-02: one id-addressed entity; progress is optional, here it is shown.
    turn.update(
        s.CompactionUpdate(compaction_id=compaction_id, status=s.CompactionStatus.IN_PROGRESS)
    )
    if inv.args.strip() == "fail":
        turn.update(
            s.CompactionUpdate(
                compaction_id=compaction_id,
                status=s.CompactionStatus.FAILED,
                error="/compact fail: the echo agent was asked to fail",
            )
        )
        inv.say("The compaction failed, as asked; the context is unchanged.")
        return END
    # spec COMPACT-11, COMPACT-12: the summary is what is retained, the user's own words only
    # (they were user-visible already), without framing or instructions.
    prompts = [
        u.content.text
        for u in list(inv.session.history)
        if isinstance(u, s.UserMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    turn.update(
        s.CompactionSummaryChunk(
            compaction_id=compaction_id,
            content=s.TextContent(text=f"## Retained context\n\n{len(prompts)} user prompts:\n"),
        )
    )
    for text in prompts[-5:]:
        if turn.cancelled.is_set():
            turn.update(
                s.CompactionUpdate(compaction_id=compaction_id, status=s.CompactionStatus.CANCELLED)
            )
            return CANCELLED
        turn.update(
            s.CompactionSummaryChunk(
                compaction_id=compaction_id, content=s.TextContent(text=f"- {text[:200]}\n")
            )
        )
    # spec COMPACT-09, COMPACT-10: one terminal status; summary omitted keeps the chunks.
    turn.update(
        s.CompactionUpdate(compaction_id=compaction_id, status=s.CompactionStatus.COMPLETED)
    )
    inv.say("Compacted the context; the conversation before it is kept.")
    return END
