"""session-setup.mdx: creating, loading, resuming and closing sessions.

The client creates a session with ``session/new`` (an absolute ``cwd``, the MCP servers to
connect, SETUP-01, SETUP-25, SETUP-32 .. SETUP-35; extra roots only when the agent offers them,
SETUP-20, SETUP-24), and the agent answers with a fresh session id (SETUP-02). An existing session
comes back with ``session/load`` (the agent replays its history first, then answers: SETUP-06,
SETUP-07) or ``session/resume`` (no replay, SETUP-12), with the session's own cwd (SETUP-22).
``session/close`` ends a session; a running turn is cancelled first (SETUP-16). Any other request
that names a session names one set up on this connection (spec-gap unknown-session).

The phases a session goes through (loading, resuming, active) are kept in ``facts.SessionState``.
"""

from __future__ import annotations

import ntpath
import posixpath
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..errors import ErrorCode
from .book import Message, check, transition, update_check, update_of
from .bounded import remember
from .facts import ConnectionFacts, SessionState
from .lifecycle import SESSION, TURN, SessionEvent, SessionPhase, TurnEvent, TurnPhase
from .prompt_turn import reopen_failed_crossing, stop_turn
from .findings import Finding, Party, finding
from .session_modes import (
    config_findings,
    mode_like_findings,
    modes_findings,
    remember_options,
    result_sync_findings,
)
from .values import is_absolute_path, is_below

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.RESOURCE_NOT_FOUND
SESSION_SETUP = ("session/new", "session/load", "session/resume")

#: Requests that name a session set up before (session/prompt has its own clause, PROMPT-01;
#: session/close its own, SETUP-15).
_CLIENT_SCOPED = ("session/set_mode", "session/set_config_option")
_AGENT_SCOPED = (
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)


@check("request", C, *_CLIENT_SCOPED)
@check("request", A, *_AGENT_SCOPED)
def _known_session(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    # spec SUBAGENT-19: a request for an announced child is served (subagents.py judges it).
    child = m.sender is A and state.announced(m.session_id)
    if not child and not SESSION.allows(state.session_phase(m.session_id), SessionEvent.NAMED):
        # spec-gap unknown-session: a session not set up on this connection is unknown
        # (RPC-17 suggests -32002 for a missing resource).
        yield finding(
            "spec-gap:unknown-session",
            m.sender,
            f"{m.method} for unknown session {m.session_id!r}",
            m.index,
            NOT_FOUND,
        )


@check("notification", A, "session/update")
def _updated_session(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if m.session is not None or state.announced(m.session_id):
        # spec SUBAGENT-29: a child's own traffic may come at any time (rules: subagents.py).
        return
    if state.gate_open("subagents", C):
        # spec SUBAGENT-05, SUBAGENT-08 (provisional): a child is announced before any of its
        # traffic, whatever a client might tolerate.
        yield finding(
            "SUBAGENT-05", A, f"session/update for unannounced session {m.session_id!r}", m.index
        )
    else:
        # spec-gap unknown-session: updates name a session set up on this connection.
        yield finding(
            "spec-gap:unknown-session",
            A,
            f"session/update for unknown session {m.session_id!r}",
            m.index,
        )


# -- What the client sends to set a session up ----------------------------------------------------


@check("request", C, *SESSION_SETUP)
def _setup_roots(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    p = m.params
    if "cwd" in p and not is_absolute_path(p.get("cwd")):
        # spec SETUP-25, OVERVIEW-06: cwd is an absolute path.
        yield finding(
            "SETUP-25", C, f"cwd {p.get('cwd')!r} is not an absolute path", m.index, INVALID
        )
    if "additionalDirectories" not in p:
        return
    if not state.gate_open("sessionCapabilities.additionalDirectories", A):
        # spec SETUP-24: only when the agent advertised additionalDirectories.
        yield finding(
            "SETUP-24",
            C,
            "additionalDirectories sent but not advertised by the agent",
            m.index,
            INVALID,
        )
    dirs = p.get("additionalDirectories")
    for d in dirs if isinstance(dirs, list) else []:
        if not is_absolute_path(d):
            # spec SETUP-20: every additional directory is absolute.
            yield finding(
                "SETUP-20", C, f"additional directory {d!r} is not absolute", m.index, INVALID
            )


@check("request", C, *SESSION_SETUP)
def _setup_mcp_servers(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    p = m.params
    servers = p.get("mcpServers")
    if servers is None and "mcpServers" in p:
        servers = []  # spec SCHEMA-18: an explicit null is the empty list
    if m.method == "session/resume" and "mcpServers" not in p:
        # spec SETUP-11 (spec-gap resume-mcp-servers): resume carries mcpServers too (the
        # docs list it, the schema leaves it optional: reported as a spec-gap, never refused).
        yield finding("SETUP-11", C, "session/resume without mcpServers", m.index)
    elif m.method in ("session/new", "session/load") and not isinstance(servers, list):
        # spec SETUP-01, SETUP-04: mcpServers is an array, possibly empty.
        yield finding(
            "SETUP-01" if m.method == "session/new" else "SETUP-04",
            C,
            "mcpServers missing",
            m.index,
            INVALID,
        )
    for server in servers if isinstance(servers, list) else []:
        if isinstance(server, dict):
            yield from _mcp_server(state, server, m)


def _mcp_server(state: ConnectionFacts, server: Dict[str, Any], m: Message) -> Iterable[Finding]:
    kind = server.get("type")
    missing = _mcp_entry_missing(server)
    if missing:
        # spec SETUP-32, SETUP-33, SETUP-34: every key an entry's schema requires is sent
        # (env and headers [] when empty). spec SCHEMA-20: since the schema of 2026-11-02 a
        # malformed entry is no longer dropped: the whole request is invalid params.
        yield finding(
            "SETUP-34" if kind == "sse" else "SETUP-33" if kind == "http" else "SETUP-32",
            C,
            f"MCP server {server.get('name')!r} lacks {', '.join(missing)}",
            m.index,
            INVALID,
        )
    if kind in ("http", "sse") and not state.gate_open(f"mcpCapabilities.{kind}", A):
        # spec SETUP-35: http/sse servers only when the agent advertised that transport.
        yield finding(
            "SETUP-35",
            C,
            f"MCP server {server.get('name')!r} uses {kind}, which the agent did not advertise",
            m.index,
            INVALID,
        )
    elif "command" not in missing and kind is None and not is_absolute_path(server["command"]):
        # spec SETUP-32: a stdio server's command is an absolute path.
        yield finding(
            "SETUP-32",
            C,
            f"MCP server command {server.get('command')!r} is not absolute",
            m.index,
            INVALID,
        )


def _mcp_entry_missing(server: Dict[str, Any]) -> List[str]:
    """The required keys of an ``mcpServers`` entry that are absent or of the wrong JSON type."""
    if server.get("type") in ("http", "sse"):
        wanted = {"name": str, "url": str, "headers": list}
    else:
        wanted = {"name": str, "command": str, "args": list, "env": list}
    # spec SCHEMA-18, SCHEMA-19: args, env and headers may be null (empty), never omitted.
    return [
        key
        for key, kind in wanted.items()
        if not isinstance(server.get(key), kind)
        and not (kind is list and key in server and server[key] is None)
    ]


@check("request", C, "session/load", "session/resume")
def _reopen(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if m.method == "session/load" and not ("sessionId" in m.params and "cwd" in m.params):
        # spec SETUP-04: session/load names the session and its cwd.
        yield finding("SETUP-04", C, "session/load needs sessionId and cwd", m.index, INVALID)
    known = state.sessions.get(sid) if isinstance(sid, str) else None
    known_cwd = known.cwd if known is not None else state.listed.get(sid)
    cwd = m.params.get("cwd")
    if known_cwd is not None and isinstance(cwd, str) and _norm(cwd) != _norm(known_cwd):
        # spec SETUP-22: load/resume name the session's own cwd.
        yield finding(
            "SETUP-22", C, f"cwd {cwd!r} is not the session's cwd {known_cwd!r}", m.index, INVALID
        )


def _norm(path: str) -> str:
    return path.rstrip("/\\") or path


@transition("request", C, "session/load", "session/resume")
def _reopening(state: ConnectionFacts, m: Message) -> None:
    sid = m.params.get("sessionId")
    if not isinstance(sid, str):
        return
    load = m.method == "session/load"
    event = SessionEvent.LOAD_SENT if load else SessionEvent.RESUME_SENT
    existing = state.sessions.get(sid)
    if existing is not None:
        # Loads and resumes of one session may overlap: each is counted, and a load in flight
        # keeps the session LOADING (its replay may go on) until the last one is answered.
        loads, resumes = existing.reopening or (0, 0)
        existing.reopening = (loads + 1, resumes) if load else (loads, resumes + 1)
        existing.phase = SESSION.step(existing.phase, event)
        # A replay re-sends the messages with their own ids: uniqueness is checked within it.
        existing.forget_message_ids()
        return
    state.sessions[sid] = SessionState(
        id=sid,
        cwd=m.params.get("cwd"),
        phase=SESSION.step(SessionPhase.UNKNOWN, event),
        reopening=(1, 0) if load else (0, 1),
        created_by_reopen=True,
    )


@check("request", C, "session/close")
def _close(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if not SESSION.allows(state.session_phase(m.session_id), SessionEvent.CLOSE_SENT):
        if state.reopen_failure_unread(m.session_id):
            yield reopen_failed_crossing(m)
            return
        # spec SETUP-15, SETUP-18: close names an active session; the agent answers -32002.
        yield finding(
            "SETUP-15", C, f"session/close of unknown session {m.session_id!r}", m.index, NOT_FOUND
        )


@transition("request", C, "session/close")
def _closing(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    if s is not None:
        # spec SETUP-16: close cancels a running turn as if session/cancel arrived.
        stop_turn(state, s, TurnEvent.CLOSE_SENT)


# -- What the agent answers -----------------------------------------------------------------------


@check("response", A, *SESSION_SETUP)
def _setup_result(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if m.is_error or not isinstance(m.result, dict):
        return
    if m.method == "session/new":
        sid = m.result.get("sessionId")
        if sid in state.sessions or sid in state.deleted:
            # spec SETUP-02: every new session id is unique.
            yield finding("SETUP-02", A, f"session id {sid!r} was already used", m.index)
    yield from modes_findings(m.result.get("modes"), m)
    yield from config_findings(state, m.result.get("configOptions"), m)
    yield from mode_like_findings(m.result, m)
    yield from result_sync_findings(m.result, m)


@transition("response", A, "session/new")
def _session_created(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    if (
        m.is_error
        or not isinstance(m.result, dict)
        or not isinstance(m.result.get("sessionId"), str)
    ):
        return
    cwd = m.request.params.get("cwd")
    # Sessions mostly share a few cwds: one string each, not one a session.
    s = SessionState(
        id=m.result["sessionId"],
        cwd=sys.intern(cwd) if type(cwd) is str else cwd,
        phase=SESSION.step(SessionPhase.UNKNOWN, SessionEvent.NEW_ANSWERED),
        extra_roots=_extra_roots(m.request.params),
    )
    remember_options(state, s, m.result)
    state.sessions[s.id] = s


@transition("response", A, "session/load", "session/resume")
def _session_reopened(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is None:
        return
    still = _reopened_one(s, m.method)  # another load or resume is still in flight
    if m.is_error:
        if not still:
            kept = not s.created_by_reopen
            failed = SessionEvent.REOPEN_FAILED_KEPT if kept else SessionEvent.REOPEN_FAILED
            s.phase = SESSION.step(s.phase, failed)
            if s.phase is SessionPhase.UNKNOWN:
                del state.sessions[s.id]  # the record was the failed reopen's own
                # spec-gap reopen-failed-crossing: the client's requests of the session written
                # while the reopening was in flight may be recorded after this answer.
                state.failed_reopens = remember(
                    state.failed_reopens, s.id, state.sent[A], state.max_remembered
                )
        return
    if not still:
        s.phase = SESSION.step(s.phase, SessionEvent.REOPENED)
    s.created_by_reopen = False
    load = m.method == "session/load"
    s.turn_phase = TURN.step(
        s.turn_phase, TurnEvent.LOAD_ANSWERED if load else TurnEvent.RESUME_ANSWERED
    )
    s.cwd = m.request.params.get("cwd", s.cwd)
    # Each load or resume names the full root list again; none named is none (SETUP-22).
    s.extra_roots = _extra_roots(m.request.params)
    if still:  # the next replay re-sends the messages with their own ids
        s.forget_message_ids()
    else:
        s.finish_message(state.max_remembered)
    if isinstance(m.result, dict):
        remember_options(state, s, m.result)


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
    # A load still in flight may still replay: the session stays LOADING.
    left = SessionEvent.ANSWERED_LOAD_LEFT if loads else SessionEvent.ANSWERED_RESUME_LEFT
    s.phase = SESSION.step(s.phase, left)
    return True


@update_check("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")
def _replayed_message_id(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = m.session
    message_id = update_of(m).get("messageId")
    if (
        s is not None
        and s.phase is SessionPhase.LOADING
        # spec-gap reopen-in-flight: a turn's chunks may interleave the replay
        and not s.turn_phase.running
        and isinstance(message_id, str)
        and message_id != s.message_id
        and message_id in s.old_message_ids
    ):
        # spec SETUP-06: replayed message ids are unique to their message.
        yield finding(
            "SETUP-06", A, f"messageId {message_id!r} reused for another message", m.index
        )


@check("response", A, "session/close")
def _closed(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if not m.is_error and s is not None and s.turn_phase is TurnPhase.CANCEL_REQUESTED:
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
def _closed_apply(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if s is not None and not m.is_error:
        s.phase = SESSION.step(s.phase, SessionEvent.CLOSED)
        if s.phase is SessionPhase.UNKNOWN:
            # Nothing is kept of a closed session: to the rules it is unknown from now on, and
            # a session/load or session/resume sets it up anew.
            del state.sessions[s.id]


# -- The order of a session's answers on the agent side (``effects.Waits``, ``effects.Refuses``) ---

#: The requests that end a session, and those that reopen one.
ENDING = ("session/close", "session/delete")
REOPENING = ("session/load", "session/resume")
#: The client's requests that name a session and are answered in its order (``answered_after``).
ORDERED = frozenset(
    {
        "session/prompt",
        "session/set_mode",
        "session/set_config_option",
        *ENDING,
        *REOPENING,
    }
)


def answered_after(method: str, other: str, *, earlier: bool) -> bool:
    """Whether an agent handles ``method`` only once ``other``, a request of the same session
    read ``earlier`` than it (or later), is answered."""
    if method in ENDING:
        # spec-gap close-in-flight, close-order (SETUP-16): a close or delete is answered after
        # every other request of its session, read before or after it (its cancelled turn
        # first), so that nothing of the session follows the answer. Closes and deletes do not
        # wait for each other: the first ends the session, the next finds none.
        return other not in ENDING
    if not earlier:
        return False
    if method in REOPENING:
        # spec-gap reopen-in-flight: a load or resume follows the earlier requests of its
        # session but closes and deletes (which wait for it), so that no turn's updates
        # interleave its replay.
        return other not in ENDING
    # spec-gap reopen-in-flight: any other request follows the earlier loads and resumes, so
    # that a session whose reopening failed is known to be gone before its handler runs.
    return other in REOPENING


# -- The effective root set: a boundary for the agent's file-system requests ----------------------


def _extra_roots(params: Dict[str, Any]) -> Tuple[Any, ...]:
    dirs = params.get("additionalDirectories")
    return tuple(dirs) if isinstance(dirs, list) else ()


@check("request", A, "fs/read_text_file", "fs/write_text_file")
def _fs_outside_roots(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    path = m.params.get("path")
    if s is None or not isinstance(path, str) or not isinstance(s.cwd, str):
        return
    if not (is_absolute_path(path) and is_absolute_path(s.cwd)):
        return  # a relative path is FS-03's, FS-06's or SETUP-25's
    roots = [s.cwd, *(d for d in s.extra_roots if is_absolute_path(d))]
    if _below_a_root(path, roots) is False:
        # spec SETUP-28: the root set [cwd, ...additionalDirectories] is a boundary for the
        # agent's file-system operations (spec-gap root-set-on-the-wire: judged on the path's
        # text; a permission the user gave is no exception the sentence names).
        where = f"{m.method} path {path!r} is outside the session's roots {roots!r}"
        yield finding("SETUP-28", A, where, m.index)


def _below_a_root(path: str, roots: Sequence[str]) -> Optional[bool]:
    """True if ``path`` is a root or below one, by its text ("." and ".." folded); None when
    no root is written in the path's style (POSIX, or Windows: case and slashes folded)."""
    windows = not path.startswith("/")
    flavour = ntpath if windows else posixpath
    same = [r for r in roots if r.startswith("/") != windows]
    if not same:
        return None

    def norm(p: str) -> str:
        p = flavour.normpath(p)
        return p.replace("/", "\\").casefold() if windows else p

    target = norm(path)
    sep = "\\" if windows else "/"
    return any(is_below(target, norm(root), sep) for root in same)
