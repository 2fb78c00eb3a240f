"""Rules of subagent sessions (PROVISIONAL): child sessions, session messages, references.

Spec: v1/subagents.md; clauses SUBAGENT-01 .. SUBAGENT-59. The shapes come from the unstable
schema of 2026-11-02 (stabilized 2026-11-20) and, for the ``session`` tool-call content, from a
draft page (spec-gap session-reference-content): every finding here is on a provisional clause,
graded by the sentence it quotes (SUBAGENT-21, a definition, is a warning) and enforced live
(spec_notes/decisions.md, provisional-features).

What the rules know of a child (``ProtocolState.children``): its parent and whether it advertised
``cancel``. The stable pages ask only whether a session is an announced child and which children
are below a session (``ConnectionFacts.announced``, ``descendants``); this page's rules on the
stable methods (marked ``feature=FEATURE``) run only from the first child tracked on the
connection (``ConnectionFacts.in_play``), so a connection without children never runs them.
What they check:

* the agent sends ``subagent_update``, ``session_message(_chunk)`` and ``session`` references
  only to a client that advertised ``subagents`` (SUBAGENT-01, SUBAGENT-02); it announces a child
  before any of the child's traffic (SUBAGENT-05, checked in ``session_setup`` where an update names
  an unknown session) and before a message or reference names it (SUBAGENT-05, SUBAGENT-53); a
  child id is never an ordinary session's (SUBAGENT-09) and never moves to another parent
  (SUBAGENT-10); its cwd and directories are absolute (SUBAGENT-16);
* the client never loads or resumes a child (SUBAGENT-17), never invokes a mutation the child did
  not advertise (SUBAGENT-18): ``session/cancel`` needs ``capabilities.cancel`` (SUBAGENT-20);
  once it cancels a child (or closes its root), the child's pending permission requests, and its
  descendants', are answered ``cancelled`` (SUBAGENT-44), and a child cancelled while it waited
  on the client confirms with idle and ``stopReason: "cancelled"`` (SUBAGENT-21);
* an idle state with ``stopReason: "error"`` carries the error (SUBAGENT-24); a child that
  reports its work state reports ``requires_action`` while a permission request of its waits on
  the user (SUBAGENT-23);
* reconnection: a ``session/load`` of a parent replays each child's announcement before the
  child's replayed traffic (SUBAGENT-31) and reissues no request of a child (SUBAGENT-37); after
  the load or resume response (a resume replays nothing: before its response all is fresh,
  SUBAGENT-41) each continuing child is announced again, parent before child, with a whole
  ``capabilities`` object, under its own parent, before any fresh traffic of it or reference to
  it (SUBAGENT-38 .. SUBAGENT-41). Before the response these are judged only once the agent
  had provably read the load or resume (``ConnectionFacts.reopen_read``): a child's live
  traffic may cross it on the wire (spec-gap child-crossing-reopen); likewise a cancel that
  crossed the announcement withdrawing ``cancel`` (spec-gap child-cancel-crossing).

A child's standing (``ChildState.stale``): announced (None); ``"replay"`` from a load of its root
until the replay announces it; ``"resuming"`` from a resume until its response; ``"reconnect"``
from the load or resume response until it is announced again.

Children are tracked while they cost at most ``max_remembered`` (``CHILD_COST`` and the id
each); from the first one past it, no session the rules do not know is judged unannounced
(``ConnectionFacts.announced``): a missed SUBAGENT-05, never a false one (spec-gap
remembered-bound).

A child's own updates are not a prompt turn's: they may come at any time, also after the parent's
turn ended (SUBAGENT-29), so the turn rules of ``prompt_turn`` leave them alone.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Set

import attrs

from ..errors import ErrorCode
from .book import Message, check, content_check, transition, update_check, update_of
from .book import update_transition
from .findings import Finding, Party, finding
from .lifecycle import SessionPhase
from .register import WARNING
from .values import is_absolute_path

if TYPE_CHECKING:  # pragma: no cover
    from .facts import ConnectionFacts as ProtocolState

__all__ = ["CAPABILITY", "CHILD_COST", "FEATURE", "KINDS", "ChildState", "known_session"]

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS

#: spec SUBAGENT-01: the client capability that opts in to subagent sessions.
CAPABILITY = "subagents"
#: The ``sessionUpdate`` tags of this feature.
KINDS = frozenset({"subagent_update", "session_message", "session_message_chunk"})
#: The feature's name in ``ConnectionFacts.in_play``: from the first child tracked, the rules
#: marked with it (on stable methods: a child's cancel, prompt, requests, reopening) run.
FEATURE = "subagents"
#: What a tracked child costs, counted, besides its id: near what the rules (about 1.2 KB) and
#: the reference client (about 3.3 KB: a session, its view, an event) hold for it.
CHILD_COST = 4096
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
    #: None (announced), "replay" or "reconnect": see the module's doc.
    stale: Optional[str] = None
    #: Permission requests in flight for this child, and those its cancel made due (SUBAGENT-44).
    permissions: Set[Any] = attrs.Factory(set)
    cancelled_permissions: Set[Any] = attrs.Factory(set)
    #: Those of them the client had not provably read at the cancel (spec-gap
    #: permission-crossing: they may have crossed it on the wire).
    crossed_permissions: Set[Any] = attrs.Factory(set)
    #: The same for its elicitations (SUBAGENT-45).
    elicitations: Set[Any] = attrs.Factory(set)
    cancelled_elicitations: Set[Any] = attrs.Factory(set)
    crossed_elicitations: Set[Any] = attrs.Factory(set)
    #: Since the client cancelled the child's work and until it reports idle: the client's
    #: message count at that cancel (``ConnectionFacts.sent``). Once the agent has answered a
    #: request with a later count (``ConnectionFacts.read``), it had read the cancel.
    cancel_seq: Optional[int] = None
    #: The agent's message count (``ConnectionFacts.sent``) at the announcement that withdrew
    #: ``cancel`` after the last one that granted it; None while it is granted, or was never.
    #: A client that has not provably read that announcement may still go by the grant.
    revoked_seq: Optional[int] = None
    #: The ``state`` tag of the last work state reported (None: never, or cleared).
    state: Optional[str] = None
    #: Requests of the child in flight for which it has reported ``requires_action`` (or was in
    #: that state already when it asked): SUBAGENT-23.
    blocked_reported: Set[Any] = attrs.Factory(set)


def known_session(state: "ProtocolState", session_id: Any) -> bool:
    """A session the client knows: set up on this connection, or an announced child."""
    return state.session(session_id) is not None or state.announced(session_id)


def _untracked(state: "ProtocolState", m: Message, child: str) -> bool:
    """True when ``child``, announced by ``m`` on a known session, is a new child past the bound."""
    if child in state.children or not known_session(state, m.session_id):
        return False
    return state.children_cost + CHILD_COST + sys.getsizeof(child) > state.max_remembered


def _root_loading(state: "ProtocolState", child: Any) -> bool:
    """True while a session/load of the child's root is in flight (its replay may go on)."""
    above = state.ancestors(child)
    return bool(above) and state.session_phase(above[-1]) is SessionPhase.LOADING


#: Agent-to-client requests that name a session: a child's are its traffic too.
_AGENT_REQUESTS = (
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "elicitation/create",
)


# -- What the agent sends -------------------------------------------------------------------------


@check("notification", A, "session/update", feature=FEATURE)
def _child_traffic(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    """Any update of a child session, whatever its kind: is the child announced?"""
    if m.update is not None and isinstance(m.session_id, str) and m.session_id in state.children:
        yield from _stale_traffic(state, m, m.update.get("sessionUpdate"))


@update_check(*KINDS)
def _subagent_traffic(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    """The updates of this feature."""
    update = update_of(m)
    kind = update.get("sessionUpdate")
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
            else:
                yield from _stale_named(state, m, named, "session_message")


@content_check("session")
def _references(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    """A tool call whose content references a session."""
    content = update_of(m).get("content")
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and item.get("type") == "session":
            yield from _reference(state, m, item)


def _stale_traffic(state: "ProtocolState", m: Message, kind: Any) -> Iterable[Finding]:
    """A child's own update (an announcement of a grandchild included) while it is stale."""
    known = state.children.get(m.session_id) if isinstance(m.session_id, str) else None
    if known is None or known.stale is None:
        return
    what = f"{kind} of child {m.session_id!r}"
    if known.stale in ("replay", "resuming") and not _reopen_read(state, m.session_id):
        yield _crossing(m, what)
    elif known.stale == "replay":
        # spec SUBAGENT-31: the replay announces a child before the child's replayed traffic.
        yield finding("SUBAGENT-31", A, f"{what} replayed before its announcement", m.index)
    elif kind == "subagent_update" and known.stale == "reconnect":
        # spec SUBAGENT-38: reannounced parent before child (this child is not yet).
        yield finding(
            "SUBAGENT-38", A, f"{what} before the child itself was announced again", m.index
        )
    else:
        # spec SUBAGENT-41: fresh child traffic waits for the response and the reannouncement.
        yield finding("SUBAGENT-41", A, f"{what} before its reannouncement", m.index)


def _reopen_read(state: "ProtocolState", child: Any) -> bool:
    """True when the agent had provably read the load or resume of the child's root in flight
    (``ConnectionFacts.reopen_read``)."""
    above = state.ancestors(child)
    return bool(above) and state.reopen_read(above[-1])


def _crossing(m: Message, what: str) -> Finding:
    """A child's message recorded after a load or resume of its root, which the agent may have
    written before it read that request: its child's live traffic, crossing it on the wire."""
    # spec-gap child-crossing-reopen: SUBAGENT-31, -37 and -41 bind what the agent sends once it
    # handles the load or resume; the wire does not show it had read it (the two directions
    # cross), so the child's traffic may be live traffic written before.
    said = f"{what} after a session/load or session/resume of its root that the agent may not "
    said += "have read yet: the child's live traffic may have crossed it"
    return finding("spec-gap:child-crossing-reopen", A, said, m.index)


def _stale_named(state: "ProtocolState", m: Message, named: Any, what: str) -> Iterable[Finding]:
    known = state.children.get(named) if isinstance(named, str) else None
    if known is not None and known.stale == "reconnect":
        # spec SUBAGENT-38: no reference to a continuing child before its reannouncement.
        yield finding(
            "SUBAGENT-38", A, f"{what} names child {named!r} before its reannouncement", m.index
        )


def _announcement(state: "ProtocolState", m: Message, update: Dict[str, Any]) -> Iterable[Finding]:
    child = update.get("sessionId")
    if not isinstance(child, str):
        return
    known: Optional[ChildState] = state.children.get(child)
    if not state.children_untracked and _untracked(state, m, child):
        # spec-gap remembered-bound: said once, with the first child past the bound.
        said = f"child {child!r} not tracked (children at max_remembered): from here no "
        said += "session the rules do not know is judged unannounced"
        yield finding("spec-gap:remembered-bound", A, said, m.index, level=WARNING)
    if child == m.session_id or (known is None and child in state.sessions):
        # spec SUBAGENT-09: a child id is never that of another (ordinary) session.
        yield finding(
            "SUBAGENT-09", A, f"subagent_update reuses the session id {child!r}", m.index
        )
    elif known is not None and known.parent != m.session_id:
        moved = f"child {child!r} of {known.parent!r} updated on {m.session_id!r}"
        if m.session_id in state.ancestors(child):
            # spec SUBAGENT-39: a surviving grandchild is never reparented to an ancestor.
            yield finding("SUBAGENT-39", A, f"{moved}, an ancestor", m.index)
        else:
            # spec SUBAGENT-10, SUBAGENT-11: a child stays under the parent that announced it.
            yield finding("SUBAGENT-10", A, moved, m.index)
    if known is not None and known.stale == "resuming":
        # spec-gap resume-early-child-update: no reannouncement before the response (SUBAGENT-38).
        said = f"child {child!r} updated before the resume's response"
        yield finding("spec-gap:resume-early-child-update", A, said, m.index)
    elif known is not None and known.stale == "reconnect":
        caps = update.get("capabilities")
        if not isinstance(caps, dict):
            # spec SUBAGENT-40: a reannouncement carries the whole current capabilities object.
            yield finding(
                "SUBAGENT-40",
                A,
                f"child {child!r} reannounced with capabilities {caps!r}, not an object",
                m.index,
            )
    work = update.get("state")
    if isinstance(work, dict) and work.get("stopReason") == "error" and not work.get("error"):
        # spec SUBAGENT-24: stopReason "error" comes with the error object.
        yield finding("SUBAGENT-24", A, f"child {child!r} stopped on error, without it", m.index)
    stop = work.get("stopReason") if isinstance(work, dict) else None
    idle = isinstance(work, dict) and work.get("state") == "idle"
    since = known.cancel_seq if known is not None else None
    read = since is not None and state.read[A][0] >= since
    if read and idle and stop != "cancelled":
        # spec SUBAGENT-21: a cancelled child confirms with idle and stopReason "cancelled"
        # (the agent had answered a request sent after the cancel, so it had read the cancel:
        # no race with the child's own end; the same witness as PROMPT-23's).
        yield finding(
            "SUBAGENT-21", A, f"cancelled child {child!r} went idle with {stop!r}", m.index
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
        # spec SUBAGENT-53, SUBAGENT-32: the referenced session is already known to the client
        # (also in a replay: a child that cannot be reconstructed is left out, not referenced).
        yield finding("SUBAGENT-53", A, f"session reference to unknown {target!r}", m.index)
    else:
        yield from _stale_named(state, m, target, "a session reference")


@update_transition("subagent_update")
def _register_child(state: "ProtocolState", m: Message) -> None:
    update = update_of(m)
    child = update.get("sessionId")
    if not isinstance(child, str) or child == m.session_id:
        return
    if child not in state.children and child in state.sessions:
        return  # spec SUBAGENT-09: an ordinary session's id, reported, not made a child
    if state.session(m.session_id) is None and m.session_id not in state.children:
        return  # on no session the client knows: reported (SUBAGENT-05), not registered
    if _untracked(state, m, child):
        # spec-gap remembered-bound: past max_remembered a new child is not tracked.
        state.children_untracked += 1
        return
    known = state.children.get(child)
    if known is None:
        state.children_cost += CHILD_COST + sys.getsizeof(child)
        known = state.children[child] = ChildState(parent=m.session_id)
        # The first child tracked brings the feature into play: its hooks run from here.
        state.in_play = state.in_play | {FEATURE}
    if known.stale != "resuming":  # before the resume's response nothing announces it again
        known.stale = None  # announced (again)
    if "state" in update:
        work = update["state"]
        known.state = work.get("state") if isinstance(work, dict) else None
        if known.state == "idle":
            known.cancel_seq = None  # the cancel, if any, is answered
        elif known.state == "requires_action":
            known.blocked_reported |= known.permissions
    if "capabilities" in update:
        # spec SUBAGENT-15: an object replaces the capability set whole; null clears it.
        caps = update["capabilities"]
        cancel = isinstance(caps, dict) and isinstance(caps.get("cancel"), dict)
        if known.cancel and not cancel:
            known.revoked_seq = state.sent[A]
        elif cancel:
            known.revoked_seq = None
        known.cancel = cancel


# -- What the client sends ------------------------------------------------------------------------


def _new_id(m: Message) -> Any:
    return m.result.get("sessionId") if isinstance(m.result, dict) and not m.is_error else None


@check("response", A, "session/new", feature=FEATURE)
def _new_session_reuses_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    new = _new_id(m)
    if isinstance(new, str) and new in state.children:
        # spec SUBAGENT-09: a child's id is never reused for an unrelated session.
        yield finding("SUBAGENT-09", A, f"session/new answered with child {new!r}'s id", m.index)


@transition("response", A, "session/new", feature=FEATURE)
def _child_id_given_away(state: "ProtocolState", m: Message) -> None:
    new = _new_id(m)
    if isinstance(new, str) and new in state.children:
        # spec SUBAGENT-09: the client asked for a session of its own and was given this id:
        # from here it names that session (the reuse is the agent's fault, reported above).
        del state.children[new]
        state.children_cost -= CHILD_COST + sys.getsizeof(new)


@check("request", C, "session/load", "session/resume", feature=FEATURE)
def _reopen_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if isinstance(sid, str) and sid in state.children:
        # spec SUBAGENT-17: a child's events come unasked; it is never loaded or resumed.
        yield finding("SUBAGENT-17", C, f"{m.method} of child session {sid!r}", m.index, INVALID)


@check("request", C, *_MUTATIONS, feature=FEATURE)
def _mutate_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if isinstance(sid, str) and sid in state.children:
        # spec SUBAGENT-18: no mutation a child did not advertise (only cancel is defined).
        yield finding("SUBAGENT-18", C, f"{m.method} on child session {sid!r}", m.index, INVALID)


@check("notification", C, "session/cancel", feature=FEATURE)
def _cancel_child(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    child = state.children.get(m.session_id) if isinstance(m.session_id, str) else None
    if child is None or child.cancel:
        return
    if child.revoked_seq is not None and state.read[C][0] < child.revoked_seq:
        # spec-gap child-cancel-crossing: the announcement that withdrew cancel may not have
        # reached the client when it wrote the cancel (the two directions cross on the wire);
        # it has read it only once it answered a request the agent sent at or after it.
        said = f"session/cancel of child {m.session_id!r}, whose cancel the agent withdrew in an "
        said += "announcement the client may not have read yet (the two crossed on the wire)"
        yield finding("spec-gap:child-cancel-crossing", C, said, m.index)
    else:
        # spec SUBAGENT-18, SUBAGENT-20: cancel a child only when it advertised cancel (in the
        # last announcement the client provably read, or in none since it first saw the child).
        yield finding(
            "SUBAGENT-18", C, f"session/cancel of child {m.session_id!r} without cancel", m.index
        )


@check("request", A, *_AGENT_REQUESTS, feature=FEATURE)
def _child_request(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    known = state.children.get(m.session_id) if isinstance(m.session_id, str) else None
    if known is None:
        return
    loading = _root_loading(state, m.session_id)
    # spec-gap child-crossing-reopen: also a child announced live (anew, or for the first time)
    # while its root's load is unread: the announcement crossed the load as well.
    stale = known.stale in ("replay", "resuming") or loading
    if stale and not _reopen_read(state, m.session_id):
        yield _crossing(m, f"{m.method} for child {m.session_id!r}")
    elif loading:
        # spec SUBAGENT-37: a replay reissues no request of a child's history.
        yield finding(
            "SUBAGENT-37", A, f"{m.method} for child {m.session_id!r} during a load", m.index
        )
    elif known.stale in ("resuming", "reconnect"):
        # spec SUBAGENT-41: fresh requests wait for the response and the reannouncement.
        said = f"{m.method} for child {m.session_id!r} before its reannouncement"
        yield finding("SUBAGENT-41", A, said, m.index)


@transition("request", A, "session/request_permission", feature=FEATURE)
def _child_asks(state: "ProtocolState", m: Message) -> None:
    known = state.children.get(m.session_id) if isinstance(m.session_id, str) else None
    if known is not None:
        known.permissions.add(m.id)
        if known.state == "requires_action":
            known.blocked_reported.add(m.id)


# -- Reconnection ---------------------------------------------------------------------------------


@transition("request", C, "session/load", "session/resume", feature=FEATURE)
def _children_stale(state: "ProtocolState", m: Message) -> None:
    # spec SUBAGENT-35: what was known of the children is no longer current; a load replays
    # them (announcement first), a resume announces them again after its response.
    stale = "replay" if m.method == "session/load" else "resuming"
    for child in state.descendants(m.params.get("sessionId")):
        state.children[child].stale = stale


@transition("response", A, "session/load", "session/resume", feature=FEATURE)
def _children_reconnected(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    # After the response each continuing child is announced again (SUBAGENT-38); an error: no.
    stale = None if m.is_error else "reconnect"
    for child in state.descendants(m.request.params.get("sessionId")):
        state.children[child].stale = stale


# -- Cancelling a child's work --------------------------------------------------------------------


@transition("notification", C, "session/cancel", feature=FEATURE)
def _child_cancelled(state: "ProtocolState", m: Message) -> None:
    if isinstance(m.session_id, str) and m.session_id in state.children:
        # spec SUBAGENT-20: the cancel reaches the child and its active descendants.
        _cancel_permissions(state, [m.session_id, *state.descendants(m.session_id)])


@transition("request", C, "session/close", feature=FEATURE)
def _root_closed(state: "ProtocolState", m: Message) -> None:
    # Closing the parent cancels its work, its children's included (SUBAGENT-44).
    _cancel_permissions(state, state.descendants(m.params.get("sessionId")))


def _cancel_permissions(state: "ProtocolState", children: List[Any]) -> None:
    for child in children:
        known = state.children[child]
        known.cancel_seq = state.sent[C]
        known.cancelled_permissions |= known.permissions
        # spec-gap permission-crossing: one the client had not provably read was not pending.
        known.crossed_permissions |= state.unread_requests(C, known.permissions)
        known.cancelled_elicitations |= known.elicitations
        known.crossed_elicitations |= state.unread_requests(C, known.elicitations)


@check("response", C, "session/request_permission", feature=FEATURE)
def _child_permission_answer(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    known = state.children.get(m.request.params.get("sessionId"))
    if known is None:
        return
    if known.state is not None and m.id not in known.blocked_reported:
        # spec SUBAGENT-23: a child that reports its work state says requires_action while it
        # waits on the user (at some point between its request and the answer).
        yield finding(
            "SUBAGENT-23",
            A,
            f"child {m.request.params.get('sessionId')!r} waited on permission request "
            f"{m.id!r} without reporting requires_action",
            m.index,
        )
    if m.id in known.cancelled_permissions:
        # spec SUBAGENT-44: after cancelling the child's work, its pending requests: cancelled;
        # spec-gap permission-crossing: unless it may have crossed the cancel on the wire.
        crossed = m.id in known.crossed_permissions
        yield from _answered_after_cancel(
            "spec-gap:permission-crossing" if crossed else "SUBAGENT-44",
            m,
            "permission request",
            "outcome",
            m.permission_outcome,
            "cancelled",
        )


def _answered_after_cancel(
    clause: str, m: Message, what: str, field: str, got: Any, wanted: str
) -> Iterable[Finding]:
    """A child's request answered after the client cancelled the child's work: ``wanted`` is due."""
    if got != wanted:
        said = "an error" if m.is_error else f"{field} {got!r}"
        yield finding(clause, C, f"child {what} {m.id!r} answered {said} after the cancel", m.index)


@transition("response", C, "session/request_permission", feature=FEATURE)
def _child_permission_answered(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    known = state.children.get(m.request.params.get("sessionId"))
    if known is not None:
        known.permissions.discard(m.id)
        known.cancelled_permissions.discard(m.id)
        known.crossed_permissions.discard(m.id)
        known.blocked_reported.discard(m.id)


@transition("request", A, "elicitation/create", feature=FEATURE)
def _child_elicits(state: "ProtocolState", m: Message) -> None:
    known = state.children.get(m.session_id) if isinstance(m.session_id, str) else None
    if known is not None:
        known.elicitations.add(m.id)


@check("response", C, "elicitation/create", feature=FEATURE)
def _child_elicitation_answer(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    known = state.children.get(m.request.params.get("sessionId"))
    if known is None or m.id not in known.cancelled_elicitations:
        return
    action = m.result.get("action") if isinstance(m.result, dict) else None
    # spec SUBAGENT-45: after cancelling the child's work, its pending elicitations: cancel;
    # spec-gap permission-crossing: unless it may have crossed the cancel on the wire.
    crossed = m.id in known.crossed_elicitations
    clause = "spec-gap:permission-crossing" if crossed else "SUBAGENT-45"
    yield from _answered_after_cancel(clause, m, "elicitation", "action", action, "cancel")


@transition("response", C, "elicitation/create", feature=FEATURE)
def _child_elicitation_answered(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    known = state.children.get(m.request.params.get("sessionId"))
    if known is not None:
        known.elicitations.discard(m.id)
        known.cancelled_elicitations.discard(m.id)
        known.crossed_elicitations.discard(m.id)
