"""Plan operations: plans by id, replaced with ``plan_update``, dismissed with ``plan_removed``.

Spec: v1/plan-operations.md (PROVISIONAL); clauses PLANOP-01 .. PLANOP-08. The feature was
stabilized on 2026-11-20, after the stable schema of 2026-11-02; these shapes are those of
``schema.unstable.json`` of 2026-11-02, and every type here is provisional until a stable schema
confirms it (spec_notes/decisions.md, provisional-features).

A client opts in with ``clientCapabilities.plan: {}`` (PLANOP-01); an agent then keeps several
plans, each named by its ``planId`` (PLANOP-03), and sends each one whole (PLANOP-04). Without the
capability the agent sends the legacy ``plan`` update instead (PLANOP-02, agent-plan.mdx).

The sources disagree on the Markdown form (spec-gap plan-file-variant): the unstable schema has a
``file`` variant with a ``uri``, the stabilization announcement a Markdown plan with an absolute
``path``. Both are read here: ``PlanFile`` as in the schema, and ``PlanMarkdown.path`` as in the
announcement (the one field of this page that is in neither schema file).
"""

from typing import ClassVar, List, Union

import attrs

from ._base import Meta, Unset, field, tagged_union
from .agent_plan import PlanEntry

__all__ = [
    "PlanId",
    "PlanCapabilities",
    "PlanItems",
    "PlanMarkdown",
    "PlanFile",
    "PlanUpdateContent",
    "PlanUpdate",
    "PlanRemoved",
]

#: What makes these types provisional (read by ``acpref.schema.PROVISIONAL_PAGES``).
PROVISIONAL = (
    "plan operations: stabilized 2026-11-20; shape from schema.unstable.json of 2026-11-02"
)

#: Unique identifier for a plan within a session. Provisional. Spec: v1/plan-operations.md.
PlanId = str


@attrs.frozen(kw_only=True)
class PlanCapabilities:
    """Capabilities for receiving ``plan_update`` and ``plan_removed`` session updates.

    Provisional (unstable schema of 2026-11-02): ``clientCapabilities.plan: {}`` means the client
    can receive both update types (PLANOP-01). Spec: v1/plan-operations.md.
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class PlanItems:
    """A plan represented as structured entries.

    Provisional (unstable schema of 2026-11-02). When updating an item-based plan, the agent
    sends the complete list of its entries with their current status (PLANOP-04); the client
    replaces that plan with each update (PLANOP-05). Spec: v1/plan-operations.md.
    """

    type: ClassVar[str] = "items"

    plan_id: PlanId = field(required=True)
    """The plan ID to update."""
    entries: List[PlanEntry] = field(required=True, default_on_error=True, skip_invalid_items=True)
    """The list of tasks to be accomplished.

    When updating an item-based plan, the agent must send a complete list of all entries with their
    current status. The client replaces that plan with each update.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class PlanMarkdown:
    """A plan represented as raw Markdown content.

    Provisional (unstable schema of 2026-11-02). ``path`` is not in that schema: the announcement
    of 2026-11-20 says "A Markdown plan can name its file with an absolute ``path``. Clients do
    not need the file to display it." (PLANOP-08; spec-gap plan-file-variant).
    Spec: v1/plan-operations.md.
    """

    type: ClassVar[str] = "markdown"

    plan_id: PlanId = field(required=True)
    """The plan ID to update."""
    content: str = field(required=True)
    """Markdown content for the plan."""
    # spec PLANOP-08 (provisional): an absolute path naming the plan's file; display needs none.
    path: str | Unset = field(provisional=True)
    """The absolute path of the plan's Markdown file. Clients do not need the file to display the
    plan (announcement of 2026-11-20).
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class PlanFile:
    """A plan represented by a file URI.

    Provisional (unstable schema of 2026-11-02), and perhaps dropped when the feature was
    stabilized in favour of ``PlanMarkdown.path``: the rules report it as a warning, acpref never
    sends it (spec-gap plan-file-variant). Spec: v1/plan-operations.md.
    """

    type: ClassVar[str] = "file"

    plan_id: PlanId = field(required=True)
    """The plan ID to update."""
    uri: str = field(required=True)
    """The URI of the file containing the plan."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: Updated content for a plan, tagged by ``type``. Provisional. Spec: v1/plan-operations.md.
PlanUpdateContent = Union[PlanItems, PlanFile, PlanMarkdown]
tagged_union(PlanUpdateContent, tag="type")


@attrs.frozen(kw_only=True)
class PlanUpdate:
    """Session update: the whole content of the plan identified by its ``planId``.

    Provisional (unstable schema of 2026-11-02); sent only to a client that advertised
    ``clientCapabilities.plan`` (PLANOP-01). Spec: v1/plan-operations.md.
    """

    session_update: ClassVar[str] = "plan_update"

    plan: PlanUpdateContent = field(required=True)
    """The updated plan content."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class PlanRemoved:
    """Session update: removal notice for the plan identified by ``planId`` (PLANOP-06).

    Provisional (unstable schema of 2026-11-02). Spec: v1/plan-operations.md.
    """

    session_update: ClassVar[str] = "plan_removed"

    plan_id: PlanId = field(required=True)
    """The plan ID to remove."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
