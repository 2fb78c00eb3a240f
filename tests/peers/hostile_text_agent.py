"""A raw agent whose prompt turn streams what is hard to draw: ``hostile_text_agent.py SHAPE [N]``.

Every shape is legal JSON, so that the transcript is one ``acpref validate`` reads:

* ``surrogate``: a message chunk whose text holds a lone surrogate (``"\\ud800"``, legal in JSON
  text, not encodable as UTF-8 once decoded);
* ``deep``: a message chunk whose ``params`` hold an object nested 100,000 levels deep;
* ``flood N``: N small message chunks in one turn, written in large batches.

Then it answers the prompt ``end_turn``; with ``-late`` after the shape (``surrogate-late``), it
answers first and streams after the answer (spec-gap content-after-turn), so that a test run with
``--acp-strict-gaps`` fails and the plugin draws its page. Used by tests/test_show_hostile.py.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "broken"))

from _raw import RawAgent  # noqa: E402

DEPTH = 100_000


def chunk_line(session_id: str, text_json: str, extra: str = "") -> bytes:
    """A session/update line with ``text_json`` (JSON text) as the chunk's text."""
    return (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s",'
        '"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%s}}%s}}\n'
        % (session_id, text_json, extra)
    ).encode("ascii")


class HostileTextAgent(RawAgent):
    def __init__(self, shape: str, count: int) -> None:
        super().__init__()
        self.shape = shape
        self.flood = count

    def on_session_prompt(self, m: Dict[str, Any]) -> None:
        session_id = m["params"]["sessionId"]
        shape, late = self.shape.removesuffix("-late"), self.shape.endswith("-late")
        if late:
            self.reply(m, {"stopReason": "end_turn"})
        if shape == "surrogate":
            self.write(chunk_line(session_id, '"lone \\ud800 surrogate"'))
        elif shape == "deep":
            nested = '{"a":' * DEPTH + "1" + "}" * DEPTH
            self.write(chunk_line(session_id, '"deep"', ',"deep":' + nested))
        elif shape == "flood":
            line = chunk_line(session_id, '"."')
            batch = 10_000
            for start in range(0, self.flood, batch):
                self.write(line * min(batch, self.flood - start))
        if not late:
            self.reply(m, {"stopReason": "end_turn"})


if __name__ == "__main__":
    HostileTextAgent(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0).run()
