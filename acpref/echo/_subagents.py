"""The echo agent's ``/subagent`` command: a child session, announced and run (PROVISIONAL).

Spec: v1/subagents.md; clauses SUBAGENT-01 .. SUBAGENT-59 (shapes from the unstable schema of
2026-11-02). To a client that advertised ``clientCapabilities.subagents`` it announces a child
session on the parent (SUBAGENT-05, SUBAGENT-06) with no mutation granted (capabilities ``{}``:
the echo agent cannot cancel a child), links it from a tool call by a ``session`` reference,
sends the task to the child as a ``session_message``, lets the child answer in its own session,
reports the answer to the parent as a ``session_message`` streamed with a chunk, and reports the
child ``running`` then ``idle`` (SUBAGENT-22). To any other client it says it delegated
internally (SUBAGENT-04: exposing subagents is optional).
"""

from __future__ import annotations

import os
from typing import List

from .. import schema as s
from .._core.subagents import CAPABILITY
from ._commands import END, Invocation, command

__all__: List[str] = []


@command("subagent", "Delegate the text to a child session (subagent_update, messages)", "task")
def _subagent(inv: Invocation) -> s.StopReason:
    task = inv.args.strip() or "say hello"
    if not inv.agent.client.supports(CAPABILITY):
        # spec SUBAGENT-01, SUBAGENT-04: no subagents capability: delegated internally, unseen.
        inv.say(f"(a helper did it internally) Done: {task}")
        return END
    parent = inv.session.id
    # spec SUBAGENT-09, SUBAGENT-14: a fresh id, for this child only (not a task or tool call id).
    child = "sess_child_" + os.urandom(8).hex()
    # spec SUBAGENT-05, SUBAGENT-06: announced on its parent before any of its traffic.
    inv.turn.update(
        s.SubagentUpdate(
            session_id=child,
            title="Echo helper",
            description="Repeats its task back",
            # spec SUBAGENT-15, SUBAGENT-18: {}: no mutation is granted on this child.
            capabilities=s.SubagentSessionCapabilities(),
            state=s.RunningStateUpdate(),  # spec SUBAGENT-22: foreground work starts
        )
    )
    call_id = f"delegate_{child[-6:]}"
    inv.turn.update(
        s.ToolCall(
            tool_call_id=call_id,
            title="Delegate to the echo helper",
            kind=s.ToolKind.OTHER,
            status=s.ToolCallStatus.IN_PROGRESS,
            # spec SUBAGENT-02, SUBAGENT-53: a reference to the announced child.
            content=[s.SessionReference(session_id=child)],
        )
    )
    _converse(inv, parent, child, task)
    # spec SUBAGENT-22, SUBAGENT-27: idle when the work stops; the child stays known.
    inv.turn.update(
        s.SubagentUpdate(session_id=child, state=s.IdleStateUpdate(stop_reason="end_turn"))
    )
    inv.turn.update(s.ToolCallUpdate(tool_call_id=call_id, status=s.ToolCallStatus.COMPLETED))
    inv.say(f"The echo helper ({child}) answered: {task}")
    return END


def _converse(inv: Invocation, parent: str, child: str, task: str) -> None:
    """The task to the child, the child's own work, and its answer to the parent."""
    client = inv.agent.client
    to_child, to_parent = f"msg_{child[-6:]}_task", f"msg_{child[-6:]}_done"
    # The parent's message, in the child's transcript (SUBAGENT-57).
    client.update(
        child,
        s.SessionMessage(
            message_id=to_child,
            sender_session_id=parent,
            recipient_session_id=child,
            content=[s.TextContent(text=task)],
        ),
    )
    # spec SUBAGENT-12, SUBAGENT-29: the child's own work carries its own session id.
    client.update(
        child,
        s.AgentMessageChunk(
            content=s.TextContent(text=f"Working on: {task}"), message_id=f"{child}_m1"
        ),
    )
    # The child's answer, on the parent: participants first, then its content as a chunk.
    client.update(
        parent,
        s.SessionMessage(
            message_id=to_parent, sender_session_id=child, recipient_session_id=parent
        ),
    )
    client.update(
        parent, s.SessionMessageChunk(message_id=to_parent, content=s.TextContent(text=task))
    )
