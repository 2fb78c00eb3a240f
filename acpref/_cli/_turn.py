"""One prompt turn of ``acpref client``, run on the main thread.

Spec: prompt-turn.mdx (Cancellation); clauses PROMPT-19 .. PROMPT-23 as cited. While the turn
runs, the main thread watches it: Ctrl-C cancels it (a second one quits), a passed deadline
(``-p --timeout``) cancels it, a closed stdout cancels it, and the questions the agent asks
(``Console.questions``) are answered here, so that one thread reads stdin.

During a turn SIGINT only counts presses (``Console.interrupts``): no KeyboardInterrupt can land
in the middle of sending a message; the watch acts on them.
"""

from __future__ import annotations

import queue
import signal
import time
from typing import Any, List, Optional, Tuple

from ..client import ClientSideConnection, ReferenceClient
from . import _status
from ._commands import Quit, Timeout
from ._console import Console

__all__ = ["run_turn"]

#: After a cancel, how long the turn may take to end before the user is told it still runs.
CANCEL_PATIENCE = 3.0


class _Watch:
    """What the main thread knows of a running turn, and what it does about it."""

    def __init__(
        self,
        conn: ClientSideConnection,
        console: Console,
        session_id: str,
        deadline: Optional[float],
        timeout_text: str,
    ) -> None:
        self.conn = conn
        self.console = console
        self.session_id = session_id
        self.deadline = deadline
        self.timeout_text = timeout_text
        self.cancelled_at: Optional[float] = None
        self.told_waiting = False
        self.timed_out = False

    def cancel(self) -> None:
        self.conn.cancel(self.session_id)  # spec PROMPT-19
        self.cancelled_at = time.monotonic()

    def step(self) -> None:
        """Act on what happened since the last step; then serve a question, if one waits."""
        console = self.console
        if console.stdout_gone.is_set():
            self.conn.cancel(self.session_id)
            raise BrokenPipeError()
        if console.interrupts > console.acted:
            console.acted += 1
            if console.acted > 1:
                raise Quit(_status.INTERRUPTED)
            console.say("[cancelling the turn; Ctrl-C again quits]")
            self.cancel()  # spec PROMPT-21: also while a permission is asked
        if self.deadline is not None and self.cancelled_at is None:
            if time.monotonic() >= self.deadline:
                console.say(f"[the --timeout of {self.timeout_text}s passed: cancelling]")
                self.cancel()
                self.timed_out = True
        if self.cancelled_at is not None and not self.told_waiting:
            if time.monotonic() - self.cancelled_at >= CANCEL_PATIENCE:
                self._tell_waiting()
        self._serve_question()

    def _tell_waiting(self) -> None:
        # spec PROMPT-23: the agent must end a cancelled turn; this one has not.
        self.told_waiting = True
        self.console.say(
            "[the agent has not ended the cancelled turn yet; still waiting"
            + ("; Ctrl-C quits]" if not self.timed_out else "]")
        )
        if self.timed_out:
            raise Timeout()

    def _serve_question(self) -> None:
        console = self.console
        try:
            question = console.questions.get(timeout=0.1)
        except queue.Empty:
            return
        if not question.cancelled.is_set() and console.interrupts == console.acted:
            question.answer = question.ask()
        question.done.set()


def run_turn(
    conn: ClientSideConnection,
    client: ReferenceClient,
    console: Console,
    session_id: str,
    blocks: List[Any],
    *,
    deadline: Optional[float] = None,
    timeout_text: str = "",
) -> Tuple[str, bool]:
    """Send ``blocks`` as a prompt and watch the turn to its end.

    Returns its stop reason, and whether the user cancelled it; raises ``Quit`` on a second
    Ctrl-C, ``Timeout`` once the deadline passed, ``BrokenPipeError`` once stdout is closed.
    """
    console.interrupts = console.acted = 0

    def on_sigint(signum: int, frame: Any) -> None:
        console.interrupts += 1

    watch = _Watch(conn, console, session_id, deadline, timeout_text)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        turn = conn.prompt_async(session_id, blocks)
        while not turn.done:
            watch.step()
    finally:
        signal.signal(signal.SIGINT, previous)
    console.render.flush_terminals()
    console.render.end()
    answer = turn.result()
    reason = str(getattr(answer.stop_reason, "value", answer.stop_reason))
    if watch.cancelled_at is not None:
        _show_cancelled_calls(client, console, session_id)
    if watch.timed_out:
        raise Timeout()
    return reason, watch.cancelled_at is not None


def _show_cancelled_calls(client: ReferenceClient, console: Console, session_id: str) -> None:
    """The tool calls a cancel cut short, shown cancelled once (spec PROMPT-20)."""
    view = client.view(session_id)
    with view.lock:
        left = [c.tool_call_id for c in view.tool_calls.values() if c.cancelled]
        for call in view.tool_calls.values():
            call.cancelled = False  # shown once
    for tool_call_id in left:
        if not view.tool_calls[tool_call_id].finished:
            console.render.tool_cancelled(tool_call_id)  # spec PROMPT-20
