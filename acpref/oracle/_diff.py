"""``diff``: compare two transcripts of the same scenario, modulo what differs run to run.

Two runs of one scenario never match byte for byte: request ids, session ids, message ids, tool
call ids, terminal ids, elicitation ids and timestamps are chosen afresh each time. ``normalize``
replaces each of them by a placeholder numbered in order of first appearance (``<session:1>``,
``<request:client:3>``), per transcript, so that two runs that did the same thing normalize to
the same sequence. ``diff`` walks both sequences and returns the first divergence.

Message records are compared with their sender; ``eof`` and ``oversize`` events are left out
(their timing varies). A line that is not JSON is compared as text. What each side sent is
compared in the order it sent it; how the two directions interleave is not, by default: a
message of the client and one of the agent written at the same moment cross on the wire, and
the spec leaves their order free (the echo agent's ``available_commands_update`` and the
client's next request, typically). ``strict_order=True`` compares the interleaving too. Pure
functions; the command line is ``acpref diff`` (``acpref/_cli/diff.py``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Tuple

import attrs

from ._show_labels import brief, inert
from ._transcript import Record, read_transcript

__all__ = ["Divergence", "diff", "normalize", "reordered"]

#: Keys whose string values are ids chosen by one run: key -> placeholder kind.
_ID_KEYS = {
    "sessionId": "session",
    "messageId": "message",
    "toolCallId": "tool-call",
    "terminalId": "terminal",
    "elicitationId": "elicitation",
}
#: Keys whose values are timestamps.
_TIME_KEYS = frozenset({"updatedAt", "lastModified"})


@attrs.frozen
class Divergence:
    """Where two transcripts first differ: the message position, and each side there."""

    position: int
    left: Optional[Tuple[str, Any]]
    right: Optional[Tuple[str, Any]]
    #: Up to three matching (sender, message) pairs before the divergence.
    context: List[Tuple[str, Any]]
    #: Where the two messages first differ (``$.params.update.content.text``), or None.
    path: Optional[str] = None

    def format_text(self, left_name: str = "A", right_name: str = "B") -> str:
        lines = [f"transcripts diverge at message #{self.position}"]
        for sender, message in self.context:
            lines.append(f"    = {sender:<6} {_show(message)}")
        for name, side in ((left_name, self.left), (right_name, self.right)):
            if side is None:
                lines.append(f"  {name}: (no more messages)")
            else:
                lines.append(f"  {name}: {side[0]:<6} {_show(side[1])}")
        if self.path is not None:
            lines.append(f"  first difference at {self.path}")
        return "\n".join(lines)


class _Names:
    """Placeholders numbered by first appearance, per kind."""

    def __init__(self) -> None:
        self._seen: Dict[Tuple[str, Any], str] = {}
        self._counts: Dict[str, int] = {}

    def __call__(self, kind: str, value: Any) -> str:
        try:
            key = (kind, json.dumps(value, sort_keys=True))
        except (ValueError, RecursionError):  # not an id JSON-RPC allows: named once each
            key = (kind, f"#{len(self._seen)}")
        name = self._seen.get(key)
        if name is None:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            name = self._seen[key] = f"<{kind}:{self._counts[kind]}>"
        return name


def normalize(records: Iterable[Record]) -> List[Tuple[str, Any]]:
    """``(sender, message)`` per message record, with run-specific values replaced."""
    names = _Names()
    out: List[Tuple[str, Any]] = []
    for record in records:
        if not record.is_message:
            continue
        raw = record.raw or b""
        try:
            message: Any = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or too deep to decode
            out.append((record.sender, raw.decode("utf-8", "replace")))
            continue
        out.append((record.sender, _normalize_message(record.sender, message, names)))
    return out


def _normalize_message(sender: str, message: Any, names: _Names) -> Any:
    if not isinstance(message, dict):
        return _walk(message, names)
    peer = "agent" if sender == "client" else "client"
    out = dict(message)
    if "id" in out:
        # A request's id belongs to its sender; a response's to the peer that asked.
        owner = sender if "method" in out else peer
        out["id"] = names(f"request:{owner}", out["id"])
    params = out.get("params")
    if isinstance(params, dict):
        params = dict(params)
        if out.get("method") == "$/cancel_request" and "requestId" in params:
            params["requestId"] = names(f"request:{sender}", params["requestId"])
        elif out.get("method") == "elicitation/create" and "requestId" in params:
            params["requestId"] = names(f"request:{peer}", params["requestId"])
        out["params"] = params
    return _walk(out, names)


def _walk(value: Any, names: _Names) -> Any:
    if isinstance(value, dict):
        out: Dict[str, Any] = {}
        for key, item in value.items():
            if key in _ID_KEYS and isinstance(item, (str, int)):
                out[key] = names(_ID_KEYS[key], item)
            elif key in _TIME_KEYS and isinstance(item, str):
                out[key] = "<timestamp>"
            else:
                out[key] = _walk(item, names)
        return out
    if isinstance(value, list):
        return [_walk(item, names) for item in value]
    return value


def diff(left: Any, right: Any, *, strict_order: bool = False) -> Optional[Divergence]:
    """The first divergence between two transcripts (paths or records), or None if they match.

    By default each side's messages are compared in the order that side sent them, and the
    interleaving of the two directions is free (see the module's doc); ``strict_order`` compares
    the transcripts message by message as recorded.
    """
    a = normalize(read_transcript(left) if not _is_records(left) else left)
    b = normalize(read_transcript(right) if not _is_records(right) else right)
    if strict_order or a == b:
        return _first_divergence(a, b, range(max(len(a), len(b))), range(max(len(a), len(b))))
    found: Optional[Divergence] = None
    for sender in sorted({m[0] for m in a} | {m[0] for m in b}):
        mine_a = [i for i, m in enumerate(a) if m[0] == sender]
        mine_b = [i for i, m in enumerate(b) if m[0] == sender]
        divergence = _first_divergence(a, b, mine_a, mine_b)
        if divergence is not None and (found is None or divergence.position < found.position):
            found = divergence
    return found


def reordered(left: Any, right: Any) -> bool:
    """True when the transcripts match but their two directions interleave differently."""
    a = normalize(read_transcript(left) if not _is_records(left) else left)
    b = normalize(read_transcript(right) if not _is_records(right) else right)
    return a != b and diff(left, right) is None


def _first_divergence(
    a: List[Tuple[str, Any]], b: List[Tuple[str, Any]], at_a: Any, at_b: Any
) -> Optional[Divergence]:
    """Walk positions ``at_a`` of ``a`` and ``at_b`` of ``b`` side by side."""
    at_a, at_b = list(at_a), list(at_b)
    for n in range(max(len(at_a), len(at_b))):
        x = a[at_a[n]] if n < len(at_a) and at_a[n] < len(a) else None
        y = b[at_b[n]] if n < len(at_b) and at_b[n] < len(b) else None
        if x != y:
            path = None
            if x is not None and y is not None:
                path = "sender" if x[0] != y[0] else _first_difference(x[1], y[1], "$")
            position = at_a[n] if n < len(at_a) else len(a)
            context = a[max(0, position - 3) : position]
            return Divergence(position=position, left=x, right=y, context=context, path=path)
    return None


def _first_difference(x: Any, y: Any, path: str) -> Optional[str]:
    """The JSON path where two values first differ, depth first, in key order."""
    if isinstance(x, dict) and isinstance(y, dict):
        for key in sorted(set(x) | set(y)):
            if key not in x or key not in y:
                return f"{path}.{key}"
            found = _first_difference(x[key], y[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(x, list) and isinstance(y, list):
        for i, (a, b) in enumerate(zip(x, y)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None if len(x) == len(y) else f"{path}[{min(len(x), len(y))}]"
    return None if x == y and type(x) is type(y) else path


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(r, Record) for r in value)


def _show(message: Any, limit: int = 160) -> str:
    """A message as one inert line (a lone surrogate or a control as its escape)."""
    if isinstance(message, str):
        text = message
    else:
        try:
            text = json.dumps(message, sort_keys=True, ensure_ascii=False)
        except (ValueError, RecursionError):  # deeper than json writes: nesting as a placeholder
            text = brief(message, limit, quote=True)
    text = inert(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
