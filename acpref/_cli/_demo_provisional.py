"""The demo's steps for the features stabilized after the stable schema (PROVISIONAL shapes).

Spec: v1/system-prompt.md, v1/plan-operations.md, v1/subagents.md (shapes from the unstable
schema of 2026-11-02). Each step says that its shape is provisional; each checks what it shows,
like the rest of ``acpref demo``.
"""

from __future__ import annotations

from .. import schema as s
from ._demo_narrator import Demo

__all__ = ["run_provisional_steps"]

TIMEOUT = 30.0


def run_provisional_steps(demo: Demo) -> None:
    """A client system prompt, plan operations, then a subagent session."""
    system_prompt(demo)
    plan_operations(demo)
    subagent_session(demo)


def system_prompt(demo: Demo) -> None:
    conn = demo.conn
    assert conn is not None
    demo.heading("a client system prompt, re-sent on resume (provisional shape)")
    caps = conn.agent_capabilities.session_capabilities
    advertised = isinstance(caps, s.SessionCapabilities) and caps.system_prompt
    demo.render.line(f"  sessionCapabilities.systemPrompt: {advertised}")
    prompt = s.SystemPrompt(
        mode=s.SystemPromptMode.APPEND,
        content=[s.TextContent(text="Answer as a careful code reviewer.")],
    )
    main = demo.session_id
    new = conn.new_session(demo.scratch, system_prompt=prompt, timeout=TIMEOUT)
    demo.session_id = new.session_id
    try:
        demo.render.line(f"session {demo.session_id} with systemPrompt (append mode)")
        demo.prompt("/system")
        demo.check("careful code reviewer" in _last_text(demo), "/system shows the client's text")
        # spec SYSPROMPT-11 (provisional): resume re-sends the prompt the session was created with.
        conn.resume_session(demo.session_id, demo.scratch, timeout=TIMEOUT)
        demo.render.line("session/resume re-sent the same systemPrompt")
        demo.prompt("/system")
        demo.check("careful code reviewer" in _last_text(demo), "the prompt survived the resume")
    finally:
        demo.session_id = main


def plan_operations(demo: Demo) -> None:
    demo.heading("plan operations: plans by id, replaced and removed (provisional shape)")
    demo.prompt("/plans")
    plans = demo.client.view(demo.session_id).plans.plans
    demo.render.line(f"plans now shown: {sorted(plans)}")
    demo.check(
        list(plans) == ["design"] and isinstance(plans["design"], s.PlanMarkdown),
        "only the Markdown plan 'design' remains",
    )


def subagent_session(demo: Demo) -> None:
    demo.heading("a subagent: a child session announced, messaged and idle (provisional shape)")
    demo.prompt("/subagent find the failing test")
    parent = demo.client.view(demo.session_id)
    children = list(parent.subagents.children.values())
    demo.check(len(children) == 1, "one child session was announced")
    if not children:
        return
    child = children[0]
    state = getattr(type(child.state), "state", None)
    demo.render.line(f"child {child.session_id}: {child.title!r}, state {state}")
    demo.check(state == "idle", "the child ended idle")
    child_view = demo.client.view(child.session_id)
    demo.check(
        child_view.parent_id == demo.session_id
        and any("find the failing test" in m.text for m in child_view.messages),
        "the child's own updates reached the child's view",
    )
    answers = [m.text for m in parent.session_messages.messages.values()]
    demo.check(answers == ["find the failing test"], "the child's answer reached the parent")


def _last_text(demo: Demo) -> str:
    messages = demo.client.view(demo.session_id).messages
    return messages[-1].text if messages else ""
