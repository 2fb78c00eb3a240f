"""Rules of the client-provided system prompt (PROVISIONAL), both directions.

Spec: v1/system-prompt.md; clauses SYSPROMPT-01 .. SYSPROMPT-16. The shape comes from the unstable
schema of 2026-11-02 (stabilized 2026-11-06), whose descriptions state every rule here: the
oracle grades a finding by that sentence and the live sides obey it (spec_notes/decisions.md,
provisional-features).

* The client sends ``systemPrompt`` on ``session/new``, ``session/load`` and ``session/resume``
  only when the agent advertised ``sessionCapabilities.systemPrompt`` (SYSPROMPT-02), uses
  ``override`` only with ``mode.override`` (SYSPROMPT-03), sends text blocks only (SYSPROMPT-07)
  and never an empty array (SYSPROMPT-09), and re-sends the value of ``session/new`` on load and
  resume (SYSPROMPT-11, a SHOULD).
* The agent answers an error, not a session, for a prompt it cannot apply: an unadvertised mode
  (SYSPROMPT-04) or an unknown one (SYSPROMPT-05). Whether it supports a non-text block only it
  knows (SYSPROMPT-08): the rules blame the client for sending one instead.

``omitted`` and ``null`` are the same everywhere (SYSPROMPT-12, SYSPROMPT-13): no system prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ..errors import ErrorCode
from .book import Message, check, transition
from .findings import Finding, Party, finding

if TYPE_CHECKING:  # pragma: no cover
    from .facts import ConnectionFacts as ProtocolState

__all__ = ["CAPABILITY", "OVERRIDE_CAPABILITY", "KNOWN_MODES", "mode_supported"]

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS
SESSION_SETUP = ("session/new", "session/load", "session/resume")

#: spec SYSPROMPT-01: the agent capability (``{}``: append mode) and the one override also needs.
CAPABILITY = "sessionCapabilities.systemPrompt"
OVERRIDE_CAPABILITY = "sessionCapabilities.systemPrompt.mode.override"
#: The modes this version of the feature defines; any other string is preserved but unsupported.
KNOWN_MODES = ("append", "override")


def mode_supported(mode: Any, agent_caps: Any) -> bool:
    """True when an agent that advertised ``agent_caps`` supports system prompt ``mode``."""
    from .capabilities import gate_open

    if mode == "append":
        return gate_open(CAPABILITY, agent_caps)
    if mode == "override":
        return gate_open(OVERRIDE_CAPABILITY, agent_caps)
    return False  # spec SYSPROMPT-05: an unknown mode is never read as append or override


@check("request", C, *SESSION_SETUP)
def _sent(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    prompt = m.params.get("systemPrompt")
    if m.method != "session/new":
        yield from _resent(state, m, prompt)
    if prompt is None:
        return  # spec SYSPROMPT-12, SYSPROMPT-13: omitted and null mean none
    if not state.gate_open(CAPABILITY, A):
        # spec SYSPROMPT-02: only when the agent advertised sessionCapabilities.systemPrompt.
        yield finding(
            "SYSPROMPT-02",
            C,
            f"{m.method} carries a systemPrompt, but the agent did not advertise {CAPABILITY}",
            m.index,
            INVALID,
        )
        return
    if not isinstance(prompt, dict):
        return  # a malformed value: the codec's -32602
    if prompt.get("mode") == "override" and not state.gate_open(OVERRIDE_CAPABILITY, A):
        # spec SYSPROMPT-03: override only with sessionCapabilities.systemPrompt.mode.override.
        yield finding(
            "SYSPROMPT-03",
            C,
            f"systemPrompt mode 'override' without {OVERRIDE_CAPABILITY}",
            m.index,
            INVALID,
        )
    content = prompt.get("content")
    if content == []:
        # spec SYSPROMPT-09: never an empty array (SYSPROMPT-10: the agent may answer -32602).
        yield finding("SYSPROMPT-09", C, "systemPrompt content is an empty array", m.index, INVALID)
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind != "text":
            # spec SYSPROMPT-07: text blocks only, until a future capability allows others.
            yield finding(
                "SYSPROMPT-07", C, f"systemPrompt content has a {kind!r} block", m.index, INVALID
            )


def _resent(state: "ProtocolState", m: Message, prompt: Any) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if not isinstance(sid, str) or sid not in state.system_prompts:
        return
    if prompt != state.system_prompts[sid]:
        # spec SYSPROMPT-11: load and resume re-send the value the session was created with.
        yield finding(
            "SYSPROMPT-11",
            C,
            f"{m.method} of {sid!r} does not re-send the session's systemPrompt",
            m.index,
        )


@check("response", A, *SESSION_SETUP)
def _applied(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    prompt = m.request.params.get("systemPrompt")
    if m.is_error or not isinstance(prompt, dict) or not state.gate_open(CAPABILITY, A):
        return  # without the capability the client was wrong to send it (SYSPROMPT-02)
    mode = prompt.get("mode")
    if mode not in KNOWN_MODES:
        # spec SYSPROMPT-05: an unsupported (unknown) mode is an error, never a silent append.
        yield finding(
            "SYSPROMPT-05", A, f"{m.method} accepted systemPrompt mode {mode!r}", m.index
        )
    elif not mode_supported(mode, state.agent_caps):
        # spec SYSPROMPT-04: a prompt the agent cannot apply gets an error, not a session.
        yield finding(
            "SYSPROMPT-04", A, f"{m.method} accepted the unadvertised mode {mode!r}", m.index
        )


@transition("response", A, *SESSION_SETUP)
def _remember(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    if m.is_error:
        return
    if m.method == "session/new":
        sid = m.result.get("sessionId") if isinstance(m.result, dict) else None
    else:
        sid = m.request.params.get("sessionId")
    if isinstance(sid, str):
        # What SYSPROMPT-11 compares later requests with: the value last applied.
        state.system_prompts[sid] = m.request.params.get("systemPrompt")


@transition("response", A, "session/delete")
def _forget(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    sid = m.request.params.get("sessionId")
    if not m.is_error and isinstance(sid, str):
        # spec DELETE-05: a deleted session is never loaded or resumed: nothing to compare.
        state.system_prompts.pop(sid, None)
