"""Plain-text rendering of a session as it streams: for the ``acpref client`` CLI and the demo.

Spec: prompt-turn.mdx, tool-calls.mdx, agent-plan.mdx, terminals.mdx (Embedding in Tool
Calls), slash-commands.mdx, session-modes.mdx, session-config-options.mdx; clauses TERM-08,
INIT-21, CONFIG-02. Text is written as it comes: Markdown stays its readable source (CONTENT-03
is not applicable to a plain-text terminal).

``Renderer`` turns updates into readable lines and hands them to a ``write`` callable the caller
gives (the CLI passes ``sys.stdout.write``): this module never touches stdout itself. Agent text
streams inline; everything else (thoughts, tool calls, diffs, plans, terminal output...) gets a
line of its own with a short bracketed tag. It is safe to call from several threads.

A text stream (a message, a thought, a compaction summary) is printed as it comes up to half of
``max_kept`` characters; then only its last half is held (``_kept.Shown``), and printed at its
end after ``[... N characters dropped ...]``. Terminal output is never held.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import threading
import unicodedata
from functools import partial
from typing import Any, Callable, Dict, List, Optional
from urllib.parse import urlsplit

from .. import schema as s
from ..schema import UNSET
from ..client._kept import DEFAULT_MAX_KEPT, OVERHEAD, Budget, Shown, cost_of
from ..client.plans import describe_plan_operation
from ..client.subagents import describe_subagent_update

__all__ = [
    "Renderer",
    "describe_listed",
    "describe_options",
    "describe_url",
    "display_name",
    "inert",
    "permission_lines",
]

_PLAN_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
_MAX_DIFF_LINES = 60
_NOTICE_SEVERITIES = ("info", "warning", "error")
_MAX_INPUT = 600


# -- Making the peer's text inert ---------------------------------------------------------------
#
# Everything an agent sends (message text, titles, paths, diffs, URLs, error messages, its
# stderr, the output of the commands it runs) is shown on a terminal, which obeys escape
# sequences: OSC 52 writes the clipboard, OSC 0 the window title, OSC 8 hides a link behind
# text, CSI (ESC [ or the one-byte C1 0x9B) moves the cursor and erases; a carriage return
# rewinds the line. With those an agent can make a permission prompt show a harmless command
# while it asked for another, or a URL consent show a lookalike host (ELICIT-34, ELICIT-36).
# ``inert`` is the one function every path from the peer to the screen goes through.

#: Always made visible: C0 controls (but newline and tab in multi-line text), DEL, C1 controls,
#: the bidirectional overrides and isolates that reorder what is drawn ("Trojan Source"), and
#: lone surrogates (``"\ud800"`` is legal JSON text, but no terminal encoding can write it).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_MULTILINE = re.compile(f"[{_CONTROLS}]")
#: In one-line text (a title, a URL, a host, an id) newline and tab too, and every other
#: character that draws nothing or breaks a line: format characters (zero-width space, marks),
#: line and paragraph separators, unassigned and private-use code points.
_ONE_LINE_CANDIDATES = re.compile("[^\x20-\x7e]")
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _one_line_char(match: "re.Match[str]") -> str:
    char = match.group()
    if char in "\x1b\x9b" or unicodedata.category(char) in _INVISIBLE or _MULTILINE.match(char):
        return _visible(char)
    if unicodedata.category(char) == "Zs" and char != " ":
        return _visible(char)  # a space that is not one (no-break, ideographic...): shown
    return char


def inert(text: Any, *, multiline: bool = False) -> str:
    """``text`` (anything; it is made a ``str``) with every control character made visible.

    ``\x1b]52;c;...`` is shown as ``\\x1b]52;c;...``: the terminal draws it instead of obeying
    it. ``multiline`` keeps newlines and tabs (message text, diffs, terminal output); without
    it (the default: titles, URLs, ids, one-line messages) they are shown too, with every
    character that draws nothing (zero-width, format characters), so what the user reads on
    one line is all that is there.
    """
    text = text if isinstance(text, str) else str(text)
    if multiline:
        return _MULTILINE.sub(lambda m: _visible(m.group()), text)
    if text.isascii() and text.isprintable():
        return text
    return _ONE_LINE_CANDIDATES.sub(_one_line_char, text)


def display_name(info: Optional[s.Implementation], fallback: str = "agent") -> str:
    """The peer's title when it has one, else its name (spec INIT-21), made inert."""
    if info is None:
        return fallback
    # spec INIT-21: the title when present, else the name.
    return inert(info.title if isinstance(info.title, str) and info.title else info.name)


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
        name, option_id = inert(option.name), inert(option.id)
        if isinstance(kind, s.SessionConfigBoolean):
            lines.append(
                f"{option_id} = {'on' if kind.current_value else 'off'}  ({name}; on/off)"
            )
        elif isinstance(kind, s.SessionConfigSelect):
            values = []
            for item in kind.options:
                values += (
                    [v.value for v in item.options]
                    if isinstance(item, s.SessionConfigSelectGroup)
                    else [item.value]
                )
            shown = ", ".join(inert(v) for v in values)
            lines.append(f"{option_id} = {inert(kind.current_value)}  ({name}; {shown})")
    return lines


def describe_url(url: str) -> List[str]:
    """Lines that show a URL before consent: the whole URL, its host, and warnings.

    spec ELICIT-34: the complete URL is shown; ELICIT-36: the domain stands out, and lookalike
    hosts (Punycode, non-ASCII, a bare IP address, credentials before an ``@``) are flagged.
    """
    # spec ELICIT-33, ELICIT-34: the whole URL is shown before consent is asked, every
    # character of it: one that draws nothing or moves the cursor is shown as an escape, so no
    # part of the URL can be hidden or drawn over.
    shown = inert(url)
    lines = [f"  URL:  {shown}"]
    hidden = ["the URL has invisible or control characters (shown as \\x.. / \\u....)"]
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return lines + [f"  WARNING: {w}" for w in (hidden if shown != url else [])] + [
            "  WARNING: this URL cannot be parsed"
        ]
    lines.append(f"  host: {inert(host.upper()) if host else '(none)'}")
    warnings = hidden if shown != url else []  # spec ELICIT-36: suspicious hosts are flagged
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
    labels = [inert(_value(x)) for x in (call.kind, call.name) if x not in (UNSET, None)]
    kind = f" ({', '.join(labels)})" if labels else ""
    # spec TOOL-21: the question shows the tool call's details, the context being approved.
    lines = [f"[permission] the agent wants to run: {inert(title)}{kind}"]
    if call.raw_input not in (UNSET, None):
        shown = inert(repr(call.raw_input))
        if len(shown) > _MAX_INPUT:
            # The whole input is what will run: a cut is said, never silent.
            shown = f"{shown[:_MAX_INPUT]}... ({len(shown) - _MAX_INPUT} more characters)"
        lines.append(f"  input: {shown}")
    else:
        # spec TOOL-22: no rawInput: the arguments are unknown, and the question says so.
        lines.append("  input: (not given: the arguments are unknown)")
    for n, option in enumerate(request.options, start=1):
        lines.append(f"  {n}) {inert(option.name)} [{inert(_value(option.kind))}]")
    return lines


def describe_listed(info: s.SessionInfo) -> str:
    """One line for a ``session/list`` entry: id, title, cwd and the extra roots as reported."""
    dirs = info.additional_directories
    if isinstance(dirs, list):
        roots = ", ".join(inert(d) for d in dirs) if dirs else "none"
    else:
        # spec LIST-18: omitted is "not reported", never proof that the session has no roots;
        # only an explicit [] says none.
        roots = "not reported"
    title = f" {inert(repr(info.title))}" if isinstance(info.title, str) else ""
    return f"{inert(info.session_id)}{title} in {inert(info.cwd)}; additional roots: {roots}"


class _Sink:
    """One output (stdout, stderr) and the streamed line open on it, if any."""

    def __init__(self, write: Callable[[str], None], max_kept: int) -> None:
        self.write = write
        self.stream: Optional[str] = None  # "agent", "thought", "user", "term:ID" while open
        self.last = "\n"  # the last character written
        self.max_kept = max_kept
        self.shown: Optional[Shown] = None  # of the text stream open: what it held back

    def put(self, text: str) -> None:
        if text:
            self.write(text)
            self.last = text[-1]

    def text(self, text: str) -> None:
        """Streamed text: printed at once within the first half of the bound, else held."""
        self.shown = self.shown if self.shown is not None else Shown(self.max_kept)
        self.put(inert(self.shown.now(text), multiline=True))

    def end(self) -> None:
        if self.stream is not None:
            if self.shown is not None:  # what was held: the marker, then the tail
                self.put(inert(self.shown.rest(), multiline=True))
            if self.last != "\n":
                self.put("\n")
            self.stream, self.shown = None, None


class Renderer:
    """Formats updates as text. ``write(text)`` receives every piece, newlines included.

    With ``notes``, the agent's answer (its message text) goes to ``write`` and everything else
    (thoughts, tool calls, plans, the lines of ``line``) to ``notes``: ``acpref client -p``
    keeps stdout for the answer. ``shared``: both end on one screen (a terminal), so a note
    ends the answer's open line first. Every piece of the peer's text goes through ``inert``.
    """

    def __init__(
        self,
        write: Callable[[str], None],
        notes: Optional[Callable[[str], None]] = None,
        *,
        shared: bool = False,
        max_kept: int = DEFAULT_MAX_KEPT,
    ) -> None:
        self._lock = threading.RLock()  # one writer at a time; guards the fields below
        self._main = _Sink(write, max_kept)
        self._notes = _Sink(notes, max_kept) if notes is not None else self._main
        self._shared = shared
        #: Tool call titles by id, for the updates that give none, within ``max_kept``.
        self._titles: Dict[str, str] = {}
        self._kept = Budget(max_kept)
        self._plan: List[tuple] = []

    # -- Output primitives --------------------------------------------------------------------

    def line(self, text: str = "") -> None:
        """Write a whole line (ending any streamed text first), made inert."""
        with self._lock:
            self._notes.end()
            if self._shared:
                self._main.end()
            self._notes.put(inert(text) + "\n")

    def _stream_text(self, sink: _Sink, kind: str, prefix: str, text: str) -> None:
        """Streamed text of ``kind``: it continues the open line when that line is its own."""
        if not text:
            return
        with self._lock:
            if sink.stream != kind:
                sink.end()
                if self._notes is not sink:
                    self._notes.end()
                sink.put(prefix)
                sink.stream = kind
            sink.text(text)

    def end(self) -> None:
        """End streamed text with a newline, if a line is open."""
        with self._lock:
            self._main.end()
            self._notes.end()

    # -- Updates ------------------------------------------------------------------------------

    def update(self, update: Any) -> None:
        """Render one ``SessionUpdate``."""
        if isinstance(update, s.AgentMessageChunk):
            self._chunk(self._main, "agent", "", update.content)
        elif isinstance(update, s.AgentThoughtChunk):
            self._chunk(self._notes, "thought", "(thinking) ", update.content)
        elif isinstance(update, s.UserMessageChunk):
            self._chunk(self._notes, "user", "you> ", update.content)
        elif isinstance(update, (s.ToolCall, s.ToolCallUpdate)):
            self.tool_call(update)
        elif isinstance(update, s.Plan):
            self.plan(update.entries)
        elif isinstance(update, (s.PlanUpdate, s.PlanRemoved)):
            for text in describe_plan_operation(update):  # provisional: plan operations
                self.line(text)  # made inert there
        elif isinstance(update, (s.SubagentUpdate, s.SessionMessage, s.SessionMessageChunk)):
            for text in describe_subagent_update(update):  # provisional: subagent sessions
                self.line(text)
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
        elif isinstance(update, s.Notice):
            self.notice(update)
        elif isinstance(update, s.CompactionUpdate):
            self.compaction(update)
        elif isinstance(update, s.CompactionSummaryChunk):
            self._chunk(self._notes, "compaction", "[compaction summary] ", update.content)
        # spec-gap forward-compatible: any other (Unknown) kind is not shown.

    def notice(self, notice: Any) -> None:
        """A live notice, on a line of its own; plain text, never part of the conversation."""
        severity = _value(notice.severity)
        # spec NOTICE-04: an unknown severity is shown generically, nothing inferred from it.
        label = f"notice {severity}" if severity in _NOTICE_SEVERITIES else "notice"
        detail = f": {notice.description}" if isinstance(notice.description, str) else ""
        self.line(f"[{label}] {notice.title}{detail}")

    def compaction(self, update: Any) -> None:
        """A compaction's status; the summary when it is given whole (COMPACT-06, COMPACT-08)."""
        status = _value(update.status)
        error = f": {update.error}" if isinstance(update.error, str) else ""
        self.line(f"[compaction {update.compaction_id}] {status}{error}")
        for block in update.summary if isinstance(update.summary, list) else []:
            for text in _block_text(block).splitlines():
                self.line(f"  | {text}")

    def _chunk(self, sink: _Sink, kind: str, prefix: str, block: Any) -> None:
        with self._lock:
            if isinstance(block, s.TextContent):
                self._stream_text(sink, kind, prefix, block.text)
                return
            # A file, an image...: a marker set apart from the text around it by spaces.
            space = " " if sink.stream == kind and not sink.last.isspace() else ""
            self._stream_text(sink, kind, prefix, f"{space}{_block_text(block)} ")

    def plan(self, entries: List[Any]) -> None:
        """The plan: whole the first time, then only the entries that changed (PLAN-05)."""
        new = [
            (inert(e.content), _value(e.status), _value(e.priority)) for e in entries
        ]
        with self._lock:
            old, self._plan = self._plan, new
            # spec PLAN-05: each plan replaces the last whole; what is shown is what changed.
            same_steps = len(old) > 0 and [c for c, _, _ in old[: len(new)]] == [
                c for c, _, _ in new[: len(old)]
            ]
            if not same_steps:
                self.line(f"[plan] {len(new)} {'entry' if len(new) == 1 else 'entries'}")
                changed = list(enumerate(new))
            else:
                changed = [(i, e) for i, e in enumerate(new) if i >= len(old) or old[i] != e]
                if len(new) < len(old):
                    gone = len(old) - len(new)
                    self.line(f"[plan] {gone} {'entry' if gone == 1 else 'entries'} removed")
            done = sum(1 for _, status, _ in new if status == "completed")
            for i, (content, status, priority) in changed:
                mark = _PLAN_MARKS.get(status, "[?]")
                prefix = "  " if not same_steps else f"[plan {done}/{len(new)}] "
                self.line(f"{prefix}{mark} {content} ({priority})")

    def tool_call(self, call: Any) -> None:
        """A tool call or an update of one: status, title, and its content (diffs, terminals)."""
        with self._lock:
            title = (
                inert(call.title)
                if isinstance(call.title, str)
                else self._titles.get(call.tool_call_id, inert(call.tool_call_id))
            )
            key, forget = call.tool_call_id, partial(self._titles.pop, call.tool_call_id, None)
            self._titles[key] = title  # with its entries in two tables: 2 * OVERHEAD
            self._kept.charge(key, cost_of((key, title)) + 2 * OVERHEAD, forget)
            status = _value(call.status) if call.status not in (UNSET, None) else None
            if isinstance(call, s.ToolCall):
                kind = _value(call.kind) if call.kind is not UNSET else "other"
                # spec TOOL-19: the tool's name is a secondary label; the title stays first.
                name = f", {call.name}" if isinstance(call.name, str) else ""
                self.line(f"[tool] {title} ({kind}{name}): {status or 'pending'}")
            elif status is not None:
                self.line(f"[tool] {title}: {status}")
            for item in call.content if isinstance(call.content, list) else []:
                self._tool_content(item)

    def tool_cancelled(self, tool_call_id: str) -> None:
        """A tool call left unfinished by a cancelled turn (spec PROMPT-20)."""
        title = self._titles.get(tool_call_id, inert(tool_call_id))
        self.line(f"[tool] {title}: cancelled (the turn was cancelled before it finished)")

    def _tool_content(self, item: Any) -> None:
        if isinstance(item, s.Diff):
            old = item.old_text if isinstance(item.old_text, str) else ""
            label = "new file" if not isinstance(item.old_text, str) else "diff"
            self.line(f"  [{label}] {item.path}")
            diff = list(
                difflib.unified_diff(old.split("\n"), item.new_text.split("\n"), lineterm="", n=2)
            )[2:]
            for text in diff[:_MAX_DIFF_LINES]:
                self.line(f"    {text}")
            if len(diff) > _MAX_DIFF_LINES:
                self.line(f"    ... {len(diff) - _MAX_DIFF_LINES} more lines")
        elif isinstance(item, s.Terminal):
            self.line(f"  [terminal {item.terminal_id}]")
        elif isinstance(item, s.SessionReference):
            # spec SUBAGENT-54 (provisional): display only; nothing is registered or granted.
            # spec SUBAGENT-56: one line naming the session, never its expanded content.
            self.line(f"  [session {item.session_id}]")
        elif isinstance(item, s.Content):
            for text in _block_text(item.content).split("\n"):
                self.line(f"  | {text}")

    def terminal_output(self, terminal_id: str, text: str) -> None:
        """Live output of a terminal (spec TERM-08), line by line with its id.

        Text is written as it comes, an unfinished line included (it is continued by the next
        piece of the same terminal, or ended by other output): nothing is kept, whatever the
        length of a line.
        """
        with self._lock:
            # spec TERM-08: terminal output is shown live, as it is produced.
            kind, prefix = f"term:{terminal_id}", f"  {inert(terminal_id)}| "
            sink, start = self._notes, 0
            while start < len(text):
                newline = text.find("\n", start)
                piece = text[start:] if newline < 0 else text[start:newline]
                if sink.stream != kind:
                    self.end()
                    sink.put(prefix)
                    sink.stream = kind
                sink.put(inert(piece, multiline=True))
                if newline < 0:
                    break
                sink.put("\n")
                sink.stream = None
                start = newline + 1

    def flush_terminals(self) -> None:
        """End the unfinished last line of terminal output, if one is open."""
        with self._lock:
            if self._notes.stream is not None and self._notes.stream.startswith("term:"):
                self._notes.end()

    def stop_reason(self, reason: Any) -> None:
        """Show how the turn ended (``[turn ended: cancelled]``)."""
        self.line(f"[turn ended: {_value(reason)}]")
