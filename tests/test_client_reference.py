"""The reference client's session views, elicitation, forms and rendering helpers.

Spec: prompt-turn.mdx (Message IDs), tool-calls.mdx, agent-plan.mdx, slash-commands.mdx,
session-list.mdx (Updating Session Metadata), elicitation.mdx; clauses PROMPT-08, TOOL-03,
TOOL-06, PLAN-05, SLASH-04, LIST-15, ELICIT-05, ELICIT-12, ELICIT-28, ELICIT-29, ELICIT-34,
ELICIT-36.
"""

from __future__ import annotations

import threading

import pytest
from peers.client_harness import Pair, run_steps

from acpref import codec
from acpref import schema as s
from acpref.client import SessionView
from acpref.client.forms import fields_of, parse, validate
from acpref.client.reference import ReferenceClient
from acpref._tools.terminal import Renderer, describe_url


def update(wire: dict):
    return codec.decode({"sessionId": "s", "update": wire}, s.SessionNotification).update


def chunk(kind: str, text: str, message_id=None) -> dict:
    wire = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        wire["messageId"] = message_id
    return wire


# -- Views ------------------------------------------------------------------------------------


def test_PROMPT_08_chunks_grouped_by_message_id():
    view = SessionView("s")
    for wire in (
        chunk("agent_thought_chunk", "hm ", "t1"),
        chunk("agent_message_chunk", "Hel", "m1"),
        chunk("agent_thought_chunk", "so", "t1"),  # interleaved: still message t1
        chunk("agent_message_chunk", "lo", "m1"),
        chunk("agent_message_chunk", "Bye", "m2"),  # a new id: a new message
    ):
        view.apply(update(wire))
    assert [(m.role, m.message_id, m.text) for m in view.messages] == [
        ("thought", "t1", "hm so"),
        ("agent", "m1", "Hello"),
        ("agent", "m2", "Bye"),
    ]


def test_TOOL_03_06_tool_calls_merged_field_by_field():
    view = SessionView("s")
    view.apply(update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Edit"}))
    call = view.tool_calls["t"]
    assert (call.kind, call.status) == ("other", "pending")  # spec TOOL-03
    # spec TOOL-06: given fields replace, absent ones stay, arrays are replaced whole.
    view.apply(
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t",
                "status": "in_progress",
                "content": [{"type": "content", "content": {"type": "text", "text": "a"}}],
            }
        )
    )
    view.apply(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"})
    )
    assert (call.title, call.status) == ("Edit", "completed")  # absent fields kept
    assert len(call.content) == 1  # content kept when absent...
    view.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": []}))
    assert call.content == []  # ...and replaced whole when given


def test_PLAN_05_SLASH_04_replaced_whole():
    # spec SLASH-04: the command list is replaced, not merged.
    view = SessionView("s")
    entry = {"content": "a", "priority": "high", "status": "pending"}
    view.apply(update({"sessionUpdate": "plan", "entries": [entry, entry]}))
    view.apply(update({"sessionUpdate": "plan", "entries": [{**entry, "content": "b"}]}))
    assert [e.content for e in view.plan] == ["b"]
    view.apply(
        update(
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "x", "description": "X"}],
            }
        )
    )
    view.apply(update({"sessionUpdate": "available_commands_update", "availableCommands": []}))
    assert view.commands == []


def test_LIST_15_session_info_is_partial():
    view = SessionView("s")
    view.apply(
        update(
            {
                "sessionUpdate": "session_info_update",
                "title": "T",
                "updatedAt": "2025-01-01T00:00:00Z",
            }
        )
    )
    view.apply(
        update({"sessionUpdate": "session_info_update", "updatedAt": "2025-01-02T00:00:00Z"})
    )
    assert view.title == "T"  # absent: unchanged
    view.apply(update({"sessionUpdate": "session_info_update", "title": None}))
    assert view.title is None and view.updated_at == "2025-01-02T00:00:00Z"  # null: cleared


def test_modes_follow_current_mode_update():
    view = SessionView("s")
    view.set_modes(
        s.SessionModeState(
            current_mode_id="a",
            available_modes=[s.SessionMode(id="a", name="A"), s.SessionMode(id="b", name="B")],
        )
    )
    view.apply(update({"sessionUpdate": "current_mode_update", "currentModeId": "b"}))
    assert view.current_mode == "b"


# -- Elicitation over the wire ----------------------------------------------------------------

FORM = {
    "message": "Who are you?",
    "mode": "form",
    "sessionId": "$sid",
    "requestedSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
}


@pytest.fixture
def pair():
    made = []

    def make(client):
        made.append(Pair(client))
        return made[-1]

    yield make
    for p in made:
        p.close()


def test_ELICIT_20_form_answered_by_the_callback(pair, tmp_path):
    seen = []

    def form(request, cancelled):
        seen.append(request.message)
        return s.ElicitationAcceptAction(content={"name": "Ada"})

    p = pair(ReferenceClient(elicit_form=form))
    sid = p.new_session(str(tmp_path))
    (result,) = run_steps(p.conn, p.client, sid, [{"call": "elicitation/create", "params": FORM}])
    assert result == {"result": {"action": "accept", "content": {"name": "Ada"}}}
    assert seen == ["Who are you?"]


def test_ELICIT_29_unadvertised_or_unknown_mode_is_invalid_params(pair, tmp_path):
    p = pair(ReferenceClient(elicit_form=lambda r, c: s.ElicitationCancelAction()))
    sid = p.new_session(str(tmp_path))
    url = {
        "message": "Open",
        "mode": "url",
        "sessionId": "$sid",
        "elicitationId": "e1",
        "url": "https://x.test/",
    }
    weird = {"message": "?", "mode": "telepathy", "sessionId": "$sid"}
    url_result, weird_result = run_steps(
        p.conn,
        p.client,
        sid,
        [
            {"call": "elicitation/create", "params": url},
            {"call": "elicitation/create", "params": weird},
        ],
    )
    assert url_result["error"]["code"] == -32602
    assert weird_result["error"]["code"] == -32602


def test_ELICIT_28_completion_of_known_ids_only(pair, tmp_path):
    completed = []
    p = pair(
        ReferenceClient(
            elicit_url=lambda r, c: s.ElicitationAcceptAction(),
            on_elicitation_complete=completed.append,
        )
    )
    sid = p.new_session(str(tmp_path))
    url = {
        "message": "Open",
        "mode": "url",
        "sessionId": "$sid",
        "elicitationId": "e1",
        "url": "https://x.test/",
    }
    run_steps(
        p.conn,
        p.client,
        sid,
        [
            {"call": "elicitation/create", "params": url},
            {"notify": "elicitation/complete", "params": {"elicitationId": "unknown"}},
            {"notify": "elicitation/complete", "params": {"elicitationId": "e1"}},
            {
                "notify": "elicitation/complete",
                "params": {"elicitationId": "e1"},
            },  # already completed
        ],
    )
    assert completed == ["e1"]


# -- Forms, URLs, rendering --------------------------------------------------------------------


def test_ELICIT_12_forms_parse_and_validate():
    # spec ELICIT-14, SCHEMA-10: defaults pre-filled; unknown field types never filled in.
    schema = codec.decode(
        {
            "type": "object",
            "required": ["n"],
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 3},
                "c": {"type": "string", "enum": ["red", "blue"]},
                "ok": {"type": "boolean", "default": True},
                "weird": {"type": "telepathy"},
            },
        },
        s.ElicitationSchema,
    )
    fields = {f.name: f for f in fields_of(schema)}
    assert parse(fields["n"], "2") == 2 and parse(fields["ok"], "no") is False
    with pytest.raises(ValueError):
        parse(fields["n"], "two")
    assert not fields["weird"].supported and fields["ok"].default is True
    assert validate(schema, {"n": 2, "c": "red"}) == {}
    assert set(validate(schema, {"n": 9, "c": "green"})) == {"n", "c"}
    assert validate(schema, {}) == {"n": "is required"}


def test_ELICIT_34_36_url_shown_whole_with_warnings():
    # spec ELICIT-36: Punycode and lookalike hosts are flagged.
    lines = "\n".join(describe_url("http://user@xn--pple-43d.com/login?x=1"))
    assert "http://user@xn--pple-43d.com/login?x=1" in lines  # the complete URL
    assert "Punycode" in lines and "not https" in lines and "before '@'" in lines
    assert "WARNING" not in "\n".join(describe_url("https://example.com/a"))


def test_CONFIG_02_options_shown_in_the_agents_order():
    from acpref._tools.terminal import describe_options

    wire = [
        {
            "id": "z",
            "name": "Z",
            "type": "select",
            "currentValue": "a",
            "category": "_custom",
            "options": [{"value": "a", "name": "A"}],
        },
        {"id": "b", "name": "B", "type": "boolean", "currentValue": True},
    ]
    options = codec.decode({"configOptions": wire}, s.ConfigOptionUpdate).config_options
    # spec CONFIG-09: an unknown category changes nothing.
    assert describe_options(options) == ["z = a  (Z; a)", "b = on  (B; on/off)"]


def test_renderer_streams_text_and_tags_the_rest():
    out = []
    r = Renderer(out.append)
    r.update(update(chunk("agent_message_chunk", "Hel")))
    r.update(update(chunk("agent_message_chunk", "lo")))
    r.update(
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": "Write",
                "content": [{"type": "diff", "path": "/a", "oldText": "x\n", "newText": "y\n"}],
            }
        )
    )
    r.terminal_output("term", "partial")
    r.terminal_output("term", " line\nnext")
    r.flush_terminals()
    text = "".join(out)
    assert text.startswith("Hello\n[tool] Write (other): pending\n  [diff] /a\n")
    assert "    -x\n    +y\n" in text
    assert "  term| partial line\n  term| next\n" in text


def test_url_elicitation_cancelled_event_given_to_callback(pair, tmp_path):
    events = []

    def url(request, cancelled):
        events.append(isinstance(cancelled, threading.Event))
        return s.ElicitationDeclineAction()

    p = pair(ReferenceClient(elicit_url=url))
    sid = p.new_session(str(tmp_path))
    params = {
        "message": "Open",
        "mode": "url",
        "sessionId": "$sid",
        "elicitationId": "e2",
        "url": "https://x.test/",
    }
    (result,) = run_steps(p.conn, p.client, sid, [{"call": "elicitation/create", "params": params}])
    assert result == {"result": {"action": "decline"}}
    assert events == [True]
