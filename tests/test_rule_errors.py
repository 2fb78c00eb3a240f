"""A rule's own bug is never swallowed; a message's ill-formed id is not a rule's bug.

Spec-gap: none settles this; acpref's decision rule-bug (spec_notes/decisions.md).
The core runs each rule on its own (``acpref._core.state._rule_failed``): a rule that raises
does not stop the others; ``TypeError: unhashable`` (a JSON array or object where an id or a
name is due) is the message's fault and that rule is silent; any other exception is acpref's bug,
raised as ``RuleError`` under ``RAISE_RULE_ERRORS`` (this suite sets it; ``acpref`` commands
set it from ``ACPREF_RULE_ERRORS=raise``) and otherwise logged on ``acpref.rules``. The rule book is built here from a small module of test rules, the
way the core builds its own from the pages (``RuleBook``), plus the core's real rules.
"""

from __future__ import annotations

import logging
import types
from typing import Any, Iterable

import pytest

from acpref._core import Party, ProtocolState, state
from acpref._core.book import RuleBook, check
from acpref._core.findings import Finding, finding
from acpref._core.pages import PAGES, PROVISIONAL

A, C = Party.AGENT, Party.CLIENT
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities": {}}}
#: The same, with the key that sets off the test rule's bug.
BUGGY = {**INITIALIZE, "params": {**INITIALIZE["params"], "bug": True}}


def _broken_rules() -> types.ModuleType:
    module = types.ModuleType("acpref_test_rules")

    @check("request", C, "initialize")
    def rule_with_a_bug(facts: Any, m: Any) -> Iterable[Finding]:
        if "bug" in m.raw["params"]:
            yield finding("INIT-01", m.sender, "found before the bug", m.index)
            raise ZeroDivisionError("a rule's own bug")

    @check("request", C, "initialize")
    def rule_keyed_on_a_name(facts: Any, m: Any) -> Iterable[Finding]:
        names = {m.raw["params"]["clientCapabilities"].get("name"): 1}  # unhashable on a list
        yield from ()
        assert names

    @check("request", C, "initialize")
    def rule_after_them(facts: Any, m: Any) -> Iterable[Finding]:
        yield finding("INIT-02", m.sender, "the rule after them still ran", m.index)

    for fn in (rule_with_a_bug, rule_keyed_on_a_name, rule_after_them):
        fn.__module__ = module.__name__
        setattr(module, fn.__name__, fn)
    return module


@pytest.fixture
def broken_book(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state, "RULES", RuleBook([_broken_rules(), *PAGES, *PROVISIONAL]))


def test_spec_gap_rule_bug_raises_under_the_suites_setting(broken_book: None) -> None:
    with pytest.raises(state.RuleError, match="rule_with_a_bug.*ZeroDivisionError"):
        ProtocolState().observe(C, BUGGY, 0)


def test_spec_gap_rule_bug_is_logged_and_the_other_rules_run(
    broken_book: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(state, "RAISE_RULE_ERRORS", False)
    with caplog.at_level(logging.ERROR, logger="acpref.rules"):
        found = ProtocolState().observe(C, BUGGY, 0)
    texts = [f.message for f in found]
    assert "found before the bug" in texts and "the rule after them still ran" in texts, texts
    assert any("rule_with_a_bug" in r.getMessage() for r in caplog.records), caplog.records


def test_spec_gap_rule_bug_unhashable_is_the_messages_fault(broken_book: None) -> None:
    # A list where a rule keys on a name: the codec reports the shape; this rule is silent and
    # the rules after it still run, with no RuleError even under the suite's setting.
    params = {"protocolVersion": 1, "clientCapabilities": {"name": ["a", "list"]}}
    raw = {**INITIALIZE, "params": params}
    found = [f.message for f in ProtocolState().check(C, raw, 0) if f.clause == "INIT-02"]
    assert found == ["the rule after them still ran"]
