"""Where a session registry keeps its sessions on disk, so that they outlive the agent process.

Spec: session-setup.mdx (Loading a Session); clause SETUP-05: ``session/load`` replays the whole
conversation, across agent restarts as the spec intends. Used by ``_sessions.SessionRegistry``
when it is given a ``state_dir``; an agent without one never runs this.

Each session is two files in the directory: ``<id>.json`` (its settings, ``Session.settings_json``,
rewritten atomically when they change) and ``<id>.history.jsonl`` (one line appended per history
entry, so that a long turn costs one small write per update, not one rewrite of everything; a
released terminal's last output is a line too). A damaged settings file loses that session only;
a damaged history line (a crash mid-write) is skipped when reading back.

The registry decides when to write (holding the session's lock, and only for a session that is
still its own: one deleted meanwhile is not brought back); this only reads and writes the files.

What must not live here: wire I/O and the protocol rules.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, Iterator, Sequence

from .. import codec
from .. import schema as s
from ._session import Session

__all__ = ["SessionFiles"]

log = logging.getLogger("acpref.sessions")


class SessionFiles:
    """The files of the sessions kept in ``state_dir``, two a session (see the module's doc)."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        os.makedirs(state_dir, exist_ok=True)

    def _settings_path(self, session_id: str) -> str:
        return os.path.join(self.state_dir, f"{session_id}.json")

    def _history_path(self, session_id: str) -> str:
        return os.path.join(self.state_dir, f"{session_id}.history.jsonl")

    # -- writing (the caller holds the session's lock) -------------------------------------------

    def save(self, session: Session) -> None:
        """Write the session's settings file atomically."""
        data = json.dumps(session.settings_json(), ensure_ascii=False)
        import tempfile  # with a state_dir only

        fd, tmp = tempfile.mkstemp(dir=self.state_dir, prefix=".tmp-", suffix=".json")
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

    def append_history(self, session: Session, updates: Sequence[Any]) -> None:
        """Append one history line per update."""
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

    def append_terminal_output(self, session: Session, terminal_id: str, output: str) -> None:
        """Append a released terminal's last output, for the replay (see ``Session.replay``)."""
        line = json.dumps(
            {"at": session.updated_at, "terminal": terminal_id, "output": output},
            ensure_ascii=False,
        )
        with open(self._history_path(session.id), "a", encoding="utf-8") as f:
            f.write(line + "\n")

    def delete(self, session_id: str) -> None:
        """Remove both files of a session (those that exist)."""
        for path in (self._settings_path(session_id), self._history_path(session_id)):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    # -- reading back ----------------------------------------------------------------------------

    def load_all(self) -> Iterator[Session]:
        """Every session kept in the directory, with its history, in file name order."""
        for name in sorted(os.listdir(self.state_dir)):
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                with open(os.path.join(self.state_dir, name), encoding="utf-8") as f:
                    session = Session.from_settings_json(json.load(f))
            except Exception as exc:  # noqa: BLE001 - a damaged file loses one session, not all
                log.warning("skipped session file %s: %s", name, exc)
                continue
            self._read_history(session)
            yield session

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
