"""Client terminals: ``terminal/create``, ``output``, ``wait_for_exit``, ``kill``, ``release``.

Spec: terminals.mdx; clauses TERM-01 .. TERM-15. Available only when the client advertised
``terminal``; every terminal an agent creates is released by it (TERM-07).
"""

from typing import List

import attrs

from ._base import Meta, Unset, field
from .identifiers import SessionId, TerminalId
from .session_setup import EnvVariable

__all__ = [
    "CreateTerminalRequest",
    "TerminalOutputRequest",
    "ReleaseTerminalRequest",
    "WaitForTerminalExitRequest",
    "KillTerminalRequest",
    "CreateTerminalResponse",
    "TerminalExitStatus",
    "TerminalOutputResponse",
    "ReleaseTerminalResponse",
    "WaitForTerminalExitResponse",
    "KillTerminalResponse",
]


@attrs.frozen(kw_only=True)
class CreateTerminalRequest:
    """Params of `terminal/create`: run a command (no shell) in a new client terminal.

    Spec: terminals.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    command: str = field(required=True)
    """The command to execute."""
    # spec SCHEMA-18, SCHEMA-20, SCHEMA-21: null reads as []; a malformed item or value is -32602.
    args: List[str] | Unset = field(default_on_null=True)
    """Array of command arguments."""
    env: List[EnvVariable] | Unset = field(default_on_null=True)
    """Environment variables for the command."""
    cwd: str | None | Unset = field()
    """Working directory for the command. Must be an absolute path."""
    output_byte_limit: int | None | Unset = field(fmt="uint64")
    """Maximum number of output bytes to retain.

    When the limit is exceeded, the Client truncates from the beginning of the output to stay within
    the limit.

    The Client MUST ensure truncation happens at a character boundary to maintain valid string
    output, even if this means the retained output is slightly less than the specified limit.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class TerminalOutputRequest:
    """Params of `terminal/output`: the output so far, without waiting.

    Spec: terminals.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    terminal_id: TerminalId = field(required=True)
    """The ID of the terminal to get output from."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ReleaseTerminalRequest:
    """Params of `terminal/release`: kill if running and free the terminal.

    Spec: terminals.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    terminal_id: TerminalId = field(required=True)
    """The ID of the terminal to release."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class WaitForTerminalExitRequest:
    """Params of `terminal/wait_for_exit`: answer once the command has exited.

    Spec: terminals.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    terminal_id: TerminalId = field(required=True)
    """The ID of the terminal to wait for."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class KillTerminalRequest:
    """Params of `terminal/kill`: stop the command, keep the terminal readable.

    Spec: terminals.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    terminal_id: TerminalId = field(required=True)
    """The ID of the terminal to kill."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class CreateTerminalResponse:
    """Result of `terminal/create`: the new terminal's id, returned at once.

    Spec: terminals.mdx
    """

    terminal_id: TerminalId = field(required=True)
    """The unique identifier for the created terminal."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class TerminalExitStatus:
    """How a terminal's command ended: exit code, or the signal that killed it.

    Spec: terminals.mdx
    """

    # spec SCHEMA-13, spec-gap exit-code-sign: a uint32; a negative code is a shape error
    # (strict) and reads as absent (lenient); a signal death is exitCode null plus signal.
    exit_code: int | None | Unset = field(default_on_error=True, fmt="uint32")
    """The process exit code (may be null if terminated by signal)."""
    signal: str | None | Unset = field(default_on_error=True)
    """The signal that terminated the process (may be null if exited normally)."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class TerminalOutputResponse:
    """Result of `terminal/output`: output, truncation flag, and the exit status once exited.

    Spec: terminals.mdx
    """

    output: str = field(required=True)
    """The terminal output captured so far."""
    truncated: bool = field(required=True)
    """Whether the output was truncated due to byte limits."""
    exit_status: TerminalExitStatus | None | Unset = field(default_on_error=True)
    """Exit status if the command has completed."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ReleaseTerminalResponse:
    """Result of `terminal/release`.

    Spec: terminals.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class WaitForTerminalExitResponse:
    """Result of `terminal/wait_for_exit`: the exit code or signal.

    Spec: terminals.mdx
    """

    exit_code: int | None | Unset = field(default_on_error=True, fmt="uint32")
    """The process exit code (may be null if terminated by signal)."""
    signal: str | None | Unset = field(default_on_error=True)
    """The signal that terminated the process (may be null if exited normally)."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class KillTerminalResponse:
    """Result of `terminal/kill`.

    Spec: terminals.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
