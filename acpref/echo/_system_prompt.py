"""The echo agent's ``/system`` command: the client-provided system prompt it applies (PROVISIONAL).

Spec: v1/system-prompt.md; clauses SYSPROMPT-01 .. SYSPROMPT-16 (shape from the unstable schema of
2026-11-02). The echo agent advertises both modes (``sessionCapabilities.systemPrompt`` with
``mode.override``); the ``Agent`` base validates and keeps the prompt (``accept_system_prompt``).
Having no model, it cannot place the prompt anywhere: ``/system`` shows which instructions a
model would get, the agent's own, the client's appended to them, or the client's instead.
"""

from __future__ import annotations

from .. import schema as s
from ._commands import END, Invocation

__all__ = ["DEFAULT_INSTRUCTIONS", "CAPABILITIES"]

#: The echo agent's own instructions, which override mode replaces (SYSPROMPT-16: only these).
DEFAULT_INSTRUCTIONS = "Repeat the user's prompt back; run the slash commands."

#: What the echo agent advertises: append (``{}``) and override (SYSPROMPT-01).
CAPABILITIES = s.SessionSystemPromptCapabilities(
    mode=s.SessionSystemPromptModeCapabilities(override=s.SessionSystemPromptOverrideCapabilities())
)


def instructions(prompt: "s.SystemPrompt | None") -> str:
    """The instructions a model of this session would get, as text."""
    if prompt is None:
        # spec SYSPROMPT-13: no system prompt: the agent's own default instructions.
        return DEFAULT_INSTRUCTIONS
    text = "\n".join(b.text for b in prompt.content if isinstance(b, s.TextContent))
    mode = getattr(prompt.mode, "value", prompt.mode)
    if mode == "override":
        # spec SYSPROMPT-16: override replaces the default instructions, nothing else (tools,
        # modes, permissions and MCP servers stay as they are).
        return text
    # spec SYSPROMPT-14: append mode adds the client's text at system level, after the agent's.
    return f"{DEFAULT_INSTRUCTIONS}\n{text}"


def system(inv: Invocation) -> s.StopReason:
    prompt = inv.session.system_prompt
    mode = "none" if prompt is None else getattr(prompt.mode, "value", prompt.mode)
    inv.say(f"System prompt mode: {mode}\n{instructions(prompt)}")
    return END
