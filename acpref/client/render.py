"""Plain-text rendering of a session as it streams: for the ``acpref client`` CLI and the demo.

Spec: prompt-turn.mdx, tool-calls.mdx, agent-plan.mdx, terminals.mdx (Embedding in Tool
Calls), slash-commands.mdx, session-modes.mdx, session-config-options.mdx; clauses TERM-08,
INIT-21, CONFIG-02. Text is written as it comes: Markdown stays its readable source (CONTENT-03
is not applicable to a plain-text terminal).

``Renderer`` turns updates into readable lines and hands them to a ``write`` callable the caller
gives (the CLI passes ``sys.stdout.write``): this module never touches stdout itself. Agent text
streams inline; everything else (thoughts, tool calls, diffs, plans, terminal output...) gets a
line of its own with a short bracketed tag. It is safe to call from several threads.
"""

from __future__ import annotations

import difflib
import ipaddress
import threading
from typing import Any, Callable, List, Optional
from urllib.parse import urlsplit

from .. import schema as s
from ..schema import UNSET

__all__ = ["Renderer", "describe_options", "describe_url", "display_name", "permission_lines"]

_PLAN_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
_MAX_DIFF_LINES = 60


def display_name(info: Optional[s.Implementation], fallback: str = "agent") -> str:
    """The peer's title when it has one, else its name (spec INIT-21)."""
    if info is None:
        return fallback
    # spec INIT-21: the title when present, else the name.
    return info.title if isinstance(info.title, str) and info.title else info.name


def _value(x: Any) -> str:
    return str(x.value) if hasattr(x, "value") else str(x)


def _block_text(block: Any) -> str:
    if isinstance(block, s.TextContent):
        return block.text
    if isinstance(block, s.ResourceLink):
        return f"[link {block.uri}]"
    if isinstance(block, s.EmbeddedResource):
        return f"[resource {getattr(block.resource, 'uri', '?')}]"
    return f"[{getattr(block, 'type', 'content')}]"


def describe_options(options: List[s.SessionConfigOption]) -> List[str]:
    """One line per config option, in the agent's order (spec CONFIG-02)."""
    lines = []
    # spec CONFIG-02: in the agent's order.
    # spec CONFIG-08, CONFIG-09: the category is a hint, never read: a missing or unknown one
    # changes nothing.
    for option in options:
        kind = option.kind
        if isinstance(kind, s.SessionConfigBoolean):
            lines.append(
                f"{option.id} = {'on' if kind.current_value else 'off'}  ({option.name}; on/off)"
            )
        elif isinstance(kind, s.SessionConfigSelect):
            values = []
            for item in kind.options:
                values += (
                    [v.value for v in item.options]
                    if isinstance(item, s.SessionConfigSelectGroup)
                    else [item.value]
                )
            lines.append(
                f"{option.id} = {kind.current_value}  ({option.name}; {', '.join(values)})"
            )
    return lines


def describe_url(url: str) -> List[str]:
    """Lines that show a URL before consent: the whole URL, its host, and warnings.

    spec ELICIT-34: the complete URL is shown; ELICIT-36: the domain stands out, and lookalike
    hosts (Punycode, non-ASCII, a bare IP address, credentials before an ``@``) are flagged.
    """
    # spec ELICIT-33, ELICIT-34: the whole URL is shown before consent is asked.
    lines = [f"  URL:  {url}"]
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return lines + ["  WARNING: this URL cannot be parsed"]
    lines.append(f"  host: {host.upper() if host else '(none)'}")
    warnings = []  # spec ELICIT-36: lookalike and suspicious hosts are flagged
    if parts.scheme != "https":
        warnings.append(f"it uses {parts.scheme or 'no scheme'}, not https")
    if any(label.startswith("xn--") for label in host.split(".")):
        warnings.append("the host is Punycode (it may imitate another name)")
    if not host.isascii():
        warnings.append("the host has non-ASCII characters (it may imitate another name)")
    try:
        ipaddress.ip_address(host)
        warnings.append("the host is a bare IP address")
    except ValueError:
        pass
    if parts.username is not None or "@" in parts.netloc:
        warnings.append("the URL carries a user name before '@' (the real host is after it)")
    lines += [f"  WARNING: {w}" for w in warnings]
    return lines


def permission_lines(
    request: s.RequestPermissionRequest, known_title: Optional[str] = None
) -> List[str]:
    """The question of a permission request: the tool call, then numbered options.

    ``known_title`` is the tool call's title as reported earlier (the request may carry only
    the id, spec TOOL-06).
    """
    call = request.tool_call
    title = call.title if isinstance(call.title, str) else (known_title or call.tool_call_id)
    kind = f" ({_value(call.kind)})" if call.kind not in (UNSET, None) else ""
    lines = [f"[permission] the agent wants to run: {title}{kind}"]
    if call.raw_input is not UNSET:
        lines.append(f"  input: {call.raw_input!r}"[:300])
    for n, option in enumerate(request.options, start=1):
        lines.append(f"  {n}) {option.name} [{_value(option.kind)}]")
    return lines


class Renderer:
    """Formats updates as text. ``write(text)`` receives every piece, newlines included."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._lock = threading.RLock()  # one writer at a time; guards the fields below
        self._stream: Optional[str] = None  # "agent", "thought", "user" while a chunk line is open
        self._titles: dict = {}
        self._partial: dict = {}  # terminal id -> text after its last newline

    # -- Output primitives --------------------------------------------------------------------

    def line(self, text: str = "") -> None:
        """Write a whole line (ending any streamed text first)."""
        with self._lock:
            self._end_stream()
            self._write(text + "\n")

    def _end_stream(self) -> None:
        if self._stream is not None:
            self._write("\n")
            self._stream = None

    def _stream_text(self, kind: str, prefix: str, text: str) -> None:
        with self._lock:
            if self._stream != kind:
                self._end_stream()
                self._write(prefix)
                self._stream = kind
            self._write(text)

    def end(self) -> None:
        """End streamed text with a newline, if a line is open."""
        with self._lock:
            self._end_stream()

    # -- Updates ------------------------------------------------------------------------------

    def update(self, update: Any) -> None:
        """Render one ``SessionUpdate``."""
        if isinstance(update, s.AgentMessageChunk):
            self._stream_text("agent", "", _block_text(update.content))
        elif isinstance(update, s.AgentThoughtChunk):
            self._stream_text("thought", "(thinking) ", _block_text(update.content))
        elif isinstance(update, s.UserMessageChunk):
            self._stream_text("user", "you> ", _block_text(update.content))
        elif isinstance(update, (s.ToolCall, s.ToolCallUpdate)):
            self.tool_call(update)
        elif isinstance(update, s.Plan):
            self.line("[plan]")
            for entry in update.entries:
                mark = _PLAN_MARKS.get(_value(entry.status), "[?]")
                self.line(f"  {mark} {entry.content} ({_value(entry.priority)})")
        elif isinstance(update, s.AvailableCommandsUpdate):
            names = " ".join("/" + c.name for c in update.available_commands)
            self.line(f"[commands] {names or '(none)'}")
        elif isinstance(update, s.CurrentModeUpdate):
            self.line(f"[mode] now {update.current_mode_id}")
        elif isinstance(update, s.ConfigOptionUpdate):
            for text in describe_options(update.config_options):
                self.line(f"[config] {text}")
        elif isinstance(update, s.SessionInfoUpdate):
            if update.title is not UNSET:
                self.line(
                    f"[session] title: {update.title if update.title is not None else '(cleared)'}"
                )
        elif isinstance(update, s.UsageUpdate):
            cost = (
                f", cost {update.cost.amount} {update.cost.currency}"
                if isinstance(update.cost, s.Cost)
                else ""
            )
            self.line(f"[usage] {update.used}/{update.size} tokens{cost}")

    def tool_call(self, call: Any) -> None:
        """A tool call or an update of one: status, title, and its content (diffs, terminals)."""
        with self._lock:
            title = (
                call.title
                if isinstance(call.title, str)
                else self._titles.get(call.tool_call_id, call.tool_call_id)
            )
            self._titles[call.tool_call_id] = title
            status = _value(call.status) if call.status not in (UNSET, None) else None
            if isinstance(call, s.ToolCall):
                kind = _value(call.kind) if call.kind is not UNSET else "other"
                self.line(f"[tool] {title} ({kind}): {status or 'pending'}")
            elif status is not None:
                self.line(f"[tool] {title}: {status}")
            for item in call.content if isinstance(call.content, list) else []:
                self._tool_content(item)

    def _tool_content(self, item: Any) -> None:
        if isinstance(item, s.Diff):
            old = item.old_text if isinstance(item.old_text, str) else ""
            label = "new file" if not isinstance(item.old_text, str) else "diff"
            self.line(f"  [{label}] {item.path}")
            diff = list(
                difflib.unified_diff(old.splitlines(), item.new_text.splitlines(), lineterm="", n=2)
            )[2:]
            for text in diff[:_MAX_DIFF_LINES]:
                self.line(f"    {text}")
            if len(diff) > _MAX_DIFF_LINES:
                self.line(f"    ... {len(diff) - _MAX_DIFF_LINES} more lines")
        elif isinstance(item, s.Terminal):
            self.line(f"  [terminal {item.terminal_id}]")
        elif isinstance(item, s.Content):
            for text in _block_text(item.content).splitlines() or [""]:
                self.line(f"  | {text}")

    def terminal_output(self, terminal_id: str, text: str) -> None:
        """Live output of a terminal (spec TERM-08), line by line with its id."""
        with self._lock:
            # spec TERM-08: terminal output is shown live, as it is produced.
            *lines, rest = (self._partial.pop(terminal_id, "") + text).split("\n")
            for piece in lines:
                self.line(f"  {terminal_id}| {piece}")
            if rest:
                self._partial[terminal_id] = rest

    def flush_terminals(self) -> None:
        """Write the unfinished last lines of terminal output."""
        with self._lock:
            for terminal_id, rest in sorted(self._partial.items()):
                self.line(f"  {terminal_id}| {rest}")
            self._partial.clear()

    def stop_reason(self, reason: Any) -> None:
        """Show how the turn ended (``[turn ended: cancelled]``)."""
        self.line(f"[turn ended: {_value(reason)}]")
