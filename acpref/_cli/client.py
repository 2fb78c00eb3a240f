"""``acpref client``: an interactive (or one-shot) session with any ACP agent, in plain text.

Spec: every page a client acts on; the client side is ``acpref.client`` (see its docs). This
module is the front end only: it parses options, prints what the agent streams (``Renderer``),
asks the user for permissions and elicitations on the terminal, and turns Ctrl-C into
``session/cancel``. Where each kind of output goes (stdout for the answer, stderr for the rest
with ``-p``) is ``_console``; exit statuses are ``_status``.

Threads: the main thread reads the user's lines and answers questions; the connection's threads
render updates as they arrive. A question (a permission, a form) asked on a connection thread is
put on a queue that the main thread serves while a turn runs, so that one thread reads stdin.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import queue
import signal
import sys
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

from .. import _groups
from .. import schema as s
from .._core import Party
from ..client import ClientSideConnection, ReferenceClient, display_name, policy_named
from ..client.forms import fields_of, parse, validate
from ..client.render import describe_options, describe_url, inert, permission_lines
from ..codec import DecodeError
from ..errors import ConnectionClosed, ErrorCode, ProtocolError, RequestTimeout, RpcError
from . import _status
from ._console import Console, LogSummary
from ._mentions import mention_help, prompt_blocks

log = logging.getLogger("acpref.client")

_EPILOG = """\
With -p, stdout carries the agent's answer only; everything else (the banner, tool calls,
plans, questions, notes) goes to stderr.

Exit status: 0 the turn ended with end_turn (or, interactively, /quit or Ctrl-D);
3 max_tokens, 4 max_turn_requests, 5 refusal (with -p); 130 Ctrl-C (the turn cancelled, or
quit); 124 the --timeout deadline passed; 141 stdout was closed (| head); 1 an error (the
agent failed, exited, or broke the protocol); 2 bad usage.

Interactive commands: /help lists them and the agent's slash commands (Tab completes);
/modes, /mode ID, /model ID, /config, /config ID VALUE, /auth [METHOD], /logout, /quit.
Any other line is a prompt; a line starting with // sends the rest as a slash command to the
agent (//help runs the agent's /help, //mode the agent's /mode). A word @PATH naming a file
of the session brings it along (embedded when the agent takes embedded context, else as a
link). Ctrl-C cancels the running turn; a second Ctrl-C quits; Ctrl-D at the prompt quits.
"""

#: After a cancel, how long the turn may take to end before the user is told it still runs.
_CANCEL_PATIENCE = 3.0


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
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="with -p: the deadline of the whole run, the turn included (then the turn is "
        "cancelled, status 124); without -p: for each setup answer (default 30)",
    )
    p.add_argument(
        "agent", nargs=argparse.REMAINDER, help="-- then the agent command and its arguments"
    )
    p.set_defaults(func=run, policy=None)


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


class _Quit(Exception):
    """The user asked to quit: /quit and Ctrl-D (status 0), a second Ctrl-C (130)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Timeout(Exception):
    """The --timeout deadline of a one-shot run passed."""


# -- Questions (they run on the main thread) ------------------------------------------------------


def _permission(
    console: Console,
    request: s.RequestPermissionRequest,
    cancelled: threading.Event,
    title: Optional[str],
) -> Optional[str]:
    for line in permission_lines(request, title):
        console.say(line)
    while not cancelled.is_set():
        answer = console.read_line(f"choose 1-{len(request.options)} (Enter: reject): ", cancelled)
        if answer is None:
            return None
        answer = answer.strip()
        if not answer:
            rejects = [
                o for o in request.options if "reject" in str(getattr(o.kind, "value", o.kind))
            ]
            return rejects[0].option_id if rejects else None
        if answer.isdigit() and 1 <= int(answer) <= len(request.options):
            return request.options[int(answer) - 1].option_id
        console.say("  please type the number of an option")
    return None


def _elicit(
    console: Console, agent: str, request: s.CreateElicitationRequest, cancelled: threading.Event
) -> Any:
    # spec ELICIT-01, ELICIT-04: who asks, and what for; decline and cancel are always offered.
    # spec ELICIT-37: the message is plain text: no URL in it is made clickable (no hyperlink).
    console.say(f"[question from {agent}] {inert(request.message)}")
    mode = request.mode
    if isinstance(mode, s.ElicitationUrlMode):
        # spec ELICIT-03: the whole URL and its host are shown, and consent asked, before anything.
        for line in describe_url(mode.url):
            console.say(line)
        # spec ELICIT-35: acpref opens nothing: the user opens the URL in their own browser, out
        # of sight of acpref and of the agent's model.
        console.say(
            "  acpref never opens it for you: if you accept, open it yourself in your browser."
        )
        answer = console.read_line("accept (a), decline (d) or cancel (Enter)? ", cancelled)
        return _action((answer or "").strip().lower())
    assert isinstance(mode, s.ElicitationFormMode)  # registered for form and url; url returned
    # spec ELICIT-01: the way out is named before the first field is asked.
    console.say("  answer each field; then send, edit, decline or cancel (Ctrl-C cancels now)")
    content: dict = {}
    while True:
        filled = _fill_form(console, mode.requested_schema, content, cancelled)
        if filled is None:
            return s.ElicitationCancelAction()
        content = filled
        problems = validate(mode.requested_schema, content)  # spec ELICIT-12
        for name, problem in problems.items():
            console.say(f"  {name} {problem}")
        # spec ELICIT-02: the answers are shown, and can be edited, before they are sent.
        console.say(f"  your answers: {json.dumps(content, ensure_ascii=False)}")
        # Enter takes the first choice: send (or, with problems, edit); giving the answers up
        # is always a word typed, never a bare Enter.
        choices = (
            "edit (e), decline (d) or cancel (c); Enter edits"
            if problems
            else "send (s), edit (e), decline (d) or cancel (c); Enter sends"
        )
        while True:
            typed = console.read_line(f"{choices}? ", cancelled)
            if typed is None:
                return s.ElicitationCancelAction()
            answer = typed.strip().lower() or ("e" if problems else "s")
            if answer in ("e", "edit", "d", "decline", "c", "cancel"):
                break
            if answer in ("s", "send") and not problems:
                # spec ELICIT-22: accepted form content is sent only once it fits the schema.
                return s.ElicitationAcceptAction(content=content)
            console.say("  please type one of the letters shown")
        if answer not in ("e", "edit"):
            return _action(answer)


def _fill_form(
    console: Console, schema: Any, previous: dict, cancelled: threading.Event
) -> Optional[dict]:
    """Ask each field in turn; defaults are the schema's or the previous answers (ELICIT-14)."""
    content: dict = {}
    for field in fields_of(schema):
        if not field.supported:
            console.say(f"  ({field.name}: a field type acpref does not know; left empty)")
            continue
        choices = field.choices()
        hint = f" [{'/'.join(choices)}]" if choices else ""
        default = previous.get(field.name, field.default)
        shown = f" (default {default})" if default is not None else ""  # spec ELICIT-14
        optional = "" if field.required else " (optional)"
        while True:
            text = console.read_line(f"  {field.label}{hint}{shown}{optional}: ", cancelled)
            if text is None:
                return None
            if not text.strip():
                if default is not None:
                    content[field.name] = default
                break
            try:
                content[field.name] = parse(field, text)
                break
            except ValueError as exc:
                console.say(f"  {exc}")
    return content


def _action(answer: str) -> Any:
    if answer in ("c", "cancel"):
        return s.ElicitationCancelAction()
    if answer in ("a", "accept", "y", "yes"):
        # spec ELICIT-22: a URL-mode accept carries no content.
        return s.ElicitationAcceptAction()
    if answer in ("d", "decline", "n", "no"):
        return s.ElicitationDeclineAction()
    return s.ElicitationCancelAction()


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


class _App:
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
            on_elicitation_complete=lambda eid: console.say(f"[elicitation {eid} completed]"),
        )
        self.conn: Optional[ClientSideConnection] = None
        self.cwd = os.path.abspath(args.cwd)
        self._close_record: Optional[Callable[[], None]] = None

    def timeout(self) -> float:
        """How long to wait for a setup answer: until the deadline, else --timeout, else 30 s."""
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout()
            return remaining
        return self.args.timeout if self.args.timeout is not None else 30.0

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
            lambda: _permission(self.console, request, cancelled, title), cancelled
        )

    def _elicit(self, request: s.CreateElicitationRequest, cancelled: threading.Event) -> Any:
        answer = self.console.ask_on_main(
            lambda: _elicit(self.console, self.agent_name, request, cancelled), cancelled
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

    def show_state(self) -> None:
        view = self.client.view(self.session_id)
        if view.config_options:
            # spec CONFIG-23: acpref's CLI knows config options: when a session has them, they
            # are its settings, modes included (the agent mirrors them, CONFIG-22), and the
            # older modes are ignored.
            for line in describe_options(view.config_options):
                self.console.say(f"[config] {line}")
        elif view.modes is not None:
            # spec CONFIG-23: a session without config options falls back to modes.
            marks = [
                m.id + ("*" if m.id == view.current_mode else "")
                for m in view.modes.available_modes
            ]
            self.console.say(f"[modes] {' '.join(marks)}")

    def set_option(self, option: s.SessionConfigOption, value: str) -> None:
        """Set a config option from the user's text (on/off, true/false... for a boolean)."""
        assert self.conn is not None
        typed: Any = value
        if isinstance(option.kind, s.SessionConfigBoolean):
            word = value.strip().lower()
            if word not in _BOOLEAN_WORDS:
                # Refused here: "maybe" is not "off".
                self.console.say(f"[config] {option.id} is on or off; {value!r} is neither")
                return
            typed = _BOOLEAN_WORDS[word]
        result = self.conn.set_config_option(
            self.session_id, option.id, typed, timeout=self.timeout()
        )
        for text in describe_options(result.config_options):
            self.console.say(f"[config] {text}")

    def shortcut(self, category: str, value: str) -> None:
        """``/mode V`` and ``/model V``: set the session's selector of that category."""
        assert self.conn is not None
        view = self.client.view(self.session_id)
        if not view.config_options and category == "mode":
            # spec CONFIG-23: no config options: the older modes API.
            self.conn.set_mode(self.session_id, value, timeout=self.timeout())
            self.console.say(f"[mode] now {value}")
            return
        # spec CONFIG-12: of several options of one category, the first in the agent's array
        # gets the shortcut. spec CONFIG-08: a category is only a hint: without one, say so
        # (/config ID VALUE sets any option).
        chosen = next((o for o in view.config_options if _category(o) == category), None)
        if chosen is None:
            self.console.say(f"[config] this agent has no {category} option; see /config")
            return
        # spec CONFIG-23: with config options, a mode is set through them, never set_mode.
        self.set_option(chosen, value)

    def authenticate(self, method_id: str) -> None:
        """``/auth [METHOD]``: list the agent's methods, or authenticate with one."""
        assert self.conn is not None
        methods = self.conn.auth_methods
        if not method_id:
            for m in methods:
                about = f": {m.description}" if isinstance(m.description, str) else ""
                self.console.say(f"[auth] {m.id} ({m.name}){about}")
            if not methods:
                self.console.say("[auth] the agent offers no authentication method")
            return
        self.conn.authenticate(s.AuthenticateRequest(method_id=method_id), timeout=self.timeout())
        self.console.say(f"[auth] authenticated with {method_id}")

    def auth_hint(self, at_startup: bool = False) -> str:
        """What to tell the user when the agent answered auth_required (-32000)."""
        ids = [m.id for m in self.conn.auth_methods] if self.conn is not None else []
        method = ids[0] if len(ids) == 1 else "METHOD"
        how = f"rerun with --auth {method}" if at_startup else f"run /auth {method}"
        offered = f" (the agent offers: {', '.join(ids)})" if ids else ""
        return f"authentication required: {how}{offered}"

    def turn(self, text: str) -> Tuple[str, bool]:
        """Run one prompt turn; return its stop reason, and whether the user cancelled it.

        Ctrl-C cancels, a second one quits. During a turn SIGINT only counts presses (no
        KeyboardInterrupt can land in the middle of sending a message); the loop below acts on
        them. With a deadline (-p --timeout) the turn is cancelled when it passes.
        """
        assert self.conn is not None
        console = self.console
        console.interrupts = console.acted = 0

        def on_sigint(signum: int, frame: Any) -> None:
            console.interrupts += 1

        blocks, notes = prompt_blocks(
            text, self.cwd, self.client.roots(self.session_id), self.conn.supports
        )
        for note in notes:
            console.say(f"[mention] {note}")
        previous = signal.signal(signal.SIGINT, on_sigint)
        cancelled_at: Optional[float] = None
        told_waiting = timed_out = False
        try:
            turn = self.conn.prompt_async(self.session_id, blocks)
            while not turn.done:
                if console.stdout_gone.is_set():
                    self.conn.cancel(self.session_id)
                    raise BrokenPipeError()
                if console.interrupts > console.acted:
                    console.acted += 1
                    if console.acted > 1:
                        raise _Quit(_status.INTERRUPTED)
                    console.say("[cancelling the turn; Ctrl-C again quits]")
                    self.conn.cancel(self.session_id)  # spec PROMPT-19, PROMPT-21
                    cancelled_at = time.monotonic()
                if (
                    self.deadline is not None
                    and cancelled_at is None
                    and time.monotonic() >= self.deadline
                ):
                    console.say(f"[the --timeout of {self.args.timeout:g}s passed: cancelling]")
                    self.conn.cancel(self.session_id)  # spec PROMPT-19
                    cancelled_at, timed_out = time.monotonic(), True
                if (
                    cancelled_at is not None
                    and not told_waiting
                    and time.monotonic() - cancelled_at >= _CANCEL_PATIENCE
                ):
                    # spec PROMPT-23: the agent must end a cancelled turn; this one has not.
                    told_waiting = True
                    console.say(
                        "[the agent has not ended the cancelled turn yet; still waiting"
                        + ("; Ctrl-C quits]" if not timed_out else "]")
                    )
                    if timed_out:
                        raise _Timeout()
                try:
                    question = console.questions.get(timeout=0.1)
                except queue.Empty:
                    continue
                if not question.cancelled.is_set() and console.interrupts == console.acted:
                    question.answer = question.ask()
                question.done.set()
        finally:
            signal.signal(signal.SIGINT, previous)
        console.render.flush_terminals()
        console.render.end()
        answer = turn.result()
        reason = str(getattr(answer.stop_reason, "value", answer.stop_reason))
        if cancelled_at is not None:
            view = self.client.view(self.session_id)
            with view.lock:
                left = [c.tool_call_id for c in view.tool_calls.values() if c.cancelled]
                for call in view.tool_calls.values():
                    call.cancelled = False  # shown once
            for tool_call_id in left:
                if not view.tool_calls[tool_call_id].finished:
                    console.render.tool_cancelled(tool_call_id)  # spec PROMPT-20
        if timed_out:
            raise _Timeout()
        return reason, cancelled_at is not None

    def command(self, line: str) -> bool:
        """A local /command; True if it was one."""
        assert self.conn is not None
        name, _, rest = line[1:].partition(" ")
        view = self.client.view(self.session_id)
        if name == "help":
            self.console.say(
                "local: /help /modes (show the settings) /mode ID /model ID /config [ID VALUE]"
                " /auth [METHOD] /logout /quit"
            )
            # spec PROMPT-04: what @PATH becomes follows the agent's promptCapabilities.
            self.console.say(mention_help(self.conn.supports))
            if view.commands:
                self.console.say(
                    "the agent's commands (// sends one whose name a local command has):"
                )
            for c in view.commands:
                hint = (
                    f" <{c.input.hint}>" if isinstance(c.input, s.UnstructuredCommandInput) else ""
                )
                # spec SLASH-05: a command is sent as prompt text; one named like a local
                # command is reached with //.
                slash = "//" if c.name in _LOCAL_COMMANDS else "/"
                self.console.say(f"  {slash}{c.name}{hint}  {c.description}")
        elif name in ("quit", "exit"):
            raise _Quit(_status.OK)
        elif name == "modes":
            self.show_state()
        elif name in ("mode", "model") and rest:
            self.shortcut(name, rest.strip())
        elif name == "config" and rest:
            config_id, _, value = rest.strip().partition(" ")
            option = view.config_option(config_id)
            if option is None:
                self.console.say(f"[config] no option {config_id!r}; see /config")
            else:
                self.set_option(option, value)
        elif name == "config":
            self.show_state()
        elif name == "auth":
            self.authenticate(rest.strip())
        elif name == "logout":
            self.conn.logout(timeout=self.timeout())  # refused unless auth.logout (AUTH-03)
            self.console.say("[auth] logged out; /auth METHOD authenticates again")
        else:
            return False
        return True

    def completer(self, text: str, state: int) -> Optional[str]:
        names = ["/help", "/modes", "/mode ", "/model ", "/config ", "/auth ", "/logout", "/quit"]
        try:
            names += [
                ("//" if c.name in _LOCAL_COMMANDS else "/") + c.name
                for c in self.client.view(self.session_id).commands
            ]
        except KeyError:
            pass
        matches = [n for n in names if n.startswith(text)]
        return matches[state] if state < len(matches) else None

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

#: The local commands: an agent command of the same name is sent with ``//``.
_LOCAL_COMMANDS = frozenset(
    {"help", "modes", "mode", "model", "config", "auth", "logout", "quit", "exit"}
)
_BOOLEAN_WORDS = {
    "on": True,
    "true": True,
    "yes": True,
    "1": True,
    "off": False,
    "false": False,
    "no": False,
    "0": False,
}


def _category(option: s.SessionConfigOption) -> Optional[str]:
    category = option.category
    return str(getattr(category, "value", category)) if isinstance(category, str) else None


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
    args.agent = agent
    mode = "json" if args.json else "one-shot" if args.prompt is not None else "interactive"
    console = Console(mode)
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
    except _Quit as quit:
        return quit.status
    except _Stopped as stop:
        _note(f"stopped by {_groups.signal_name(stop.signum)}")
        return 128 + stop.signum
    except KeyboardInterrupt:
        return _status.INTERRUPTED
    except _Timeout:
        _note(f"the --timeout of {args.timeout:g}s passed")
        return _status.TIMEOUT
    except RequestTimeout as exc:
        if app.deadline is not None:
            # The deadline of the run passed while a setup answer was awaited.
            _note(f"the --timeout of {args.timeout:g}s passed: {exc}")
            return _status.TIMEOUT
        _note(str(exc))
        return _status.ERROR
    except BrokenPipeError:
        _status.stdout_closed()
        return _status.STDOUT_CLOSED
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            _note(f"{exc}; {app.auth_hint(at_startup=True)}")
        else:
            _note(f"the agent answered an error: {exc}")
        return _status.ERROR
    except ProtocolError as exc:
        # An answer that does not fit its schema, a message that breaks a rule: one line.
        _note(str(exc))
        return _status.ERROR
    except DecodeError as exc:
        _note(f"the agent's answer does not fit its schema: {exc}")
        return _status.ERROR
    except (ConnectionClosed, OSError) as exc:
        _note(str(exc))
        return _status.ERROR
    finally:
        stopping.append(0)  # from here on a signal shortens the shutdown, never cuts it
        app.close()
        logging.getLogger("acpref").removeHandler(summary)
        summary.summary()
        if console.stdout_gone.is_set():
            _status.stdout_closed()
