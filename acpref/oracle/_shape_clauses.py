"""Which clause a malformed shape breaks: the specific sentence where a page has one.

The strict codec (``acpref.codec``) says *where* a params or result fails its schema; this
module says *which sentence* that breaks. A missing or malformed ``protocolVersion`` in
``initialize`` breaks the initialization page's MUST (INIT-02, INIT-04), not a generic "matches
the schema" nor SCHEMA-12's definition, which no keyworded sentence states; a bad image block
breaks the content page's sentence on images; a required field that a page's MUST sentence
names (``_FIELD_CLAUSES``) breaks that sentence. Anything without a sentence of its own falls
back to OVERVIEW-01 ("MUST NOT write anything ... that is not a valid ACP message"). Used by
``_validate`` only.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

from .._core.session_setup import SESSION_SETUP

#: The clause a malformed content block breaks, by its type (content.mdx).
_CONTENT_CLAUSES = {
    "image": "CONTENT-06",  # spec CONTENT-06: base64 data and mimeType (uri optional)
    "audio": "CONTENT-06",  # spec CONTENT-06: base64 data and mimeType
    "resource": "CONTENT-07",  # spec CONTENT-07: text contents or blob contents, with a uri
    "resource_link": "CONTENT-08",  # spec CONTENT-08: uri and name
}
_PATH_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")

#: The fields of a method's params or result that a MUST sentence of its page names: one missing
#: or malformed breaks that sentence, not only "a valid ACP message" (OVERVIEW-01). By (method,
#: part), then the field at the root of the part (spec_notes/oracle.md, "Which clause a shape
#: error is filed under").
_FIELD_CLAUSES: Dict[Tuple[str, str], Dict[str, str]] = {
    # spec INIT-02: "calling the `initialize` method with: - The latest protocol version
    # supported - The capabilities supported".
    ("initialize", "params"): {"protocolVersion": "INIT-02", "clientCapabilities": "INIT-02"},
    # spec INIT-04: "respond with the chosen protocol version and the capabilities it supports";
    # spec AUTH-01: each advertised authentication method has an id and a name.
    ("initialize", "result"): {
        "protocolVersion": "INIT-04",
        "agentCapabilities": "INIT-04",
        "authMethods": "AUTH-01",
    },
    # spec AUTH-07: methodId "Must be one of the methods advertised in the initialize response".
    ("authenticate", "params"): {"methodId": "AUTH-07"},
    # spec SETUP-01: session/new "required: cwd, mcpServers".
    ("session/new", "params"): {"cwd": "SETUP-01", "mcpServers": "SETUP-01"},
    # spec SETUP-02: "The Agent MUST respond with a unique Session ID".
    ("session/new", "result"): {"sessionId": "SETUP-02"},
    # spec SETUP-04: session/load "required: sessionId, cwd, mcpServers".
    ("session/load", "params"): {
        "sessionId": "SETUP-04",
        "cwd": "SETUP-04",
        "mcpServers": "SETUP-04",
    },
    # spec SETUP-15: "Clients MUST call the `session/close` method with the session ID".
    ("session/close", "params"): {"sessionId": "SETUP-15"},
    # spec LIST-02: "The Agent MUST respond with a list of sessions".
    ("session/list", "result"): {"sessions": "LIST-02"},
    # spec MODES-04: "The mode must be one of the modes advertised in `availableModes`".
    ("session/set_mode", "params"): {"modeId": "MODES-04"},
    # spec CONFIG-19: "respond with the complete list of all configuration options".
    ("session/set_config_option", "result"): {"configOptions": "CONFIG-19"},
    # spec PROMPT-02: session/prompt "required: sessionId, prompt".
    ("session/prompt", "params"): {"sessionId": "PROMPT-02", "prompt": "PROMPT-02"},
    # spec TOOL-10: each permission option "required: optionId, name, kind".
    ("session/request_permission", "params"): {"options": "TOOL-10"},
}

#: The clause of an MCP server entry, by its ``type`` (session-setup.mdx, MCP Servers).
_MCP_SERVER_CLAUSES = {
    "stdio": "SETUP-32",  # spec SETUP-32: "required: name, command, args, env"
    "http": "SETUP-33",  # spec SETUP-33: "required: name, url, headers"
    "sse": "SETUP-34",  # spec SETUP-34: "required: name, url, headers"
}


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


def shape_clause(method: Optional[str], part: str, value: Any, path: str = "") -> str:
    """The clause a malformed shape at ``path`` breaks: a specific one where the spec has it."""
    field = field_clause(method, part, value, path)
    if field is not None:
        return field
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
        # spec INIT-02, INIT-04: the rest of the handshake's shape (clientInfo, agentInfo...).
        return "INIT-04" if part == "result" else "INIT-02"
    if method == "elicitation/create" and part == "params":
        if _root(value, "mode") == "url":
            return "ELICIT-17"  # spec ELICIT-17: "required: elicitationId, url"
        return "ELICIT-08"  # spec ELICIT-08: mode and message, explicit (no default mode)
    if method == "elicitation/create" and part == "result":
        return "ELICIT-20"
    if part == "error":
        return "RPC-09"
    return "OVERVIEW-01"


def field_clause(method: Optional[str], part: str, value: Any, path: str) -> Optional[str]:
    """The clause of the page's MUST sentence that names the field a shape error lies in."""
    steps = _PATH_STEP.findall(path[len(part) :] if path.startswith(part) else "")
    field = steps[0][0] if steps else None
    if field == "mcpServers" and len(steps) > 1 and steps[1][1]:
        servers = _root(value, "mcpServers")
        at = int(steps[1][1])
        server = servers[at] if isinstance(servers, list) and at < len(servers) else None
        kind = server.get("type", "stdio") if isinstance(server, dict) else None
        if kind in _MCP_SERVER_CLAUSES:
            return _MCP_SERVER_CLAUSES[kind]
    if method is None or field is None:
        return None
    present = isinstance(value, dict) and field in value
    if part == "params" and field == "cwd" and method in SESSION_SETUP and present:
        # spec SETUP-25: a cwd that is there but no string (``"cwd": 5``) is no absolute path.
        # The required list (SETUP-01, SETUP-04: "required: cwd, ...") is met: the field is
        # present. Its type is the schema's, which no keyworded sentence states; the sentence it
        # breaks is "This directory: MUST be an absolute path", which the rules check too
        # (session_setup): one finding, under SETUP-25.
        return "SETUP-25"
    boolean = _root(value, "type") == "boolean"
    if (method, part, field) == ("session/set_config_option", "params", "value") and boolean:
        # spec CONFIG-18: "For `boolean` options, this must be a boolean": a value sent with
        # ``type: "boolean"`` that is no JSON boolean breaks that sentence (which the rules check
        # too, where the session's option is known: session_modes). Filed once, under it, not
        # also as "a valid ACP message" (OVERVIEW-01).
        return "CONFIG-18"
    return _FIELD_CLAUSES.get((method, part), {}).get(field)


def _root(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def bad_version(value: Any) -> bool:
    version = value.get("protocolVersion") if isinstance(value, dict) else None
    return not (type(version) is int and 0 <= version <= 65535)
