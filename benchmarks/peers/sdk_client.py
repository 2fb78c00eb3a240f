"""The official Python SDK's bench client: ``acp.spawn_agent_process`` driving ``sdk_agent.py``.

Usage (with benchmarks/.venv-sdk's interpreter):
``python sdk_client.py --measure roundtrip|stream|read|update --count N``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _shared import BIG_PATH, big_text, report, run_measure_async  # noqa: E402
from acp import ReadTextFileResponse, RequestPermissionResponse, spawn_agent_process, text_block  # noqa: E402
from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation  # noqa: E402


class BenchClient:
    """Counts updates; serves one file from memory."""

    def __init__(self) -> None:
        self.updates = 0
        self.files = {BIG_PATH: big_text()}

    async def session_update(self, session_id, update, **kwargs) -> None:
        self.updates += 1

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        return ReadTextFileResponse(content=self.files[path])

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        return RequestPermissionResponse(outcome={"outcome": "cancelled"})


async def amain(measure: str, count: int) -> None:
    client = BenchClient()
    argv = [os.path.join(HERE, "sdk_agent.py")]
    # The SDK's reader limit defaults to 64 KiB: raised for the 8 MiB messages.
    async with spawn_agent_process(
        client, sys.executable, *argv, transport_kwargs={"limit": 64 * 1024 * 1024}
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=False)
            ),
            client_info=Implementation(name="sdk-bench-client", version="1"),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])

        async def prompt(text: str) -> int:
            before = client.updates
            answer = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
            assert answer.stop_reason == "end_turn", answer
            return client.updates - before

        report(await run_measure_async(measure, count, prompt))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--measure", required=True)
    parser.add_argument("--count", type=int, required=True)
    args = parser.parse_args()
    asyncio.run(amain(args.measure, args.count))


if __name__ == "__main__":
    main()
