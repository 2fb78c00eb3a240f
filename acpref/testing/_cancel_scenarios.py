"""The cancellation scenarios of ``check-agent``: cancel a busy turn, judge how it ends.

Spec: cancellation.mdx, prompt-turn.mdx (PROMPT-21, PROMPT-23, PROMPT-24), session-setup.mdx
(SETUP-16: session/close cancels a running turn). Right after the cancel goes a probe, a
request the agent answers (``_acpref/ping``): stdio is ordered, so an agent that answered the
probe before the prompt had read the cancel, and a turn it then ends otherwise than
``cancelled`` breaks PROMPT-23 (SETUP-16 for close), and PROMPT-24 too when it ends with an
error. A turn that ends before the probe's answer may have ended before the agent read the
cancel: a race the check provokes, SKIPPED with the option that would make it a verdict (or,
when it ended late, spec-gap cancel-ignored).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

from .. import schema as s
from .._core.prompt_turn import TURN_CONTENT
from ..errors import ErrorCode, RpcError
from ._driver import PendingTurn
from ._scenario import BUSY_HINT, ScenarioContext

__all__ = ["IGNORED", "cancel_busy_turn", "cancel_scenario"]


#: acpref's own reading of a cancellation: a turn that ended otherwise than "cancelled" long
#: after the cancel, though the wire does not show the agent had read it (see _judge).
IGNORED = "spec-gap:cancel-ignored"


class _Cancel:
    """Sends the cancel of one busy turn once, and remembers when (wall clock and wire)."""

    def __init__(self, ctx: ScenarioContext, send: Callable[[], None]) -> None:
        self.ctx = ctx
        self._send = send
        self._lock = threading.Lock()
        self.sent_at: Optional[float] = None
        self.since = 0
        self.asked = False  # a permission request was pending when we cancelled
        self.probe_id = f"acpref-after-cancel-{id(self)}"

    def __call__(self) -> None:
        with self._lock:
            if self.sent_at is not None:
                return
            self.since = self.ctx.driver.sink.received_count
            self._send()
            self.sent_at = time.monotonic()
            # A request sent after the cancel: an agent that answers it has read the cancel.
            self.ctx.driver.send_raw(
                {"jsonrpc": "2.0", "id": self.probe_id, "method": "_acpref/ping", "params": {}}
            )

    def policy(self, request: s.RequestPermissionRequest) -> None:
        # spec PROMPT-21: cancel first, then answer the pending permission request "cancelled".
        self.asked = True
        self()
        return None


def _busy_turn(ctx: ScenarioContext, session_id: str) -> Tuple[PendingTurn, str]:
    """Start the busy prompt and wait for its first sign of life, at most ``cancel_after`` s.

    ``"update"`` (it streamed), ``"request"`` (it asked permission), ``"done"`` (it ended
    already) or ``"quiet"`` (nothing yet: it is cancelled anyway, before any content).
    """
    since = ctx.driver.sink.received_count
    pending = ctx.driver.prompt_async(session_id, ctx.cancel_prompt)

    def sign(m: Dict[str, Any]) -> bool:
        if m.get("method") == "session/update":
            params = m.get("params")
            params = params if isinstance(params, dict) else {}
            update = params.get("update")
            update = update if isinstance(update, dict) else {}
            return (
                params.get("sessionId") == session_id
                and update.get("sessionUpdate") in TURN_CONTENT
            )
        if "method" in m:
            return m["method"] == "session/request_permission"
        return m.get("id") == pending.request_id

    try:
        _, message = ctx.driver.sink.wait_for(sign, since=since, timeout=ctx.options.cancel_after)
    except TimeoutError:
        if pending.done:
            return pending, "done"
        return pending, "quiet"
    if "method" not in message:
        return pending, "done"
    return pending, "update" if message["method"] == "session/update" else "request"


def cancel_busy_turn(
    ctx: ScenarioContext, session_id: str, clause: str, send: Callable[[], None]
) -> None:
    """Cancel a busy turn (``send``: session/cancel, session/close...) and judge how it ends."""
    cancel = _Cancel(ctx, send)
    ctx.driver.permission = cancel.policy
    started = ctx.driver.sink.received_count
    pending, first = _busy_turn(ctx, session_id)
    if first == "done" and not cancel.asked:
        with ctx.step("session/prompt"):  # an error before the cancel: no cancelled turn
            pending.result()
        for c in (clause, IGNORED):
            ctx.skip(c, f"the turn ended before it could be cancelled; {BUSY_HINT}")
        return
    cancel()  # when the agent asked permission, the policy may have sent it already
    if _answered_before(ctx, started, cancel, pending.request_id):
        # The prompt's answer was read before the cancel was written: the turn was over
        # before it could be cancelled, and an answer to the probe says nothing about it.
        with ctx.step("session/prompt"):
            pending.result()
        for c in (clause, IGNORED):
            ctx.skip(c, f"the turn ended before it could be cancelled; {BUSY_HINT}")
        return
    _judge(ctx, clause, pending, cancel)


def _answered_before(ctx: ScenarioContext, started: int, cancel: _Cancel, prompt_id: Any) -> bool:
    """Whether the prompt's answer is among what was read (from ``started``, before the prompt
    was sent) before the cancel was sent."""
    return any(
        isinstance(m, dict) and "method" not in m and m.get("id") == prompt_id
        for _, m in ctx.driver.sink.received(started, cancel.since)
    )


def _judge(ctx: ScenarioContext, clause: str, pending: PendingTurn, cancel: _Cancel) -> None:
    try:
        turn = pending.result()
    except RpcError as exc:
        # spec PROMPT-24: the errors of an operation the cancel aborted become "cancelled";
        # graded, like the stop reason, where the wire shows the agent had read the cancel.
        ended = f"the cancelled prompt answered error {exc.code}: {exc.detail}"
        judged: Tuple[str, ...] = ("PROMPT-24", clause)
    else:
        ctx.passed("PROMPT-24")
        if turn.stop_reason == "cancelled":
            ctx.passed(clause, IGNORED)
            return
        ended = f"the turn ended {turn.stop_reason!r}, not 'cancelled'"
        judged = (clause,)
    ended_at = time.monotonic()
    # A permission request open at the cancel is no witness: the agent may have written its
    # answer to the prompt before it read the cancel and our answer (the oracle's reading too).
    after = _after_cancel(ctx, cancel, pending.request_id)
    late = ended_at - (cancel.sent_at or ended_at)
    facts = [f"{ended} {late:.1f}s after the cancel", f"{after['updates']} turn updates came after it"]
    if after["probe_answered"]:
        # spec PROMPT-23 (SETUP-16 for close), PROMPT-24: stdio is ordered, so an agent that
        # answered our probe, sent after the cancel, had read the cancel before it answered the
        # prompt (the oracle's rule: acpref/_core/prompt_turn.py, _turn_ends).
        facts.append(
            "it had answered a request sent after the cancel, so it had read the cancel"
            + (f", and streamed {after['streamed_after_probe']} more updates"
               if after["streamed_after_probe"] else "")
        )
        for c in judged:
            ctx.check(c, False, "; ".join(facts))
        ctx.skip(IGNORED, f"judged at {clause}: the agent had read the cancel")
        return
    if late > ctx.options.cancel_grace:
        # spec-gap cancel-ignored: the turn ended late, but the agent never answered the probe
        # before it: it may read its input only between steps, after the turn was over.
        facts.append("the request sent after the cancel was not answered before the turn ended")
        ctx.check(IGNORED, False, "; ".join(facts))
        for c in judged:
            ctx.skip(
                c,
                f"{ended}, and it answered no request sent after the cancel before that: that it "
                f"had read the cancel is acpref's reading ({IGNORED})",
            )
        return
    reason = (
        f"{ended} {late:.1f}s after the cancel, before it answered a request sent after it "
        f"(a race: whether it had read the cancel is not on the wire); {BUSY_HINT}"
    )
    for c in (*judged, IGNORED):
        ctx.skip(c, reason)


def _after_cancel(ctx: ScenarioContext, cancel: _Cancel, prompt_id: Any) -> Dict[str, int]:
    """What the agent sent between the cancel and the prompt's answer: turn updates, whether it
    answered the probe (sent after the cancel), and the updates after that answer."""
    updates = probe_answered = streamed_after_probe = 0
    for _, m in ctx.driver.sink.received(cancel.since):
        if not isinstance(m, dict):
            continue
        if "method" not in m and m.get("id") == prompt_id:
            break
        if "method" not in m and m.get("id") == cancel.probe_id:
            probe_answered = 1
        elif m.get("method") == "session/update" and _is_turn_content(m):
            updates += 1
            streamed_after_probe += probe_answered
    return {
        "updates": updates,
        "probe_answered": probe_answered,
        "streamed_after_probe": streamed_after_probe,
    }


def _is_turn_content(m: Dict[str, Any]) -> bool:
    params = m.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") in TURN_CONTENT


def cancel_scenario(ctx: ScenarioContext) -> None:
    ctx.initialize()
    ctx.at("PROMPT-23")
    session_id = ctx.new_session()
    cancel_busy_turn(ctx, session_id, "PROMPT-23", lambda: ctx.driver.cancel(session_id))
    # $/cancel_request on a prompt: answered with a result or -32800 (CANCEL-05).
    ctx.at("CANCEL-05")
    ctx.driver.permission = None
    if _cancel_request_turn(ctx, session_id, first=True):
        _cancel_request_turn(ctx, session_id, first=False)


def _cancel_request_turn(ctx: ScenarioContext, session_id: str, *, first: bool) -> bool:
    """Cancel a busy turn with ``$/cancel_request``; True when its answer showed the agent
    supports it: -32800, or the marker stopReason ``cancelled``.

    Support is optional (CANCEL-02) and advertised nowhere, so an error other than -32800 for
    the first turn decides nothing. Once the agent has shown support, a second turn is cancelled
    the same way, followed by a request (a probe) that shows when the agent had read the cancel:
    the oracle judges its answer (``_core/cancellation._cancelled_answer``: an error other than
    -32800 after the agent had read the cancel breaks CANCEL-05 at MUST).
    """
    pending, sign = _busy_turn(ctx, session_id)
    if sign == "done":
        if first:
            ctx.skip("CANCEL-05", f"the turn ended before it could be cancelled; {BUSY_HINT}")
        with ctx.step("session/prompt"):
            pending.result()
        return False
    ctx.driver.connection.notify("$/cancel_request", {"requestId": pending.request_id})
    if not first:
        # A request sent after the cancel: an agent that answers it has read the cancel.
        probe = {"jsonrpc": "2.0", "method": "_acpref/ping", "params": {}}
        ctx.driver.send_raw({**probe, "id": f"acpref-after-cancel-request-{pending.request_id}"})
    try:
        turn = pending.result()
    except RpcError as exc:
        if exc.code == ErrorCode.REQUEST_CANCELLED:
            ctx.passed("CANCEL-05")
            return True
        if first:
            # spec-gap cancel-request-support: only a receiver that supports $/cancel_request
            # owes -32800 (CANCEL-05), and support is optional (CANCEL-02): the oracle's gap
            # finding says what came; the clause itself cannot be decided from the wire.
            ctx.skip(
                "CANCEL-05",
                f"answered error {exc.code} ({exc.detail}), not -32800: whether the agent "
                "supports $/cancel_request is acpref's reading (spec-gap:cancel-request-support)",
            )
        # spec CANCEL-05: after the agent showed support, the oracle's finding fails the clause
        # when the wire shows it had read the cancel (else its gap finding says why not).
        return False
    ctx.passed("CANCEL-05")
    return turn.stop_reason == "cancelled"
