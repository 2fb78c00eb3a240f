"""session-list.mdx and session-delete.mdx: finding sessions again, and forgetting them.

``session/list`` returns the sessions an agent keeps, each with its absolute cwd (LIST-05), only
those under the cwd filter when one is sent (LIST-03, LIST-04), pages linked by opaque cursors the
client only echoes (LIST-11). ``session_info_update`` changes a session's title or timestamps,
never its id or roots (LIST-16). ``session/delete`` removes a session for good: it is never listed
again (DELETE-03) and its id is never reused (SETUP-02, in ``session_setup``). Deleting a session
whose turn runs asks the turn to stop (spec-gap delete-active: the turn table's "stop requested").
"""

from __future__ import annotations

from typing import Iterable

from ..errors import ErrorCode
from .book import Message, check, transition, update_check, update_of
from .facts import ConnectionFacts
from .lifecycle import SESSION, SessionEvent, SessionPhase, TurnEvent
from .findings import Finding, Party, finding
from .prompt_turn import stop_turn
from .values import is_absolute_path, is_iso8601

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS


@check("request", C, "session/list")
def _list(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    cwd = m.params.get("cwd")
    if cwd is not None and not is_absolute_path(cwd):
        # spec LIST-03: the cwd filter is absolute.
        yield finding("LIST-03", C, f"cwd filter {cwd!r} is not absolute", m.index, INVALID)
    cursor = m.params.get("cursor")
    if cursor is not None and cursor not in state.cursors:
        # spec LIST-11: cursors are opaque: only a nextCursor received on this connection is sent.
        yield finding(
            "LIST-11", C, f"cursor {cursor!r} was not a nextCursor of this connection", m.index
        )


@check("response", A, "session/list")
def _listed(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
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
        updated = info.get("updatedAt")
        if updated is not None and not is_iso8601(updated):
            # spec LIST-06: updatedAt is an ISO 8601 timestamp.
            yield finding("LIST-06", A, f"updatedAt {updated!r} is not ISO 8601", m.index)
        if "additionalDirectories" in info and not dirs_ok:
            # spec LIST-07: additionalDirectories only with the capability.
            yield finding(
                "LIST-07", A, "SessionInfo.additionalDirectories without the capability", m.index
            )


@transition("response", A, "session/list")
def _listed_apply(state: ConnectionFacts, m: Message) -> None:
    if m.is_error or not isinstance(m.result, dict):
        return
    cursor = m.result.get("nextCursor")
    if isinstance(cursor, str):
        state.cursors.add(cursor)
    for info in m.result.get("sessions") or []:
        if isinstance(info, dict) and isinstance(info.get("sessionId"), str):
            cwd = info.get("cwd")
            # spec LIST-05: a cwd that is not absolute is no cwd a load or resume can name
            # (SETUP-25): SETUP-22 holds them to none.
            state.listed[info["sessionId"]] = cwd if is_absolute_path(cwd) else None


@update_check("session_info_update")
def _info_update(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if state.session(m.session_id) is None:
        return
    update = update_of(m)
    for key in ("sessionId", "cwd", "additionalDirectories"):
        if key in update:
            # spec LIST-16: session_info_update never carries sessionId, cwd or roots.
            yield finding("LIST-16", A, f"session_info_update carries {key}", m.index)


@transition("request", C, "session/delete")
def _deleting(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    if s is not None:
        s.phase = SESSION.step(s.phase, SessionEvent.DELETE_SENT)
        # spec-gap delete-active: a running turn is asked to stop (DELETE-05 leaves deleting an
        # active session to the agent); the session goes once the delete is answered.
        stop_turn(state, s, TurnEvent.DELETE_SENT)


@transition("response", A, "session/delete")
def _deleted(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    if not m.is_error:
        sid = m.request.params.get("sessionId")
        state.deleted.add(sid)
        state.listed.pop(sid, None)
        if SESSION.step(state.session_phase(sid), SessionEvent.DELETED) is SessionPhase.UNKNOWN:
            # Only the id is kept (SETUP-02, DELETE-03 need no more): a long connection that
            # creates and deletes sessions holds no state for them.
            state.sessions.pop(sid, None)
