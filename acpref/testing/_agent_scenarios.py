"""The scenarios of ``check-agent``: one function per conversation, each on a fresh agent.

Spec: initialization.mdx, session-modes.mdx, session-config-options.mdx, prompt-turn.mdx,
extensibility.mdx, transports.mdx here (the handshake, the version, a prompt turn); cancellation
in ``_cancel_scenarios``, the session's cwd as the base in ``_cwd_scenarios``,
load/resume/list/delete/close, the system prompt and MCP servers in ``_session_scenarios``, what
no client should send in ``_bad_input_scenarios``. ``SCENARIOS``,
at the end, lists them all with the clauses each decides; the oracle judges every message
besides (a finding blamed on the agent fails its clause whatever the scenario).

Scenarios stay lean: one process each, a handful of requests, prompts only where a turn is the
point (a real model answers each one).
"""

from __future__ import annotations

import os
from typing import Any, List, Optional

from .. import schema as s
from ..errors import ErrorCode, RpcError
from ._auth_scenarios import CLAUSES as AUTH_CLAUSES
from ._auth_scenarios import authentication
from ._bad_input_scenarios import bad_input
from ._cancel_scenarios import IGNORED, cancel_scenario
from ._cwd_scenarios import cwd_scenario
from ._driver import _TURN_CONTENT
from ._scenario import META, NotReached, Scenario, ScenarioContext, round_trip
from ._session_scenarios import (
    close,
    delete,
    list_sessions,
    load,
    load_restarted,
    mcp,
    resume,
    system_prompt,
)

__all__ = ["SCENARIOS"]


# -- handshake ------------------------------------------------------------------------------------


def _handshake(ctx: ScenarioContext) -> None:
    response = ctx.driver.initialize(1)
    raw = ctx.driver.initialize_raw if isinstance(ctx.driver.initialize_raw, dict) else {}
    # spec INIT-07: a supported requested version is answered with that same version.
    ctx.check(
        "INIT-07",
        response.protocol_version == 1,
        f"answered protocolVersion {response.protocol_version!r}",
    )
    caps = raw.get("agentCapabilities")
    caps = caps if isinstance(caps, dict) else {}
    # spec INIT-04: the negotiated protocolVersion; agentCapabilities may be omitted (the schema's
    # default: the baseline only), but when present it is an object.
    ctx.check(
        "INIT-04",
        "agentCapabilities" not in raw or isinstance(raw["agentCapabilities"], dict),
        f"agentCapabilities is {type(raw.get('agentCapabilities')).__name__}, not an object",
    )
    session_caps = caps.get("sessionCapabilities")
    # spec INIT-19: loadSession lives at the top level only.
    ctx.check(
        "INIT-19",
        not (isinstance(session_caps, dict) and "loadSession" in session_caps),
        "loadSession advertised inside sessionCapabilities",
    )
    methods = raw.get("authMethods", [])
    bad = (
        [m for m in methods if not (isinstance(m, dict) and m.get("id") and m.get("name"))]
        if isinstance(methods, list)
        else [methods]
    )
    # spec AUTH-01: each auth method has an id and a name.
    ctx.check("AUTH-01", not bad, f"auth methods without id or name: {bad!r}")
    ctx.passed("INIT-05", "AUTH-05", "SCHEMA-12", "TRANSPORT-08", "RPC-01", "RPC-04")


def _version(ctx: ScenarioContext) -> None:
    # spec INIT-08: an unsupported version is answered with the agent's newest, never an error.
    try:
        response = ctx.driver.initialize(65000)
    except RpcError as exc:
        evidence = f"initialize with protocolVersion 65000 answered error {exc.code}: {exc.detail}"
        ctx.check("INIT-08", False, evidence)
        return
    version = response.protocol_version
    ctx.check(
        "INIT-08",
        type(version) is int and version != 65000,
        f"answered protocolVersion {version!r}",
    )


# -- sessions and prompt turns --------------------------------------------------------------------


def _prompt(ctx: ScenarioContext) -> None:
    ctx.initialize()
    # spec INIT-17: "As a baseline, all Agents MUST support `session/new`, ..." (the sentence
    # OVERVIEW-02's list has no keyword of its own: filed once, here; spec_notes/should.md).
    ctx.at("INIT-17")
    first = ctx.new_session(judged=True)
    setup = ctx.driver.last_session_response
    second = ctx.new_session(judged=True)
    # spec SETUP-02: every new session id is unique.
    ctx.check("SETUP-02", first != second, f"two session/new answered the same id {first!r}")
    _no_boolean_options(ctx, setup, ctx.driver.last_session_response)
    ctx.passed("INIT-17")
    ctx.at("PROMPT-11")
    # Non-ASCII text both ways (TRANSPORT-01: every byte the agent writes must be UTF-8), and
    # _meta at the params root and on the content block (EXT-02).
    block = {"type": "text", "text": ctx.options.prompt, "_meta": META}
    try:
        turn = ctx.driver.prompt_async(first, block, meta=META).result()
        ctx.passed("EXT-02")
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            raise  # spec RPC-16: a login wanted, whatever the prompt carried
        turn = _text_prompt(ctx, first)
        # spec EXT-02: the same prompt without _meta was served, so _meta caused the error.
        evidence = f"a prompt with _meta answered error {exc.code}: {exc.detail}"
        ctx.check("EXT-02", False, evidence)
    ctx.passed("PROMPT-11", "CONTENT-02", "TRANSPORT-01")
    # spec PROMPT-17: the turn ends with a StopReason. Whether the carried schema defines it is
    # the oracle's verdict, in one place (spec-gap undefined-value: it fails, unless newer_spec).
    stop = turn.response.stop_reason
    ctx.check("PROMPT-17", isinstance(stop, s.StopReason), f"stopReason {stop!r}")
    foreign = [u for u in ctx.driver.updates(second) if isinstance(u, _TURN_CONTENT)]
    # spec PROMPT-06: the turn's updates carry the prompt's sessionId.
    ctx.check(
        "PROMPT-06", not foreign, f"{len(foreign)} updates of the turn went to the other session"
    )
    _resource_link(ctx, first)
    # The oracle judges every update of both turns; one more round trip lets late ones arrive
    # while the connection is still open (PROMPT-26: none after the answer).
    round_trip(ctx)
    ctx.passed("PROMPT-26")
    _modes_and_options(ctx, first, setup)


def _text_prompt(ctx: ScenarioContext, session_id: str) -> Any:
    """The prompt of one plain text block (no ``_meta``), judged: refusing it as unreadable is
    refusing text content."""
    try:
        return ctx.prompt(session_id, ctx.options.prompt, judged=True)
    except RpcError as exc:
        if exc.code not in (ErrorCode.INVALID_PARAMS, ErrorCode.INVALID_REQUEST):
            raise  # -32000: a login wanted (RPC-16); -32601: no session/prompt at all
        # spec CONTENT-02: "All Agents MUST support text content blocks when included in
        # prompts": a well-formed prompt of one text block refused as invalid is text refused.
        evidence = f"a prompt of one text block answered error {exc.code}: {exc.detail}"
        ctx.check("CONTENT-02", False, evidence)
        raise NotReached(evidence) from None


def _resource_link(ctx: ScenarioContext, session_id: str) -> None:
    """A prompt of one resource_link, to a file that exists, in the session that just served a
    text prompt."""
    path = os.path.join(ctx.cwd, "acpref-check.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("acpref check-agent: a file linked from a prompt\n")
    link = {"type": "resource_link", "uri": f"file://{path}", "name": "acpref-check.txt"}
    ctx.at("INIT-15", "CONTENT-09")
    try:
        ctx.driver.prompt(session_id, link)
        ctx.passed("INIT-15", "CONTENT-09")
    except RpcError as exc:
        if exc.code == ErrorCode.AUTH_REQUIRED:
            raise  # spec RPC-16: a login wanted, not the block refused
        # spec INIT-15 and spec CONTENT-09: resource_link is baseline prompt content.
        ctx.check("INIT-15", False, f"a prompt with a resource_link block was refused: {exc}")
        ctx.check("CONTENT-09", False, f"a prompt with a resource_link block was refused: {exc}")
    finally:
        os.remove(path)


def _modes_and_options(
    ctx: ScenarioContext, session_id: str, setup: Optional[s.NewSessionResponse]
) -> None:
    modes = (
        setup.modes if setup is not None and isinstance(setup.modes, s.SessionModeState) else None
    )
    if modes is None:
        for clause in ("MODES-03", "MODES-05", "MODES-02"):
            ctx.skip(clause, "the session offers no modes")
    else:
        others = [m.id for m in modes.available_modes if m.id != modes.current_mode_id]
        target = others[0] if others else modes.current_mode_id
        ctx.at("MODES-03", "MODES-05", "MODES-02")
        ctx.driver.request("session/set_mode", {"sessionId": session_id, "modeId": target})
        ctx.passed("MODES-03", "MODES-05", "MODES-02")
    choice = _other_select_value(_options(setup))
    if choice is None:
        for clause in ("CONFIG-16", "CONFIG-19", "CONFIG-04"):
            ctx.skip(clause, "the session offers no select option with two values")
        return
    config_id, value = choice
    ctx.at("CONFIG-16", "CONFIG-19", "CONFIG-04")
    ctx.driver.request(
        "session/set_config_option",
        {"sessionId": session_id, "configId": config_id, "value": value},
    )
    ctx.passed("CONFIG-16", "CONFIG-19", "CONFIG-04")


def _no_boolean_options(ctx: ScenarioContext, *setups: Optional[s.NewSessionResponse]) -> None:
    booleans = [
        option.id
        for setup in setups
        for option in _options(setup)
        if isinstance(getattr(option, "kind", None), s.SessionConfigBoolean)
    ]
    # spec CONFIG-05: the driver does not advertise session.configOptions.boolean.
    ctx.check(
        "CONFIG-05",
        not booleans,
        f"session/new offered boolean options {booleans!r} to a client without support",
    )


def _options(setup: Optional[s.NewSessionResponse]) -> List[Any]:
    """The config options a session/new answer offered."""
    options = setup.config_options if setup is not None else None
    return options if isinstance(options, list) else []


def _other_select_value(options: List[Any]) -> Optional[tuple]:
    for option in options:
        kind = getattr(option, "kind", None)
        if not isinstance(kind, s.SessionConfigSelect):
            continue
        values: List[s.SessionConfigValueId] = []
        for item in kind.options:
            values.extend(o.value for o in item.options) if isinstance(
                item, s.SessionConfigSelectGroup
            ) else values.append(item.value)
        others = [v for v in values if v != kind.current_value]
        if others:
            return option.id, others[0]
    return None


# -- a client that advertises nothing --------------------------------------------------------------

#: A prompt that invites a file read, a command and a file write (``{path}``: a file of the
#: session's directory): with no client capability advertised, none may go through the client.
TOOLS_PROMPT = (
    "acpref check-agent: please read the file {path} and answer with its first line, then run "
    "the command `echo acpref` and append its output to that file."
)

#: What a client without capabilities must never be asked (file-system.mdx, terminals.mdx).
_GATES = (
    ("FS-01", "fs/read_text_file", "fs.readTextFile"),
    ("FS-02", "fs/write_text_file", "fs.writeTextFile"),
    ("TERM-01", "terminal/", "terminal"),
)


def _no_capabilities(ctx: ScenarioContext) -> None:
    """``initialize`` without any client capability, and a prompt that asks for files and a
    command: the agent uses its own tools or declines, never the client's methods."""
    path = os.path.join(ctx.cwd, "acpref-check-tools.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("acpref: the first line\n")
    try:
        ctx.driver.initialize(client_capabilities={})
        ctx.at()  # an error to session/new or to the prompt breaks none of these clauses
        session_id = ctx.new_session()
        try:
            prompt = (ctx.options.tools_prompt or TOOLS_PROMPT).replace("{path}", path)
            ctx.driver.prompt(session_id, prompt)
        except RpcError as exc:
            if exc.code == ErrorCode.AUTH_REQUIRED:
                raise
            # A refused turn asked the client for nothing: the gates held.
        round_trip(ctx)
    finally:
        os.remove(path)
    for clause, prefix, gate in _GATES:
        sent = [m for m, _ in ctx.driver.agent_requests if m.startswith(prefix)]
        # spec FS-01, FS-02, TERM-01: never a method whose capability was not advertised.
        ctx.check(clause, not sent, f"sent {', '.join(sent)} to a client without {gate}")


SCENARIOS = [
    Scenario(
        "handshake",
        _handshake,
        (
            "INIT-04",
            "INIT-05",
            "INIT-07",
            "INIT-19",
            "AUTH-01",
            "AUTH-05",
            "SCHEMA-12",
            "TRANSPORT-08",
            "RPC-01",
            "RPC-04",
        ),
        main="INIT-04",
    ),
    Scenario("version", _version, ("INIT-08",), main="INIT-08"),
    Scenario("auth", authentication, AUTH_CLAUSES, main="AUTH-09"),
    Scenario(
        "prompt",
        _prompt,
        (
            "SETUP-02",
            "CONFIG-05",
            "INIT-17",
            "PROMPT-06",
            "PROMPT-11",
            "PROMPT-17",
            "PROMPT-26",
            "CONTENT-02",
            "TRANSPORT-01",
            "EXT-02",
            "INIT-15",
            "CONTENT-09",
            "MODES-02",
            "MODES-03",
            "MODES-05",
            "CONFIG-04",
            "CONFIG-16",
            "CONFIG-19",
        ),
        main="INIT-17",
    ),
    Scenario("no-capabilities", _no_capabilities, ("FS-01", "FS-02", "TERM-01"), main="FS-01"),
    Scenario("cwd", cwd_scenario, ("SETUP-27", "SETUP-26"), main="SETUP-27", apart=True),
    Scenario(
        "cancel", cancel_scenario, ("PROMPT-23", "PROMPT-24", IGNORED, "CANCEL-05"), main="PROMPT-23"
    ),
    Scenario(
        "load",
        load,
        ("SETUP-05", "SETUP-06", "SETUP-07", "SETUP-08"),
        needs="loadSession",
        main="SETUP-05",
    ),
    Scenario(
        "load-restarted",
        load_restarted,
        ("SETUP-05", "SETUP-06", "SETUP-07", "SETUP-08"),
        needs="loadSession",
        main="SETUP-05",
    ),
    Scenario(
        "resume",
        resume,
        ("SETUP-12", "SETUP-13", "spec-gap:replay-after-resume"),
        needs="sessionCapabilities.resume",
        main="SETUP-12",
    ),
    Scenario(
        "list",
        list_sessions,
        ("LIST-02", "LIST-04", "LIST-05", "LIST-06", "LIST-09", "LIST-12", "RPC-07"),
        needs="sessionCapabilities.list",
        main="LIST-02",
    ),
    Scenario(
        "delete",
        delete,
        ("DELETE-02", "DELETE-03", "DELETE-04"),
        needs="sessionCapabilities.delete",
        main="DELETE-02",
    ),
    Scenario(
        "close",
        close,
        ("SETUP-16", "SETUP-17", "PROMPT-24", IGNORED),
        needs="sessionCapabilities.close",
        main="SETUP-17",
    ),
    Scenario(
        "system-prompt",
        system_prompt,
        ("SYSPROMPT-05", "SYSPROMPT-04"),
        needs="sessionCapabilities.systemPrompt",
        main="SYSPROMPT-05",
    ),
    Scenario("mcp", mcp, ("SETUP-30", "SETUP-31", "SETUP-36"), main="SETUP-30"),
    Scenario(
        "bad-input",
        bad_input,
        (
            "RPC-04",
            "RPC-10",
            "RPC-11",
            "spec-gap:malformed-json",
            "RPC-12",
            "RPC-13",
            "RPC-17",
            "EXT-02",
            "EXT-07",
            "EXT-08",
            "EXT-10",
            "OVERVIEW-09",
            "CANCEL-06",
            "SCHEMA-18",
            "SCHEMA-11",
            "RPC-19",
        ),
        main="RPC-10",
    ),
]
