"""Terminals for the test client: real subprocesses behind the ``terminal/*`` methods.

Spec: terminals.mdx; clauses TERM-03 .. TERM-14. The driver that plays the client to an agent
under test (``_driver``) runs the commands an agent asks for, so that an agent's terminal code is
exercised for real: ``create`` answers at once (TERM-03), output is kept within
``outputByteLimit`` by dropping from the start at a character boundary (TERM-04, TERM-05,
TERM-06), ``kill`` keeps the id valid (TERM-12), ``release`` kills and forgets (TERM-13,
TERM-14: the id is unknown afterwards, answered -32002).
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import threading
from typing import Dict, Optional

from .._shell import groups as _groups
from .. import schema as s
from .._shell.connection import RequestContext
from ..errors import RpcError
from ..schema import UNSET

__all__ = ["Terminals"]


class _Terminal:
    def __init__(self, popen: "subprocess.Popen[bytes]", limit: Optional[int]) -> None:
        self.popen = popen
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.lock = threading.Lock()  # guards output and truncated
        self.exited = threading.Event()
        self.reader = threading.Thread(
            target=self._read, name=f"acpref-terminal-{popen.pid}", daemon=True
        )
        self.reader.start()

    def _read(self) -> None:
        out = self.popen.stdout
        assert out is not None
        while True:
            chunk = os.read(out.fileno(), 65536)
            if not chunk:
                break
            with self.lock:
                self.output += chunk
                if self.limit is not None and len(self.output) > self.limit:
                    # spec TERM-04, TERM-05: drop from the start, at a UTF-8 character boundary.
                    cut = len(self.output) - self.limit
                    while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                        cut += 1
                    del self.output[:cut]
                    self.truncated = True  # spec TERM-06
        self.popen.wait()
        out.close()
        self.exited.set()

    def exit_status(self) -> Optional[s.TerminalExitStatus]:
        if not self.exited.is_set():
            return None
        code = self.popen.returncode
        if code is not None and code < 0:
            # spec TERM-10: killed by a signal: exitCode null, signal named.
            return s.TerminalExitStatus(exit_code=None, signal=signal.Signals(-code).name)
        return s.TerminalExitStatus(exit_code=code, signal=None)

    def kill(self) -> None:
        # The command leads a group of its own: SIGKILL reaches what it started too. The group
        # id is safe to signal until the reader thread reaps the command (after its output ends,
        # which a live member of the group still holds open).
        if not self.exited.is_set():
            _groups.signal_group(self.popen.pid, signal.SIGKILL)


class Terminals:
    """The terminals of one test client, by id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _terminals
        self._terminals: Dict[str, _Terminal] = {}
        self._ids = itertools.count(1)

    def _get(self, terminal_id: str) -> _Terminal:
        with self._lock:
            term = self._terminals.get(terminal_id)
        if term is None:
            # spec TERM-14, RPC-17: unknown or released ids are a missing resource.
            raise RpcError.resource_not_found(f"unknown terminal {terminal_id!r}")
        return term

    def create(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        env = dict(os.environ)
        for var in params.env if params.env is not UNSET else []:
            env[var.name] = var.value
        argv = [params.command, *(params.args if params.args is not UNSET else [])]
        cwd = params.cwd if isinstance(params.cwd, str) else None
        limit = params.output_byte_limit if isinstance(params.output_byte_limit, int) else None
        try:
            popen = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a group of its own, killed whole
            )
        except OSError as exc:
            raise RpcError.invalid_params(f"cannot start {params.command!r}: {exc}") from None
        terminal_id = f"term-{next(self._ids)}"
        with self._lock:
            self._terminals[terminal_id] = _Terminal(popen, limit)
        return s.CreateTerminalResponse(terminal_id=terminal_id)  # spec TERM-03: at once

    def output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        term = self._get(params.terminal_id)
        status = term.exit_status()
        with term.lock:
            text = bytes(term.output).decode("utf-8", "replace")
            truncated = term.truncated
        # spec TERM-09: current output at once; exitStatus only once the command has exited.
        return s.TerminalOutputResponse(
            output=text, truncated=truncated, exit_status=status if status else UNSET
        )

    def wait_for_exit(
        self, params: s.WaitForTerminalExitRequest, ctx: RequestContext
    ) -> s.WaitForTerminalExitResponse:
        term = self._get(params.terminal_id)
        while not term.exited.wait(0.05):
            if ctx.cancelled.is_set():
                raise RpcError.cancelled()
        status = term.exit_status()
        assert status is not None
        # spec TERM-11: answered only after the command exits.
        return s.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    def kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        self._get(params.terminal_id).kill()  # spec TERM-12: the id stays valid
        return s.KillTerminalResponse()

    def release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        term = self._get(params.terminal_id)
        with self._lock:
            self._terminals.pop(params.terminal_id, None)
        term.kill()  # spec TERM-13: a running command is stopped
        return s.ReleaseTerminalResponse()

    def close_all(self, timeout: float = 2.0) -> None:
        """Kill every terminal still held (at the end of a test)."""
        with self._lock:
            terms = list(self._terminals.values())
            self._terminals.clear()
        for term in terms:
            term.kill()
        for term in terms:
            term.exited.wait(timeout)
