"""elicitation.mdx: the agent asks the user for input, through the client.

``elicitation/create`` comes in a mode the client advertised (ELICIT-06; else the client answers
-32602, ELICIT-29) and is scoped to a known session or to a client request in flight
(ELICIT-09). A *form* asks for flat fields (ELICIT-11), never for secrets (ELICIT-15) and shows
no links (ELICIT-32). A *url* sends the user to a page (a URI, ELICIT-17; https outside
development, ELICIT-31; no credentials in it, ELICIT-30) under an id unique among the outstanding
ones (ELICIT-24), which ``elicitation/complete`` later names (ELICIT-27: an id this client
received, outstanding or not; a second completion is no violation, the client ignores it,
ELICIT-28). The client answers
accept, decline or cancel (ELICIT-20).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable

from ..errors import ErrorCode
from .book import Message, check, transition
from .bounded import forgot_any, remember
from .facts import ConnectionFacts
from .findings import Finding, Party, finding
from .values import has_link, is_development_url, names_a_secret, url_credentials

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.RESOURCE_NOT_FOUND


@check("request", A, "elicitation/create")
def _elicit(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    mode = m.params.get("mode")
    if not (isinstance(mode, str) and state.gate_open(f"elicitation.{mode}", C)):
        # spec ELICIT-06, ELICIT-08: only a mode the client advertised, always named (there is no
        # default mode); ELICIT-29: answered -32602.
        yield finding(
            "ELICIT-06",
            A,
            f"elicitation mode {mode!r} was not advertised by the client",
            m.index,
            INVALID,
        )
    sid, request_id = m.params.get("sessionId"), m.params.get("requestId")
    if sid is not None:
        child = state.announced(sid)
        if state.session(sid) is None and not child:
            # spec ELICIT-09: a session-scoped elicitation names a known session (an announced
            # child is one: SUBAGENT-03, SUBAGENT-19).
            yield finding(
                "ELICIT-09", A, f"elicitation for unknown session {sid!r}", m.index, NOT_FOUND
            )
    elif not (isinstance(request_id, (str, int)) and request_id in state.outstanding[C]):
        # spec ELICIT-09: otherwise it names a client request in flight.
        yield finding(
            "ELICIT-09",
            A,
            f"elicitation scoped to request {request_id!r}, not in flight",
            m.index,
            INVALID,
        )
    if mode == "form":
        yield from _form(m)
    elif mode == "url":
        yield from _url(state, m)


def _form(m: Message) -> Iterable[Finding]:
    schema = m.params.get("requestedSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    for name, prop in props.items() if isinstance(props, dict) else ():
        if isinstance(prop, dict) and prop.get("type") == "object":
            # spec ELICIT-11: the requested schema is flat: no nested object fields.
            yield finding(
                "ELICIT-11", A, f"form field {name!r} is a nested object", m.index, INVALID
            )
        title = prop.get("title") if isinstance(prop, dict) else None
        if names_a_secret(name) or names_a_secret(title):
            # spec ELICIT-15: form mode never asks for a secret or credential. Only the
            # field's name is seen, not its purpose: a warning (spec-gap
            # elicitation-secret-heuristics), never a refusal.
            yield finding(
                "spec-gap:elicitation-secret-heuristics",
                A,
                f"ELICIT-15: form field {name!r} looks like a secret or credential",
                m.index,
            )
    linked = [where for where, text in _form_texts(m.params) if has_link(text)]
    if linked:
        # spec ELICIT-32: no URL meant to be clicked in any field of a form-mode request.
        yield finding(
            "ELICIT-32", A, f"form-mode request has a URL in {', '.join(linked)}", m.index
        )


def _form_texts(params: Dict[str, Any]) -> Iterable[Any]:
    """``(where, text)`` for every text a form-mode request shows: message, titles, descriptions."""
    yield "message", params.get("message")
    schema = params.get("requestedSchema")
    schema = schema if isinstance(schema, dict) else {}
    for key in ("title", "description"):
        yield f"the form's {key}", schema.get(key)
    props = schema.get("properties")
    for name, prop in props.items() if isinstance(props, dict) else ():
        if not isinstance(prop, dict):
            continue
        items = prop.get("items")
        choices = (prop.get("oneOf"), items.get("anyOf") if isinstance(items, dict) else None)
        options = [o for c in choices if isinstance(c, list) for o in c if isinstance(o, dict)]
        for holder in [prop, *options]:
            for key in ("title", "description"):
                yield f"field {name!r} {key}", holder.get(key)


def _url(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    eid = m.params.get("elicitationId")
    if eid in state.url_elicitations:
        # spec ELICIT-24: elicitation ids are unique among outstanding URL elicitations.
        yield finding(
            "ELICIT-24", A, f"elicitationId {eid!r} is already outstanding", m.index, INVALID
        )
    url = m.params.get("url")
    if not (isinstance(url, str) and "://" in url):
        # spec ELICIT-17: a URL-mode request carries a URI.
        yield finding("ELICIT-17", A, f"url {url!r} is not a URI", m.index, INVALID)
    for what in url_credentials(url):
        # spec ELICIT-30: no credentials, personal data or pre-authenticated access in the
        # URL. Recognised by name only (a token parameter, an email address, a user part):
        # a warning (spec-gap elicitation-secret-heuristics).
        yield finding(
            "spec-gap:elicitation-secret-heuristics",
            A,
            f"ELICIT-30: the elicitation URL carries {what}",
            m.index,
        )
    if isinstance(url, str) and "://" in url:
        if not url.lower().startswith("https://") and not is_development_url(url):
            # spec ELICIT-31: HTTPS outside development (this machine's URLs are exempt).
            yield finding("ELICIT-31", A, f"elicitation URL {url!r} is not https", m.index)


@transition("request", A, "elicitation/create")
def _elicit_apply(state: ConnectionFacts, m: Message) -> None:
    if m.params.get("mode") == "url":
        eid = m.params.get("elicitationId")
        if isinstance(eid, str):
            state.url_elicitations[eid] = m.index
            _received(state, eid)


def _received(state: ConnectionFacts, eid: str) -> None:
    """The client received a URL elicitation under ``eid`` (what ELICIT-27 asks of a completion)."""
    state.url_elicitation_ids = remember(state.url_elicitation_ids, eid, None, state.max_remembered)


@check("response", C, "elicitation/create")
def _elicitation_answer(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    mode = m.request.params.get("mode")
    advertised = isinstance(mode, str) and state.gate_open(f"elicitation.{mode}", C)
    if not advertised and (not m.is_error or m.error.get("code") != ErrorCode.INVALID_PARAMS):
        # spec ELICIT-29: a request in a mode the client did not advertise gets -32602.
        yield finding(
            "ELICIT-29",
            C,
            f"elicitation in unadvertised mode {mode!r} not answered -32602",
            m.index,
        )
    action = m.result.get("action") if isinstance(m.result, dict) else None
    if not m.is_error and action not in ("accept", "decline", "cancel"):
        # spec ELICIT-20: the action is accept, decline or cancel.
        yield finding("ELICIT-20", C, f"elicitation answered with action {action!r}", m.index)
    if not m.is_error and action == "accept" and m.request.params.get("mode") == "form":
        content = m.result.get("content")
        for why in _nonconforming(m.request.params.get("requestedSchema"), content):
            # spec ELICIT-22: accepted form `content` "SHOULD conform to the requested schema"
            # (absent or null content conforms to nothing required).
            yield finding("ELICIT-22", C, f"accepted form content {why}", m.index)


#: The JSON types of the form's primitive schemas (elicitation.mdx, "Form mode").
_PRIMITIVE = {"string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,)}


def _nonconforming(schema: Any, content: Any) -> Iterable[str]:
    """Why ``content`` does not conform to a form's ``requestedSchema``: required keys, the type
    of each known field, and its enum (``enum``, ``oneOf`` consts, or the items' ones)."""
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    content = content if isinstance(content, dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    missing = [k for k in required if isinstance(k, str) and k not in content]
    if missing:
        yield f"lacks required field(s) {', '.join(map(repr, missing))}"
    for name, value in content.items():
        prop = props.get(name)
        if isinstance(prop, dict) and not _fits(prop, value):
            yield f"field {name!r} = {value!r} does not fit its schema {prop!r}"[:300]


def _fits(prop: Dict[str, Any], value: Any) -> bool:
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, dict):
            items = {}
        return isinstance(value, list) and all(_in_choices(items, v) for v in value)
    wanted = _PRIMITIVE.get(kind) if isinstance(kind, str) else None
    if wanted is not None and (type(value) is bool) != (kind == "boolean"):
        return False  # a boolean is no number, and a number no boolean
    if wanted is not None and not isinstance(value, wanted):
        return False
    return _in_choices(prop, value)


def _in_choices(prop: Dict[str, Any], value: Any) -> bool:
    """True when ``prop`` names no choices, or ``value`` is one of them."""
    choices = prop.get("enum")
    if not isinstance(choices, list):
        options = prop.get("oneOf", prop.get("anyOf"))
        if isinstance(options, list):
            choices = [o.get("const") for o in options if isinstance(o, dict) and "const" in o]
    return not isinstance(choices, list) or not choices or value in choices


@transition("response", C, "elicitation/create")
def _elicitation_answered(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    eid = m.request.params.get("elicitationId")
    if m.request.params.get("mode") == "url" and isinstance(eid, str):
        # spec ELICIT-27, spec-gap refused-changes-nothing: a request the client refused was
        # received all the same, and its answer shows it; its completion names a received id.
        _received(state, eid)
    action = m.result.get("action") if isinstance(m.result, dict) else None
    if m.is_error or action != "accept":
        state.url_elicitations.pop(eid, None)


@check("notification", A, "elicitation/complete")
def _elicit_complete(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    eid = m.params.get("elicitationId")
    received = state.url_elicitation_ids
    if eid not in received and not forgot_any(received):
        # spec ELICIT-27: sent only to the client that received the original request, with its
        # elicitationId: one this connection's client received in a URL elicitation/create,
        # whether still outstanding, declined or completed before (the client ignores those,
        # ELICIT-28). spec-gap remembered-bound: once an id was forgotten, none is judged.
        yield finding("ELICIT-27", A, f"elicitation/complete for unknown id {eid!r}", m.index)


@transition("notification", A, "elicitation/complete")
def _elicit_complete_apply(state: ConnectionFacts, m: Message) -> None:
    state.url_elicitations.pop(m.params.get("elicitationId"), None)
