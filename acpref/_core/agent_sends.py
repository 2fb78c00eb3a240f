"""Rules on what the agent sends: its answers, its session updates, its requests to the client.

Spec: initialization.mdx, authentication.mdx, session-setup.mdx, session-list.mdx,
session-delete.mdx, session-modes.mdx, session-config-options.mdx, prompt-turn.mdx,
tool-calls.mdx, file-system.mdx, terminals.mdx, elicitation.mdx. Each check cites its clause.

A finding's ``code`` is the error the client answers a refused request with.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional

from ..errors import ErrorCode
from .book import Message, check, transition
from .findings import Finding, Party, finding
from .state import NO_IDS, NO_TURN, SessionState, grow
from .values import (
    has_link,
    is_absolute_path,
    is_development_url,
    is_iso8601,
    is_one_based,
    names_a_secret,
    url_credentials,
)

if TYPE_CHECKING:  # pragma: no cover
    from .state import ProtocolState

A = Party.AGENT
INVALID = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.RESOURCE_NOT_FOUND

#: Updates that belong to a prompt turn (or to a load replay); the others may come at any time.
TURN_CONTENT = frozenset(
    {
        "user_message_chunk",
        "agent_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "plan",
        # spec-gap plan-operations-turn: provisional plan operations are a turn's content too.
        "plan_update",
        "plan_removed",
    }
)
CHUNKS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
#: The two updates of a context compaction (session-compaction.md): gated on
#: ``session.compaction`` (COMPACT-01), and part of replay (COMPACT-14), but not turn content: the
#: spec ties a compaction to no turn.
# spec-gap compaction-not-turn-content: replayed, yet no PROMPT-26 or SETUP-07 check applies.
COMPACTION = frozenset({"compaction_update", "compaction_summary_chunk"})
#: The statuses that end a compaction (COMPACT-10); any other string is open (COMPACT-15).
COMPACTION_ENDS = frozenset({"completed", "failed", "cancelled"})


# -- initialize -----------------------------------------------------------------------------------


@check("response", A, "initialize")
def _initialized(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    requested = state.requested_version
    if m.is_error:
        if requested != 1:
            # spec INIT-08: an unsupported version is answered with the agent's newest, not an error.
            yield finding(
                "INIT-08",
                A,
                f"initialize with protocolVersion {requested!r} answered an error",
                m.index,
            )
        else:
            # spec INIT-04: initialize is answered with the version and the agent's capabilities.
            yield finding(
                "INIT-04", A, "initialize with protocolVersion 1 answered an error", m.index
            )
        return
    result = m.result if isinstance(m.result, dict) else {}
    version = result.get("protocolVersion")
    if type(version) is not int:
        # spec INIT-04: the result carries the negotiated protocolVersion (required, an integer).
        yield finding(
            "INIT-04", A, f"initialize result has no integer protocolVersion ({version!r})", m.index
        )
    # agentCapabilities may be omitted: the schema gives it a default (no capability beyond the
    # baseline), and the official SDKs omit it. Its shape, when present, is the codec's business.
    if requested == 1 and version != 1:
        # spec INIT-07: a supported requested version is answered with that same version.
        yield finding("INIT-07", A, f"requested protocolVersion 1, answered {version!r}", m.index)
    info = result.get("agentInfo")
    if not (isinstance(info, dict) and info.get("name") and info.get("version")):
        # spec INIT-05, INIT-20: agentInfo with name and version.
        yield finding("INIT-05", A, "initialize result lacks agentInfo name and version", m.index)
    methods = result.get("authMethods")
    if not state.gate_open("auth.terminal", Party.CLIENT):
        for method in methods if isinstance(methods, list) else []:
            if isinstance(method, dict) and method.get("type") == "terminal":
                # spec AUTH-05: terminal auth methods only for a client with auth.terminal.
                yield finding(
                    "AUTH-05",
                    A,
                    f"terminal auth method {method.get('id')!r} offered to a client without auth.terminal",
                    m.index,
                )


@transition("response", A, "initialize")
def _initialized_apply(state: "ProtocolState", m: Message) -> None:
    if m.is_error or not isinstance(m.result, dict):
        return
    state.initialized = True
    state.version = m.result.get("protocolVersion")
    caps = m.result.get("agentCapabilities")
    state.agent_caps = caps if isinstance(caps, dict) else {}
    methods = m.result.get("authMethods")
    state.auth_methods = (
        [a for a in methods if isinstance(a, dict)] if isinstance(methods, list) else []
    )


# -- results that must be objects -----------------------------------------------------------------

_OBJECT_RESULTS = {
    "authenticate": "AUTH-09",
    "logout": "AUTH-16",
    "session/load": "SETUP-08",
    "session/resume": "SETUP-13",
    "session/close": "SETUP-17",
    "session/delete": "DELETE-02",
    "session/set_mode": "MODES-05",
}


@check("response", A, *_OBJECT_RESULTS)
def _object_result(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if not m.is_error and not isinstance(m.result, dict):
        # spec SCHEMA-09, AUTH-16, SETUP-08, SETUP-17, DELETE-02, MODES-05: these results are
        # objects ({} at least), never null (spec-gap result-null).
        yield finding(
            _OBJECT_RESULTS[m.method or ""],
            A,
            f"{m.method} result is {m.result!r}, not an object",
            m.index,
        )


@transition("response", A, "authenticate")
def _authenticated(state: "ProtocolState", m: Message) -> None:
    if not m.is_error:
        state.authenticated = True


@transition("response", A, "logout")
def _logged_out(state: "ProtocolState", m: Message) -> None:
    if not m.is_error:
        state.authenticated = False


@check(
    "response", A, "session/new", "session/load", "session/resume", "session/prompt", "session/list"
)
def _auth_sticks(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if m.is_error and m.error.get("code") == ErrorCode.AUTH_REQUIRED and state.authenticated:
        # spec AUTH-10: after a successful authenticate, auth_required no longer comes back.
        yield finding(
            "AUTH-10",
            A,
            f"{m.method} answered auth_required after a successful authenticate",
            m.index,
        )


# -- session setup --------------------------------------------------------------------------------


#: The option categories ACP reserves (names without a leading ``_``), CONFIG-07 and CONFIG-10.
RESERVED_CATEGORIES = frozenset({"mode", "model", "model_config", "thought_level"})


def _config_findings(state: "ProtocolState", options: Any, m: Message) -> Iterable[Finding]:
    boolean_ok = state.gate_open("session.configOptions.boolean", Party.CLIENT)
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, dict):
            continue
        category = option.get("category")
        if (
            isinstance(category, str)
            and category not in RESERVED_CATEGORIES
            and not category.startswith("_")
        ):
            # spec CONFIG-10: names without a leading "_" are ACP's; a custom category starts
            # with "_" (like an extension method, EXT-05).
            yield finding(
                "CONFIG-10",
                A,
                f"option {option.get('id')!r} has category {category!r} (custom ones start with _)",
                m.index,
            )
        if option.get("type") == "boolean" and not boolean_ok:
            # spec CONFIG-05: no boolean option unless the client advertised support.
            yield finding(
                "CONFIG-05",
                A,
                f"boolean option {option.get('id')!r} sent to a client without support",
                m.index,
            )
        if option.get("type") == "select":
            from .client_sends import _select_values

            if option.get("currentValue") not in _select_values(option):
                # spec CONFIG-04: a select's currentValue is one of its values.
                yield finding(
                    "CONFIG-04",
                    A,
                    f"option {option.get('id')!r} currentValue {option.get('currentValue')!r} is not a value",
                    m.index,
                )


def _modes_findings(modes: Any, m: Message) -> Iterable[Finding]:
    if not isinstance(modes, dict):
        return
    ids = {x.get("id") for x in modes.get("availableModes") or [] if isinstance(x, dict)}
    if modes.get("currentModeId") not in ids:
        # spec MODES-02: currentModeId names one of availableModes.
        yield finding(
            "MODES-02",
            A,
            f"currentModeId {modes.get('currentModeId')!r} is not an available mode",
            m.index,
        )


@check("response", A, "session/new", "session/load", "session/resume")
def _setup_result(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if m.is_error or not isinstance(m.result, dict):
        return
    if m.method == "session/new":
        sid = m.result.get("sessionId")
        if sid in state.sessions or sid in state.deleted:
            # spec SETUP-02: every new session id is unique.
            yield finding("SETUP-02", A, f"session id {sid!r} was already used", m.index)
    yield from _modes_findings(m.result.get("modes"), m)
    yield from _config_findings(state, m.result.get("configOptions"), m)


def _remember_options(state: "ProtocolState", s: SessionState, result: Dict[str, Any]) -> None:
    modes = result.get("modes")
    if isinstance(modes, dict):
        s.mode_ids = state.shared_mode_ids(modes.get("availableModes") or [])
    options = result.get("configOptions")
    if isinstance(options, list):
        s.config = state.shared_config(options)


@transition("response", A, "session/new")
def _session_created(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    if (
        m.is_error
        or not isinstance(m.result, dict)
        or not isinstance(m.result.get("sessionId"), str)
    ):
        return
    cwd = m.request.params.get("cwd")
    # Sessions mostly share a few cwds: one string each, not one a session.
    s = SessionState(id=m.result["sessionId"], cwd=sys.intern(cwd) if type(cwd) is str else cwd)
    _remember_options(state, s, m.result)
    state.sessions[s.id] = s


@transition("response", A, "session/load", "session/resume")
def _session_reopened(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None:
        return
    if m.is_error:
        if _reopened_one(s, m.method):
            return
        if s.created_by_reopen:
            del state.sessions[s.id]
        else:
            s.status = "active"
        return
    still = _reopened_one(s, m.method)  # another load or resume is still in flight
    if not still:
        s.status = "active"
    s.created_by_reopen = False
    s.last = "load" if m.method == "session/load" else "resume"
    s.cwd = m.request.params.get("cwd", s.cwd)
    if still:  # the next replay re-sends the messages with their own ids
        s.old_message_ids = NO_IDS
        s.message_id = None
    else:
        _finish_message(s)
    if isinstance(m.result, dict):
        _remember_options(state, s, m.result)


def _reopened_one(s: SessionState, method: Optional[str]) -> bool:
    """Count one load or resume of ``s`` answered; True while others are still in flight."""
    loads, resumes = s.reopening or (0, 0)
    if method == "session/load":
        loads = max(loads - 1, 0)
    else:
        resumes = max(resumes - 1, 0)
    s.reopening = (loads, resumes) if loads or resumes else None
    if s.reopening is None:
        return False
    s.status = "loading" if loads else "resuming"  # a load in flight may still replay
    return True


@check("response", A, "session/close")
def _closed(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if not m.is_error and s is not None and s.turn is not NO_TURN and s.cancel_clause is not None:
        # spec-gap close-order: SETUP-16 says the close cancels the running turn (which must
        # still end "cancelled"), not which of the two answers comes first; acpref answers the
        # prompt first, and reports the other order as its reading, never as a MUST. A turn
        # without a cancel clause began after the close was sent (spec-gap close-in-flight).
        yield finding(
            "spec-gap:close-order",
            A,
            "session/close answered before the prompt turn it cancelled",
            m.index,
        )


@transition("response", A, "session/close")
def _closed_apply(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if s is not None and not m.is_error:
        # Nothing is kept of a closed session: to the rules it is unknown from now on, as a
        # record marked "closed" was, and a session/load or session/resume sets it up anew.
        del state.sessions[s.id]


# -- list and delete ------------------------------------------------------------------------------


@check("response", A, "session/list")
def _listed(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    if m.is_error or not isinstance(m.result, dict):
        return
    wanted = m.request.params.get("cwd")
    dirs_ok = state.gate_open("sessionCapabilities.additionalDirectories", A)
    for info in m.result.get("sessions") or []:
        if not isinstance(info, dict):
            continue
        sid, cwd = info.get("sessionId"), info.get("cwd")
        if not is_absolute_path(cwd):
            # spec LIST-05: each SessionInfo has an absolute cwd.
            yield finding("LIST-05", A, f"session {sid!r} listed with cwd {cwd!r}", m.index)
        if (
            isinstance(wanted, str)
            and isinstance(cwd, str)
            and cwd.rstrip("/") != wanted.rstrip("/")
        ):
            # spec LIST-04: with a cwd filter, only sessions with that cwd.
            yield finding(
                "LIST-04",
                A,
                f"session {sid!r} with cwd {cwd!r} listed under filter {wanted!r}",
                m.index,
            )
        if sid in state.deleted:
            # spec DELETE-03: a deleted session is never listed again.
            yield finding("DELETE-03", A, f"deleted session {sid!r} listed", m.index)
        if (
            "updatedAt" in info
            and info["updatedAt"] is not None
            and not is_iso8601(info["updatedAt"])
        ):
            # spec LIST-06: updatedAt is an ISO 8601 timestamp.
            yield finding("LIST-06", A, f"updatedAt {info['updatedAt']!r} is not ISO 8601", m.index)
        if "additionalDirectories" in info and not dirs_ok:
            # spec LIST-07: additionalDirectories only with the capability.
            yield finding(
                "LIST-07", A, "SessionInfo.additionalDirectories without the capability", m.index
            )


@transition("response", A, "session/list")
def _listed_apply(state: "ProtocolState", m: Message) -> None:
    if m.is_error or not isinstance(m.result, dict):
        return
    cursor = m.result.get("nextCursor")
    if isinstance(cursor, str):
        state.cursors.add(cursor)
    for info in m.result.get("sessions") or []:
        if isinstance(info, dict) and isinstance(info.get("sessionId"), str):
            state.listed[info["sessionId"]] = info.get("cwd")


@transition("response", A, "session/delete")
def _deleted(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    if not m.is_error:
        sid = m.request.params.get("sessionId")
        state.deleted.add(sid)
        state.listed.pop(sid, None)
        # Only the id is kept (SETUP-02, DELETE-03 need no more): a long connection that creates
        # and deletes sessions holds no state for them (found by tests/test_load.py).
        state.sessions.pop(sid, None)


# -- modes and config -----------------------------------------------------------------------------


@check("response", A, "session/set_config_option")
def _config_set(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    if m.is_error:
        return
    options = m.result.get("configOptions") if isinstance(m.result, dict) else None
    ids = (
        {o.get("id") for o in options if isinstance(o, dict)}
        if isinstance(options, list)
        else set()
    )
    if m.request.params.get("configId") not in ids:
        # spec CONFIG-19: the result carries the complete list, the changed option included.
        yield finding(
            "CONFIG-19", A, "set_config_option result lacks the option that was set", m.index
        )
    yield from _config_findings(state, options, m)


@transition("response", A, "session/set_config_option")
def _config_set_apply(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if s is not None and not m.is_error and isinstance(m.result, dict):
        _remember_options(state, s, m.result)


# -- prompt turn ----------------------------------------------------------------------------------


@check("response", A, "session/prompt")
def _turn_ends(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None or s.turn != m.id:
        return
    cancelled_by_request = m.request.cancel_requested
    if s.cancel_clause is None:
        if (
            cancelled_by_request
            and m.is_error
            and m.error.get("code") != ErrorCode.REQUEST_CANCELLED
        ):
            # spec CANCEL-05: a cancelled request is answered with a result or -32800.
            yield finding(
                "CANCEL-05", A, "cancelled prompt answered with an error other than -32800", m.index
            )
        return
    if m.is_error:
        # spec PROMPT-24: a cancelled turn ends with stopReason "cancelled", never an error.
        yield finding("PROMPT-24", A, "prompt turn cancelled, but answered with an error", m.index)
        return
    stop = m.result.get("stopReason") if isinstance(m.result, dict) else None
    if stop != "cancelled":
        if s.cancel_certain:
            # spec PROMPT-23 (SETUP-16 for close): the agent was waiting on us when we cancelled.
            yield finding(
                s.cancel_clause, A, f"cancelled turn ended with stopReason {stop!r}", m.index
            )
        else:
            # spec-gap cancel-race: the turn may have ended before the agent saw the cancel.
            yield finding(
                "spec-gap:cancel-race",
                A,
                f"turn ended {stop!r} after session/cancel (possibly a race)",
                m.index,
            )


@transition("response", A, "session/prompt")
def _turn_over(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is not None and s.turn == m.id:
        s.turn = NO_TURN
        s.cancel_clause = None
        s.last = "turn"
        if s.status == "loading":
            # The turn ran while a session/load was in flight: its message ids are not the
            # replay's (SETUP-06 judges the replay's own), which may start now.
            s.old_message_ids = NO_IDS
            s.message_id = None
        else:
            _finish_message(s)


def _finish_message(s: SessionState) -> None:
    if s.message_id is not None:
        s.old_message_ids = grow(s.old_message_ids, s.message_id)
        s.message_id = None


# -- session/update -------------------------------------------------------------------------------


def _update_session(state: "ProtocolState", m: Message) -> Optional[SessionState]:
    sid = m.session_id
    s = state.sessions.get(sid) if isinstance(sid, str) else None
    return s if s is not None and s.status != "closed" else None


@check("notification", A, "session/update")
def _update(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    s = _update_session(state, m)
    if s is None and m.session_id in state.children:
        return  # a child's own traffic: the rules of subagents.py (SUBAGENT-29: any time)
    if s is None and state.gate_open("subagents", Party.CLIENT):
        # spec SUBAGENT-05 (provisional): a child is announced before any of its traffic.
        yield finding(
            "SUBAGENT-05", A, f"session/update for unannounced session {m.session_id!r}", m.index
        )
        return
    if s is None:
        # spec-gap unknown-session: updates name a session set up on this connection.
        yield finding(
            "spec-gap:unknown-session",
            A,
            f"session/update for unknown session {m.session_id!r}",
            m.index,
        )
        return
    update = m.params.get("update")
    if not isinstance(update, dict):
        return
    kind = update.get("sessionUpdate")
    if kind in TURN_CONTENT:
        yield from _turn_content(state, s, kind, update, m)
    elif kind == "current_mode_update":
        mode = update.get("currentModeId")
        if s.mode_ids is not None and mode not in s.mode_ids:
            # spec MODES-02: the current mode is one of the available modes.
            yield finding("MODES-02", A, f"current mode {mode!r} is not an available mode", m.index)
    elif kind == "config_option_update":
        yield from _config_findings(state, update.get("configOptions"), m)
    elif kind == "session_info_update":
        for key in ("sessionId", "cwd", "additionalDirectories"):
            if key in update:
                # spec LIST-16: session_info_update never carries sessionId, cwd or roots.
                yield finding("LIST-16", A, f"session_info_update carries {key}", m.index)
    elif kind == "notice":
        yield from _notice(state, update, m)
    elif kind in COMPACTION:
        yield from _compaction(state, s, kind, update, m)


def _notice(state: "ProtocolState", update: Dict[str, Any], m: Message) -> Iterable[Finding]:
    # spec NOTICE-10: a notice may come at any point while the session exists, in a turn or not:
    # it is not turn content (no PROMPT-26 here), and never history.
    if not state.gate_open("session.notices", Party.CLIENT):
        # spec NOTICE-01: only to a client that advertised session.notices (an object).
        yield finding("NOTICE-01", A, "notice sent to a client without session.notices", m.index)
    title = update.get("title")
    # spec-gap notice-title-rule: minLength 1 is checked here, not by the codec.
    if isinstance(title, str) and not title:
        # spec NOTICE-03: the title is a non-empty plain-text string (minLength 1).
        yield finding("NOTICE-03", A, "notice with an empty title", m.index)


def _compaction(
    state: "ProtocolState", s: SessionState, kind: str, update: Dict[str, Any], m: Message
) -> Iterable[Finding]:
    if not state.gate_open("session.compaction", Party.CLIENT):
        # spec COMPACT-01: both compaction updates need clientCapabilities.session.compaction.
        yield finding(
            "COMPACT-01", A, f"{kind} sent to a client without session.compaction", m.index
        )
    compaction_id = update.get("compactionId")
    if not isinstance(compaction_id, str) or compaction_id not in s.compactions:
        return  # spec COMPACT-03, COMPACT-07: the first update (any status) or chunk opens it
    before = s.compactions[compaction_id]
    status = update.get("status") if kind == "compaction_update" else None
    if before in COMPACTION_ENDS and status is not None and status != before:
        # spec COMPACT-10, COMPACT-04: a compaction reaches exactly one terminal status, and its
        # id is never reused for another compaction.
        yield finding(
            "COMPACT-10",
            A,
            f"compaction {compaction_id!r} ended {before!r}, then reported {status!r}",
            m.index,
        )


def _turn_content(
    state: "ProtocolState", s: SessionState, kind: str, update: Dict[str, Any], m: Message
) -> Iterable[Finding]:
    if s.status == "resuming" and s.turn is NO_TURN:
        # spec SETUP-12: no history replay before the session/resume response. Content while a
        # turn of the session runs is that turn's (spec-gap reopen-in-flight): never refused.
        yield finding("SETUP-12", A, f"{kind} sent while session/resume was in flight", m.index)
    elif s.turn is NO_TURN and s.status != "loading":
        if s.last == "turn":
            # spec PROMPT-26: nothing of a turn after its session/prompt response.
            yield finding("PROMPT-26", A, f"{kind} sent after the prompt turn ended", m.index)
        elif s.last == "load":
            # spec SETUP-07: the replay is over once session/load is answered.
            yield finding("SETUP-07", A, f"{kind} sent after the session/load response", m.index)
        else:
            # spec-gap content-outside-turn: turn content belongs to a turn or a replay.
            yield finding(
                "spec-gap:content-outside-turn", A, f"{kind} sent outside any prompt turn", m.index
            )
    if kind in CHUNKS:
        message_id = update.get("messageId")
        if (
            s.status == "loading"
            and s.turn is NO_TURN  # spec-gap reopen-in-flight: a turn's chunks interleave the replay
            and isinstance(message_id, str)
            and message_id != s.message_id
            and message_id in s.old_message_ids
        ):
            # spec SETUP-06: replayed message ids are unique to their message.
            yield finding(
                "SETUP-06", A, f"messageId {message_id!r} reused for another message", m.index
            )
        return
    if kind == "tool_call":
        tool_call_id = update.get("toolCallId")
        if tool_call_id in s.tool_calls and s.status != "loading":
            # spec TOOL-02: tool call ids are unique within the session.
            yield finding("TOOL-02", A, f"tool call id {tool_call_id!r} used twice", m.index)
    elif kind == "tool_call_update":
        tool_call_id = update.get("toolCallId")
        if tool_call_id not in s.tool_calls:
            # spec TOOL-05: an update names a tool call the client knows.
            yield finding(
                "TOOL-05", A, f"tool_call_update for unknown tool call {tool_call_id!r}", m.index
            )
        name = update.get("name")
        before = s.tool_names.get(tool_call_id) if isinstance(tool_call_id, str) else None
        if isinstance(name, str) and before is not None and name != before:
            # spec TOOL-17: a reported tool name is not changed later (but to correct it).
            yield finding(
                "TOOL-17", A, f"tool call {tool_call_id!r} renamed {before!r} to {name!r}", m.index
            )
    if kind in ("tool_call", "tool_call_update"):
        yield from _tool_call_body(state, update, m)


def _tool_call_body(state: "ProtocolState", body: Dict[str, Any], m: Message) -> Iterable[Finding]:
    content = body.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "diff" and not is_absolute_path(item.get("path")):
            # spec TOOL-13: a diff's path is absolute.
            yield finding("TOOL-13", A, f"diff path {item.get('path')!r} is not absolute", m.index)
        if item.get("type") == "terminal":
            term = state.terminals.get(item.get("terminalId"))
            if term is None or term.released:
                # spec TOOL-14: embedded terminals come from terminal/create and are not released.
                state_word = "released" if term is not None else "unknown"
                yield finding(
                    "TOOL-14",
                    A,
                    f"tool call embeds {state_word} terminal {item.get('terminalId')!r}",
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


@transition("notification", A, "session/update")
def _update_apply(state: "ProtocolState", m: Message) -> None:
    s = _update_session(state, m)
    update = m.params.get("update")
    if s is None or not isinstance(update, dict):
        return
    kind = update.get("sessionUpdate")
    if kind in CHUNKS:
        message_id = update.get("messageId")
        if isinstance(message_id, str) and message_id != s.message_id:
            _finish_message(s)
            s.message_id = message_id
    elif kind in ("tool_call", "tool_call_update") and isinstance(update.get("toolCallId"), str):
        if kind == "tool_call":
            s.tool_calls = grow(s.tool_calls, update["toolCallId"])
        # spec TOOL-18: a string name sets or replaces it; omitted or null leaves it.
        if isinstance(update.get("name"), str) and update["toolCallId"] in s.tool_calls:
            s.tool_names = _put(s.tool_names, update["toolCallId"], update["name"])
    elif kind in COMPACTION and isinstance(update.get("compactionId"), str):
        status = update.get("status") if kind == "compaction_update" else None
        known = s.compactions.get(update["compactionId"])
        # spec COMPACT-07: a first-seen id (a chunk) is an in-progress compaction.
        s.compactions = _put(
            s.compactions, update["compactionId"], status or known or "in_progress"
        )
    elif kind == "config_option_update" and isinstance(update.get("configOptions"), list):
        s.config = state.shared_config(update["configOptions"])


def _put(table: Mapping[str, Any], key: str, value: Any) -> Dict[str, Any]:
    """``table`` with ``key`` set: in place once it is the session's own dict (see ``grow``)."""
    if isinstance(table, dict):
        table[key] = value
        return table
    return {**table, key: value}


# -- the agent's requests to the client -----------------------------------------------------------

_SESSION_SCOPED = (
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)


@check("request", A, *_SESSION_SCOPED)
def _agent_request_session(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    # spec SUBAGENT-19: a request for an announced child is served (subagents.py judges it).
    if _update_session(state, m) is None and m.session_id not in state.children:
        # spec-gap unknown-session: the client answers -32002 for a session it does not know.
        yield finding(
            "spec-gap:unknown-session",
            A,
            f"{m.method} for unknown session {m.session_id!r}",
            m.index,
            NOT_FOUND,
        )


@check("request", A, "session/request_permission")
def _permission(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    options = m.params.get("options")
    ids: List[Any] = (
        [o.get("optionId") for o in options if isinstance(o, dict)]
        if isinstance(options, list)
        else []
    )
    if len(ids) != len(set(ids)):
        # spec TOOL-10: optionIds are unique within the request.
        yield finding("TOOL-10", A, "permission options repeat an optionId", m.index, INVALID)
    tool_call = m.params.get("toolCall")
    if isinstance(tool_call, dict):
        yield from _tool_call_body(state, tool_call, m)


@transition("request", A, "session/request_permission")
def _permission_apply(state: "ProtocolState", m: Message) -> None:
    s = _update_session(state, m)
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
    if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
        s.tool_calls = grow(s.tool_calls, tool_call["toolCallId"])


@check("request", A, "fs/read_text_file", "fs/write_text_file")
def _fs(state: "ProtocolState", m: Message) -> Iterable[Finding]:
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
def _terminal_create(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    cwd = m.params.get("cwd")
    if cwd is not None and not is_absolute_path(cwd):
        # spec TERM-02, OVERVIEW-06: the terminal's cwd is absolute.
        yield finding("TERM-02", A, f"terminal cwd {cwd!r} is not absolute", m.index, INVALID)


@check(
    "request", A, "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release"
)
def _terminal_use(state: "ProtocolState", m: Message) -> Iterable[Finding]:
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


@check("request", A, "elicitation/create")
def _elicit(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    mode = m.params.get("mode")
    if not (isinstance(mode, str) and state.gate_open(f"elicitation.{mode}", Party.CLIENT)):
        # spec ELICIT-06, ELICIT-08: only a mode the client advertised, always named (there is no
        # default mode); ELICIT-29: answered -32602.
        yield finding(
            "ELICIT-06",
            A,
            f"elicitation mode {mode!r} was not advertised by the client",
            m.index,
            INVALID,
        )
    sid, request_id = m.params.get("sessionId"), m.params.get("requestId")
    if sid is not None:
        if _update_session(state, m) is None:
            # spec ELICIT-09: a session-scoped elicitation names a known session.
            yield finding(
                "ELICIT-09", A, f"elicitation for unknown session {sid!r}", m.index, NOT_FOUND
            )
    elif not (isinstance(request_id, (str, int)) and request_id in state.outstanding[Party.CLIENT]):
        # spec ELICIT-09: otherwise it names a client request in flight.
        yield finding(
            "ELICIT-09",
            A,
            f"elicitation scoped to request {request_id!r}, not in flight",
            m.index,
            INVALID,
        )
    if mode == "form":
        schema = m.params.get("requestedSchema")
        props = schema.get("properties") if isinstance(schema, dict) else None
        for name, prop in props.items() if isinstance(props, dict) else ():
            if isinstance(prop, dict) and prop.get("type") == "object":
                # spec ELICIT-11: the requested schema is flat: no nested object fields.
                yield finding(
                    "ELICIT-11", A, f"form field {name!r} is a nested object", m.index, INVALID
                )
            title = prop.get("title") if isinstance(prop, dict) else None
            if names_a_secret(name) or names_a_secret(title):
                # spec ELICIT-15: form mode never asks for a secret or credential. Only the
                # field's name is seen, not its purpose: a warning (spec-gap
                # elicitation-secret-heuristics), never a refusal.
                yield finding(
                    "spec-gap:elicitation-secret-heuristics",
                    A,
                    f"ELICIT-15: form field {name!r} looks like a secret or credential",
                    m.index,
                )
        linked = [where for where, text in _form_texts(m.params) if has_link(text)]
        if linked:
            # spec ELICIT-32: no URL meant to be clicked in any field of a form-mode request.
            yield finding(
                "ELICIT-32", A, f"form-mode request has a URL in {', '.join(linked)}", m.index
            )
    if mode == "url":
        eid = m.params.get("elicitationId")
        if eid in state.url_elicitations:
            # spec ELICIT-24: elicitation ids are unique among outstanding URL elicitations.
            yield finding(
                "ELICIT-24", A, f"elicitationId {eid!r} is already outstanding", m.index, INVALID
            )
        url = m.params.get("url")
        if not (isinstance(url, str) and "://" in url):
            # spec ELICIT-17: a URL-mode request carries a URI.
            yield finding("ELICIT-17", A, f"url {url!r} is not a URI", m.index, INVALID)
        for what in url_credentials(url):
            # spec ELICIT-30: no credentials, personal data or pre-authenticated access in the
            # URL. Recognised by name only (a token parameter, an email address, a user part):
            # a warning (spec-gap elicitation-secret-heuristics).
            yield finding(
                "spec-gap:elicitation-secret-heuristics",
                A,
                f"ELICIT-30: the elicitation URL carries {what}",
                m.index,
            )
        if isinstance(url, str) and "://" in url:
            if not url.lower().startswith("https://") and not is_development_url(url):
                # spec ELICIT-31: HTTPS outside development (this machine's URLs are exempt).
                yield finding("ELICIT-31", A, f"elicitation URL {url!r} is not https", m.index)


def _form_texts(params: Dict[str, Any]) -> Iterable[Any]:
    """``(where, text)`` for every text a form-mode request shows: message, titles, descriptions."""
    yield "message", params.get("message")
    schema = params.get("requestedSchema")
    schema = schema if isinstance(schema, dict) else {}
    for key in ("title", "description"):
        yield f"the form's {key}", schema.get(key)
    props = schema.get("properties")
    for name, prop in props.items() if isinstance(props, dict) else ():
        if not isinstance(prop, dict):
            continue
        items = prop.get("items")
        choices = (prop.get("oneOf"), items.get("anyOf") if isinstance(items, dict) else None)
        options = [o for c in choices if isinstance(c, list) for o in c if isinstance(o, dict)]
        for holder in [prop, *options]:
            for key in ("title", "description"):
                yield f"field {name!r} {key}", holder.get(key)


@transition("request", A, "elicitation/create")
def _elicit_apply(state: "ProtocolState", m: Message) -> None:
    if m.params.get("mode") == "url":
        eid = m.params.get("elicitationId")
        if isinstance(eid, str):
            state.url_elicitations[eid] = m.index


@check("notification", A, "elicitation/complete")
def _elicit_complete(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    eid = m.params.get("elicitationId")
    if eid not in state.url_elicitations:
        # spec ELICIT-27: completion names a URL elicitation this client received.
        yield finding("ELICIT-27", A, f"elicitation/complete for unknown id {eid!r}", m.index)


@transition("notification", A, "elicitation/complete")
def _elicit_complete_apply(state: "ProtocolState", m: Message) -> None:
    state.url_elicitations.pop(m.params.get("elicitationId"), None)
