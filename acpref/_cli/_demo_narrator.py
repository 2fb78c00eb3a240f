"""The narrator of ``acpref demo``: the reference client it drives, the answers it gives in place
of a user, and the numbered steps and checks it prints.

The story it tells is in ``demo`` (and, for the provisional features, ``_demo_provisional``).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Dict, List, Optional

from .. import schema as s
from .._tools.terminal import (
    Renderer,
    describe_listed,
    describe_url,
    display_name,
    permission_lines,
)
from ..client import Ask, ClientSideConnection, ReferenceClient
from ..errors import RpcError

__all__ = ["Demo", "TIMEOUT"]

TIMEOUT = 30.0


class Demo:
    """One run of the demo: a client, its connection to the echo agent, the steps so far."""

    def __init__(self, scratch: str, write: Callable[[str], None]) -> None:
        self.scratch = scratch
        self.render = Renderer(write)
        self.failures: List[str] = []
        self.step = 0
        self.client = self._client()
        self.conn: Optional[ClientSideConnection] = None
        self.session_id = ""
        #: Set by each notice that arrives (the echo agent's second one follows the turn).
        self.notice_arrived = threading.Event()

    def _client(self) -> ReferenceClient:
        return ReferenceClient(
            permissions=Ask(self._permission),
            elicit_form=self._form,
            elicit_url=self._url,
            on_update=self._on_update,
            on_terminal_output=self.render.terminal_output,
            on_elicitation_complete=lambda eid: self.render.line(f"[elicitation {eid} completed]"),
            extensions={"_acpref/echo": self._ext, "_acpref/notice": self._notice},
            capability_meta={"acpref": {"echo": True}},  # spec EXT-09: advertise what we serve
        )

    def _on_update(self, session_id: str, update: Any) -> None:
        self.render.update(update)
        if isinstance(update, s.Notice):
            self.notice_arrived.set()

    # -- Answers the demo gives in place of a user -----------------------------------------------

    def _permission(
        self, request: s.RequestPermissionRequest, cancelled: threading.Event
    ) -> Optional[str]:
        known = self.client.tool_call(request.session_id, request.tool_call.tool_call_id)
        for line in permission_lines(request, known.title if known is not None else None):
            self.render.line(line)
        allow = [o for o in request.options if "allow" in str(getattr(o.kind, "value", o.kind))]
        self.render.line(f"  (the demo chooses: {allow[0].name if allow else 'nothing'})")
        return allow[0].option_id if allow else None

    def _form(self, request: s.CreateElicitationRequest, cancelled: threading.Event) -> Any:
        self.render.line(f"[form] {request.message}")
        content: Dict[str, s.ElicitationContentValue] = {
            "name": "Ada",
            "colour": "green",
            "echoes": 2,
            "news": False,
        }
        self.render.line(f"  (the demo answers {content})")
        return s.ElicitationAcceptAction(content=content)

    def _url(self, request: s.CreateElicitationRequest, cancelled: threading.Event) -> Any:
        self.render.line(f"[url] {request.message}")
        mode = request.mode
        assert isinstance(mode, s.ElicitationUrlMode)  # the elicit_url callback gets url mode only
        for line in describe_url(mode.url):
            self.render.line(line)
        self.render.line("  (the demo consents; it never opens the URL itself)")
        return s.ElicitationAcceptAction()

    def _ext(self, params: Any) -> Any:
        self.render.line(f"[extension] _acpref/echo called with {params}")
        return {"echoed": params}

    def _notice(self, params: Any) -> None:
        self.render.line(f"[extension] notification _acpref/notice: {params}")

    # -- Narration and checks ----------------------------------------------------------------

    def heading(self, text: str) -> None:
        self.step += 1
        self.render.line("")
        self.render.line(f"== {self.step}. {text} ==")

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(f"step {self.step}: {what}")
            self.render.line(f"  !! check failed: {what}")

    def prompt(self, text: str, expect: str = "end_turn") -> Optional[str]:
        assert self.conn is not None
        self.render.line(f"you> {text}")
        try:
            answer = self.conn.prompt(self.session_id, text, timeout=TIMEOUT)
        except RpcError as exc:
            self.render.line(f"[the agent answered an error: {exc}]")
            return "error"
        self.render.flush_terminals()
        reason = str(getattr(answer.stop_reason, "value", answer.stop_reason))
        self.render.line(f"[turn ended: {reason}]")
        self.check(reason == expect, f"{text!r} ended {reason}, not {expect}")
        return reason

    def connect(self) -> None:
        argv = [
            sys.executable,
            "-m",
            "acpref",
            "echo",
            "--state-dir",
            os.path.join(self.scratch, ".echo-state"),
        ]
        self.conn = ClientSideConnection.spawn(self.client, argv, cwd=self.scratch)
        init = self.conn.initialize(timeout=TIMEOUT)
        caps = self.conn.agent_capabilities
        self.render.line(
            f"connected to {display_name(self.conn.agent_info)} (protocol {init.protocol_version})"
        )
        self.render.line(
            f"  loadSession: {caps.load_session is True}; prompt capabilities: {caps.prompt_capabilities}"
        )

    def cancel_a_turn(self) -> None:
        assert self.conn is not None
        view = self.client.view(self.session_id)
        started = threading.Event()
        before = len(view.messages)
        self.render.line("you> /wait")
        turn = self.conn.prompt_async(self.session_id, "/wait")
        while not started.wait(0.05) and not turn.done:
            if len(view.messages) > before + 1:  # our prompt, then the agent's first words
                started.set()
        self.render.line("(the demo presses Ctrl-C: session/cancel)")
        self.conn.cancel(self.session_id)
        reason = turn.result(TIMEOUT).stop_reason
        self.render.line(f"[turn ended: {getattr(reason, 'value', reason)}]")
        self.check(reason == s.StopReason.CANCELLED, "the cancelled turn ended cancelled")

    def reload(self) -> None:
        assert self.conn is not None
        status = self.conn.close()
        self.render.line(f"first connection closed; the agent exited with status {status}")
        self.client = self._client()
        self.connect()
        assert self.conn is not None
        self.render.line("session/list:")
        for info in self.conn.list_sessions(timeout=TIMEOUT):
            self.render.line(f"  {describe_listed(info)}")
        self.render.line(f"session/load {self.session_id} (the history is replayed):")
        self.conn.load_session(self.session_id, self.scratch, timeout=TIMEOUT)
        self.render.end()
        replayed = self.client.view(self.session_id)
        messages = replayed.messages
        self.check(len(messages) > 5, "the history was replayed")
        self.render.line(f"[{len(messages)} messages replayed]")
        # spec COMPACT-14, NOTICE-06: the compaction is replayed, in its place; notices are not.
        self.check(
            len(replayed.compactions) == 1 and not replayed.notices,
            "the compaction was replayed, the notices were not",
        )
        self.prompt("Still here after the reload?")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
