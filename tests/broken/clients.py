"""Deliberately broken clients: each breaks one rule, and the oracle must name its clause.

Run one with ``python tests/broken/clients.py NAME TRANSCRIPT``: it talks to the well-behaved
agent through ``acpref proxy --record TRANSCRIPT`` (so a third party records the traffic), breaks
its rule, and ends. ``expect`` is the clause the oracle must report, blamed on the client.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _raw import RawClient  # noqa: E402

M = Dict[str, Any]


class BrokenClient:
    expect = ""

    def __init__(self, transcript: str) -> None:
        self.c = RawClient(transcript)

    def run(self) -> None:
        try:
            self.act(self.c)
        except EOFError:
            pass  # the agent gave up on us: the transcript says why
        finally:
            self.c.close()

    def act(self, c: RawClient) -> None:
        raise NotImplementedError


class SessionBeforeInitialize(BrokenClient):
    """Sends session/new before initialize."""

    expect = "INIT-01"

    def act(self, c: RawClient) -> None:
        c.call("session/new", {"cwd": "/tmp", "mcpServers": []})
        c.initialize()


class RelativeCwd(BrokenClient):
    """Opens a session in a relative directory."""

    expect = "SETUP-25"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.call("session/new", {"cwd": ".", "mcpServers": []})


class LogOnStdin(BrokenClient):
    """Writes a log line into the agent's stdin."""

    expect = "TRANSPORT-09"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.write(b"hello agent, are you there?\n")
        c.new_session()


class MissingJsonrpc(BrokenClient):
    """Sends a request without the jsonrpc member."""

    expect = "RPC-01"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.send({"id": 99, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}})
        c.read()


class SelectsAfterCancel(BrokenClient):
    """Cancels the turn, then answers the pending permission request with an option."""

    expect = "PROMPT-21"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()

        def on_request(message: M) -> None:
            if message.get("method") == "session/request_permission":
                c.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/cancel",
                        "params": {"sessionId": session_id},
                    }
                )
                outcome = {"outcome": "selected", "optionId": "allow"}
                c.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})

        c.prompt(session_id, "tool", on_request=on_request)


class UnofferedOption(BrokenClient):
    """Answers a permission request with an option that was not offered."""

    expect = "TOOL-08"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()

        def on_request(message: M) -> None:
            if message.get("method") == "session/request_permission":
                outcome = {"outcome": "selected", "optionId": "yolo"}
                c.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})

        c.prompt(session_id, "tool", on_request=on_request)


class ImageWithoutCapability(BrokenClient):
    """Puts an image in a prompt although the agent's promptCapabilities.image is false."""

    expect = "CONTENT-04"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        c.call("session/prompt", {"sessionId": session_id, "prompt": [image]})


class SseMcpWithoutCapability(BrokenClient):
    """Passes an SSE MCP server to an agent that does not advertise mcpCapabilities.sse."""

    expect = "SETUP-35"

    def act(self, c: RawClient) -> None:
        c.initialize()
        server = {"type": "sse", "name": "tools", "url": "https://example.com/mcp", "headers": []}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [server]})


class WrongResponseId(BrokenClient):
    """Answers a permission request under another id first (then correctly)."""

    expect = "RPC-04"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()

        def on_request(message: M) -> None:
            if message.get("method") == "session/request_permission":
                outcome = {"outcome": {"outcome": "selected", "optionId": "allow"}}
                c.send({"jsonrpc": "2.0", "id": message["id"] + 100, "result": outcome})
                c.send({"jsonrpc": "2.0", "id": message["id"], "result": outcome})

        c.prompt(session_id, "tool", on_request=on_request)


class AnswersUpdate(BrokenClient):
    """Answers a session/update notification."""

    expect = "OVERVIEW-09"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()

        def on_request(message: M) -> None:
            if message.get("method") == "session/update":
                c.send({"jsonrpc": "2.0", "id": None, "result": {}})

        c.prompt(session_id, "hello", on_request=on_request)


class PromptUnknownSession(BrokenClient):
    """Prompts a session that was never set up."""

    expect = "PROMPT-01"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.prompt("sess-404", "hello")


class DuplicateRequestId(BrokenClient):
    """Reuses the id of a prompt still running for another request."""

    expect = "spec-gap:duplicate-id"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "slow"}]}
        c.send({"jsonrpc": "2.0", "id": 50, "method": "session/prompt", "params": prompt})
        c.read()  # the first chunk: the turn is running
        c.send(
            {
                "jsonrpc": "2.0",
                "id": 50,
                "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []},
            }
        )
        while c.read().get("id") != 50:
            pass  # the agent refuses the duplicate
        c.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}})


class LoadWithOtherCwd(BrokenClient):
    """Loads a session naming a cwd other than the session's own."""

    expect = "SETUP-22"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session("/tmp")
        c.call("session/load", {"sessionId": session_id, "cwd": "/var", "mcpServers": []})


class StringProtocolVersion(BrokenClient):
    """Sends protocolVersion as a string."""

    expect = "INIT-02"

    def act(self, c: RawClient) -> None:
        params = {
            "protocolVersion": "1",
            "clientCapabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        }
        c.call("initialize", params)


class CancelAsRequest(BrokenClient):
    """Sends the session/cancel notification as a request (with an id)."""

    expect = "OVERVIEW-01"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        c.call("session/cancel", {"sessionId": session_id})


class ErrorForCancelledPermission(BrokenClient):
    """After session/cancel, answers the pending permission request with an error."""

    expect = "PROMPT-21"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()

        def on_request(message: M) -> None:
            if message.get("method") == "session/request_permission":
                c.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/cancel",
                        "params": {"sessionId": session_id},
                    }
                )
                c.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32800, "message": "cancelled"},
                    }
                )

        c.prompt(session_id, "tool", on_request=on_request)


BROKEN = {
    name: cls
    for name, cls in globals().items()
    if isinstance(cls, type) and issubclass(cls, BrokenClient) and cls is not BrokenClient
}

if __name__ == "__main__":
    BROKEN[sys.argv[1]](sys.argv[2]).run()
