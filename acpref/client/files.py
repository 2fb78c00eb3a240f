"""``fs/read_text_file`` and ``fs/write_text_file`` for the reference client, within the roots.

Spec: file-system.mdx; clauses FS-04, FS-05, FS-07, FS-08, OVERVIEW-07, RPC-17. The confinement
itself (absolute paths, roots, symlinks, check-then-open races) is ``roots.Roots``.

Decisions (spec_notes/client.md): files are UTF-8; a file that is not is refused with -32602
rather than altered; a read is bounded (``max_bytes``) so an agent cannot make the client load a
huge file into one message; ``line``/``limit`` count ``\\n``-terminated lines.

Nothing here knows sessions, JSON-RPC or threads.
"""

from __future__ import annotations

import json
import os
from typing import BinaryIO, Callable, List, Optional

from ..errors import ErrorCode, RpcError
from .roots import Roots

__all__ = ["BufferProvider", "read_text", "write_text", "select_lines", "DEFAULT_MAX_READ_BYTES"]

#: ``provider(real_path) -> text or None``: an editor's unsaved buffer for a file, if one is open
#: (spec FS-05). It gets the file's real path, after the roots check.
BufferProvider = Callable[[str], Optional[str]]

#: The largest file (in bytes) a read returns whole; larger ones need ``line``/``limit``.
DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024

_JSON = json.JSONEncoder(ensure_ascii=False)  # as the connection writes strings


def select_lines(text: str, line: Optional[int], limit: Optional[int]) -> str:
    """The lines from ``line`` (1-based, spec OVERVIEW-07), at most ``limit`` of them (FS-04).

    Lines keep their ``\\n``; a start past the end gives ``""``.
    """
    if line is None and limit is None:
        return text
    start = max((line or 1) - 1, 0)
    lines = _split_lf(text)
    end = None if limit is None else start + max(limit, 0)
    return "".join(lines[start:end])


def _split_lf(text: str) -> list:
    # str.splitlines also splits at \r, \v, \f and more; only \n ends a line here.
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _decode(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # spec-gap fs-encoding: text files are UTF-8; others are refused, never "repaired"
        # (an agent writing a repaired copy back would corrupt the file).
        raise RpcError(
            ErrorCode.INVALID_PARAMS, f"{path} is not UTF-8 text (byte {exc.start})", {"path": path}
        ) from None


def read_text(
    roots: Roots,
    path: str,
    line: Optional[int] = None,
    limit: Optional[int] = None,
    *,
    buffers: Optional[BufferProvider] = None,
    max_bytes: int = DEFAULT_MAX_READ_BYTES,
) -> str:
    """Read a text file below ``roots`` (or its unsaved buffer), from ``line``, ``limit`` lines.

    ``max_bytes`` bounds the answer's text as it travels, JSON-encoded: a control character
    costs six bytes there (``\\u0001``), so a file under the bound on disk may be over it.
    """
    # ``line`` is 1-based: the protocol core refused any other before a handler ran
    # (OVERVIEW-07, acpref/_core).
    fd = roots.open_file(path)
    try:
        if buffers is not None:
            # spec FS-05: an open editor buffer wins over the disk (after the roots check).
            text = buffers(os.path.realpath(path))
            if text is not None:
                return _within(path, select_lines(text, line, limit), max_bytes)
        size = os.fstat(fd).st_size
        whole = line is None and limit is None
        if whole and size > max_bytes:
            # spec-gap fs-read-size: a bounded read, so one answer stays a sane message.
            raise RpcError(
                ErrorCode.INVALID_PARAMS,
                f"{path} has {size} bytes, more than {max_bytes}; read it in parts with line and limit",
                {"path": path, "size": size, "limit": max_bytes},
            )
        with os.fdopen(os.dup(fd), "rb", buffering=0) as f:
            if whole:
                text = _decode(path, f.read(max_bytes + 1))
            else:
                text = _decode(path, _read_lines(path, f, line or 1, limit, max_bytes))
        return _within(path, text, max_bytes)
    finally:
        os.close(fd)


def _within(path: str, text: str, max_bytes: int) -> str:
    """``text``, if its JSON encoding fits ``max_bytes``; else -32602 (spec-gap fs-read-size)."""
    if len(text) * 6 > max_bytes:  # only then can the escapes take it over the bound
        encoded = len(_JSON.encode(text).encode("utf-8", "surrogatepass")) - 2
        if encoded > max_bytes:
            raise RpcError(
                ErrorCode.INVALID_PARAMS,
                f"the text asked of {path} is {encoded} bytes once JSON-encoded, more than "
                f"{max_bytes}; ask for fewer lines",
                {"path": path, "size": encoded, "limit": max_bytes},
            )
    return text


#: Reads of a file read with ``line``/``limit``: a line is never read whole before it is counted.
_CHUNK = 64 * 1024


def _read_lines(path: str, f: BinaryIO, line: int, limit: Optional[int], max_bytes: int) -> bytes:
    """The bytes of lines ``line`` .. ``line + limit - 1``, streamed: at most ``max_bytes`` (plus
    one read) are ever held, whatever the length of a line (a file without newlines included)."""
    out: List[bytes] = []
    kept = 0
    number = 1  # the line the next byte belongs to
    end = None if limit is None else line + max(limit, 0)  # the first line not wanted
    if end is not None and end <= line:
        return b""
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        start = 0
        if number < line:  # skip whole lines without keeping them
            while number < line:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    break
                number += 1
                start = nl + 1
            if number < line:
                continue
        stop = len(chunk)
        if end is not None:
            pos = start
            while number < end:
                nl = chunk.find(b"\n", pos)
                if nl < 0:
                    break
                number += 1
                pos = nl + 1
            if number >= end:
                stop = pos
        kept += stop - start
        if kept > max_bytes:
            raise RpcError(
                ErrorCode.INVALID_PARAMS,
                f"the lines asked of {path} exceed {max_bytes} bytes; ask for fewer",
                {"path": path, "limit": max_bytes},
            )
        out.append(chunk[start:stop])
        if stop < len(chunk) or (end is not None and number >= end):
            break
    return b"".join(out)


def write_text(roots: Roots, path: str, content: str) -> None:
    """Write ``content`` to a file below ``roots``, creating it (spec FS-07) and its directories."""
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a \ud800 escape in the JSON) is no UTF-8 text: refused, not mangled.
        raise RpcError(
            ErrorCode.INVALID_PARAMS, "content is not valid Unicode text", {"path": path}
        ) from None
    fd = roots.open_file(path, write=True)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise RpcError(
            ErrorCode.INTERNAL_ERROR, f"{path}: {exc.strerror or exc}", {"path": path}
        ) from None
    finally:
        os.close(fd)
