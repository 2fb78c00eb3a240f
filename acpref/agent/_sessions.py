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
them as the spec intends: its files are ``_session_files.SessionFiles``. The cursors of ``list``
are ``_session_cursors.ListCursors``.

A closed session stays listable and loadable, but keeps little: ``close`` replaces a session
that holds nothing but its settings (no history, no terminal output, no extra or live state) by
one ``int``, its *compact record*: its ``updated_at`` in milliseconds, its ``touched`` counter,
and the index of its settings, which sessions set up alike share (``_closed.ClosedRecords``).
``get`` gives it back whole, as it was, and the record is a full ``Session`` again. A hostile
client that opens and closes sessions forever costs the registry about 140 bytes a session.

What must not live here: wire I/O and the protocol rules.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
from typing import (
    Any,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

import attrs

from .. import schema as s
from ..schema import UNSET

from ._closed import ClosedRecords
from ._session import _REPLAYED, _SESSION_LOCKS, Session, _now
from ._session_cursors import InvalidCursor, ListCursors
from ._session_files import SessionFiles

__all__ = ["Session", "SessionRegistry", "DEFAULT_PAGE_SIZE", "InvalidCursor"]

#: spec LIST-13: the page size session/list enforces.
DEFAULT_PAGE_SIZE = 50

class SessionRegistry:
    """All sessions an agent knows, by id. Thread-safe; optionally persisted to ``state_dir``.

    Locks: ``_lock`` guards the id tables and the compact records; each session's lock (see
    ``_SESSION_LOCKS``) guards its fields and its files. A session's lock may be held while
    ``_lock`` is taken, never the other way round; neither is held across wire I/O.
    """

    def __init__(
        self, state_dir: Optional[str] = None, *, page_size: int = DEFAULT_PAGE_SIZE
    ) -> None:
        #: Every session by id: a ``Session``, or the compact record of a closed one (``close``).
        self._sessions: Dict[str, Union[Session, int]] = {}
        self._closed = ClosedRecords()  # what the compact records share
        self._deleted: Set[str] = set()
        self._lock = threading.Lock()
        self._page_size = max(1, page_size)
        self._clock = itertools.count(1)  # next() is atomic: no lock needed
        self._cursors = ListCursors()
        #: The sessions' files, with a ``state_dir``; None keeps them in memory only.
        self._files: Optional[SessionFiles] = None
        if state_dir is not None:
            self._files = SessionFiles(state_dir)
            for session in self._files.load_all():
                session.touched = next(self._clock)
                self._sessions[session.id] = session

    @property
    def state_dir(self) -> Optional[str]:
        """The directory sessions persist in, or None for memory only."""
        return None if self._files is None else self._files.state_dir

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
        """The session ``session_id``, or None. A closed one is whole again (see ``close``)."""
        with self._lock:
            kept = self._sessions.get(session_id)
            if isinstance(kept, int):
                kept = self._closed.session(session_id, kept, release=True)
                self._sessions[session_id] = kept
            return kept

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._sessions

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        """Every session. A closed one kept compact is given as a copy rebuilt for the occasion,
        one at a time: changes to it are not kept (``get`` it to change it)."""
        with self._lock:
            ids = list(self._sessions)
        for session_id in ids:
            with self._lock:
                kept = self._sessions.get(session_id)
                if isinstance(kept, int):
                    kept = self._closed.session(session_id, kept, release=False)
            if kept is not None:
                yield kept

    # -- closing ---------------------------------------------------------------------------------

    def close(self, session: Session) -> None:
        """The session was closed: keep it as a compact record if it holds only its settings.

        spec SETUP-16: a closed session's resources are freed. It stays listable and loadable,
        so what ``list``, ``load`` and ``resume`` show of it is kept exactly (``get`` rebuilds
        it as it was); a session with a history, terminal output, extra or live state, or a
        running turn, stays whole. A ``Session`` taken from the registry before it closed is
        no longer the registry's (``_is_live``): ``get`` the session again after a close.
        """
        with session._lock:
            if (
                session.turn is not None
                or session._history
                or session._terminal_output
                or session._extra
                or session._live
            ):
                return
            with self._lock:
                if self._sessions.get(session.id) is not session:
                    return
                record = self._closed.record(session)
                if record is not None:  # else a field too large to pack: it stays whole
                    self._sessions[session.id] = record

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
        """Mark ``turn`` as the turn whose handler runs on ``session`` (see ``Session.turn``: the
        handler's span in this process, not the protocol's turn, which the core owns)."""
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
            if self._files is not None and self._is_live(session):
                self._files.append_terminal_output(session, terminal_id, output)

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
        after = self._cursors.decode(cursor) if cursor is not None else None
        # spec LIST-17: listing only reads: no session is loaded, touched or changed (a closed
        # session stays compact: only the page's are rebuilt, as copies).
        keyed: List[Tuple[Tuple[str, int], str]] = []
        with self._lock:
            for session_id, kept in self._sessions.items():
                key, its_cwd = self._listing_key(kept)
                if cwd is None or _same_dir(its_cwd, cwd):
                    keyed.append((key, session_id))
        # spec-gap list-order: most recently updated first, keyset cursors.
        keyed.sort(key=lambda kx: kx[0], reverse=True)
        if after is not None:
            keyed = [(k, x) for k, x in keyed if k < after]
        page = keyed[: self._page_size]
        next_cursor = self._cursors.encode(page[-1][0]) if len(keyed) > len(page) else None
        infos = []
        with self._lock:
            for _, session_id in page:
                found = self._sessions.get(session_id)
                if isinstance(found, int):
                    found = self._closed.session(session_id, found, release=False)
                if found is not None:  # else deleted meanwhile
                    infos.append(found.info(with_directories=with_directories))
        return infos, next_cursor

    def _listing_key(self, kept: Union[Session, int]) -> Tuple[Tuple[str, int], str]:
        """``((updated_at, touched), cwd)`` of a session or compact record (holding ``_lock``)."""
        if isinstance(kept, Session):
            return (kept.updated_at, kept.touched), kept.cwd
        return self._closed.listing_key(kept)

    def delete(self, session_id: str) -> bool:
        """Forget a session for good (hard delete); True if it existed (DELETE-04)."""
        with self._lock:
            kept = self._sessions.pop(session_id, None)
            if isinstance(kept, int):
                kept = self._closed.session(session_id, kept, release=True)
            session = kept
            self._deleted.add(session_id)
        if session is not None and self._files is not None:
            with session._lock:
                self._files.delete(session_id)
        return session is not None

    # -- persistence -----------------------------------------------------------------------------

    def _is_live(self, session: Session) -> bool:
        with self._lock:
            return self._sessions.get(session.id) is session

    def save(self, session: Session) -> None:
        """Write the session's settings file atomically (no-op without a state_dir)."""
        if self._files is None:
            return
        with session._lock:
            if self._is_live(session):  # else deleted meanwhile: writing would bring it back
                self._files.save(session)

    def _append_history(self, session: Session, updates: Sequence[Any]) -> None:
        """Append history lines (caller holds the session lock)."""
        if self._files is not None and self._is_live(session):
            self._files.append_history(session, updates)


def _same_dir(a: str, b: str) -> bool:
    # spec-gap cwd-match: cwds compare equal after dropping trailing separators.
    return (a.rstrip("/\\") or a) == (b.rstrip("/\\") or b)
