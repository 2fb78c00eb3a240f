"""A value this version does not define, from a newer v1 peer: kept, a warning, never a crash.

Spec: spec_notes/decisions.md, forward-compatible (``stopReason: "paused"``, a tool call
``kind: "teleport"``); PROMPT-17. The agent is a real process (``tests/peers/unusual_agents.py``
``NewerValues``) over real pipes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acpref import codec
from acpref import schema as s
from acpref.client import Allow, ClientSideConnection, ReferenceClient
from acpref.testing import AgentCheckOptions, check_agent

pytestmark = pytest.mark.timeout(60)

PY = sys.executable
NEWER = [PY, str(Path(__file__).resolve().parent / "peers" / "unusual_agents.py"), "NewerValues"]
WAIT = 20.0


def test_PROMPT_17_an_undefined_stop_reason_is_kept_and_reported_as_a_warning(
    tmp_path: Path,
) -> None:
    client = ReferenceClient(permissions=Allow())
    side = ClientSideConnection.spawn(client, NEWER)
    try:
        side.initialize(timeout=WAIT)
        sid = side.new_session(str(tmp_path), timeout=WAIT).session_id
        answer = side.prompt(sid, "hi", timeout=WAIT)
        assert isinstance(answer.stop_reason, s.StopReason)
        assert answer.stop_reason == "paused" and not answer.stop_reason.defined
        assert answer.stop_reason != s.StopReason.END_TURN
        assert codec.encode(answer) == {"stopReason": "paused"}  # written back unchanged
        warnings = [(f.clause, f.level, f.blame.value) for f in side.rules.findings]
        assert warnings == [("PROMPT-17", "warning", "agent")]
        # The tool call's undefined kind is a malformed marked field (default-on-error): absent.
        (call,) = client.view(sid).tool_calls.values()
        assert call.kind == "other" and call.status == "completed"
        # The connection goes on: a second turn, a second warning (one per turn).
        assert side.prompt(sid, "again", timeout=WAIT).stop_reason == "paused"
        assert [f.clause for f in side.rules.findings] == ["PROMPT-17", "PROMPT-17"]
    finally:
        side.close()


def test_the_oracle_still_names_the_undefined_value() -> None:
    with pytest.raises(codec.DecodeError) as raised:
        codec.decode({"stopReason": "paused"}, s.PromptResponse, strict=True)
    assert codec.UNDEFINED_VALUE in str(raised.value)
    # A value that is no string stays a violation in both modes (PROMPT-17).
    with pytest.raises(codec.DecodeError):
        codec.decode({"stopReason": ["end_turn"]}, s.PromptResponse)
    defined = codec.decode({"stopReason": "end_turn"}, s.PromptResponse)
    assert defined.stop_reason is s.StopReason.END_TURN and defined.stop_reason.defined


def test_check_agent_gives_the_newer_stop_reason_no_failure() -> None:
    report = check_agent(NEWER, AgentCheckOptions(only=("prompt",), timeout=10))
    assert report.passed("PROMPT-17"), report.format_text(full=True)
    assert not report.failed(), report.format_text(full=True)
    warned = [f for f in report.findings if f["clause"] == "PROMPT-17"]
    assert warned and all(f["level"] == "warning" for f in warned)
