"""The proof table: every MUST / MUST NOT clause the oracle can emit, and the one-defect peer
whose run fails on it (``spec_notes/proof.md``).

``python tests/proof_table.py --update`` writes the table from the current tests;
``tests/test_proof_table.py`` fails when the file in the repository differs from what this
module produces, as ``acpref spec --update-register`` keeps ``spec_notes/clauses.tsv``.

**What the oracle can emit at MUST** (the rows): a clause id written as a string literal in the
code of the oracle (``acpref/_core``, the rules that ``validate`` applies and the live sides
share; ``acpref/oracle``; ``acpref/testing``, the scenarios of ``check-agent`` and the steps of
``check-client``, whose ``clauses`` lists are literals too) whose level (``register.level_of``:
the keyword of its quoted sentence) is MUST or MUST NOT. A clause id reaches a finding or a
report row only through such a literal (no code builds one from parts), so this is a superset:
a literal that no rule can emit still gets a row, and needs a reason. A literal that only
names the clause of a ``finding(..., level=WARNING)`` (EXT-04's unknown keys: forward
compatibility) is no MUST the oracle emits. One row per side the
sentence binds (the register's ``side``; ``both`` is a row for each side).

**What proves a row** (the peers, read from the tests' own tables):

* ``check_agents.DEFECTS`` (``tests/broken/check_agents.py``): ``check-agent`` on that agent,
  only its ``scenario``; ``test_check_agent_catches_the_defect_on_its_clause`` asserts a FAIL on
  ``clause`` at MUST / MUST NOT with evidence, and ``ok: false``.
* ``check_clients.DEFECTS`` (``tests/broken/check_clients.py``): ``check-client`` on that client;
  ``test_one_defect_client_fails_its_must_clause`` asserts the same, and that nothing but its
  clause (and the ``also`` its docstring names) fails the run.
* ``agents.BROKEN`` / ``clients.BROKEN`` (``tests/broken/agents.py``, ``clients.py``): the
  transcript of a run (AgentDriver, or ``acpref proxy --record``) through ``validate``;
  ``test_broken_agent_is_caught_with_its_clause`` / ``test_broken_client_is_caught_with_its_clause``
  assert the finding on the clause, blamed on that side, at MUST, and ``ok: false``. Only the
  peers whose clause is graded at MUST count here (the others prove SHOULD or spec-gap levels).
* ``capability_agents.BROKEN`` (``tests/broken/capability_agents.py``): the same for the
  capability-gated features (compaction, notices, elicitation, subagents), each through a drive
  that advertises its feature; ``test_capability_agent_is_caught_with_its_clause`` asserts
  besides that no other clause fails the run.

A row without a peer has a reason in ``REASONS``: no proving peer yet (and what one would
need), or the wire cannot show it (then the rule must not emit it at MUST: such a row is a
defect of the oracle, listed in ``MUST_UNOBSERVABLE`` and reported, never hidden).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "broken"
TABLE = ROOT / "spec_notes" / "proof.md"
ORACLE_DIRS = ("acpref/_core", "acpref/oracle", "acpref/testing")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BROKEN))

from acpref._core.register import FAILING, clauses, level_of  # noqa: E402

_ID = re.compile(r"^[A-Z]+-\d\d$")


class Proof(NamedTuple):
    clause: str
    side: str
    peer: str  # module.Class in tests/broken
    tool: str  # check-agent, check-client, validate
    scenario: str
    test: str  # tests/file.py::test_name


def emittable() -> Dict[str, List[str]]:
    """Every clause id the oracle's code names as a literal, graded at MUST: id -> modules."""
    found: Dict[str, Set[str]] = {}
    for folder in ORACLE_DIRS:
        for path in sorted((ROOT / folder).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            warned = _warning_only(tree)
            for node in ast.walk(tree):
                value = getattr(node, "value", None)
                if isinstance(node, ast.Constant) and isinstance(value, str) and _ID.match(value):
                    if id(node) not in warned:
                        found.setdefault(value, set()).add(f"{folder}/{path.name}")
    return {c: sorted(m) for c, m in sorted(found.items()) if level_of(c) in FAILING}


def _warning_only(tree: ast.AST) -> Set[int]:
    """The clause literals of ``finding("X-NN", ..., level=WARNING)`` calls: a finding forced to
    level ``warning`` (forward compatibility, EXT-04's unknown keys) is never emitted at MUST."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "finding":
            forced = [k for k in node.keywords if k.arg == "level"]
            if forced and getattr(forced[0].value, "id", None) == "WARNING" and node.args:
                out.add(id(node.args[0]))
    return out


def rows() -> List[Tuple[str, str]]:
    """(clause, side) for every emittable MUST clause and every side its sentence binds."""
    register = clauses()
    out = []
    for clause in emittable():
        side = register[clause].side
        out.extend((clause, s) for s in (("agent", "client") if side == "both" else (side,)))
    return out


def _client_scenario(clause: str) -> str:
    from acpref.testing._client_steps import _PARTS, STEP_CLAUSES

    for part, part_clauses in _PARTS:
        if clause in part_clauses:
            return f"step 1, {part.__name__.strip('_')}"
    if clause in STEP_CLAUSES["cancellation"]:
        return "step 2, cancellation"
    return "the whole run's transcript"


def proofs() -> List[Proof]:
    """The one-defect peers of the tests, each with the clause its test fails at MUST."""
    import agents
    import capability_agents
    import check_agents
    import check_clients
    import clients

    out = []
    at_must = emittable()
    test = "tests/test_check_agent.py::test_check_agent_catches_the_defect_on_its_clause"
    for name, cls in check_agents.DEFECTS.items():
        out.append(Proof(cls.clause, "agent", f"check_agents.{name}", "check-agent", cls.scenario, test))
    test = "tests/test_check_client.py::test_one_defect_client_fails_its_must_clause"
    for name, cls in check_clients.DEFECTS.items():
        scenario = _client_scenario(cls.clause)
        out.append(Proof(cls.clause, "client", f"check_clients.{name}", "check-client", scenario, test))
    test = "tests/test_oracle_broken.py::test_broken_agent_is_caught_with_its_clause"
    for name, cls in agents.BROKEN.items():
        if cls.expect in at_must:
            out.append(Proof(cls.expect, "agent", f"agents.{name}", "validate", cls.drive, test))
    test = "tests/test_oracle_broken.py::test_capability_agent_is_caught_with_its_clause"
    for name, cls in capability_agents.BROKEN.items():
        if cls.expect in at_must:
            peer = f"capability_agents.{name}"
            out.append(Proof(cls.expect, "agent", peer, "validate", cls.drive, test))
    test = "tests/test_oracle_broken.py::test_broken_client_is_caught_with_its_clause"
    for name, cls in clients.BROKEN.items():
        if cls.expect in at_must:
            scenario = "proxy --record"
            out.append(Proof(cls.expect, "client", f"clients.{name}", "validate", scenario, test))
    return sorted(out)


#: Why a row has no proving peer. "no peer yet: ..." is work left (what a peer would need);
#: "the wire cannot show it: ..." would make the rule's MUST level wrong (MUST_UNOBSERVABLE).
REASONS: Dict[Tuple[str, str], str] = {
    ('EXT-07', 'client'): (
        "no rule emits it on the client: check-client judges the answer to its custom request under RPC-04 and EXT-08 (the literal is only in check-agent's scenarios); reported"
    ),
    ('INIT-13', 'agent'): (
        "no rule emits it on the agent: the one INIT-13 finding (session_modes.py) blames the client; an agent using an omitted capability is filed under that capability's clause (FS-01, FS-02, TERM-01, ...)"
    ),
}

#: Rows the oracle emits at MUST although the wire cannot show them: defects of the oracle,
#: reported to the lead (none may be hidden by a reason alone).
MUST_UNOBSERVABLE: Dict[Tuple[str, str], str] = {}


def render() -> str:
    """The text of spec_notes/proof.md for the current code and tests."""
    emitted = emittable()
    all_rows = rows()
    by_row: Dict[Tuple[str, str], List[Proof]] = {}
    for proof in proofs():
        by_row.setdefault((proof.clause, proof.side), []).append(proof)
    proven = [r for r in all_rows if r in by_row]
    proven_ids = {c for c, _ in proven}
    whole = [c for c in emitted if all(r in by_row for r in all_rows if r[0] == c)]
    lines = [_HEADER.strip("\n"), ""]
    lines.append(
        f"**{len(emitted)} wire-observable MUST / MUST NOT clauses** (ids the oracle can emit "
        f"at MUST), **{len(all_rows)} rows** (clause x side it binds); **{len(proven)} rows** "
        f"have a proving peer ({len(proven_ids)} clauses on at least one side, {len(whole)} on "
        f"every side), **{len(all_rows) - len(proven)} rows** have none yet."
    )
    lines += ["", "## Rows with a proving peer", ""]
    lines.append("| clause | side | level | peer (tests/broken) | tool: scenario | verdict |")
    lines.append("|---|---|---|---|---|---|")
    for row in all_rows:
        for p in by_row.get(row, []):
            verdict = f"FAIL at {level_of(p.clause)}, ok: false"
            lines.append(
                f"| {p.clause} | {p.side} | {level_of(p.clause)} | `{p.peer}` "
                f"| {p.tool}: {p.scenario} | {verdict} |"
            )
    lines += ["", "## Rows without a proving peer", ""]
    lines.append("| clause | side | level | emitted by | reason |")
    lines.append("|---|---|---|---|---|")
    for row in all_rows:
        if row not in by_row:
            clause, side = row
            where = ", ".join(m.rsplit("/", 1)[1] for m in emitted[clause])
            reason = MUST_UNOBSERVABLE.get(row) or REASONS.get(row, "(no reason given)")
            lines.append(f"| {clause} | {side} | {level_of(clause)} | {where} | {reason} |")
    lines += ["", "## The tests behind each peer", ""]
    tests = sorted({(p.tool, p.test) for rows_ in by_row.values() for p in rows_})
    lines += [f"* {tool}: `{test}`" for tool, test in tests]
    return "\n".join(lines) + "\n"


_HEADER = """
# The proof table: a one-defect peer for every MUST the wire can show

Generated by `python tests/proof_table.py --update` from the tests' own tables of one-defect
peers; `tests/test_proof_table.py` fails when this file differs from what the generator produces
(do not edit by hand). Issue #34, "A proof for every MUST the wire can show".

**Rows.** A clause id written as a string literal in the oracle's code (`acpref/_core`: the rules
`validate` applies, shared with the live sides; `acpref/oracle`; `acpref/testing`: the scenarios
of `check-agent` and the steps of `check-client`) whose level is MUST or MUST NOT
(`register.level_of`: the keyword of the sentence `quotes.tsv` quotes for it). Every id a finding
or a report row carries comes from such a literal, so the list is complete; it may hold an id no
rule emits, which then needs a reason below. A literal that only names the clause of a
`finding(..., level=WARNING)` call (EXT-04's unknown keys, forward compatibility) is left out:
that finding is never at MUST. A clause whose sentence binds both sides
(register side `both`) has a row per side.

**Proofs.** A peer in `tests/broken/` with one defect on an otherwise conforming core: the
`DEFECTS` of `check_agents.py` (run by `check-agent`) and of `check_clients.py` (run by
`check-client`), and the `BROKEN` peers of `agents.py` / `clients.py` /
`capability_agents.py` whose transcript `validate` judges (those whose clause is graded at MUST;
a capability-gated feature is driven by a client that advertises it, so that its gate's clause
stays silent). Each one's test asserts a FAIL on its
clause at MUST / MUST NOT, blamed on its side, and a run that ends `ok: false`.

**Conforming peers end with no MUST FAIL:** acpref's own agent
(`tests/test_check_agent.py::test_well_behaved_agent_passes_every_scenario`), its echo agent
(`::test_echo_agent_passes_every_scenario`), the raw agent and real agents' harmless habits
(`::test_harmless_agent_has_no_failure`, `check_agents.HARMLESS`), the unbent raw agent under
`validate` (`tests/test_oracle_broken.py::test_clean_raw_agent_has_no_findings`), the raw agents
using compaction, notices, elicitation and subagents through the drives that advertise them
(`::test_feature_agent_has_no_findings`, `capability_agents.FEATURES`), acpref's client
(`tests/test_check_client.py::test_conforming_client_passes_every_step`), the client on the
official TypeScript SDK (`::test_typescript_sdk_client_passes`), and the client on the official
Python SDK (`::test_python_sdk_client_fails_only_its_sdks_null_terminal_answer`: one true MUST
FAIL, OVERVIEW-01 for the SDK's `"result": null` to an unadvertised `terminal/create`,
recorded in spec_notes/peer-divergences.md). The official SDKs have no agent peer here.
"""


def main(argv: List[str]) -> int:
    text = render()
    if argv[1:] == ["--update"]:
        TABLE.write_text(text, encoding="utf-8")
        print(f"wrote {TABLE.relative_to(ROOT)}")
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
