"""Deliberately broken clients: each breaks one rule, and the oracle must name its clause.

Run one with ``python tests/broken/clients.py NAME TRANSCRIPT``: it talks to the well-behaved
agent through ``acpref proxy --record TRANSCRIPT`` (so a third party records the traffic), breaks
its rule, and ends. ``expect`` is the clause the oracle must report, blamed on the client.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List

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


def after_the_probe(
    c: RawClient, session_id: str, answer: Callable[[M], M]
) -> Callable[[M], None]:
    """The ``on_request`` of a client whose user clicks Stop while a permission dialog shows:
    it answers the agent's probe (sent after the permission request: the client has read that
    request, so it is pending), then sends session/cancel, then ``answer(request)``."""
    asked: List[M] = []

    def on_request(message: M) -> None:
        if message.get("method") == "session/request_permission":
            asked.append(message)
        elif message.get("method") == "_acpref/ping" and asked:
            c.send({"jsonrpc": "2.0", "id": message["id"],
                    "error": {"code": -32601, "message": "Method not found"}})  # fmt: skip
            c.send({"jsonrpc": "2.0", "method": "session/cancel",
                    "params": {"sessionId": session_id}})  # fmt: skip
            c.send({"jsonrpc": "2.0", "id": asked[0]["id"], **answer(asked[0])})

    return on_request


class SelectsAfterCancel(BrokenClient):
    """Cancels the turn while the permission request is pending (it had answered the agent's
    later probe, so it had read it), then answers it with an option."""

    expect = "PROMPT-21"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        outcome = {"outcome": "selected", "optionId": "allow"}
        selected = lambda _: {"result": {"outcome": outcome}}  # noqa: E731
        c.prompt(session_id, "tool ping", on_request=after_the_probe(c, session_id, selected))


class AnswersCrossedPermission(BrokenClient):
    """HARMLESS: its user clicks Stop as the tool call shows, before the client read the
    permission request the agent sent right after it (the line is in the client's pipe, so the
    proxy recorded it first, but unread); then it reads that request and answers it as the user
    chose. The request crossed the cancel: it was not pending for the client when it cancelled
    (spec-gap permission-crossing), so ``selected`` breaks no MUST."""

    expect = ""

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        cancelled: List[bool] = []

        def on_request(message: M) -> None:
            update = message.get("params", {}).get("update", {})
            if update.get("sessionUpdate") == "tool_call" and not cancelled:
                # Written before the next line (the permission request) is read: wait until
                # it has come (one read of the pipe, bounded by its arrival), leave it unread.
                assert c.proc.stdout is not None
                c.proc.stdout.peek(1)
                c.send({"jsonrpc": "2.0", "method": "session/cancel",
                        "params": {"sessionId": session_id}})  # fmt: skip
                cancelled.append(True)
            elif message.get("method") == "session/request_permission":
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
    """Puts an image in a prompt although the agent's promptCapabilities.image is false
    (PROMPT-03: "Clients MUST restrict types of content according to the Prompt Capabilities
    established during initialization.")."""

    expect = "PROMPT-03"

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
    """After session/cancel, answers the pending permission request (read: it had answered the
    agent's later probe) with an error."""

    expect = "PROMPT-21"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        refused = lambda _: {"error": {"code": -32800, "message": "cancelled"}}  # noqa: E731
        c.prompt(session_id, "tool ping", on_request=after_the_probe(c, session_id, refused))


# -- Proof-table peers (spec_notes/proof.md): one MUST sentence each, judged by validate ----------


class UnknownModeId(BrokenClient):
    """Asks session/set_mode for a mode the agent never advertised ("yolo"; it offers ask, code).

    MODES-04, schema ClientRequest: "The mode must be one of the modes advertised in
    `availableModes` during session creation or loading."."""

    expect = "MODES-04"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        c.call("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})


class ConfigValueNotOffered(BrokenClient):
    """Sets the select option "model" to "huge", which is not among its values (small, large).

    CONFIG-17: "For `select` options, this must be one of the values listed in the option's
    `options` array."."""

    expect = "CONFIG-17"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        params = {"sessionId": session_id, "configId": "model", "value": "huge"}
        c.call("session/set_config_option", params)


class NewSessionWithoutMcpServers(BrokenClient):
    """Opens a session without the required ``mcpServers`` (SETUP-01: required: cwd,
    mcpServers)."""

    expect = "SETUP-01"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.call("session/new", {"cwd": "/tmp"})


class PromptWithoutPrompt(BrokenClient):
    """Sends session/prompt without its ``prompt`` (PROMPT-02: required: sessionId, prompt)."""

    expect = "PROMPT-02"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        c.call("session/prompt", {"sessionId": session_id})


class StdioServerWithoutEnv(BrokenClient):
    """Lists a stdio MCP server without its ``env`` (SETUP-32: required: name, command, args,
    env)."""

    expect = "SETUP-32"

    def act(self, c: RawClient) -> None:
        c.initialize()
        server = {"name": "tools", "command": "/bin/true", "args": []}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [server]})


class RelativeAdditionalDirectory(BrokenClient):
    """Opens a session with a relative ``additionalDirectories`` entry (the agent advertises
    them). SETUP-20: "each `additionalDirectories` entry MUST be an absolute path"."""

    expect = "SETUP-20"

    def act(self, c: RawClient) -> None:
        c.initialize()
        params = {"cwd": "/tmp", "mcpServers": [], "additionalDirectories": ["src"]}
        c.call("session/new", params)


class ResourceLinkWithoutName(BrokenClient):
    """Prompts with a resource_link block that has no ``name`` (CONTENT-08: required: name,
    uri)."""

    expect = "CONTENT-08"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        block = {"type": "resource_link", "uri": "file:///tmp/a.txt"}
        c.call("session/prompt", {"sessionId": session_id, "prompt": [block]})


class ObjectRequestId(BrokenClient):
    """Sends a request whose id is a JSON object (RPC-02: "MUST contain a String, Number, or
    NULL value if included")."""

    expect = "RPC-02"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.send({"jsonrpc": "2.0", "id": {"n": 1}, "method": "session/new",
                "params": {"cwd": "/tmp", "mcpServers": []}})
        c.read()
        c.new_session()


class AuthenticatesUnadvertised(BrokenClient):
    """Calls authenticate with a method the agent did not advertise (it advertises none).

    AUTH-07, schema AuthenticateRequest: "Must be one of the methods advertised in the
    initialize response."."""

    expect = "AUTH-07"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.call("authenticate", {"methodId": "magic-token"})


def _agent(name: str, module: str = "check_agents.py") -> List[str]:
    """The argv of a raw agent of tests/broken (or tests/peers) for a client that needs one."""
    folder = os.path.dirname(os.path.abspath(__file__))
    if module == "unusual_agents.py":
        folder = os.path.join(os.path.dirname(folder), "peers")
    return [sys.executable, os.path.join(folder, module), name]


class _OtherAgent(BrokenClient):
    """A broken client of another agent than the well-behaved one (``agent``: its argv)."""

    agent: List[str] = []

    def __init__(self, transcript: str) -> None:
        self.c = RawClient(transcript, self.agent)


class InitializeWithoutCapabilities(BrokenClient):
    """Sends initialize without ``clientCapabilities`` (INIT-02: "Clients MUST initialize the
    connection by calling the `initialize` method with: ... The capabilities supported")."""

    expect = "INIT-02"

    def act(self, c: RawClient) -> None:
        c.call("initialize", {"protocolVersion": 1, "clientInfo": {"name": "raw", "version": "1"}})
        c.new_session()


class ListWithRelativeCwd(BrokenClient):
    """Filters session/list by a relative cwd (LIST-03: "All file paths in the protocol MUST be
    absolute.")."""

    expect = "LIST-03"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.new_session()
        c.call("session/list", {"cwd": "tmp"})


class ListWithInventedCursor(BrokenClient):
    """Pages session/list with a cursor no answer gave it (LIST-11: "Clients MUST treat cursors
    as opaque tokens — do not parse, modify, or persist them")."""

    expect = "LIST-11"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.new_session()
        c.call("session/list", {"cursor": "page-2"})


class ClosesUnknownSession(BrokenClient):
    """Closes a session it never opened (SETUP-15: "To close an active session, Clients MUST call
    the `session/close` method with the session ID")."""

    expect = "SETUP-15"

    def act(self, c: RawClient) -> None:
        c.initialize()
        c.new_session()
        c.call("session/close", {"sessionId": "sess-never-opened"})


class SystemPromptUnadvertised(BrokenClient):
    """Sends a system prompt to an agent that does not advertise
    ``sessionCapabilities.systemPrompt`` (SYSPROMPT-02: "Clients MUST only send this when the
    Agent advertises `sessionCapabilities.systemPrompt`.")."""

    expect = "SYSPROMPT-02"

    def act(self, c: RawClient) -> None:
        c.initialize()
        prompt = {"mode": "append", "content": [{"type": "text", "text": "Be brief."}]}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [], "systemPrompt": prompt})


class AdditionalDirectoriesUnadvertised(_OtherAgent):
    """Sends ``additionalDirectories`` to an agent that does not advertise them (SETUP-24:
    "Clients MUST only send `additionalDirectories` when the Agent advertises
    `sessionCapabilities.additionalDirectories`.")."""

    expect = "SETUP-24"
    agent = _agent("RawAgent")

    def act(self, c: RawClient) -> None:
        c.initialize()
        params = {"cwd": "/tmp", "mcpServers": [], "additionalDirectories": ["/srv"]}
        c.call("session/new", params)


class LoadWithoutLoadSession(_OtherAgent):
    """Calls session/load on an agent that advertises no ``loadSession`` (SETUP-03: "Clients
    MUST NOT attempt to call `session/load`")."""

    expect = "SETUP-03"
    agent = _agent("NoCapabilities", "unusual_agents.py")

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        c.call("session/load", {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []})


class OverrideWithoutCapability(_OtherAgent):
    """Sends an ``override`` system prompt to an agent that advertises append only
    (SYSPROMPT-03: "MUST only use it when the Agent advertises
    `sessionCapabilities.systemPrompt.mode.override`")."""

    expect = "SYSPROMPT-03"
    agent = _agent("SystemPromptAgent")

    def act(self, c: RawClient) -> None:
        c.initialize()
        prompt = {"mode": "override", "content": [{"type": "text", "text": "Be brief."}]}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [], "systemPrompt": prompt})


class EmptySystemPrompt(_OtherAgent):
    """Sends a system prompt whose content is an empty array (SYSPROMPT-09: "Clients MUST NOT
    send an empty array.")."""

    expect = "SYSPROMPT-09"
    agent = _agent("SystemPromptAgent")

    def act(self, c: RawClient) -> None:
        c.initialize()
        prompt = {"mode": "append", "content": []}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [], "systemPrompt": prompt})


class ImageSystemPrompt(_OtherAgent):
    """Sends a system prompt with an image block (SYSPROMPT-07: "Clients MUST NOT send other
    content block types until a future capability allows them")."""

    expect = "SYSPROMPT-07"
    agent = _agent("SystemPromptAgent")

    def act(self, c: RawClient) -> None:
        c.initialize()
        image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
        prompt = {"mode": "append", "content": [image]}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [], "systemPrompt": prompt})


class HttpServerWithoutHeaders(BrokenClient):
    """Lists an HTTP MCP server without its ``headers`` (the agent advertises HTTP; SETUP-33:
    required: name, url, headers)."""

    expect = "SETUP-33"

    def act(self, c: RawClient) -> None:
        c.initialize()
        server = {"type": "http", "name": "tools", "url": "http://127.0.0.1:9/mcp"}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [server]})


class _SubagentsClient(_OtherAgent):
    """A client advertising subagents to the raw agent that delegates each turn to a child
    session ``sess-1-child`` (``capability_agents.SubagentAgent``: it announces the child, with
    ``capabilities: {"cancel": {}}``, and refuses any request naming the child)."""

    agent = _agent("SubagentAgent", "capability_agents.py")
    child = "sess-1-child"

    def delegated(self, c: RawClient, text: str = "hello", on_request: Any = None) -> str:
        c.initialize({"subagents": {}})
        session_id = c.new_session()
        c.prompt(session_id, text, on_request=on_request)
        return session_id


class LoadsChildSession(_SubagentsClient):
    """Calls session/load on a child to receive its events (SUBAGENT-17: "Clients MUST NOT call
    `session/load` or `session/resume` on a child to begin receiving its events.")."""

    expect = "SUBAGENT-17"

    def act(self, c: RawClient) -> None:
        self.delegated(c)
        c.call("session/load", {"sessionId": self.child, "cwd": "/tmp", "mcpServers": []})


class PromptsChildSession(_SubagentsClient):
    """Prompts a child session, a mutation it did not advertise (SUBAGENT-18: "Clients MUST NOT
    invoke an unadvertised mutation, including a future method, merely because the Agent
    supports it for ordinary sessions.")."""

    expect = "SUBAGENT-18"

    def act(self, c: RawClient) -> None:
        self.delegated(c)
        c.prompt(self.child, "and now this")


class AllowsAfterCancellingChild(_SubagentsClient):
    """Cancels the child while its permission request waits, then allows it (SUBAGENT-44: "it
    MUST respond to pending `session/request_permission` requests for the affected work with the
    `cancelled` outcome")."""

    expect = "SUBAGENT-44"
    outcome: M = {"outcome": "selected", "optionId": "allow"}

    def act(self, c: RawClient) -> None:
        # It answers the agent's probe first: it had read the child's request when it cancelled.
        answer = lambda _: {"result": {"outcome": self.outcome}}  # noqa: E731
        self.delegated(c, "ask ping", after_the_probe(c, self.child, answer))


class CancelsChildCleanly(AllowsAfterCancellingChild):
    """The same conversation, answered ``cancelled`` after the cancel: a correct client (in
    ``CONFORMING``; its run has no findings)."""

    expect = ""
    outcome = {"outcome": "cancelled"}


#: Correct clients for the baselines of tests/test_oracle_broken.py.
CONFORMING = {
    "CancelsChildCleanly": CancelsChildCleanly,
    "AnswersCrossedPermission": AnswersCrossedPermission,
}
# -- Proof-table peers of opt-in features: the agent offers the feature, the client breaks its
# sentence (tests/broken/capable_agent.py), so the defect breaks nothing else.


class _CapableClient(_OtherAgent):
    """A client of ``capable_agent.CapableAgent`` (image and embedded prompts, SSE servers; a
    terminal login and a boolean option for a client that advertises them)."""

    agent = _agent("CapableAgent", "capable_agent.py")


#: The client capabilities that open the capable agent's terminal login and boolean option.
_TERMINAL_AUTH = {"auth": {"terminal": True}}
_BOOLEAN_CONFIG = {"session": {"configOptions": {"boolean": {}}}}


class AuthenticatesTerminalMethod(_CapableClient):
    """Advertises ``auth.terminal``, is offered the terminal login ``tui``, and passes it to
    ``authenticate`` (AUTH-08: "the Client MUST NOT send an `authenticate` request for a
    terminal method")."""

    expect = "AUTH-08"

    def act(self, c: RawClient) -> None:
        c.initialize(_TERMINAL_AUTH)
        c.call("authenticate", {"methodId": "tui"})


class BooleanOptionAsString(_CapableClient):
    """Sets the boolean option ``fast`` to the string "true", as a value id (no ``type``: a
    shape the schema allows, for select options). CONFIG-18: "For `boolean` options, this must
    be a boolean."."""

    expect = "CONFIG-18"

    def act(self, c: RawClient) -> None:
        c.initialize(_BOOLEAN_CONFIG)
        session_id = c.new_session()
        params = {"sessionId": session_id, "configId": "fast", "value": "true"}
        c.call("session/set_config_option", params)


class BooleanValueUnadvertised(_CapableClient):
    """Advertises no ``session.configOptions.boolean``, yet sends a ``type: "boolean"`` value
    (the agent, rightly, offered it no boolean option). INIT-13: "Clients and Agents MUST treat
    all capabilities omitted in the `initialize` request as UNSUPPORTED."."""

    expect = "INIT-13"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        params = {"sessionId": session_id, "configId": "fast", "type": "boolean", "value": True}
        c.call("session/set_config_option", params)


class ImageWithoutMimeType(_CapableClient):
    """Prompts an agent that takes images with an image block without ``mimeType``
    (CONTENT-06: required: data, mimeType)."""

    expect = "CONTENT-06"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        image = {"type": "image", "data": "iVBORw0KGgo="}
        c.call("session/prompt", {"sessionId": session_id, "prompt": [image]})


class EmbeddedTextWithoutUri(_CapableClient):
    """Prompts an agent that takes embedded context with a text resource without ``uri``
    (CONTENT-07: required: text, uri)."""

    expect = "CONTENT-07"

    def act(self, c: RawClient) -> None:
        c.initialize()
        session_id = c.new_session()
        block = {"type": "resource", "resource": {"text": "notes", "mimeType": "text/plain"}}
        c.call("session/prompt", {"sessionId": session_id, "prompt": [block]})


class SseServerWithoutHeaders(_CapableClient):
    """Lists an SSE MCP server without its ``headers`` for an agent that advertises SSE
    (SETUP-34: required: name, url, headers)."""

    expect = "SETUP-34"

    def act(self, c: RawClient) -> None:
        c.initialize()
        server = {"type": "sse", "name": "tools", "url": "https://example.com/mcp"}
        c.call("session/new", {"cwd": "/tmp", "mcpServers": [server]})


class UsesEveryCapability(_CapableClient):
    """The conforming baseline of the capable agent: every feature it offers, used correctly
    (no ``expect``: not a broken client; ``test_clean_capable_agent_has_no_findings``)."""

    def act(self, c: RawClient) -> None:
        c.initialize({**_TERMINAL_AUTH, **_BOOLEAN_CONFIG})
        sse = {"type": "sse", "name": "tools", "url": "https://example.com/mcp", "headers": []}
        session_id = c.call("session/new", {"cwd": "/tmp", "mcpServers": [sse]})["result"][
            "sessionId"
        ]
        params = {"sessionId": session_id, "configId": "fast", "type": "boolean", "value": True}
        c.call("session/set_config_option", params)
        image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        text = {"uri": "file:///tmp/notes.txt", "text": "notes", "mimeType": "text/plain"}
        prompt = [image, {"type": "resource", "resource": text}]
        c.call("session/prompt", {"sessionId": session_id, "prompt": prompt})


CLEAN = {"UsesEveryCapability": UsesEveryCapability}


BROKEN = {
    name: cls
    for name, cls in globals().items()
    if isinstance(cls, type) and issubclass(cls, BrokenClient) and cls.expect
}

if __name__ == "__main__":
    {**BROKEN, **CONFORMING, **CLEAN}[sys.argv[1]](sys.argv[2]).run()
