"""An agent that answers every prompt with a long stream of one shape, then ``end_turn``.

``python long_stream_agent.py SHAPE MEGABYTES [CHUNK_BYTES]``: the turn streams MEGABYTES MB
(10**6 bytes) of text, in pieces of CHUNK_BYTES (default 65536) of ``0123456789abcdef...``, as
the updates of SHAPE (``SHAPES``), then one more update of SHAPE whose text is ``THE END``. An
update with an ``"on"`` key is sent on that session (a child's own update), not the prompt's. It
keeps no history, so that it stays small itself. It bends ``tests/broken/_raw.py``'s
``RawAgent`` (a correct raw agent).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict, List

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "broken"))

from _raw import RawAgent  # noqa: E402

M = Dict[str, Any]


def _text(text: str) -> M:
    return {"type": "text", "text": text}


#: shape -> (the updates of chunk number i carrying ``text``, the updates that end the stream).
SHAPES: Dict[str, Callable[[int, str], List[M]]] = {
    # One message, one compaction summary, one thought, one message between sessions: a long
    # stream of one entity.
    "message": lambda i, t: [
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": _text(t)}
    ],
    "thought": lambda i, t: [{"sessionUpdate": "agent_thought_chunk", "content": _text(t)}],
    "compaction": lambda i, t: [
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": _text(t)}
    ],
    "session-message": lambda i, t: [
        {"sessionUpdate": "session_message_chunk", "messageId": "sm1", "content": _text(t)}
    ],
    # Many entities, each a little: a message per chunk (thought and reply interleaved without
    # ids), a compaction, a tool call, a plan per chunk.
    "interleaved": lambda i, t: [
        {
            "sessionUpdate": "agent_thought_chunk" if i % 2 else "agent_message_chunk",
            "content": _text(t),
        }
    ],
    "compactions": lambda i, t: [
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": f"c{i}", "content": _text(t)}
    ],
    "tool-calls": lambda i, t: [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": f"t{i}",
            "title": "run",
            "status": "completed",
            "content": [{"type": "content", "content": _text(t)}],
        }
    ],
    "children": lambda i, t: [
        {"sessionUpdate": "subagent_update", "sessionId": f"child-{i}", "title": t}
    ],
    # Well-behaved floods that make the rules look back: each child, once announced, speaks in
    # its own session, and so does the first child (announced long ago); each tool call is
    # updated, and so is one created twice as long ago.
    "children-talking": lambda i, t: [
        {"sessionUpdate": "subagent_update", "sessionId": f"child-{i}", "title": t},
        {"on": f"child-{i}", "sessionUpdate": "agent_message_chunk", "content": _text(t)},
        {"on": "child-0", "sessionUpdate": "agent_message_chunk", "content": _text(t)},
    ],
    "tool-call-updates": lambda i, t: [
        {"sessionUpdate": "tool_call", "toolCallId": f"t{i}", "title": t, "status": "pending"},
        {"sessionUpdate": "tool_call_update", "toolCallId": f"t{i}", "status": "completed"},
        {"sessionUpdate": "tool_call_update", "toolCallId": f"t{i // 2}", "title": t},
    ],
    "plans": lambda i, t: [
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "planId": f"p{i}",
                "type": "items",
                "entries": [{"content": t, "priority": "low", "status": "pending"}],
            },
        }
    ],
}


class LongStream(RawAgent):
    """A raw agent whose every turn is one long stream of ``shape``."""

    def __init__(self, shape: str, megabytes: float, chunk: int) -> None:
        super().__init__()
        self.shape = SHAPES[shape]
        self.megabytes = megabytes
        self.chunk = chunk

    def on_session_prompt(self, m: M) -> None:
        session_id = m["params"]["sessionId"]
        piece = ("0123456789abcdef" * (self.chunk // 16 + 1))[: self.chunk]
        total = int(self.megabytes * 1_000_000)
        sent = 0
        i = 0
        while sent < total:
            self.write(b"".join(self.line(session_id, u) for u in self.shape(i, piece)))
            sent += self.chunk
            i += 1
        for update in self.shape(i, "THE END"):
            self.write(self.line(session_id, update))
        self.reply(m, {"stopReason": "end_turn"})

    def line(self, session_id: str, update: M) -> bytes:
        update = dict(update)
        on = update.pop("on", session_id)
        message = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": on, "update": update},
        }
        return json.dumps(message).encode("utf-8") + b"\n"


if __name__ == "__main__":
    shape, megabytes = sys.argv[1], float(sys.argv[2])
    chunk = int(sys.argv[3]) if len(sys.argv) > 3 else 65536
    LongStream(shape, megabytes, chunk).run()
