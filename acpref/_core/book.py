"""The rule book: tables of checks and state transitions, keyed by who sends which method.

Rule modules (``client_sends``, ``agent_sends``) register their functions here with the
decorators below; ``state.ProtocolState`` looks them up for each message. A *check* reads the
state and the message and yields ``Finding``s; it never changes anything. A *transition* changes
the state and yields nothing. Keeping the two apart lets a live side refuse a message it was about
to send without having recorded it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable, DefaultDict, Dict, Iterable, List, Optional, Tuple

import attrs

from .findings import Finding, Party

if TYPE_CHECKING:  # pragma: no cover
    from .state import ProtocolState

__all__ = ["Message", "Outstanding", "RULES", "check", "transition"]


@attrs.define(slots=True)
class Outstanding:
    """A request that was sent and not yet answered."""

    method: str
    params: Dict[str, Any]
    index: Optional[int]
    cancel_requested: bool = False


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
    def session_id(self) -> Any:
        return self.params.get("sessionId")


CheckFn = Callable[["ProtocolState", Message], Iterable[Finding]]
TransitionFn = Callable[["ProtocolState", Message], None]
_Key = Tuple[str, Party, str]  # (kind, sender, method)


class RuleBook:
    def __init__(self) -> None:
        self.checks: DefaultDict[_Key, List[CheckFn]] = defaultdict(list)
        self.transitions: DefaultDict[_Key, List[TransitionFn]] = defaultdict(list)

    def checks_for(self, m: Message) -> List[CheckFn]:
        return self.checks.get((m.kind, m.sender, m.method or ""), [])

    def transitions_for(self, m: Message) -> List[TransitionFn]:
        return self.transitions.get((m.kind, m.sender, m.method or ""), [])


RULES = RuleBook()


def check(kind: str, sender: Party, *methods: str) -> Callable[[CheckFn], CheckFn]:
    """Register a check for messages of ``kind`` sent by ``sender`` with one of ``methods``.

    For ``kind="response"``, ``methods`` are the methods of the requests being answered.
    """

    def register(fn: CheckFn) -> CheckFn:
        for method in methods:
            RULES.checks[(kind, sender, method)].append(fn)
        return fn

    return register


def transition(kind: str, sender: Party, *methods: str) -> Callable[[TransitionFn], TransitionFn]:
    """Register a state transition, like ``check``."""

    def register(fn: TransitionFn) -> TransitionFn:
        for method in methods:
            RULES.transitions[(kind, sender, method)].append(fn)
        return fn

    return register


def params_of(raw: Dict[str, Any]) -> Dict[str, Any]:
    params = raw.get("params")
    return params if isinstance(params, dict) else {}


def first(items: Iterable[Any]) -> Optional[Any]:
    for item in items:
        return item
    return None
