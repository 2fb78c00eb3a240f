"""What the rules know of one connection: the records they read and change.

``ConnectionFacts`` holds the negotiated version and capabilities, the requests in flight, the
sessions (``SessionState``: running turn, tool calls, modes and options), the terminals and the
URL elicitations. The rule modules (see ``pages``) take it as their ``state`` argument; the
machine that feeds them messages is ``state.ProtocolState``, which extends it. Nothing here
checks anything: these are the nouns of the protocol.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, AbstractSet

import attrs

from . import capabilities
from .book import Outstanding
from .bounded import NO_IDS, NOTHING, AnsweredIds, SharedRecords, forgot_any, remember
from .findings import Party
from .findings import other as other_party
from .lifecycle import SessionPhase, TurnPhase

__all__ = ["DEFAULT_MAX_REMEMBERED", "ConnectionFacts", "SessionState", "TerminalState"]

#: What a peer can make the rules remember of ids it chose, in counted bytes: each of a
#: session's id tables (tool calls, message ids, compactions), and the connection's announced
#: children (spec-gap remembered-bound, spec_notes/decisions.md).
DEFAULT_MAX_REMEMBERED = 8 << 20


@attrs.define(weakref_slot=False)
class SessionState:
    """What the rules know of one session on this connection (sets start shared: ``bounded``)."""

    id: str
    cwd: Optional[str] = None
    #: The additionalDirectories of the last setup of the session (new, load or resume): with
    #: ``cwd`` the session's effective root set (SETUP-28).
    extra_roots: Tuple[Any, ...] = ()
    #: Where the session is in its lifecycle (``lifecycle.SESSION``; never UNKNOWN: an unknown
    #: session has no record).
    phase: SessionPhase = SessionPhase.ACTIVE
    #: Where the session's prompt turn is (``lifecycle.TURN``); between turns, what the session
    #: did last (which names the clause of a stray update).
    turn_phase: TurnPhase = TurnPhase.NO_TURN
    #: The id of the running session/prompt request (meaningless when there is no turn: ``None``
    #: is an id a request may have, RPC-02).
    turn: Any = None
    #: Set when the turn was cancelled: the clause that makes "cancelled" due (PROMPT-23, SETUP-16).
    cancel_clause: Optional[str] = None
    #: The client's message count (``ConnectionFacts.sent``) at the cancel: once the agent has
    #: read that many (``ConnectionFacts.read``), it has read the cancel.
    cancel_seq: int = 0
    #: Tool calls: id -> the name reported, or None (TOOL-02, TOOL-05, TOOL-17, TOOL-18). Like
    #: the two tables below, a ``bounded.Remembered`` once used: bounded, least recent forgotten.
    tool_calls: Mapping[str, Optional[str]] = NOTHING
    #: Message ids used by finished messages, and the one being streamed (SETUP-06, PROMPT-07).
    old_message_ids: Mapping[str, None] = NOTHING
    message_id: Optional[str] = None
    #: Mode, config option and permission option ids are kept as the wire gave them (a missing
    #: one is None): these rules only compare them.
    mode_ids: Optional[AbstractSet[Any]] = None
    #: The agent's message count when it stated ``mode_ids``, and the mode id sets it stated
    #: before that the client may still have been going by (as ``config_before``, below: spec-gap
    #: config-crossing); ``modes_forgot``: more were stated than are kept.
    mode_seq: int = 0
    modes_before: Tuple[Tuple[int, AbstractSet[Any]], ...] = ()
    modes_forgot: bool = False
    #: Config options by id, as wire dicts (CONFIG-17), and the agent's message count
    #: (``ConnectionFacts.sent``) when it stated them.
    config: Mapping[Any, Dict[str, Any]] = NOTHING
    config_seq: int = 0
    #: The tables the agent stated before ``config`` that the client may still have been going
    #: by, oldest first, each with its count: the last one the client provably read (it answered
    #: a later request of the agent, ``ConnectionFacts.read``) and those after it. A request of
    #: the client that crossed a newer statement on the wire was written against one of these
    #: (spec-gap config-crossing). ``config_forgot``: more were stated than are kept.
    config_before: Tuple[Tuple[int, Mapping[Any, Dict[str, Any]]], ...] = ()
    config_forgot: bool = False
    #: The current mode as the modes API last stated it, and the mode option's value as the
    #: config API last did, each with the agent's message count when it last moved (or was
    #: found out of step); None until stated (CONFIG-24, ``session_modes``).
    stated_mode: Optional[Tuple[Any, int]] = None
    stated_option: Optional[Tuple[Any, int]] = None
    #: Permission requests in flight for this session: request id -> offered option ids.
    permissions: Mapping[Any, Set[Any]] = NOTHING
    #: Tool calls the client allowed to run and that reported no status since (PROMPT-14), a
    #: ``bounded.Remembered`` once used.
    permitted: Mapping[str, None] = NOTHING
    #: Tool calls of the running turn whose last status is not final (pending, in_progress):
    #: id -> None (PROMPT-16), a ``bounded.Remembered`` once used.
    unfinished: Mapping[str, None] = NOTHING
    #: Permission requests that were in flight when the client cancelled (PROMPT-21), and those
    #: of them the client had not provably read when it cancelled: they may have crossed its
    #: session/cancel on the wire (spec-gap permission-crossing).
    cancelled_permissions: AbstractSet[Any] = NO_IDS
    crossed_permissions: AbstractSet[Any] = NO_IDS
    #: How many session/load and session/resume requests of the session are in flight, as
    #: ``(loads, resumes)``; None when none is. The count chooses which of ``lifecycle.SESSION``'s
    #: "reopen answered" events an answer is (a load left, resumes left, or the last one).
    reopening: Optional[Tuple[int, int]] = None
    #: True when this record was made by a load/resume (dropped again if that fails).
    created_by_reopen: bool = False
    #: How many of the client's messages the agent had provably read when it replayed a user
    #: message of the session during a load or resume (``ConnectionFacts.reopen_read``): the
    #: replay shows it had read the reopen then in flight (``prompt_turn``, resume-crossing).
    replay_read: int = 0
    #: Compactions of the session: compaction id -> its last status (COMPACT-04, COMPACT-10).
    compactions: Mapping[str, Any] = NOTHING

    def finish_message(self, limit: int) -> None:
        """The message being streamed is over: its id may not name another one (SETUP-06)."""
        if self.message_id is not None:
            # spec-gap remembered-bound: the least recent ids are forgotten past ``limit``.
            self.old_message_ids = remember(self.old_message_ids, self.message_id, None, limit)
            self.message_id = None

    def forget_message_ids(self) -> None:
        """A replay starts: it re-sends the messages with their own ids."""
        self.old_message_ids = NOTHING
        self.message_id = None


@attrs.define
class TerminalState:
    session_id: Any
    created_index: Optional[int]
    released: bool = False


class ConnectionFacts:
    """Everything the rules need to know about one ACP connection."""

    def __init__(self, *, max_remembered: int = DEFAULT_MAX_REMEMBERED) -> None:
        #: The bound on what the peer's ids cost the rules, counted (``DEFAULT_MAX_REMEMBERED``).
        self.max_remembered = max_remembered
        # Initialization (initialization.mdx)
        self.initialize_sent = False
        self.initialized = False
        self.requested_version: Any = None
        self.version: Any = None
        self.client_caps: Dict[str, Any] = {}
        self.agent_caps: Dict[str, Any] = {}
        self.auth_methods: List[Dict[str, Any]] = []
        self.authenticated = False
        #: The live agent's policy, which only it knows: ``requires_auth()`` is True when its
        #: session methods need a successful authenticate first (RPC-16). None for the oracle
        #: (and a client), which cannot know it and so does not judge it (authentication.py).
        self.requires_auth: Optional[Callable[[], bool]] = None
        # JSON-RPC bookkeeping: requests each party sent and that are not answered yet.
        self.outstanding: Dict[Party, Dict[Any, Outstanding]] = {Party.AGENT: {}, Party.CLIENT: {}}
        self.answered = {Party.AGENT: AnsweredIds(), Party.CLIENT: AnsweredIds()}
        #: Stdio is ordered: how many messages each party has sent, and how many of its peer's
        #: each has provably read, as (count, index of the answer that proves it). A party that
        #: answers a request has read everything its peer sent up to that request.
        self.sent: Dict[Party, int] = {Party.AGENT: 0, Party.CLIENT: 0}
        self.read: Dict[Party, Tuple[int, Optional[int]]] = {
            Party.AGENT: (0, None),
            Party.CLIENT: (0, None),
        }
        #: Whether each party, as a receiver, has shown it supports ``$/cancel_request`` (optional,
        #: CANCEL-02): the id and index of the first request it answered -32800 (or, a prompt,
        #: stopReason "cancelled") after a ``$/cancel_request`` naming it; None until then. One
        #: implementation answers a connection, so its support holds for all its requests.
        self.cancel_support: Dict[Party, Optional[Tuple[Any, Optional[int]]]] = {
            Party.AGENT: None,
            Party.CLIENT: None,
        }
        #: Requests that reused an id still in flight, by sender: each is owed one refusal,
        #: which answers it and not the first request of that id (spec-gap duplicate-id).
        self.duplicates: Dict[Party, Dict[Any, int]] = {Party.AGENT: {}, Party.CLIENT: {}}
        # Sessions, listing, terminals, elicitations
        self.sessions: Dict[Any, SessionState] = {}
        #: Sessions whose only record a failed session/load or session/resume dropped: id -> the
        #: agent's message count (``sent``) at that answer (``reopen_failure_unread``); past
        #: max_remembered the oldest are forgotten (spec-gap remembered-bound).
        self.failed_reopens: Mapping[Any, int] = {}
        self.deleted: Set[Any] = set()
        self.cursors: Set[str] = set()
        #: cwd of sessions seen in session/list results, for SETUP-22.
        self.listed: Dict[Any, Any] = {}
        self.terminals: Dict[Any, TerminalState] = {}
        # spec ELICIT-10: outstanding URL elicitations belong to this connection's state (one
        # ProtocolState per connection), never to a session id shared with other connections.
        self.url_elicitations: Dict[Any, Optional[int]] = {}
        #: Every URL elicitationId the client received on this connection, answered or not
        #: (ELICIT-27); past max_remembered the oldest are forgotten (spec-gap remembered-bound).
        self.url_elicitation_ids: Mapping[Any, Any] = {}
        #: The systemPrompt each session was set up with, as wire JSON (SYSPROMPT-11; provisional).
        self.system_prompts: Dict[Any, Any] = {}
        #: Announced child sessions: id -> subagents.ChildState (its ``parent`` and what the
        #: provisional page keeps; SUBAGENT-05), what they cost counted (``subagents.CHILD_COST``
        #: each), and how many announced children went untracked past ``max_remembered``
        #: (spec-gap remembered-bound). Kept by ``subagents``; the stable pages only ask
        #: ``announced`` and ``descendants`` below.
        self.children: Dict[Any, Any] = {}
        self.children_cost = 0
        self.children_untracked = 0
        #: The provisional features in play on this connection (``book``: a provisional page's
        #: rules on stable methods run only once its feature is). A page puts its feature here
        #: when a message of its own brings it into play: ``subagents`` at the first child it
        #: tracks. Replaced, never changed in place: the rule book keys its lists by it.
        self.in_play: FrozenSet[str] = frozenset()
        #: The client's reading of its own cancels (``effects.client_effects_of``): sessions
        #: whose current work it cancelled (session/cancel, session/close, and every child
        #: announced below), until their next prompt or, a child, until it reports running.
        self.work_cancelled: Set[str] = set()
        #: Mode id sets and config option tables that sessions share.
        self._shared = SharedRecords()

    def caps_of(self, party: Party) -> Dict[str, Any]:
        return self.agent_caps if party is Party.AGENT else self.client_caps

    def gate_open(self, gate: Optional[str], receiver: Party) -> bool:
        return capabilities.gate_open(gate, self.caps_of(receiver))

    def session(self, session_id: Any) -> Optional[SessionState]:
        """The session of that id set up on this connection, or None."""
        return self.sessions.get(session_id) if isinstance(session_id, str) else None

    def announced(self, session_id: Any) -> bool:
        """An announced child (``subagents``), or perhaps one: once a child went untracked, any
        session the rules do not know."""
        if not isinstance(session_id, str):
            return False
        if session_id in self.children:
            return True
        # spec-gap remembered-bound: an untracked child cannot be told from an unknown session.
        return self.children_untracked > 0 and self.session(session_id) is None

    def ancestors(self, child: Any) -> List[Any]:
        """The sessions above an announced ``child``, its parent first, its root (an ordinary
        session) last; none for any other session."""
        out: List[Any] = []
        known = self.children.get(child) if isinstance(child, str) else None
        while known is not None and known.parent not in out and len(out) < 64:
            out.append(known.parent)
            known = self.children.get(known.parent)
        return out

    def descendants(self, session_id: Any) -> List[str]:
        """Every child announced below ``session_id``, at any depth."""
        if not self.children:
            return []
        # A copy first: a live client asks from its own thread while its reader registers children.
        return [c for c in list(self.children) if session_id in self.ancestors(c)]

    def unread_requests(self, reader: Party, request_ids: AbstractSet[Any]) -> Set[Any]:
        """Those of ``request_ids`` (requests of ``reader``'s peer in flight) that ``reader`` has
        not provably read: it answered no request its peer sent at or after them. Each direction
        of stdio is ordered, but where the two are observed interleaved (a proxy, a transcript)
        a request recorded before a message of ``reader`` may still have been unread when
        ``reader`` wrote it."""
        asked, read = self.outstanding[other_party(reader)], self.read[reader][0]
        return {i for i in request_ids if i not in asked or asked[i].seq > read}

    def reopen_failure_unread(self, session_id: Any) -> bool:
        """True when a failed session/load or session/resume of ``session_id`` dropped it in an
        answer the client has not provably read: it answered no request the agent sent at or
        after that answer. A request of the session recorded after the answer may have been
        written before it, while the reopening was in flight (spec-gap reopen-failed-crossing).
        Once an entry was forgotten, any unknown session may be one (spec-gap remembered-bound)."""
        if not isinstance(session_id, str):
            return False
        seq = self.failed_reopens.get(session_id)
        if seq is None:
            return forgot_any(self.failed_reopens)
        return seq > self.read[Party.CLIENT][0]

    def reopen_seq(self, session_id: Any) -> Optional[int]:
        """The client's message count (``sent``) at the first session/load or session/resume
        of ``session_id`` still in flight; None when none is."""
        seqs = [
            r.seq
            for r in self.outstanding[Party.CLIENT].values()
            if r.method in ("session/load", "session/resume")
            and r.params.get("sessionId") == session_id
        ]
        return min(seqs) if seqs else None

    def reopen_read(self, session_id: Any) -> bool:
        """True when the agent has provably read the session/load or session/resume of
        ``session_id`` in flight: it answered a request the client sent at or after it
        (``read``), or it has replayed a user message of the session since (``replay_read``).
        Recorded after the reopen, a message of the agent may still have been written before it
        read it: the two directions of stdio cross (spec-gap resume-crossing)."""
        seq = self.reopen_seq(session_id)
        if seq is None:
            return False
        s = self.session(session_id)
        return max(self.read[Party.AGENT][0], s.replay_read if s is not None else 0) >= seq

    def session_phase(self, session_id: Any) -> SessionPhase:
        s = self.session(session_id)
        return s.phase if s is not None else SessionPhase.UNKNOWN

    def shared_mode_ids(self, modes: List[Any]) -> FrozenSet[Any]:
        """The ids of ``availableModes``, as a set equal sessions share."""
        ids = frozenset(x.get("id") for x in modes if isinstance(x, dict))
        return self._shared.get(ids, ids)  # type: ignore[no-any-return]

    def shared_config(self, options: List[Any]) -> Mapping[Any, Dict[str, Any]]:
        """Config options by id, as a table equal sessions share."""
        table = {o.get("id"): o for o in options if isinstance(o, dict)}
        try:
            key = json.dumps(options, sort_keys=True)
        except (TypeError, ValueError):  # not JSON (only a caller's own bug): kept unshared
            return table
        return self._shared.get(table, ("config", key))  # type: ignore[no-any-return]

