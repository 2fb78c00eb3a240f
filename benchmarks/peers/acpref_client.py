"""acpref's bench client: ``acpref.client.ClientSideConnection`` driving ``acpref_agent.py``.

Usage: ``python acpref_client.py --measure roundtrip|stream|read|update --count N``
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _shared import BIG_PATH, big_text, report, run_measure  # noqa: E402

from acpref import schema as s  # noqa: E402
from acpref.client import Client, ClientSideConnection  # noqa: E402


class BenchClient(Client):
    """Counts updates; serves one file from memory."""

    def __init__(self) -> None:
        self.updates = 0
        self.files = {BIG_PATH: big_text()}

    def session_update(self, params: s.SessionNotification) -> None:
        self.updates += 1

    def fs_read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        return s.ReadTextFileResponse(content=self.files[params.path])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measure", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--agent", help="another agent command (a diagnosis: mixed pairs)")
    args = parser.parse_args()
    client = BenchClient()
    argv = (
        shlex.split(args.agent)
        if args.agent
        else [sys.executable, os.path.join(HERE, "acpref_agent.py")]
    )
    with ClientSideConnection.spawn(client, argv) as conn:
        conn.initialize(timeout=60)
        session_id = conn.new_session(os.getcwd()).session_id

        def prompt(text: str) -> int:
            before = client.updates
            answer = conn.prompt(session_id, text)
            assert answer.stop_reason == s.StopReason.END_TURN, answer
            return client.updates - before

        report(run_measure(args.measure, args.count, prompt))


if __name__ == "__main__":
    main()
