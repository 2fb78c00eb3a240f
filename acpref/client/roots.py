"""Session roots and confined file access: the client's guard between an agent and the disk.

Spec: file-system.mdx, session-setup.mdx (Working Directory, Additional Workspace Roots);
clauses OVERVIEW-06, SETUP-19, SETUP-20, RPC-17. Decisions: spec_notes/client.md (roots),
spec_notes/threat-model.md.

A session's roots are the ``cwd`` and ``additionalDirectories`` we sent when it was set up; an
agent may read and write files only below them. ``Roots.open`` opens a file (or a directory)
below a root and proves it is one:

1. the path must be absolute (OVERVIEW-06) and is resolved with ``realpath`` (``..`` and every
   symlink followed); the result must lie below a root's own real path, or nothing is opened;
2. the parent directory is opened with ``O_DIRECTORY | O_NOFOLLOW``, and its real location is
   read back from the descriptor (``/proc/self/fd`` on Linux, ``F_GETPATH`` on macOS) and checked
   again, so a directory swapped for a symlink between check and open is caught;
3. the last component is opened relative to that directory with ``O_NOFOLLOW`` (a symlink put in
   its place meanwhile fails to open) and must be a regular file.

Writes create missing parent directories only below a root, each one relative to the verified
descriptor of its parent. Every refusal is an ``RpcError``: -32602 for a path that is not
absolute or not below a root (whether it exists or not, so nothing outside can be probed),
-32002 with ``data.uri`` for a missing file below a root (RPC-17).

Nothing here knows JSON-RPC or threads.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from .._core.values import is_below
from ..errors import ErrorCode, RpcError

__all__ = ["Roots", "outside_error", "not_found_error", "MAX_PATH_BYTES"]

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

#: The longest path accepted, in UTF-8 bytes: Linux's PATH_MAX (macOS's is 1024; longer paths
#: fail there when opened, with ENAMETOOLONG).
MAX_PATH_BYTES = 4096


def _file_uri(path: str) -> str:
    return Path(path).as_uri() if os.path.isabs(path) else path


def not_found_error(path: str) -> RpcError:
    """-32002 Resource not found, with the file's URI (spec RPC-17)."""
    return RpcError.resource_not_found(f"file not found: {path}", uri=_file_uri(path))


def outside_error(path: str, roots: Sequence[str]) -> RpcError:
    """-32602: the path is not below the session's roots (the roots are named, the target not)."""
    return RpcError(
        ErrorCode.INVALID_PARAMS,
        f"path {path} is outside the session's roots ({', '.join(roots)})",
        {"path": path, "roots": list(roots)},
    )


def _fd_path(fd: int) -> Optional[str]:
    """Where an open descriptor really is, from the kernel; None where that cannot be asked."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    get_path = getattr(fcntl, "F_GETPATH", None)
    if get_path is not None:  # pragma: no cover - macOS
        try:
            raw = fcntl.fcntl(fd, get_path, b"\0" * 1024)
            return raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        except OSError:
            return None
    return None  # pragma: no cover


class Roots:
    """The directories one session may touch, resolved once when the session is opened."""

    def __init__(self, directories: Iterable[str]) -> None:
        given = [d for d in directories if d]
        for d in given:
            if not os.path.isabs(d):
                # spec OVERVIEW-06, SETUP-20: roots are absolute (the connection made them so).
                raise ValueError(f"root {d!r} is not absolute")
        #: The roots as sent to the agent.
        self.given: Tuple[str, ...] = tuple(given)
        #: Their real paths; the checks compare against these.
        self.real: Tuple[str, ...] = tuple(os.path.realpath(d) for d in given)

    def __repr__(self) -> str:
        return f"Roots({list(self.given)!r})"

    def contains(self, real_path: str) -> bool:
        """True when ``real_path`` (already resolved) lies below one of the roots."""
        return any(is_below(real_path, root) for root in self.real)

    def resolve(self, path: str) -> str:
        """The real path of ``path`` if it lies below a root; else raise -32602."""
        # A relative path was refused by the protocol core before any handler ran (OVERVIEW-06,
        # FS-03, FS-06, acpref/_core); one that reached here would still be judged by where it
        # resolves to, below a root or not.
        if "\0" in path:
            raise RpcError(ErrorCode.INVALID_PARAMS, "path contains a NUL byte", {"path": path})
        try:
            size = len(path.encode("utf-8"))
        except UnicodeEncodeError:
            # spec-gap path-not-unicode: a lone surrogate (a \ud800 escape in the JSON) names no
            # file; refused before any file system call (which would fail on it).
            raise RpcError(
                ErrorCode.INVALID_PARAMS, "path is not valid Unicode text", {"path": path}
            ) from None
        if size > MAX_PATH_BYTES:
            # spec-gap path-too-long: no file has a longer path, and resolving one costs time
            # quadratic in its length.
            raise RpcError(
                ErrorCode.INVALID_PARAMS,
                f"path of {size} bytes is longer than {MAX_PATH_BYTES}",
                {"size": size, "limit": MAX_PATH_BYTES},
            )
        real = os.path.realpath(path)
        if not self.contains(real):
            # spec-gap path-outside-roots: refused -32602 whether the target exists or not, so
            # nothing outside can be probed; symlinks count where they lead.
            raise outside_error(path, self.given)
        return real

    def _verify(self, fd: int, path: str, expected: str) -> None:
        """Raise -32602 unless the open ``fd`` is below a root (the caller closes ``fd``)."""
        where = _fd_path(fd)
        if where is not None:
            ok = self.contains(where)
        else:  # pragma: no cover - no way to ask the kernel: compare identities instead
            try:
                st, st2 = os.fstat(fd), os.stat(expected, follow_symlinks=False)
                ok = (st.st_dev, st.st_ino) == (st2.st_dev, st2.st_ino)
            except OSError:
                ok = False
        if not ok:
            # The file or a directory above it moved out of the roots after the check.
            raise outside_error(path, self.given)

    def _open_dir(self, path: str, real_dir: str) -> int:
        try:
            fd = os.open(real_dir, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
        except FileNotFoundError:
            raise not_found_error(path) from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                # A component turned into a symlink (or a file) after the check.
                raise outside_error(path, self.given) from None
            raise _os_error(path, exc) from None
        try:
            self._verify(fd, path, real_dir)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(self, path: str, *, write: bool = False) -> int:
        """Open a regular file below the roots: for reading, or for writing (created if missing).

        Returns a descriptor the caller closes. Raises ``RpcError`` (see the module's doc).
        """
        real = self.resolve(path)
        parent, name = os.path.split(real)
        missing: List[str] = []
        if write:
            # Find the deepest existing directory; create the rest below it (spec FS-07).
            while not os.path.lexists(parent):
                parent, part = os.path.split(parent)
                missing.insert(0, part)
        dir_fd = self._open_dir(path, parent)
        try:
            for part in missing:
                # spec-gap fs-write-mkdir: missing parent directories are created, only below
                # a root, each relative to its verified parent.
                try:
                    os.mkdir(part, 0o777, dir_fd=dir_fd)
                except FileExistsError:
                    pass
                next_fd = os.open(
                    part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=dir_fd
                )
                os.close(dir_fd)
                dir_fd = next_fd
                parent = os.path.join(parent, part)
                self._verify(dir_fd, path, parent)
            flags = _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK
            flags |= (os.O_WRONLY | os.O_CREAT) if write else os.O_RDONLY
            try:
                fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
            except FileNotFoundError:
                raise not_found_error(path) from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise outside_error(path, self.given) from None  # swapped for a symlink
                raise _os_error(path, exc) from None
        except OSError as exc:
            raise _os_error(path, exc) from None
        finally:
            os.close(dir_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise RpcError(
                    ErrorCode.INVALID_PARAMS, f"{path} is not a regular file", {"path": path}
                )
            self._verify(fd, path, real)
            os.set_blocking(fd, True)
        except BaseException:
            try:
                os.close(fd)
            except OSError:
                pass
            raise
        return fd

    def directory(self, path: str) -> str:
        """The real path of a directory below the roots (a terminal's cwd); else ``RpcError``."""
        real = self.resolve(path)
        fd = self._open_dir(path, real)
        os.close(fd)
        return real


def _os_error(path: str, exc: OSError) -> RpcError:
    if isinstance(exc, RpcError):  # pragma: no cover - never an OSError
        return exc
    if exc.errno == errno.ENOENT:
        return not_found_error(path)
    if exc.errno in (errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG):
        return RpcError(
            ErrorCode.INVALID_PARAMS, f"{path}: {os.strerror(exc.errno)}", {"path": path}
        )
    # spec-gap fs-os-error: other failures (permissions, a full disk) are -32603 with the reason.
    return RpcError(ErrorCode.INTERNAL_ERROR, f"{path}: {exc.strerror or exc}", {"path": path})
