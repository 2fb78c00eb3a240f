"""What a row of ``acpref show`` says: one-line labels of messages, peer text made inert.

Peers send anything: every reader here takes what it finds (``obj``, ``as_list``) and never
fails on a shape; every piece of peer text passes through ``snippet``, ``inert`` or ``brief``,
which turn control and bidirectional characters, and lone surrogates (legal in JSON text as
``"\\ud800"``, not encodable as UTF-8 once decoded), into visible escapes. ``brief`` is the one
way a peer's value of any shape becomes text: short, and nesting beyond ``DEPTH`` levels shown
as a placeholder, so that no value is too deep or too big to label. ``decode_line`` reads a
line whatever it holds, and says why one cannot be read. ``level_class``: a finding's colour.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

from .._core import Finding

__all__ = [
    "LEVELS",
    "PROBE",
    "level_class",
    "SNIPPET",
    "DEPTH",
    "inert",
    "snippet",
    "brief",
    "decode_line",
    "obj",
    "as_list",
    "text_of",
    "request_label",
    "update_label",
    "answer_label",
]

#: The level classes a finding is drawn in, the worst first.
LEVELS = ("MUST", "SHOULD", "spec-gap", "warning")
#: The class of a finding blamed on acpref's own side of a check (its driver or grading agent),
#: which breaks rules on purpose to see what the subject does: drawn apart, counted apart.
PROBE = "probe"


def level_class(f: Finding) -> str:
    """The colour a finding is drawn in: ``MUST``, ``SHOULD``, ``spec-gap`` or ``warning``."""
    if f.clause.startswith("spec-gap") or f.level == "spec-gap":
        return "spec-gap"  # a decision, or a clause no keyworded sentence states
    if f.level in ("MUST", "MUST NOT"):
        return "MUST"
    if f.level in ("SHOULD", "SHOULD NOT"):
        return "SHOULD"
    return "warning"


#: Characters of peer text in a one-line label.
SNIPPET = 72
#: Levels of a peer's value that ``brief`` spells out; deeper ones are a placeholder.
DEPTH = 4
#: What ``brief`` shows for a value nested deeper than ``DEPTH``.
DEEP = "{…}"

# C0 and C1 controls, DEL, the bidirectional embeddings, overrides and isolates (text that could
# move or hide what a person reads), and the surrogates, which no UTF-8 page can hold: a JSON
# text may spell a lone one as an escape, and ``json.loads`` decodes it as it is.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def inert(text: str) -> str:
    """``text`` with every control, bidi or surrogate character replaced by a visible escape."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def brief(value: Any, limit: int = SNIPPET, *, quote: bool = False) -> str:
    """Any decoded JSON value as one inert line of at most ``limit`` characters; never raises.

    A string is itself (in JSON quotes with ``quote``), anything else compact JSON; what is
    nested deeper than ``DEPTH`` levels is ``{…}`` and what passes ``limit`` is cut with ``…``.
    """
    if isinstance(value, str) and not quote:
        return snippet(value, limit)
    parts: List[str] = []
    budget = [limit + 1]

    def put(text: str) -> bool:
        parts.append(text)
        budget[0] -= len(text)
        return budget[0] > 0

    def walk(v: Any, depth: int) -> bool:
        if isinstance(v, dict):
            if depth >= DEPTH:
                return put(DEEP)
            if not put("{"):
                return False
            for i, (k, item) in enumerate(v.items()):
                if i and not put(","):
                    return False
                if not put(json.dumps(k) + ":") or not walk(item, depth + 1):
                    return False
            return put("}")
        if isinstance(v, list):
            if depth >= DEPTH:
                return put(DEEP)
            if not put("["):
                return False
            for i, item in enumerate(v):
                if (i and not put(",")) or not walk(item, depth + 1):
                    return False
            return put("]")
        if isinstance(v, str):
            return put(json.dumps(v[:limit], ensure_ascii=False))
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**limit:
            return put("…")  # too long to spell: str() of it costs its digits
        try:
            return put(json.dumps(v))
        except ValueError:  # a value JSON has no spelling for
            return put("?")

    walk(value, 0)
    return snippet("".join(parts), limit)


def snippet(text: str, limit: int = SNIPPET) -> str:
    flat = " ".join(text.split())
    return inert(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def decode_line(raw: bytes) -> Tuple[Any, str]:
    """The JSON value of a line, and why it is unreadable when it is (the value is then None)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    try:
        value = json.loads(text)
    except RecursionError:
        # Too deep for the decoder, as for the oracle (acpref._core.envelope) and a receiver.
        return None, "nested too deep"
    except ValueError:
        return None, "not JSON"
    if not isinstance(value, dict):
        return value, f"a JSON {type(value).__name__}"
    return value, ""


def obj(value: Any) -> Dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one: peers send anything."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []


def text_of(block: Any) -> str:
    if isinstance(block, dict):
        if isinstance(block.get("text"), str):
            return block["text"]
        if block.get("type") in ("resource_link", "image", "audio"):
            return f"[{block.get('type')} {block.get('uri') or block.get('mimeType') or ''}]"
    return ""


def request_label(method: str, params: Any) -> str:
    p = obj(params)
    detail = ""
    if method == "initialize":
        info = obj(p.get("clientInfo"))
        detail = f"v{brief(p.get('protocolVersion'), 12)} {brief(info.get('name', ''))}"
    elif method == "session/prompt" and isinstance(p.get("prompt"), list):
        detail = "“" + snippet(" ".join(text_of(b) for b in p["prompt"]), 48) + "”"
    elif method in ("session/new", "session/load", "session/resume") and "cwd" in p:
        detail = brief(p.get("cwd"))
    elif method in ("fs/read_text_file", "fs/write_text_file"):
        detail = brief(p.get("path", ""))
    elif method == "terminal/create":
        args = as_list(p.get("args"))[:8]
        detail = " ".join(brief(a) for a in [p.get("command", ""), *args])
    elif method == "session/request_permission":
        call = obj(p.get("toolCall"))
        detail = brief(call.get("title") or call.get("toolCallId") or "")
    elif method in ("session/set_mode",):
        detail = brief(p.get("modeId", ""))
    elif method == "session/set_config_option":
        detail = f"{brief(p.get('configId', ''))} = {brief(p.get('value', ''))}"
    elif method == "elicitation/create":
        detail = brief(p.get("message", ""))
    return f"{inert(method)} {snippet(detail, 48)}".rstrip()


def update_label(params: Any) -> Tuple[Optional[str], str]:
    update = params.get("update") if isinstance(params, dict) else None
    if not isinstance(update, dict):
        return None, "session/update"
    kind = update.get("sessionUpdate")
    kind = kind if isinstance(kind, str) else None
    detail = ""
    if kind in ("agent_message_chunk", "user_message_chunk", "agent_thought_chunk"):
        detail = "“" + snippet(text_of(update.get("content")), 48) + "”"
    elif kind in ("tool_call", "tool_call_update"):
        detail = " ".join(brief(update.get(k)) for k in ("title", "status") if update.get(k))
    elif kind == "plan" and isinstance(update.get("entries"), list):
        detail = f"{len(update['entries'])} entries"
    elif kind == "current_mode_update":
        detail = brief(update.get("currentModeId", ""))
    return kind, f"{snippet(kind or '?', 32)} {snippet(detail, 56)}".rstrip()


def answer_label(method: Optional[str], message: Dict[str, Any], unreadable: bool) -> str:
    if method is not None:
        name = inert(method)
    elif unreadable:
        name = "(to the unreadable line)"
    else:
        name = f"(no request has id {brief(message.get('id'), 24, quote=True)})"
    if "error" in message:
        error = obj(message["error"])
        text = brief(error.get("message", ""), 48)
        return f"{name} error {brief(error.get('code', '?'), 12)} {text}"
    r = obj(message.get("result"))
    detail = ""
    if method == "session/prompt":
        detail = brief(r.get("stopReason", ""))
    elif method == "session/new":
        detail = brief(r.get("sessionId", ""))
    elif method == "initialize":
        info = obj(r.get("agentInfo"))
        detail = f"v{brief(r.get('protocolVersion'), 12)} {brief(info.get('name', ''))}"
    elif method == "session/request_permission":
        outcome = obj(r.get("outcome"))
        detail = brief(outcome.get("optionId") or outcome.get("outcome") or "")
    elif method == "fs/read_text_file" and isinstance(r.get("content"), str):
        detail = f"{len(r['content'])} characters"
    return f"{name} result {snippet(detail, 48)}".rstrip()
