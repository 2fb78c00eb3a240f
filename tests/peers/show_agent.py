"""A broken agent with hostile text, for the tests of ``acpref show`` (tests/test_show.py).

It breaks two MUST rules the report must mark on the message that broke them, a log line on the
protocol stream before answering initialize (TRANSPORT-08) and an answer under a wrong id before
the right one (RPC-04), and sends an update after the turn's answer (spec-gap
content-after-turn, marked at its level). Its messages carry
text that would run as markup or move what a person reads if it were not escaped (a closing
``</script>``, an ``<img onerror>``, a terminal escape, a right-to-left override), and a prompt
streams a long run of chunks, which the report folds. Run: ``python show_agent.py``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "broken"))

from _raw import RawAgent  # noqa: E402

HOSTILE = '</script><script>document.title="pwned"</script><img src=x onerror="alert(1)">'
CONTROL = "\x1b[31mred\x1b[0m \u202eevil\u202c"
CHUNKS = 30
UPDATES = 2 + CHUNKS + 1  # per prompt: the two hostile texts, the chunks, the late one


class ShowAgent(RawAgent):
    def on_initialize(self, m: Dict[str, Any]) -> None:
        self.write(b"agent starting <b>up</b>\n")  # breaks TRANSPORT-08: a log on stdout
        super().on_initialize(m)

    def on_session_prompt(self, m: Dict[str, Any]) -> None:
        session_id = m["params"]["sessionId"]
        self.say(session_id, HOSTILE)
        self.say(session_id, CONTROL)
        for i in range(CHUNKS):
            self.say(session_id, f"word{i} ")
        # Breaks RPC-04: an answer under an id that no request has, then the right one.
        self.send({"jsonrpc": "2.0", "id": m["id"] + 100, "result": {"stopReason": "end_turn"}})
        self.reply(m, {"stopReason": "end_turn"})
        self.say(session_id, "one more thing")  # after the answer: spec-gap content-after-turn


if __name__ == "__main__":
    ShowAgent().run()
