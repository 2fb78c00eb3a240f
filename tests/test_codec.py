"""The codec's rules, one named behaviour per test; spec tests are named after their clause.

Spec: schema.json; clauses OVERVIEW-10, RPC-02, RPC-13, SCHEMA-04 .. SCHEMA-17, EXT-02, EXT-04,
LIST-15, CONFIG-09, CONFIG-18. Policy: spec_notes/codec.md; code: acpref/codec.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from acpref import schema as s
from acpref.codec import DecodeError, decode, encode, wire_name
from acpref.errors import ErrorCode
from acpref.schema import UNSET, Unknown

pytestmark = pytest.mark.timeout(60)

BOTH_MODES = pytest.mark.parametrize("strict", [True, False], ids=["strict", "lenient"])


def errors_of(data: Any, type_: Any, *, strict: bool = True, root: str = "params") -> list:
    """The ``(path, message)`` pairs of a decode that must fail."""
    with pytest.raises(DecodeError) as caught:
        decode(data, type_, strict=strict, root=root)
    return caught.value.errors


def paths_of(data: Any, type_: Any, *, strict: bool = True, root: str = "params") -> list:
    return [path for path, _ in errors_of(data, type_, strict=strict, root=root)]


def round_trip(data: Any, type_: Any, *, strict: bool = True) -> Any:
    return encode(decode(data, type_, strict=strict), type_)


# -- Names (OVERVIEW-10) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attribute, key",
    [("session_id", "sessionId"), ("mime_type", "mimeType"), ("meta", "_meta"), ("cwd", "cwd")],
)
def test_OVERVIEW_10_wire_names_are_camel_case(attribute: str, key: str) -> None:
    assert wire_name(attribute) == key


def test_OVERVIEW_10_tags_come_from_the_variant() -> None:
    block = s.TextContent(text="hi")
    assert encode(block, s.ContentBlock) == {"type": "text", "text": "hi"}
    # A bare member is encoded without its tag: the tag belongs to the union.
    assert encode(block) == {"text": "hi"}


# -- Strict primitives ----------------------------------------------------------------------------


@BOTH_MODES
def test_string_is_not_an_integer(strict: bool) -> None:
    # `messageId` is lenient (default-on-error): in lenient mode the bad value reads as absent.
    data = {"used": 1, "size": "5"}
    assert paths_of(data, s.UsageUpdate, strict=strict) == ["params.size"]
    chunk = {"content": {"type": "text", "text": "x"}, "messageId": 5}
    if strict:
        assert paths_of(chunk, s.AgentMessageChunk, strict=True) == ["params.messageId"]
    else:
        assert decode(chunk, s.AgentMessageChunk).message_id is UNSET


@BOTH_MODES
def test_SCHEMA_21_fields_that_lost_default_on_error_reject_a_wrong_type(strict: bool) -> None:
    # spec SCHEMA-21: line and limit, cwd and outputByteLimit are no longer read as absent.
    data = {"sessionId": "s", "path": "/a", "line": "5"}
    assert errors_of(data, s.ReadTextFileRequest, strict=strict) == [
        ("params.line", "expected an integer, got string")
    ]
    terminal = {"sessionId": "s", "command": "c", "cwd": 5}
    assert paths_of(terminal, s.CreateTerminalRequest, strict=strict) == ["params.cwd"]
    new = {"cwd": "/w", "mcpServers": {"name": "a"}}
    assert paths_of(new, s.NewSessionRequest, strict=strict) == ["params.mcpServers"]


@BOTH_MODES
def test_true_is_not_a_number(strict: bool) -> None:
    assert paths_of({"amount": True, "currency": "EUR"}, s.Cost, strict=strict) == ["params.amount"]


@BOTH_MODES
def test_float_is_not_an_integer(strict: bool) -> None:
    assert paths_of({"protocolVersion": 1.0}, s.InitializeRequest, strict=strict) == [
        "params.protocolVersion"
    ]


@BOTH_MODES
def test_string_is_not_a_list(strict: bool) -> None:
    errors = errors_of({"sessionId": "s", "prompt": "hi"}, s.PromptRequest, strict=strict)
    assert errors == [("params.prompt", "expected an array, got string")]


@BOTH_MODES
def test_integer_is_not_a_string(strict: bool) -> None:
    assert paths_of({"sessionId": 5}, s.CancelNotification, strict=strict) == ["params.sessionId"]


def test_integer_number_is_kept_as_received() -> None:
    # A `number` field given 5 re-encodes as 5, not 5.0.
    assert round_trip({"amount": 5, "currency": "EUR"}, s.Cost) == {"amount": 5, "currency": "EUR"}


# -- Integer formats (SCHEMA-12, SCHEMA-13, RPC-02) -----------------------------------------------


@BOTH_MODES
def test_SCHEMA_12_protocol_version_is_a_uint16(strict: bool) -> None:
    assert (
        decode({"protocolVersion": 65535}, s.InitializeRequest, strict=strict).protocol_version
        == 65535
    )
    errors = errors_of({"protocolVersion": 70000}, s.InitializeRequest, strict=strict)
    assert errors == [("params.protocolVersion", "70000 is out of range for uint16")]


def test_SCHEMA_13_negative_uint32_line_fails_strict() -> None:
    assert errors_of({"path": "/a", "line": -1}, s.ToolCallLocation) == [
        ("params.line", "-1 is out of range for uint32")
    ]
    # `line` is marked default-on-error: the lenient codec reads it as absent.
    assert decode({"path": "/a", "line": -1}, s.ToolCallLocation).line is UNSET


@BOTH_MODES
def test_SCHEMA_13_unmarked_uint64_fails_in_both_modes(strict: bool) -> None:
    data = {"sessionUpdate": "usage_update", "used": -1, "size": 10}
    assert paths_of(data, s.SessionUpdate, strict=strict) == ["params.used"]


@pytest.mark.parametrize(
    "fmt, low, high, type_, build",
    [
        ("uint16", 0, 2**16 - 1, s.InitializeRequest, lambda n: {"protocolVersion": n}),
        ("uint32", 0, 2**32 - 1, s.ToolCallLocation, lambda n: {"path": "/a", "line": n}),
        ("uint64", 0, 2**64 - 1, s.UsageUpdate, lambda n: {"used": n, "size": 0}),
        ("int32", -(2**31), 2**31 - 1, s.Error, lambda n: {"code": n, "message": "m"}),
        (
            "int64",
            -(2**63),
            2**63 - 1,
            s.ResourceLink,
            lambda n: {"name": "n", "uri": "u", "size": n},
        ),
    ],
    ids=["uint16", "uint32", "uint64", "int32", "int64"],
)
def test_SCHEMA_13_integer_format_bounds(
    fmt: str, low: int, high: int, type_: Any, build: Any
) -> None:
    for n in (low, high):
        assert encode(decode(build(n), type_, strict=True)) == build(n)
    for n in (low - 1, high + 1):
        assert errors_of(build(n), type_)[0][1] == f"{n} is out of range for {fmt}"


def test_RPC_02_integer_request_id_is_an_int64() -> None:
    assert decode({"requestId": 2**63 - 1}, s.CancelRequestNotification).request_id == 2**63 - 1
    assert paths_of({"requestId": 2**63}, s.CancelRequestNotification) == ["params.requestId"]
    assert decode({"requestId": "abc"}, s.CancelRequestNotification).request_id == "abc"


# -- Absent vs null (LIST-15) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "wire, title",
    [({}, UNSET), ({"title": None}, None), ({"title": "Fix the build"}, "Fix the build")],
    ids=["absent-unchanged", "null-clears", "value-sets"],
)
def test_LIST_15_session_info_update_absent_null_value(wire: dict, title: Any) -> None:
    data = {"sessionUpdate": "session_info_update", **wire}
    update = decode(data, s.SessionUpdate, strict=True)
    assert isinstance(update, s.SessionInfoUpdate)
    assert update.title is title if title in (UNSET, None) else update.title == title
    assert encode(update, s.SessionUpdate) == data


def test_null_meta_is_kept_apart_from_absent_meta() -> None:
    assert decode({"sessionId": "s"}, s.CancelNotification).meta is UNSET
    assert decode({"sessionId": "s", "_meta": None}, s.CancelNotification).meta is None
    assert encode(s.CancelNotification(session_id="s", meta=None)) == {
        "sessionId": "s",
        "_meta": None,
    }
    assert encode(s.CancelNotification(session_id="s")) == {"sessionId": "s"}


# -- Leniency markers (SCHEMA-11, EXT-02) ---------------------------------------------------------


def test_SCHEMA_11_malformed_marked_field_is_absent_in_lenient_mode() -> None:
    update = decode({"toolCallId": "t1", "kind": "compile", "title": "x"}, s.ToolCallUpdate)
    assert update.kind is UNSET
    assert update.title == "x"


def test_SCHEMA_11_malformed_marked_field_fails_in_strict_mode() -> None:
    assert paths_of({"toolCallId": "t1", "kind": "compile"}, s.ToolCallUpdate) == ["params.kind"]


def test_SCHEMA_11_malformed_item_of_marked_list_is_dropped_in_lenient_mode() -> None:
    data = {
        "toolCallId": "t1",
        "content": [
            {"type": "diff", "path": "/a", "newText": "x"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},  # not a ToolCallContent
            {"type": "terminal", "terminalId": "term_1"},
        ],
    }
    update = decode(data, s.ToolCallUpdate)
    assert update.content == [s.Diff(path="/a", new_text="x"), s.Terminal(terminal_id="term_1")]
    assert paths_of(data, s.ToolCallUpdate) == ["params.content[1].type"]


@BOTH_MODES
def test_SCHEMA_11_unmarked_field_fails_in_both_modes(strict: bool) -> None:
    data = {"sessionId": "s", "prompt": [{"type": "text", "text": 5}]}
    assert paths_of(data, s.PromptRequest, strict=strict) == ["params.prompt[0].text"]


@BOTH_MODES
def test_SCHEMA_20_one_bad_mcp_server_invalidates_the_request(strict: bool) -> None:
    # spec SCHEMA-20: mcpServers lost skip-invalid-items: the bad entry is not dropped (SCHEMA-11's
    # old hint); the request is invalid, in both modes.
    data = {
        "cwd": "/w",
        "mcpServers": [{"name": "a"}, {"name": "b", "command": "c", "args": [], "env": []}],
    }
    assert paths_of(data, s.NewSessionRequest, strict=strict) == [
        "params.mcpServers[0].command",
        "params.mcpServers[0].args",
        "params.mcpServers[0].env",
    ]
    dirs = {"cwd": "/w", "mcpServers": [], "additionalDirectories": ["/a", 5]}
    assert paths_of(dirs, s.NewSessionRequest, strict=strict) == ["params.additionalDirectories[1]"]
    args = {"sessionId": "s", "command": "c", "args": ["-x", None]}
    assert paths_of(args, s.CreateTerminalRequest, strict=strict) == ["params.args[1]"]


@BOTH_MODES
def test_SCHEMA_18_19_null_is_empty_but_omitted_is_still_missing(strict: bool) -> None:
    # spec SCHEMA-18: an explicit null on a default-on-null field is the empty value.
    request = decode(
        {"cwd": "/w", "mcpServers": None, "additionalDirectories": None},
        s.NewSessionRequest,
        strict=strict,
    )
    assert request.mcp_servers == [] and request.additional_directories == []
    server = decode(
        {"name": "a", "command": "/bin/a", "args": None, "env": None}, s.McpServer, strict=strict
    )
    assert server == s.McpServerStdio(name="a", command="/bin/a", args=[], env=[])
    http = decode({"type": "http", "name": "h", "url": "u", "headers": None}, s.McpServer)
    assert http.headers == []
    auth = decode(
        {"type": "terminal", "id": "t", "name": "n", "args": None, "env": None},
        s.AuthMethod,
        strict=strict,
    )
    assert (auth.args, auth.env) == ([], {})
    terminal = decode(
        {"sessionId": "s", "command": "c", "args": None, "env": None},
        s.CreateTerminalRequest,
        strict=strict,
    )
    assert (terminal.args, terminal.env) == ([], [])
    # spec SCHEMA-19: default-on-null does not make a required key optional.
    assert paths_of({"cwd": "/w"}, s.NewSessionRequest, strict=strict) == ["params.mcpServers"]
    assert paths_of({"name": "a", "command": "/bin/a", "env": []}, s.McpServer, strict=strict) == [
        "params.args"
    ]


def test_EXT_02_malformed_meta_is_absent_in_lenient_mode() -> None:
    assert decode({"sessionId": "s", "_meta": 5}, s.CancelNotification).meta is UNSET
    assert paths_of({"sessionId": "s", "_meta": 5}, s.CancelNotification) == ["params._meta"]


def test_EXT_02_meta_is_passed_through_untouched() -> None:
    meta = {"traceparent": "00-abc", "zed.dev": {"nested": [1, None, {"x": True}]}}
    assert round_trip({"sessionId": "s", "_meta": meta}, s.CancelNotification)["_meta"] == meta


# -- Unknown variants (SCHEMA-10) -----------------------------------------------------------------


@BOTH_MODES
def test_SCHEMA_10_unknown_elicitation_mode_kept_raw(strict: bool) -> None:
    data = {"message": "Pick", "mode": "_acme_wizard", "sessionId": "s", "steps": [1, 2]}
    request = decode(data, s.CreateElicitationRequest, strict=strict)
    assert request.mode == Unknown(raw={"mode": "_acme_wizard", "sessionId": "s", "steps": [1, 2]})
    assert not isinstance(request.mode, (s.ElicitationFormMode, s.ElicitationUrlMode))
    assert encode(request, s.CreateElicitationRequest) == data


@BOTH_MODES
def test_SCHEMA_10_unknown_elicitation_action_kept_raw(strict: bool) -> None:
    data = {"action": "_defer", "until": "tomorrow", "_meta": {"k": 1}}
    response = decode(data, s.CreateElicitationResponse, strict=strict)
    assert response.action == Unknown(raw={"action": "_defer", "until": "tomorrow"})
    assert response.meta == {"k": 1}
    assert encode(response, s.CreateElicitationResponse) == data


@BOTH_MODES
def test_SCHEMA_10_unknown_property_type_kept_raw(strict: bool) -> None:
    prop = {"type": "_color", "palette": ["red"]}
    data = {
        "message": "Theme",
        "mode": "form",
        "sessionId": "s",
        "requestedSchema": {"type": "object", "properties": {"c": prop, "n": {"type": "number"}}},
    }
    request = decode(data, s.CreateElicitationRequest, strict=strict)
    properties = request.mode.requested_schema.properties
    assert properties["c"] == Unknown(raw=prop)
    assert isinstance(properties["n"], s.NumberPropertySchema)
    assert encode(request, s.CreateElicitationRequest) == data


@BOTH_MODES
def test_SCHEMA_10_unknown_multi_select_item_type_kept_raw(strict: bool) -> None:
    data = {"type": "array", "items": {"type": "_tag", "vocabulary": "x"}}
    prop = decode(data, s.ElicitationPropertySchema, strict=strict)
    assert prop.items == Unknown(raw={"type": "_tag", "vocabulary": "x"})
    assert encode(prop, s.ElicitationPropertySchema) == data


@BOTH_MODES
def test_SCHEMA_10_closed_union_rejects_an_unknown_tag(strict: bool) -> None:
    data = {"sessionId": "s", "prompt": [{"type": "video", "uri": "u"}]}
    assert paths_of(data, s.PromptRequest, strict=strict) == ["params.prompt[0].type"]


@BOTH_MODES
def test_tag_that_is_not_a_string_is_reported_at_the_tag(strict: bool) -> None:
    data = {"sessionId": "s", "prompt": [{"type": ["text"], "text": "x"}]}
    assert errors_of(data, s.PromptRequest, strict=strict) == [
        ("params.prompt[0].type", "expected a string, got array")
    ]


# -- Unknown keys (EXT-04) ------------------------------------------------------------------------


def test_EXT_04_unknown_root_key_fails_strict() -> None:
    assert errors_of({"sessionId": "s", "acme": 1}, s.CancelNotification) == [
        ("params.acme", "unknown key (custom data belongs in _meta)")
    ]


def test_EXT_04_unknown_root_key_passes_lenient() -> None:
    assert decode({"sessionId": "s", "acme": 1}, s.CancelNotification) == s.CancelNotification(
        session_id="s"
    )


def test_EXT_04_unknown_key_of_a_nested_type_fails_strict() -> None:
    data = {"sessionId": "s", "prompt": [{"type": "text", "text": "x", "acme": 1}]}
    assert paths_of(data, s.PromptRequest) == ["params.prompt[0].acme"]


def test_EXT_04_unknown_key_beside_a_flattened_union_fails_strict() -> None:
    data = {"id": "o", "name": "O", "type": "boolean", "currentValue": True, "acme": 1}
    assert paths_of(data, s.SessionConfigOption) == ["params.acme"]


def test_EXT_04_custom_data_in_meta_passes_strict() -> None:
    data = {"sessionId": "s", "_meta": {"acme": 1}}
    assert round_trip(data, s.CancelNotification) == data


# -- The -32602 answer (RPC-13) -------------------------------------------------------------------


def test_RPC_13_decode_error_is_invalid_params_with_the_wire_path() -> None:
    with pytest.raises(DecodeError) as caught:
        decode({"sessionId": "s", "prompt": [{"type": "txt"}]}, s.PromptRequest, root="params")
    error = caught.value.to_rpc_error()
    assert error.code == ErrorCode.INVALID_PARAMS == -32602
    assert error.data["path"] == "params.prompt[0].type"
    assert "params.prompt[0].type" in error.message
    assert error.to_wire()["code"] == -32602


def test_RPC_13_missing_required_field() -> None:
    with pytest.raises(DecodeError) as caught:
        decode({"sessionId": "s"}, s.PromptRequest, root="params")
    assert caught.value.to_rpc_error().data["path"] == "params.prompt"
    assert caught.value.errors == [("params.prompt", "required key is missing")]


def test_RPC_13_every_failing_path_is_listed() -> None:
    with pytest.raises(DecodeError) as caught:
        decode(
            {"sessionId": 1, "prompt": [{"type": "text"}, 5]},
            s.PromptRequest,
            strict=True,
            root="params",
        )
    data = caught.value.to_rpc_error().data
    assert [e["path"] for e in data["errors"]] == [
        "params.sessionId",
        "params.prompt[0].text",
        "params.prompt[1]",
    ]


def test_RPC_13_default_root_is_dollar() -> None:
    assert paths_of({"sessionId": 1}, s.CancelNotification, root="$") == ["$.sessionId"]


@pytest.mark.parametrize(
    "wire, cls",
    [
        ({"id": 1, "result": {"stopReason": "end_turn"}}, s.ResultResponse),
        ({"id": "a", "error": {"code": -32601, "message": "Method not found"}}, s.ErrorResponse),
    ],
    ids=["result", "error"],
)
def test_RPC_05_response_is_result_or_error(wire: dict, cls: type) -> None:
    response = decode(wire, s.AgentResponse, strict=True)
    assert type(response) is cls
    assert encode(response, s.AgentResponse) == wire


def test_RPC_05_response_with_both_or_neither_fails_strict() -> None:
    both = {"id": 1, "result": {}, "error": {"code": 1, "message": "m"}}
    assert paths_of(both, s.ClientResponse, root="$") == ["$.error"]
    assert paths_of({"id": 1}, s.ClientResponse, root="$") == ["$"]


# -- set_config_option (SCHEMA-08, CONFIG-18) -----------------------------------------------------


@BOTH_MODES
def test_SCHEMA_08_string_value_is_a_value_id(strict: bool) -> None:
    request = decode(
        {"sessionId": "s", "configId": "mode", "value": "code"},
        s.SetSessionConfigOptionRequest,
        strict=strict,
    )
    assert request.value == "code"


@BOTH_MODES
def test_SCHEMA_08_boolean_value_without_type_fails(strict: bool) -> None:
    data = {"sessionId": "s", "configId": "brave", "value": True}
    assert paths_of(data, s.SetSessionConfigOptionRequest, strict=strict) == ["params.value"]


@BOTH_MODES
def test_SCHEMA_08_type_boolean_requires_a_boolean_value(strict: bool) -> None:
    data = {"sessionId": "s", "configId": "brave", "type": "boolean", "value": "yes"}
    assert paths_of(data, s.SetSessionConfigOptionRequest, strict=strict) == ["params.value"]


@BOTH_MODES
def test_SCHEMA_08_unknown_type_with_string_value_is_a_value_id(strict: bool) -> None:
    data = {"sessionId": "s", "configId": "c", "type": "_slider", "value": "3"}
    assert decode(data, s.SetSessionConfigOptionRequest, strict=strict).value == "3"


def test_CONFIG_18_boolean_value_is_sent_with_type_boolean() -> None:
    on = s.SetSessionConfigOptionRequest(session_id="s", config_id="brave", value=True)
    assert encode(on) == {"sessionId": "s", "configId": "brave", "type": "boolean", "value": True}
    pick = s.SetSessionConfigOptionRequest(session_id="s", config_id="mode", value="code")
    assert encode(pick) == {"sessionId": "s", "configId": "mode", "value": "code"}


def test_SCHEMA_08_unknown_key_fails_strict_and_passes_lenient() -> None:
    data = {"sessionId": "s", "configId": "c", "value": "v", "acme": 1}
    assert paths_of(data, s.SetSessionConfigOptionRequest) == ["params.acme"]
    assert decode(data, s.SetSessionConfigOptionRequest).value == "v"


# -- Untagged variants (SCHEMA-05, SCHEMA-06) -----------------------------------------------------


@BOTH_MODES
def test_SCHEMA_06_stdio_mcp_server_has_no_type(strict: bool) -> None:
    data = {
        "name": "fs",
        "command": "/bin/mcp",
        "args": ["--stdio"],
        "env": [{"name": "A", "value": "1"}],
    }
    server = decode(data, s.McpServer, strict=strict)
    assert isinstance(server, s.McpServerStdio)
    assert encode(server, s.McpServer) == data


@BOTH_MODES
def test_SCHEMA_06_http_mcp_server_is_tagged(strict: bool) -> None:
    data = {"type": "http", "name": "api", "url": "https://x", "headers": []}
    server = decode(data, s.McpServer, strict=strict)
    assert isinstance(server, s.McpServerHttp)
    assert encode(server, s.McpServer) == data


def test_SCHEMA_06_stdio_server_with_a_type_key() -> None:
    # The schema's stdio branch does not constrain `type`, as with the Rust reference's untagged
    # variant: lenient reads a stdio server; strict reports the key as not a field (EXT-04).
    data = {"type": "stdio", "name": "fs", "command": "c", "args": [], "env": []}
    assert decode(data, s.McpServer) == s.McpServerStdio(name="fs", command="c", args=[], env=[])
    assert paths_of(data, s.McpServer) == ["params.type"]


@BOTH_MODES
@pytest.mark.parametrize("tag", [{}, {"type": "agent"}], ids=["no-type", "type-agent"])
def test_SCHEMA_05_agent_auth_method(strict: bool, tag: dict) -> None:
    method = decode({"id": "login", "name": "Log in", **tag}, s.AuthMethod, strict=strict)
    assert method == s.AuthMethodAgent(id="login", name="Log in")


@BOTH_MODES
def test_SCHEMA_05_terminal_auth_method(strict: bool) -> None:
    data = {"type": "terminal", "id": "t", "name": "T", "args": ["--login"], "env": {"A": "1"}}
    method = decode(data, s.AuthMethod, strict=strict)
    assert isinstance(method, s.AuthMethodTerminal)
    assert encode(method, s.AuthMethod) == data


def test_SCHEMA_05_terminal_env_as_array_fails_strict() -> None:
    data = {"type": "terminal", "id": "t", "name": "T", "env": [{"name": "A", "value": "1"}]}
    assert paths_of(data, s.AuthMethod) == ["params.env"]


# -- Keyed and plain unions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "contents, cls",
    [
        ({"uri": "file:///a", "text": "hi", "mimeType": "text/plain"}, s.TextResourceContents),
        ({"uri": "file:///a", "blob": "AA=="}, s.BlobResourceContents),
    ],
    ids=["text", "blob"],
)
def test_embedded_resource_text_vs_blob(contents: dict, cls: type) -> None:
    data = {"type": "resource", "resource": contents}
    block = decode(data, s.ContentBlock, strict=True)
    assert isinstance(block.resource, cls)
    assert encode(block, s.ContentBlock) == data


def test_embedded_resource_without_text_or_blob_fails() -> None:
    assert paths_of({"type": "resource", "resource": {"uri": "u"}}, s.ContentBlock) == [
        "params.resource"
    ]


def test_CONFIG_09_unknown_category_kept_as_str() -> None:
    base = {"id": "o", "name": "O", "type": "boolean", "currentValue": True}
    custom = decode({**base, "category": "_acme_speed"}, s.SessionConfigOption, strict=True)
    assert custom.category == "_acme_speed"
    assert type(custom.category) is str
    known = decode({**base, "category": "model"}, s.SessionConfigOption, strict=True)
    assert known.category is s.SessionConfigOptionCategory.MODEL
    assert encode(custom, s.SessionConfigOption) == {**base, "category": "_acme_speed"}


@pytest.mark.parametrize(
    "options, item",
    [
        (
            [{"value": "a", "name": "A"}, {"value": "b", "name": "B", "description": "bee"}],
            s.SessionConfigSelectOption,
        ),
        (
            [{"group": "fast", "name": "Fast", "options": [{"value": "a", "name": "A"}]}],
            s.SessionConfigSelectGroup,
        ),
    ],
    ids=["flat", "grouped"],
)
def test_SCHEMA_07_select_options_flat_or_grouped(options: list, item: type) -> None:
    data = {
        "id": "model",
        "name": "Model",
        "type": "select",
        "currentValue": "a",
        "options": options,
    }
    option = decode(data, s.SessionConfigOption, strict=True)
    assert all(type(o) is item for o in option.kind.options)
    assert encode(option, s.SessionConfigOption) == data


def test_SCHEMA_07_mixed_select_options_fail_strict() -> None:
    options = [{"value": "a", "name": "A"}, {"group": "g", "name": "G", "options": []}]
    data = {"currentValue": "a", "options": options}
    assert "params.options[1].value" in paths_of(data, s.SessionConfigSelect)


def test_SCHEMA_04_permission_outcome_is_nested() -> None:
    cancelled = {"outcome": {"outcome": "cancelled"}}
    assert round_trip(cancelled, s.RequestPermissionResponse) == cancelled
    selected = {"outcome": {"outcome": "selected", "optionId": "allow"}}
    assert round_trip(selected, s.RequestPermissionResponse) == selected
    assert paths_of({"outcome": "selected", "optionId": "allow"}, s.RequestPermissionResponse)


@pytest.mark.parametrize("raw", ["text", 3, [1, "a"], None, {"k": {"n": [True]}}])
def test_SCHEMA_15_raw_input_is_any_json(raw: Any) -> None:
    data = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "T",
        "rawInput": raw,
        "rawOutput": raw,
    }
    assert round_trip(data, s.SessionUpdate) == data


def test_SCHEMA_17_elicitation_content_values() -> None:
    content = {"s": "x", "i": 3, "f": 1.5, "b": False, "l": ["a", "b"]}
    data = {"action": "accept", "content": content}
    assert round_trip(data, s.CreateElicitationResponse) == data
    assert paths_of(
        {"action": "accept", "content": {"o": {"x": 1}}}, s.CreateElicitationResponse
    ) == ["params.content.o"]


# -- Encoding -------------------------------------------------------------------------------------


def test_encode_omits_unset_and_writes_null() -> None:
    update = s.ToolCallUpdate(tool_call_id="t", title=None, status=s.ToolCallStatus.COMPLETED)
    assert encode(update) == {"toolCallId": "t", "status": "completed", "title": None}


def test_encode_does_not_validate() -> None:
    # Models may be built invalid on purpose (tests, the oracle): encoding writes them as they are.
    assert encode(s.ToolCallLocation(path="relative", line=-1)) == {"path": "relative", "line": -1}
