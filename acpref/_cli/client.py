"""``acpref client``: an interactive (or one-shot) session with any ACP agent, in plain text.

Spec: every page a client acts on; the client side is ``acpref.client`` (see its docs). This
module is the front end only: it parses options, prints what the agent streams (``Renderer``),
asks the user for permissions and elicitations on the terminal, and turns Ctrl-C into
``session/cancel``. Output goes to stdout (this is the CLI, not the library).

Threads: the main thread reads the user's lines and answers questions; the connection's threads
render updates as they arrive. A question (a permission, a form) asked on a connection thread is
put on a queue that the main thread serves while a turn runs, so that one thread reads stdin.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import select
import signal
import sys
import threading
from typing import Any, Callable, List, Optional

from .. import _groups
from .. import schema as s
from ..client import ClientSideConnection, ReferenceClient, Renderer, display_name, policy_named
from ..client.forms import fields_of, parse, validate
from ..client.render import describe_options, describe_url, permission_lines
from ..errors import ConnectionClosed, ErrorCode, LocalProtocolError, RpcError
from ._mentions import mention_help, prompt_blocks

#: Exit status of ``-p`` for each stop reason (documented in ``--help``).
EXIT_STATUS = {
    "end_turn": 0,
    "max_tokens": 3,
    "max_turn_requests": 4,
    "refusal": 5,
    "cancelled": 130,
}
EXIT_ERROR, EXIT_USAGE = 1, 2

_EPILOG = """\
Exit status with -p: 0 end_turn, 3 max_tokens, 4 max_turn_requests, 5 refusal,
130 cancelled (Ctrl-C), 1 an error (the agent failed or exited), 2 bad usage.

Interactive commands: /help lists them and the agent's slash commands (Tab completes);
/modes, /mode ID, /model ID, /config, /config ID VALUE, /auth [METHOD], /logout, /quit.
Any other line is a prompt; a line starting with // sends the rest as a slash command to the
agent (//help runs the agent's /help). A word @PATH naming a file of the session brings it
along (embedded when the agent takes embedded context, else as a link).
Ctrl-C cancels the running turn; a second Ctrl-C (or Ctrl-D at the prompt) quits.
"""


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
        "--timeout", type=float, default=30.0, help="seconds to wait for setup answers (default 30)"
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
    """The user asked to quit (a second Ctrl-C, /quit, Ctrl-D)."""


class _Question:
    """A question a connection thread needs the user to answer on the main thread."""

    def __init__(self, ask: Callable[[], Any], cancelled: threading.Event) -> None:
        self.ask = ask
        self.cancelled = cancelled
        self.answer: Any = None
        self.done = threading.Event()


class _Console:
    """The terminal: rendered output, and line input that gives up when a question is moot."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        out = (lambda text: None) if quiet else self._out
        self.render = Renderer(out)
        self.questions: "queue.Queue[_Question]" = queue.Queue()
        #: Ctrl-C presses during a turn (counted by the SIGINT handler, see ``_App.turn``),
        #: and how many of them the turn loop has acted on: a question gives up on a new one.
        self.interrupts = 0
        self.acted = 0

    @staticmethod
    def _out(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    def say(self, text: str) -> None:
        """A line for the user: stdout, or stderr when stdout carries JSON."""
        if self.quiet:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        else:
            self.render.line(text)

    def read_line(self, prompt: str, cancelled: Optional[threading.Event] = None) -> Optional[str]:
        """A line typed by the user; None at end of input or once ``cancelled`` is set."""
        self.render.end()
        sys.stderr.write(prompt) if self.quiet else self._out(prompt)
        if not sys.stdin.isatty():
            line = sys.stdin.readline()
            return line.rstrip("\n") if line else None
        while (cancelled is None or not cancelled.is_set()) and self.interrupts == self.acted:
            ready, _, _ = select.select([sys.stdin], [], [], 0.1)
            if ready:
                line = sys.stdin.readline()
                return line.rstrip("\n") if line else None
        self.say("(no longer needed)")
        return None

    def ask_on_main(self, ask: Callable[[], Any], cancelled: threading.Event) -> Any:
        """From a connection thread: have the main thread run ``ask``; None if cancelled first."""
        question = _Question(ask, cancelled)
        self.questions.put(question)
        while not question.done.wait(0.1):
            if cancelled.is_set():
                return None
        return question.answer


# -- Questions (they run on the main thread) ------------------------------------------------------


def _permission(
    console: _Console,
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
    console: _Console, agent: str, request: s.CreateElicitationRequest, cancelled: threading.Event
) -> Any:
    # spec ELICIT-01, ELICIT-04: who asks, and what for; decline and cancel are always offered.
    # spec ELICIT-37: the message is plain text: no URL in it is made clickable (no hyperlink).
    console.say(f"[question from {agent}] {request.message}")
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
        choices = (
            "edit (e), decline (d) or cancel (Enter)"
            if problems
            else "send (s), edit (e), decline (d) or cancel (Enter)"
        )
        answer = (console.read_line(f"{choices}? ", cancelled) or "").strip().lower()
        if answer in ("e", "edit"):
            continue
        if answer in ("s", "send") and not problems:
            # spec ELICIT-22: accepted form content is sent only once it fits the schema.
            return s.ElicitationAcceptAction(content=content)
        action = _action(answer)
        return (
            action
            if not isinstance(action, s.ElicitationAcceptAction)
            else s.ElicitationCancelAction()
        )


def _fill_form(
    console: _Console, schema: Any, previous: dict, cancelled: threading.Event
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
    if answer in ("a", "accept", "y", "yes"):
        # spec ELICIT-22: a URL-mode accept carries no content.
        return s.ElicitationAcceptAction()
    if answer in ("d", "decline", "n", "no"):
        return s.ElicitationDeclineAction()
    return s.ElicitationCancelAction()


# -- The session ----------------------------------------------------------------------------------


class _App:
    def __init__(self, args: argparse.Namespace, console: _Console) -> None:
        self.args = args
        self.console = console
        self.session_id = ""
        self.agent_name = "agent"
        # Without --allow/--deny: ask, unless a one-shot prompt has no terminal to ask on.
        policy = args.policy or ("ask" if sys.stdin.isatty() or args.prompt is None else "reject")
        self.client = ReferenceClient(
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

    def connect(self) -> None:
        args = self.args
        recorders: List[Callable[[str, bytes], None]] = []
        if args.record:
            record, self._close_record = transcript_writer(args.record)
            recorders.append(record)
        if args.json:

            def print_received(direction: str, line: bytes) -> None:
                if direction == "in":
                    _json_line(line)

            recorders.append(print_received)
        forward = None if args.hide_agent_stderr else _stderr_line
        self.conn = ClientSideConnection.spawn(
            self.client,
            args.agent,
            on_stderr_line=forward,
            recorder=(lambda d, line: [r(d, line) for r in recorders]) if recorders else None,
        )
        init = self.conn.initialize(timeout=args.timeout)
        self.agent_name = display_name(self.conn.agent_info)  # spec INIT-21: title, else name
        if args.auth:
            self.authenticate(args.auth)
        cwd, dirs = self.cwd, [os.path.abspath(d) for d in args.add_dir]
        if args.load:
            self.conn.load_session(
                args.load, cwd, additional_directories=dirs, timeout=args.timeout
            )
            self.session_id = args.load
        else:
            self.session_id = self.conn.new_session(
                cwd, additional_directories=dirs, timeout=args.timeout
            ).session_id
        self.console.say(
            f"[connected to {self.agent_name}, protocol {init.protocol_version}; session {self.session_id}]"
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
        """Set a config option from the user's text (on/off/true/false for a boolean)."""
        assert self.conn is not None
        typed: Any = (
            value in ("on", "true", "yes", "1")
            if isinstance(option.kind, s.SessionConfigBoolean)
            else value
        )
        result = self.conn.set_config_option(
            self.session_id, option.id, typed, timeout=self.args.timeout
        )
        for text in describe_options(result.config_options):
            self.console.say(f"[config] {text}")

    def shortcut(self, category: str, value: str) -> None:
        """``/mode V`` and ``/model V``: set the session's selector of that category."""
        assert self.conn is not None
        view = self.client.view(self.session_id)
        if not view.config_options and category == "mode":
            # spec CONFIG-23: no config options: the older modes API.
            self.conn.set_mode(self.session_id, value, timeout=self.args.timeout)
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
        self.conn.authenticate(
            s.AuthenticateRequest(method_id=method_id), timeout=self.args.timeout
        )
        self.console.say(f"[auth] authenticated with {method_id}")

    def auth_hint(self, at_startup: bool = False) -> str:
        """What to tell the user when the agent answered auth_required (-32000)."""
        ids = [m.id for m in self.conn.auth_methods] if self.conn is not None else []
        method = ids[0] if len(ids) == 1 else "METHOD"
        how = f"rerun with --auth {method}" if at_startup else f"run /auth {method}"
        offered = f" (the agent offers: {', '.join(ids)})" if ids else ""
        return f"authentication required: {how}{offered}"

    def turn(self, text: str) -> str:
        """Run one prompt turn; return its stop reason. Ctrl-C cancels, a second one quits.

        During a turn SIGINT only counts presses (no KeyboardInterrupt can land in the middle
        of sending a message); the loop below acts on them.
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
        try:
            turn = self.conn.prompt_async(self.session_id, blocks)
            while not turn.done:
                if console.interrupts > console.acted:
                    console.acted += 1
                    if console.acted > 1:
                        raise _Quit()
                    console.say("[cancelling the turn; Ctrl-C again quits]")
                    self.conn.cancel(self.session_id)  # spec PROMPT-19, PROMPT-21
                try:
                    question = console.questions.get(timeout=0.1)
                except queue.Empty:
                    continue
                if not question.cancelled.is_set() and console.interrupts == console.acted:
                    question.answer = question.ask()
                question.done.set()
        finally:
            signal.signal(signal.SIGINT, previous)
        self.console.render.flush_terminals()
        self.console.render.end()
        answer = turn.result()
        return str(getattr(answer.stop_reason, "value", answer.stop_reason))

    def command(self, line: str) -> bool:
        """A local /command; True if it was one."""
        assert self.conn is not None
        name, _, rest = line[1:].partition(" ")
        view = self.client.view(self.session_id)
        if name == "help":
            self.console.say(
                "local: /help /modes /mode ID /model ID /config [ID VALUE] /auth [METHOD]"
                " /logout /quit  (//CMD sends /CMD)"
            )
            # spec PROMPT-04: what @PATH becomes follows the agent's promptCapabilities.
            self.console.say(mention_help(self.conn.supports))
            for c in view.commands:
                hint = (
                    f" <{c.input.hint}>" if isinstance(c.input, s.UnstructuredCommandInput) else ""
                )
                self.console.say(f"  /{c.name}{hint}  {c.description}")
        elif name in ("quit", "exit"):
            raise _Quit()
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
            self.conn.logout(timeout=self.args.timeout)  # refused unless auth.logout (AUTH-03)
            self.console.say("[auth] logged out; /auth METHOD authenticates again")
        else:
            return False
        return True

    def completer(self, text: str, state: int) -> Optional[str]:
        names = ["/help", "/modes", "/mode ", "/model ", "/config ", "/auth ", "/logout", "/quit"]
        try:
            names += ["/" + c.name for c in self.client.view(self.session_id).commands]
        except KeyError:
            pass
        matches = [n for n in names if n.startswith(text)]
        return matches[state] if state < len(matches) else None

    def interactive(self) -> int:
        _setup_readline(self.completer)
        idle_interrupt = False
        while True:
            try:
                line = input(f"{self.agent_name}> ")
                idle_interrupt = False
            except EOFError:
                self.console.say("")
                return 0
            except KeyboardInterrupt:
                if idle_interrupt:
                    self.console.say("")
                    return 130
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
                reason = self.turn(line)
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
            except LocalProtocolError as exc:
                self.console.say(f"[error] {exc}")

    def one_shot(self, text: str) -> int:
        reason = self.turn(text)
        if reason != "end_turn":
            sys.stderr.write(f"acpref client: the turn ended: {reason}\n")
        if reason == "refusal":
            # spec PROMPT-18: the refused prompt will not be in the next turn's context.
            sys.stderr.write(f"acpref client: {REFUSAL_NOTE}\n")
        return EXIT_STATUS.get(reason, EXIT_ERROR)

    def close(self) -> None:
        if self.conn is not None:
            status = self.conn.close()
            process = self.conn.process
            if status != 0 and process is not None:
                how = process.describe_exit(status)
                sys.stderr.write(f"acpref client: the agent {how}\n")
        if self._close_record is not None:
            self._close_record()


#: Shown when a turn ends with ``refusal``. Schema StopReason: "The user prompt and everything
#: that comes after it won't be included in the next prompt, so this should be reflected in
#: the UI".
REFUSAL_NOTE = (
    "the agent refused this prompt: it and everything after it in this turn will "
    "not be part of the next turn's context"
)


def _category(option: s.SessionConfigOption) -> Optional[str]:
    category = option.category
    return str(getattr(category, "value", category)) if isinstance(category, str) else None


def _json_line(line: bytes) -> None:
    sys.stdout.write(line.decode("utf-8", "replace") + "\n")
    sys.stdout.flush()


def _stderr_line(line: str) -> None:
    sys.stderr.write(f"[agent stderr] {line}\n")
    sys.stderr.flush()


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
        sys.stderr.write(
            "acpref client: give the agent command after --, e.g. acpref client -- acpref echo\n"
        )
        return EXIT_USAGE
    args.agent = agent
    console = _Console(quiet=args.json)
    app = _App(args, console)
    stopping = _install_stop_signals()
    try:
        app.connect()
        if args.prompt is not None:
            return app.one_shot(args.prompt)
        return app.interactive()
    except _Quit:
        return 130
    except _Stopped as stop:
        sys.stderr.write(f"acpref client: stopped by {_groups.signal_name(stop.signum)}\n")
        return 128 + stop.signum
    except KeyboardInterrupt:
        return 130
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            sys.stderr.write(f"acpref client: {exc}; {app.auth_hint(at_startup=True)}\n")
        else:
            sys.stderr.write(f"acpref client: {exc}\n")
        return EXIT_ERROR
    except (ConnectionClosed, LocalProtocolError, OSError) as exc:
        sys.stderr.write(f"acpref client: {exc}\n")
        return EXIT_ERROR
    finally:
        stopping.append(0)  # from here on a signal shortens the shutdown, never cuts it
        app.close()
