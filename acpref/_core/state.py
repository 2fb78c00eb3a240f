"""The protocol's rules, as one state machine that watches a connection from both ends.

Spec: every page; the clause of each rule is cited where it is checked (``client_sends``,
``agent_sends``). Decisions where the spec is silent: spec_notes/decisions.md.

The contract, in the manner of h11:

* **Rule 1.** ``ProtocolState`` sees every well-formed message of one connection, in wire order,
  in both directions, and knows who sent it. It keeps only what the rules need: the negotiated
  version and capabilities, requests in flight, sessions (and their running turn, tool calls,
  modes and options), terminals, URL elicitations.
* **Rule 2.** ``check(sender, message)`` says which rules the message breaks, as ``Finding``s
  naming the clause, its level, and who is to blame; it changes nothing. ``apply`` records the
  message. ``observe`` is both.
* **Rule 3.** The same object serves three masters: the agent side and the client side (each
  refuses to *send* a message that breaks a MUST rule, raising ``LocalProtocolError``, and answers
  a *received* request that breaks one with the error the finding names), and the oracle (which
  only collects findings over a transcript). So the live code and the oracle cannot disagree.

Shape (a string where an integer is due, unknown keys) is the codec's business, not this one's;
the rules read raw wire dicts defensively and never fail on malformed input.
"""

from __future__ import annotations

import json
import threading
import types
from bisect import bisect_right
from typing import (
    AbstractSet,
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Set,
    Tuple,
)

import attrs

from ..methods import CANCEL_REQUEST, METHODS, is_extension
from . import capabilities, envelope
from .book import RULES, Message, Outstanding, params_of
from .findings import Finding, Party, finding, other

__all__ = ["ProtocolState", "SessionState", "TerminalState", "classify"]


#: The empty set every session starts with, shared: a set of a session's own costs 216 bytes, and
#: most sessions never need some of theirs. ``grow`` gives a session its own on first use.
NO_IDS: FrozenSet[Any] = frozenset()


#: The empty mapping every session's config options and pending permissions start as, shared (an
#: empty dict costs 64 bytes): both are replaced, never changed in place.
NOTHING: Mapping[Any, Any] = types.MappingProxyType({})


def grow(ids: AbstractSet[Any], item: Any) -> Set[Any]:
    """``ids`` with ``item`` added: in place once it is a session's own set, else a new set."""
    if isinstance(ids, set):
        ids.add(item)
        return ids
    return {*ids, item}


class _NoTurn:
    def __repr__(self) -> str:
        return "NO_TURN"


#: ``SessionState.turn`` when no turn is running.
NO_TURN: Any = _NoTurn()


@attrs.define(weakref_slot=False)  # no weak references: 8 bytes a session
class SessionState:
    """What the rules know of one session on this connection (sets start shared: see ``grow``)."""

    id: str
    cwd: Optional[str] = None
    #: "loading" / "resuming" while that request is in flight, "active", or "closed".
    status: str = "active"
    #: What happened last: "new", "load", "resume" or "turn"; names the clause of a stray update.
    last: str = "new"
    #: The id of the running session/prompt request, or ``NO_TURN``: ``None`` is an id a request
    #: may have (RPC-02, ``id: null``), so it cannot mean "no turn".
    turn: Any = NO_TURN
    #: Set when the turn was cancelled: the clause that makes "cancelled" due (PROMPT-23, SETUP-16).
    cancel_clause: Optional[str] = None
    #: True when, at cancel time, the agent was waiting on a request of its own for this session
    #: (then it cannot have finished the turn before it saw the cancel).
    cancel_certain: bool = False
    tool_calls: AbstractSet[str] = NO_IDS
    #: Message ids used by finished messages, and the one being streamed (SETUP-06, PROMPT-07).
    old_message_ids: AbstractSet[str] = NO_IDS
    message_id: Optional[str] = None
    #: Mode, config option and permission option ids are kept as the wire gave them (a missing
    #: one is None): these rules only compare them.
    mode_ids: Optional[AbstractSet[Any]] = None
    #: Config options by id, as wire dicts (CONFIG-17).
    config: Mapping[Any, Dict[str, Any]] = NOTHING
    #: Permission requests in flight for this session: request id -> offered option ids.
    permissions: Mapping[Any, Set[Any]] = NOTHING
    #: Permission requests that were in flight when the client cancelled (PROMPT-21).
    cancelled_permissions: AbstractSet[Any] = NO_IDS
    #: How many session/load and session/resume requests of the session are in flight, as
    #: ``(loads, resumes)``; None when none is.
    reopening: Optional[Tuple[int, int]] = None
    #: True when this record was made by a load/resume (dropped again if that fails).
    created_by_reopen: bool = False
    #: Compactions of the session: compaction id -> its last status (COMPACT-04, COMPACT-10).
    compactions: Mapping[str, Any] = NOTHING
    #: Tool names as reported: tool call id -> name (TOOL-17).
    tool_names: Mapping[str, str] = NOTHING


class AnsweredIds:
    """The ids of the requests one party sent that are answered, kept small.

    Peers number their requests 0, 1, 2, ... and these are answered roughly in order, so integer
    ids are kept as runs of consecutive ids (``[first, last]``): ten thousand answered requests
    are one run, where a set cost about 100 bytes an id. Other ids go in a set. Bounded: a long
    connection forgets (and then reports a second answer as RPC-04, not RPC-06).
    """

    LIMIT = 100_000

    def __init__(self) -> None:
        self._firsts: List[int] = []
        self._lasts: List[int] = []
        self._others: Set[Any] = set()

    def add(self, request_id: Any) -> None:
        if type(request_id) is not int:  # a string, None, or a bool (which is no int here)
            if len(self._others) >= self.LIMIT:
                self._others.clear()
            self._others.add(request_id)
            return
        n = request_id
        firsts, lasts = self._firsts, self._lasts
        if lasts and lasts[-1] == n - 1:  # the usual case: the next id in order
            lasts[-1] = n
            return
        i = bisect_right(firsts, n)  # the runs before i start at or below n
        if i and lasts[i - 1] >= n:
            return
        joins_before = bool(i) and lasts[i - 1] == n - 1
        joins_after = i < len(firsts) and firsts[i] == n + 1
        if joins_before and joins_after:
            lasts[i - 1] = lasts.pop(i)
            del firsts[i]
        elif joins_before:
            lasts[i - 1] = n
        elif joins_after:
            firsts[i] = n
        else:
            if len(firsts) >= self.LIMIT:
                firsts.clear()
                lasts.clear()
                i = 0
            firsts.insert(i, n)
            lasts.insert(i, n)

    def __contains__(self, request_id: Any) -> bool:
        if type(request_id) is not int:
            return request_id in self._others
        i = bisect_right(self._firsts, request_id)
        return bool(i) and self._lasts[i - 1] >= request_id


@attrs.define
class TerminalState:
    session_id: Any
    created_index: Optional[int]
    released: bool = False


#: ``request``, ``notification``, ``response``, or None for something else (the envelope's
#: verdict on what the rules can read: ``envelope.kind_of``).
classify = envelope.kind_of


class ProtocolState:
    """Everything the rules need to know about one ACP connection. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # Initialization (initialization.mdx)
        self.initialize_sent = False
        self.initialized = False
        self.requested_version: Any = None
        self.version: Any = None
        self.client_caps: Dict[str, Any] = {}
        self.agent_caps: Dict[str, Any] = {}
        self.auth_methods: List[Dict[str, Any]] = []
        self.authenticated = False
        # JSON-RPC bookkeeping: requests each party sent and that are not answered yet.
        self.outstanding: Dict[Party, Dict[Any, Outstanding]] = {Party.AGENT: {}, Party.CLIENT: {}}
        self.answered = {Party.AGENT: AnsweredIds(), Party.CLIENT: AnsweredIds()}
        #: Requests that reused an id still in flight, by sender: each is owed one refusal,
        #: which answers it and not the first request of that id (spec-gap duplicate-id).
        self.duplicates: Dict[Party, Dict[Any, int]] = {Party.AGENT: {}, Party.CLIENT: {}}
        # Sessions, listing, terminals, elicitations
        self.sessions: Dict[Any, SessionState] = {}
        self.deleted: Set[Any] = set()
        self.cursors: Set[str] = set()
        #: cwd of sessions seen in session/list results, for SETUP-22.
        self.listed: Dict[Any, Any] = {}
        self.terminals: Dict[Any, TerminalState] = {}
        # spec ELICIT-10: outstanding URL elicitations belong to this connection's state (one
        # ProtocolState per connection), never to a session id shared with other connections.
        self.url_elicitations: Dict[Any, Optional[int]] = {}
        #: The systemPrompt each session was set up with, as wire JSON (SYSPROMPT-11; provisional).
        self.system_prompts: Dict[Any, Any] = {}
        #: Announced child sessions: id -> subagents.ChildState (SUBAGENT-05; provisional).
        self.children: Dict[Any, Any] = {}
        #: Mode id sets and config option tables that sessions share (see ``shared``).
        self._shared: Dict[Any, Any] = {}

    # -- The public face -------------------------------------------------------------------------

    def observe(
        self,
        sender: Party,
        raw: Dict[str, Any],
        index: Optional[int] = None,
        *,
        refuse: Optional[Callable[[List[Finding]], bool]] = None,
    ) -> List[Finding]:
        """Check a message, then record it; returns the findings (Rule 2).

        ``refuse(findings)``, when given, decides between the two: if it says True, the message
        is not recorded (a live side will not send it). One look at the message serves both steps,
        which matters for a side that sends thousands of updates a second.
        """
        with self._lock:
            m = self._message(sender, raw, index)
            if m is None:
                return []
            findings = list(self._check(m))
            if not findings or refuse is None or not refuse(findings):
                self._apply(m)
            return findings

    def check(
        self, sender: Party, raw: Dict[str, Any], index: Optional[int] = None
    ) -> List[Finding]:
        """The findings a message would cause; changes nothing."""
        with self._lock:
            m = self._message(sender, raw, index)
            return [] if m is None else list(self._check(m))

    def apply(self, sender: Party, raw: Dict[str, Any], index: Optional[int] = None) -> None:
        """Record a message without checking it."""
        with self._lock:
            m = self._message(sender, raw, index)
            if m is not None:
                self._apply(m)

    def finish(self, *, complete: bool = True) -> List[Finding]:
        """Findings that only the end of a transcript shows.

        ``complete`` says the transcript ended cleanly (not cut off): then requests never answered
        break RPC-06, and terminals never released break TERM-07.
        """
        out: List[Finding] = []
        if not complete:
            return out
        with self._lock:
            for party, table in self.outstanding.items():
                for request_id, req in table.items():
                    # spec RPC-06: every request is answered, the failed and cancelled ones too.
                    out.append(
                        finding(
                            "RPC-06",
                            other(party),
                            f"{req.method} request {request_id!r} was never answered",
                            req.index,
                        )
                    )
            for terminal_id, term in self.terminals.items():
                if not term.released:
                    out.append(
                        finding(
                            "TERM-07",
                            Party.AGENT,
                            f"terminal {terminal_id!r} was never released",
                            term.created_index,
                        )
                    )
        return out

    # -- Views the rules share --------------------------------------------------------------------

    def caps_of(self, party: Party) -> Dict[str, Any]:
        return self.agent_caps if party is Party.AGENT else self.client_caps

    def gate_open(self, gate: Optional[str], receiver: Party) -> bool:
        return capabilities.gate_open(gate, self.caps_of(receiver))

    def session(self, session_id: Any) -> Optional[SessionState]:
        s = self.sessions.get(session_id) if isinstance(session_id, str) else None
        return s if s is not None and s.status != "closed" else None

    #: How many distinct records ``shared`` keeps: enough for any agent's few session shapes.
    SHARED_LIMIT = 256

    def shared_mode_ids(self, modes: List[Any]) -> FrozenSet[Any]:
        """The ids of ``availableModes``, as a set equal sessions share (see ``shared``)."""
        ids = frozenset(x.get("id") for x in modes if isinstance(x, dict))
        return self.shared(ids, ids)

    def shared_config(self, options: List[Any]) -> Mapping[Any, Dict[str, Any]]:
        """Config options by id, as a table equal sessions share (see ``shared``)."""
        table = {o.get("id"): o for o in options if isinstance(o, dict)}
        try:
            key = json.dumps(options, sort_keys=True)
        except (TypeError, ValueError):  # not JSON (only a caller's own bug): kept unshared
            return table
        return self.shared(table, ("config", key))

    def shared(self, record: Any, key: Any) -> Any:
        """``record``, or the equal one a session already holds under ``key``.

        Sessions are mostly set up alike (the same modes, the same config options with their
        option lists): they share one record instead of keeping a copy each, which for an agent
        with a few config options was most of the rules' memory per session. Records are
        replaced, never changed in place, so sharing them is safe.
        """
        kept = self._shared.get(key)
        if kept is not None:
            return kept
        if len(self._shared) < self.SHARED_LIMIT:
            self._shared[key] = record
        return record

    def waiting_on_agent_request(self, session_id: Any) -> bool:
        """True when the agent has a request in flight to the client for this session."""
        return any(
            req.params.get("sessionId") == session_id
            for req in self.outstanding[Party.AGENT].values()
        )

    # -- Internals --------------------------------------------------------------------------------

    def _message(
        self, sender: Party, raw: Dict[str, Any], index: Optional[int]
    ) -> Optional[Message]:
        kind = classify(raw)
        if kind is None:
            return None
        if kind == "response":
            request_id = raw.get("id")
            duplicates = self.duplicates[other(sender)]
            if "error" in raw and _hashable(request_id) and duplicates.get(request_id):
                return Message(
                    sender=sender, raw=raw, index=index, kind="refusal", method=None, id=request_id
                )
            # spec RPC-07: a response is matched to its request by id, whatever the order.
            req = self.outstanding[other(sender)].get(request_id) if _hashable(request_id) else None
            return Message(
                sender=sender,
                raw=raw,
                index=index,
                kind=kind,
                method=req.method if req is not None else None,
                id=request_id,
                request=req,
            )
        return Message(
            sender=sender,
            raw=raw,
            index=index,
            kind=kind,
            method=raw["method"],
            id=raw.get("id"),
            params=params_of(raw),
        )

    def _check(self, m: Message) -> Iterable[Finding]:
        if m.kind == "refusal":
            return  # the answer owed to a duplicate request: nothing to judge (see duplicates)
        if m.kind == "response":
            yield from self._check_response(m)
        else:
            yield from self._check_call(m)
        if m.kind != "response" or m.request is not None:
            for fn in RULES.checks_for(m):
                try:
                    yield from fn(self, m)
                except TypeError:
                    # A list or an object where the rule expects an id or a name (unhashable):
                    # the message is ill-formed, which the codec reports (-32602, SCHEMA-*);
                    # the protocol rules have nothing to say about it. Found by tests/test_fuzz.py.
                    return

    def _check_call(self, m: Message) -> Iterable[Finding]:
        """Rules every request and notification obeys, whatever its method."""
        method = m.method or ""
        receiver = other(m.sender)
        row = METHODS.get(method)
        if row is None:
            if not (is_extension(method) or method.startswith("$/")):
                # spec EXT-05: names without a leading underscore are reserved for the protocol.
                yield finding(
                    "EXT-05",
                    m.sender,
                    f"unknown method {method!r} (custom methods start with '_')",
                    m.index,
                    -32601,
                )
            return
        if row.receiver not in (receiver.value, "both"):
            # spec RPC-12: a method the receiver does not implement.
            yield finding(
                "RPC-12",
                m.sender,
                f"{method} is {'an' if row.receiver == 'agent' else 'a'} {row.receiver} method; "
                f"the {m.sender.value} cannot send it",
                m.index,
                -32601,
            )
            return
        if (m.kind == "request") != (not row.is_notification):
            what = "a notification" if row.is_notification else "a request"
            yield finding("OVERVIEW-01", m.sender, f"{method} is {what}", m.index, -32600)
        if m.kind == "request" and _hashable(m.id) and m.id in self.outstanding[m.sender]:
            # spec-gap duplicate-id: an id still in flight is not reused.
            yield finding(
                "spec-gap:duplicate-id",
                m.sender,
                f"request id {m.id!r} is still in flight",
                m.index,
                -32600,
            )
        if (
            m.sender is Party.CLIENT
            and method not in ("initialize", CANCEL_REQUEST)
            and not self.initialized
        ):
            # spec INIT-01: initialize and its response come before any other request
            # (spec-gap before-initialize: refused -32600 Invalid request).
            if m.kind == "request":
                yield finding(
                    "INIT-01",
                    m.sender,
                    f"{method} sent before initialize completed",
                    m.index,
                    -32600,
                )
            return
        gate = row.gate
        if gate == "elicitation":
            # spec-gap elicitation-mode-error: the mode decides (ELICIT-06, agent_sends._elicit),
            # answered -32602 per ELICIT-29 even when no elicitation is advertised, not RPC-12's
            # -32601.
            return
        if gate is not None and not self.gate_open(gate, receiver):
            # spec RPC-12, OVERVIEW-03, FS-01, FS-02, TERM-01: a gated method (the row's clause
            # names the gate) is not available unless the receiver advertised the capability.
            yield finding(
                row.clause,
                m.sender,
                f"{method} needs {receiver.value} capability {gate!r}, which was not advertised",
                m.index,
                -32601,
            )

    def _check_response(self, m: Message) -> Iterable[Finding]:
        """JSON-RPC bookkeeping for responses (RPC-04 .. RPC-09)."""
        for fault in envelope.response_faults(m.raw):
            # spec RPC-05, RPC-09: exactly one of result or error; a well-formed error object.
            yield finding(fault.clause, m.sender, fault.message, m.index)
        if m.request is None:
            if _hashable(m.id) and m.id in self.answered[other(m.sender)]:
                # spec RPC-06: exactly one response per request; a second one is refused.
                yield finding(
                    "RPC-06", m.sender, f"request {m.id!r} answered more than once", m.index
                )
            elif m.id is not None:
                yield finding(
                    "RPC-04",
                    m.sender,
                    f"response id {m.id!r} matches no request in flight",
                    m.index,
                )

    def _apply(self, m: Message) -> None:
        if m.kind == "refusal":
            duplicates = self.duplicates[other(m.sender)]
            duplicates[m.id] -= 1
            if not duplicates[m.id]:
                del duplicates[m.id]
            return
        if m.kind == "request" and _hashable(m.id):
            if m.id in self.outstanding[m.sender]:
                # spec-gap duplicate-id: the first request keeps the id; the reuse is refused.
                duplicates = self.duplicates[m.sender]
                duplicates[m.id] = duplicates.get(m.id, 0) + 1
                return
            self.outstanding[m.sender][m.id] = Outstanding(
                method=m.method or "", params=m.params, index=m.index
            )
        elif m.kind == "response" and m.request is not None:
            self.outstanding[other(m.sender)].pop(m.id, None)
            self.answered[other(m.sender)].add(m.id)
        for fn in RULES.transitions_for(m):
            try:
                fn(self, m)
            except TypeError:
                return  # ill-formed (see _check): it changes no state


def _hashable(value: Any) -> bool:
    return value is None or isinstance(value, (str, int))


# The rule modules register their checks and transitions in RULES when imported. The provisional
# features (shapes from the unstable schema) have modules of their own.
from . import agent_sends, client_sends  # noqa: E402,F401
from . import plan_operations, subagents, system_prompt  # noqa: E402,F401
