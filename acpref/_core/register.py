"""The clause register and the levels of findings: what fails a run, and what is only reported.

Spec: ``spec_notes/spec/clauses.tsv`` (the spec the repository carries); a copy ships with the
package (``clauses.tsv`` here, checked identical to the carried one and to the first columns of
``spec_notes/clauses.tsv`` by the guard test) so that an installed acpref can name levels
without the repository.

Clause ids cited in code are ``PAGE-NN`` (``SETUP-05``). Where the spec is silent acpref decides,
and a finding names the decision as ``spec-gap:<name>`` (see ``spec_notes/decisions.md``).

**Levels of a finding** (what a report says; one place defines them: here):

* ``MUST`` / ``MUST NOT``: a sentence of the spec says it. ``quotes.tsv`` gives, for every clause
  a rule can report, the sentence and its level: the RFC 2119 keyword *of that sentence* (a page
  sentence, a schema description or ``required`` list, or a sentence of JSON-RPC 2.0, which ACP
  follows). The level comes from the sentence, never from the register's paraphrase: a clause the
  register calls SHOULD whose sentence says MUST is reported at MUST, and the other way round.
  These fail a run (the CLI's exit status, the pytest fixtures, ``Report.ok``,
  ``CheckReport.ok``).
* ``SHOULD`` / ``SHOULD NOT`` / ``MAY``: reported; never fail unless asked (``fail_on``,
  ``--fail-on SHOULD``).
* ``spec-gap``: acpref's own reading where the spec is silent or ambiguous: a decision
  (``spec-gap:<name>``, in ``spec_notes/decisions.md`` with why no sentence settles it), or a
  clause of the register that no sentence with a keyword states (decisions.md ``unquoted``).
  Reported, never failing by default; ``strict_gaps`` (``--strict-gaps``, the plugin's
  ``--acp-strict-gaps``) makes them fail.
* ``warning``: forward compatibility. A field or capability key that only the unstable schema
  defines, or that no schema defines: reported with where it comes from; the message is still
  judged on everything else. A clause of a *provisional* feature (stabilized after the stable
  schema, its shape from the unstable one: ``is_provisional``) is graded by its sentence like any
  other, but a rule that rests on the unstable shape alone (a ``required`` list of
  ``schema.unstable.json``, a definition) is a warning until a stable schema confirms that shape
  (spec_notes/decisions.md, provisional-features). Never failing by default; ``fail_on``
  ``("warning",)`` (``--fail-on warning``) makes them fail.

**Strength** is a different thing: how acpref's *own* agent and client sides enforce a rule live
(refusing a request, refusing to send). A decision of acpref (``GAP_LEVELS``) can be enforced at
MUST strength live while the oracle only reports it as ``spec-gap`` in other peers.
"""

from __future__ import annotations

import functools
from typing import Dict, Iterable, Optional, Tuple

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
    "FAIL_ON",
    "CLI_FLAGS",
    "below_the_fold",
    "count_levels",
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
    """The sentence of the spec that states a clause: where it is, its level, and its words.

    ``source`` is a page of ``spec_notes/spec/v1/`` (``session-setup.mdx``), JSON-RPC 2.0
    (``jsonrpc-2.0.md``), a schema description (``schema.json#/$defs/<Name>``; for a feature
    stabilized after it, ``schema.unstable.json#/$defs/<Name>``) or a schema ``required`` list
    (``schema.json#/$defs/<Name>/required``, quoted ``required: a, b``).
    ``level`` is the RFC 2119 keyword of the sentence itself (MUST for a ``required`` list).
    """

    source: str
    level: str
    text: str


@functools.lru_cache(maxsize=None)
def quotes() -> Dict[str, Quote]:
    """The quoted sentence of every clause a rule can report, with its level (``quotes.tsv``)."""
    from importlib import resources

    text = resources.files(__package__).joinpath("quotes.tsv").read_text(encoding="utf-8")
    out: Dict[str, Quote] = {}
    for line in text.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 4 and fields[0]:
            out[fields[0]] = Quote(fields[1], fields[2], fields[3])
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
    "spec-gap:content-after-turn": MUST,
    "spec-gap:released-terminal": SHOULD,
    "spec-gap:cancel-race": SHOULD,
    "spec-gap:duplicate-id": MUST,
    "spec-gap:unknown-cancel-id": SHOULD,
    "spec-gap:exit-on-eof": SHOULD,
    "spec-gap:elicitation-secret-heuristics": SHOULD,
    "spec-gap:close-order": SHOULD,
    "spec-gap:cancel-ignored": SHOULD,
    "spec-gap:config-crossing": MUST,
    "spec-gap:permission-crossing": MUST,
    "spec-gap:plan-file-variant": SHOULD,
    "spec-gap:notice-in-replay": SHOULD,
    "spec-gap:unfinished-tool-call": SHOULD,
    "spec-gap:resume-crossing": MUST,
    "spec-gap:child-crossing-reopen": MUST,
    "spec-gap:child-cancel-crossing": MUST,
    "spec-gap:reopen-failed-crossing": MUST,
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

    The quoted sentence gives it (``quotes.tsv``). A clause without one is acpref's reading of
    the spec (the register's paraphrase, an "implied" rule, a definition, a schema shape the docs
    contradict): ``spec-gap``, or ``warning`` for a provisional feature's shape.
    """
    if is_gap(clause):
        return SPEC_GAP
    found = clauses().get(clause)
    if found is None:
        return SPEC_GAP
    quote = quotes().get(clause)
    provisional = _PROVISIONAL_MARK in found.requirement
    if quote is not None and not (provisional and quote.source.endswith("/required")):
        return quote.level
    if provisional:
        # spec-gap provisional-features: a shape of the unstable schema alone is a warning.
        return WARNING
    # spec-gap unquoted: no sentence with an RFC 2119 keyword states the clause.
    return SPEC_GAP


#: The marker the register puts on clauses whose shape comes from the unstable schema.
_PROVISIONAL_MARK = "[provisional"


def is_provisional(clause: str) -> bool:
    """True for a clause of a feature stabilized after the stable schema of 2026-11-02.

    Such a clause's shape comes from ``schema.unstable.json`` and draft pages (its requirement
    says ``[provisional: ...]``). Its findings are graded by their sentence, but a rule on the
    unstable shape alone is reported at level ``warning`` until a stable schema confirms it
    (``level_of``); the live sides enforce it at its register level either way (``strength_of``).
    """
    found = clauses().get(clause)
    return found is not None and _PROVISIONAL_MARK in found.requirement


#: The levels ``fail_on`` may name (every level there is), and what each one makes fail.
#: ``MUST`` adds nothing (MUST and MUST NOT always fail); ``warning`` makes the
#: forward-compatibility notes fail, for a project that wants to hear of every field it sends
#: that the stable schema does not define.
FAIL_ON: Dict[str, Tuple[str, ...]] = {
    MUST: (MUST, MUST_NOT),
    SHOULD: (SHOULD, SHOULD_NOT),
    MAY: (MAY,),
    SPEC_GAP: (SPEC_GAP,),
    WARNING: (WARNING,),
}


def fails(level: str, *, strict_gaps: bool = False, fail_on: Tuple[str, ...] = ()) -> bool:
    """True when a finding (or a failed check) of this level fails a run.

    MUST and MUST NOT always fail; ``strict_gaps`` adds ``spec-gap``; ``fail_on`` adds the levels
    of ``FAIL_ON`` it names (``("SHOULD",)``: SHOULD and SHOULD NOT; ``("warning",)``: the
    forward-compatibility notes). Nothing else fails.
    """
    if level in FAILING or (strict_gaps and level == SPEC_GAP):
        return True
    return any(level in FAIL_ON[named] for named in fail_on)


#: The option that makes each non-failing level fail a run, as the command line spells it.
CLI_FLAGS: Dict[str, str] = {
    SHOULD: "--fail-on SHOULD",
    SHOULD_NOT: "--fail-on SHOULD",
    MAY: "--fail-on MAY",
    SPEC_GAP: "--strict-gaps",
    WARNING: "--fail-on warning",
}


def count_levels(levels: Iterable[str]) -> str:
    """``1 MUST, 2 SHOULD, 3 spec-gaps``: how many of each level, each under its own name, in
    the order of ``LEVELS`` (``none`` for no level at all)."""
    counts: Dict[str, int] = {}
    for level in levels:
        counts[level] = counts.get(level, 0) + 1
    plural = (SPEC_GAP, WARNING)  # "2 spec-gaps", but "2 SHOULD"
    parts = [
        f"{counts[level]} {level}{'s' if counts[level] != 1 and level in plural else ''}"
        for level in LEVELS
        if level in counts
    ]
    return ", ".join(parts) or "none"


def below_the_fold(
    levels: Iterable[str],
    *,
    strict_gaps: bool = False,
    fail_on: Tuple[str, ...] = (),
    flags: Optional[Dict[str, str]] = None,
) -> str:
    """The last line of every judging command: the findings that fail the run, by level, then
    those that do not, and the option that would fail on each (so that nothing important hides
    below the fold). ``levels``: the level of every finding, failing or not.

    It is drawn from ``fails``, as the exit status is, so that the two never disagree.
    """
    flags = CLI_FLAGS if flags is None else flags
    levels = list(levels)
    failing = [level for level in levels if fails(level, strict_gaps=strict_gaps, fail_on=fail_on)]
    rest = [level for level in levels if not fails(level, strict_gaps=strict_gaps, fail_on=fail_on)]
    head = f"failing the run: {count_levels(failing)}" if failing else ""
    if not rest:
        return head or "not failing the run: no findings"
    options = []
    for level in LEVELS:
        option = flags.get(level)
        if level in rest and option and option not in options:
            options.append(option)
    tail = f"; {', '.join(options)} would fail on them" if options else ""
    below = f"not failing the run: {count_levels(rest)}{tail}"
    return f"{head}; {below}" if head else below
