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
    """Human-readable description of what this task aims to accomplish."""
    priority: PlanEntryPriority = field(required=True)
    """The relative importance of this task. Used to indicate which tasks are most critical to the
    overall goal.
    """
    status: PlanEntryStatus = field(required=True)
    """Current execution status of this task."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class Plan:
    """Session update: the agent's whole current plan.

    Spec: agent-plan.mdx
    """

    session_update: ClassVar[str] = "plan"

    entries: List[PlanEntry] = field(required=True, default_on_error=True, skip_invalid_items=True)
    """The list of tasks to be accomplished.

    When updating a plan, the agent must send a complete list of all entries with their current
    status. The client replaces the entire plan with each update.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
