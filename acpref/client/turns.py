"""What a prompt turn in flight and the end of an agent look like to the caller.

Spec: prompt-turn.mdx, initialization.mdx (Version Negotiation); clauses INIT-09, PROMPT-19.

* ``PromptTurn``: a ``session/prompt`` in flight, to wait for with timeouts (it is never given
  up on a timeout: cancel it with ``cancel()``);
* ``AgentExited``: the agent process ended while an answer was awaited;
* ``UnsupportedProtocolVersion``: the agent speaks a version we do not (INIT-09).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from .. import schema as s
from .._shell.connection import PendingRequest
from ..errors import ConnectionClosed, RequestTimeout
from ..methods import PROTOCOL_VERSION

__all__ = ["AgentExited", "PromptTurn", "UnsupportedProtocolVersion"]


class AgentExited(ConnectionClosed):
    """The agent process ended (or closed its output) while we waited for an answer."""

    def __init__(self, message: str, returncode: Optional[int], stderr_tail: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class UnsupportedProtocolVersion(ConnectionClosed):
    """The agent answered ``initialize`` with a protocol version we do not speak (spec INIT-09).

    The connection is closed (and the agent shut down) before this is raised.
    """

    def __init__(self, agent_version: Any) -> None:
        super().__init__(
            f"the agent speaks ACP protocol version {agent_version!r}; acpref speaks only "
            f"version {PROTOCOL_VERSION}, so the connection was closed"
        )
        self.agent_version = agent_version


class PromptTurn:
    """A ``session/prompt`` in flight: wait for it without giving it up on a timeout.

    Whoever waits reads the answer itself (``PendingRequest.wait``); when nobody waits, the
    connection's own threads read it.
    """

    def __init__(
        self,
        session_id: str,
        pending: PendingRequest,
        *,
        cancel: Callable[[s.CancelNotification], None],
        explain: Callable[[BaseException, str], BaseException],
    ) -> None:
        self.session_id = session_id
        self._pending = pending
        self._cancel = cancel
        self._explain = explain

    @property
    def done(self) -> bool:
        """True once the prompt was answered (or failed)."""
        return self._pending.done

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until the turn ends; True if it did within ``timeout``."""
        return self._pending.wait(timeout)

    def result(self, timeout: Optional[float] = None) -> s.PromptResponse:
        """The turn's answer, once every update of the turn was delivered (see ``prompt``)."""
        if not self._pending.wait(timeout):
            raise RequestTimeout(
                f"the prompt turn of {self.session_id} did not end within {timeout}s"
            )
        try:
            return self._pending.result()
        except BaseException as exc:  # noqa: BLE001 - explained, then raised
            raise self._explain(exc, "session/prompt") from None

    def cancel(self) -> None:
        """Cancel the turn (``session/cancel``, see ``ClientSideConnection.session_cancel``); it
        then ends, normally with ``cancelled``."""
        self._cancel(s.CancelNotification(session_id=self.session_id))
