"""The clause register and the levels of findings: what fails a run, and what is only reported.

Spec: ``spec_notes/spec/clauses.tsv`` (the spec the repository carries); a copy ships with the
package (``clauses.tsv`` here, checked identical to the carried one and to the first columns of
``spec_notes/clauses.tsv`` by the guard test) so that an installed acpref can name levels
without the repository.

Clause ids cited in code are ``PAGE-NN`` (``SETUP-05``). Where the spec is silent acpref decides,
and a finding names the decision as ``spec-gap:<name>`` (see ``spec_notes/decisions.md``).

**Levels of a finding** (what a report says; one place defines them: here):

* ``MUST`` / ``MUST NOT``: a sentence of the spec says it, quoted in ``quotes.tsv`` (a page
  sentence, a schema description, or a schema ``required`` list). These fail a run (the CLI's exit
  status, the pytest fixtures, ``Report.ok``, ``CheckReport.ok``). A MUST clause of the register
  without a quote is reported as ``spec-gap``.
* ``SHOULD`` / ``SHOULD NOT`` / ``MAY``: reported as warnings; never fail.
* ``spec-gap``: acpref's own reading where the spec is silent or ambiguous
  (``spec-gap:<name>``). Reported, never failing by default; ``strict_gaps`` (``--strict-gaps``,
  the plugin's ``--acp-strict-gaps``) makes them fail.
* ``warning``: forward compatibility. A field or capability key that only the unstable schema
  defines, or that no schema defines: reported with where it comes from; the message is still
  judged on everything else. Every finding on a *provisional* clause (``is_provisional``: a
  feature stabilized after the stable schema, whose shape comes from the unstable one) is
  reported at this level too, while acpref's own sides enforce it at the register's level
  (spec_notes/decisions.md, provisional-features).

**Strength** is a different thing: how acpref's *own* agent and client sides enforce a rule live
(refusing a request, refusing to send). A decision of acpref (``GAP_LEVELS``) can be enforced at
MUST strength live while the oracle only reports it as ``spec-gap`` in other peers.
"""

from __future__ import annotations

import functools
from typing import Dict, Optional, Tuple

import attrs

__all__ = [
    "Clause",
    "clauses",
    "quotes",
    "quote_of",
    "Quote",
    "level_of",
    "strength_of",
    "fails",
    "is_provisional",
    "GAP_LEVELS",
    "MUST",
    "MUST_NOT",
    "SHOULD",
    "SHOULD_NOT",
    "MAY",
    "SPEC_GAP",
    "WARNING",
    "LEVELS",
    "FAILING",
]

MUST, MUST_NOT, SHOULD, SHOULD_NOT, MAY = "MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY"
SPEC_GAP, WARNING = "spec-gap", "warning"
#: Every level, most severe first (the order reports print findings in).
LEVELS: Tuple[str, ...] = (MUST, MUST_NOT, SHOULD, SHOULD_NOT, MAY, SPEC_GAP, WARNING)
#: The levels that fail a run.
FAILING: Tuple[str, ...] = (MUST, MUST_NOT)


@attrs.frozen
class Clause:
    id: str
    page: str
    section: str
    side: str
    level: str
    requirement: str
    test_hint: str


@functools.lru_cache(maxsize=None)
def clauses() -> Dict[str, Clause]:
    """All clauses by id, in register order."""
    from importlib import resources  # on first use: it costs a few ms at every start-up

    text = resources.files(__package__).joinpath("clauses.tsv").read_text(encoding="utf-8")
    out: Dict[str, Clause] = {}
    for line in text.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 7:
            out[fields[0]] = Clause(*fields[:7])
    return out


@attrs.frozen
class Quote:
    """The sentence of the spec that states a MUST clause: where it is, and its words."""

    source: str  # a page (``session-setup.mdx``) or ``schema.json#/$defs/<Name>``
    text: str


@functools.lru_cache(maxsize=None)
def quotes() -> Dict[str, Quote]:
    """The quoted sentence of every MUST / MUST NOT clause a rule can report (``quotes.tsv``)."""
    from importlib import resources

    text = resources.files(__package__).joinpath("quotes.tsv").read_text(encoding="utf-8")
    out: Dict[str, Quote] = {}
    for line in text.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 3 and fields[0]:
            out[fields[0]] = Quote(fields[1], fields[2])
    return out


def quote_of(clause: str) -> Optional[Quote]:
    """The spec's sentence for ``clause``, if the table has one."""
    return quotes().get(clause)


#: How strongly acpref's own sides enforce its decisions live (spec_notes/decisions.md). In the
#: oracle's reports every one of them is level ``spec-gap``, whatever its strength here.
GAP_LEVELS: Dict[str, str] = {
    "spec-gap:unknown-session": MUST,
    "spec-gap:concurrent-prompt": MUST,
    "spec-gap:initialize-twice": SHOULD,
    "spec-gap:content-outside-turn": SHOULD,
    "spec-gap:released-terminal": SHOULD,
    "spec-gap:cancel-race": SHOULD,
    "spec-gap:duplicate-id": MUST,
    "spec-gap:unknown-cancel-id": SHOULD,
    "spec-gap:exit-on-eof": SHOULD,
    "spec-gap:elicitation-secret-heuristics": SHOULD,
    "spec-gap:close-order": SHOULD,
    "spec-gap:cancel-ignored": SHOULD,
    "spec-gap:plan-file-variant": SHOULD,
}


def is_gap(clause: str) -> bool:
    """True for acpref's own readings (``spec-gap:<name>``)."""
    return clause.startswith("spec-gap:")


def strength_of(clause: str) -> str:
    """How acpref's own sides enforce ``clause`` live: the register's level, or ``GAP_LEVELS``."""
    if clause in GAP_LEVELS:
        return GAP_LEVELS[clause]
    found = clauses().get(clause)
    return found.level if found is not None else MUST


def level_of(clause: str) -> str:
    """The level a finding of ``clause`` is reported at (see the module's docstring).

    A MUST / MUST NOT clause fails a run only when a sentence of the spec says it: the clause has
    a quote in ``quotes.tsv``. Without one it is acpref's reading of the spec (the register's
    paraphrase, an "implied" rule, a schema shape the docs contradict) and is reported as
    ``spec-gap`` (spec_notes/oracle.md lists them).
    """
    if is_gap(clause):
        return SPEC_GAP
    found = clauses().get(clause)
    if found is None:
        return SPEC_GAP
    if _PROVISIONAL_MARK in found.requirement:
        # spec-gap provisional-features: graded a warning until a stable schema confirms the shape.
        return WARNING
    if found.level in FAILING and clause not in quotes():
        return SPEC_GAP
    return found.level


#: The marker the register puts on clauses whose shape comes from the unstable schema.
_PROVISIONAL_MARK = "[provisional"


def is_provisional(clause: str) -> bool:
    """True for a clause of a feature stabilized after the stable schema of 2026-11-02.

    Such a clause's shape comes from ``schema.unstable.json`` and draft pages (its requirement
    says ``[provisional: ...]``). Its findings are reported at level ``warning`` until a stable
    schema confirms it; the live sides still enforce it at its register level (``strength_of``).
    """
    found = clauses().get(clause)
    return found is not None and _PROVISIONAL_MARK in found.requirement


def fails(level: str, *, strict_gaps: bool = False) -> bool:
    """True when a finding (or a failed check) of this level fails a run."""
    return level in FAILING or (strict_gaps and level == SPEC_GAP)
