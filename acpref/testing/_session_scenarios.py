"""The session scenarios of ``check-agent``: load, resume, list, delete, close, MCP servers, and
a system prompt the agent cannot apply.

Spec: session-setup.mdx, session-list.mdx, session-delete.mdx, system-prompt.md (provisional).
Each runs only when the agent advertises the capability it needs (``Scenario.needs``);
otherwise its clauses are SKIPPED.
"""

from __future__ import annotations

import os
import time
from typing import Any, List, Optional, Tuple

from .. import schema as s
from .._core.system_prompt import CAPABILITY as SYSTEM_PROMPT
from .._core.system_prompt import OVERRIDE_CAPABILITY
from ..errors import ErrorCode, RpcError
from ._cancel_scenarios import cancel_busy_turn
from ._driver import Turn
from ._results import SKIPPED
from ._scenario import NotReached, ScenarioContext, round_trip

__all__ = [
    "load",
    "load_restarted",
    "resume",
    "list_sessions",
    "delete",
    "close",
    "system_prompt",
    "mcp",
]


#: The second prompt of the history that ``session/load`` must replay: a conversation of two
#: exchanges, so that a replay of only part of it (the last exchange, the user's side) shows.
SECOND_PROMPT = "acpref check-agent: a second message, please answer with one short sentence."


def _history(ctx: ScenarioContext, session_id: str) -> List[Tuple[str, Turn]]:
    """Two prompt turns: each prompt's text, and the turn with what the agent answered."""
    return [(text, ctx.prompt(session_id, text)) for text in (ctx.options.prompt, SECOND_PROMPT)]


def load(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    turns = _history(ctx, session_id)
    ctx.at("SETUP-05", "SETUP-08")
    before = ctx.driver.update_count(session_id)
    ctx.driver.request("session/load", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    _judge_replay(ctx, session_id, before, turns)


def load_restarted(ctx: ScenarioContext) -> None:
    """session/load of a session the agent made in a process that has ended since."""
    ctx.initialize()
    session_id = ctx.new_session()
    turns = _history(ctx, session_id)
    ctx.restart()
    ctx.initialize()
    ctx.authenticate()
    ctx.at("SETUP-05", "SETUP-08")
    params = {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []}
    try:
        ctx.driver.request("session/load", params)
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            raise  # spec RPC-16: filed with the auth hint, like any other scenario's
        # No clause asks sessions to outlive the agent process: a restarted agent that cannot
        # load one breaks nothing. What a load that succeeds must do is judged below.
        reason = (
            f"the restarted agent answered session/load error {exc.code}: {exc.detail} "
            "(sessions need not outlive the agent process)"
        )
        for clause in ("SETUP-05", "SETUP-06", "SETUP-07", "SETUP-08"):
            ctx.skip(clause, reason)
        return
    _judge_replay(ctx, session_id, 0, turns)


def _judge_replay(
    ctx: ScenarioContext, session_id: str, before: int, turns: List[Tuple[str, Turn]]
) -> None:
    """SETUP-05 against every word of its sentence: the *entire* conversation is replayed.

    Each message of the history must come back: the user's message of each prompt, and each
    message the agent sent in each turn. A message is compared by its text, joined over its
    chunks, with whitespace left out, and looked for in the text of the replay's chunks of the
    same kind (user or agent) joined: an agent may chunk a message differently when it replays
    it, merge or split its messages, or wrap a user message in context of its own.
    """
    replay = ctx.driver.updates(session_id, since=before)
    if ctx.driver.update_count(session_id) - before > len(replay):
        # The driver let the oldest updates go: what is missing cannot be told from what is not.
        ctx.skip("SETUP-05", f"the replay streamed more than the {len(replay)} updates kept")
    else:
        missing = _missing(turns, replay)
        # spec SETUP-05: the whole conversation is replayed, every message of it: the user's
        # message of each prompt and the agent's of each turn.
        # spec-gap replay-content: which other updates (thoughts, tool calls, plans) belong to
        # "the conversation", and their order, are not graded.
        evidence = f"the replay ({len(replay)} updates) lacks " + "; ".join(missing)
        ctx.check("SETUP-05", not missing, evidence)
    # spec SETUP-06, SETUP-07, SETUP-08: judged by the oracle (message ids, the replay before
    # the answer, the answer's shape).
    ctx.passed("SETUP-07", "SETUP-08", "SETUP-06")


def _missing(turns: List[Tuple[str, Turn]], replay: List[Any]) -> List[str]:
    """What of the history ``turns`` the ``replay`` lacks, one phrase per message."""
    replayed = {
        kind: _squash("".join(_text(u) for u in replay if isinstance(u, kind)))
        for kind in (s.UserMessageChunk, s.AgentMessageChunk)
    }
    missing = []
    for number, (sent, turn) in enumerate(turns, 1):
        prompt = _squash(sent)
        if prompt not in replayed[s.UserMessageChunk]:
            missing.append(f"the user's message of prompt {number} ({_cut(prompt)!r})")
        for text in _messages(turn.updates, s.AgentMessageChunk):
            if _squash(text) not in replayed[s.AgentMessageChunk]:
                missing.append(f"the agent's message of turn {number} ({_cut(text)!r})")
    return missing


def _messages(updates: List[Any], kind: type) -> List[str]:
    """The text of each message of ``kind`` in ``updates``: its chunks joined. A message is a run
    of chunks that share a ``messageId`` (a change of id starts a new one) and that no update of
    another kind interrupts; chunks without text (an image) add none."""
    messages: List[str] = []
    last: Any = None
    for update in updates:
        if not isinstance(update, kind):
            last = None
            continue
        message_id = getattr(update, "message_id", None)
        if last is None or message_id != last[0]:
            messages.append("")
        messages[-1] += _text(update)
        last = (message_id,)
    return [m for m in messages if _squash(m)]


def _squash(text: str) -> str:
    """``text`` without its whitespace: a replay may join chunks with or without it."""
    return "".join(text.split())


def _cut(text: str, length: int = 40) -> str:
    return text if len(text) <= length else text[: length - 3] + "..."


def _text(update: Any) -> str:
    content = getattr(update, "content", None)
    return content.text if isinstance(content, s.TextContent) else ""


#: What a replay of the history is made of, as the wire shows it (SETUP-12).
_HISTORY = ("user_message_chunk", "agent_message_chunk")


def _around_answers(messages: List[Any], session_id: str) -> List[List[str]]:
    """The ``sessionUpdate`` kinds of ``session_id``'s updates among the agent's ``messages``
    (in wire order), cut at each response: before the first, between it and the second..."""
    parts: List[List[str]] = [[]]
    for _, m in messages:
        if not isinstance(m, dict):
            continue
        if "method" not in m and "id" in m:
            parts.append([])
        elif m.get("method") == "session/update" and isinstance(m.get("params"), dict):
            params = m["params"]
            update = params.get("update")
            if params.get("sessionId") == session_id and isinstance(update, dict):
                parts[-1].append(str(update.get("sessionUpdate")))
    return parts


def resume(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    ctx.prompt(session_id, ctx.options.prompt)
    ctx.at("SETUP-13")
    since = ctx.driver.sink.received_count
    ctx.driver.request(
        "session/resume", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []}
    )
    ctx.passed("SETUP-13")
    round_trip(ctx)  # a replay sent just after the answer arrives before this one's
    # Cut where the wire puts the answers (the resume's, then the ping's), not where this thread
    # happens to look: the driver may have read the updates after the answer by then.
    parts = _around_answers(ctx.driver.sink.received(since), session_id) + [[], []]
    first, later = parts[0], parts[1]
    replayed = [k for k in first if k == "user_message_chunk"]
    late = [k for k in first if k == "agent_message_chunk"]
    if replayed:
        # spec SETUP-12: "MUST NOT replay the conversation history via `session/update`
        # notifications before responding": the user's messages are no turn's own output.
        ctx.check(
            "SETUP-12",
            False,
            f"{len(replayed)} user message chunks of the history came before the session/resume "
            "answer",
        )
    elif late:
        # spec-gap resume-crossing: agent message chunks before the answer may be a replay, or
        # the ended turn's last chunks written before the agent read the resume (the oracle
        # judges each: SETUP-12 where the agent had provably read the resume).
        ctx.skip(
            "SETUP-12",
            f"{len(late)} agent message chunks came before the session/resume answer: a replay, "
            "or the ended turn's last chunks crossing the resume (spec-gap resume-crossing)",
        )
    else:
        ctx.passed("SETUP-12")
    after = [k for k in later if k in _HISTORY]
    # spec-gap replay-after-resume: the MUST NOT sentence says "before responding"; a replay
    # right after the answer breaks only the page's description ("without replaying").
    ctx.check(
        "spec-gap:replay-after-resume",
        not after,
        f"{len(after)} message chunks of the history came right after the session/resume answer",
    )


def list_sessions(ctx: ScenarioContext) -> None:
    ctx.initialize()
    _new_and_list_together(ctx)
    ctx.new_session()
    ctx.at("LIST-02")
    ctx.driver.request("session/list", {})
    ctx.passed("LIST-02", "LIST-05", "LIST-06")
    ctx.at("LIST-04")
    ctx.driver.request("session/list", {"cwd": ctx.cwd})
    ctx.passed("LIST-04")
    ctx.at("LIST-09")
    nowhere = os.path.join(ctx.cwd, "acpref-no-sessions-here")
    result = ctx.driver.request("session/list", {"cwd": nowhere})
    # spec LIST-09: no match is an empty array, not an error.
    ctx.check(
        "LIST-09",
        result.sessions == [],
        f"{len(result.sessions)} sessions listed under an empty directory",
    )
    try:
        ctx.driver.request("session/list", {"cursor": "acpref-not-a-cursor"})
        ctx.check("LIST-12", False, "an invalid cursor was answered with a result")
    except RpcError:
        ctx.passed("LIST-12")


def _new_and_list_together(ctx: ScenarioContext) -> None:
    """session/new and session/list sent at once, the list before the new is answered: two
    requests in flight whose results differ in shape, so that the oracle sees which answer came
    under which id. A result that fits the other request is a swap, the oracle's RPC-07 finding
    (``acpref.oracle._validate``); here RPC-07 passes when both came back as results."""
    ctx.authenticate()
    ctx.at("RPC-07")  # an agent that cannot take two requests at once fails it
    new = {"method": "session/new", "params": {"cwd": ctx.cwd, "mcpServers": []}}
    listing = {"method": "session/list", "params": {}}
    answers = ctx.driver.requests_raw_together(new, listing)
    errors = [a.get("error") for a in answers if "result" not in a]
    if errors:
        codes = ", ".join(str(e.get("code")) if isinstance(e, dict) else "?" for e in errors)
        ctx.skip("RPC-07", f"session/new and session/list sent together: answered error {codes}")
    else:
        ctx.passed("RPC-07")
    ctx.at("LIST-02")


def delete(ctx: ScenarioContext) -> None:
    ctx.initialize()
    session_id = ctx.new_session()
    ctx.at("DELETE-02")
    ctx.driver.request("session/delete", {"sessionId": session_id})
    ctx.passed("DELETE-02")
    ctx.at("DELETE-03")
    if not ctx.driver.supports("sessionCapabilities.list"):
        ctx.skip("DELETE-03", "the agent does not advertise sessionCapabilities.list")
    else:
        listed = ctx.driver.request("session/list", {"cwd": ctx.cwd})
        ids = [info.session_id for info in listed.sessions]
        # spec DELETE-03: a deleted session is never listed again.
        ctx.check(
            "DELETE-03", session_id not in ids, f"deleted session {session_id!r} still listed"
        )
    try:
        ctx.driver.request("session/delete", {"sessionId": session_id})
        ctx.passed("DELETE-04")
    except RpcError as exc:
        # spec DELETE-04: deleting an already deleted session succeeds silently.
        evidence = f"a second delete answered error {exc.code}: {exc.detail}"
        ctx.check("DELETE-04", False, evidence)


def close(ctx: ScenarioContext) -> None:
    from ._mcp_check import McpProbe

    ctx.initialize()
    ctx.at("SETUP-17")
    idle = ctx.new_session()
    ctx.driver.request("session/close", {"sessionId": idle})
    ctx.passed("SETUP-17")
    ctx.at("SETUP-16")
    # The busy session has a stdio MCP server of its own (a name and a socket no other session
    # is given), started with the session or at its turn: after the close it must be stopped.
    with McpProbe(name=CLOSED_SESSION_SERVER) as probe:
        busy, refused = _session_with(ctx, probe)
        closing: List[Any] = []

        def close() -> None:  # answered only once the turn has ended: never waited for here
            closing.append(
                ctx.driver.connection.request_async("session/close", {"sessionId": busy})
            )

        cancel_busy_turn(ctx, busy, "SETUP-16", close)
        if not closing:  # the turn ended before it could be cancelled: the session closes idle
            close()
        for request in closing:
            request.result(ctx.options.timeout)
        if refused:
            _not_judged(ctx, refused)
        else:
            _judge_freeing(ctx, busy, probe)


#: The name of the stdio MCP server of the session that ``close`` closes while it works.
CLOSED_SESSION_SERVER = "acpref-probe-closed-session"


def _session_with(ctx: ScenarioContext, probe: Any) -> Tuple[str, str]:
    """A session with the probe's stdio server, and "" (or, when the server alone made
    session/new fail, a session without it and why the freeing is not judged)."""
    try:
        return ctx.new_session(mcp_servers=probe.servers()), ""
    except NotReached as exc:
        return ctx.new_session(), f"session/new with an MCP server: {exc.answer} (see SETUP-30)"


def _judge_freeing(ctx: ScenarioContext, session_id: str, probe: Any) -> None:
    """SETUP-16's second half: the closed session's stdio MCP server is stopped.

    The wait starts at the close's answer; the server is stopped once every probe process
    that connected has closed its socket (it exited). A stop seen adds nothing to the row: its
    PASS or SKIPPED is the cancellation's, which this does not stand for.
    """
    log = probe.stdio
    answered = time.monotonic()
    if not log.wait_started(ctx.options.mcp_wait):
        reason = (
            f"the agent never started the stdio MCP server {probe.name!r} of the closed session "
            f"(by {ctx.options.mcp_wait:g}s after session/close was answered)"
        )
        _not_judged(ctx, reason)
        return
    if log.wait_stopped(ctx.options.timeout):
        return
    round_trip(ctx)  # answered: the agent still reads its input, the connection is open
    pids = ", ".join(str(p) for p in log.pids()) or "?"
    evidence = (
        f"the stdio MCP server {probe.name!r} that the agent started for session {session_id!r} "
        f"(pid {pids}) was still running {time.monotonic() - answered:.1f}s after session/close "
        "was answered, while the agent answered a request sent then (the connection open)"
    )
    # spec SETUP-16: "... then free the resources associated with the session": the stdio MCP
    # server the client named for this session alone. The sentence sets no time: one still
    # running --timeout seconds on, the agent idle and the connection open, was not freed while
    # the connection lasted (decisions.md freed-after-close).
    ctx.check("SETUP-16", False, evidence)


def _not_judged(ctx: ScenarioContext, reason: str) -> None:
    """Why the freeing of the closed session was not judged: in the row when it is SKIPPED (its
    reasons), else in the report's notes."""
    reason = f"the freeing after session/close not judged: {reason}"
    ctx.skip("SETUP-16", reason)
    if ctx.report.results["SETUP-16"].status != SKIPPED:
        ctx.report.notes.append(f"[{ctx.name}] SETUP-16, {reason}")


# -- a system prompt the agent cannot apply (provisional) ---------------------------------------

#: A mode no version of the feature defines: preserved on the wire, never supported.
UNKNOWN_MODE = "acpref-unknown-mode"


def system_prompt(ctx: ScenarioContext) -> None:
    """``session/new`` with a ``systemPrompt`` in a mode the agent does not know, then in
    ``override`` when it advertised ``append`` only: each must be an error, not a session.

    The second request breaks the client's SYSPROMPT-03 on purpose (as bad-input breaks other
    client rules): the oracle's finding on the driver fails nothing.
    """
    ctx.initialize()
    if not ctx.driver.supports(SYSTEM_PROMPT):  # also when --only skipped the handshake
        for clause in ("SYSPROMPT-05", "SYSPROMPT-04"):
            ctx.skip(clause, f"the agent does not advertise {SYSTEM_PROMPT}")
        return
    ctx.at("SYSPROMPT-05")
    ctx.new_session()  # none: a login the agent needs shows here, not as the error below
    _refuses_system_prompt(ctx, "SYSPROMPT-05", UNKNOWN_MODE)
    if ctx.driver.supports(OVERRIDE_CAPABILITY):
        reason = f"the agent advertises {OVERRIDE_CAPABILITY}: it supports both modes"
        ctx.skip("SYSPROMPT-04", reason)
        return
    _refuses_system_prompt(ctx, "SYSPROMPT-04", "override")


def _refuses_system_prompt(ctx: ScenarioContext, clause: str, mode: str) -> None:
    ctx.at(clause)
    text = "acpref check-agent: answer in one short sentence."
    prompt = {"mode": mode, "content": [{"type": "text", "text": text}]}
    params = {"cwd": ctx.cwd, "mcpServers": [], "systemPrompt": prompt}
    try:
        answer = ctx.driver.request("session/new", params)
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            raise  # spec RPC-16: filed with the auth hint, like any other scenario's
        ctx.passed(clause)
        return
    # spec SYSPROMPT-04, SYSPROMPT-05: a mode the agent did not advertise, or does not know, is
    # an error instead of a session.
    evidence = f"session/new with systemPrompt mode {mode!r} opened session {answer.session_id!r}"
    ctx.check(clause, False, evidence)


# -- MCP servers ----------------------------------------------------------------------------------


def _mcp_session(ctx: ScenarioContext, servers: List[Any]) -> Optional[str]:
    """``session/new`` with the MCP servers; None (the clauses decided) when only they fail it."""
    try:
        return ctx.new_session(mcp_servers=servers)
    except NotReached as exc:
        ctx.new_session()  # refused without the servers too: nothing is reached
        # spec SETUP-30, SETUP-36: the servers alone made session/new fail.
        evidence = f"with the MCP servers it was given, {exc.answer}; without them, a session"
        ctx.check("SETUP-30", False, evidence)
        ctx.check("SETUP-36", False, evidence)
        ctx.skip("SETUP-31", "session/new with the MCP servers failed: see SETUP-30")
        return None


def mcp(ctx: ScenarioContext) -> None:
    from ._mcp_check import McpProbe, initialized

    ctx.initialize()
    http = ctx.driver.supports("mcpCapabilities.http")
    with McpProbe(http=http) as probe:
        ctx.at("SETUP-30")
        session_id = _mcp_session(ctx, probe.servers())
        if session_id is None:
            return
        # Most agents connect while they open the session; some only at the first turn.
        if not probe.wait_initialized(ctx.options.mcp_wait):
            ctx.at("SETUP-36")
            ctx.prompt(session_id, ctx.options.prompt)
            probe.wait_initialized(ctx.options.mcp_wait)
        stdio = list(probe.stdio.items)
        http_items = list(probe.http.items) if probe.http is not None else []
    when = "after session/new and one prompt turn"
    if not stdio:
        evidence = f"the agent never started the stdio MCP server it was given ({when})"
        # spec SETUP-36: the agent connects to every MCP server the client supplied.
        ctx.check("SETUP-36", False, evidence)
        ctx.skip("SETUP-30", "the agent never started the stdio MCP server: see SETUP-36")
    elif not initialized(stdio):
        sent = [m.get("method") for m in stdio if isinstance(m, dict) and "method" in m]
        evidence = (
            f"the agent started the stdio MCP server but never completed its handshake "
            f"(initialize, then notifications/initialized); it sent {sent}"
        )
        # spec SETUP-30: stdio MCP servers are supported, which takes the MCP handshake.
        ctx.check("SETUP-30", False, evidence)
        ctx.check("SETUP-36", False, evidence)
    else:
        ctx.passed("SETUP-30")
        started = stdio[0].get("started", {}) if isinstance(stdio[0], dict) else {}
        if started.get("env") != "1":
            ctx.report.notes.append(
                "[mcp] the agent started the stdio MCP server without the env it was given "
                "(ACPREF_PROBE=1)"
            )
        if not http:
            ctx.passed("SETUP-36")
    if not http:
        ctx.skip("SETUP-31", "the agent does not advertise mcpCapabilities.http")
        return
    if initialized(http_items):
        ctx.passed("SETUP-31")
        if initialized(stdio):
            ctx.passed("SETUP-36")
        return
    evidence = (
        f"the agent advertises mcpCapabilities.http but never initialized the HTTP MCP server "
        f"it was given ({when}; it sent "
        f"{[m.get('method') for m in http_items if isinstance(m, dict) and 'method' in m]})"
    )
    # spec SETUP-31, SETUP-36: an advertised HTTP transport is used for the servers given.
    ctx.check("SETUP-31", False, evidence)
    ctx.check("SETUP-36", False, evidence)
