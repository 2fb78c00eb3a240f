"""file-system.mdx and terminals.mdx: the client's files and shells, lent to the agent.

A client that advertises ``fs.readTextFile`` / ``fs.writeTextFile`` or ``terminal`` (the method
gates are checked in ``state``) lets the agent read and write text files by absolute path
(FS-03, FS-06, OVERVIEW-06; lines are 1-based, OVERVIEW-07) and run commands in terminals. A
terminal lives from ``terminal/create`` (absolute cwd, TERM-02) to ``terminal/release``: after
that its id is invalid (TERM-14), and every terminal is released in the end (TERM-07, checked
when a transcript ends: ``state.finish``).
"""

from __future__ import annotations

from typing import Iterable

from ..errors import ErrorCode
from .book import Message, check, transition
from .facts import ConnectionFacts, TerminalState
from .findings import Finding, Party, finding
from .values import is_absolute_path, is_one_based

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.RESOURCE_NOT_FOUND
_USES = ("terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release")


@check("request", A, "fs/read_text_file", "fs/write_text_file")
def _fs(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    path = m.params.get("path")
    clause = "FS-03" if m.method == "fs/read_text_file" else "FS-06"
    if not is_absolute_path(path):
        # spec FS-03, OVERVIEW-06: the path to read is absolute;
        # spec FS-06: so is the path to write.
        yield finding(clause, A, f"{m.method} path {path!r} is not absolute", m.index, INVALID)
    line = m.params.get("line")
    if m.method == "fs/read_text_file" and line is not None and not is_one_based(line):
        # spec OVERVIEW-07: line numbers are 1-based.
        yield finding("OVERVIEW-07", A, f"line {line!r} is not 1-based", m.index, INVALID)


@check("request", A, "terminal/create")
def _terminal_create(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    cwd = m.params.get("cwd")
    if cwd is not None and not is_absolute_path(cwd):
        # spec TERM-02, OVERVIEW-06: the terminal's cwd is absolute.
        yield finding("TERM-02", A, f"terminal cwd {cwd!r} is not absolute", m.index, INVALID)


@transition("response", C, "terminal/create")
def _terminal_created(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    if isinstance(m.result, dict) and isinstance(m.result.get("terminalId"), str):
        state.terminals[m.result["terminalId"]] = TerminalState(
            session_id=m.request.params.get("sessionId"), created_index=m.index
        )


@check("request", A, *_USES)
def _terminal_use(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    terminal_id = m.params.get("terminalId")
    term = state.terminals.get(terminal_id)
    if term is None or term.released:
        # spec-gap released-terminal: after release an id is invalid (TERM-14; RPC-17 -32002).
        what = "released" if term is not None else "unknown"
        yield finding(
            "spec-gap:released-terminal",
            A,
            f"{m.method} on {what} terminal {terminal_id!r}",
            m.index,
            NOT_FOUND,
        )


@check("response", C, *_USES)
def _released_terminal_answer(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    term = state.terminals.get(m.request.params.get("terminalId"))
    if term is not None and term.released and not m.is_error:
        # spec TERM-14: after release the terminal id is invalid: the client answers an error.
        yield finding(
            "TERM-14", C, f"{m.method} on a released terminal answered with a result", m.index
        )


@transition("response", C, "terminal/release")
def _terminal_released(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    term = state.terminals.get(m.request.params.get("terminalId"))
    if term is not None and not m.is_error:
        term.released = True
