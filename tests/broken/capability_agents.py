"""Agents of the capability-gated features, and one-defect peers that bend them (issue #34).

Compaction, notices, elicitation and subagent sessions may only reach a client that advertised
them, so a peer breaking one of their MUST sentences needs a conversation that advertises the
capability (else the gate's own clause, COMPACT-01, NOTICE-01, ELICIT-06 or SUBAGENT-01, fires
too and the proof is ambiguous). ``FEATURES`` are correct raw agents that use each feature, and
``drive`` names the conversation of ``tests/test_oracle_broken.py`` (``_FEATURE_DRIVES``) that
advertises it; ``tests/test_oracle_broken.py::test_feature_agent_has_no_findings`` shows each
one clean. ``BROKEN`` bends one of them in one place; ``expect`` is the clause the oracle must
report, blamed on the agent, at MUST (spec_notes/proof.md).

Run one with ``python tests/broken/capability_agents.py NAME``.
"""

from __future__ import annotations

import os
import select
import sys
from typing import Any, Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _raw import RawAgent  # noqa: E402

M = Dict[str, Any]
U = Dict[str, Any]


# -- Compaction (session-compaction.md) -----------------------------------------------------------


class CompactingAgent(RawAgent):
    """Compacts its context in each turn: in_progress, one summary chunk, completed."""

    drive = "compaction"

    def compaction(self) -> List[U]:
        summary = {"type": "text", "text": "Summary of the earlier turns."}
        update = {"sessionUpdate": "compaction_update", "compactionId": "cmp-1"}
        chunk = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "cmp-1"}
        return [
            {**update, "status": "in_progress"},
            {**chunk, "content": summary},
            {**update, "status": "completed"},
        ]

    def on_session_prompt(self, m: M) -> None:
        for update in self.compaction():
            self.update(m["params"]["sessionId"], update)
        super().on_session_prompt(m)


class CompactionWithoutStatus(CompactingAgent):
    """Opens its compaction with a compaction_update that has no ``status`` (COMPACT-04:
    "required: compactionId, status")."""

    expect = "COMPACT-04"

    def compaction(self) -> List[U]:
        first, *rest = super().compaction()
        return [{k: v for k, v in first.items() if k != "status"}, *rest]


class CompactionEndsTwice(CompactingAgent):
    """Reports its completed compaction failed afterwards (COMPACT-10: "the Agent must
    eventually put the entity into exactly one terminal status")."""

    expect = "COMPACT-10"

    def compaction(self) -> List[U]:
        failed = {"sessionUpdate": "compaction_update", "compactionId": "cmp-1", "status": "failed"}
        return [*super().compaction(), failed]


# -- Notices (session-notices.md) -----------------------------------------------------------------


class NoticingAgent(RawAgent):
    """Shows the user a notice in each turn."""

    drive = "notices"

    def notice(self) -> U:
        return {"sessionUpdate": "notice", "severity": "warning", "title": "MCP server unavailable"}

    def on_session_prompt(self, m: M) -> None:
        self.update(m["params"]["sessionId"], self.notice(), keep=False)  # spec NOTICE-06
        super().on_session_prompt(m)


class NoticeWithoutSeverity(NoticingAgent):
    """Sends a notice with no ``severity`` (NOTICE-03: "required: severity, title")."""

    expect = "NOTICE-03"

    def notice(self) -> U:
        return {"sessionUpdate": "notice", "title": "MCP server unavailable"}


# -- Elicitation (elicitation.mdx) ----------------------------------------------------------------


class ElicitingAgent(RawAgent):
    """In each turn asks a form elicitation (declined by the drive), then a URL one (accepted),
    and sends ``elicitation/complete`` for it."""

    drive = "elicitation"

    def form(self, session_id: str) -> M:
        schema = {
            "type": "object",
            "properties": {"strategy": {"type": "string", "enum": ["safe", "fast"]}},
            "required": ["strategy"],
        }
        return {
            "sessionId": session_id,
            "mode": "form",
            "message": "How should I approach this refactoring?",
            "requestedSchema": schema,
        }

    def url(self, session_id: str, elicitation_id: str = "elicit-1") -> M:
        return {
            "sessionId": session_id,
            "mode": "url",
            "elicitationId": elicitation_id,
            "url": "https://agent.example.com/connect",
            "message": "Please authorize access to your repositories.",
        }

    def elicit(self, session_id: str) -> None:
        self.request("elicitation/create", self.form(session_id))
        self.request("elicitation/create", self.url(session_id))
        self.complete("elicit-1")

    def complete(self, elicitation_id: str) -> None:
        params = {"elicitationId": elicitation_id}
        self.send({"jsonrpc": "2.0", "method": "elicitation/complete", "params": params})

    def on_session_prompt(self, m: M) -> None:
        self.elicit(m["params"]["sessionId"])
        super().on_session_prompt(m)


class ElicitingAgentCompletesTwice(ElicitingAgent):
    """Completes its URL elicitation twice: the original id, sent to this client (ELICIT-27);
    the client ignores the second (ELICIT-28). A correct agent."""

    def complete(self, elicitation_id: str) -> None:
        super().complete(elicitation_id)
        super().complete(elicitation_id)


class FormWithoutMessage(ElicitingAgent):
    """Asks a form elicitation with no ``message`` (ELICIT-08: "required: message")."""

    expect = "ELICIT-08"

    def form(self, session_id: str) -> M:
        return {k: v for k, v in super().form(session_id).items() if k != "message"}


class NestedFormField(ElicitingAgent):
    """Asks a form whose field is an object (ELICIT-11: "Property definitions (must be
    primitive types).")."""

    expect = "ELICIT-11"

    def form(self, session_id: str) -> M:
        params = super().form(session_id)
        nested = {"type": "object", "properties": {"name": {"type": "string"}}}
        return {**params, "requestedSchema": {"type": "object", "properties": {"owner": nested}}}


class UrlElicitationWithoutUrl(ElicitingAgent):
    """Asks a URL elicitation with no ``url`` (ELICIT-17: "required: elicitationId, url")."""

    expect = "ELICIT-17"

    def url(self, session_id: str, elicitation_id: str = "elicit-1") -> M:
        return {k: v for k, v in super().url(session_id, elicitation_id).items() if k != "url"}


class ReusedElicitationId(ElicitingAgent):
    """Asks a second URL elicitation under the id of one still outstanding (ELICIT-24: "The
    Agent MUST keep each `elicitationId` unique among outstanding URL elicitations")."""

    expect = "ELICIT-24"

    def elicit(self, session_id: str) -> None:
        self.request("elicitation/create", self.url(session_id))
        self.request("elicitation/create", self.url(session_id))  # elicit-1 is not complete
        self.complete("elicit-1")


class CompletesUnknownElicitation(ElicitingAgent):
    """Completes an elicitation id it never sent (ELICIT-27: "It MUST send that notification
    only to the same Client that received the original request and include the original
    `elicitationId`.")."""

    expect = "ELICIT-27"

    def complete(self, elicitation_id: str) -> None:
        super().complete("elicit-404")


# -- Subagent sessions (subagents.md) -------------------------------------------------------------


class SubagentAgent(RawAgent):
    """Delegates each turn to a child session, which delegates to a grandchild: announces both
    (SUBAGENT-05), streams the grandchild's work, reports a message to the child and a
    tool-call reference to it, and the child's idle state. A load replays all of it before the
    response; after a load's or a resume's response it announces both again, parent first,
    with their whole capabilities (SUBAGENT-38, SUBAGENT-40), before the child's fresh traffic.
    """

    drive = "subagents"
    child_cwd = "/tmp"

    def __init__(self) -> None:
        super().__init__()
        #: What each root's turns sent for its children, in order: the load replays it.
        self.timeline: Dict[str, List[Tuple[str, U]]] = {}

    def child(self, root: str) -> str:
        return f"{root}-child"

    def grandchild(self, root: str) -> str:
        return f"{root}-grandchild"

    def announce(self, parent: str, child: str) -> Tuple[str, U]:
        """The announcement (and reannouncement) of ``child`` on ``parent``."""
        update = {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "title": "Test investigator",
            "capabilities": {"cancel": {}},
            "state": {"state": "running"},
            "cwd": self.child_cwd,
        }
        return parent, update

    def delegation(self, root: str) -> List[Tuple[str, U]]:
        """What a turn of ``root`` sends, in order: (session, update)."""
        child, grandchild = self.child(root), self.grandchild(root)
        text = {"type": "text", "text": "Find the cause of the failing tests."}
        message = {
            "sessionUpdate": "session_message",
            "messageId": "msg-1",
            "senderSessionId": root,
            "recipientSessionId": child,
            "content": [text],
        }
        reference = _session_reference("call-delegate", "Delegate task", child)
        idle = {
            "sessionUpdate": "subagent_update",
            "sessionId": child,
            "state": {"state": "idle", "stopReason": "end_turn"},
        }
        return [
            self.announce(root, child),
            (child, message),
            self.announce(child, grandchild),
            (grandchild, _chunk("Reading the test log.")),
            (root, reference),
            (root, idle),
        ]

    def reannouncements(self, root: str) -> List[Tuple[str, U]]:
        """After a load's or a resume's response: every continuing child again, parent first."""
        child = self.child(root)
        return [self.announce(root, child), self.announce(child, self.grandchild(root))]

    def fresh(self, root: str) -> List[Tuple[str, U]]:
        """The child's fresh traffic once it is announced again."""
        return [(self.child(root), _chunk("Still working."))]

    def send_all(self, updates: List[Tuple[str, U]]) -> None:
        for session_id, update in updates:
            self.update(session_id, update, keep=False)

    def on_session_prompt(self, m: M) -> None:
        root = m["params"]["sessionId"]
        if root not in self.history:  # a child, or no session: refused (SUBAGENT-18)
            super().on_session_prompt(m)
            return
        updates = self.delegation(root)
        self.send_all(updates)
        self.timeline.setdefault(root, []).extend(updates)
        text = m["params"]["prompt"][0].get("text")
        if text in ("ask", "ask ping"):
            self.child_asks(root, probe=text == "ask ping")
        super().on_session_prompt(m)

    def child_asks(self, root: str, probe: bool = False) -> None:
        """The child needs the user's permission (the prompt ``ask``; ``ask ping``: a probe
        request follows it, ``ask_permission``); a session/cancel of the child meanwhile cancels
        its work, and it confirms with idle, cancelled (SUBAGENT-21)."""
        child = self.child(root)
        call = {"sessionUpdate": "tool_call", "toolCallId": "call-child", "title": "Edit"}
        blocked = {"sessionUpdate": "subagent_update", "sessionId": child}
        self.send_all([(child, call), (root, {**blocked, "state": {"state": "requires_action"}})])
        self.cancelled.discard(child)
        self.ask_permission(child, "call-child", probe)
        stop = "cancelled" if child in self.cancelled else "end_turn"
        done = {"sessionUpdate": "tool_call_update", "toolCallId": "call-child", "status": "failed"}
        idle = {**blocked, "state": {"state": "idle", "stopReason": stop}}
        self.send_all([(child, done), (root, idle)])

    def replay(self, root: str) -> List[Tuple[str, U]]:
        """The load's replay: the root's own history with its children's, in the original order."""
        own = [(root, update) for update in self.history.get(root, [])]
        return own[:1] + self.timeline.get(root, []) + own[1:]

    def on_session_load(self, m: M) -> None:
        root = m["params"]["sessionId"]
        if root not in self.history:  # a child is never loaded (SUBAGENT-17)
            self.error(m, -32002, f"no session {root!r}")
            return
        self.send_all(self.replay(root))
        self.reply(m, {})
        self.reconnected(root)

    def on_session_resume(self, m: M) -> None:
        if m["params"]["sessionId"] not in self.history:  # nor resumed (SUBAGENT-17)
            self.error(m, -32002, f"no session {m['params']['sessionId']!r}")
            return
        self.reply(m, {})
        self.reconnected(m["params"]["sessionId"])

    def reconnected(self, root: str) -> None:
        self.send_all(self.reannouncements(root))
        self.send_all(self.fresh(root))


class SubagentAgentLoaded(SubagentAgent):
    """The same agent, then its parent session loaded (replay, response, reannouncements)."""

    drive = "subagents_load"


class SubagentAgentResumed(SubagentAgent):
    """The same agent, then its parent session resumed (response, reannouncements)."""

    drive = "subagents_resume"


class ReferenceWithoutSubagents(SubagentAgent):
    """Sends ``session`` tool-call content (naming its own session) to a client that did not
    advertise subagents (SUBAGENT-02: "Agents MUST NOT send this content unless the Client
    advertised `clientCapabilities.subagents`")."""

    expect, drive = "SUBAGENT-02", "prompt"

    def delegation(self, root: str) -> List[Tuple[str, U]]:
        reference = _session_reference("call-look", "Look back", root)
        return [(root, reference)]


class ChildTrafficBeforeAnnouncement(SubagentAgent):
    """Streams the grandchild's work before announcing it (SUBAGENT-05: "The first update for an
    unknown `sessionId` announces the child and MUST be sent before any live child traffic")."""

    expect = "SUBAGENT-05"

    def delegation(self, root: str) -> List[Tuple[str, U]]:
        updates = super().delegation(root)
        updates[2], updates[3] = updates[3], updates[2]
        return updates


class ChildReusesRootId(SubagentAgent):
    """Announces a child under the id of its own parent, an ordinary session (SUBAGENT-09: the
    child sessionId "MUST NOT be reused for an unrelated session")."""

    expect = "SUBAGENT-09"

    def delegation(self, root: str) -> List[Tuple[str, U]]:
        return [self.announce(root, root)]


class GrandchildMovedToChild(SubagentAgent):
    """Announces a second child, then updates the first child's child on it (SUBAGENT-10: "It
    MUST NOT guess parentage or temporarily announce a nested child under the root.")."""

    expect = "SUBAGENT-10"

    def delegation(self, root: str) -> List[Tuple[str, U]]:
        other = f"{root}-other"
        moved = self.announce(other, self.grandchild(root))
        return [*super().delegation(root), self.announce(root, other), moved]


class RelativeChildCwd(SubagentAgent):
    """Announces children whose cwd is relative (SUBAGENT-16: "The child's working directory.
    Must be an absolute path.")."""

    expect = "SUBAGENT-16"
    child_cwd = "build"


class ReplaysChildBeforeItsAnnouncement(SubagentAgentLoaded):
    """Replays the grandchild's traffic before the replayed announcement of it (SUBAGENT-31:
    "Replayed child updates MUST preserve their original session identities, known parentage,
    and per-session ordering.")."""

    expect = "SUBAGENT-31"

    def replay(self, root: str) -> List[Tuple[str, U]]:
        updates = super().replay(root)
        at = next(i for i, (sid, _) in enumerate(updates) if sid == self.grandchild(root))
        updates[at - 1], updates[at] = updates[at], updates[at - 1]
        return updates


class ReplayAsksPermissionAgain(SubagentAgentLoaded):
    """Asks the child's permission again while replaying the load (SUBAGENT-37: "Replay MUST NOT
    reissue historical permission, elicitation, or other Agent-to-Client requests.")."""

    expect = "SUBAGENT-37"

    def on_session_load(self, m: M) -> None:
        root = m["params"]["sessionId"]
        if root not in self.history:  # a child is never loaded (SUBAGENT-17)
            self.error(m, -32002, f"no session {root!r}")
            return
        self.send_all(self.replay(root))
        self.ask_permission(self.child(root), "call-delegate")
        self.reply(m, {})
        self.reconnected(root)


class ReferenceBeforeReannouncement(SubagentAgentResumed):
    """After the resume's response, references the child before announcing it again
    (SUBAGENT-38: "After responding, the Agent MUST reannounce each continuing child ... before
    sending fresh child traffic or session references.")."""

    expect = "SUBAGENT-38"

    def reconnected(self, root: str) -> None:
        reference = _session_reference("call-again", "Delegate again", self.child(root))
        self.send_all([(root, reference)])
        super().reconnected(root)


class GrandchildReannouncedUnderRoot(SubagentAgentResumed):
    """After the resume's response, announces the grandchild again on the root (SUBAGENT-39:
    "surviving grandchildren MUST NOT be reparented to the root")."""

    expect = "SUBAGENT-39"

    def reannouncements(self, root: str) -> List[Tuple[str, U]]:
        return [self.announce(root, self.child(root)), self.announce(root, self.grandchild(root))]


class ReannouncesWithoutCapabilities(SubagentAgentResumed):
    """Announces the children again after the resume without their ``capabilities``
    (SUBAGENT-40: "Each reannouncement MUST contain a complete current `capabilities` object")."""

    expect = "SUBAGENT-40"

    def reannouncements(self, root: str) -> List[Tuple[str, U]]:
        out = super().reannouncements(root)
        return [(sid, {k: v for k, v in u.items() if k != "capabilities"}) for sid, u in out]


class FreshTrafficBeforeReannouncement(SubagentAgentResumed):
    """After the resume's response, streams the child's work before announcing it again
    (SUBAGENT-41: "the Agent MUST queue their fresh notifications and requests until after the
    response and current reannouncements")."""

    expect = "SUBAGENT-41"

    def reconnected(self, root: str) -> None:
        self.send_all(self.fresh(root))
        super().reconnected(root)


class ReferenceToUnknownSession(SubagentAgent):
    """References a session it never announced (SUBAGENT-53: "The target MUST already be known to
    the Client through ordinary session setup or a `subagent_update` announcement.")."""

    expect = "SUBAGENT-53"

    def delegation(self, root: str) -> List[Tuple[str, U]]:
        reference = _session_reference("call-look", "Look at it", "sess-404")
        return [*super().delegation(root), (root, reference)]


def _session_reference(call_id: str, title: str, session_id: str) -> U:
    """A finished tool call whose content points at a session (a child's, or any other)."""
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title,
        "status": "completed",
        "content": [{"type": "session", "sessionId": session_id}],
    }


class ChildTrafficCrossesResume(SubagentAgentResumed):
    """After its turn, the grandchild streams one more line just as the client writes the
    session/resume of the root: the agent writes it when the resume is on its stdin, before
    reading it, then resumes correctly. Recorded after the resume and before its response, the
    chunk shows no fresh traffic the agent failed to queue (SUBAGENT-41): the agent had not read
    the resume. spec-gap child-crossing-reopen, no MUST."""

    crosses = "spec-gap:child-crossing-reopen"

    def on_session_prompt(self, m: M) -> None:
        super().on_session_prompt(m)
        root = m["params"]["sessionId"]
        if root in self.history and select.select([0], [], [], 10.0)[0]:  # unread on stdin
            self.send_all([(self.grandchild(root), _chunk("One more line."))])


def _chunk(text: str) -> U:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


FEATURES = {
    name: cls
    for name, cls in globals().items()
    if isinstance(cls, type) and issubclass(cls, RawAgent) and cls is not RawAgent
    and "expect" not in vars(cls) and "crosses" not in vars(cls) and not name.startswith("_")
}

#: Correct agents whose message crosses the client's on the wire: the finding they get is
#: ``crosses``, a spec-gap, never a MUST.
CROSSING = {
    name: cls
    for name, cls in globals().items()
    if isinstance(cls, type) and "crosses" in vars(cls) and not name.startswith("_")
}

BROKEN = {
    name: cls
    for name, cls in globals().items()
    if isinstance(cls, type) and "expect" in vars(cls) and not name.startswith("_")
}

if __name__ == "__main__":
    {**FEATURES, **BROKEN, **CROSSING}[sys.argv[1]]().run()
