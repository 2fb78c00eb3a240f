"""Tests of ``acpref.mcp`` with streamable-HTTP servers, served in-process on 127.0.0.1.

Spec: session-setup.mdx, MCP Servers / HTTP Transport (SETUP-31, SETUP-33, SETUP-35); MCP
2025-06-18, Transports, Streamable HTTP; decisions: spec_notes/mcp.md.

Servers: the official SDK's ``MCPServer`` run by uvicorn (``tests/peers/mcp_http_sdk.py``, the
``mcp`` package being a test extra), in both of its answer styles (event stream, JSON), and a
hand-written one (``tests/peers/mcp_http_raw.py``) for server requests inside a stream, batches,
odd line endings, a stream that never ends, and a 401. Every wait is bounded by a timeout.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is a test extra")
pytest.importorskip("uvicorn", reason="uvicorn comes with the MCP SDK test extra")

from peers.mcp_http_raw import SESSION_ID, RawHttpServer  # noqa: E402
from peers.mcp_http_sdk import SdkHttpServer  # noqa: E402

from acpref import schema as s  # noqa: E402
from acpref.mcp import McpFailure, McpManager, McpServerConnection, McpTimeout  # noqa: E402

CONNECT = 15.0


def http(name: str, url: str, **headers: str) -> s.McpServerHttp:
    return s.McpServerHttp(
        name=name, url=url, headers=[s.HttpHeader(name=k, value=v) for k, v in headers.items()]
    )


@pytest.mark.parametrize("json_response", [False, True], ids=["event-stream", "json"])
def test_SETUP_31_sdk_server_over_streamable_http(json_response: bool, caplog: Any) -> None:
    secret = "tok-9f8e7d6c5b4a-secret"
    caplog.set_level(logging.DEBUG, logger="acpref")
    with SdkHttpServer(json_response=json_response) as server:
        manager = McpManager()
        try:
            # spec SETUP-31: an agent advertising mcpCapabilities.http reaches HTTP servers.
            [outcome] = manager.connect(
                [
                    http(
                        "sdk",
                        server.url,
                        **{"X-Test-Token": secret, "Content-Type": "text/x-ignored"},
                    )
                ],
                http_allowed=True,
                sse_allowed=False,
                timeout=CONNECT,
            )
            assert isinstance(outcome, McpServerConnection), outcome
            assert outcome.transport == "http" and outcome.pid is None
            assert outcome.protocol_version == "2025-06-18"
            assert sorted(t.name for t in outcome.tools) == ["add", "echo"]
            result = manager.call("sdk", "add", {"a": 2, "b": 3}, timeout=10.0)
            assert not result.is_error
            assert result.structured_content == {"result": 5}
            assert manager.call("sdk", "echo", {"text": "hé"}, timeout=10.0).text() == "hé"
        finally:
            manager.close()
        seen = list(server.seen)
    posts = [r for r in seen if r["method"] == "POST"]
    # spec SETUP-33: the client's headers go with every request.
    assert posts and all(r["headers"].get("x-test-token") == secret for r in posts)
    assert all(r["headers"]["content-type"] == "application/json" for r in posts)
    assert all("text/event-stream" in r["headers"]["accept"] for r in posts)
    # The session id of initialize, and the protocol version, on every later request.
    session_id = posts[1]["headers"].get("mcp-session-id")
    assert session_id
    assert "mcp-session-id" not in posts[0]["headers"]
    later = [r for r in seen[1:]]
    assert all(r["headers"].get("mcp-session-id") == session_id for r in later)
    assert all(r["headers"].get("mcp-protocol-version") == "2025-06-18" for r in later)
    # close() ends the session.
    assert seen[-1]["method"] == "DELETE"
    # Header values are never logged; header names are.
    assert secret not in caplog.text
    assert "X-Test-Token" in caplog.text


def test_server_requests_batches_and_line_endings_over_http() -> None:
    with RawHttpServer() as server:
        with McpManager() as manager:
            [outcome] = manager.connect(
                [http("raw", server.url)], http_allowed=True, sse_allowed=False, timeout=CONNECT
            )
            assert isinstance(outcome, McpServerConnection), outcome
            # The tools/list stream sent a ping first; acpref answered it, then got its result.
            assert [t.name for t in outcome.tools] == ["echo"]
            assert manager.call("raw", "echo", {"text": "batched"}, timeout=5.0).text() == "batched"
        answers = [
            r["body"]
            for r in server.seen
            if isinstance(r["body"], dict) and "method" not in r["body"]
        ]
        assert answers == [{"jsonrpc": "2.0", "id": "srv-ping", "result": {}}]
        assert [r["body"]["method"] for r in server.bodies("notifications/initialized")] == [
            "notifications/initialized"
        ]
        assert server.seen[-1]["verb"] == "DELETE"
        assert server.seen[-1]["headers"]["Mcp-Session-Id"] == SESSION_ID


def test_an_http_call_that_times_out_is_cancelled() -> None:
    with RawHttpServer() as server:
        with McpManager() as manager:
            manager.connect(
                [http("raw", server.url)], http_allowed=True, sse_allowed=False, timeout=CONNECT
            )
            with pytest.raises(McpTimeout):
                manager.call("raw", "slow", {}, timeout=0.5)
            [cancelled] = server.bodies("notifications/cancelled")
            assert cancelled["body"]["params"]["reason"] == "timed out"


def test_a_401_says_oauth_is_not_supported_and_masks_the_credentials(caplog: Any) -> None:
    caplog.set_level(logging.DEBUG, logger="acpref")
    wrong = "Bearer wrong-credential-77665544"
    with RawHttpServer(token="right-one") as server:
        with McpManager() as manager:
            [outcome] = manager.connect(
                [http("locked", server.url, Authorization=wrong)],
                http_allowed=True,
                sse_allowed=False,
                timeout=CONNECT,
            )
    assert isinstance(outcome, McpFailure)
    assert "HTTP 401" in outcome.reason and "OAuth" in outcome.reason
    # The server quoted the header back in its body: the reason shows it masked.
    assert "bad credentials: ***" in outcome.reason
    assert "wrong-credential-77665544" not in outcome.reason
    assert "wrong-credential-77665544" not in caplog.text


def test_an_unreachable_server_and_a_bad_url_are_failures() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        with McpManager() as manager:
            refused, bad = manager.connect(
                [
                    http("down", f"http://127.0.0.1:{port}/mcp"),
                    http("bad", "ftp://example.com/x?key=abc123"),
                ],
                http_allowed=True,
                sse_allowed=False,
                timeout=CONNECT,
            )
    assert isinstance(refused, McpFailure) and "failed" in refused.reason
    assert isinstance(bad, McpFailure) and "not an http or https URL" in bad.reason
    assert "abc123" not in bad.reason  # a URL's query may hold a token: never shown
