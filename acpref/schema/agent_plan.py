"""Agent plans: the agent's list of tasks, sent whole with every change.

Spec: agent-plan.mdx; clauses PLAN-01 .. PLAN-06. A ``Plan`` is a session update; each one
carries the complete list (PLAN-04), and a client replaces its plan with it (PLAN-05).
"""

from typing import ClassVar, List

import attrs

from ._base import (
    Meta,
    Unset,
    WireEnum,
    field,
)

__all__ = [
    "PlanEntryPriority",
    "PlanEntryStatus",
    "PlanEntry",
    "Plan",
]


class PlanEntryPriority(WireEnum):
    """How important a plan entry is.

    Spec: agent-plan.mdx
    """

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class PlanEntryStatus(WireEnum):
    """Where a plan entry stands.

    Spec: agent-plan.mdx
    """

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@attrs.frozen(kw_only=True)
class PlanEntry:
    """One task of a plan.

    Spec: agent-plan.mdx
    """

    # spec PLAN-02: content, priority (high, medium, low) and status (pending, in_progress,
    # completed), each required.
    content: str = field(required=True)
    priority: PlanEntryPriority = field(required=True)
    status: PlanEntryStatus = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class Plan:
    """Session update: the agent's whole current plan.

    Spec: agent-plan.mdx
    """

    session_update: ClassVar[str] = "plan"

    entries: List[PlanEntry] = field(required=True, default_on_error=True, skip_invalid_items=True)
    meta: Meta | Unset = field(default_on_error=True)
