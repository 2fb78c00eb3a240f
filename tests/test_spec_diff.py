"""``acpref spec-diff``: a newer schema file against the carried one, as a refresh checklist.

Every kind of change the checklist lists is made to a copy of the carried schema and must come
out in its section; the carried stable schema against the carried unstable one gives the counts
spec_notes/spec/CHANGES.md §7 states (74 ``$defs`` and 13 methods only the unstable one has).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from acpref._tools.spec_diff import Change, compare

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def carried(spec_dir_module: Path) -> Dict[str, Any]:
    return json.loads((spec_dir_module / "schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def spec_dir_module() -> Path:
    from conftest import require_spec_dir

    return require_spec_dir()


def _where(changes: List[Change], section: str) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for c in changes:
        if c.section == section:
            out.setdefault(c.where, []).append(c.what)
    return out


def test_the_same_schema_has_no_change(carried: Dict[str, Any]) -> None:
    assert compare(carried, copy.deepcopy(carried)) == []


def test_every_kind_of_change_is_listed(carried: Dict[str, Any]) -> None:
    new = copy.deepcopy(carried)
    defs = new["$defs"]
    defs["WeatherUpdate"] = {"description": "A forecast.", "type": "object"}
    del defs["NoticeCapabilities"]
    defs["SessionUpdate"]["oneOf"].append(
        {"properties": {"sessionUpdate": {"type": "string", "const": "weather_update"}}}
    )
    defs["StopReason"]["oneOf"].append({"type": "string", "description": "Any other."})
    defs["ToolCall"]["properties"]["icon"] = {
        "type": ["string", "null"],
        "x-deserialize-default-on-error": True,
    }
    del defs["ToolCall"]["properties"]["rawOutput"]
    defs["ToolCall"]["required"].append("kind")
    defs["ToolCallLocation"]["properties"]["line"]["format"] = "uint64"
    mcp = defs["NewSessionRequest"]["properties"]["mcpServers"]
    del mcp["x-deserialize-default-on-null"]
    mcp["x-deserialize-skip-invalid-items"] = True
    cost = defs["Cost"]["properties"]["currency"]
    cost["description"] = "Always ISO 4217."
    notice = defs["Notice"]
    notice["description"] = notice["description"].replace(
        "https://agentclientprotocol.com/rfds/session-notices", "https://example.com/notices"
    )
    defs["WeatherRequest"] = {"type": "object", "x-method": "weather/get", "x-side": "agent"}

    changes = compare(carried, new)
    assert _where(changes, "defs") == {
        "NoticeCapabilities": ["removed"],
        "WeatherRequest": ["added: "],
        "WeatherUpdate": ["added: A forecast."],
    }
    variants = _where(changes, "variants")
    assert variants["SessionUpdate"] == ["member added: sessionUpdate='weather_update'"]
    assert variants["StopReason"] == ["a catch-all branch appeared (now open)"]
    fields = _where(changes, "fields")
    assert fields["ToolCall.icon"] == ["added (default-on-error)"]
    assert fields["ToolCall.rawOutput"] == ["removed"]
    assert _where(changes, "required") == {"ToolCall.kind": ["now required"]}
    assert _where(changes, "types")["ToolCallLocation.line"] == ["format: 'uint32' -> 'uint64'"]
    assert sorted(_where(changes, "annotations")["NewSessionRequest.mcpServers"]) == [
        "x-deserialize-default-on-null: True -> (none)",
        "x-deserialize-skip-invalid-items: (none) -> True",
    ]
    assert _where(changes, "methods") == {"weather/get": ["added (WeatherRequest (agent))"]}
    descriptions = _where(changes, "descriptions")
    assert descriptions["Cost.currency"][0].endswith("-> 'Always ISO 4217.'")
    assert descriptions["Notice"] == ["links only"]  # told apart from a change of meaning


def test_meta_json_is_checked_against_the_methods(
    carried: Dict[str, Any], spec_dir_module: Path
) -> None:
    meta = json.loads((spec_dir_module / "meta.json").read_text(encoding="utf-8"))
    assert compare(carried, carried, meta=meta) == []  # the carried copies agree (SOURCE.md)
    less = copy.deepcopy(meta)
    less["agentMethods"].pop("session_prompt")
    assert [(c.where, c.what) for c in compare(carried, carried, meta=less)] == [
        ("session/prompt", "in the schema (agent) but not in meta.json")
    ]


def test_the_unstable_schema_is_the_stable_one_plus_74_defs_and_13_methods(
    carried: Dict[str, Any], spec_dir_module: Path
) -> None:
    unstable = json.loads((spec_dir_module / "schema.unstable.json").read_text(encoding="utf-8"))
    changes = compare(carried, unstable)
    added = [c for c in changes if c.section == "defs" and c.what.startswith("added")]
    assert len(added) == 74  # spec_notes/spec/CHANGES.md §7
    assert len([c for c in changes if c.section == "methods" and c.what.startswith("added")]) == 13
    assert {"PlanUpdate", "SystemPrompt", "SubagentUpdate"} <= {c.where for c in added}


def test_the_command_prints_a_checklist(tmp_path: Path, spec_dir_module: Path) -> None:
    newer = json.loads((spec_dir_module / "schema.json").read_text(encoding="utf-8"))
    newer["$defs"]["WeatherUpdate"] = {"description": "A forecast.", "type": "object"}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(newer), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "acpref", "spec-diff", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 0, run.stderr
    assert "`$defs`: 178 -> 179." in run.stdout
    assert "- [ ] `WeatherUpdate`: added: A forecast." in run.stdout
    as_json = subprocess.run(
        [sys.executable, "-m", "acpref", "spec-diff", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert json.loads(as_json.stdout) == [
        {"section": "defs", "where": "WeatherUpdate", "what": "added: A forecast."}
    ]
    missing = subprocess.run(
        [sys.executable, "-m", "acpref", "spec-diff", str(tmp_path / "nope.json")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert missing.returncode == 2 and "nope.json" in missing.stderr


def test_descriptions_nested_in_a_property_union_are_compared(carried: Dict[str, Any]) -> None:
    # AgentRequest.params is anyOf [anyOf [one branch per request], null]: the description of a
    # branch two unions down changed in the 2026-11 refresh (5 of its 35 changes of text).
    new = copy.deepcopy(carried)
    branches = new["$defs"]["AgentRequest"]["properties"]["params"]["anyOf"][0]["anyOf"]
    permission = next(b for b in branches if b.get("title") == "RequestPermissionRequest")
    permission["description"] = "Asks the user, or answers `cancelled`."
    untitled = new["$defs"]["ClientNotification"]["properties"]["params"]["anyOf"][0]
    untitled["description"] = "Only these: " + untitled["description"]
    descriptions = _where(compare(carried, new), "descriptions")
    assert descriptions == {
        "AgentRequest.params[#0][RequestPermissionRequest]": [
            descriptions["AgentRequest.params[#0][RequestPermissionRequest]"][0]
        ],
        "ClientNotification.params[#0]": [descriptions["ClientNotification.params[#0]"][0]],
    }
    assert descriptions["AgentRequest.params[#0][RequestPermissionRequest]"][0].endswith(
        "-> 'Asks the user, or answers `cancelled`.'"
    )
    assert "-> 'Only these: All possible" in descriptions["ClientNotification.params[#0]"][0]
