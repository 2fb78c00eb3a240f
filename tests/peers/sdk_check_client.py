"""A client written on the official Python SDK (``agent-client-protocol``), checked by check-client.

Usage: ``python sdk_check_client.py REPORT.json CWD``. It launches ``python -m acpref
check-client --serve REPORT.json`` with the SDK's ``spawn_agent_process`` and plays its user, as
``tests/broken/check_clients.py``'s ``Conforming`` does: step one, step two (cancelling while the
permission request is open, then answering it ``cancelled``), and a ``session/load``. It serves
files (read and write, on disk) and permissions; it advertises no terminal and no elicitation.
Only the SDK's public API is used: what the grader sees is the SDK's own wire behaviour.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Optional

from acp import (
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
    spawn_agent_process,
    text_block,
)
from acp.exceptions import RequestError
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
)

#: What check-client says once the client has answered its probe, sent after the permission
#: request: the client had read the request (acpref/testing/_client_steps.py DIALOG_SHOWN).
DIALOG_SHOWN = "the permission dialog is showing"


class SdkClient:
    """The client's side: files on disk, permissions allowed (cancelled after a cancel)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent  # the SDK's ClientSideConnection, to send session/cancel
        self.updates = 0
        self.dialog_shown = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1
        text = getattr(getattr(update, "content", None), "text", None)
        if isinstance(text, str) and DIALOG_SHOWN in text:
            self.dialog_shown.set()

    async def request_permission(
        self, options: Any, session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        if tool_call.tool_call_id == "check-cancel":
            # The user presses Stop while the dialog is open (check-client says when it shows:
            # the client has answered its probe, so it had read the request): cancel, then
            # answer it cancelled.
            try:
                await asyncio.wait_for(self.dialog_shown.wait(), 30)
            except asyncio.TimeoutError:
                pass  # cancels all the same: check-client then says the request crossed it
            await self.agent.cancel(session_id=session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        allow = next(o for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: Optional[int] = None,
        limit: Optional[int] = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines(keepends=True)
        except FileNotFoundError:
            raise RequestError.resource_not_found(path) from None
        start = line - 1 if line else 0
        end = start + limit if limit is not None else None
        return ReadTextFileResponse(content="".join(lines[start:end]))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return WriteTextFileResponse()


async def main(report: str, cwd: str) -> None:
    # The SDK leaves a malformed line unanswered (RPC-06, peer-divergences.md): each such line
    # costs check-client one --timeout, 3 s here instead of its 10 s wait for a person's client.
    argv = ["-m", "acpref", "check-client", "--serve", report, "--timeout", "3"]
    async with spawn_agent_process(lambda agent: SdkClient(agent), sys.executable, *argv) as (
        conn,
        _process,
    ):
        await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=False,
            ),
            client_info=Implementation(name="acpref-test-sdk-client", version="1"),
        )
        session = await conn.new_session(cwd=cwd, mcp_servers=[])
        for text in ("step one", "step two"):
            await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
        await conn.load_session(cwd=cwd, session_id=session.session_id, mcp_servers=[])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
