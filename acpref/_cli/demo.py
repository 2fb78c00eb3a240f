"""``acpref demo``: the reference client and the echo agent through a full session, narrated.

Spec: the client side of every page (see ``acpref.client``). The demo runs, in a scratch
directory, the reference client against ``acpref echo`` (spawned as ``python -m acpref echo``,
with ``--state-dir`` so that a session can be loaded by a second process) and shows, one numbered
step at a time: initialize, a session, streaming with a thought, a plan, a title and usage; a tool
call (with its tool name) that asks permission; session notices; a context compaction; a file read and a file write with its diff; a terminal; modes and
config options (a select and a boolean); both kinds of elicitation; an extension method; an
error answer; a cancelled turn; and the session loaded again over a new connection. Then the
features whose shapes are still provisional: a client system prompt, plan operations and a
subagent session.

Permissions and elicitations are answered by the demo itself (it says what it answers); the URL
is shown and consented to, never opened. Each step checks what it shows; the exit status is 0
only if every check passed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import shutil
import sys
import tempfile
import threading
from typing import Any, Callable, Dict, List, Optional

from .. import schema as s
from ..client import Ask, ClientSideConnection, ReferenceClient, Renderer, display_name
from ..client.render import describe_listed, describe_options, describe_url, permission_lines
from ..errors import RpcError
from ._demo_provisional import run_provisional_steps

TIMEOUT = 30.0


def register(subparsers: Any, name: str, help_text: str) -> None:
    p = subparsers.add_parser(name, help=help_text, description=__doc__.split("\n\n")[1])
    p.add_argument(
        "--keep", action="store_true", help="keep the scratch directory (its path is printed)"
    )
    p.set_defaults(func=run)


class _Demo:
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

    # -- The story ---------------------------------------------------------------------------

    def run(self) -> int:
        hello = os.path.join(self.scratch, "hello.txt")
        with open(hello, "w", encoding="utf-8") as f:
            f.write("Hello from a file on disk.\nSecond line.\n")

        self.heading("initialize: version and capabilities")
        self.connect()
        assert self.conn is not None

        self.heading("a new session in the scratch directory")
        new = self.conn.new_session(self.scratch, timeout=TIMEOUT)
        self.session_id = new.session_id
        view = self.client.view(self.session_id)
        self.render.line(
            f"session {self.session_id}; modes {view.mode_ids()} (current {view.current_mode})"
        )
        for line in describe_options(view.config_options):
            self.render.line(f"  [config] {line}")

        self.heading("a prompt echoed back")
        self.prompt("Hello, echo agent!")

        self.heading("streaming: chunks, a thought, a plan, a title, usage")
        self.prompt("/stream 4")
        self.check(bool(view.plan) and view.title is not None, "a plan and a title arrived")

        self.heading("a tool call that asks permission (with its tool name)")
        self.prompt("/tool")
        calls = list(view.tool_calls.values())
        self.check(bool(calls) and calls[-1].name == "echo_tool", "the tool call named its tool")

        self.heading("session notices: one in the turn, one after it (session.notices)")
        self.notice_arrived.clear()
        self.prompt("/notice warning The echo agent's disk is imaginary")
        # The second notice comes after the turn's answer: wait for it, bounded.
        while len(view.notices) < 2 and self.notice_arrived.wait(TIMEOUT):
            self.notice_arrived.clear()
        titles = [n.title for n in view.notices]
        self.check(len(titles) == 2, "two notices shown, neither one in the conversation")
        view.dismiss_notices()  # local only (NOTICE-08): nothing goes on the wire

        self.heading("context compaction: one entity, a streamed summary (session.compaction)")
        self.prompt("/compact")
        done = [c for c in view.compactions.values() if c.status == "completed"]
        self.check(bool(done) and bool(done[-1].summary), "a completed compaction with a summary")

        self.heading("reading a file through the client (fs/read_text_file)")
        self.prompt(f"/read {hello}")

        self.heading("writing a file, shown as a diff (fs/write_text_file)")
        notes = os.path.join(self.scratch, "notes.txt")
        self.prompt(f"/write {notes} Written by the echo agent.")
        self.check(_read(notes) == "Written by the echo agent.", "notes.txt holds the text")

        self.heading("the session loaded again over a new connection")
        self.reload()
        view = self.client.view(self.session_id)

        self.heading("a terminal embedded in a tool call (terminal/*)")
        command = shlex.join([sys.executable, "-c", "print('hello from a terminal')"])
        self.prompt(f"/run {command}")

        self.heading("modes: the client sets one, the agent switches back itself")
        assert self.conn is not None
        self.conn.set_mode(self.session_id, "code", timeout=TIMEOUT)
        self.render.line(f"[mode] set to code by the client; now {view.current_mode}")
        self.prompt("/mode ask")
        self.check(view.current_mode == "ask", "the agent switched to ask")

        self.heading("config options: a select and a boolean")
        for option in list(view.config_options):
            kind = option.kind
            if isinstance(kind, s.SessionConfigBoolean):
                self.conn.set_config_option(
                    self.session_id, option.id, not kind.current_value, timeout=TIMEOUT
                )
            elif isinstance(kind, s.SessionConfigSelect) and option.id != "mode":
                values = [
                    v.value for v in kind.options if isinstance(v, s.SessionConfigSelectOption)
                ]
                other = [v for v in values if v != kind.current_value]
                if other:
                    self.conn.set_config_option(
                        self.session_id, option.id, other[0], timeout=TIMEOUT
                    )
        for line in describe_options(view.config_options):
            self.render.line(f"  [config] {line}")

        self.heading("elicitation: a form, then a URL")
        self.prompt("/form")
        self.prompt("/url")

        self.heading("extensions: a custom method and notification")
        self.prompt("/ext ping")

        self.heading("an error answer")
        self.check(self.prompt("/error") == "error", "/error answered with a JSON-RPC error")

        run_provisional_steps(self)  # system prompt, plans, subagents (shapes not yet stable)

        self.heading("cancelling a turn")
        self.cancel_a_turn()
        return 0 if not self.failures else 1

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


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return None


def _echo_available() -> bool:
    return (
        importlib.util.find_spec("acpref.echo") is not None
        and importlib.util.find_spec("acpref._cli.echo") is not None
    )


def run(args: argparse.Namespace) -> int:
    if not _echo_available():
        sys.stderr.write(
            "acpref demo: the echo agent (`acpref echo`) is not available in this installation; "
            "the demo needs it as its agent.\n"
        )
        return 1
    scratch = tempfile.mkdtemp(prefix="acpref-demo-")

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    demo = _Demo(scratch, write)
    write(f"acpref demo: the reference client and the echo agent, in {scratch}\n")
    try:
        status = demo.run()
    except Exception as exc:  # noqa: BLE001 - the demo reports any failure and exits non-zero
        demo.render.line(f"!! the demo stopped: {type(exc).__name__}: {exc}")
        status = 1
    finally:
        demo.close()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    if demo.failures:
        write("\nThe demo found problems:\n" + "".join(f"  - {f}\n" for f in demo.failures))
    write(f"\nacpref demo: {'all steps passed' if status == 0 else 'FAILED'}\n")
    return status
