"""Rules on what the client sends: its requests and notifications, and its answers to the agent.

Spec: initialization.mdx, authentication.mdx, session-setup.mdx, session-list.mdx,
session-modes.mdx, session-config-options.mdx, prompt-turn.mdx, tool-calls.mdx, terminals.mdx,
file-system.mdx, elicitation.mdx, cancellation.mdx. Each check cites its clause where it finds.

A finding's ``code`` is the error the agent answers a refused request with: -32602 for bad params,
-32601 for an unadvertised method (checked in ``state``), -32002 for an unknown session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List

from ..errors import ErrorCode
from ..methods import CANCEL_REQUEST
from .book import Message, check, transition
from .capabilities import prompt_block_gate
from .findings import Finding, Party, finding
from .state import NO_IDS, NO_TURN, NOTHING
from .values import is_absolute_path

if TYPE_CHECKING:  # pragma: no cover
    from .state import ProtocolState

C = Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS
NOT_FOUND = ErrorCode.RESOURCE_NOT_FOUND
SESSION_SETUP = ("session/new", "session/load", "session/resume")


def _known_session(state: "ProtocolState", m: Message, code: Any = NOT_FOUND) -> Iterable[Finding]:
    sid = m.session_id
    if state.session(sid) is None:
        # spec-gap unknown-session: a session not set up on this connection is unknown
        # (RPC-17 suggests -32002 for a missing resource).
        yield finding(
            "spec-gap:unknown-session", m.sender, f"unknown session {sid!r}", m.index, code
        )


# -- initialize -----------------------------------------------------------------------------------


@check("request", C, "initialize")
def _initialize(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if state.initialize_sent:
        # spec-gap initialize-twice: one initialize per connection.
        yield finding(
            "spec-gap:initialize-twice",
            C,
            "initialize sent twice on one connection",
            m.index,
            -32600,
        )
    if not isinstance(m.params.get("clientCapabilities"), dict):
        # spec INIT-02: initialize carries the client's capabilities.
        yield finding("INIT-02", C, "initialize params lack clientCapabilities", m.index)
    info = m.params.get("clientInfo")
    if not (isinstance(info, dict) and info.get("name") and info.get("version")):
        # spec INIT-03, INIT-20: clientInfo with name and version.
        yield finding("INIT-03", C, "initialize params lack clientInfo name and version", m.index)


@transition("request", C, "initialize")
def _initialize_sent(state: "ProtocolState", m: Message) -> None:
    state.initialize_sent = True
    state.requested_version = m.params.get("protocolVersion")
    caps = m.params.get("clientCapabilities")
    state.client_caps = caps if isinstance(caps, dict) else {}


# -- authenticate ---------------------------------------------------------------------------------


@check("request", C, "authenticate")
def _authenticate(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    method_id = m.params.get("methodId")
    advertised = {a.get("id"): a for a in state.auth_methods if isinstance(a, dict)}
    if method_id not in advertised:
        # spec AUTH-07: methodId is the id of an advertised method.
        yield finding(
            "AUTH-07", C, f"authenticate with unadvertised method {method_id!r}", m.index, INVALID
        )
    elif advertised[method_id].get("type") == "terminal":
        # spec AUTH-08: a terminal method is never passed to authenticate.
        yield finding(
            "AUTH-08", C, f"authenticate with terminal method {method_id!r}", m.index, INVALID
        )


# -- session setup --------------------------------------------------------------------------------


def _setup_params(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    p = m.params
    if "cwd" in p and not is_absolute_path(p.get("cwd")):
        # spec SETUP-25, OVERVIEW-06: cwd is an absolute path.
        yield finding(
            "SETUP-25", C, f"cwd {p.get('cwd')!r} is not an absolute path", m.index, INVALID
        )
    if "additionalDirectories" in p:
        if not state.gate_open("sessionCapabilities.additionalDirectories", Party.AGENT):
            # spec SETUP-24: only when the agent advertised additionalDirectories.
            yield finding(
                "SETUP-24",
                C,
                "additionalDirectories sent but not advertised by the agent",
                m.index,
                INVALID,
            )
        dirs = p.get("additionalDirectories")
        for d in dirs if isinstance(dirs, list) else []:
            if not is_absolute_path(d):
                # spec SETUP-20: every additional directory is absolute.
                yield finding(
                    "SETUP-20", C, f"additional directory {d!r} is not absolute", m.index, INVALID
                )
    servers = p.get("mcpServers")
    if servers is None and "mcpServers" in p:
        servers = []  # spec SCHEMA-18: an explicit null is the empty list
    if m.method == "session/resume" and "mcpServers" not in p:
        # spec SETUP-11 (spec-gap resume-mcp-servers): resume carries mcpServers too (the
        # docs list it, the schema leaves it optional: reported as a spec-gap, never refused).
        yield finding("SETUP-11", C, "session/resume without mcpServers", m.index)
    elif m.method in ("session/new", "session/load") and not isinstance(servers, list):
        # spec SETUP-01, SETUP-04: mcpServers is an array, possibly empty.
        yield finding(
            "SETUP-01" if m.method == "session/new" else "SETUP-04",
            C,
            "mcpServers missing",
            m.index,
            INVALID,
        )
    for server in servers if isinstance(servers, list) else []:
        if not isinstance(server, dict):
            continue
        kind = server.get("type")
        missing = _mcp_entry_missing(server)
        if missing:
            # spec SETUP-32, SETUP-33, SETUP-34: every key an entry's schema requires is sent
            # (env and headers [] when empty). spec SCHEMA-20: since the schema of 2026-11-02 a
            # malformed entry is no longer dropped: the whole request is invalid params.
            yield finding(
                "SETUP-34" if kind == "sse" else "SETUP-33" if kind == "http" else "SETUP-32",
                C,
                f"MCP server {server.get('name')!r} lacks {', '.join(missing)}",
                m.index,
                INVALID,
            )
        if kind in ("http", "sse") and not state.gate_open(f"mcpCapabilities.{kind}", Party.AGENT):
            # spec SETUP-35: http/sse servers only when the agent advertised that transport.
            yield finding(
                "SETUP-35",
                C,
                f"MCP server {server.get('name')!r} uses {kind}, which the agent did not advertise",
                m.index,
                INVALID,
            )
        elif "command" not in missing and kind is None and not is_absolute_path(server["command"]):
            # spec SETUP-32: a stdio server's command is an absolute path.
            yield finding(
                "SETUP-32",
                C,
                f"MCP server command {server.get('command')!r} is not absolute",
                m.index,
                INVALID,
            )


check("request", C, *SESSION_SETUP)(_setup_params)


def _mcp_entry_missing(server: Dict[str, Any]) -> List[str]:
    """The required keys of an ``mcpServers`` entry that are absent or of the wrong JSON type."""
    if server.get("type") in ("http", "sse"):
        wanted = {"name": str, "url": str, "headers": list}
    else:
        wanted = {"name": str, "command": str, "args": list, "env": list}
    # spec SCHEMA-18, SCHEMA-19: args, env and headers may be null (empty), never omitted.
    return [
        key
        for key, kind in wanted.items()
        if not isinstance(server.get(key), kind)
        and not (kind is list and key in server and server[key] is None)
    ]


@check("request", C, "session/load", "session/resume")
def _reopen(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    sid = m.params.get("sessionId")
    if m.method == "session/load" and not ("sessionId" in m.params and "cwd" in m.params):
        # spec SETUP-04: session/load names the session and its cwd.
        yield finding("SETUP-04", C, "session/load needs sessionId and cwd", m.index, INVALID)
    known = state.sessions.get(sid) if isinstance(sid, str) else None
    known_cwd = known.cwd if known is not None else state.listed.get(sid)
    cwd = m.params.get("cwd")
    if known_cwd is not None and isinstance(cwd, str) and _norm(cwd) != _norm(known_cwd):
        # spec SETUP-22: load/resume name the session's own cwd.
        yield finding(
            "SETUP-22", C, f"cwd {cwd!r} is not the session's cwd {known_cwd!r}", m.index, INVALID
        )


def _norm(path: str) -> str:
    return path.rstrip("/\\") or path


@transition("request", C, "session/load", "session/resume")
def _reopening(state: "ProtocolState", m: Message) -> None:
    from .state import SessionState

    sid = m.params.get("sessionId")
    if not isinstance(sid, str):
        return
    load = m.method == "session/load"
    existing = state.sessions.get(sid)
    if existing is not None and existing.status != "closed":
        # Loads and resumes of one session may overlap: each is counted, and a load in flight
        # keeps the session "loading" (its replay may go on) until the last one is answered.
        loads, resumes = existing.reopening or (0, 0)
        loads, resumes = (loads + 1, resumes) if load else (loads, resumes + 1)
        existing.reopening = (loads, resumes)
        existing.status = "loading" if loads else "resuming"
        # A replay re-sends the messages with their own ids: uniqueness is checked within it.
        existing.old_message_ids = NO_IDS
        existing.message_id = None
        return
    state.sessions[sid] = SessionState(
        id=sid,
        cwd=m.params.get("cwd"),
        status="loading" if load else "resuming",
        reopening=(1, 0) if load else (0, 1),
        created_by_reopen=True,
    )


@check("request", C, "session/close")
def _close(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if state.session(m.session_id) is None:
        # spec SETUP-15, SETUP-18: close names an active session; the agent answers -32002.
        yield finding(
            "SETUP-15", C, f"session/close of unknown session {m.session_id!r}", m.index, NOT_FOUND
        )


@transition("request", C, "session/close")
def _closing(state: "ProtocolState", m: Message) -> None:
    s = state.session(m.session_id)
    if s is not None and s.turn is not NO_TURN and s.cancel_clause is None:
        # spec SETUP-16: close cancels a running turn as if session/cancel arrived.
        s.cancel_clause = "SETUP-16"
        s.cancel_certain = state.waiting_on_agent_request(s.id)
        s.cancelled_permissions = set(s.permissions)


# -- list -----------------------------------------------------------------------------------------


@check("request", C, "session/list")
def _list(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    cwd = m.params.get("cwd")
    if cwd is not None and not is_absolute_path(cwd):
        # spec LIST-03: the cwd filter is absolute.
        yield finding("LIST-03", C, f"cwd filter {cwd!r} is not absolute", m.index, INVALID)
    cursor = m.params.get("cursor")
    if cursor is not None and cursor not in state.cursors:
        # spec LIST-11: cursors are opaque: only a nextCursor received on this connection is sent.
        yield finding(
            "LIST-11", C, f"cursor {cursor!r} was not a nextCursor of this connection", m.index
        )


# -- modes and config options ---------------------------------------------------------------------


@check("request", C, "session/set_mode", "session/set_config_option", "session/prompt")
def _session_known(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if m.method == "session/prompt" and state.session(m.session_id) is None:
        # spec PROMPT-01: a prompt goes to a session set up on this connection.
        yield finding(
            "PROMPT-01",
            C,
            f"session/prompt for unknown session {m.session_id!r}",
            m.index,
            NOT_FOUND,
        )
    else:
        yield from _known_session(state, m)


@check("request", C, "session/set_mode")
def _set_mode(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    mode = m.params.get("modeId")
    if s is not None and s.mode_ids is not None and mode not in s.mode_ids:
        # spec MODES-04: modeId is one of availableModes.
        yield finding(
            "MODES-04",
            C,
            f"mode {mode!r} is not one of {sorted(s.mode_ids, key=repr)}",
            m.index,
            INVALID,
        )


@check("request", C, "session/set_config_option")
def _set_config(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    config_id, value = m.params.get("configId"), m.params.get("value")
    is_boolean = m.params.get("type") == "boolean"
    if is_boolean and not state.gate_open("session.configOptions.boolean", C):
        # spec INIT-13: boolean options exist only for a client that advertised them.
        yield finding(
            "INIT-13", C, "boolean config value without the boolean capability", m.index, INVALID
        )
    if s is None or not s.config:
        return
    option = s.config.get(config_id)
    if option is None:
        # spec CONFIG-17: configId is an advertised option.
        yield finding("CONFIG-17", C, f"unknown config option {config_id!r}", m.index, INVALID)
    elif option.get("type") == "boolean" and not (is_boolean and type(value) is bool):
        # spec CONFIG-18: a boolean option is set with type "boolean" and a JSON boolean.
        yield finding(
            "CONFIG-18",
            C,
            f"{config_id!r} is boolean: send type 'boolean' and true/false",
            m.index,
            INVALID,
        )
    elif option.get("type") == "select" and value not in _select_values(option):
        # spec CONFIG-17: a select value is one of the option's values.
        yield finding(
            "CONFIG-17", C, f"{value!r} is not a value of {config_id!r}", m.index, INVALID
        )


def _select_values(option: Dict[str, Any]) -> set:
    values = set()
    for item in option.get("options") or []:
        if isinstance(item, dict) and "group" in item:
            values |= {v.get("value") for v in item.get("options") or [] if isinstance(v, dict)}
        elif isinstance(item, dict):
            values.add(item.get("value"))
    return values


# -- prompt turn ----------------------------------------------------------------------------------


@check("request", C, "session/prompt")
def _prompt(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    if s is not None and s.turn is not NO_TURN:
        # spec-gap concurrent-prompt: one turn at a time per session.
        yield finding(
            "spec-gap:concurrent-prompt",
            C,
            f"a turn is already running in session {s.id!r}",
            m.index,
            -32600,
        )
    prompt = m.params.get("prompt")
    if not isinstance(prompt, list):
        # spec PROMPT-02: the prompt is an array of content blocks.
        yield finding("PROMPT-02", C, "session/prompt has no prompt array", m.index, INVALID)
    for block in prompt if isinstance(prompt, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        gate = prompt_block_gate(kind)
        if gate is not None and not state.gate_open(gate, Party.AGENT):
            # spec PROMPT-03: only the content types the agent's promptCapabilities allow;
            # spec CONTENT-04: image/audio/resource only when the agent accepts them.
            yield finding(
                "CONTENT-04",
                C,
                f"prompt has {'an' if str(kind)[:1] in 'aeiou' else 'a'} {kind} block but the agent "
                f"did not advertise {gate}",
                m.index,
                INVALID,
            )


@transition("request", C, "session/prompt")
def _turn_starts(state: "ProtocolState", m: Message) -> None:
    s = state.session(m.session_id)
    if s is None or s.turn is not NO_TURN:
        return
    s.turn = m.id
    s.last = "turn"
    s.cancel_clause = None
    s.cancel_certain = False
    s.cancelled_permissions = NO_IDS


@transition("notification", C, "session/cancel")
def _cancel(state: "ProtocolState", m: Message) -> None:
    s = state.session(m.session_id)
    if s is not None and s.turn is not NO_TURN and s.cancel_clause is None:
        s.cancel_clause = "PROMPT-23"
        s.cancel_certain = state.waiting_on_agent_request(s.id)
        # spec PROMPT-21: every permission request pending now is answered "cancelled".
        s.cancelled_permissions = set(s.permissions)


# -- $/cancel_request, either way -----------------------------------------------------------------


def _cancel_request_check(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    target = m.params.get("requestId")
    if not (isinstance(target, (str, int)) and target in state.outstanding[m.sender]):
        # spec CANCEL-01, spec-gap unknown-cancel-id: a party cancels only its own outstanding
        # requests (a race with the response is possible, so this is a warning).
        yield finding(
            "spec-gap:unknown-cancel-id",
            m.sender,
            f"$/cancel_request for {target!r}, not in flight",
            m.index,
        )


def _cancel_request_apply(state: "ProtocolState", m: Message) -> None:
    target = m.params.get("requestId")
    req = state.outstanding[m.sender].get(target) if isinstance(target, (str, int)) else None
    if req is not None:
        req.cancel_requested = True


for _party in (Party.CLIENT, Party.AGENT):
    check("notification", _party, CANCEL_REQUEST)(_cancel_request_check)
    transition("notification", _party, CANCEL_REQUEST)(_cancel_request_apply)


# -- The client's answers to the agent ------------------------------------------------------------


@check("response", C, "session/request_permission")
def _permission_answer(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    outcome = (m.result or {}).get("outcome") if isinstance(m.result, dict) else None
    kind = outcome.get("outcome") if isinstance(outcome, dict) else None
    if s is not None and m.id in s.cancelled_permissions and kind != "cancelled":
        # spec PROMPT-21: after session/cancel, pending permission requests are answered cancelled.
        got = "an error" if m.is_error else f"outcome {kind!r}"
        yield finding(
            "PROMPT-21",
            C,
            f"permission request {m.id!r} answered {got} after session/cancel",
            m.index,
        )
    if kind == "selected" and isinstance(outcome, dict):  # a kind implies a dict outcome
        offered = {
            o.get("optionId") for o in m.request.params.get("options") or [] if isinstance(o, dict)
        }
        if outcome.get("optionId") not in offered:
            # spec TOOL-08: the selected optionId is one of the offered options.
            yield finding(
                "TOOL-08",
                C,
                f"selected option {outcome.get('optionId')!r} was not offered",
                m.index,
            )


@transition("response", C, "session/request_permission")
def _permission_answered(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    s = state.sessions.get(m.request.params.get("sessionId"))
    if s is not None:
        s.permissions = {k: v for k, v in s.permissions.items() if k != m.id} or NOTHING
        cancelled = s.cancelled_permissions
        if m.id in cancelled and isinstance(cancelled, set):  # then it is a set of its own
            cancelled.discard(m.id)


_OBJECT_RESULTS = {
    "fs/write_text_file": "FS-08",
    "terminal/release": "SCHEMA-09",
    "terminal/kill": "TERM-12",
}


@check("response", C, *_OBJECT_RESULTS)
def _object_result(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    if not m.is_error and not isinstance(m.result, dict):
        # spec SCHEMA-09 (FS-08, TERM-12): these results are objects ({}), not null.
        yield finding(
            _OBJECT_RESULTS[m.method or ""],
            C,
            f"{m.method} result is {m.result!r}, not an object",
            m.index,
        )


@transition("response", C, "terminal/create")
def _terminal_created(state: "ProtocolState", m: Message) -> None:
    from .state import TerminalState

    assert m.request is not None
    if isinstance(m.result, dict) and isinstance(m.result.get("terminalId"), str):
        state.terminals[m.result["terminalId"]] = TerminalState(
            session_id=m.request.params.get("sessionId"), created_index=m.index
        )


@check(
    "response", C, "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release"
)
def _released_terminal_answer(state: "ProtocolState", m: Message) -> Iterable[Finding]:
    assert m.request is not None
    term = state.terminals.get(m.request.params.get("terminalId"))
    if term is not None and term.released and not m.is_error:
        # spec TERM-14: after release the terminal id is invalid: the client answers an error.
        yield finding(
            "TERM-14", C, f"{m.method} on a released terminal answered with a result", m.index
        )


@transition("response", C, "terminal/release")
def _terminal_released(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    term = state.terminals.get(m.request.params.get("terminalId"))
    if term is not None and not m.is_error:
        term.released = True


@check("response", C, "elicitation/create")
def _elicitation_answer(state: "ProtocolState", m: Message) -> Iterable[Finding]:
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


@transition("response", C, "elicitation/create")
def _elicitation_answered(state: "ProtocolState", m: Message) -> None:
    assert m.request is not None
    action = m.result.get("action") if isinstance(m.result, dict) else None
    if m.is_error or action != "accept":
        state.url_elicitations.pop(m.request.params.get("elicitationId"), None)
