"""The echo agent's ``/subagent`` command: a child session, announced and run (PROVISIONAL).

Spec: v1/subagents.md; clauses SUBAGENT-01 .. SUBAGENT-59 (shapes from the unstable schema of
2026-11-02). To a client that advertised ``clientCapabilities.subagents`` it announces a child
session on the parent (SUBAGENT-05, SUBAGENT-06) with no mutation granted (capabilities ``{}``:
the echo agent cannot cancel a child), links it from a tool call by a ``session`` reference,
sends the task to the child as a ``session_message``, lets the child answer in its own session,
reports the answer to the parent as a ``session_message`` streamed with a chunk, and reports the
child ``running`` then ``idle`` (SUBAGENT-22). To any other client it says it delegated
internally (SUBAGENT-04: exposing subagents is optional).

**Children across a reopening** (``Children``). The session registry records a parent's own
history; what a child sent lives here, for as long as the echo agent runs. A ``session/load`` of
the parent replays each child it remembers where the child first appeared: its announcement,
the tool call that references it, then the child's traffic in its order (SUBAGENT-30,
SUBAGENT-31), all before the answer (SUBAGENT-34). A child it does not remember (the session was
saved by an earlier process) cannot be told truthfully: its reference is left out of the replay,
nothing is said of its outcome (SUBAGENT-32, SUBAGENT-42), and after the answer a ``notice``
says that part of the history is missing, to a client that takes notices (SUBAGENT-33). After a
load or resume answer, each remembered child is announced again, under its parent, with its
whole capabilities and its current state (SUBAGENT-38, SUBAGENT-40, SUBAGENT-43).
"""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, Iterable, Iterator, List, Tuple

import attrs

from .. import schema as s
from .._core.subagents import CAPABILITY
from ._commands import END, Invocation

__all__: List[str] = []


@attrs.define
class _Child:
    """What one child sent, as the echo agent remembers it."""

    parent: str
    #: The announcement as first sent (title, description, capabilities, first state).
    announcement: s.SubagentUpdate
    #: Everything sent after the announcement, for the child or about it, in wire order.
    traffic: List[Tuple[str, Any]] = attrs.Factory(list)
    #: The last state reported (SUBAGENT-27: a whole snapshot).
    state: Any = None


class Children:
    """The children the echo agent ran, by child session id (see the module's doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._children: Dict[str, _Child] = {}
        #: Per parent session: child ids a load could not replay, for the notice after it.
        self._gaps: Dict[str, List[str]] = {}

    def announced(self, parent: str, update: s.SubagentUpdate) -> None:
        with self._lock:
            self._children[update.session_id] = _Child(parent, update, state=update.state)

    def sent(self, child: str, session_id: str, update: Any) -> None:
        with self._lock:
            known = self._children[child]
            known.traffic.append((session_id, update))
            if isinstance(update, s.SubagentUpdate) and update.state is not s.UNSET:
                known.state = update.state

    def replayed(
        self, agent: Any, parent: str, notifications: Iterable[s.SessionNotification]
    ) -> Iterator[s.SessionNotification]:
        """The parent's replay with its children's history put back in place."""
        shown = agent.client.supports(CAPABILITY)
        gaps: List[str] = []
        for note in notifications:
            update: Any = note.update
            content: Any = getattr(update, "content", None)
            if not isinstance(update, (s.ToolCall, s.ToolCallUpdate)) or not isinstance(
                content, list
            ):
                content = []
            refs = [c for c in content if isinstance(c, s.SessionReference)]
            if not refs:
                yield note
                continue
            with self._lock:
                told = [self._children.get(r.session_id) for r in refs]
            after: List[Tuple[str, Any]] = []
            for ref, child in zip(refs, told):
                if child is None:
                    # spec SUBAGENT-32, SUBAGENT-42: a child that cannot be reconstructed is left
                    # out: no guessed parent, no traffic, no reference, no outcome made up for it.
                    gaps.append(ref.session_id)
                elif shown:
                    # spec SUBAGENT-30, SUBAGENT-31: its announcement first, on its own parent.
                    yield s.SessionNotification(session_id=child.parent, update=child.announcement)
                    after += child.traffic
            keep = {r.session_id for r, child in zip(refs, told) if shown and child is not None}
            kept = [
                c for c in content if not isinstance(c, s.SessionReference) or c.session_id in keep
            ]
            yield attrs.evolve(note, update=attrs.evolve(update, content=kept))
            for session_id, sent in after:  # spec SUBAGENT-31: in each session's own order
                yield s.SessionNotification(session_id=session_id, update=sent)
        if gaps and shown:
            with self._lock:
                self._gaps[parent] = gaps

    def reopened(self, agent: Any, parent: str) -> None:
        """After a load or resume answer of ``parent``: announce its children again; say what
        its replay had to leave out (spec SUBAGENT-33)."""
        if not agent.client.supports(CAPABILITY):
            return
        with self._lock:
            mine = [(c, k) for c, k in self._children.items() if k.parent == parent]
            gaps = self._gaps.pop(parent, [])
        for child, known in mine:
            # spec SUBAGENT-38, SUBAGENT-39: under its own parent, after the answer; its own
            # children (none in the echo agent) would follow it.
            agent.client.update(
                parent,
                s.SubagentUpdate(
                    session_id=child,
                    title=known.announcement.title,
                    description=known.announcement.description,
                    # spec SUBAGENT-40: the whole current capabilities object ({}: no mutation).
                    capabilities=s.SubagentSessionCapabilities(),
                    # spec SUBAGENT-43: its current work state, which the echo agent knows.
                    state=known.state,
                ),
            )
        if gaps and agent.client.supports("session.notices"):
            # spec SUBAGENT-33: a known gap in the replay is made apparent, not hidden.
            agent.client.update(
                parent,
                s.Notice(
                    severity=s.NoticeSeverity.WARNING,
                    title="Subagent history missing",
                    description=(
                        f"{len(gaps)} subagent session(s) of an earlier run could not be "
                        "replayed: " + ", ".join(gaps)
                    ),
                ),
            )


def subagent(inv: Invocation) -> s.StopReason:
    task = inv.args.strip() or "say hello"
    if not inv.agent.client.supports(CAPABILITY):
        # spec SUBAGENT-01, SUBAGENT-04: no subagents capability: delegated internally, unseen.
        inv.say(f"(a helper did it internally) Done: {task}")
        return END
    book: Children = inv.agent.children
    parent = inv.session.id
    # spec SUBAGENT-09, SUBAGENT-14: a fresh id, for this child only (not a task or tool call id).
    child = "sess_child_" + os.urandom(8).hex()
    announcement = s.SubagentUpdate(
        session_id=child,
        title="Echo helper",
        description="Repeats its task back",
        # spec SUBAGENT-15, SUBAGENT-18: {}: no mutation is granted on this child.
        capabilities=s.SubagentSessionCapabilities(),
        state=s.RunningStateUpdate(),  # spec SUBAGENT-22: foreground work starts
    )
    book.announced(parent, announcement)
    # spec SUBAGENT-05, SUBAGENT-06: announced on its parent before any of its traffic.
    inv.turn.update(announcement)
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
    _converse(inv, book, parent, child, task)
    # spec SUBAGENT-22, SUBAGENT-27: idle when the work stops; the child stays known.
    idle = s.SubagentUpdate(session_id=child, state=s.IdleStateUpdate(stop_reason="end_turn"))
    inv.turn.update(idle)
    book.sent(child, parent, idle)
    inv.turn.update(s.ToolCallUpdate(tool_call_id=call_id, status=s.ToolCallStatus.COMPLETED))
    inv.say(f"The echo helper ({child}) answered: {task}")
    return END


def _converse(inv: Invocation, book: Children, parent: str, child: str, task: str) -> None:
    """The task to the child, the child's own work, and its answer to the parent."""
    client = inv.agent.client
    to_child, to_parent = f"msg_{child[-6:]}_task", f"msg_{child[-6:]}_done"
    sent: List[Tuple[str, Any]] = [
        # The parent's message, in the child's transcript (SUBAGENT-57).
        (
            child,
            s.SessionMessage(
                message_id=to_child,
                sender_session_id=parent,
                recipient_session_id=child,
                content=[s.TextContent(text=task)],
            ),
        ),
        # spec SUBAGENT-12, SUBAGENT-29: the child's own work carries its own session id.
        (
            child,
            s.AgentMessageChunk(
                content=s.TextContent(text=f"Working on: {task}"), message_id=f"{child}_m1"
            ),
        ),
        # The child's answer, on the parent: participants first, then its content as a chunk.
        (
            parent,
            s.SessionMessage(
                message_id=to_parent, sender_session_id=child, recipient_session_id=parent
            ),
        ),
        (parent, s.SessionMessageChunk(message_id=to_parent, content=s.TextContent(text=task))),
    ]
    for session_id, update in sent:
        client.update(session_id, update)
        book.sent(child, session_id, update)
