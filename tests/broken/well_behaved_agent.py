"""A small, well-behaved agent built on ``acpref.agent``: the clean baseline of the oracle's tests.

Prompts: plain text is echoed back as one agent message; ``tool`` runs a tool call that asks
permission first (``tool ping``: an extension request, which a client answers at once, follows
the permission request: answered before a cancel, it shows the client had read it); ``read PATH``
reads a file through the client; ``term`` runs a terminal;
``slow`` streams until cancelled (at most a few seconds). Modes ``ask`` and ``code``.
"""

from __future__ import annotations

import sys

from acpref import schema as s
from acpref.agent import Agent, serve_stdio


class WellBehaved(Agent):
    info = s.Implementation(name="well-behaved", version="1.0")

    def initial_modes(self, session):
        return s.SessionModeState(
            current_mode_id="ask",
            available_modes=[
                s.SessionMode(id="ask", name="Ask"),
                s.SessionMode(id="code", name="Code"),
            ],
        )

    def initial_config_options(self, session):
        values = [
            s.SessionConfigSelectOption(value="small", name="Small"),
            s.SessionConfigSelectOption(value="large", name="Large"),
        ]
        return [
            s.SessionConfigOption(
                id="model",
                name="Model",
                kind=s.SessionConfigSelect(current_value="small", options=values),
            )
        ]

    def session_prompt(self, params, turn):
        text = "".join(b.text for b in params.prompt if isinstance(b, s.TextContent))
        message_id = turn.new_message_id()
        if text in ("tool", "tool ping"):
            probe = None
            if text == "tool ping":
                probe = lambda: turn.client.request_async("_acpref/ping", {})  # noqa: E731
            turn.update(
                s.ToolCall(
                    tool_call_id="call-1",
                    title="Edit",
                    kind=s.ToolKind.EDIT,
                    status=s.ToolCallStatus.PENDING,
                )
            )
            outcome = turn.request_permission(
                s.ToolCallUpdate(tool_call_id="call-1"),
                [
                    s.PermissionOption(
                        option_id="allow", name="Allow", kind=s.PermissionOptionKind.ALLOW_ONCE
                    ),
                    s.PermissionOption(
                        option_id="reject", name="Reject", kind=s.PermissionOptionKind.REJECT_ONCE
                    ),
                ],
                then=probe,
            )
            if turn.cancelled.is_set() or isinstance(outcome, s.CancelledPermissionOutcome):
                return s.PromptResponse(stop_reason=s.StopReason.CANCELLED)
            if getattr(outcome, "option_id", None) == "allow":
                # spec PROMPT-14: once permitted, in_progress before the final status.
                turn.update(
                    s.ToolCallUpdate(tool_call_id="call-1", status=s.ToolCallStatus.IN_PROGRESS)
                )
            turn.update(s.ToolCallUpdate(tool_call_id="call-1", status=s.ToolCallStatus.COMPLETED))
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
        if text.startswith("read "):
            content = turn.read_text_file(text[5:])
            turn.update(
                s.AgentMessageChunk(content=s.TextContent(text=content), message_id=message_id)
            )
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
        if text == "term":
            term = turn.create_terminal(sys.executable, ["-c", "print('hi')"])
            term.wait_for_exit(timeout=10)
            output = term.output().output
            term.release()
            turn.update(
                s.AgentMessageChunk(content=s.TextContent(text=output), message_id=message_id)
            )
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
        if text == "slow":
            for _ in range(100):
                if turn.cancelled.wait(0.05):
                    break
                turn.update(
                    s.AgentMessageChunk(content=s.TextContent(text="."), message_id=message_id)
                )
            return s.PromptResponse(stop_reason=s.StopReason.END_TURN)
        turn.update(s.AgentMessageChunk(content=s.TextContent(text=text), message_id=message_id))
        return s.PromptResponse(stop_reason=s.StopReason.END_TURN)


if __name__ == "__main__":
    sys.exit(serve_stdio(WellBehaved))
