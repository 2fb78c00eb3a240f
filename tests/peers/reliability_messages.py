"""Valid messages of every ACP method, and the ways the fuzz tests break them.

Used by ``tests/test_fuzz.py``. ``templates(session_id, root)`` gives one valid params object per
method of ``acpref.methods.METHODS`` (checked against the schema by the test module's guard),
aimed at a session and files that exist, so that a mutation that keeps a message valid reaches
the real handler. The mutations (hypothesis strategies) drop and rename keys, swap a value for
one of another type, put in huge values and deep nesting, and change the envelope (id shapes,
method names, ``jsonrpc``).

``Raw`` marks JSON that Python's ``json`` cannot write: a number such as ``1e400``, nesting deeper
than its recursion limit. ``dumps`` puts its text into the line as it is.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List, Tuple

from hypothesis import strategies as st

from acpref.methods import METHODS


class Raw:
    """JSON written as its text: a number Python cannot write (``1e400``), deep nesting."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text})"


def dumps(message: Any) -> bytes:
    """One line of JSON (without the newline); ``Raw`` numbers written as their text."""
    raws: List[str] = []

    def default(value: Any) -> Any:
        if isinstance(value, Raw):
            raws.append(value.text)
            return f"\x00raw{len(raws) - 1}\x00"
        raise TypeError(type(value).__name__)

    text = json.dumps(message, default=default, separators=(",", ":"))
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00raw{i}\x00"), raw)
    return text.encode("utf-8", "surrogatepass")


def templates(session_id: str, root: str) -> Dict[str, Dict[str, Any]]:
    """One valid params object per method (``METHODS``), aimed at a live session and its files."""
    sid = session_id
    found = {
        "initialize": {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
        "authenticate": {"methodId": "none"},
        "session/new": {"cwd": root, "mcpServers": []},
        "session/load": {"sessionId": sid, "cwd": root, "mcpServers": []},
        "session/set_mode": {"sessionId": sid, "modeId": "default"},
        "session/set_config_option": {"sessionId": sid, "configId": "model", "value": "small"},
        "session/prompt": {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]},
        "session/cancel": {"sessionId": sid},
        "session/list": {"cwd": root},
        "session/delete": {"sessionId": sid},
        "session/resume": {"sessionId": sid, "cwd": root, "mcpServers": []},
        "session/close": {"sessionId": sid},
        "logout": {},
        "session/request_permission": {
            "sessionId": sid,
            "toolCall": {"toolCallId": "call-1", "title": "edit", "kind": "edit"},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        },
        "session/update": {
            "sessionId": sid,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "chunk"},
            },
        },
        "fs/write_text_file": {"sessionId": sid, "path": root + "/written.txt", "content": "x\n"},
        "fs/read_text_file": {"sessionId": sid, "path": root + "/notes.txt", "line": 2, "limit": 1},
        "terminal/create": {
            "sessionId": sid,
            "command": "true",
            "args": ["-x"],
            "env": [{"name": "FUZZ", "value": "1"}],
            "cwd": root,
            "outputByteLimit": 1000,
        },
        "terminal/output": {"sessionId": sid, "terminalId": "term_1"},
        "terminal/release": {"sessionId": sid, "terminalId": "term_1"},
        "terminal/wait_for_exit": {"sessionId": sid, "terminalId": "term_1"},
        "terminal/kill": {"sessionId": sid, "terminalId": "term_1"},
        "elicitation/create": {
            "message": "Your name?",
            "mode": "form",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            "sessionId": sid,
        },
        "elicitation/complete": {"elicitationId": "elicit-1"},
        "$/cancel_request": {"requestId": 1},
    }
    assert set(found) == set(METHODS), set(METHODS) ^ set(found)
    return found


#: Request ids of every shape (spec RPC-02 allows string, integer, null; the rest are not ids).
ID_SHAPES: List[Any] = [0, -1, 2**63, 2**64 + 1, "id-1", "", None, 1.5, 1.0, True, False, [], {}]
#: Values of every JSON type, and the hostile ones: huge numbers, control and lone surrogate
#: characters, paths that try to leave a root. No value names a program that exists.
HOSTILE: List[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**31,
    2**63,
    2**64,
    10**400,
    -(10**400),
    1.5,
    -0.0,
    1e308,
    Raw("1e400"),
    Raw("-1e400"),
    Raw("1E-400"),
    "",
    "\x00",
    "\ud800",
    "\u202e",
    "../../../../../etc/passwd",
    "/etc/passwd",
    "/proc/self/environ",
    "relative/path",
    "term_1",
    [],
    {},
    [1, "a", None],
    {"a": {"b": []}},
]
HUGE: List[Any] = [
    "x" * 200_000,
    ["a"] * 20_000,
    {f"k{i}": i for i in range(5_000)},
    "é" * 50_000,
]
METHOD_NAMES: List[Any] = sorted(METHODS) + ["", "no/such", "_acme/x", "$/x", 5, None, ["x"]]


def paths(value: Any, prefix: Tuple[Any, ...] = ()) -> List[Tuple[Any, ...]]:
    """Paths into a JSON value (keys, and the first indices of lists), the value itself first."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in list(value.items())[:16]:
            out += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:4]):
            out += paths(v, prefix + (i,))
    return out


def _parent(message: Any, path: Tuple[Any, ...]) -> Any:
    node = message
    for step in path[:-1]:
        node = node[step]
    return node


@st.composite
def mutated(draw: Any, message: Dict[str, Any]) -> Dict[str, Any]:
    """``message`` with one to three mutations."""
    message = copy.deepcopy(message)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(
            st.sampled_from(
                ["drop", "rename", "swap", "huge", "nest", "id", "method", "jsonrpc", "extra"]
            )
        )
        inner = [p for p in paths(message) if p]
        if op in ("drop", "rename", "swap", "huge", "nest") and not inner:
            continue
        if op == "drop":
            path = draw(st.sampled_from(inner))
            del _parent(message, path)[path[-1]]
        elif op == "rename":
            keyed = [p for p in inner if isinstance(p[-1], str)]
            if not keyed:
                continue
            path = draw(st.sampled_from(keyed))
            parent, key = _parent(message, path), path[-1]
            new = draw(st.sampled_from([key.upper(), key + "_", "", "_meta", key[:1], "\x00"]))
            parent[new] = parent.pop(key)
        elif op in ("swap", "huge", "nest"):
            path = draw(st.sampled_from(inner))
            parent = _parent(message, path)
            if op == "swap":
                parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
            elif op == "huge":
                parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(HUGE)))
            else:
                # Well below Python's recursion limit (1000), or far above it: near the limit,
                # whether a line parses depends on the stack of the thread that reads it (and
                # hypothesis raises the limit while it runs a case).
                depth = draw(st.integers(1, 800) | st.just(100_000))
                inner_text = dumps(parent[path[-1]]).decode("utf-8")
                parent[path[-1]] = Raw("[" * depth + inner_text + "]" * depth)
        elif op == "id":
            if draw(st.booleans()):
                message["id"] = copy.deepcopy(draw(st.sampled_from(ID_SHAPES)))
            else:
                message.pop("id", None)
        elif op == "method":
            # A copy: a later mutation of this message must never reach the shared list (a
            # method ["x"] had its element dropped, and the next cases drew from ["x"] -> []).
            message["method"] = copy.deepcopy(draw(st.sampled_from(METHOD_NAMES)))
        elif op == "jsonrpc":
            choice = draw(st.sampled_from(["1.0", 2.0, None, "", "drop"]))
            if choice == "drop":
                message.pop("jsonrpc", None)
            else:
                message["jsonrpc"] = choice
        else:
            target = message.get("params") if isinstance(message.get("params"), dict) else message
            key = draw(st.sampled_from(["_meta", "extra", "sessionId", "id"]))
            target[key] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
    return message


#: Any JSON value, small.
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=10,
)

#: Objects shaped like JSON-RPC messages, with random members.
MESSAGE_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", None, 2]),
        "id": st.sampled_from(ID_SHAPES) | st.integers() | st.text(max_size=4),
        "method": st.sampled_from(METHOD_NAMES) | st.text(max_size=10),
        "params": JSON
        | st.dictionaries(
            st.sampled_from(["sessionId", "path", "cwd", "prompt", "requestId", "_meta"]), JSON
        ),
        "result": JSON,
        "error": JSON
        | st.fixed_dictionaries({"code": st.integers(), "message": st.text(max_size=8)}),
    },
)
