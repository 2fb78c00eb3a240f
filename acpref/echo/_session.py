"""The echo agent's commands about the session beyond the turn: extensions, notices, compaction.

Spec: extensibility.mdx, session-notices.md, session-compaction.md. ``/ext`` calls the client's
extension method and sends an extension notification; ``/notice`` sends a live notice, and
another after the turn; ``/compact`` compacts the context with a streamed summary.
"""

from __future__ import annotations

import json
from typing import List

from .. import schema as s
from ..errors import RpcError
from ._commands import (
    CANCELLED,
    END,
    EXT_CLIENT_METHOD,
    EXT_NOTICE,
    Invocation,
    _split_first,
)

__all__: List[str] = []


def ext(inv: Invocation) -> s.StopReason:
    client = inv.turn.client
    text = inv.args.strip() or "hello"
    # spec EXT-10: notifications are safe to send; an unaware client ignores them.
    client.ext_notification(EXT_NOTICE, {"sessionId": inv.session.id, "text": text})
    advertised = client.meta.get("acpref")
    if not (isinstance(advertised, dict) and advertised.get("echo") is True):
        # spec EXT-09: custom methods are called only when the peer advertised them.
        inv.say(
            f"Sent {EXT_NOTICE}. The client did not advertise {EXT_CLIENT_METHOD} "
            "(clientCapabilities._meta.acpref.echo: true), so I did not call it."
        )
        return END
    try:
        result = client.ext_method(EXT_CLIENT_METHOD, {"text": text})
    except RpcError as exc:
        inv.say(
            f"Sent {EXT_NOTICE}; {EXT_CLIENT_METHOD} answered error {int(exc.code)}: {exc.message}"
        )
        return END
    inv.say(f"Sent {EXT_NOTICE}; {EXT_CLIENT_METHOD} answered {json.dumps(result, sort_keys=True)}")
    return END

def notice(inv: Invocation) -> s.StopReason:
    first, rest = _split_first(inv.args)
    if first and rest.strip():
        severity, title = first, rest.strip()
    else:
        severity, title = "info", inv.args.strip()
    title = title or "A notice from the echo agent"
    # spec NOTICE-04: any severity string goes out as given (known or not).
    if not inv.turn.notice(severity, title, "Sent by /notice; nothing depends on it."):
        # spec NOTICE-01, NOTICE-02: no session.notices: the same words as an agent message.
        inv.say(f"(notice, {severity}) {title}\nThis client does not take notices.")
        return END
    client, session_id = inv.turn.client, inv.session.id

    def later() -> None:
        # spec NOTICE-10: a notice outside any prompt turn, while the session exists.
        client.update(
            session_id,
            s.Notice(severity=s.NoticeSeverity.INFO, title="The /notice turn has ended"),
        )

    inv.turn.after_answer(later)
    inv.say("Sent a notice; another one follows the end of this turn.")
    return END

def compact(inv: Invocation) -> s.StopReason:
    turn = inv.turn
    if not turn.client.supports("session.compaction"):
        # spec COMPACT-01: without session.compaction no compaction update is sent.
        inv.say("This client does not take compaction updates; nothing was compacted.")
        return END
    # spec COMPACT-04: unique within the session for good (the tool call ids are).
    compaction_id = "cmp" + turn.new_tool_call_id()[len("call"):]
    # spec COMPACT-02: one id-addressed entity; progress is optional, here it is shown.
    turn.update(
        s.CompactionUpdate(compaction_id=compaction_id, status=s.CompactionStatus.IN_PROGRESS)
    )
    if inv.args.strip() == "fail":
        turn.update(
            s.CompactionUpdate(
                compaction_id=compaction_id,
                status=s.CompactionStatus.FAILED,
                error="/compact fail: the echo agent was asked to fail",
            )
        )
        inv.say("The compaction failed, as asked; the context is unchanged.")
        return END
    # spec COMPACT-11, COMPACT-12: the summary is what is retained, the user's own words only
    # (they were user-visible already), without framing or instructions.
    prompts = [
        u.content.text
        for u in list(inv.session.history)
        if isinstance(u, s.UserMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    turn.update(
        s.CompactionSummaryChunk(
            compaction_id=compaction_id,
            content=s.TextContent(text=f"## Retained context\n\n{len(prompts)} user prompts:\n"),
        )
    )
    for text in prompts[-5:]:
        if turn.cancelled.is_set():
            turn.update(
                s.CompactionUpdate(compaction_id=compaction_id, status=s.CompactionStatus.CANCELLED)
            )
            return CANCELLED
        turn.update(
            s.CompactionSummaryChunk(
                compaction_id=compaction_id, content=s.TextContent(text=f"- {text[:200]}\n")
            )
        )
    # spec COMPACT-09, COMPACT-10: one terminal status; summary omitted keeps the chunks.
    turn.update(
        s.CompactionUpdate(compaction_id=compaction_id, status=s.CompactionStatus.COMPLETED)
    )
    inv.say("Compacted the context; the conversation before it is kept.")
    return END
