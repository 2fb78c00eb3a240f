"""The line layer of the oracle: what a line that is not one JSON-RPC object is, and whose fault.

Spec: transports.mdx; clauses TRANSPORT-01, TRANSPORT-04, TRANSPORT-05, TRANSPORT-08,
TRANSPORT-09, OVERVIEW-01 (RPC-20: no batches).

A line of the protocol stream is exactly one JSON object ("Messages are delimited by newlines":
TRANSPORT-04, a rule of the writer, which the reader sees broken only as what follows). Anything
else is judged
here, without state beyond "is this sender in the middle of a message spread over several
lines":

* bytes that are not UTF-8 break TRANSPORT-01;
* the first line of a message cut by a raw newline (the JSON ends too early), and the lines that
  continue it, break TRANSPORT-05, reported once per cut message;
* two messages on one line make a line that is not a valid ACP message (TRANSPORT-08,
  TRANSPORT-09), not a message with an embedded newline (TRANSPORT-04, TRANSPORT-05);
* a JSON array is a batch, which ACP does not define (OVERVIEW-01);
* anything else (a log line, a bare value) is not an ACP message on the stream: TRANSPORT-08 on
  the agent's stdout, TRANSPORT-09 on the agent's stdin.

Pure functions over bytes; no I/O.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Optional, Tuple, Union

import attrs

from .._core import Party

__all__ = ["LineVerdict", "parse_line"]


@attrs.frozen
class LineVerdict:
    """Why a line is not one message: the clause it breaks and a one-line explanation.

    ``continues`` is True for a line that carries on a message cut by a raw newline (the caller
    reports the cut once, at its first line). ``opens`` is True when the line starts such a cut.
    """

    clause: str
    message: str
    opens: bool = False
    continues: bool = False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_line(
    sender: Party, raw: bytes
) -> Union[Tuple[None, Dict[str, Any]], Tuple[LineVerdict, None]]:
    """``(None, value)`` for a line holding one JSON object, else ``(verdict, None)``."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # spec TRANSPORT-01: messages are UTF-8.
        reason = f"the line is not UTF-8 ({exc.reason} at byte {exc.start})"
        return LineVerdict("TRANSPORT-01", reason), None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        return _judge_unparsed(sender, text, exc), None
    except (ValueError, RecursionError) as exc:
        return _judge_unparsed(sender, text, None, str(exc)), None
    if isinstance(value, list):
        # spec OVERVIEW-01 (RPC-20): ACP defines no batch messages.
        return LineVerdict("OVERVIEW-01", "a JSON-RPC batch (ACP defines none)"), None
    if not isinstance(value, dict):
        return _not_a_message(sender, text), None
    return None, value


def _judge_unparsed(
    sender: Party, text: str, exc: Optional[json.JSONDecodeError], detail: str = ""
) -> LineVerdict:
    stripped = text.strip()
    if exc is not None and exc.msg == "Extra data" and stripped[:1] in ("{", "["):
        # spec TRANSPORT-08, TRANSPORT-09: two messages on one line make one line that is not a
        # valid ACP message. Not TRANSPORT-05: its sentence forbids newlines *in* a message.
        return _not_a_message(sender, text, "more than one JSON value on one line")
    if exc is not None and stripped[:1] in ("{", "[") and exc.pos >= len(text.rstrip()):
        # spec TRANSPORT-05: the JSON ends with the line: a raw newline cut the message.
        return LineVerdict(
            "TRANSPORT-05", f"a message cut by a raw newline: {_clip(text)}", opens=True
        )
    if _looks_like_continuation(stripped):
        return LineVerdict(
            "TRANSPORT-05",
            f"a piece of a message cut by raw newlines: {_clip(text)}",
            continues=True,
        )
    if detail:
        return _not_a_message(sender, text, detail)
    return _not_a_message(sender, text)


def _looks_like_continuation(stripped: str) -> bool:
    """A middle or last line of pretty-printed JSON: ``"key": value,``, ``}``, ``]``..."""
    if not stripped:
        return False
    if stripped[0] in "}]":
        return True
    if stripped[0] == '"' and (":" in stripped or stripped.endswith((",", "{", "["))):
        return True
    return stripped.endswith((",", "{", "[")) and stripped[0] in '"0123456789-tfn{['


def _not_a_message(sender: Party, text: str, detail: str = "") -> LineVerdict:
    where = "stdout" if sender is Party.AGENT else "the agent's stdin"
    clause = "TRANSPORT-08" if sender is Party.AGENT else "TRANSPORT-09"
    extra = f" ({detail})" if detail else ""
    # spec TRANSPORT-08 and spec TRANSPORT-09: nothing but ACP messages on the protocol stream.
    return LineVerdict(clause, f"not an ACP message on {where}: {_clip(text)}{extra}")


def _clip(text: str, size: int = 60) -> str:
    return repr(text if len(text) <= size else text[: size - 3] + "...")
