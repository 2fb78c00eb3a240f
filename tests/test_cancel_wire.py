"""The oracle on cancelled turns: what the wire shows about the agent having read the cancel.

Spec: prompt-turn.mdx PROMPT-23 ("After all ongoing operations have been successfully aborted and
pending updates have been sent, the Agent MUST respond to the original `session/prompt` request
with the `cancelled` stop reason."), session-setup.mdx SETUP-16 (a close cancels "as if
`session/cancel` had been called"); decisions.md cancel-race. Stdio is ordered: an agent that
answers a request the client sent after the cancel has read the cancel. A turn it ends otherwise
than ``cancelled`` after that breaks PROMPT-23 at MUST; a turn that ends before any such answer
may have ended before the agent read the cancel (spec-gap cancel-race, no MUST). The same holds
for a turn answered with an error (PROMPT-24: "Agents MUST catch these errors", the errors of an
operation the cancel aborted).

The transcripts are written the way ``--record`` writes them and judged by ``acpref validate``
in its own process, as a CI job would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple


C, A = "client", "agent"
Msg = Tuple[str, Dict[str, Any]]


def _req(i: Any, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def _ok(i: Any, result: Any) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": result}


START: List[Msg] = [
    (C, _req(0, "initialize", {
        "protocolVersion": 1,
        "clientCapabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    })),
    (A, _ok(0, {
        "protocolVersion": 1,
        "agentCapabilities": {"sessionCapabilities": {"close": {}}},
        "agentInfo": {"name": "a", "version": "1"},
        "authMethods": [],
    })),
    (C, _req(1, "session/new", {"cwd": "/tmp", "mcpServers": []})),
    (A, _ok(1, {"sessionId": "s1"})),
    (C, _req(2, "session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": "go"}]})),
]
CHUNK = (A, {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {
    "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "."}}}})
CANCEL = (C, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
PROBE = (C, _req("probe", "_acpref/ping", {}))
PROBE_ANSWERED = (A, {"jsonrpc": "2.0", "id": "probe", "error": {
    "code": -32601, "message": "Method not found"}})
END_TURN = (A, _ok(2, {"stopReason": "end_turn"}))
CANCELLED = (A, _ok(2, {"stopReason": "cancelled"}))


def _write(tmp_path: Path, messages: List[Msg]) -> Path:
    """A transcript as ``--record`` writes it: one record a line, the client's eof last."""
    path = tmp_path / "transcript.jsonl"
    records = [{"from": s, "ts": 0, "line": json.dumps(m)} for s, m in [*START, *messages]]
    records.append({"from": C, "ts": 0, "event": "eof"})
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _validate(tmp_path: Path, messages: List[Msg]) -> Tuple[int, List[Dict[str, Any]]]:
    """``acpref validate --json`` on the transcript: its exit status and its findings."""
    path = _write(tmp_path, messages)
    argv = [sys.executable, "-m", "acpref", "validate", "--json", str(path)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    data = json.loads(run.stdout)
    kinds = ("violations", "gaps", "warnings")
    return run.returncode, [f for kind in kinds for f in data.get(kind, [])]


def _clauses(findings: List[Dict[str, Any]]) -> List[Tuple[str, str]]:
    return [(f["clause"], f["level"]) for f in findings]


def test_PROMPT_23_the_probe_answered_then_end_turn_fails_at_MUST(tmp_path: Path) -> None:
    # Like opencode: cancelled, it answers the request sent after the cancel, streams on, and
    # ends end_turn 74 ms later. The probe's answer proves it had read the cancel.
    status, findings = _validate(tmp_path, [CHUNK, CANCEL, PROBE, PROBE_ANSWERED, CHUNK, END_TURN])
    assert ("PROMPT-23", "MUST") in _clauses(findings), findings
    [f] = [f for f in findings if f["clause"] == "PROMPT-23"]
    assert f["blame"] == A and "answered a request sent after it" in f["message"]
    assert status == 1


def test_the_race_the_turn_ended_before_the_probe_was_answered_is_no_MUST(tmp_path: Path) -> None:
    # The prompt's answer came before the probe's: the turn may have ended before the agent read
    # the cancel (spec-gap cancel-race), whatever came after.
    status, findings = _validate(tmp_path, [CANCEL, PROBE, END_TURN, PROBE_ANSWERED])
    assert _clauses(findings) == [("spec-gap:cancel-race", "spec-gap")], findings
    assert status == 0


def test_a_request_answered_that_was_sent_before_the_cancel_proves_nothing(tmp_path: Path) -> None:
    status, findings = _validate(tmp_path, [PROBE, CANCEL, PROBE_ANSWERED, END_TURN])
    assert _clauses(findings) == [("spec-gap:cancel-race", "spec-gap")], findings
    assert status == 0


def test_PROMPT_23_a_cancelled_answer_after_the_probe_passes(tmp_path: Path) -> None:
    status, findings = _validate(tmp_path, [CANCEL, PROBE, PROBE_ANSWERED, CHUNK, CANCELLED])
    assert findings == [] and status == 0


def test_SETUP_16_a_closed_turn_ended_end_turn_after_the_probe_fails_at_MUST(
    tmp_path: Path,
) -> None:
    # A close cancels the turn "as if session/cancel had been called": the probe's answer shows
    # the agent had read the close before it ended the turn end_turn.
    close = (C, _req(3, "session/close", {"sessionId": "s1"}))
    messages = [close, PROBE, PROBE_ANSWERED, END_TURN, (A, _ok(3, {}))]
    status, findings = _validate(tmp_path, messages)
    assert ("SETUP-16", "MUST") in _clauses(findings), findings
    assert status == 1
    race = [close, PROBE, END_TURN, PROBE_ANSWERED, (A, _ok(3, {}))]
    assert _clauses(_validate(tmp_path, race)[1]) == [("spec-gap:cancel-race", "spec-gap")]


ASKING = (A, _req(100, "session/request_permission", {
    "sessionId": "s1",
    "toolCall": {"toolCallId": "t1"},
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
}))
ASK_CANCELLED = (C, _ok(100, {"outcome": {"outcome": "cancelled"}}))


def test_a_permission_answered_after_the_cancel_proves_nothing(tmp_path: Path) -> None:
    # The agent asked permission before the cancel and ended the turn after the client's answer,
    # as observed: it may have written its answer before it read the cancel and the client's
    # answer (the two directions of the pipe interleave wherever they are observed).
    for order in ([ASKING, CANCEL, ASK_CANCELLED, END_TURN], [ASKING, CANCEL, END_TURN, ASK_CANCELLED]):
        status, findings = _validate(tmp_path, order)
        assert _clauses(findings) == [("spec-gap:cancel-race", "spec-gap")], findings
        assert status == 0


def test_PROMPT_23_cancelled_while_asking_and_after_the_probe_fails_at_MUST(tmp_path: Path) -> None:
    # The probe's answer is the witness, whatever else the agent was waiting on.
    messages = [ASKING, CANCEL, PROBE, ASK_CANCELLED, PROBE_ANSWERED, END_TURN]
    status, findings = _validate(tmp_path, messages)
    assert _clauses(findings) == [("PROMPT-23", "MUST")], findings
    assert "answered a request sent after it" in findings[0]["message"]
    assert status == 1


# -- PROMPT-24: "Agents MUST catch these errors": the errors of an operation the cancel aborted ----

ERROR = (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "stream broke"}})


def test_PROMPT_24_an_error_after_the_probe_was_answered_fails_at_MUST(tmp_path: Path) -> None:
    # The agent answered the probe, so it had read the cancel: the error is the aborted
    # operation's, which it had to turn into stopReason "cancelled".
    status, findings = _validate(tmp_path, [CHUNK, CANCEL, PROBE, PROBE_ANSWERED, ERROR])
    assert _clauses(findings) == [("PROMPT-24", "MUST")], findings
    assert "answered a request sent after it" in findings[0]["message"]
    assert status == 1


def test_PROMPT_24_an_error_that_crossed_the_cancel_is_no_MUST(tmp_path: Path) -> None:
    # The turn failed on its own (its model's stream broke) as the cancel crossed its answer on
    # the wire: nothing shows the agent had read the cancel, so the error need not be one of an
    # aborted operation (spec-gap cancel-race), however the probe was answered afterwards.
    status, findings = _validate(tmp_path, [CHUNK, CANCEL, PROBE, ERROR, PROBE_ANSWERED])
    assert _clauses(findings) == [("spec-gap:cancel-race", "spec-gap")], findings
    assert status == 0


# -- acpref's own agent never shows a cancel read before a turn it answers otherwise ---------------


def test_PROMPT_23_a_cancel_read_after_the_turn_chose_its_answer_waits_for_that_answer() -> None:
    # The turn's handler returned end_turn and the answer is being written (sealed) when a cancel
    # is read: the reading thread waits until the answer is out before reading on, so no later
    # request can be answered first (which would show the cancel read, owing "cancelled").
    import threading

    from acpref.agent._requests import TurnFlags

    slots = TurnFlags()
    slots.start(2)
    assert slots.seal(2) is False  # not cancelled: the turn answers what it chose
    flag = slots._running[2].cancelled  # the flag the turn's threads read
    returned = []
    reader = threading.Thread(target=lambda: returned.append(slots.cancel(2)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive()  # waiting for the answer to be written
    slots.release(2)  # the prompt's answer is written
    reader.join(5)
    assert returned == [True] and not flag.is_set()
    # A cancel read before the seal is what the sealed answer says: "cancelled".
    slots.start(3)
    assert slots.cancel(3) and slots.seal(3) is True


def test_PROMPT_23_a_cancel_waiting_for_a_sealed_answer_ends_when_the_connection_closes() -> None:
    # The sealed answer can no longer be written once the connection is closed: the reading
    # thread that waits for it must not wait out its bound.
    import threading

    from acpref.agent._requests import TurnFlags

    slots = TurnFlags()
    slots.start(2)
    slots.seal(2)
    returned = []
    reader = threading.Thread(target=lambda: returned.append(slots.cancel(2)))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive()  # waiting for the answer to be written
    slots.cancel_all()  # the connection closed
    reader.join(10)
    assert not reader.is_alive() and returned == [True]


# -- CANCEL-05: "MUST send one of these responses for the original request" (a result or -32800),
# binding "a supporting implementation": the wire shows support once the agent answered a request
# of the connection as cancelled after a $/cancel_request of it (spec_notes/wire-visibility.md).

CANCEL_REQUEST = (C, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}})
ANSWERED_CANCELLED = (A, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32800, "message": "x"}})
GO = [{"type": "text", "text": "go"}]
PROMPT_3 = (C, _req(3, "session/prompt", {"sessionId": "s1", "prompt": GO}))
CANCEL_REQUEST_3 = (C, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 3}})
ERROR_3 = (A, {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "stream broke"}})


def test_CANCEL_05_an_error_after_support_was_shown_and_the_cancel_read_fails_at_MUST(
    tmp_path: Path,
) -> None:
    # The first prompt was answered -32800 after our $/cancel_request: the agent supports it.
    # The second, cancelled the same way, is answered -32603 after the probe sent after that
    # cancel: the request was in flight when the agent read the cancel.
    second = [PROMPT_3, CHUNK, CANCEL_REQUEST_3, PROBE, PROBE_ANSWERED, ERROR_3]
    for shown in (ANSWERED_CANCELLED, CANCELLED):  # -32800, or the marker stopReason "cancelled"
        status, findings = _validate(tmp_path, [CHUNK, CANCEL_REQUEST, shown, *second])
        assert _clauses(findings) == [("CANCEL-05", "MUST")], findings
        assert findings[0]["blame"] == A and "supports $/cancel_request" in findings[0]["message"]
        assert status == 1


def test_CANCEL_05_without_a_witness_of_support_an_error_is_a_spec_gap(tmp_path: Path) -> None:
    # No request was answered as cancelled before (the first ended end_turn: it may have ignored
    # the cancel): support is not on the wire, so the error decides nothing (CANCEL-02).
    second = [PROMPT_3, CHUNK, CANCEL_REQUEST_3, PROBE, PROBE_ANSWERED, ERROR_3]
    status, findings = _validate(tmp_path, [CHUNK, CANCEL_REQUEST, END_TURN, *second])
    assert _clauses(findings) == [("spec-gap:cancel-request-support", "spec-gap")], findings
    assert status == 0
    # An error first and a -32800 later shows support only for what came after it.
    error_first = [CHUNK, CANCEL_REQUEST, (A, {**ERROR_3[1], "id": 2}), PROMPT_3, CANCEL_REQUEST_3]
    status, findings = _validate(tmp_path, [*error_first, (A, {**ANSWERED_CANCELLED[1], "id": 3})])
    assert _clauses(findings) == [("spec-gap:cancel-request-support", "spec-gap")], findings


def test_CANCEL_05_an_error_that_crossed_the_cancel_is_no_MUST(tmp_path: Path) -> None:
    # Support was shown, but the error came before the probe's answer: the request may have been
    # over before the agent read the cancel (then there was nothing to cancel, CANCEL-06).
    second = [PROMPT_3, CHUNK, CANCEL_REQUEST_3, PROBE, ERROR_3, PROBE_ANSWERED]
    status, findings = _validate(tmp_path, [CHUNK, CANCEL_REQUEST, ANSWERED_CANCELLED, *second])
    assert _clauses(findings) == [("spec-gap:cancel-request-support", "spec-gap")], findings
    assert "not that it had read this cancel" in findings[0]["message"]
    assert status == 0
