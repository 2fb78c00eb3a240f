"""The echo agent's ``/plans`` command: plan operations, or the legacy plan (PROVISIONAL).

Spec: v1/plan-operations.md; clauses PLANOP-01 .. PLANOP-08 (shape from the unstable schema of
2026-11-02). To a client that advertised ``clientCapabilities.plan`` it sends two plans of two
kinds (PLANOP-07): a checklist and a Markdown document naming its file by absolute path
(PLANOP-08), replaces the checklist whole (PLANOP-04), and removes it (PLANOP-06). To any other
client it sends the same checklist as the legacy ``plan`` update (PLANOP-02).
"""

from __future__ import annotations

import os
from typing import List

from .. import schema as s
from .._core.plan_operations import CAPABILITY
from ._commands import CANCELLED, END, Invocation

__all__: List[str] = []

_HIGH, _LOW = s.PlanEntryPriority.HIGH, s.PlanEntryPriority.LOW
_PENDING, _RUNNING, _DONE = (
    s.PlanEntryStatus.PENDING,
    s.PlanEntryStatus.IN_PROGRESS,
    s.PlanEntryStatus.COMPLETED,
)


def _checklist(*statuses: s.PlanEntryStatus) -> List[s.PlanEntry]:
    steps = (("Read the code", _HIGH), ("Write the tests", _HIGH), ("Tidy up", _LOW))
    return [
        s.PlanEntry(content=text, priority=priority, status=status)
        for (text, priority), status in zip(steps, statuses)
    ]


def plans(inv: Invocation) -> s.StopReason:
    if not inv.agent.client.supports(CAPABILITY):
        # spec PLANOP-01, PLANOP-02: no plan capability: the legacy plan update instead.
        inv.turn.update(s.Plan(entries=_checklist(_DONE, _RUNNING, _PENDING)))
        inv.say("This client did not advertise 'plan': sent the legacy plan instead.")
        return END
    checklist = "checklist"
    steps: "list[s.SessionUpdate]" = [
        # spec PLANOP-03, PLANOP-07: two plans by id, of two kinds, in one session.
        s.PlanUpdate(
            plan=s.PlanItems(plan_id=checklist, entries=_checklist(_RUNNING, _PENDING, _PENDING))
        ),
        s.PlanUpdate(
            plan=s.PlanMarkdown(
                plan_id="design",
                content="## Design\n- [x] Sketch the API\n- [ ] Review it",
                # spec PLANOP-08: an absolute path naming the plan's file (not needed to show it).
                path=os.path.join(inv.session.cwd, "PLAN.md"),
            )
        ),
        # spec PLANOP-04: the checklist again, whole, with every entry's current status.
        s.PlanUpdate(
            plan=s.PlanItems(plan_id=checklist, entries=_checklist(_DONE, _DONE, _RUNNING))
        ),
        # spec PLANOP-06: the checklist is dismissed; the design plan stays.
        s.PlanRemoved(plan_id=checklist),
    ]
    for step in steps:
        if inv.turn.cancelled.is_set():
            return CANCELLED
        inv.turn.update(step)
    inv.say("Sent two plans, replaced the checklist, then removed it; the design plan remains.")
    return END
