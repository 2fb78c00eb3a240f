"""What a row of ``acpref show`` says: one-line labels of messages, peer text made inert.

Peers send anything: every reader here takes what it finds (``obj``, ``as_list``) and never
fails on a shape; every piece of peer text passes through ``snippet`` or ``inert``, which turn
control and bidirectional characters into visible escapes.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "SNIPPET",
    "inert",
    "snippet",
    "obj",
    "as_list",
    "text_of",
    "request_label",
    "update_label",
    "answer_label",
]

#: Characters of peer text in a one-line label.
SNIPPET = 72

# C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and isolates: text that
# could move or hide what a person reads.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """``text`` with every control or bidi character replaced by a visible escape."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def snippet(text: str, limit: int = SNIPPET) -> str:
    flat = " ".join(text.split())
    return inert(flat if len(flat) <= limit else flat[: limit - 1] + "…")


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
        detail = f"v{p.get('protocolVersion')} {info.get('name', '')}"
    elif method == "session/prompt" and isinstance(p.get("prompt"), list):
        detail = "“" + snippet(" ".join(text_of(b) for b in p["prompt"]), 48) + "”"
    elif method in ("session/new", "session/load", "session/resume") and "cwd" in p:
        detail = str(p.get("cwd"))
    elif method in ("fs/read_text_file", "fs/write_text_file"):
        detail = str(p.get("path", ""))
    elif method == "terminal/create":
        args = as_list(p.get("args"))
        detail = " ".join(str(a) for a in [p.get("command", ""), *args])
    elif method == "session/request_permission":
        call = obj(p.get("toolCall"))
        detail = str(call.get("title") or call.get("toolCallId") or "")
    elif method in ("session/set_mode",):
        detail = str(p.get("modeId", ""))
    elif method == "session/set_config_option":
        detail = f"{p.get('configId', '')} = {p.get('value', '')}"
    elif method == "elicitation/create":
        detail = str(p.get("message", ""))
    return f"{method} {snippet(detail, 48)}".rstrip()


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
        detail = " ".join(str(update.get(k)) for k in ("title", "status") if update.get(k))
    elif kind == "plan" and isinstance(update.get("entries"), list):
        detail = f"{len(update['entries'])} entries"
    elif kind == "current_mode_update":
        detail = str(update.get("currentModeId", ""))
    return kind, f"{snippet(kind or '?', 32)} {snippet(detail, 56)}".rstrip()


def answer_label(method: Optional[str], message: Dict[str, Any], unreadable: bool) -> str:
    if method is not None:
        name = method
    elif unreadable:
        name = "(to the unreadable line)"
    else:
        name = f"(no request has id {snippet(json.dumps(message.get('id')), 24)})"
    if "error" in message:
        error = obj(message["error"])
        text = snippet(str(error.get("message", "")), 48)
        return f"{name} error {error.get('code', '?')} {text}"
    r = obj(message.get("result"))
    detail = ""
    if method == "session/prompt":
        detail = str(r.get("stopReason", ""))
    elif method == "session/new":
        detail = str(r.get("sessionId", ""))
    elif method == "initialize":
        info = obj(r.get("agentInfo"))
        detail = f"v{r.get('protocolVersion')} {info.get('name', '')}"
    elif method == "session/request_permission":
        outcome = obj(r.get("outcome"))
        detail = str(outcome.get("optionId") or outcome.get("outcome") or "")
    elif method == "fs/read_text_file" and isinstance(r.get("content"), str):
        detail = f"{len(r['content'])} characters"
    return f"{name} result {snippet(detail, 48)}".rstrip()
