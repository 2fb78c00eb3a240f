"""What the reference client keeps of what an agent sends: within one bound, the rest counted.

An agent may stream without end: one message, thought, compaction summary or message between
sessions of hundreds of megabytes, or a new message, tool call, plan or compaction in every
update. What the client keeps of it (the session views, the stream the CLI is showing) is
bounded by one number, ``max_kept``, in *counted characters*: the characters of the strings
kept, plus ``OVERHEAD`` for each object that holds them. A Python string takes one to four
bytes a character, so what is kept takes at most about four bytes a counted character.

* ``Tail``: the last ``limit`` counted characters of a stream of blocks, what went out counted.
* ``KeptBlocks``: the content blocks of one stream (the chunks of a message, a compaction's
  summary): the first half of its bound as the blocks came (the head) and a ``Tail`` of the
  other half; what fell between is shown as one text block
  ``[... 299,999,000 characters dropped ...]`` between the two.
* ``Shown``: a stream the CLI prints as it comes: the first half passes at once, then a
  ``Tail`` of the other half is held and printed when the stream ends, after the marker.
* ``Budget``: what one view holds together (its messages, compactions, tool calls, plans,
  children, messages between sessions, notices). Each is charged what it costs when it
  changes; past the bound, the one updated least recently is forgotten first, and counted. The
  one just updated is always kept: a single update costs at most one line of the wire
  (``max_line_bytes``), and a stream at most the bound.

The marker is the client's text among the agent's, and like the agent's it reaches a terminal
only through ``acpref._tools.terminal.inert``. Plain data: whoever holds one locks it.
"""

from __future__ import annotations

import enum
import operator
from collections import OrderedDict, deque
from typing import (
    Any,
    Callable,
    Deque,
    Dict,
    Hashable,
    Iterable,
    Iterator,
    List,
    Optional,
    Tuple,
)

import attrs

from .. import schema as s

__all__ = [
    "DEFAULT_MAX_KEPT",
    "OVERHEAD",
    "Budget",
    "KeptBlocks",
    "Shown",
    "Tail",
    "cost_of",
    "dropped_marker",
    "measure",
]

#: The default bound, in counted characters: about eight million, more than a model's context
#: window holds (two million tokens), so that an answer is never cut in use.
DEFAULT_MAX_KEPT = 8 * 1024 * 1024

#: What one object (a block, a string, a list, a view of a tool call...) is counted, besides
#: the characters of its strings: near what CPython takes for a small object and its header.
OVERHEAD = 64


def measure(value: Any) -> Tuple[int, int]:
    """The characters of the strings in ``value``, and how many objects it is made of.

    Walks schema models (attrs classes), lists, tuples and dicts without recursion (a value may
    be nested as deep as the JSON parser allows). ``None``, ``UNSET``, booleans and enum members
    are shared objects: they take nothing of their own.
    """
    chars = objects = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            chars += len(item)
        elif item is None or kind is bool or isinstance(item, enum.Enum):
            continue
        elif kind is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif attrs.has(kind):
            stack.extend(_fields_of(kind)(item))
        objects += 1
    return chars, objects


#: Per schema model: a function giving the values of its fields as a tuple.
_GETTERS: Dict[type, Callable[[Any], Tuple[Any, ...]]] = {}


def _fields_of(kind: type) -> Callable[[Any], Tuple[Any, ...]]:
    getter = _GETTERS.get(kind)
    if getter is None:
        names = [f.name for f in attrs.fields(kind)]
        if len(names) > 1:
            getter = operator.attrgetter(*names)
        else:  # attrgetter of one name gives the value itself, not a tuple
            getter = lambda item: tuple(getattr(item, name) for name in names)  # noqa: E731
        _GETTERS[kind] = getter
    return getter


def cost_of(value: Any) -> int:
    """What keeping ``value`` counts: its characters, plus ``OVERHEAD`` per object."""
    chars, objects = measure(value)
    return chars + OVERHEAD * objects


def dropped_marker(characters: int) -> str:
    """The line that stands for ``characters`` dropped from the middle of a stream."""
    return f"\n[... {characters:,} characters dropped ...]\n"


class Tail:
    """The last ``limit`` counted characters of a stream of blocks: the oldest go out first,
    counted in ``dropped`` (characters). A text block across the limit loses its front (and its
    annotations and ``_meta``, which belong to the whole block); another block goes whole. Text
    may be pushed as a ``str``; it reads as a text block.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cost = 0
        self.dropped = 0
        #: (block, its cost, its characters), oldest first.
        self._blocks: Deque[Tuple[Any, int, int]] = deque()

    def push(self, block: Any) -> None:
        chars, objects = measure(block)
        cost = chars + OVERHEAD * objects
        self._blocks.append((block, cost, chars))
        self.cost += cost
        # spec-gap client-kept-bound: a stream keeps at most its bound; the rest is counted.
        while self.cost > self.limit:
            oldest, cost, chars = self._blocks[0]
            excess = self.cost - self.limit
            text = oldest.text if isinstance(oldest, s.TextContent) else oldest
            if isinstance(text, str) and len(text) > excess:
                text = text[excess:]  # costs at least ``excess`` less: within the limit
                self._blocks[0] = (text, len(text) + OVERHEAD, len(text))
                self.cost += len(text) + OVERHEAD - cost
                self.dropped += chars - len(text)
                continue
            self._blocks.popleft()
            self.cost -= cost
            self.dropped += chars

    def blocks(self) -> List[Any]:
        """The blocks kept, the marker of what was dropped first (when something was)."""
        kept = [dropped_marker(self.dropped)] if self.dropped else []
        kept += [block for block, _, _ in self._blocks]
        return [s.TextContent(text=b) if isinstance(b, str) else b for b in kept]

    def __len__(self) -> int:
        return len(self._blocks) + (1 if self.dropped else 0)


class KeptBlocks:
    """The blocks of one stream, at most ``limit`` counted characters: its head and its tail,
    each half of it (the marker's cost set aside); the middle is dropped and counted in
    ``dropped`` (characters).

    It reads as a list of content blocks: iterating gives the head, then the marker block (when
    something was dropped), then the tail; ``len``, indexing and ``==`` with a list work too.
    """

    def __init__(self, limit: int, blocks: Iterable[Any] = ()) -> None:
        self.limit = limit
        self._head: List[Any] = []
        self._head_cost = 0
        #: The blocks after the head, once it is full.
        self._tail: Optional[Tail] = None
        for block in blocks:
            self.append(block)

    @property
    def cost(self) -> int:
        """What the kept blocks count (the marker's too)."""
        tail = self._tail
        return self._head_cost + (tail.cost + 3 * OVERHEAD if tail is not None else 0)

    @property
    def dropped(self) -> int:
        """The characters dropped from the middle (text, or the strings of a dropped block)."""
        return self._tail.dropped if self._tail is not None else 0

    def append(self, block: Any) -> None:
        """Keep ``block`` in the head if it fits, else in the tail (a text block across the end
        of the head is cut there)."""
        if self._tail is None:
            half = max(0, self.limit - 3 * OVERHEAD) // 2
            cost = cost_of(block)
            if self._head_cost + cost <= half:
                self._head.append(block)
                self._head_cost += cost
                return
            self._tail = Tail(half)
            room = half - self._head_cost - 2 * OVERHEAD
            if isinstance(block, s.TextContent) and room > 0:
                self._head.append(s.TextContent(text=block.text[:room]))
                self._head_cost += room + 2 * OVERHEAD
                block = block.text[room:]
        self._tail.push(block)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._head + (self._tail.blocks() if self._tail is not None else []))

    def __len__(self) -> int:
        return len(self._head) + len(self._tail or ())

    def __getitem__(self, index: Any) -> Any:
        return list(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (KeptBlocks, list)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"KeptBlocks({list(self)!r})"


class Shown:
    """A stream shown as it comes: its first ``limit // 2`` characters pass at once (``now``);
    past them only its last ``limit // 2`` counted characters are held (a ``Tail``), to be shown
    when it ends (``rest``: the marker of what was dropped, then the tail).
    """

    def __init__(self, limit: int) -> None:
        self._room = limit // 2
        self._held = Tail(limit // 2)

    def now(self, text: str) -> str:
        """What of ``text`` to show now; the rest is held."""
        shown, rest = text[: self._room], text[self._room :]
        self._room -= len(shown)
        if rest:
            self._held.push(rest)
        return shown

    def rest(self) -> str:
        """What was held, to show at the end: nothing when all was shown at once."""
        return "".join(block.text for block in self._held.blocks())


class Budget:
    """What one view holds together, in counted characters: past ``limit``, the entity updated
    least recently is forgotten (its ``forget`` callback removes it from the view) and counted in
    ``forgotten``. The one charged last is always kept.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self.forgotten = 0
        #: key -> (cost, forget), the least recently charged first.
        self._entries: "OrderedDict[Hashable, Tuple[int, Callable[[], object]]]" = OrderedDict()

    def charge(self, key: Hashable, cost: int, forget: Callable[[], object]) -> None:
        """The entity ``key`` now costs ``cost`` (it is new, or it changed): it becomes the most
        recently updated, and the least recently updated ones go while the sum is over.
        """
        before = self._entries.pop(key, None)
        self.held += cost - (before[0] if before is not None else 0)
        self._entries[key] = (cost, forget)
        # spec-gap client-kept-bound: past the bound, the least recently updated goes first.
        while self.held > self.limit and len(self._entries) > 1:
            _, (oldest, forget_oldest) = self._entries.popitem(last=False)
            self.held -= oldest
            self.forgotten += 1
            forget_oldest()

    def release(self, key: Hashable) -> None:
        """The view let the entity go itself (a plan removed, say): it costs nothing more."""
        before = self._entries.pop(key, None)
        if before is not None:
            self.held -= before[0]
