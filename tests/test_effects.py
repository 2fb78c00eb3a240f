"""The core's effects (acpref/_core/effects.py) agree with the asks the agent shell makes today.

Each transcript is fed, message by message, to two ``ProtocolState``s as the agent side feeds
its own: one answers the old questions (``cancellation.turn_stop``, the turn slot claimed for an
unrefused prompt, ``cancellation.input_ended``), the other returns ``step(...).effects``. At every
message both must say the same. The transcripts are a few written by hand (each row of the
effects table) and seeded random walks over the same vocabulary (sessions, prompts, cancels,
$/cancel_request, close, delete, answers in any order, refused prompts, the end of input).
Deterministic, in memory: no threads, no processes.
"""

from __future__ import annotations

import random
from typing import Any, Dict, List, Optional, Tuple

import pytest

from acpref._core import Party, ProtocolState
from acpref._core.cancellation import input_ended, turn_stop
from acpref._core.effects import TurnStarts, TurnStops

A, C = Party.AGENT, Party.CLIENT
Msg = Tuple[Party, Dict[str, Any]]

_CAPS = {"sessionCapabilities": {"close": {}, "delete": {}}}


def _req(i: Any, method: str, **params: Any) -> Msg:
    return C, {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def _note(method: str, **params: Any) -> Msg:
    return C, {"jsonrpc": "2.0", "method": method, "params": params}


def _ok(i: Any, result: Any) -> Msg:
    return A, {"jsonrpc": "2.0", "id": i, "result": result}


def _prompt(i: Any, sid: str) -> Msg:
    return _req(i, "session/prompt", sessionId=sid, prompt=[{"type": "text", "text": "hi"}])


def _opening(sessions: List[str]) -> List[Msg]:
    out: List[Msg] = [
        _req(0, "initialize", protocolVersion=1, clientCapabilities={}),
        _ok(0, {"protocolVersion": 1, "agentCapabilities": _CAPS, "authMethods": []}),
    ]
    for n, sid in enumerate(sessions):
        out.append(_req(f"n{n}", "session/new", cwd="/tmp", mcpServers=[]))
        out.append(_ok(f"n{n}", {"sessionId": sid}))
    return out


def _old_asks(state: ProtocolState, sender: Party, raw: Dict[str, Any]) -> List[Any]:
    """What the agent shell decides today for a message it read (``_requests._AgentObserver``)."""
    findings = state.observe(sender, raw)
    if sender is not C or "method" not in raw:
        return []
    refused = "id" in raw and any(
        f.binding and f.code is not None and f.blame is C for f in findings
    )
    if refused:
        return []
    params = raw.get("params") if isinstance(raw.get("params"), dict) else {}
    sid = params.get("sessionId")
    out: List[Any] = []
    if raw["method"] == "session/prompt" and "id" in raw and isinstance(sid, str):
        out.append(("claim", sid, raw["id"]))  # TurnSlots.claim
    stop = turn_stop(state, raw)
    if stop is not None:
        out.append(("stop", stop.session_id, stop.ending, stop.clause))
    return out


def _as_old(effects: Any, prompts: Dict[str, Any]) -> List[Any]:
    out: List[Any] = []
    for e in effects:
        if isinstance(e, TurnStarts):
            prompts[e.session_id] = e.request_id
            out.append(("claim", e.session_id, e.request_id))
        else:
            assert isinstance(e, TurnStops)
            # The effect names the turn's prompt: the one the core started.
            assert prompts.get(e.session_id) == e.request_id, e
            out.append(("stop", e.session_id, e.ending, e.clause))
    return out


def _agree(transcript: List[Msg], *, end_input: bool = True) -> List[Any]:
    """Replay ``transcript`` both ways; every message's answers agree. Returns the effects."""
    old, new = ProtocolState(), ProtocolState()
    prompts: Dict[str, Any] = {}
    seen: List[Any] = []
    for n, (sender, raw) in enumerate(transcript):
        asked = _old_asks(old, sender, raw)
        step = new.step(sender, raw)
        got = _as_old(step.effects, prompts)
        assert got == asked, f"message {n} {raw}: effects {got} != asks {asked}"
        seen.extend(step.effects)
    if end_input:
        asked_end = [(s.session_id, s.ending, s.clause) for s in input_ended(old)]
        effects = new.end_of_input()
        got_end = [(e.session_id, e.ending, e.clause) for e in effects]
        assert got_end == asked_end
        for e in effects:
            assert prompts.get(e.session_id) == e.request_id
        seen.extend(effects)
    return seen


# -- The rows of the table, by hand ---------------------------------------------------------------


def test_cancel_stops_the_running_turn() -> None:
    effects = _agree([*_opening(["s1"]), _prompt(1, "s1"), _note("session/cancel", sessionId="s1")])
    assert effects[:2] == [TurnStarts("s1", 1), TurnStops("s1", 1, False, "PROMPT-22")]
    # the cancelled turn runs on until its answer: the end of input stops it again
    assert effects[2:] == [TurnStops("s1", 1, True, "spec-gap:end-of-input")]


def test_cancel_request_of_the_prompt_stops_it() -> None:
    effects = _agree([*_opening(["s1"]), _prompt(1, "s1"), _note("$/cancel_request", requestId=1)])
    assert effects[1] == TurnStops("s1", 1, False, "spec-gap:cancel-request-prompt")


def test_close_and_delete_stop_the_turn_and_end_the_session() -> None:
    close = _agree([*_opening(["s1"]), _prompt(1, "s1"), _req(2, "session/close", sessionId="s1")])
    assert close[1] == TurnStops("s1", 1, True, "SETUP-16")
    delete = _agree([*_opening(["s1"]), _prompt(1, "s1"), _req(2, "session/delete", sessionId="s1")])
    assert delete[1] == TurnStops("s1", 1, True, "spec-gap:delete-active")


def test_prompt_read_while_closing_is_cancelled_as_it_starts() -> None:
    effects = _agree(
        [
            *_opening(["s1"]),
            _prompt(1, "s1"),
            _req(2, "session/close", sessionId="s1"),
            _ok(1, {"stopReason": "cancelled"}),
            _prompt(3, "s1"),
        ],
        end_input=False,
    )
    assert effects[-2:] == [TurnStarts("s1", 3), TurnStops("s1", 3, True, "spec-gap:close-in-flight")]


def test_refused_prompts_start_nothing() -> None:
    effects = _agree(
        [
            *_opening(["s1"]),
            _prompt(1, "s1"),
            _prompt(2, "s1"),  # spec-gap concurrent-prompt: refused
            _prompt(3, "nope"),  # spec-gap unknown-session: refused
            _req(4, "session/prompt", sessionId="s1", prompt=[{"type": "image", "data": "x",
                                                              "mimeType": "image/png"}]),
        ],
        end_input=False,
    )
    assert effects == [TurnStarts("s1", 1)]


def test_end_of_input_stops_every_running_turn() -> None:
    effects = _agree([*_opening(["s1", "s2", "s3"]), _prompt(1, "s1"), _prompt(2, "s3")])
    assert effects[-2:] == [
        TurnStops("s1", 1, True, "spec-gap:end-of-input"),
        TurnStops("s3", 2, True, "spec-gap:end-of-input"),
    ]


# -- Random walks -----------------------------------------------------------------------------------


def _walk(seed: int, length: int = 60) -> List[Msg]:
    rng = random.Random(seed)
    sessions = ["s1", "s2"]
    transcript = _opening(sessions)
    open_requests: List[Tuple[Any, str]] = []  # (id, method) the agent has not answered
    for n in range(length):
        sid = rng.choice(sessions + ["gone"])
        roll = rng.random()
        rid = f"r{n}"
        if roll < 0.3:
            transcript.append(_prompt(rid, sid))
            open_requests.append((rid, "session/prompt"))
        elif roll < 0.45:
            transcript.append(_note("session/cancel", sessionId=sid))
        elif roll < 0.55 and open_requests:
            transcript.append(_note("$/cancel_request", requestId=rng.choice(open_requests)[0]))
        elif roll < 0.62:
            method = rng.choice(["session/close", "session/delete"])
            transcript.append(_req(rid, method, sessionId=sid))
            open_requests.append((rid, method))
        elif open_requests:
            i, method = open_requests.pop(rng.randrange(len(open_requests)))
            if method == "session/prompt":
                result: Dict[str, Any] = {"stopReason": rng.choice(["end_turn", "cancelled"])}
            else:
                result = {}
            transcript.append(_ok(i, result))
    return transcript


@pytest.mark.parametrize("seed", range(200))
def test_random_transcripts_agree(seed: int) -> None:
    _agree(_walk(seed))
