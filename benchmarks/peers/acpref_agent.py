"""acpref's bench agent: the peers' echo agent (see ``__init__``) on ``acpref.agent.Agent``.

Sessions are the ``Agent`` defaults (the ``SessionRegistry``); the prompt turn streams through
``PromptTurn``, the way any acpref agent does.
"""

from __future__ import annotations

import os
import sys

from acpref import schema as s
from acpref.agent import Agent, serve_stdio

_BIG_TEXT = {}


class BenchAgent(Agent):
    info = s.Implementation(name="acpref-bench-agent", version="1")

    def session_prompt(self, params, turn):
        block = params.prompt[0]
        text = block.text if isinstance(block, s.TextContent) else ""
        word, _, arg = text.partition(" ")
        if word == "stream":
            for _ in range(int(arg)):
                turn.update(s.AgentMessageChunk(content=s.TextContent(text="token ")))
        elif word == "read":
            turn.client.fs_read_text_file(
                s.ReadTextFileRequest(session_id=params.session_id, path=arg)
            )
        elif word == "big":
            size = int(arg)
            if size not in _BIG_TEXT:
                sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
                from _shared import big_text

                _BIG_TEXT[size] = big_text(size)
            turn.update(s.AgentMessageChunk(content=s.TextContent(text=_BIG_TEXT[size])))
        else:
            turn.update(s.AgentMessageChunk(content=s.TextContent(text=text)))
        return s.StopReason.END_TURN


if __name__ == "__main__":
    raise SystemExit(serve_stdio(BenchAgent))
