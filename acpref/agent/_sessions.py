"""The session registry: what an agent remembers about its sessions, in memory, thread-safe.

Spec: session-setup.mdx (sessions, load, resume, close, additional roots), session-list.mdx
(listing, cursors, session info), session-delete.mdx; clauses SETUP-02, SETUP-05, SETUP-06,
SETUP-19 .. SETUP-23, SETUP-27, LIST-02 .. LIST-17, DELETE-02 .. DELETE-05.

A ``Session`` holds the session's ``cwd`` and additional roots, its MCP servers, modes and config
options, title and ``updatedAt``, its *history* (the session updates that ``session/load``
replays: user and agent message chunks, thoughts, tool calls and their updates, plans), and the
turn running in it right now (whose ``cancelled`` event is the session's cancellation flag). The
agent side appends to the history as a turn streams (``PromptTurn.update``) and replays it on
load; any agent may use the registry on its own.

With a ``state_dir`` the registry survives agent restarts, so that ``session/load`` works across
them as the spec intends. Each session is two files: ``<id>.json`` (settings, rewritten
atomically when they change) and ``<id>.history.jsonl`` (one line appended per history entry, so
that a long turn costs one small write per update, not one rewrite of everything). A damaged
last line (a crash mid-write) is skipped when reading back.

What must not live here: wire I/O and the protocol rules.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import os
import sys
import threading
import time
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    Optional,
    Sequence,
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

__all__ = ["Session", "SessionRegistry", "DEFAULT_PAGE_SIZE", "InvalidCursor"]

log = logging.getLogger("acpref.sessions")

#: spec LIST-13: the page size session/list enforces.
DEFAULT_PAGE_SIZE = 50

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


class InvalidCursor(ValueError):
    """A ``session/list`` cursor this registry did not issue (spec LIST-12)."""


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
    #: The turn running in this session (a ``PromptTurn``), or None. ``turn.cancelled`` is the
    #: session's cancellation flag. Set and cleared by the agent side; never persisted.
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


class SessionRegistry:
    """All sessions an agent knows, by id. Thread-safe; optionally persisted to ``state_dir``.

    Locks: ``_lock`` guards the id tables; each session's lock (see ``_SESSION_LOCKS``) guards
    its fields and its files. Neither is held while the other is taken the other way round, nor across wire I/O.
    """

    def __init__(
        self, state_dir: Optional[str] = None, *, page_size: int = DEFAULT_PAGE_SIZE
    ) -> None:
        self._sessions: Dict[str, Session] = {}
        self._deleted: Set[str] = set()
        self._lock = threading.Lock()
        self._state_dir = state_dir
        self._page_size = max(1, page_size)
        self._clock = itertools.count(1)  # next() is atomic: no lock needed
        #: Signs list cursors, so that they stay opaque and unforgeable (LIST-11, LIST-12).
        self._cursor_key = os.urandom(16)
        if state_dir is not None:
            os.makedirs(state_dir, exist_ok=True)
            self._load_all()

    @property
    def state_dir(self) -> Optional[str]:
        """The directory sessions persist in, or None for memory only."""
        return self._state_dir

    # -- creating and finding --------------------------------------------------------------------

    def create(
        self,
        cwd: str,
        *,
        additional_directories: Sequence[str] = (),
        mcp_servers: Sequence[Any] = (),
        modes: Optional[s.SessionModeState] = None,
        config_options: Optional[List[s.SessionConfigOption]] = None,
    ) -> Session:
        """A new session with a fresh id, never used before by this registry (spec SETUP-02)."""
        with self._lock:
            while True:
                session_id = "sess_" + os.urandom(8).hex()
                if session_id not in self._sessions and session_id not in self._deleted:
                    break
            session = Session(
                id=session_id,
                cwd=sys.intern(cwd),  # sessions mostly share a few cwds: one string each
                additional_directories=tuple(additional_directories),
                mcp_servers=tuple(mcp_servers),
                modes=modes,
                config_options=config_options,
                touched=next(self._clock),
            )
            self._sessions[session_id] = session
        self.save(session)
        return session

    def get(self, session_id: str) -> Optional[Session]:
        """The session ``session_id``, or None."""
        with self._lock:
            return self._sessions.get(session_id)

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._sessions

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        with self._lock:
            return iter(list(self._sessions.values()))

    # -- reopening -------------------------------------------------------------------------------

    def reopen(
        self, session: Session, *, additional_directories: Sequence[str], mcp_servers: Sequence[Any]
    ) -> None:
        """Apply the roots and servers a load/resume names: exactly those (SETUP-21, SETUP-23)."""
        with session._lock:
            session.additional_directories = tuple(additional_directories)
            session.mcp_servers = tuple(mcp_servers)
        self.save(session)

    def set_system_prompt(self, session: Session, prompt: Optional[s.SystemPrompt]) -> None:
        """Keep the system prompt a new/load/resume applied (provisional SYSPROMPT-12)."""
        with session._lock:
            session.system_prompt = prompt
        self.save(session)

    # -- the running turn ------------------------------------------------------------------------

    def begin_turn(self, session: Session, turn: Any) -> None:
        """Mark ``turn`` as the session's running turn (the agent side allows one at a time)."""
        with session._lock:
            session.turn = turn

    def end_turn(self, session: Session, turn: Any) -> None:
        """The session's turn ``turn`` ended (a later turn that started meanwhile is kept)."""
        with session._lock:
            if session.turn is turn:
                session.turn = None

    # -- history ---------------------------------------------------------------------------------

    def record(self, session: Session, update: Any) -> None:
        """Note one session update: history entries are appended; settings changes are applied.

        spec SETUP-05: message chunks, thoughts, tool calls and plans are history; a
        ``session_info_update`` changes the title (LIST-15: absent leaves it, null clears it);
        ``current_mode_update`` and ``config_option_update`` change the session's settings.
        """
        with session._lock:
            session.updated_at = _now()
            session.touched = next(self._clock)
            # spec NOTICE-06: a notice is not in this set: a live event, never replayed.
            if getattr(update, "session_update", None) in _REPLAYED:
                session.history.append(update)
                self._append_history(session, [update])
                return
            if isinstance(update, s.SessionInfoUpdate):
                # spec LIST-14: the agent's own session_info_update changes what list reports.
                if update.title is not UNSET:
                    session.title = update.title
            elif isinstance(update, s.CurrentModeUpdate) and session.modes is not None:
                session.modes = attrs.evolve(session.modes, current_mode_id=update.current_mode_id)
            elif isinstance(update, s.ConfigOptionUpdate):
                session.config_options = list(update.config_options)
            else:
                return
        self.save(session)

    def record_terminal_output(self, session: Session, terminal_id: str, output: str) -> None:
        """Keep a released terminal's last output, for the replay (see ``Session.replay``)."""
        with session._lock:
            session.terminal_output[terminal_id] = output
            if self._state_dir is not None and self._is_live(session):
                line = json.dumps(
                    {"at": session.updated_at, "terminal": terminal_id, "output": output},
                    ensure_ascii=False,
                )
                with open(self._history_path(session.id), "a", encoding="utf-8") as f:
                    f.write(line + "\n")

    def record_prompt(self, session: Session, prompt: Sequence[Any], message_id: str) -> None:
        """Record a prompt as user message chunks sharing one message id (SETUP-05, SETUP-06)."""
        chunks = [s.UserMessageChunk(content=block, message_id=message_id) for block in prompt]
        with session._lock:
            session.history.extend(chunks)
            session.updated_at = _now()
            session.touched = next(self._clock)
            self._append_history(session, chunks)

    def set_modes(self, session: Session, modes: Optional[s.SessionModeState]) -> None:
        """Set the session's modes and save it."""
        with session._lock:
            session.modes = modes
        self.save(session)

    def set_config_options(
        self, session: Session, options: Optional[List[s.SessionConfigOption]]
    ) -> None:
        """Set the session's config options and save it."""
        with session._lock:
            session.config_options = options
        self.save(session)

    def set_title(self, session: Session, title: Optional[str]) -> None:
        """Set the session's title (and its update time) and save it."""
        with session._lock:
            session.title = title
            session.updated_at = _now()
            session.touched = next(self._clock)
        self.save(session)

    # -- list and delete -------------------------------------------------------------------------

    def list(
        self,
        *,
        cwd: Optional[str] = None,
        cursor: Optional[str] = None,
        with_directories: bool = False,
    ) -> Tuple[List[s.SessionInfo], Optional[str]]:
        """One page of sessions, most recently updated first, and the next page's cursor (or None).

        spec LIST-04: only sessions whose cwd matches the filter; LIST-09: none is an empty page;
        LIST-12: a cursor this registry did not issue raises ``InvalidCursor``; LIST-13: the page
        size is bounded here; LIST-17: listing changes nothing.

        The cursor names the last session of the page (keyset pagination), so sessions created or
        deleted between two pages do not shift the next page.
        """
        after = self._decode_cursor(cursor) if cursor is not None else None
        # spec LIST-17: listing only reads: no session is loaded, touched or changed.
        with self._lock:
            chosen = [x for x in self._sessions.values() if cwd is None or _same_dir(x.cwd, cwd)]
        # spec-gap list-order: most recently updated first, keyset cursors.
        keyed = sorted(
            (((x.updated_at, x.touched), x) for x in chosen), key=lambda kx: kx[0], reverse=True
        )
        if after is not None:
            keyed = [(k, x) for k, x in keyed if k < after]
        page = keyed[: self._page_size]
        next_cursor = self._encode_cursor(page[-1][0]) if len(keyed) > len(page) else None
        return [x.info(with_directories=with_directories) for _, x in page], next_cursor

    def delete(self, session_id: str) -> bool:
        """Forget a session for good (hard delete); True if it existed (DELETE-04)."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
            self._deleted.add(session_id)
        if session is not None and self._state_dir is not None:
            with session._lock:
                for path in (self._settings_path(session_id), self._history_path(session_id)):
                    try:
                        os.unlink(path)
                    except FileNotFoundError:
                        pass
        return session is not None

    def _mac(self, payload: bytes) -> bytes:
        # Imported here: hashlib loads OpenSSL, about 4 MiB of memory an agent that never lists
        # sessions need not carry.
        import hashlib
        import hmac

        return hmac.new(self._cursor_key, payload, hashlib.sha256).digest()[:12]

    def _encode_cursor(self, key: Tuple[str, int]) -> str:
        payload = json.dumps(list(key), separators=(",", ":")).encode()
        mac = self._mac(payload)
        return base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")

    def _decode_cursor(self, cursor: str) -> Tuple[str, int]:
        import hmac  # see _mac

        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            payload, mac = raw[:-12], raw[-12:]
            if not hmac.compare_digest(mac, self._mac(payload)):
                raise ValueError("bad signature")
            updated_at, touched = json.loads(payload)
            return (str(updated_at), int(touched))
        except Exception:  # noqa: BLE001 - any malformed or foreign cursor is simply invalid
            # spec-gap invalid-cursor: not signed by this registry (or damaged): invalid.
            raise InvalidCursor(f"invalid cursor {cursor!r}") from None

    # -- persistence -----------------------------------------------------------------------------

    def _settings_path(self, session_id: str) -> str:
        assert self._state_dir is not None
        return os.path.join(self._state_dir, f"{session_id}.json")

    def _history_path(self, session_id: str) -> str:
        assert self._state_dir is not None
        return os.path.join(self._state_dir, f"{session_id}.history.jsonl")

    def _is_live(self, session: Session) -> bool:
        with self._lock:
            return self._sessions.get(session.id) is session

    def save(self, session: Session) -> None:
        """Write the session's settings file atomically (no-op without a state_dir)."""
        if self._state_dir is None:
            return
        with session._lock:
            if not self._is_live(session):
                return  # deleted meanwhile: writing would bring it back
            data = json.dumps(session.settings_json(), ensure_ascii=False)
            import tempfile  # with a state_dir only

            fd, tmp = tempfile.mkstemp(dir=self._state_dir, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(data)
                os.replace(tmp, self._settings_path(session.id))
            except BaseException:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass
                raise

    def _append_history(self, session: Session, updates: Sequence[Any]) -> None:
        """Append history lines (caller holds the session lock)."""
        if self._state_dir is None or not self._is_live(session):
            return
        lines = "".join(
            json.dumps(
                {"at": session.updated_at, "update": codec.encode(u, s.SessionUpdate)},
                ensure_ascii=False,
            )
            + "\n"
            for u in updates
        )
        with open(self._history_path(session.id), "a", encoding="utf-8") as f:
            f.write(lines)

    def _load_all(self) -> None:
        assert self._state_dir is not None
        for name in sorted(os.listdir(self._state_dir)):
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                with open(os.path.join(self._state_dir, name), encoding="utf-8") as f:
                    session = Session.from_settings_json(json.load(f))
            except Exception as exc:  # noqa: BLE001 - a damaged file loses one session, not all
                log.warning("skipped session file %s: %s", name, exc)
                continue
            self._read_history(session)
            session.touched = next(self._clock)
            self._sessions[session.id] = session

    def _read_history(self, session: Session) -> None:
        try:
            f = open(self._history_path(session.id), encoding="utf-8")
        except FileNotFoundError:
            return
        with f:
            for number, line in enumerate(f, 1):
                try:
                    entry = json.loads(line)
                    if "terminal" in entry:
                        session.terminal_output[str(entry["terminal"])] = str(entry["output"])
                    else:
                        session.history.append(codec.decode(entry["update"], s.SessionUpdate))
                except Exception as exc:  # noqa: BLE001 - a torn line (crash mid-write) is skipped
                    log.warning("session %s: skipped history line %d: %s", session.id, number, exc)
                    continue
                if isinstance(entry.get("at"), str) and entry["at"] > session.updated_at:
                    session.updated_at = entry["at"]


def _same_dir(a: str, b: str) -> bool:
    # spec-gap cwd-match: cwds compare equal after dropping trailing separators.
    return (a.rstrip("/\\") or a) == (b.rstrip("/\\") or b)
