"""The plans of one session, by ``planId``, kept from plan operations (PROVISIONAL).

Spec: v1/plan-operations.md; clauses PLANOP-05, PLANOP-06, PLANOP-07 (shape from the unstable
schema of 2026-11-02). ``plan_update`` replaces the plan with its ``planId`` whole and leaves the
others alone; ``plan_removed`` dismisses one plan. A plan is its ``PlanUpdateContent``: a
checklist, a Markdown document (whose ``path`` the client need not read, PLANOP-08) or a file URI.
Plain data: the session view holds one and locks it.
"""

from __future__ import annotations

from typing import Any, Dict, List

from .. import schema as s

__all__ = ["PlanBook", "describe_plan_operation"]


class PlanBook:
    """The session's current plans, in the order they first appeared."""

    def __init__(self) -> None:
        self.plans: Dict[str, Any] = {}

    def apply(self, update: Any) -> None:
        if isinstance(update, s.PlanUpdate):
            # spec PLANOP-05: replaces that plan only (a new planId adds a plan: PLANOP-07).
            self.plans[update.plan.plan_id] = update.plan
        elif isinstance(update, s.PlanRemoved):
            # spec PLANOP-06: that plan is dismissed; the others stay.
            self.plans.pop(update.plan_id, None)


def describe_plan_operation(update: Any) -> List[str]:
    """Lines that show a plan operation to a person."""
    if isinstance(update, s.PlanRemoved):
        return [f"[plan {update.plan_id}] removed"]
    plan = update.plan
    if isinstance(plan, s.PlanItems):
        marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
        return [f"[plan {plan.plan_id}]"] + [
            f"  {marks.get(getattr(e.status, 'value', e.status), '[?]')} {e.content}"
            for e in plan.entries
        ]
    if isinstance(plan, s.PlanMarkdown):
        where = f" ({plan.path})" if isinstance(plan.path, str) else ""
        return [f"[plan {plan.plan_id}] markdown{where}"] + [
            "  " + line for line in plan.content.splitlines()
        ]
    return [f"[plan {plan.plan_id}] file {plan.uri}"]
