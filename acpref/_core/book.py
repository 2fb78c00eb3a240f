"""The rule book: tables of checks and state transitions, keyed by who sends which method.

A rule module (one per spec page, listed in ``pages``) marks its functions with the decorators
below; ``pages`` builds the one ``RuleBook`` from that list, and ``state.ProtocolState`` looks the
functions up for each message. A *check* reads the state and the message and yields
``Finding``s; it never changes anything. A *transition* changes the state and yields nothing.
Keeping the two apart lets a live side refuse a message it was about to send without having
recorded it.

Keys are ``(kind, sender, method)``; a ``session/update`` notification is also looked up under
its update's kind (``update="tool_call"``), and a tool call under the types of its content items
(``content_check``), so each page sees only the updates it speaks of.

A provisional page (``pages.PROVISIONAL``) hooks into the stable methods it also judges (a
child's ``session/cancel``, a prompt to a child) by marking those rules with its ``feature``:
they join a message's rules only on a connection where the feature is in play
(``ConnectionFacts.in_play``), which the page's own rules (on its own update kinds) bring about.
Until then they would have nothing to judge, and a connection that never uses the feature never
runs them.
"""

from __future__ import annotations

from collections import defaultdict
from types import ModuleType
from typing import (
    Any,
    Callable,
    DefaultDict,
    Dict,
    FrozenSet,
    Iterable,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

import attrs

from .findings import Finding, Party

__all__ = ["Message", "Outstanding", "RuleBook", "Rules", "check", "transition"]

#: The method whose messages are also keyed by their update's kind.
UPDATE = "session/update"
#: The update kinds whose ``content`` items are also keyed by their type (``content_check``).
TOOL_CALLS = frozenset({"tool_call", "tool_call_update"})
#: The method of the keys ``content_check`` marks: "session/update#content:<type>".
_CONTENT = f"{UPDATE}#content:"


@attrs.define(slots=True)
class Outstanding:
    """A request that was sent and not yet answered."""

    method: str
    params: Dict[str, Any]
    index: Optional[int]
    cancel_requested: bool = False
    #: The sender's message count when it sent this request (``ConnectionFacts.sent``).
    seq: int = 0
    #: The sender's message count at its first ``$/cancel_request`` of this request: once the
    #: receiver has read that many (``ConnectionFacts.read``), it has read the cancel.
    cancel_seq: int = 0


@attrs.define(slots=True)
class Message:
    """One message as the rules see it: the raw wire dict plus what is known about it."""

    sender: Party
    raw: Dict[str, Any]
    index: Optional[int]
    kind: str  # "request", "notification", "response", or "refusal" (see state.duplicates)
    method: Optional[str]  # for a response: the method of the request it answers
    id: Any = None
    params: Dict[str, Any] = attrs.Factory(dict)
    #: For a response: the request it answers (None if there is none).
    request: Optional[Outstanding] = None
    #: For a session/update notification: its ``update`` object, when it is one.
    update: Optional[Dict[str, Any]] = None
    #: For a request or a notification: its ``params.sessionId`` (None when it names none).
    session_id: Any = None
    #: The session that ``session_id`` names on this connection (``ConnectionFacts.session``),
    #: looked up once as the message arrives, or None. A check reads the state as the message
    #: found it, so this is the session it judges; a transition that sets a session up or drops
    #: it looks the session up itself.
    session: Any = None

    @property
    def is_error(self) -> bool:
        return "error" in self.raw

    @property
    def result(self) -> Any:
        return self.raw.get("result")

    @property
    def error(self) -> Dict[str, Any]:
        error = self.raw.get("error")
        return error if isinstance(error, dict) else {}

    @property
    def permission_outcome(self) -> Any:
        """For an answer to session/request_permission: ``outcome.outcome`` ("selected",
        "cancelled"), or None when the answer carries none."""
        outcome = self.result.get("outcome") if isinstance(self.result, dict) else None
        return outcome.get("outcome") if isinstance(outcome, dict) else None


#: A check or a transition takes the connection's facts (``facts.ConnectionFacts``) and a message.
CheckFn = Callable[[Any, Message], Iterable[Finding]]
TransitionFn = Callable[[Any, Message], None]
_Key = Tuple[str, Party, str]  # (kind, sender, method), or method "session/update#<kind>"
#: A rule as the book keeps it: the function, and the feature it waits for (None: none).
_Entry = Tuple[Any, Optional[str]]
_NONE: FrozenSet[str] = frozenset()


class RuleBook:
    """The checks and transitions of every rule module, by key, in the order of the modules."""

    def __init__(self, modules: Sequence[ModuleType] = ()) -> None:
        self.checks: DefaultDict[_Key, List[_Entry]] = defaultdict(list)
        self.transitions: DefaultDict[_Key, List[_Entry]] = defaultdict(list)
        for module in modules:
            for fn in list(vars(module).values()):
                if getattr(fn, "__module__", None) != module.__name__:
                    continue  # defined elsewhere and imported: registered by its own module
                for role, key, feature in getattr(fn, "_acp_rules", ()):
                    table: Any = self.checks if role == "check" else self.transitions
                    table[key].append((fn, feature))
        #: The methods and update kinds some rule names: only their lists are kept joined.
        keys = [*self.checks, *self.transitions]
        self._named = {method for _, _, method in keys}
        #: The tool-call content types some rule names (``content_check``).
        self._content = frozenset(
            method[len(_CONTENT) :] for method in self._named if method.startswith(_CONTENT)
        )
        #: The checks and the transitions for (kind, sender, method, update kind, content types,
        #: features in play), joined on first use: the method's own, then its update kind's
        #: (updates are most of the traffic), then its content types'.
        self._joined: Dict[Tuple[Any, ...], Rules] = {}

    def checks_for(self, m: Message, in_play: FrozenSet[str] = _NONE) -> List[CheckFn]:
        return self.rules_for(m, in_play).checks

    def transitions_for(self, m: Message, in_play: FrozenSet[str] = _NONE) -> List[TransitionFn]:
        return self.rules_for(m, in_play).transitions

    def rules_for(self, m: Message, in_play: FrozenSet[str] = _NONE) -> "Rules":
        """The checks and the transitions of a message, found with one look at its key, on a
        connection where the features ``in_play`` are (``ConnectionFacts.in_play``)."""
        kind = m.update.get("sessionUpdate") if m.update is not None else None
        if not isinstance(kind, str):
            kind = None  # no update kind (or none a rule could name)
        key: Tuple[Any, ...] = (m.kind, m.sender, m.method, kind, in_play)
        content: Tuple[str, ...] = ()
        if kind in TOOL_CALLS and self._content:
            content = _content_types(m.update, self._content)
            key += content
        found = self._joined.get(key)
        if found is not None:
            return found
        method = m.method or ""
        own = (m.kind, m.sender, method)
        also: List[str] = []
        if kind is not None and m.kind == "notification" and method == UPDATE:
            also.append(f"{UPDATE}#{kind}")  # the rules of one update kind join the method's own
            also.extend(f"{_CONTENT}{name}" for name in content)
        found = Rules(
            _join(self.checks, own, also, in_play), _join(self.transitions, own, also, in_play)
        )
        if method in self._named and all(name in self._named for name in also):
            self._joined[key] = found  # a peer's own methods and update kinds are not kept
        return found


class Rules(NamedTuple):
    """The functions one message runs: its checks, then (if it is recorded) its transitions."""

    checks: List[CheckFn]
    transitions: List[TransitionFn]


def _join(
    table: Dict[_Key, List[_Entry]], key: _Key, also: List[str], in_play: FrozenSet[str]
) -> List[Any]:
    """The functions of ``key``, then those of the keys ``also`` names (an update kind, content
    types): of each, those that wait for no feature or for one in play."""
    entries = list(table.get(key, []))
    for method in also:
        entries += table.get((key[0], key[1], method), [])
    return [fn for fn, feature in entries if feature is None or feature in in_play]


def _content_types(update: Any, named: FrozenSet[str]) -> Tuple[str, ...]:
    """The types of a tool call's content items that some rule names (``named``), each once,
    sorted."""
    content = update.get("content")
    found: Tuple[str, ...] = ()
    for item in content if isinstance(content, list) else ():
        kind = item.get("type") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind in named and kind not in found:  # a list: the codec's
            found += (kind,)
    return tuple(sorted(found)) if len(found) > 1 else found


def _mark(
    role: str, kind: str, senders: Tuple[Party, ...], methods: Tuple[str, ...], feature: Any
) -> Any:
    def register(fn: Any) -> Any:
        keys = getattr(fn, "_acp_rules", [])
        keys.extend(
            (role, (kind, sender, method), feature) for sender in senders for method in methods
        )
        fn._acp_rules = keys
        return fn

    return register


def _senders(sender: Any) -> Tuple[Party, ...]:
    return tuple(sender) if isinstance(sender, (tuple, list)) else (sender,)


def check(
    kind: str, sender: Any, *methods: str, feature: Optional[str] = None
) -> Callable[[CheckFn], CheckFn]:
    """Mark a check for messages of ``kind`` sent by ``sender`` with one of ``methods``.

    ``sender`` is a ``Party`` or a tuple of both. For ``kind="response"``, ``methods`` are the
    methods of the requests being answered. ``feature``: a provisional page's hook, run only
    where that feature is in play (``ConnectionFacts.in_play``).
    """
    return _mark("check", kind, _senders(sender), methods, feature)  # type: ignore[no-any-return]


def transition(
    kind: str, sender: Any, *methods: str, feature: Optional[str] = None
) -> Callable[[TransitionFn], TransitionFn]:
    """Mark a state transition, like ``check``."""
    return _mark(  # type: ignore[no-any-return]
        "transition", kind, _senders(sender), methods, feature
    )


def update_check(*kinds: str, feature: Optional[str] = None) -> Callable[[CheckFn], CheckFn]:
    """Mark a check of the agent's ``session/update`` notifications of these update kinds."""
    methods = tuple(f"{UPDATE}#{kind}" for kind in kinds)
    return _mark(  # type: ignore[no-any-return]
        "check", "notification", (Party.AGENT,), methods, feature
    )


def update_transition(
    *kinds: str, feature: Optional[str] = None
) -> Callable[[TransitionFn], TransitionFn]:
    """Mark a transition on the agent's ``session/update`` notifications of these kinds."""
    methods = tuple(f"{UPDATE}#{kind}" for kind in kinds)
    return _mark(  # type: ignore[no-any-return]
        "transition", "notification", (Party.AGENT,), methods, feature
    )


def content_check(*types: str) -> Callable[[CheckFn], CheckFn]:
    """Mark a check of the agent's tool calls (``tool_call``, ``tool_call_update``) whose
    ``content`` holds an item of one of these types (run once per message, whatever the count)."""
    methods = tuple(f"{_CONTENT}{t}" for t in types)
    return _mark(  # type: ignore[no-any-return]
        "check", "notification", (Party.AGENT,), methods, None
    )


def update_of(m: Message) -> Dict[str, Any]:
    """The ``update`` object of a ``session/update`` (looked up by kind, so it is a dict)."""
    return m.update if m.update is not None else {}


def params_of(raw: Dict[str, Any]) -> Dict[str, Any]:
    params = raw.get("params")
    return params if isinstance(params, dict) else {}


def first(items: Iterable[Any]) -> Optional[Any]:
    for item in items:
        return item
    return None
