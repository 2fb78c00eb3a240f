"""One session as the agent remembers it: ``Session``, the registry's record.

Spec: session-setup.mdx, session-list.mdx; clauses SETUP-05, SETUP-06, SETUP-19 .. SETUP-23,
LIST-05, LIST-06, COMPACT-06 .. COMPACT-08, COMPACT-14, NOTICE-06. The registry that holds these
records, lists them and keeps them on disk is ``_sessions.SessionRegistry`` (which re-exports
``Session``).

What must not live here: wire I/O and the protocol rules.
"""

from __future__ import annotations

import threading
import time
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    List,
    Optional,
    Set,
    Tuple,
    TypeVar,
    overload,
)

import attrs

from .. import codec
from .. import schema as s
from .._core.prompt_turn import TURN_CONTENT
from .._core.session_compaction import COMPACTION
from ..schema import UNSET

__all__ = ["Session"]

#: Updates that ``session/load`` replays (spec SETUP-05): a turn's content, by ``sessionUpdate``
#: tag, as the rules name it (tags, not classes: naming the classes here would import their
#: schema pages at start-up); and compactions, which keep their place in the timeline
#: (COMPACT-14). Notices never are: they are live events, not history (NOTICE-06).
_REPLAYED = TURN_CONTENT | COMPACTION


def _materialized(entity: Any, update: Any) -> Any:
    """A compaction's replayed form with one more of its updates folded in (COMPACT-06 .. 08)."""
    if isinstance(update, s.CompactionSummaryChunk):
        before = entity.summary if isinstance(entity.summary, list) else []
        return attrs.evolve(entity, summary=[*before, update.content])  # spec COMPACT-07
    changes: Dict[str, Any] = {"status": update.status}
    # spec COMPACT-06: omitted keeps, null clears, a value replaces (COMPACT-08: the whole
    # summary); a cleared field is left out of the replayed update.
    for name in ("summary", "error", "meta"):
        value = getattr(update, name)
        if value is not s.UNSET:
            changes[name] = value if value not in (None, []) else s.UNSET
    return attrs.evolve(entity, **changes)


_last_stamp: Tuple[int, str] = (-1, "")  # (millisecond, its text)
_last_second: Tuple[int, str] = (-1, "")  # (second, its text up to the seconds)


def _now() -> str:
    # spec LIST-06: updatedAt is ISO 8601 in UTC, to the millisecond ("2026-11-30T07:24:52.123Z").
    # Every streamed update touches its session: the text is made once per millisecond, and its
    # date and time once per second (formatting a datetime cost 2 us, a tenth of a turn's rules).
    global _last_stamp, _last_second
    ms = time.time_ns() // 1_000_000
    if _last_stamp[0] != ms:
        second, milli = divmod(ms, 1000)
        if _last_second[0] != second:
            _last_second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        _last_stamp = (ms, f"{_last_second[1]}.{milli:03d}Z")
    return _last_stamp[1]


#: The sessions' locks. A lock of each session's own cost about 100 bytes a session (a seventh of
#: all it kept): sessions share a fixed set of locks instead, picked by session id. Nothing holds
#: two sessions' locks at once, so sharing cannot deadlock; it only makes two sessions that pick
#: the same lock wait for each other, for the few microseconds a change takes.
_SESSION_LOCKS = tuple(threading.RLock() for _ in range(64))

_T = TypeVar("_T")


class _MadeOnFirstUse(Generic[_T]):
    """A session's container that is made when first used, kept in the slot ``_<name>``.

    Most sessions never need some of theirs (a session that is never prompted has no history; few
    have terminal output or extra state), and an empty dict costs 64 bytes, an empty list 56.
    """

    def __init__(self, factory: Callable[[], _T]) -> None:
        self._factory = factory
        self._slot = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = "_" + name

    @overload
    def __get__(self, session: None, owner: Optional[type] = None) -> "_MadeOnFirstUse[_T]": ...

    @overload
    def __get__(self, session: "Session", owner: Optional[type] = None) -> _T: ...

    def __get__(self, session: Optional["Session"], owner: Optional[type] = None) -> Any:
        if session is None:
            return self
        value = getattr(session, self._slot)
        if value is None:
            with session._lock:  # two threads' first uses must make one container, not two
                value = getattr(session, self._slot)
                if value is None:
                    value = self._factory()
                    setattr(session, self._slot, value)
        return value

    def __set__(self, session: "Session", value: _T) -> None:
        setattr(session, self._slot, value)


@attrs.define(eq=False, weakref_slot=False)  # no weak references: 8 bytes a session
class Session:
    """One session. Mutate it through the registry's methods, which lock and persist."""

    id: str
    cwd: str
    #: The additional roots and the MCP servers, as the last new/load/resume named them: each of
    #: those requests replaces them whole (SETUP-21, SETUP-23), so they are tuples.
    additional_directories: Tuple[str, ...] = ()
    mcp_servers: Tuple[Any, ...] = ()
    modes: Optional[s.SessionModeState] = None
    config_options: Optional[List[s.SessionConfigOption]] = None
    title: Optional[str] = None
    #: The client's system prompt (provisional SYSPROMPT-12: kept across a load or resume that
    #: sends none), or None for the agent's own default instructions (SYSPROMPT-13).
    system_prompt: Optional[s.SystemPrompt] = None
    updated_at: str = attrs.Factory(_now)
    #: The turn whose handler runs on this record (a ``PromptTurn``), or None. ``turn.cancelled``
    #: is the session's cancellation flag. Set and cleared by the agent side around the handler;
    #: never persisted. Not a copy of the protocol core's running turn: that one belongs to one
    #: connection and lasts from the prompt read to its answer recorded, while a registry may
    #: outlive its connections and be shared by several, and this says only that agent code is
    #: still writing to the record (``SessionRegistry.close`` keeps such a record whole).
    turn: Optional[Any] = attrs.field(default=None, repr=False)
    #: When it last changed, in this process: orders sessions whose ``updated_at`` ties (ms).
    touched: int = attrs.field(default=0, repr=False)
    # The slots of the containers below (None until first used).
    _history: Optional[List[Any]] = attrs.field(default=None, repr=False)
    _terminal_output: Optional[Dict[str, str]] = attrs.field(default=None, repr=False)
    _extra: Optional[Dict[str, Any]] = attrs.field(default=None, repr=False)
    _live: Optional[Dict[str, Any]] = attrs.field(default=None, repr=False)

    #: The updates ``session/load`` replays (SETUP-05), oldest first.
    history = _MadeOnFirstUse[List[Any]](list)
    #: The last output of each released terminal of the session, shown in its place on replay.
    terminal_output = _MadeOnFirstUse[Dict[str, str]](dict)
    #: Agent-specific state an implementation keeps beside the session (JSON-able to persist).
    extra = _MadeOnFirstUse[Dict[str, Any]](dict)
    #: Live resources (MCP connections, ...) that are never persisted.
    live = _MadeOnFirstUse[Dict[str, Any]](dict)

    @property
    def _lock(self) -> threading.RLock:
        return _SESSION_LOCKS[hash(self.id) % len(_SESSION_LOCKS)]

    @property
    def roots(self) -> List[str]:
        """The effective root set: cwd, then the additional directories (SETUP-19, SETUP-27)."""
        # spec SETUP-27: cwd is always part of the effective root set (and the first root).
        return [self.cwd, *self.additional_directories]

    def info(self, *, with_directories: bool) -> s.SessionInfo:
        """This session as ``session/list`` shows it (LIST-05; roots if advertised, LIST-07)."""
        return s.SessionInfo(
            session_id=self.id,
            cwd=self.cwd,
            title=self.title if self.title is not None else UNSET,
            updated_at=self.updated_at,
            additional_directories=list(self.additional_directories) if with_directories else UNSET,
        )

    def replay(self) -> List[Any]:
        """The history as ``session/load`` replays it (SETUP-05).

        spec-gap replay-terminal: a terminal embedded in a tool call was released long ago, and
        a released terminal may not be embedded again (TOOL-14); the replay shows its last
        output as text instead.
        """
        with self._lock:
            out: List[Any] = []
            compactions: Dict[str, int] = {}  # compaction id -> its place in ``out``
            for update in self.history:
                if isinstance(update, (s.CompactionUpdate, s.CompactionSummaryChunk)):
                    # spec COMPACT-14: a compaction is replayed at the place of its first
                    # update, in materialized form: one compaction_update with its final
                    # status and summary (spec COMPACT-03: a terminal status first is fine).
                    place = compactions.setdefault(update.compaction_id, len(out))
                    if place == len(out):
                        out.append(
                            s.CompactionUpdate(
                                compaction_id=update.compaction_id,
                                status=s.CompactionStatus.IN_PROGRESS,
                            )
                        )
                    out[place] = _materialized(out[place], update)
                else:
                    out.append(self._replayable(update))
            return out

    def _replayable(self, update: Any) -> Any:
        content = getattr(update, "content", None)
        if not isinstance(update, (s.ToolCall, s.ToolCallUpdate)) or not isinstance(content, list):
            return update
        if not any(isinstance(c, s.Terminal) for c in content):
            return update
        # spec-gap replay-terminal: the released terminal's last output, as text content.
        shown = [
            s.Content(
                content=s.TextContent(
                    text=self.terminal_output.get(c.terminal_id, "(terminal output not kept)")
                )
            )
            if isinstance(c, s.Terminal)
            else c
            for c in content
        ]
        return attrs.evolve(update, content=shown)

    def mode_option(self) -> Optional[s.SessionConfigOption]:
        """The config option of category ``mode``, if the session has one (spec CONFIG-22)."""
        for option in self.config_options or []:
            if option.category == s.SessionConfigOptionCategory.MODE:
                return option
        return None

    # -- persistence ----------------------------------------------------------------------------

    def settings_json(self) -> Dict[str, Any]:
        """Everything but the history, as JSON."""
        return {
            "id": self.id,
            "cwd": self.cwd,
            "additionalDirectories": list(self.additional_directories),
            "mcpServers": [codec.encode(m, s.McpServer) for m in self.mcp_servers],
            "modes": codec.encode(self.modes) if self.modes is not None else None,
            "configOptions": codec.encode(self.config_options)
            if self.config_options is not None
            else None,
            "title": self.title,
            "systemPrompt": codec.encode(self.system_prompt)
            if self.system_prompt is not None
            else None,
            "updatedAt": self.updated_at,
            "extra": self.extra,
        }

    @classmethod
    def from_settings_json(cls, data: Dict[str, Any]) -> "Session":
        """A session as ``settings_json`` wrote it (its history is read apart)."""
        return cls(
            id=data["id"],
            cwd=data["cwd"],
            additional_directories=tuple(data.get("additionalDirectories") or ()),
            mcp_servers=tuple(codec.decode(m, s.McpServer) for m in data.get("mcpServers") or []),
            modes=codec.decode(data["modes"], s.SessionModeState) if data.get("modes") else None,
            config_options=(
                codec.decode(data["configOptions"], List[s.SessionConfigOption])
                if data.get("configOptions") is not None
                else None
            ),
            title=data.get("title"),
            system_prompt=(
                codec.decode(data["systemPrompt"], s.SystemPrompt)
                if data.get("systemPrompt") is not None
                else None
            ),
            updated_at=data.get("updatedAt") or _now(),
            extra=dict(data.get("extra") or {}),
        )


