"""The local commands of ``acpref client`` (``/help``, ``/modes``, ``/config``, ``/auth``...).

Spec: session-config-options.mdx, session-modes.mdx, slash-commands.mdx, authentication.mdx;
clauses CONFIG-08, CONFIG-12, CONFIG-23, SLASH-05, AUTH-03, PROMPT-04 as cited. A line typed
at the prompt that starts with ``/`` and names one of these runs here, on the main thread; any
other line is a prompt (``//`` sends a slash command named like a local one to the agent).

``LocalCommands`` is a part of the CLI's ``_App``: it uses the app's connection (``conn``),
client (``client``), session (``session_id``), ``console`` and ``timeout()``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Optional

from .. import schema as s
from ..client import ClientSideConnection, ReferenceClient
from .._tools.terminal import describe_options
from . import _status
from ._console import Console
from ._mentions import mention_help

__all__ = ["LocalCommands", "LOCAL_COMMANDS", "Quit", "Timeout"]


class Quit(Exception):
    """The user asked to quit: /quit and Ctrl-D (status 0), a second Ctrl-C (130)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Timeout(Exception):
    """The --timeout deadline of a one-shot run passed."""


#: ``-p``'s deadline when ``--timeout`` gives none: a script never waits forever on an agent
#: that never answers (``--timeout 0``: no deadline).
ONE_SHOT_TIMEOUT = 600.0


def one_shot_timeout(args: Any) -> Optional[float]:
    """``--timeout`` as the run uses it: with ``-p``, the default deadline, ``0`` for none."""
    if args.prompt is None:
        return args.timeout
    if args.timeout is None:
        return ONE_SHOT_TIMEOUT
    return args.timeout or None  # 0: no deadline; each setup answer waits the default 30 s


class LocalCommands:
    """The local commands, what they show (the session's settings), and how long they wait."""

    args: argparse.Namespace
    conn: Optional[ClientSideConnection]
    client: ReferenceClient
    console: Console
    session_id: str
    #: -p with --timeout: the monotonic deadline of the whole run.
    deadline: Optional[float]

    def timeout(self) -> float:
        """How long to wait for a setup answer: until the deadline, else --timeout, else 30 s."""
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise Timeout()
            return remaining
        return self.args.timeout if self.args.timeout is not None else 30.0

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
                slash = "//" if c.name in LOCAL_COMMANDS else "/"
                self.console.say(f"  {slash}{c.name}{hint}  {c.description}")
        elif name in ("quit", "exit"):
            raise Quit(_status.OK)
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

    def completer(self, text: str, state: int) -> Optional[str]:
        names = ["/help", "/modes", "/mode ", "/model ", "/config ", "/auth ", "/logout", "/quit"]
        try:
            names += [
                ("//" if c.name in LOCAL_COMMANDS else "/") + c.name
                for c in self.client.view(self.session_id).commands
            ]
        except KeyError:
            pass
        matches = [n for n in names if n.startswith(text)]
        return matches[state] if state < len(matches) else None


#: The local commands: an agent command of the same name is sent with ``//``.
LOCAL_COMMANDS = frozenset(
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
