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
from typing import Any, Optional

from .. import schema as s
from .._tools.terminal import describe_options
from ._demo_narrator import TIMEOUT, Demo
from ._demo_provisional import run_provisional_steps


def register(subparsers: Any, name: str, help_text: str) -> None:
    p = subparsers.add_parser(name, help=help_text, description=_DESCRIPTION)
    p.add_argument(
        "--keep", action="store_true", help="keep the scratch directory (its path is printed)"
    )
    p.set_defaults(func=run)


_DESCRIPTION = """\
Run the reference client against the echo agent, in a scratch directory, and show one
numbered step at a time: initialize, a session, streaming with a thought, a plan, a title and
usage; a tool call that asks permission; a file read and a file write with its diff; a
terminal; modes and config options; both kinds of elicitation; an extension method; an error
answer; a cancelled turn; and the session loaded again over a new connection. The demo answers
its own questions and says what it answers. Exit status 0 when every step showed what it
should."""


def _story(demo: Demo) -> int:
    """Every step, in order; 0 when every check passed."""
    hello = os.path.join(demo.scratch, "hello.txt")
    with open(hello, "w", encoding="utf-8") as f:
        f.write("Hello from a file on disk.\nSecond line.\n")
    _first_session(demo)
    _turns(demo)
    _files(demo, hello)

    demo.heading("the session loaded again over a new connection")
    demo.reload()

    _terminal_modes_and_options(demo)
    _questions_and_errors(demo)

    run_provisional_steps(demo)  # system prompt, plans, subagents (shapes not yet stable)

    demo.heading("cancelling a turn")
    demo.cancel_a_turn()
    return 0 if not demo.failures else 1


def _first_session(demo: Demo) -> None:
    demo.heading("initialize: version and capabilities")
    demo.connect()
    assert demo.conn is not None

    demo.heading("a new session in the scratch directory")
    new = demo.conn.new_session(demo.scratch, timeout=TIMEOUT)
    demo.session_id = new.session_id
    view = demo.client.view(demo.session_id)
    demo.render.line(
        f"session {demo.session_id}; modes {view.mode_ids()} (current {view.current_mode})"
    )
    for line in describe_options(view.config_options):
        demo.render.line(f"  [config] {line}")

    demo.heading("a prompt echoed back")
    demo.prompt("Hello, echo agent!")


def _turns(demo: Demo) -> None:
    view = demo.client.view(demo.session_id)
    demo.heading("streaming: chunks, a thought, a plan, a title, usage")
    demo.prompt("/stream 4")
    demo.check(bool(view.plan) and view.title is not None, "a plan and a title arrived")

    demo.heading("a tool call that asks permission (with its tool name)")
    demo.prompt("/tool")
    calls = list(view.tool_calls.values())
    demo.check(bool(calls) and calls[-1].name == "echo_tool", "the tool call named its tool")

    demo.heading("session notices: one in the turn, one after it (session.notices)")
    demo.notice_arrived.clear()
    demo.prompt("/notice warning The echo agent's disk is imaginary")
    # The second notice comes after the turn's answer: wait for it, bounded.
    while len(view.notices) < 2 and demo.notice_arrived.wait(TIMEOUT):
        demo.notice_arrived.clear()
    titles = [n.title for n in view.notices]
    demo.check(len(titles) == 2, "two notices shown, neither one in the conversation")
    view.dismiss_notices()  # local only (NOTICE-08): nothing goes on the wire

    demo.heading("context compaction: one entity, a streamed summary (session.compaction)")
    demo.prompt("/compact")
    done = [c for c in view.compactions.values() if c.status == "completed"]
    demo.check(bool(done) and bool(done[-1].summary), "a completed compaction with a summary")


def _files(demo: Demo, hello: str) -> None:
    demo.heading("reading a file through the client (fs/read_text_file)")
    demo.prompt(f"/read {hello}")

    demo.heading("writing a file, shown as a diff (fs/write_text_file)")
    notes = os.path.join(demo.scratch, "notes.txt")
    demo.prompt(f"/write {notes} Written by the echo agent.")
    demo.check(_read(notes) == "Written by the echo agent.", "notes.txt holds the text")


def _terminal_modes_and_options(demo: Demo) -> None:
    view = demo.client.view(demo.session_id)  # the client of the second connection
    demo.heading("a terminal embedded in a tool call (terminal/*)")
    command = shlex.join([sys.executable, "-c", "print('hello from a terminal')"])
    demo.prompt(f"/run {command}")

    demo.heading("modes: the client sets one, the agent switches back itself")
    assert demo.conn is not None
    demo.conn.set_mode(demo.session_id, "code", timeout=TIMEOUT)
    demo.render.line(f"[mode] set to code by the client; now {view.current_mode}")
    demo.prompt("/mode ask")
    demo.check(view.current_mode == "ask", "the agent switched to ask")

    demo.heading("config options: a select and a boolean")
    for option in list(view.config_options):
        kind = option.kind
        if isinstance(kind, s.SessionConfigBoolean):
            demo.conn.set_config_option(
                demo.session_id, option.id, not kind.current_value, timeout=TIMEOUT
            )
        elif isinstance(kind, s.SessionConfigSelect) and option.id != "mode":
            values = [v.value for v in kind.options if isinstance(v, s.SessionConfigSelectOption)]
            other = [v for v in values if v != kind.current_value]
            if other:
                demo.conn.set_config_option(demo.session_id, option.id, other[0], timeout=TIMEOUT)
    for line in describe_options(view.config_options):
        demo.render.line(f"  [config] {line}")


def _questions_and_errors(demo: Demo) -> None:
    demo.heading("elicitation: a form, then a URL")
    demo.prompt("/form")
    demo.prompt("/url")

    demo.heading("extensions: a custom method and notification")
    demo.prompt("/ext ping")

    demo.heading("an error answer")
    demo.check(demo.prompt("/error") == "error", "/error answered with a JSON-RPC error")


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
    try:
        return _narrate(scratch)
    finally:
        # Also when stdout is closed (`acpref demo | head`) and the first line already fails.
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _narrate(scratch: str) -> int:
    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    demo = Demo(scratch, write)
    write(f"acpref demo: the reference client and the echo agent, in {scratch}\n")
    try:
        status = _story(demo)
    except Exception as exc:  # noqa: BLE001 - the demo reports any failure and exits non-zero
        demo.render.line(f"!! the demo stopped: {type(exc).__name__}: {exc}")
        status = 1
    finally:
        demo.close()
    if demo.failures:
        write("\nThe demo found problems:\n" + "".join(f"  - {f}\n" for f in demo.failures))
    write(f"\nacpref demo: {'all steps passed' if status == 0 else 'FAILED'}\n")
    if status == 0:
        write(NEXT)
    return status


#: What a reader who has watched the demo can do next (the README's "Try it yourself").
NEXT = """
Now try it yourself:
  acpref client -- acpref echo                    talk to the echo agent (/help lists its commands)
  acpref check-agent -- YOUR_AGENT_COMMAND        check your agent against the spec
"""
