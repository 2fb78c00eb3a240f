"""Rules of plan operations (PROVISIONAL): ``plan_update`` and ``plan_removed``.

Spec: v1/plan-operations.md; clauses PLANOP-01 .. PLANOP-08. The shape comes from the unstable
schema of 2026-11-02 (stabilized 2026-11-20). The capability gate is a sentence of the page and
fails a run; the shape alone (PLANOP-03, PLANOP-08) is a warning (``Finding.provisional``); the
live sides obey the MUSTs (spec_notes/decisions.md, provisional-features).

* The agent sends either update only to a client that advertised ``clientCapabilities.plan``
  (PLANOP-01); otherwise it falls back to the legacy ``plan`` update (PLANOP-02, which only the
  agent's own behaviour can show: tests/test_spec_plan_operations.py).
* Every plan content names its ``planId`` and ``type`` (PLANOP-03; the codec checks the shape).
* A Markdown plan's ``path`` is absolute (PLANOP-08, OVERVIEW-06); the ``file`` variant of the
  unstable schema is reported, as a warning, as possibly dropped at stabilization (spec-gap
  plan-file-variant).

Both updates are a turn's content, like the legacy ``plan`` (``prompt_turn.TURN_CONTENT``: sent
during a turn or a load replay, and replayed by acpref's agents; spec-gap plan-operations-turn).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from .book import Message, update_check
from .findings import Finding, Party, finding
from .values import is_absolute_path

if TYPE_CHECKING:  # pragma: no cover
    from .facts import ConnectionFacts as ProtocolState

__all__ = ["CAPABILITY", "KINDS"]

A = Party.AGENT

#: spec PLANOP-01: the client capability that opts in to both updates.
CAPABILITY = "plan"
#: The ``sessionUpdate`` tags of plan operations.
KINDS = frozenset({"plan_update", "plan_removed"})


@update_check(*KINDS)
def _plan_operation(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    update = m.params.get("update")
    assert isinstance(update, dict)  # looked up by its kind
    kind = update.get("sessionUpdate")
    if not state.gate_open(CAPABILITY, Party.CLIENT):
        # spec PLANOP-01: only to a client that advertised clientCapabilities.plan (PLANOP-02:
        # the others get the legacy plan update).
        yield finding(
            "PLANOP-01", A, f"{kind} sent, but the client did not advertise 'plan'", m.index
        )
    if kind == "plan_removed":
        if not isinstance(update.get("planId"), str):
            # spec PLANOP-03: plan_removed names its plan.
            yield finding("PLANOP-03", A, "plan_removed without a planId", m.index)
        return
    plan = update.get("plan")
    if not (isinstance(plan, dict) and isinstance(plan.get("planId"), str) and "type" in plan):
        # spec PLANOP-03: the plan object is required, tagged by type, and names its planId.
        yield finding("PLANOP-03", A, "plan_update without a plan naming type and planId", m.index)
        return
    if plan.get("type") == "file":
        # spec-gap plan-file-variant: the file{uri} variant of the unstable schema may be gone
        # from the stabilized shape (a Markdown plan with a path instead): a warning.
        yield finding(
            "spec-gap:plan-file-variant",
            A,
            f"plan {plan['planId']!r} uses the 'file' variant; send 'markdown' with a 'path'",
            m.index,
        )
    if plan.get("type") == "markdown" and "path" in plan and not is_absolute_path(plan["path"]):
        # spec PLANOP-08: a Markdown plan names its file with an absolute path.
        yield finding(
            "PLANOP-08", A, f"Markdown plan path {plan['path']!r} is not absolute", m.index
        )
