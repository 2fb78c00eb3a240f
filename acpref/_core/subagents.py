"""Rules of subagent sessions (PROVISIONAL): child sessions, session messages, references.

Spec: v1/subagents.md; clauses SUBAGENT-01 .. SUBAGENT-59. The shapes come from the unstable
schema of 2026-11-02 (stabilized 2026-11-20) and, for the ``session`` tool-call content, from a
draft page (spec-gap session-reference-content): every finding here is on a provisional clause,
reported as a warning and enforced live (spec_notes/decisions.md, provisional-features).

What the rules know of a child (``ProtocolState.children``): its parent and whether it advertised
``cancel``. What they check:

* the agent sends ``subagent_update``, ``session_message(_chunk)`` and ``session`` references
  only to a client that advertised ``subagents`` (SUBAGENT-01, SUBAGENT-02); it announces a child
  before any of the child's traffic (SUBAGENT-05, checked in ``session_setup`` where an update names
  an unknown session) and before a message or reference names it (SUBAGENT-05, SUBAGENT-53); a
  child id is never an ordinary session's (SUBAGENT-09) and never moves to another parent
  (SUBAGENT-10); its cwd and directories are absolute (SUBAGENT-16);
* the client never loads or resumes a child (SUBAGENT-17), never invokes a mutation the child did
  not advertise (SUBAGENT-18): ``session/cancel`` needs ``capabilities.cancel`` (SUBAGENT-20).

A child's own updates are not a prompt turn's: they may come at any time, also after the parent's
turn ended (SUBAGENT-29), so the turn rules of ``prompt_turn`` leave them alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional

import attrs

from ..errors import ErrorCode
from .book import Message, check, transition
from .findings import Finding, Party, finding
from .values import is_absolute_path

if TYPE_CHECKING:  # pragma: no cover
    from .facts import ConnectionFacts as ProtocolState

__all__ = ["CAPABILITY", "KINDS", "ChildState", "known_session"]

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS

#: spec SUBAGENT-01: the client capability that opts in to subagent sessions.
CAPABILITY = "subagents"
#: The ``sessionUpdate`` tags of this feature.
KINDS = frozenset({"subagent_update", "session_message", "session_message_chunk"})
#: Session methods that mutate a session: none of them is granted on a child but ``cancel``.
_MUTATIONS = (
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
    "session/close",
    "session/delete",
)


@attrs.define
class ChildState:
    """A child session announced on this connection."""

    parent: Any
    #: spec SUBAGENT-15, SUBAGENT-20: cancel was advertised by the last capabilities object.
    cancel: bool = False


def known_session(state: "ProtocolState", session_id: Any) -> bool:
    """A session the client knows: set up on this connection, or an announced child."""
    return state.session(session_id) is not None or (
        isinstance(session_id, str) and session_id in state.children
    )


# -- What the agent sends -------------------------------------------------------------------------


@check("notification", A, "session/update")
def _subagent_traffic(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    update = m.params.get("update")
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    if not isinstance(update, dict):
        return
    if kind in KINDS and not state.gate_open(CAPABILITY, C):
        # spec SUBAGENT-01: only to a client that advertised clientCapabilities.subagents.
        yield finding(
            "SUBAGENT-01", A, f"{kind} sent, but the client did not advertise 'subagents'", m.index
        )
    if kind == "subagent_update":
        yield from _announcement(state, m, update)
    elif kind == "session_message":
        for key in ("senderSessionId", "recipientSessionId"):
            named = update.get(key)
            if isinstance(named, str) and not known_session(state, named):
                # spec SUBAGENT-05: a message names only sessions the client knows.
                yield finding(
                    "SUBAGENT-05", A, f"session_message {key} {named!r} was not announced", m.index
                )
    elif kind in ("tool_call", "tool_call_update"):
        content = update.get("content")
        for item in content if isinstance(content, list) else []:
            if isinstance(item, dict) and item.get("type") == "session":
                yield from _reference(state, m, item)


def _announcement(state: "ProtocolState", m: Message, update: Dict[str, Any]) -> Iterable[Finding]:
    child = update.get("sessionId")
    if not isinstance(child, str):
        return
    known: Optional[ChildState] = state.children.get(child)
    if child == m.session_id or (known is None and child in state.sessions):
        # spec SUBAGENT-09: a child id is never that of another (ordinary) session.
        yield finding(
            "SUBAGENT-09", A, f"subagent_update reuses the session id {child!r}", m.index
        )
    elif known is not None and known.parent != m.session_id:
        # spec SUBAGENT-10, SUBAGENT-11: a child stays under the parent that announced it.
        yield finding(
            "SUBAGENT-10",
            A,
            f"child {child!r} of {known.parent!r} updated on {m.session_id!r}",
            m.index,
        )
    cwd = update.get("cwd")
    dirs = update.get("additionalDirectories")
    for path in [cwd] + (dirs if isinstance(dirs, list) else []):
        if path is not None and not is_absolute_path(path):
            # spec SUBAGENT-16: a child's cwd and directories are absolute paths.
            yield finding("SUBAGENT-16", A, f"child path {path!r} is not absolute", m.index)


def _reference(state: "ProtocolState", m: Message, item: Dict[str, Any]) -> Iterable[Finding]:
    if not state.gate_open(CAPABILITY, C):
        # spec SUBAGENT-02: session references only to a client that advertised subagents.
        yield finding(
            "SUBAGENT-02", A, "session tool-call content without the subagents capability", m.index
        )
    target = item.get("sessionId")
    if not known_session(state, target):
        # spec SUBAGENT-53: the referenced session is already known to the client.
        yield finding("SUBAGENT-53", A, f"session reference to unknown {target!r}", m.index)


@transition("notification", A, "session/update")
def _register_child(state: "ProtocolState", m: Message) -> None:
    update = m.params.get("update")
    if not (isinstance(update, dict) and update.get("sessionUpdate") == "subagent_update"):
        return
    child = update.get("sessionId")
    if not isinstance(child, str) or state.session(m.session_id) is None:
        return
    known = state.children.setdefault(child, ChildState(parent=m.session_id))
    if "capabilities" in update:
        # spec SUBAGENT-15: an object replaces the capability set whole; null clears it.
        caps = update["capabilities"]
        known.cancel = isinstance(caps, dict) and isinstance(caps.get("cancel"), dict)


# -- What the client sends ------------------------------------------------------------------------


@check("request", C, "session/load", "session/resume")
def _reopen_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if isinstance(sid, str) and sid in state.children:
        # spec SUBAGENT-17: a child's events come unasked; it is never loaded or resumed.
        yield finding("SUBAGENT-17", C, f"{m.method} of child session {sid!r}", m.index, INVALID)


@check("request", C, *_MUTATIONS)
def _mutate_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if isinstance(sid, str) and sid in state.children:
        # spec SUBAGENT-18: no mutation a child did not advertise (only cancel is defined).
        yield finding("SUBAGENT-18", C, f"{m.method} on child session {sid!r}", m.index, INVALID)


@check("notification", C, "session/cancel")
def _cancel_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    child = state.children.get(m.session_id) if isinstance(m.session_id, str) else None
    if child is not None and not child.cancel:
        # spec SUBAGENT-18, SUBAGENT-20: cancel a child only when it advertised cancel.
        yield finding(
            "SUBAGENT-18", C, f"session/cancel of child {m.session_id!r} without cancel", m.index
        )
