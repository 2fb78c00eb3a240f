"""Tests of the pure parts of ``acpref.mcp``: event-stream framing, secrets, wire values.

Spec: the WHATWG "Server-sent events" standard (interpreting an event stream); MCP 2025-06-18
(tools); session-setup.mdx, MCP Servers (env and headers carry secrets). No I/O here.
"""

from __future__ import annotations

import pytest

from acpref.mcp import McpFailure, McpTool, McpToolResult
from acpref.mcp._secrets import Redactor, safe_url
from acpref.mcp._sse import SseEvent, SseParser, SseTooLarge

STREAM = (
    b"\xef\xbb\xbf: a comment, then an event in CRLF\r\n"
    b'event: message\r\ndata: {"a": 1}\r\n\r\n'
    b"data:no space\ndata:  two spaces\n\n"
    b"event: other\rdata: x\r\r"
    b"id: 7\nretry: 100\n\n"
    b"data\n\n"
    b"data: unfinished"
)
EXPECTED = [
    SseEvent("message", '{"a": 1}'),
    SseEvent("message", "no space\n two spaces"),
    SseEvent("other", "x"),
    SseEvent("message", ""),
]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, len(STREAM)])
def test_sse_events_whatever_the_chunking(size: int) -> None:
    parser = SseParser(1 << 20)
    events = []
    for start in range(0, len(STREAM), size):
        events += parser.feed(STREAM[start : start + size])
    events += parser.finish()  # the unfinished last event is dropped
    assert events == EXPECTED


def test_sse_a_final_cr_ends_its_line_at_the_end_of_the_stream() -> None:
    parser = SseParser(1 << 20)
    assert parser.feed(b"data: last\r") == []
    assert parser.feed(b"\r") == []  # the second CR might still be a CRLF's first half
    assert parser.finish() == [SseEvent("message", "last")]


def test_sse_bounds_one_event() -> None:
    parser = SseParser(100)
    with pytest.raises(SseTooLarge):
        parser.feed(b"data: " + b"x" * 200)
    parser = SseParser(100)
    with pytest.raises(SseTooLarge):
        for _ in range(30):
            parser.feed(b"data: 0123456789\n")


def test_redactor_masks_values_and_the_words_of_header_values() -> None:
    redact = Redactor(["secret-value", "Bearer abcdefgh12345678", "on", "x"])
    assert redact("got secret-value!") == "got ***!"
    assert redact("token abcdefgh12345678 rejected") == "token *** rejected"
    assert redact("Authorization: Bearer abcdefgh12345678") == "Authorization: ***"
    # Values shorter than 4 characters are not searched for in server text.
    assert redact("turn on x") == "turn on x"


def test_safe_url_drops_user_info_query_and_fragment() -> None:
    assert (
        safe_url("https://user:pw@example.com:8443/mcp?key=k#f") == "https://example.com:8443/mcp"
    )
    assert safe_url("http://[::1]:9/x") == "http://[::1]:9/x"


def test_tools_and_results_from_the_wire() -> None:
    assert McpTool.from_wire({"description": "no name"}) is None
    tool = McpTool.from_wire({"name": "t", "description": 5, "inputSchema": [], "annotations": {}})
    assert tool == McpTool(name="t")
    assert tool is not None and tool.raw["annotations"] == {}
    result = McpToolResult.from_wire(
        {
            "content": [{"type": "text", "text": "a"}, {"type": "image", "data": ""}, "junk"],
            "isError": True,
        }
    )
    assert result.is_error and result.structured_content is None
    assert result.text() == "a\n[image content]"
    failure = McpFailure("web", "http", "not advertised", "SETUP-35")
    assert str(failure) == "MCP server 'web' (http): not advertised [spec SETUP-35]"
