"""The echo agent's commands about the turn itself: streaming, plans, usage, stop reasons.

Spec: prompt-turn.mdx, agent-plan.mdx, session-list.mdx (session_info_update). ``/stream``
streams chunks, a thought, a plan that follows its progress, a session title and a usage report;
``/wait`` keeps the turn going until it is cancelled; ``/error`` and ``/refuse`` end it with an
error and with ``refusal``.
"""

from __future__ import annotations

import datetime as _dt
from typing import List, Tuple

from .. import schema as s
from ..errors import ErrorCode, RpcError
from ._commands import CANCELLED, END, Invocation

__all__: List[str] = []


def _now() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def stream(inv: Invocation) -> s.StopReason:
    try:
        count = max(0, min(int(inv.args.strip() or 8), 100_000))
    except ValueError:
        inv.say(f"/stream takes a number of chunks, not {inv.args.strip()!r}.")
        return END
    turn = inv.turn
    P, S = s.PlanEntryPriority, s.PlanEntryStatus
    steps: List[Tuple[str, s.PlanEntryPriority]] = [
        ("Think about the reply", P.HIGH),
        (f"Stream {count} chunks", P.MEDIUM),
        ("Report usage", P.LOW),
    ]

    def plan(*statuses: s.PlanEntryStatus) -> None:
        # spec PLAN-04: every plan update carries the complete list, with current statuses.
        entries = [
            s.PlanEntry(content=c, priority=p, status=st) for (c, p), st in zip(steps, statuses)
        ]
        turn.update(s.Plan(entries=entries))

    # spec PLAN-01: the turn's plan, reported as a plan update with its entries.
    plan(S.IN_PROGRESS, S.PENDING, S.PENDING)
    turn.say(f"The user asked for {count} chunks; I will stream them, then report.", thought=True)
    # spec PLAN-03: updated plans follow the progress.
    plan(S.COMPLETED, S.IN_PROGRESS, S.PENDING)
    message_id = turn.new_message_id()
    for i in range(1, count + 1):
        if turn.cancelled.is_set():
            return CANCELLED
        turn.say(f"chunk {i}/{count} ", message_id=message_id)
    # spec PLAN-06: entries may be added between updates.
    steps.insert(2, ("Name the session", P.LOW))
    plan(S.COMPLETED, S.COMPLETED, S.IN_PROGRESS, S.PENDING)
    # spec LIST-14: the agent names the session; only title and updatedAt change (LIST-16).
    turn.update(s.SessionInfoUpdate(title=f"Echo: streamed {count} chunks", updated_at=_now()))
    plan(S.COMPLETED, S.COMPLETED, S.COMPLETED, S.IN_PROGRESS)
    # spec PROMPT-09: the turn reports context usage and cost;
    # spec PROMPT-10: integer used and size; cost with an ISO 4217 currency.
    turn.update(
        s.UsageUpdate(
            used=1000 + 10 * count,
            size=200_000,
            cost=s.Cost(amount=round(0.0001 * count, 6), currency="USD"),
        )
    )
    plan(S.COMPLETED, S.COMPLETED, S.COMPLETED, S.COMPLETED)
    return END

def wait(inv: Invocation) -> s.StopReason:
    turn = inv.turn
    message_id = turn.say("Waiting until you cancel this turn...")
    beat = 0
    while not turn.cancelled.wait(0.5):
        beat += 1
        turn.say(f" still waiting ({beat})", message_id=message_id)
    return CANCELLED

def error(inv: Invocation) -> s.StopReason:
    raise RpcError(
        ErrorCode.INTERNAL_ERROR,
        "The /error command answers with a JSON-RPC error, on purpose.",
        {"command": "/error"},
    )

def refuse(inv: Invocation) -> s.StopReason:
    # schema StopReason "refusal": the agent refuses to continue; the client shows that this
    # prompt will not be part of the next turn's context (PROMPT-18).
    inv.say("The echo agent refuses this prompt (on purpose).")
    return s.StopReason.REFUSAL
