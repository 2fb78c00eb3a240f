"""The reference client's file system methods, driven by a scripted agent over real pipes.

Spec: file-system.mdx, session-setup.mdx (roots); clauses FS-04 .. FS-08, OVERVIEW-06,
OVERVIEW-07, SETUP-19, RPC-17. Confinement decisions: spec_notes/client.md,
spec_notes/threat-model.md.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from peers.client_harness import Pair, call, run_steps

from acpref.client import ReferenceClient, Roots
from acpref.errors import RpcError

INVALID, NOT_FOUND = -32602, -32002


@pytest.fixture
def dirs(tmp_path: Path):
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (root / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    return root, outside


@pytest.fixture
def session(dirs):
    root, _ = dirs
    made = []

    def make(client=None, **kwargs):
        pair = Pair(client or ReferenceClient())
        made.append(pair)
        sid = pair.new_session(str(root), **kwargs)
        return pair, sid

    yield make
    for pair in made:
        pair.close()


def steps(pair, sid, *items):
    return run_steps(pair.conn, pair.client, sid, items)


def test_FS_04_read_from_line_with_limit(session, dirs):
    root, _ = dirs
    pair, sid = session()
    path = str(root / "notes.txt")
    whole, part, tail, past = steps(
        pair,
        sid,
        call("fs/read_text_file", path=path),
        call("fs/read_text_file", path=path, line=2, limit=2),
        call("fs/read_text_file", path=path, line=4),
        call("fs/read_text_file", path=path, line=9, limit=1),
    )
    assert whole == {"result": {"content": "one\ntwo\nthree\nfour\n"}}
    assert part == {"result": {"content": "two\nthree\n"}}
    assert tail == {"result": {"content": "four\n"}}
    assert past == {"result": {"content": ""}}


def test_OVERVIEW_07_line_zero_refused(session, dirs):
    root, _ = dirs
    pair, sid = session()
    (result,) = steps(pair, sid, call("fs/read_text_file", path=str(root / "notes.txt"), line=0))
    assert result["error"]["code"] == INVALID


def test_FS_05_unsaved_buffer_wins(session, dirs):
    root, _ = dirs
    path = str(root / "notes.txt")
    client = ReferenceClient(
        buffers=lambda p: "unsaved\nbuffer\n" if p == os.path.realpath(path) else None
    )
    pair, sid = session(client)
    (result,) = steps(pair, sid, call("fs/read_text_file", path=path, line=2))
    assert result == {"result": {"content": "buffer\n"}}


def test_FS_07_write_creates_file(session, dirs):
    root, _ = dirs
    pair, sid = session()
    target = root / "new" / "deeper" / "file.txt"
    (result,) = steps(pair, sid, call("fs/write_text_file", path=str(target), content="héllo\n"))
    assert result == {"result": {}}
    assert target.read_text(encoding="utf-8") == "héllo\n"


def test_FS_07_write_replaces_content(session, dirs):
    root, _ = dirs
    pair, sid = session()
    (result,) = steps(
        pair, sid, call("fs/write_text_file", path=str(root / "notes.txt"), content="x")
    )
    assert result == {"result": {}}
    assert (root / "notes.txt").read_text() == "x"


def test_FS_08_write_answers_an_empty_object(dirs):
    root, _ = dirs
    lines = []
    pair = Pair(recorder=lambda direction, line: lines.append((direction, line)))
    try:
        sid = pair.new_session(str(root))
        steps(pair, sid, call("fs/write_text_file", path=str(root / "w.txt"), content="w"))
    finally:
        pair.close()
    answers = [json.loads(line) for d, line in lines if d == "out" and b'"result"' in line]
    assert {"jsonrpc": "2.0", "id": answers[0]["id"], "result": {}} in answers


def test_RPC_17_missing_file_is_resource_not_found_with_uri(session, dirs):
    root, _ = dirs
    pair, sid = session()
    path = str(root / "missing.txt")
    (result,) = steps(pair, sid, call("fs/read_text_file", path=path))
    assert result["error"]["code"] == NOT_FOUND
    assert result["error"]["data"]["uri"] == Path(path).as_uri()


def test_OVERVIEW_06_relative_path_refused(session):
    pair, sid = session()
    read, write = steps(
        pair,
        sid,
        call("fs/read_text_file", path="notes.txt"),
        call("fs/write_text_file", path="relative.txt", content="x"),
    )
    # Refused because the path is relative, not for some other reason (lying outside the roots
    # once resolved against the process's working directory, say).
    for answer in (read, write):
        assert answer["error"]["code"] == INVALID
        assert "not absolute" in answer["error"]["message"], answer["error"]


def test_dotdot_escape_refused(session, dirs):
    root, outside = dirs
    pair, sid = session()
    escape = str(root) + "/../outside/secret.txt"
    read, write = steps(
        pair,
        sid,
        call("fs/read_text_file", path=escape),
        call("fs/write_text_file", path=str(root) + "/../outside/new.txt", content="x"),
    )
    assert (
        read["error"]["code"] == INVALID
        and "outside the session's roots" in read["error"]["message"]
    )
    assert "SECRET" not in json.dumps(read)
    assert write["error"]["code"] == INVALID
    assert not (outside / "new.txt").exists()


def test_symlink_to_outside_refused(session, dirs):
    root, outside = dirs
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    pair, sid = session()
    read_file, read_dir, write_file, write_new = steps(
        pair,
        sid,
        call("fs/read_text_file", path=str(root / "link.txt")),
        call("fs/read_text_file", path=str(root / "linkdir" / "secret.txt")),
        call("fs/write_text_file", path=str(root / "link.txt"), content="pwned"),
        call("fs/write_text_file", path=str(root / "linkdir" / "made" / "x.txt"), content="pwned"),
    )
    for result in (read_file, read_dir, write_file, write_new):
        assert result["error"]["code"] == INVALID, result
    assert (outside / "secret.txt").read_text() == "SECRET\n"
    assert not (outside / "made").exists()  # no directory was created outside


def test_symlink_inside_roots_allowed(session, dirs):
    root, _ = dirs
    (root / "alias.txt").symlink_to(root / "notes.txt")
    pair, sid = session()
    (result,) = steps(pair, sid, call("fs/read_text_file", path=str(root / "alias.txt"), limit=1))
    assert result == {"result": {"content": "one\n"}}


def test_SETUP_19_only_the_roots_sent_are_readable(session, dirs, tmp_path):
    root, outside = dirs
    pair, sid = session()
    (refused,) = steps(pair, sid, call("fs/read_text_file", path=str(outside / "secret.txt")))
    assert refused["error"]["code"] == INVALID
    pair2, sid2 = session(additional_directories=[str(outside)])
    (allowed,) = steps(pair2, sid2, call("fs/read_text_file", path=str(outside / "secret.txt")))
    assert allowed == {"result": {"content": "SECRET\n"}}


def test_session_not_ours_refused(session, dirs):
    root, _ = dirs
    pair, sid = session()
    (result,) = steps(
        pair,
        sid,
        {
            "call": "fs/read_text_file",
            "params": {"sessionId": "sess-999", "path": str(root / "notes.txt")},
        },
    )
    assert result["error"]["code"] == NOT_FOUND


def test_fs_not_advertised_is_method_not_found(dirs):
    # A client that serves no files advertises fs false (INIT-12); the rules answer -32601.
    from acpref.client import Client

    root, _ = dirs
    chunks = []

    class Bare(Client):
        def session_update(self, params):
            chunks.append(params.update)

    pair = Pair(Bare())
    try:
        assert pair.agent.client_caps["fs"] == {"readTextFile": False, "writeTextFile": False}
        assert pair.agent.client_caps["terminal"] is False
        sid = pair.new_session(str(root))
        script = {"steps": [call("fs/read_text_file", path=str(root / "notes.txt"))]}
        pair.conn.prompt(sid, json.dumps(script), timeout=10)
    finally:
        pair.close()
    (result,) = json.loads(chunks[-1].content.text)
    assert result["error"]["code"] == -32601


def test_not_utf8_and_directories_refused(session, dirs):
    root, _ = dirs
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    pair, sid = session()
    binary, directory = steps(
        pair,
        sid,
        call("fs/read_text_file", path=str(root / "bin.dat")),
        call("fs/read_text_file", path=str(root)),
    )
    assert binary["error"]["code"] == INVALID
    assert directory["error"]["code"] == INVALID


def test_large_file_needs_line_and_limit(session, dirs):
    root, _ = dirs
    (root / "big.txt").write_text("line\n" * 1000)
    pair, sid = session(ReferenceClient(max_read_bytes=100))
    whole, part = steps(
        pair,
        sid,
        call("fs/read_text_file", path=str(root / "big.txt")),
        call("fs/read_text_file", path=str(root / "big.txt"), line=10, limit=3),
    )
    assert whole["error"]["code"] == INVALID
    assert part == {"result": {"content": "line\n" * 3}}


def test_symlink_swapped_between_check_and_open_never_escapes(dirs):
    """Best effort: a directory flips between a real one and a symlink to outside while we read.

    Whatever the interleaving, a read either returns the inside file or is refused; the file
    outside is never returned.
    """
    root, outside = dirs
    (outside / "f.txt").write_text("SECRET")
    real_dir = root / "real"
    real_dir.mkdir()
    (real_dir / "f.txt").write_text("inside")
    flip = root / "flip"
    link_tmp, dir_tmp = root / ".link", root / ".dir"
    os.symlink(outside, link_tmp)
    os.symlink(real_dir, dir_tmp)  # the "inside" state is itself a symlink within the roots
    os.rename(dir_tmp, flip)
    stop = threading.Event()

    def flipper() -> None:
        inside = True
        while not stop.is_set():
            tmp = root / ".swap"
            os.symlink(outside if inside else real_dir, tmp)
            os.rename(tmp, flip)  # atomic replace
            inside = not inside

    roots = Roots([str(root)])
    thread = threading.Thread(target=flipper, daemon=True)
    thread.start()
    seen = set()
    try:
        for _ in range(300):
            try:
                fd = roots.open_file(str(flip / "f.txt"))
            except RpcError as exc:
                seen.add(exc.code)
                continue
            with os.fdopen(fd, "rb") as f:
                seen.add(f.read().decode())
    finally:
        stop.set()
        thread.join(5)
    assert "SECRET" not in seen
    assert seen <= {"inside", INVALID, NOT_FOUND}
