"""Clients for ``check-client``'s own tests: the conforming test client bent one way each.

The client is acpref's ``AgentDriver`` (a conforming client over real pipes) launching
``acpref check-client --serve``; each defect is a ``bend(driver, session)`` applied before the
first prompt (``tests/test_check_client.py`` runs them). ``clause`` is the clause check-client
must FAIL. The bends reach below the driver's recorder (``driver.stream._inner``), so the check
sees the bent bytes while the driver's own transcript keeps what it meant to send.

Both defects are about two ``fs/read_text_file`` requests open at once (check-client's crossed
reads: two files of the session's directory, each holding one line ``acpref check: crossed read
NAME TOKEN``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

#: What the files of check-client's crossed reads hold (the names of the files and the lines).
CROSSED = "acpref check: crossed read "
CROSSED_PATH = ".acpref-check-crossed-"


def _crossed_answer(line: bytes) -> Optional[Dict[str, Any]]:
    """The response in ``line`` when it answers a crossed read with its file's content."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "method" in message:
        return None
    result = message.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    return message if isinstance(content, str) and CROSSED in content else None


class SwapsCrossedIds:
    """Answers two reads open at once in the order they came, each under the other's id: a
    client that hands each finished answer to the oldest request still open (arrival order)
    rather than to its own, once the two finished the other way round."""

    clause = "RPC-07"

    @staticmethod
    def bend(driver: Any, session: str) -> None:
        inner = driver.stream._inner
        write = inner.write
        held: List[Dict[str, Any]] = []

        def swapping(data: bytes) -> None:
            out = []
            for line in data.splitlines(keepends=True):
                answer = _crossed_answer(line)
                if answer is None:
                    out.append(line)
                    continue
                held.append(answer)
                if len(held) == 2:
                    first, second = held
                    first["id"], second["id"] = second["id"], first["id"]
                    out.extend(json.dumps(m).encode("utf-8") + b"\n" for m in held)
            if out:
                write(b"".join(out))

        inner.write = swapping


class FirstContentTwice:
    """Answers the second of two reads open at once with the first one's content: a client
    that keeps the last file it read in one slot for the method, not one for each request."""

    clause = "RPC-07"

    @staticmethod
    def bend(driver: Any, session: str) -> None:
        from acpref import schema as s

        serve = driver._on_read
        first: List[str] = []

        def on_read(params: Any, ctx: Any) -> Any:
            answer = serve(params, ctx)
            if CROSSED_PATH not in params.path:
                return answer
            if not first:
                first.append(answer.content)
            return s.ReadTextFileResponse(content=first[0])

        driver.connection.set_handler("fs/read_text_file", on_read)


DEFECTS = {
    name: cls
    for name, cls in dict(globals()).items()
    if isinstance(cls, type) and isinstance(getattr(cls, "clause", None), str)
}
