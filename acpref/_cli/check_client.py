"""``acpref check-client``: grade a client with a scripted agent.

``acpref check-client --serve REPORT.json`` is the agent: configure the client under test to
launch it, then use the client (each prompt runs the next step; the agent's messages say what to
do). ``acpref check-client --report REPORT.json [--json] [--table]`` prints the report: failures
first, each with the spec's sentence and the evidence, then the counts (``--table``: the whole
table by clause); exit status 0 only when no MUST-level clause failed (``--strict-gaps``: no
spec-gap either). The grading agent judges as it serves, so ``--newer-spec`` goes with
``--serve``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ._levels import add_level_options, add_newer_spec_option, levels_of


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__.split("\n\n")[0])
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--serve",
        metavar="REPORT.json",
        help="run the scripted agent on stdio, grading into REPORT",
    )
    group.add_argument("--report", metavar="REPORT.json", help="print a report written by --serve")
    p.add_argument("--json", action="store_true", help="with --report: print JSON")
    p.add_argument("--table", action="store_true", help="with --report: the full table too")
    add_level_options(p, when="with --report: ")
    add_newer_spec_option(p, when="with --serve: ")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..testing import read_client_report, serve_check_client

    if args.serve:
        logging.getLogger("acpref").setLevel(logging.ERROR)
        return serve_check_client(args.serve, newer_spec=args.newer_spec)
    if args.newer_spec:
        # The grading agent judges as it serves: the report holds its verdicts already.
        print("acpref check-client: --newer-spec goes with --serve", file=sys.stderr)
        return 2
    try:
        report = read_client_report(args.report)
    except (OSError, ValueError, KeyError) as exc:
        print(f"acpref check-client: cannot read {args.report}: {exc}", file=sys.stderr)
        return 2
    levels = levels_of(args)
    print(report.dumps() if args.json else report.format_text(full=args.table, **levels))
    return 0 if not report.failing(**levels) else 1
