"""tool-calls.mdx: what the agent reports of the tools it runs, and the permission it asks.

A tool call is announced once with ``tool_call`` (its id unique in the session, TOOL-02) and
then changed with ``tool_call_update``s that name it (TOOL-05); a name once reported stays
(TOOL-17, TOOL-18). Its content may carry diffs and locations with absolute paths and 1-based
lines (TOOL-13, TOOL-15, OVERVIEW-07) and live terminals (TOOL-14). Before a sensitive step the
agent may send ``session/request_permission`` with options that each have an id, a name and a
kind (TOOL-10), ids distinct (spec-gap unique-option-ids); the client
selects one of those options (TOOL-08) or, after a cancel, answers "cancelled" (PROMPT-21, in
``prompt_turn``).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List

from ..errors import ErrorCode
from .book import Message, check, transition, update_check, update_of, update_transition
from .bounded import NOTHING, Remembered, forgot_any, remember
from .facts import ConnectionFacts, SessionState
from .lifecycle import SessionPhase, TurnPhase
from .findings import Finding, Party, finding
from .values import is_absolute_path, is_one_based

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS


@update_check("tool_call", "tool_call_update")
def _tool_call(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    if s is None:
        return
    update = update_of(m)
    tool_call_id = update.get("toolCallId")
    if update.get("sessionUpdate") == "tool_call":
        if tool_call_id in s.tool_calls and s.phase is not SessionPhase.LOADING:
            # spec TOOL-02: tool call ids are unique within the session.
            yield finding("TOOL-02", A, f"tool call id {tool_call_id!r} used twice", m.index)
    else:
        # spec-gap remembered-bound: once the session forgot tool call ids, an unknown one may be
        # forgotten: not judged (nor TOOL-02 and TOOL-17 of a forgotten one: never a false one).
        if tool_call_id not in s.tool_calls and not forgot_any(s.tool_calls):
            # spec TOOL-05: an update names a tool call the client knows.
            yield finding(
                "TOOL-05", A, f"tool_call_update for unknown tool call {tool_call_id!r}", m.index
            )
        status = update.get("status")
        if tool_call_id in s.permitted and status in ("completed", "failed"):
            # spec PROMPT-14: "Once permission is granted (if required), the Agent SHOULD invoke
            # the tool and report a status update marking the tool as `in_progress`".
            yield finding(
                "PROMPT-14",
                A,
                f"tool call {tool_call_id!r} allowed, then {status} with no in_progress update",
                m.index,
            )
        name = update.get("name")
        before = s.tool_calls.get(tool_call_id) if isinstance(tool_call_id, str) else None
        if isinstance(name, str) and before is not None and name != before:
            # spec TOOL-17: a reported tool name is not changed later (but to correct it).
            yield finding(
                "TOOL-17", A, f"tool call {tool_call_id!r} renamed {before!r} to {name!r}", m.index
            )
    yield from _tool_call_body(state, update, m)


def _tool_call_body(state: ConnectionFacts, body: Dict[str, Any], m: Message) -> Iterable[Finding]:
    content = body.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "diff" and not is_absolute_path(item.get("path")):
            # spec TOOL-13: a diff's path is absolute.
            yield finding("TOOL-13", A, f"diff path {item.get('path')!r} is not absolute", m.index)
        if item.get("type") == "terminal":
            term = state.terminals.get(item.get("terminalId"))
            if term is not None and term.released:
                # spec TOOL-14: "The terminal must be added before calling `terminal/release`."
                yield finding(
                    "TOOL-14",
                    A,
                    f"tool call embeds released terminal {item.get('terminalId')!r}",
                    m.index,
                )
            elif term is None:
                # spec-gap embedded-terminal-id: "Embed a terminal created with terminal/create
                # by its id" has no keyword; an id no terminal/create gave is acpref's reading.
                yield finding(
                    "spec-gap:embedded-terminal-id",
                    A,
                    f"tool call embeds unknown terminal {item.get('terminalId')!r}",
                    m.index,
                )
    locations = body.get("locations")
    for loc in locations if isinstance(locations, list) else []:
        if not isinstance(loc, dict):
            continue
        if not is_absolute_path(loc.get("path")):
            # spec TOOL-15: locations have absolute paths.
            yield finding(
                "TOOL-15", A, f"location path {loc.get('path')!r} is not absolute", m.index
            )
        if loc.get("line") is not None and not is_one_based(loc.get("line")):
            # spec OVERVIEW-07: line numbers are 1-based.
            yield finding(
                "OVERVIEW-07", A, f"location line {loc.get('line')!r} is not 1-based", m.index
            )


@update_transition("tool_call", "tool_call_update")
def _tool_call_apply(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    update = update_of(m)
    tool_call_id = update.get("toolCallId")
    if s is None or not isinstance(tool_call_id, str):
        return
    if update.get("sessionUpdate") == "tool_call" or tool_call_id in s.tool_calls:
        # spec TOOL-18: a string name sets or replaces it; omitted or null leaves it.
        name = update.get("name")
        name = name if isinstance(name, str) else s.tool_calls.get(tool_call_id)
        # spec-gap remembered-bound: past max_remembered the least recently updated are forgotten.
        s.tool_calls = remember(s.tool_calls, tool_call_id, name, state.max_remembered)
    if update.get("status") is not None and tool_call_id in s.permitted:
        # PROMPT-14: the first status after the permission is the one judged.
        s.permitted = {k: v for k, v in s.permitted.items() if k != tool_call_id} or NOTHING
    _unfinished_apply(state, s, update, tool_call_id)


# -- The turn ends with its tool calls finished ---------------------------------------------------

#: The statuses of a tool call still to finish (ToolCallStatus; a tool call's default is pending).
_OPEN = (None, "pending", "in_progress")
_FINAL = ("completed", "failed")


def _unfinished_apply(
    state: ConnectionFacts, s: SessionState, update: Dict[str, Any], tool_call_id: str
) -> None:
    """Keep the running turn's tool calls whose last status is not final (PROMPT-16)."""
    # spec-gap reopen-in-flight: while a load replays, a tool call may be the history's.
    if not s.turn_phase.running or s.phase is SessionPhase.LOADING:
        return
    status = update.get("status")
    if status in _FINAL and isinstance(s.unfinished, Remembered):
        s.unfinished.discard(tool_call_id)
    elif status in _OPEN and (update.get("sessionUpdate") == "tool_call" or status is not None):
        # A new tool call, or a known one set going again, is the turn's to finish.
        s.unfinished = remember(s.unfinished, tool_call_id, None, state.max_remembered)


@check("response", A, "session/prompt")
def _turn_ends_with_open_tool_calls(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    # A turn asked to stop (session/cancel, close, ...) is not judged: its tool calls may be cut
    # short, and the client marks them cancelled (PROMPT-20).
    if s is None or s.turn != m.id or s.turn_phase is not TurnPhase.RUNNING or m.is_error:
        return
    stop = m.result.get("stopReason") if isinstance(m.result, dict) else None
    if stop != "end_turn" or not s.unfinished:
        return
    # spec PROMPT-16: "When the tool completes, the Agent sends another update with the final
    # status and any content"; the turn ends when there are no pending tool calls (PROMPT-11).
    # spec-gap unfinished-tool-call: the sentence has no keyword; a turn that ends end_turn
    # ("without requesting more tools") with a tool call still pending or in_progress never
    # gave it its final status. Other stop reasons may cut a tool short ("Agents MAY stop the
    # turn at any point"): not judged.
    open_ids = list(s.unfinished)
    ids = ", ".join(repr(i) for i in open_ids[:5])
    ids += f" and {len(open_ids) - 5} more" if len(open_ids) > 5 else ""
    calls = "tool call" if len(open_ids) == 1 else "tool calls"
    yield finding(
        "spec-gap:unfinished-tool-call",
        A,
        f"turn ended end_turn with {calls} {ids} never given a final status (completed or "
        "failed)",
        m.index,
    )


@transition("response", A, "session/prompt")
def _turn_answered(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    # prompt_turn's transition ran first: a turn answered is no longer running.
    if s is not None and not s.turn_phase.running:
        s.unfinished = NOTHING


# -- Permission ------------------------------------------------------------------------------------


@check("request", A, "session/request_permission")
def _permission(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    options = m.params.get("options")
    ids: List[Any] = (
        [o.get("optionId") for o in options if isinstance(o, dict)]
        if isinstance(options, list)
        else []
    )
    if len(ids) != len(set(ids)):
        # spec-gap unique-option-ids: "Unique identifier for this option" has no keyword (TOOL-10
        # quotes the required list: optionId, name, kind, which the shape check applies).
        repeated = "permission options repeat an optionId"
        yield finding("spec-gap:unique-option-ids", A, repeated, m.index, INVALID)
    tool_call = m.params.get("toolCall")
    if isinstance(tool_call, dict):
        yield from _tool_call_body(state, tool_call, m)


@transition("request", A, "session/request_permission")
def _permission_apply(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    if s is None:
        return
    options = m.params.get("options")
    offered = (
        {o.get("optionId") for o in options if isinstance(o, dict)}
        if isinstance(options, list)
        else set()
    )
    s.permissions = {**s.permissions, m.id: offered}
    tool_call = m.params.get("toolCall")
    tool_call_id = tool_call.get("toolCallId") if isinstance(tool_call, dict) else None
    if isinstance(tool_call_id, str):
        name = s.tool_calls.get(tool_call_id)
        s.tool_calls = remember(s.tool_calls, tool_call_id, name, state.max_remembered)


@check("response", C, "session/request_permission")
def _permission_answer(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    outcome = m.result.get("outcome") if isinstance(m.result, dict) else None
    if not (isinstance(outcome, dict) and outcome.get("outcome") == "selected"):
        return
    options = m.request.params.get("options")
    offered = {o.get("optionId") for o in options or [] if isinstance(o, dict)}
    if outcome.get("optionId") not in offered:
        # spec TOOL-08: the selected optionId is one of the offered options.
        yield finding(
            "TOOL-08", C, f"selected option {outcome.get('optionId')!r} was not offered", m.index
        )


def _allowed(m: Message) -> bool:
    """True when the client's answer selected an ``allow_once`` or ``allow_always`` option."""
    assert m.request is not None
    outcome = m.result.get("outcome") if isinstance(m.result, dict) else None
    if m.is_error or not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
        return False
    options = m.request.params.get("options")
    kinds = {o.get("optionId"): o.get("kind") for o in options or [] if isinstance(o, dict)}
    return kinds.get(outcome.get("optionId")) in ("allow_once", "allow_always")


@transition("response", C, "session/request_permission")
def _permission_answered(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is not None:
        tool_call = m.request.params.get("toolCall")
        if not isinstance(tool_call, dict):
            tool_call = {}
        tool_call_id = tool_call.get("toolCallId")
        if isinstance(tool_call_id, str) and _allowed(m) and tool_call.get("status") is None:
            # spec PROMPT-14: an allowed tool call's next status is judged (one whose request
            # already reported a status is not: it may be running).
            s.permitted = remember(s.permitted, tool_call_id, None, state.max_remembered)
        s.permissions = {k: v for k, v in s.permissions.items() if k != m.id} or NOTHING
        for cancelled in (s.cancelled_permissions, s.crossed_permissions):
            if m.id in cancelled and isinstance(cancelled, set):  # then it is a set of its own
                cancelled.discard(m.id)
