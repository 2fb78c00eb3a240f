"""The check driver reads the disk as the client library does: bounded (issue 36).

Spec: file-system.mdx; decision fs-read-size (spec_notes/decisions.md): a whole-file read of a
file over the bound is refused -32602 with ``{path, size, limit}`` before any of it is read, and
a ``line``/``limit`` read is streamed. The driver (``acpref.testing.AgentDriver``, the client of
``acpref check-agent``) answers ``fs/read_text_file`` with ``acpref.client.files.read_text``, so
a test agent cannot make it load a huge file into memory and into one message. Driven over real
pipes: ``acpref echo``'s ``/read`` asks the driver for the file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from acpref.client.files import DEFAULT_MAX_READ_BYTES
from acpref.testing import AgentDriver

ECHO = [sys.executable, "-m", "acpref.echo"]


def _read_through_echo(tmp_path: Path, path: Path, max_read_bytes: int) -> str:
    driver = AgentDriver.spawn(ECHO, timeout=30)
    try:
        driver.max_read_bytes = max_read_bytes
        driver.initialize()
        session = driver.new_session(str(tmp_path))
        return driver.prompt(session, f"/read {path}").text
    finally:
        driver.close()


def test_the_driver_refuses_a_file_over_the_librarys_bound(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes((b"x" * 1023 + b"\n") * 1024)  # 1 MiB
    text = _read_through_echo(tmp_path, big, 64 * 1024)
    # The library's refusal, with its figures: the file was not read into the answer.
    assert "(-32602)" in text, text[:500]
    assert f"has {1024 * 1024} bytes, more than {64 * 1024}" in text, text[:500]


def test_the_driver_reads_a_file_within_the_bound(tmp_path: Path) -> None:
    small = tmp_path / "small.txt"
    small.write_text("one\ntwo\n", encoding="utf-8")
    text = _read_through_echo(tmp_path, small, DEFAULT_MAX_READ_BYTES)
    assert f"{small} holds 8 characters:\none\ntwo\n" in text, text
