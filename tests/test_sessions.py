"""Tests of the session registry (``acpref.agent.SessionRegistry``), on its own.

Spec: session-setup.mdx, session-list.mdx, session-delete.mdx; clauses SETUP-02, SETUP-05,
SETUP-21, SETUP-23, LIST-04, LIST-06, LIST-09, LIST-12, LIST-13, LIST-17, DELETE-03, DELETE-04.
The registry over the wire is tested in test_agent_spec_sessions.py and test_echo.py.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import List

import pytest

from acpref import schema as s
from acpref._core.values import is_iso8601
from acpref.agent import InvalidCursor, SessionRegistry


def _chunk(text: str, message_id: str = "m1") -> s.AgentMessageChunk:
    return s.AgentMessageChunk(content=s.TextContent(text=text), message_id=message_id)


def _all_pages(registry: SessionRegistry, **kwargs: object) -> List[str]:
    ids: List[str] = []
    cursor = None
    while True:
        page, cursor = registry.list(cursor=cursor, **kwargs)  # type: ignore[arg-type]
        ids += [info.session_id for info in page]
        if cursor is None:
            return ids


def test_ids_are_unique_and_never_reused_after_delete() -> None:
    registry = SessionRegistry()
    ids = {registry.create("/p").id for _ in range(500)}
    assert len(ids) == 500  # spec SETUP-02
    gone = next(iter(ids))
    registry.delete(gone)
    assert all(registry.create("/p").id != gone for _ in range(200))


def test_history_keeps_replayed_updates_in_order_and_applies_settings() -> None:
    registry = SessionRegistry()
    session = registry.create("/p")
    registry.set_modes(
        session,
        s.SessionModeState(
            current_mode_id="a",
            available_modes=[s.SessionMode(id="a", name="A"), s.SessionMode(id="b", name="B")],
        ),
    )
    registry.record_prompt(session, [s.TextContent(text="hi")], "u1")
    updates = [
        _chunk("one"),
        s.AgentThoughtChunk(content=s.TextContent(text="hmm"), message_id="t1"),
        s.ToolCall(tool_call_id="c1", title="t"),
        s.ToolCallUpdate(tool_call_id="c1", status=s.ToolCallStatus.COMPLETED),
        s.Plan(entries=[]),
        s.UsageUpdate(used=1, size=2),  # not history
        s.SessionInfoUpdate(title="Named"),
        s.CurrentModeUpdate(current_mode_id="b"),
    ]
    for update in updates:
        registry.record(session, update)
    kinds = [type(u).__name__ for u in session.history]
    assert kinds == [
        "UserMessageChunk",
        "AgentMessageChunk",
        "AgentThoughtChunk",
        "ToolCall",
        "ToolCallUpdate",
        "Plan",
    ]
    assert session.title == "Named"
    assert session.modes is not None and session.modes.current_mode_id == "b"
    registry.record(session, s.SessionInfoUpdate())  # spec LIST-15: absent leaves the title
    assert session.title == "Named"
    registry.record(session, s.SessionInfoUpdate(title=None))  # null clears it
    assert session.title is None


def test_list_pages_filters_and_orders_by_update_time() -> None:
    registry = SessionRegistry(page_size=7)
    made = [registry.create("/a" if i % 2 else "/b/").id for i in range(30)]
    for sid in made[:3]:
        registry.record(registry.get(sid), _chunk("x"))  # type: ignore[arg-type]
    everything = _all_pages(registry)
    assert sorted(everything) == sorted(made)  # every session exactly once
    assert set(everything[:3]) == set(made[:3])  # most recently updated first
    first, cursor = registry.list()
    assert len(first) == 7 and cursor is not None  # spec LIST-13
    assert set(_all_pages(registry, cwd="/b")) == {
        sid for i, sid in enumerate(made) if i % 2 == 0
    }  # LIST-04
    assert registry.list(cwd="/nowhere") == ([], None)  # spec LIST-09
    assert all(is_iso8601(info.updated_at) for info in first)  # spec LIST-06


def test_cursors_survive_changes_between_pages() -> None:
    registry = SessionRegistry(page_size=5)
    made = [registry.create("/a").id for _ in range(12)]
    page, cursor = registry.list()
    seen = [i.session_id for i in page]
    registry.delete(seen[0])
    registry.create("/a")  # newer than everything: sorts before the cursor, not after it
    while cursor is not None:
        page, cursor = registry.list(cursor=cursor)
        seen += [i.session_id for i in page]
    assert sorted(seen) == sorted(made)


@pytest.mark.parametrize("cursor", ["garbage", "", "eyJ4IjoxfQ", "=" * 8])
def test_invalid_cursors_are_refused(cursor: str) -> None:
    registry = SessionRegistry()
    registry.create("/a")
    with pytest.raises(InvalidCursor):
        registry.list(cursor=cursor)  # spec LIST-12


def test_a_cursor_from_another_registry_is_refused() -> None:
    one, two = SessionRegistry(page_size=1), SessionRegistry(page_size=1)
    for r in (one, two):
        r.create("/a")
        r.create("/a")
    _, cursor = one.list()
    assert cursor is not None
    with pytest.raises(InvalidCursor):
        two.list(cursor=cursor)


def test_listing_changes_nothing() -> None:
    registry = SessionRegistry()
    session = registry.create("/a")
    before = (session.updated_at, list(session.history))
    registry.list()
    assert (session.updated_at, list(session.history)) == before  # spec LIST-17


def test_delete_is_final_and_idempotent() -> None:
    registry = SessionRegistry()
    sid = registry.create("/a").id
    assert registry.delete(sid) is True
    assert registry.delete(sid) is False  # spec DELETE-04
    assert registry.delete("sess_never") is False
    assert sid not in _all_pages(registry)  # spec DELETE-03
    assert registry.get(sid) is None


def test_reopen_sets_exactly_the_roots_given() -> None:
    registry = SessionRegistry()
    session = registry.create("/p", additional_directories=["/lib"])
    assert session.roots == ["/p", "/lib"]
    registry.reopen(session, additional_directories=[], mcp_servers=[])
    assert session.roots == ["/p"]  # spec SETUP-21, SETUP-23


def test_state_dir_round_trip(tmp_path: Path) -> None:
    one = SessionRegistry(str(tmp_path))
    session = one.create("/p", additional_directories=["/lib"])
    one.record_prompt(session, [s.TextContent(text="hi")], "u1")
    for i in range(5):
        one.record(session, _chunk(f"part {i}", "a1"))
    one.record(session, s.SessionInfoUpdate(title="T"))
    gone = one.create("/q")
    one.delete(gone.id)
    two = SessionRegistry(str(tmp_path))
    again = two.get(session.id)
    assert again is not None and gone.id not in two
    assert again.history == session.history
    assert (again.title, again.cwd, again.additional_directories) == ("T", "/p", ("/lib",))
    assert again.updated_at == session.updated_at


def test_a_torn_history_line_loses_only_itself(tmp_path: Path) -> None:
    one = SessionRegistry(str(tmp_path))
    session = one.create("/p")
    one.record(session, _chunk("kept"))
    with open(tmp_path / f"{session.id}.history.jsonl", "a", encoding="utf-8") as f:
        f.write('{"at": "2026-01-01T00:00:00Z", "update": {"sessionUpd')  # a crash mid-write
    (tmp_path / "sess_broken.json").write_text("{not json", encoding="utf-8")
    two = SessionRegistry(str(tmp_path))
    again = two.get(session.id)
    assert again is not None and [u.content.text for u in again.history] == ["kept"]
    assert "sess_broken" not in two


def test_recording_into_a_deleted_session_writes_nothing(tmp_path: Path) -> None:
    registry = SessionRegistry(str(tmp_path))
    session = registry.create("/p")
    registry.delete(session.id)
    registry.record(session, _chunk("late"))
    registry.record(session, s.SessionInfoUpdate(title="late"))
    assert os.listdir(tmp_path) == []


def test_concurrent_use_from_many_threads(tmp_path: Path) -> None:
    registry = SessionRegistry(str(tmp_path), page_size=10)
    errors: List[BaseException] = []
    made: List[str] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        try:
            for i in range(20):
                session = registry.create(f"/p{n % 3}")
                with lock:
                    made.append(session.id)
                registry.record(session, _chunk(f"{n}-{i}"))
                registry.list(cwd="/p1")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == [] and len(set(made)) == 160 == len(registry)
    assert sorted(_all_pages(registry)) == sorted(made)
    files = [json.loads((tmp_path / f"{sid}.json").read_text()) for sid in made]
    assert all(f["id"] in made for f in files)


def test_LIST_06_updated_at_is_the_utc_time_to_the_millisecond() -> None:
    import datetime as dt
    import re
    import time

    registry = SessionRegistry()
    before = time.time()
    session = registry.create("/a")
    stamps = [session.updated_at]
    for _ in range(3):
        last = time.time_ns() // 1_000_000  # the last stamp's millisecond, or a later one
        while time.time_ns() // 1_000_000 <= last:
            pass  # until the clock shows a later millisecond: a new text
        registry.record(session, _chunk("x"))
        stamps.append(session.updated_at)
    after = time.time()
    for text in stamps:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", text), text
        moment = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
        seconds = moment.replace(tzinfo=dt.timezone.utc).timestamp()
        assert before - 0.001 <= seconds <= after, (text, before, after)
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
