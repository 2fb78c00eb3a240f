"""``acpref client``: an interactive (or one-shot) session with any ACP agent, in plain text.

Spec: every page a client acts on; the client side is ``acpref.client`` (see its docs). This
module is the front end only: it parses options, prints what the agent streams (``Renderer``),
asks the user for permissions and elicitations on the terminal (``_questions``), runs the local
``/commands`` (``_commands``), and watches each turn, turning Ctrl-C into ``session/cancel``
(``_turn``). Where each kind of output goes (stdout for the answer, stderr for the rest with
``-p``) is ``_console``; exit statuses are ``_status``.

Threads: the main thread reads the user's lines and answers questions; the connection's threads
render updates as they arrive. A question (a permission, a form) asked on a connection thread is
put on a queue that the main thread serves while a turn runs, so that one thread reads stdin.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

from .._shell import groups as _groups
from .. import schema as s
from .._core import Party
from ..client import (
    DEFAULT_MAX_KEPT,
    DEFAULT_MAX_REMEMBERED,
    ClientSideConnection,
    ReferenceClient,
    policy_named,
)
from .._tools.terminal import display_name, inert
from ..codec import DecodeError
from ..errors import ConnectionClosed, ErrorCode, ProtocolError, RequestTimeout, RpcError
from . import _status
from ._commands import ONE_SHOT_TIMEOUT, LocalCommands, Quit, Timeout, one_shot_timeout
from ._console import Console, LogSummary
from ._mentions import prompt_blocks
from ._questions import elicit, permission
from ._turn import run_turn

log = logging.getLogger("acpref.client")

_EPILOG = """\
With -p, stdout carries the agent's answer only; everything else (the banner, tool calls,
plans, questions, notes) goes to stderr.

Exit status: 0 the turn ended with end_turn (or, interactively, /quit or Ctrl-D);
3 max_tokens, 4 max_turn_requests, 5 refusal (with -p); 130 Ctrl-C (the turn cancelled, or
quit); 124 the --timeout deadline passed (-p: 600 s by default); 141 stdout was closed
(| head); 1 an error (the agent failed, exited, or broke the protocol); 2 bad usage, or the
agent command cannot be started (not found, not executable).

Interactive commands: /help lists them and the agent's slash commands (Tab completes);
/modes, /mode ID, /model ID, /config, /config ID VALUE, /auth [METHOD], /logout, /quit.
Any other line is a prompt; a line starting with // sends the rest as a slash command to the
agent (//help runs the agent's /help, //mode the agent's /mode). A word @PATH naming a file
of the session brings it along (embedded when the agent takes embedded context, else as a
link). Ctrl-C cancels the running turn; a second Ctrl-C quits; Ctrl-D at the prompt quits.
"""

_KEPT_HELP = (
    "the most the client keeps of a session, and holds back of a stream it shows: a longer "
    "message, thought or summary is shown as its first and last halves of this, the middle "
    f"marked dropped (default {DEFAULT_MAX_KEPT:,} characters, counted)"
)


_REMEMBERED_HELP = (
    "the most the agent's ids may cost the client, counted in bytes: the child sessions it "
    "tracks (4 KiB and the id each; past it a new child's own updates are dropped, counted), "
    "and each of a session's tables of tool call, message and compaction ids the rules check "
    f"(past it the oldest are forgotten) (default {DEFAULT_MAX_REMEMBERED:,})"
)


def register(subparsers: Any, name: str, help_text: str) -> None:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description="Talk to an ACP agent: acpref client [options] -- AGENT_CMD [ARGS...]",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-p", "--prompt", help="send one prompt, print the answer, exit (see exit status)"
    )
    p.add_argument("--cwd", default=".", help="the session's working directory (default: .)")
    p.add_argument(
        "--add-dir", action="append", default=[], metavar="DIR", help="an extra root (repeatable)"
    )
    policy = p.add_mutually_exclusive_group()
    policy.add_argument(
        "--allow", dest="policy", action="store_const", const="allow", help="allow every tool call"
    )
    policy.add_argument(
        "--deny", dest="policy", action="store_const", const="reject", help="reject every tool call"
    )
    policy.add_argument(
        "--ask",
        dest="policy",
        action="store_const",
        const="ask",
        help="ask on the terminal (default)",
    )
    p.add_argument(
        "--load", metavar="SESSION_ID", help="load an earlier session instead of starting one"
    )
    p.add_argument(
        "--auth", metavar="METHOD_ID", help="authenticate with this method before the session"
    )
    p.add_argument(
        "--json", action="store_true", help="print every message received as a JSON line"
    )
    p.add_argument("--record", metavar="FILE.jsonl", help="record both directions to FILE.jsonl")
    p.add_argument(
        "--hide-agent-stderr", action="store_true", help="do not show the agent's stderr"
    )
    p.add_argument(
        "--max-kept", type=_positive, default=DEFAULT_MAX_KEPT, metavar="CHARS", help=_KEPT_HELP
    )
    p.add_argument(
        "--max-remembered", type=_positive, default=DEFAULT_MAX_REMEMBERED, metavar="BYTES",
        help=_REMEMBERED_HELP,
    )
    p.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help=f"with -p: the deadline of the whole run, turn included (default {ONE_SHOT_TIMEOUT:g},"
        " 0: none; then the turn is cancelled, status 124); else: each setup answer (default 30)",
    )
    p.add_argument(
        "agent", nargs=argparse.REMAINDER, help="-- then the agent command and its arguments"
    )
    p.set_defaults(func=run, policy=None)


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def transcript_writer(path: str) -> "tuple[Callable[[str, bytes], None], Callable[[], None]]":
    """A ``recorder`` writing an ``acpref-transcript/1`` file (``acpref.oracle``), and its closer.

    The recording is exactly what travelled, both ways, so ``acpref validate`` can judge it.
    """
    from ..oracle import TranscriptRecorder

    recorder = TranscriptRecorder(path, me="client", header={"tool": "acpref client"})

    def close() -> None:
        recorder.eof("client")
        recorder.close()

    return recorder, close


class _Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: unwind to ``run``'s ``finally``, which stops the agent and
    every terminal (a BaseException, so that no ``except Exception`` on the way swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _install_stop_signals() -> List[int]:
    # Every exit path stops what the client started: a signal unwinds the main thread into
    # run()'s `finally` (once: a second signal during the shutdown must not cut it short), and
    # the ladders there are shortened (_groups.hurry), to end before whoever sent the signal
    # runs out of patience.
    # Returns the list that, once not empty, makes a signal only shorten the ladders.
    stopping: List[int] = []

    def on_stop(signum: int) -> None:
        if not stopping:
            stopping.append(signum)
            raise _Stopped(signum)

    _groups.install_stop_signals(on_stop)
    return stopping


# -- The session ----------------------------------------------------------------------------------


class _Client(ReferenceClient):
    """The reference client, showing the agent's extension notifications (EXT-10) too."""

    def __init__(self, console: Console, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._console = console

    def ext_notification(self, method: str, params: Any) -> None:
        shown = json.dumps(params, ensure_ascii=False, sort_keys=True)
        shown = shown if len(shown) <= 300 else shown[:297] + "..."
        self._console.say(f"[extension] {method} {shown}")
        super().ext_notification(method, params)


class _App(LocalCommands):
    def __init__(self, args: argparse.Namespace, console: Console) -> None:
        self.args = args
        self.console = console
        self.session_id = ""
        self.agent_name = "agent"
        #: -p with --timeout: the monotonic deadline of the whole run.
        self.deadline: Optional[float] = (
            time.monotonic() + args.timeout
            if args.prompt is not None and args.timeout is not None
            else None
        )
        # Without --allow/--deny: ask, unless a one-shot prompt has no terminal to ask on.
        policy = args.policy or ("ask" if sys.stdin.isatty() or args.prompt is None else "reject")
        self.client = _Client(
            console,
            permissions=policy_named(policy, self._ask_permission),
            elicit_form=self._elicit,
            elicit_url=self._elicit,
            on_update=self._on_update,
            on_terminal_output=console.render.terminal_output,
            max_kept=args.max_kept,
            max_remembered=args.max_remembered,
            on_elicitation_complete=lambda eid: console.say(f"[elicitation {eid} completed]"),
        )
        self.conn: Optional[ClientSideConnection] = None
        self.cwd = os.path.abspath(args.cwd)
        self._close_record: Optional[Callable[[], None]] = None

    def _on_update(self, session_id: str, update: Any) -> None:
        if isinstance(update, s.CurrentModeUpdate) and self.client.view(session_id).config_options:
            # spec CONFIG-23: a session with config options shows its mode through them (the
            # agent's config_option_update, CONFIG-24); current_mode_update is not displayed.
            return
        self.console.render.update(update)

    def _ask_permission(
        self, request: s.RequestPermissionRequest, cancelled: threading.Event
    ) -> Optional[str]:
        call = self.client.tool_call(request.session_id, request.tool_call.tool_call_id)
        title = call.title if call is not None and call.title else None
        return self.console.ask_on_main(
            lambda: permission(self.console, request, cancelled, title), cancelled
        )

    def _elicit(self, request: s.CreateElicitationRequest, cancelled: threading.Event) -> Any:
        answer = self.console.ask_on_main(
            lambda: elicit(self.console, self.agent_name, request, cancelled), cancelled
        )
        return answer if answer is not None else s.ElicitationCancelAction()

    def _received(self, direction: str, line: bytes) -> None:
        """Every line of the wire, as it travels (the connection's recorder)."""
        if direction != "in":
            return
        if self.args.json:
            self.console.write_json(line.decode("utf-8", "replace"))
        if line.lstrip()[:1] != b"{":
            # spec TRANSPORT-08: the agent's stdout carries ACP messages only. A line that is
            # not even meant as one (a log line, a banner) is the most common agent bug:
            # reported as it happens, as the rules report the others. The connection answers
            # it -32700 or -32600 in any case.
            from ..oracle._lines import parse_line

            verdict, _ = parse_line(Party.AGENT, line)
            if verdict is not None:
                log.warning("agent broke %s: %s", verdict.clause, verdict.message)

    def connect(self) -> None:
        args = self.args
        recorders: List[Callable[[str, bytes], None]] = [self._received]
        if args.record:
            record, self._close_record = transcript_writer(args.record)
            recorders.insert(0, record)
        forward = None if args.hide_agent_stderr else _stderr_line
        self.conn = ClientSideConnection.spawn(
            self.client,
            args.agent,
            on_stderr_line=forward,
            recorder=lambda d, line: [r(d, line) for r in recorders] and None,
            max_remembered=args.max_remembered,
        )
        init = self.conn.initialize(timeout=self.timeout())
        self.agent_name = display_name(self.conn.agent_info)  # spec INIT-21: title, else name
        if args.auth:
            self.authenticate(args.auth)
        cwd, dirs = self.cwd, [os.path.abspath(d) for d in args.add_dir]
        if args.load:
            self.conn.load_session(
                args.load, cwd, additional_directories=dirs, timeout=self.timeout()
            )
            self.session_id = args.load
        else:
            self.session_id = self.conn.new_session(
                cwd, additional_directories=dirs, timeout=self.timeout()
            ).session_id
        self.console.say(
            f"[connected to {self.agent_name}, protocol {init.protocol_version}; "
            f"session {self.session_id}]"
        )
        self.show_state()

    def turn(self, text: str) -> Tuple[str, bool]:
        """Run one prompt turn (``_turn.run_turn``): its stop reason, and whether the user
        cancelled it. The text's @PATH mentions become blocks first (``_mentions``)."""
        assert self.conn is not None
        blocks, notes = prompt_blocks(
            text, self.cwd, self.client.roots(self.session_id), self.conn.supports
        )
        for note in notes:
            self.console.say(f"[mention] {note}")
        timeout_text = f"{self.args.timeout:g}" if self.args.timeout is not None else ""
        return run_turn(
            self.conn,
            self.client,
            self.console,
            self.session_id,
            blocks,
            deadline=self.deadline,
            timeout_text=timeout_text,
        )

    def interactive(self) -> int:
        _setup_readline(self.completer)
        idle_interrupt = False
        while True:
            try:
                line = self.console.prompt_input(f"{self.agent_name}> ")
                idle_interrupt = False
            except EOFError:
                self.console.say("")
                return _status.OK
            except KeyboardInterrupt:
                if idle_interrupt:
                    self.console.say("")
                    return _status.INTERRUPTED
                idle_interrupt = True
                self.console.say("^C (Ctrl-C again or Ctrl-D to quit)")
                continue
            if not line.strip():
                continue
            try:
                if line.startswith("//"):
                    line = line[1:]  # spec SLASH-05: a slash command is sent as a prompt
                elif line.startswith("/") and self.command(line):
                    continue
                reason, _ = self.turn(line)
                if reason != "end_turn":
                    self.console.say(f"[turn ended: {reason}]")
                if reason == "refusal":
                    # spec PROMPT-18: the refused prompt will not be in the next turn's context.
                    self.console.say(f"[refused] {REFUSAL_NOTE}")
            except RpcError as exc:
                if exc.code == ErrorCode.AUTH_REQUIRED:
                    # spec AUTH-19: a session of ours may need authentication again (after a
                    # logout): say how, and carry on; the session is still ours.
                    self.console.say(f"[{self.auth_hint()}]")
                else:
                    self.console.say(f"[error] {exc}")
            except ProtocolError as exc:
                self.console.say(f"[error] {exc}")

    def one_shot(self, text: str) -> int:
        reason, user_cancelled = self.turn(text)
        if self.console.stdout_gone.is_set():
            return _status.STDOUT_CLOSED
        if reason != "end_turn":
            _note(f"the turn ended: {reason}")
        if reason == "refusal":
            # spec PROMPT-18: the refused prompt will not be in the next turn's context.
            _note(REFUSAL_NOTE)
        if user_cancelled:
            # The user cancelled: that is the outcome, whatever the agent answered (an agent
            # that answers end_turn to a cancel broke PROMPT-23, and the rules said so).
            return _status.INTERRUPTED
        return _status.STOP_REASON_STATUS.get(reason, _status.ERROR)

    def close(self) -> None:
        if self.conn is not None:
            status = self.conn.close()
            process = self.conn.process
            if status != 0 and process is not None:
                _note(f"the agent {process.describe_exit(status)}")
        if self._close_record is not None:
            self._close_record()


#: Shown when a turn ends with ``refusal``. Schema StopReason: "The user prompt and everything
#: that comes after it won't be included in the next prompt, so this should be reflected in
#: the UI".
REFUSAL_NOTE = (
    "the agent refused this prompt: it and everything after it in this turn will "
    "not be part of the next turn's context"
)

def _note(text: str) -> None:
    """A line on stderr, for the user (inert: it may quote the agent)."""
    try:
        sys.stderr.write(f"acpref client: {inert(text, multiline=True)}\n")
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass


def _stderr_line(line: str) -> None:
    try:
        sys.stderr.write(f"[agent stderr] {inert(line)}\n")
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        pass


def _setup_readline(completer: Callable[[str, int], Optional[str]]) -> None:
    try:
        import readline
    except ImportError:  # pragma: no cover - no readline on this platform
        return
    readline.set_completer(completer)
    readline.set_completer_delims(" ")
    readline.parse_and_bind("tab: complete")


def run(args: argparse.Namespace) -> int:
    agent = list(args.agent)
    if agent and agent[0] == "--":
        agent = agent[1:]
    if not agent:
        _note("give the agent command after --, e.g. acpref client -- acpref echo")
        return _status.USAGE
    if _status.unstartable("client", agent):
        return _status.USAGE
    args.agent, args.timeout = agent, one_shot_timeout(args)
    mode = "json" if args.json else "one-shot" if args.prompt is not None else "interactive"
    console = Console(mode, args.max_kept)
    # The library's warnings (a dropped notification, a broken rule), counted, on stderr.
    summary = LogSummary(Console._err)
    logging.getLogger("acpref").addHandler(summary)
    app = _App(args, console)
    stopping = _install_stop_signals()
    try:
        app.connect()
        if args.prompt is not None:
            return app.one_shot(args.prompt)
        return app.interactive()
    except (Quit, _Stopped, KeyboardInterrupt, Timeout, BrokenPipeError) as exc:
        return _stop_status(exc, args)
    except (RequestTimeout, RpcError, ProtocolError, DecodeError, ConnectionClosed, OSError) as exc:
        return _error_status(exc, app)
    finally:
        stopping.append(0)  # from here on a signal shortens the shutdown, never cuts it
        app.close()
        logging.getLogger("acpref").removeHandler(summary)
        summary.summary()
        if console.stdout_gone.is_set():
            _status.stdout_closed()


def _stop_status(exc: BaseException, args: argparse.Namespace) -> int:
    """The exit status of a run the user (or a signal, or a deadline) stopped."""
    if isinstance(exc, Quit):
        return exc.status
    if isinstance(exc, _Stopped):
        _note(f"stopped by {_groups.signal_name(exc.signum)}")
        return 128 + exc.signum
    if isinstance(exc, Timeout):
        _note(f"the --timeout of {args.timeout:g}s passed")
        return _status.TIMEOUT
    if isinstance(exc, BrokenPipeError):
        _status.stdout_closed()
        return _status.STDOUT_CLOSED
    return _status.INTERRUPTED  # KeyboardInterrupt


def _error_status(exc: Exception, app: _App) -> int:
    """The exit status of a run that failed, the failure said in one line."""
    if isinstance(exc, RequestTimeout) and app.deadline is not None:
        # The deadline of the run passed while a setup answer was awaited.
        _note(f"the --timeout of {app.args.timeout:g}s passed: {exc}")
        return _status.TIMEOUT
    if isinstance(exc, RpcError) and exc.code == ErrorCode.AUTH_REQUIRED:
        _note(f"{exc}; {app.auth_hint(at_startup=True)}")
    elif isinstance(exc, RpcError):
        _note(f"the agent answered an error: {exc}")
    elif isinstance(exc, DecodeError):
        _note(f"the agent's answer does not fit its schema: {exc}")
    else:
        # A timeout, an answer that does not fit its schema or a message that breaks a rule
        # (ProtocolError), a closed connection: one line.
        _note(str(exc))
    return _status.ERROR
