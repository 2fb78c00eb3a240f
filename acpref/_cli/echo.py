"""``acpref echo``: run the echo agent on stdio.

Spec: transports.mdx (stdio: stdout carries protocol messages only, logs go to stderr,
TRANSPORT-08). The agent itself is ``acpref.echo``; this module only parses options, sets up
logging on stderr and serves.
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


def _seconds(text: str) -> float:
    """A number of seconds above zero, finite (argparse says what is wrong with another)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < 1e9):  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


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
        "--mcp-timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="how long session/new, load and resume wait for the session's MCP servers, all "
        "together (default: 30); a server not connected by then is left out and stopped",
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
    mcp_timeout = args.mcp_timeout
    return serve_stdio(
        lambda client: EchoAgent(
            client, registry, require_auth=require_auth, mcp_timeout=mcp_timeout
        )
    )
