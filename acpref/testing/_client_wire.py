"""The parts of ``check-client``'s step 1 written raw: what only an agent bent on purpose would
send, and two requests kept open at once.

Spec: overview.mdx (JSON-RPC errors, notifications, ids), extensibility.mdx (``_meta``, custom
methods), cancellation.mdx (``$/cancel_request``). Each writes what no conforming agent would (a
notification answered, ``_meta`` at a params root, an unparseable line, a method of the wrong
type), raw where the typed side would refuse it, and judges the client's answer. The two reads
kept open at once (``crossed_reads``, RPC-07) are conforming, but written raw too, so that both
are out before either answer is read.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from typing import Any, Dict, List, Optional, Tuple

from .. import schema as s
from ..agent import PromptTurn
from ..errors import ErrorCode, RpcError
from ._grader import META, GraderAgent, code
from ._bad_lines import INVALID_REQUEST, UNPARSED, judge_bad_lines

__all__ = ["bad_input", "crossed_reads", "extensions", "reading_dir", "update_with_meta"]

def update_with_meta(agent: GraderAgent, turn: PromptTurn) -> None:
    """A session/update with ``_meta`` at its params root, then a request: a client that
    refuses the update (an error for it, a closed connection) shows it before the answer."""
    g = agent.grader
    since = g.sink.received_count
    chunk = s.AgentMessageChunk(
        content=s.TextContent(text="(an update with _meta)\n"), message_id=turn.new_message_id()
    )
    agent.client.session_update(
        s.SessionNotification(session_id=turn.session_id, update=chunk, meta=META)
    )
    probe = g.request_raw(agent.stream, "_acpref/ping", {})
    answered = [
        m
        for _, m in g.sink.received(since)
        if isinstance(m, dict) and "method" not in m and m is not probe
    ]
    # spec EXT-02: _meta a receiver does not define never causes an error, on a notification
    # either (an answer to one is an error in itself: OVERVIEW-09, judged by the oracle).
    if answered:
        g.check("EXT-02", False, f"a session/update with _meta was answered {answered!r}"[:400])
    else:
        g.check(
            "EXT-02",
            "no answer" not in probe,
            f"after a session/update with _meta, a request got no answer: {probe!r}"[:400],
        )


#: Request ids of every JSON shape RequestId allows: each must come back the same (RPC-04).
_IDS: List[Any] = [0, -7, 2**53 - 1, "42", "0", "", "\u00e9t\u00e9 \u65e5\u672c \U0001f642"]


def extensions(agent: GraderAgent, turn: PromptTurn) -> None:
    g = agent.grader
    since = g.sink.received_count
    # Written raw, like the ping after it, so that the two go out in this order.
    notice = {"jsonrpc": "2.0", "method": "_acpref/notice", "params": {"check": True}}
    agent.stream.write_raw((json.dumps(notice) + "\n").encode("utf-8"))
    probe = g.request_raw(agent.stream, "_acpref/ping", {})
    answered = [
        m
        for _, m in g.sink.received(since)
        if isinstance(m, dict) and "method" not in m and m is not probe
    ]
    # spec EXT-10, OVERVIEW-09: a notification is never answered, not even with an error
    # without an id.
    evidence = f"the _acpref/notice notification was answered {answered!r}"[:400]
    g.check("EXT-10", not answered, evidence)
    g.check("OVERVIEW-09", not answered, evidence)
    wrong = []
    for request_id in _IDS:
        answer = g.request_raw(
            agent.stream, "_acpref/unknown", {}, request_id=request_id, any_id=True
        )
        got = answer.get("id", "(no id)")
        if not (type(got) is type(request_id) and got == request_id):
            wrong.append(f"id {request_id!r} answered as {got!r}")
    # spec RPC-04: a response echoes the id exactly, same value and JSON type.
    g.check("RPC-04", not wrong, "; ".join(wrong))
    try:
        agent.client.ext_method("_acpref/unknown", {}, timeout=30)
        g.check("EXT-08", False, "an unknown custom request was answered with a result")
    except RpcError as exc:
        # spec EXT-08: an unknown custom request gets -32601.
        g.check(
            "EXT-08",
            exc.code == ErrorCode.METHOD_NOT_FOUND,
            f"an unknown custom request answered {exc.code}",
        )


def bad_input(agent: GraderAgent, turn: PromptTurn) -> None:
    """What no conforming agent sends: each gets its JSON-RPC error, the connection survives."""
    g = agent.grader
    # spec RPC-10, RPC-11, spec-gap malformed-json: the answers to two lines no agent sends.
    unparsed = _answer_to_line(agent, UNPARSED)
    invalid = _answer_to_line(agent, INVALID_REQUEST)
    judge_bad_lines(g, unparsed, invalid)
    answer = g.request_raw(agent.stream, "acpref/unknown", {}, any_id=True)
    # spec RPC-12: a method the receiver does not know gets -32601.
    g.check("RPC-12", code(answer) == ErrorCode.METHOD_NOT_FOUND, f"acpref/unknown: {answer!r}")
    bad = {"sessionId": turn.session_id, "toolCall": 5, "options": []}
    answer = g.request_raw(agent.stream, "session/request_permission", bad, any_id=True)
    # spec RPC-13: params of the wrong type get -32602 (no dialog is shown for them).
    g.check(
        "RPC-13",
        code(answer) == ErrorCode.INVALID_PARAMS,
        f"session/request_permission with toolCall 5 was answered {answer!r}, not -32602"[:400],
    )
    since = g.sink.received_count
    unknown = {"requestId": "acpref-none"}
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": unknown}
    agent.stream.write_raw((json.dumps(cancel) + "\n").encode("utf-8"))
    probe = g.request_raw(agent.stream, "_acpref/ping", {})
    answered = [
        m
        for _, m in g.sink.received(since)
        if isinstance(m, dict) and "method" not in m and m is not probe
    ]
    # spec CANCEL-06: $/cancel_request is a notification: never answered, an unknown id neither.
    g.check("CANCEL-06", not answered, f"$/cancel_request was answered {answered!r}"[:400])


#: How long an answer to a line that is no request is waited for. A missing answer is no MUST
#: (spec-gap malformed-json), and a client answers a line it cannot read as it reads it.
_BAD_LINE_WAIT = 10.0


def _answer_to_line(agent: GraderAgent, line: bytes) -> Any:
    """Write one raw line; the first response that comes (any id, or none), or ``no answer``."""
    g = agent.grader
    since = g.sink.received_count
    agent.stream.write_raw(line)
    try:
        return g.sink.wait_for(
            lambda m: isinstance(m, dict) and "method" not in m,
            since=since,
            timeout=min(_BAD_LINE_WAIT, g.timeout),
        )[1]
    except TimeoutError as exc:
        return {"no answer": str(exc)}


def reading_dir(agent: GraderAgent, turn: PromptTurn, clause: str, what: str) -> Optional[str]:
    """The session's directory, where the files a part asks the client to read are written;
    None, with ``clause`` skipped, when the client does not advertise reading files."""
    if not agent.client.supports("fs.readTextFile"):
        agent.grader.skip(clause, f"the client does not advertise fs.readTextFile ({what})")
        return None
    session = agent.sessions.get(turn.session_id)
    return session.cwd if session is not None else os.getcwd()


def crossed_reads(agent: GraderAgent, turn: PromptTurn) -> None:
    """Two ``fs/read_text_file`` requests of two files with different contents, both written
    before either answer is read: the answer under each id must hold that request's file. A
    client that answers in arrival order under the wrong ids, or both with one file, shows it."""
    g = agent.grader
    cwd = reading_dir(agent, turn, "RPC-07", "two reads kept open")
    if cwd is None:
        return
    token = secrets.token_hex(4)
    reads: Dict[str, Tuple[str, str]] = {}  # request id -> (path, the one line it holds)
    for name in ("one", "two"):
        path = os.path.join(cwd, f".acpref-check-crossed-{name}-{token}.txt")
        reads[g.new_raw_id()] = (path, f"acpref check: crossed read {name} {token}")
    try:
        for path, line in reads.values():  # this agent runs beside the client
            with open(path, "w", encoding="utf-8") as f:
                f.write(line + "\n")
        since = g.sink.received_count
        for request_id, (path, _) in reads.items():
            g.write_request(
                agent.stream,
                "fs/read_text_file",
                {"sessionId": turn.session_id, "path": path},
                request_id,
            )
        deadline = time.monotonic() + g.deadline("fs/read_text_file", 20.0)
        answers = {
            rid: g.answer(rid, since, max(0.1, deadline - time.monotonic())) for rid in reads
        }
    finally:
        for path, _ in reads.values():
            if os.path.isfile(path):
                os.remove(path)
    _judge_crossed(agent, reads, answers)


def _judge_crossed(
    agent: GraderAgent, reads: Dict[str, Tuple[str, str]], answers: Dict[str, Any]
) -> None:
    g = agent.grader
    lines = {rid: line for rid, (_, line) in reads.items()}
    wrong: List[str] = []
    unclear: List[str] = []
    for rid, answer in answers.items():
        result = answer.get("result")
        content = result.get("content") if isinstance(result, dict) else None
        others = [line for other, line in lines.items() if other != rid]
        if isinstance(content, str) and lines[rid] in content:
            continue
        if isinstance(content, str) and any(line in content for line in others):
            path = reads[rid][0]
            wrong.append(f"id {rid!r} (a read of {path}) was answered {content!r}")
        else:
            unclear.append(f"id {rid!r} answered {answer!r}")
    if wrong:
        # spec RPC-07: each answer is matched to its request by id, not by arrival order.
        g.check("RPC-07", False, "two reads open at once: " + "; ".join(wrong)[:400])
    elif unclear:
        # An error or no answer says nothing of the ids (RPC-06 judges a missing answer).
        g.skip("RPC-07", "the two reads open at once: " + "; ".join(unclear)[:400])
    else:
        g.passed("RPC-07")
