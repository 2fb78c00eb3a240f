"""The clause register: every normative clause of ACP v1 with its page, side and level.

Spec: ``spec_notes/spec/clauses.tsv`` (the spec the repository carries); a copy ships with the
package (``clauses.tsv`` here, checked identical to the carried one and to the first columns of
``spec_notes/clauses.tsv`` by the guard test) so that an installed acpref can name levels
without the repository.

Clause ids cited in code are ``PAGE-NN`` (``SETUP-05``). Where the spec is silent acpref decides,
and a finding names the decision as ``spec-gap:<name>`` (see ``spec_notes/decisions.md``).
"""

from __future__ import annotations

import functools
from typing import Dict

import attrs

__all__ = ["Clause", "clauses", "level_of", "GAP_LEVELS"]


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


#: Levels of acpref's own decisions where the spec is silent (spec_notes/decisions.md).
GAP_LEVELS: Dict[str, str] = {
    "spec-gap:unknown-session": "MUST",
    "spec-gap:concurrent-prompt": "SHOULD",
    "spec-gap:initialize-twice": "SHOULD",
    "spec-gap:content-outside-turn": "SHOULD",
    "spec-gap:released-terminal": "SHOULD",
    "spec-gap:cancel-race": "SHOULD",
    "spec-gap:duplicate-id": "MUST",
    "spec-gap:unknown-cancel-id": "SHOULD",
    "spec-gap:exit-on-eof": "SHOULD",
    "spec-gap:elicitation-secret-heuristics": "SHOULD",
}


def level_of(clause: str) -> str:
    """``MUST``, ``MUST NOT``, ``SHOULD``, ``SHOULD NOT`` or ``MAY`` for a clause or decision."""
    if clause in GAP_LEVELS:
        return GAP_LEVELS[clause]
    found = clauses().get(clause)
    return found.level if found is not None else "MUST"
