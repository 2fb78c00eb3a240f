"""The session registry: what an agent remembers about its sessions, in memory, thread-safe.

Spec: session-setup.mdx (sessions, load, resume, close, additional roots), session-list.mdx
(listing, cursors, session info), session-delete.mdx; clauses SETUP-02, SETUP-05, SETUP-06,
SETUP-19 .. SETUP-23, SETUP-27, LIST-02 .. LIST-13, DELETE-02 .. DELETE-04.

A ``Session`` holds the session's ``cwd`` and additional roots, its MCP servers, modes and config
options, title and ``updatedAt``, and its *history*: the session updates that ``session/load``
replays (user and agent message chunks, thoughts, tool calls and their updates, plans). The agent
side appends to the history as a turn streams (``PromptTurn.update``) and replays it on load.

The running turn of a session (and its cancellation flag) is tracked by the agent-side
connection, which serves one client; the registry may outlive connections and, with a
``state_dir``, agent restarts: each session is one JSON file, written after each change of its
history or settings, so that ``session/load`` works across a restart as the spec intends.

What must not live here: wire I/O and the protocol rules.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import logging
import os
import secrets
import tempfile
import threading
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import attrs

from .. import codec
from .. import schema as s
from ..schema import UNSET

__all__ = ["Session", "SessionRegistry", "DEFAULT_PAGE_SIZE"]

log = logging.getLogger("acpref.sessions")

#: spec LIST-13: the page size session/list enforces.
DEFAULT_PAGE_SIZE = 50

#: Updates that ``session/load`` replays (spec SETUP-05).
_REPLAYED = (
    s.UserMessageChunk,
    s.AgentMessageChunk,
    s.AgentThoughtChunk,
    s.ToolCall,
    s.ToolCallUpdate,
    s.Plan,
)


def _now() -> str:
    # spec LIST-06: updatedAt is ISO 8601.
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@attrs.define(eq=False)
class Session:
    """One session. Mutate it through the registry's methods, which lock and persist."""

    id: str
    cwd: str
    additional_directories: List[str] = attrs.Factory(list)
    mcp_servers: List[Any] = attrs.Factory(list)
    modes: Optional[s.SessionModeState] = None
    config_options: Optional[List[s.SessionConfigOption]] = None
    title: Optional[str] = None
    updated_at: str = attrs.Factory(_now)
    history: List[Any] = attrs.Factory(list)
    #: Agent-specific state an implementation keeps beside the session (JSON-able to persist).
    extra: Dict[str, Any] = attrs.Factory(dict)
    #: Live resources (MCP connections, ...) that are never persisted.
    live: Dict[str, Any] = attrs.field(factory=dict, repr=False)
    _lock: threading.RLock = attrs.field(factory=threading.RLock, repr=False)

    @property
    def roots(self) -> List[str]:
        """The effective root set: cwd first, then the additional directories (SETUP-19, SETUP-27)."""
        return [self.cwd, *self.additional_directories]

    def info(self, *, with_directories: bool) -> s.SessionInfo:
        """This session as ``session/list`` shows it (LIST-05; LIST-07 roots only when advertised)."""
        return s.SessionInfo(
            session_id=self.id,
            cwd=self.cwd,
            title=self.title if self.title is not None else UNSET,
            updated_at=self.updated_at,
            additional_directories=list(self.additional_directories) if with_directories else UNSET,
        )

    # -- persistence ----------------------------------------------------------------------------

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "cwd": self.cwd,
            "additionalDirectories": self.additional_directories,
            "mcpServers": [codec.encode(m, s.McpServer) for m in self.mcp_servers],
            "modes": codec.encode(self.modes) if self.modes is not None else None,
            "configOptions": codec.encode(self.config_options) if self.config_options is not None else None,
            "title": self.title,
            "updatedAt": self.updated_at,
            "history": [codec.encode(u, s.SessionUpdate) for u in self.history],
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Session":
        return cls(
            id=data["id"],
            cwd=data["cwd"],
            additional_directories=list(data.get("additionalDirectories") or []),
            mcp_servers=[codec.decode(m, s.McpServer) for m in data.get("mcpServers") or []],
            modes=codec.decode(data["modes"], s.SessionModeState) if data.get("modes") else None,
            config_options=(
                codec.decode(data["configOptions"], List[s.SessionConfigOption])
                if data.get("configOptions") is not None
                else None
            ),
            title=data.get("title"),
            updated_at=data.get("updatedAt") or _now(),
            history=[codec.decode(u, s.SessionUpdate) for u in data.get("history") or []],
            extra=dict(data.get("extra") or {}),
        )


class SessionRegistry:
    """All sessions an agent knows, by id. Thread-safe; optionally persisted to ``state_dir``."""

    def __init__(self, state_dir: Optional[str] = None, *, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        self._sessions: Dict[str, Session] = {}
        self._deleted: set = set()
        self._lock = threading.RLock()
        self._state_dir = state_dir
        self._page_size = page_size
        #: A per-registry secret keeps list cursors opaque and unforgeable (LIST-11, LIST-12).
        self._cursor_key = secrets.token_hex(8)
        if state_dir is not None:
            os.makedirs(state_dir, exist_ok=True)
            self._load_all()

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
        """A new session with a fresh, unique id (spec SETUP-02)."""
        with self._lock:
            while True:
                session_id = "sess_" + secrets.token_hex(8)
                if session_id not in self._sessions and session_id not in self._deleted:
                    break
            session = Session(
                id=session_id,
                cwd=cwd,
                additional_directories=list(additional_directories),
                mcp_servers=list(mcp_servers),
                modes=modes,
                config_options=config_options,
            )
            self._sessions[session_id] = session
        self.save(session)
        return session

    def get(self, session_id: str) -> Optional[Session]:
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
        """Apply the roots and servers a load/resume names: exactly those (SETUP-22, SETUP-23)."""
        with session._lock:
            session.additional_directories = list(additional_directories)
            session.mcp_servers = list(mcp_servers)
        self.save(session)

    # -- history ---------------------------------------------------------------------------------

    def record(self, session: Session, update: Any) -> None:
        """Append an update to the history if ``session/load`` replays it; track title changes."""
        with session._lock:
            if isinstance(update, _REPLAYED):
                session.history.append(update)
            elif isinstance(update, s.SessionInfoUpdate):
                # spec LIST-15: absent leaves a field unchanged, null clears it.
                if update.title is not UNSET:
                    session.title = update.title
            elif isinstance(update, s.CurrentModeUpdate) and session.modes is not None:
                session.modes = attrs.evolve(session.modes, current_mode_id=update.current_mode_id)
            elif isinstance(update, s.ConfigOptionUpdate):
                session.config_options = list(update.config_options)
            session.updated_at = _now()
        self.save(session)

    def record_prompt(self, session: Session, prompt: Sequence[Any], message_id: str) -> None:
        """Record a user prompt as user message chunks sharing one message id (SETUP-05, SETUP-06)."""
        with session._lock:
            for block in prompt:
                session.history.append(s.UserMessageChunk(content=block, message_id=message_id))
            session.updated_at = _now()
        self.save(session)

    def set_modes(self, session: Session, modes: Optional[s.SessionModeState]) -> None:
        with session._lock:
            session.modes = modes
        self.save(session)

    def set_config_options(self, session: Session, options: Optional[List[s.SessionConfigOption]]) -> None:
        with session._lock:
            session.config_options = options
        self.save(session)

    def set_title(self, session: Session, title: Optional[str]) -> None:
        with session._lock:
            session.title = title
            session.updated_at = _now()
        self.save(session)

    # -- list and delete -------------------------------------------------------------------------

    def list(
        self, *, cwd: Optional[str] = None, cursor: Optional[str] = None, with_directories: bool = False
    ) -> Tuple[List[s.SessionInfo], Optional[str]]:
        """One page of sessions, newest first, and the cursor of the next page (or None).

        spec LIST-04: only sessions whose cwd matches the filter; LIST-09: none is an empty page;
        LIST-12: an invalid cursor raises ``ValueError`` (the caller answers -32602); LIST-13: the
        page size is bounded here; LIST-17: listing changes nothing.
        """
        start = self._decode_cursor(cursor) if cursor is not None else 0
        with self._lock:
            chosen = [x for x in self._sessions.values() if cwd is None or _same_dir(x.cwd, cwd)]
        chosen.sort(key=lambda x: (x.updated_at, x.id), reverse=True)
        page = chosen[start : start + self._page_size]
        end = start + len(page)
        next_cursor = self._encode_cursor(end) if end < len(chosen) else None
        return [x.info(with_directories=with_directories) for x in page], next_cursor

    def delete(self, session_id: str) -> bool:
        """Forget a session (hard delete); True if it existed. Deleting twice is fine (DELETE-04)."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
            self._deleted.add(session_id)
        if session is not None and self._state_dir is not None:
            try:
                os.unlink(self._path(session_id))
            except FileNotFoundError:
                pass
        return session is not None

    def _encode_cursor(self, offset: int) -> str:
        raw = json.dumps({"o": offset, "k": self._cursor_key}).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def _decode_cursor(self, cursor: str) -> int:
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            data = json.loads(base64.urlsafe_b64decode(padded.encode()))
            if data.get("k") != self._cursor_key or type(data.get("o")) is not int or data["o"] < 0:
                raise ValueError
            return int(data["o"])
        except Exception:  # noqa: BLE001 - any malformed cursor is simply invalid
            raise ValueError(f"invalid cursor {cursor!r}") from None

    # -- persistence -----------------------------------------------------------------------------

    def _path(self, session_id: str) -> str:
        assert self._state_dir is not None
        return os.path.join(self._state_dir, f"{session_id}.json")

    def save(self, session: Session) -> None:
        """Write the session's file atomically (no-op without a state_dir)."""
        if self._state_dir is None:
            return
        with session._lock:
            data = json.dumps(session.to_json(), ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(dir=self._state_dir, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(tmp, self._path(session.id))
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def _load_all(self) -> None:
        assert self._state_dir is not None
        for name in sorted(os.listdir(self._state_dir)):
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                with open(os.path.join(self._state_dir, name), encoding="utf-8") as f:
                    session = Session.from_json(json.load(f))
            except Exception as exc:  # noqa: BLE001 - a damaged file loses one session, not all
                log.warning("skipped session file %s: %s", name, exc)
                continue
            self._sessions[session.id] = session


def _same_dir(a: str, b: str) -> bool:
    # spec-gap cwd-match: cwds compare equal after dropping trailing separators.
    return (a.rstrip("/\\") or a) == (b.rstrip("/\\") or b)
