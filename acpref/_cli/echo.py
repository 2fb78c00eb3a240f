"""``acpref echo``: run the echo agent on stdio.

Spec: transports.mdx (stdio: stdout carries protocol messages only, logs go to stderr,
TRANSPORT-08). The agent itself is ``acpref.echo``; this module only parses options, sets up
logging on stderr and serves. Room is left for ``--check REPORT.json`` and ``/mcp`` (a later
issue).
"""

from __future__ import annotations

import argparse
import logging
import sys
import textwrap
from typing import Any


def _epilog() -> str:
    from ..echo import COMMANDS

    lines = ["slash commands (send them as the text of a prompt):"]
    for c in COMMANDS.values():
        usage = f"/{c.name}" + (f" <{c.hint}>" if c.hint else "")
        lines.append(f"  {usage:<28} {c.description}")
    lines.append("")
    lines.append(
        "Any other prompt is echoed back. spec_notes/echo-agent.md tells what each one exercises."
    )
    return "\n".join(lines)


def register(subparsers: Any, name: str, help_text: str) -> None:
    """Add the ``echo`` sub-command to the ``acpref`` parser."""
    parser = subparsers.add_parser(
        name,
        help=help_text,
        description=textwrap.dedent(
            """\
            Run the echo agent on stdin/stdout: a deterministic ACP v1 agent with no model that
            advertises and supports every agent capability. Logs go to stderr."""
        ),
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="keep sessions in DIR, so session/load works across restarts (default: in memory)",
    )
    parser.add_argument(
        "--require-auth",
        action="store_true",
        help="session methods answer -32000 until the client authenticates (method echo-login)",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what to log on stderr (default: WARNING)",
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    # spec TRANSPORT-06: the echo agent logs UTF-8 text on stderr (--log-level), never stdout.
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from ..agent import SessionRegistry, serve_stdio
    from ..echo import EchoAgent

    registry = SessionRegistry(args.state_dir)
    require_auth = bool(args.require_auth)
    return serve_stdio(lambda client: EchoAgent(client, registry, require_auth=require_auth))
