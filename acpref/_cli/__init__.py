"""The ``acpref`` command line: one sub-command per module of this package.

Each sub-command module exposes ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` (the exit status). Modules are imported only when their command runs, so
that ``acpref echo`` starts as fast as the agent it is.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from typing import Any, List, Optional

from . import _status

#: Sub-command name -> (module, one-line help). Modules live in acpref/_cli/.
COMMANDS = {
    "client": ("client", "talk to any ACP agent interactively or with -p"),
    "demo": ("demo", "run the reference client against the echo agent through a full session"),
    "echo": (
        "echo",
        "run the echo agent on stdio (a deterministic agent that exercises every feature)",
    ),
    "validate": ("validate", "check a recorded transcript against the spec"),
    "proxy": ("proxy", "sit between a client and an agent, record and validate the traffic"),
    "check-agent": ("check_agent", "drive an agent through conformance scenarios"),
    "check-client": ("check_client", "grade a client with a scripted agent"),
    "diff": ("diff", "compare two transcripts of the same scenario"),
    "show": ("show", "draw a transcript as a sequence diagram, findings marked (HTML)"),
    "spec": ("spec", "show where a clause of the spec is enforced and tested"),
    "spec-diff": ("spec_diff", "list what a newer schema file changes: a spec refresh checklist"),
}


_MARKUP = re.compile(r"``([^`]*)``")
#: A description that starts by repeating the usage line (``acpref x [--y]: does z``).
_USAGE_PREFIX = re.compile(r"^acpref [^\n:]*: ")


class _Parser(argparse.ArgumentParser):
    """A sub-command's parser: its texts are for people, so no reStructuredText markup."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for key in ("description", "epilog"):
            if isinstance(kwargs.get(key), str):
                text = _MARKUP.sub(r"\1", kwargs[key])
                if key == "description" and _USAGE_PREFIX.match(text):
                    text = _USAGE_PREFIX.sub("", text, count=1)  # argparse prints the usage
                    text = text[:1].upper() + text[1:]
                kwargs[key] = text
        super().__init__(*args, **kwargs)


def _build_parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="acpref",
        description="acpref: the reference implementation of the Agent Client Protocol v1.",
    )
    parser.add_argument("--version", action="version", version=f"acpref {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        try:
            mod = importlib.import_module(f"acpref._cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"acpref._cli.{module}":
                raise
            continue  # not built yet
        mod.register(sub, name, help_text)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("ACPREF_RULE_ERRORS") == "raise":
        from .._core import state

        state.RAISE_RULE_ERRORS = True  # spec-gap rule-bug: a rule's own bug stops the run
    command = argv[0] if argv and argv[0] in COMMANDS else None
    parser = _build_parser(only=command)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return _status.USAGE
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # Whoever read our output stopped (``acpref spec --uncovered | head``): stop quietly.
        _status.stdout_closed()
        return _status.STDOUT_CLOSED
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return _status.INTERRUPTED
