"""Which clause a malformed shape breaks: the specific sentence where a page has one.

The strict codec (``acpref.codec``) says *where* a params or result fails its schema; this
module says *which sentence* that breaks. A missing ``protocolVersion`` in ``initialize`` breaks
the initialization page's MUST, not a generic "matches the schema"; a bad image block breaks the
content page's sentence on images. Anything without a sentence of its own falls back to
OVERVIEW-01 (every message matches the schema). Used by ``_validate`` only.
"""

from __future__ import annotations

import re
from typing import Any, Optional

#: The clause a malformed content block breaks, by its type (content.mdx).
_CONTENT_CLAUSES = {
    "image": "CONTENT-06",  # spec CONTENT-06: base64 data and mimeType (uri optional)
    "audio": "CONTENT-06",  # spec CONTENT-06: base64 data and mimeType
    "resource": "CONTENT-07",  # spec CONTENT-07: text contents or blob contents, with a uri
    "resource_link": "CONTENT-08",  # spec CONTENT-08: uri and name
}
_PATH_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def content_clause(value: Any, path: str, part: str) -> Optional[str]:
    """The clause of the innermost image, audio or resource block a shape error lies in."""
    clause = None
    node = value
    for step in _PATH_STEP.finditer(path[len(part) :] if path.startswith(part) else path):
        kind = node.get("type") if isinstance(node, dict) else None
        if isinstance(kind, str) and kind in _CONTENT_CLAUSES:
            clause = _CONTENT_CLAUSES[kind]
        key, position = step.group(1), step.group(2)
        if key is not None and isinstance(node, dict) and key in node:
            node = node[key]
        elif position is not None and isinstance(node, list) and int(position) < len(node):
            node = node[int(position)]
        else:
            break
    else:
        kind = node.get("type") if isinstance(node, dict) else None
        if isinstance(kind, str) and kind in _CONTENT_CLAUSES:
            clause = _CONTENT_CLAUSES[kind]
    return clause


def shape_clause(method: Optional[str], part: str, value: Any) -> str:
    """The clause a malformed shape breaks: a specific one where the spec has it."""
    if method == "session/update" and part == "params":
        update = value.get("update") if isinstance(value, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        if kind == "current_mode_update":
            return "SCHEMA-03"  # spec SCHEMA-03: currentModeId, not modeId
        if kind in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
            return "SCHEMA-02"  # spec SCHEMA-02: a chunk carries one ContentBlock
        if kind == "usage_update":
            return "PROMPT-10"
        if kind == "notice":
            return "NOTICE-03"  # spec NOTICE-03: a severity and a non-empty title, required
        if kind in ("compaction_update", "compaction_summary_chunk"):
            # spec COMPACT-04: compactionId and status; compactionId and one content block.
            return "COMPACT-04"
        # spec SCHEMA-01, SCHEMA-24: {sessionId, update}, update one of the 14 stable kinds.
        return "SCHEMA-01"
    if method == "session/request_permission" and part == "result":
        return "SCHEMA-04"
    if method == "session/prompt" and part == "result":
        return "PROMPT-17"  # spec PROMPT-17: stopReason is one of the five
    if method == "session/prompt" and part == "params":
        return "PROMPT-02"  # spec PROMPT-02: sessionId, and prompt an array of ContentBlock
    if method == "initialize":
        if bad_version(value):
            return "SCHEMA-12"
        return "INIT-04" if part == "result" else "INIT-02"
    if method == "elicitation/create" and part == "params":
        return "ELICIT-08"  # spec ELICIT-08: mode and message, explicit (no default mode)
    if method == "elicitation/create" and part == "result":
        return "ELICIT-20"
    if part == "error":
        return "RPC-09"
    return "OVERVIEW-01"


def bad_version(value: Any) -> bool:
    version = value.get("protocolVersion") if isinstance(value, dict) else None
    return not (type(version) is int and 0 <= version <= 65535)
