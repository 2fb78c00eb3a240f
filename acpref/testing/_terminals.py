"""The test client's ``terminal/*`` answers: the client library's ``TerminalManager``, typed.

Spec: terminals.mdx; clauses TERM-03 .. TERM-14. The driver that plays the client to an agent
under test (``_driver``) runs the commands an agent asks for, so that an agent's terminal code is
exercised for real. Running them is the reference client's job (``acpref.client.terminals``:
bounded output, process groups, the kill ladder, per-session caps), so every hostile-input bound
on a terminal holds in one place; this module only turns the typed requests into its calls, as
``acpref.client.reference`` does, without the reference client's roots (the driver is no
sandbox: a command runs where the agent asks, by default in this process's directory).
"""

from __future__ import annotations

import os

from .. import schema as s
from .._shell.connection import RequestContext
from ..client.terminals import TerminalManager
from ..errors import ErrorCode, RpcError

__all__ = ["Terminals"]

#: How often a ``terminal/wait_for_exit`` looks at its request's cancellation.
_CANCEL_POLL = 0.05


class Terminals:
    """The terminals of one test client: typed requests in, typed answers out."""

    def __init__(self) -> None:
        self.manager = TerminalManager()

    def create(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        args = list(params.args) if isinstance(params.args, list) else []
        env = {v.name: v.value for v in params.env} if isinstance(params.env, list) else {}
        cwd = params.cwd if isinstance(params.cwd, str) else os.getcwd()
        limit = params.output_byte_limit if isinstance(params.output_byte_limit, int) else None
        terminal_id = self.manager.create(params.session_id, params.command, args, env, cwd, limit)
        return s.CreateTerminalResponse(terminal_id=terminal_id)  # spec TERM-03: at once

    def output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        output, truncated, status = self.manager.output(params.session_id, params.terminal_id)
        # spec TERM-09: current output at once; exitStatus only once the command has exited.
        exit_status = (
            s.TerminalExitStatus(exit_code=status[0], signal=status[1]) if status else s.UNSET
        )
        return s.TerminalOutputResponse(output=output, truncated=truncated, exit_status=exit_status)

    def wait_for_exit(
        self, params: s.WaitForTerminalExitRequest, ctx: RequestContext
    ) -> s.WaitForTerminalExitResponse:
        while True:
            try:
                code, signal_name = self.manager.wait_for_exit(
                    params.session_id, params.terminal_id, _CANCEL_POLL
                )
                break
            except RpcError as exc:  # -32800: still running after the poll
                if exc.code != ErrorCode.REQUEST_CANCELLED:
                    raise
                if ctx.cancelled.is_set():
                    raise RpcError.cancelled() from None
        # spec TERM-10, TERM-11: answered only after the command exits.
        return s.WaitForTerminalExitResponse(exit_code=code, signal=signal_name)

    def kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        self.manager.kill(params.session_id, params.terminal_id)  # spec TERM-12: id stays valid
        return s.KillTerminalResponse()

    def release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        # spec TERM-13, TERM-14: a running command is stopped, the id is unknown afterwards.
        self.manager.release(params.session_id, params.terminal_id)
        return s.ReleaseTerminalResponse()

    def close_all(self) -> None:
        """Kill and reap every terminal still held (at the end of a test)."""
        self.manager.close()
