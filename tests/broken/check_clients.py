"""Clients for ``check-client``'s own tests: a conforming client, then bent one way each.

``Conforming`` is acpref's ``AgentDriver`` (a conforming client over real pipes) launching
``acpref check-client --serve REPORT.json`` as its agent and playing its user: it sends the two
prompts of the script, cancels while the second step's permission request is open (answering it
``cancelled``, PROMPT-21), and reopens the session (``session/load``). Each step is a method, so
that a defect overrides exactly one: ``start`` (initialize and session/new), ``bend`` (applied
before the first prompt), ``prompt``, ``answer_permission``, ``cancel``, ``load``.

Each class of ``DEFECTS`` breaks one sentence of the spec with a MUST or MUST NOT keyword on an
otherwise conforming client; ``clause`` is the row check-client must FAIL at that level, ``also``
the other rows the same act fails (named in its docstring), ``evidence`` a piece of the row's
evidence. ``GAP_DEFECTS`` break a clause that no keyworded sentence states (level ``spec-gap``):
check-client reports them without failing the run, unless ``strict_gaps``.

Wire bends reach below the driver's recorder (``driver.stream._inner``), so the check sees the
bent bytes while the driver's own transcript keeps what it meant to send.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import attrs

from acpref import schema as s
from acpref.errors import RpcError
from acpref.testing import DEFAULT_CLIENT_CAPABILITIES, AgentDriver

#: What the files of check-client's crossed reads hold (the names of the files and the lines).
CROSSED = "acpref check: crossed read "
CROSSED_PATH = ".acpref-check-crossed-"

#: A message as it goes on the wire: a dict, or raw bytes (a line the bend writes as it is).
Wire = Any


#: Seconds a user's Stop waits for the client to have read check-client's probe (it comes at once).
PROBE_WAIT = 30.0


class Conforming:
    """A conforming client of check-client: the user's two prompts, a cancel, a load."""

    clause: Optional[str] = None
    also: Tuple[str, ...] = ()
    evidence = ""
    #: The client capabilities advertised (None: the driver's files and terminals).
    caps: Any = None
    #: More options of ``check-client --serve`` (``--timeout``, ``--newer-spec``...).
    serve_args: Tuple[str, ...] = ()

    def __init__(
        self,
        bend: Optional[Callable[[AgentDriver, str], None]] = None,
        *,
        caps: Any = None,
        load: bool = True,
        cancel: bool = True,
    ) -> None:
        self._bend = bend
        if caps is not None:
            self.caps = caps
        self.loads = load
        self.user_cancels = cancel

    def run(self, report_path: str, cwd: str) -> None:
        """Launch ``acpref check-client --serve report_path`` and go through its script."""
        argv = [sys.executable, "-m", "acpref", "check-client", "--serve", report_path]
        driver = AgentDriver.spawn([*argv, *self.serve_args], timeout=30)
        self.driver = driver
        try:
            session = self.start(driver, cwd)
            driver.permission = lambda request: self.answer_permission(driver, session, request)
            self.bend(driver, session)
            for text in ("step one", "step two"):
                try:
                    self.prompt(driver, session, text)
                except RpcError:
                    pass  # the report says what went wrong in the turn
            if self.loads:
                try:
                    self.load(driver, session, cwd)
                except RpcError:
                    pass
        finally:
            driver.close()

    def start(self, driver: AgentDriver, cwd: str) -> str:
        driver.initialize(client_capabilities=self.caps)
        return driver.new_session(cwd)

    def bend(self, driver: AgentDriver, session: str) -> None:
        if self._bend is not None:
            self._bend(driver, session)

    def prompt(self, driver: AgentDriver, session: str, text: str) -> Any:
        return driver.prompt(session, text)

    def answer_permission(
        self, driver: AgentDriver, session: str, request: s.RequestPermissionRequest
    ) -> Any:
        if request.tool_call.tool_call_id == "check-cancel" and self.user_cancels:
            self.clicks_stop(driver, session)  # spec PROMPT-21: cancel, then answer "cancelled"
            return None
        return "allow"

    def clicks_stop(self, driver: AgentDriver, session: str) -> None:
        """The user clicks Stop once the dialog shows: by then the client has read (and
        answered) what the agent sent after the request, check-client's probe, so the request
        was pending at the cancel (spec-gap permission-crossing otherwise)."""
        driver.sink.wait_read_all(PROBE_WAIT)
        self.cancel(driver, session)

    def cancel(self, driver: AgentDriver, session: str) -> None:
        driver.cancel(session)

    def load(self, driver: AgentDriver, session: str, cwd: str) -> None:
        driver.request("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})


# -- Bending what goes on the wire -----------------------------------------------------------------


#: A bend of what goes on the wire: a message in, None (unchanged) or what to write instead.
Change = Callable[[Dict[str, Any]], Optional[List[Wire]]]


def on_the_wire(driver: AgentDriver, change: Change) -> None:
    """Pass every message the driver writes through ``change``: None keeps it as it is, a list
    replaces it (dicts written as JSON lines, bytes as they are)."""
    inner = driver.stream._inner  # type: ignore[attr-defined]
    write = inner.write

    def bent(data: bytes) -> None:
        out: List[bytes] = []
        for line in data.splitlines(keepends=True):
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            changed = change(message) if isinstance(message, dict) else None
            if changed is None:
                out.append(line)
                continue
            for m in changed:
                out.append(m if isinstance(m, bytes) else json.dumps(m).encode("utf-8") + b"\n")
        if out:
            write(b"".join(out))

    inner.write = bent


def _is_response(message: Dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def _answer_as_a_request(driver: AgentDriver, handles: Callable[..., None]) -> Callable[..., None]:
    """A handler that answers a notification with -32601 under id null, then handles it."""

    def answering(params: Any, *rest: Any) -> None:
        error = {"code": -32601, "message": "Method not found"}
        driver.send_raw({"jsonrpc": "2.0", "id": None, "error": error})
        handles(params, *rest)

    return answering


# -- JSON-RPC: ids, responses, the envelope --------------------------------------------------------


class RetypesIds(Conforming):
    """Answers the request whose id is the string ``"42"`` under the number 42 (and ``"0"``
    under 0): a client that keeps ids as numbers when they look like numbers.

    RPC-04, schema.json ``RequestId``: "The Server MUST reply with the same value in the Response
    object if included." The oracle sees an answer to no request in flight (RPC-04 too), and
    the request ``"42"`` never answered under its own id: RPC-06 ("the Server MUST reply with a
    Response"), the same act seen from the request."""

    clause = "RPC-04"
    also = ("RPC-06",)
    evidence = "'42' answered as 42"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def retyped(m: Dict[str, Any]) -> Optional[List[Wire]]:
            rid = m.get("id")
            if _is_response(m) and isinstance(rid, str) and rid.isdigit():
                return [{**m, "id": int(rid)}]
            return None

        on_the_wire(driver, retyped)


def _crossed_answer(m: Dict[str, Any]) -> bool:
    """True when ``m`` answers one of check-client's crossed reads with its file's content."""
    result = m.get("result") if _is_response(m) else None
    content = result.get("content") if isinstance(result, dict) else None
    return isinstance(content, str) and CROSSED in content


class SwapsCrossedIds(Conforming):
    """Answers two reads open at once in the order they came, each under the other's id: a
    client that hands each finished answer to the oldest request still open (arrival order)
    rather than to its own, once the two finished the other way round.

    RPC-07, schema.json ``RequestId``: "The Server MUST reply with the same value in the Response
    object if included. This member is used to correlate the context between the two objects."
    """

    clause = "RPC-07"
    evidence = CROSSED

    def bend(self, driver: AgentDriver, session: str) -> None:
        held: List[Dict[str, Any]] = []

        def swapping(m: Dict[str, Any]) -> Optional[List[Wire]]:
            if not _crossed_answer(m):
                return None
            held.append(m)
            if len(held) < 2:
                return []
            first, second = held
            first["id"], second["id"] = second["id"], first["id"]
            return [first, second]

        on_the_wire(driver, swapping)


class FirstContentTwice(Conforming):
    """Answers the second of two reads open at once with the first one's content: a client
    that keeps the last file it read in one slot for the method, not one for each request.

    RPC-07, as ``SwapsCrossedIds``: the answer under the second read's id is the first read's."""

    clause = "RPC-07"
    evidence = CROSSED

    def bend(self, driver: AgentDriver, session: str) -> None:
        serve = driver._on_read
        first: List[str] = []

        def on_read(params: Any, ctx: Any) -> Any:
            answer = serve(params, ctx)
            if CROSSED_PATH not in params.path:
                return answer
            if not first:
                first.append(answer.content)
            return s.ReadTextFileResponse(content=first[0])

        driver.connection.set_handler("fs/read_text_file", on_read)


class AnswersPermissionTwice(Conforming):
    """Writes each answer to a permission request twice: a dialog that answers when the user
    clicks and again when it closes.

    RPC-06, JSON-RPC 2.0 section 5: "When a rpc call is made, the Server MUST reply with a
    Response, except for in the case of Notifications." (a Response: one; the oracle names the
    second "answered more than once")."""

    clause = "RPC-06"
    evidence = "answered more than once"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def twice(m: Dict[str, Any]) -> Optional[List[Wire]]:
            result = m.get("result") if _is_response(m) else None
            return [m, m] if isinstance(result, dict) and "outcome" in result else None

        on_the_wire(driver, twice)


class ResponsesWithoutJsonrpc(Conforming):
    """Leaves ``"jsonrpc": "2.0"`` out of its responses (its requests and notifications keep it):
    a client that builds answers by hand.

    RPC-01, JSON-RPC 2.0 section 5: "jsonrpc: A String specifying the version of the JSON-RPC
    protocol. MUST be exactly "2.0"."."""

    clause = "RPC-01"
    evidence = "jsonrpc is absent"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def bare(m: Dict[str, Any]) -> Optional[List[Wire]]:
            if not _is_response(m):
                return None
            return [{k: v for k, v in m.items() if k != "jsonrpc"}]

        on_the_wire(driver, bare)


class ResultAndError(Conforming):
    """Sends ``"result": null`` beside the ``error`` of every error it answers: a client whose
    response type always serializes both members.

    RPC-05, JSON-RPC 2.0 section 5: "Either the result member or error member MUST be included,
    but both members MUST NOT be included." The grader cannot use such an answer: what it was
    checking with it (RPC-17, EXT-08, neither at MUST) fails or is skipped."""

    clause = "RPC-05"
    evidence = "both result and error"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def both(m: Dict[str, Any]) -> Optional[List[Wire]]:
            return [{**m, "result": None}] if _is_response(m) and "error" in m else None

        on_the_wire(driver, both)


class ErrorWithoutMessage(Conforming):
    """Answers errors with a ``code`` and ``data`` but no ``message``: a client that maps its
    exceptions to codes and forgets the text.

    RPC-09, schema.json ``Error``: "required: code, message" (JSON-RPC 2.0 section 5.1: the
    error object has a code and a message)."""

    clause = "RPC-09"
    evidence = "malformed error object"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def no_message(m: Dict[str, Any]) -> Optional[List[Wire]]:
            error = m.get("error") if _is_response(m) else None
            if not isinstance(error, dict):
                return None
            return [{**m, "error": {k: v for k, v in error.items() if k != "message"}}]

        on_the_wire(driver, no_message)


class ParseErrorWithoutNullId(Conforming):
    """Answers a line it could not parse with -32700 but no ``id`` member at all, where JSON-RPC
    wants ``"id": null``.

    RPC-10, JSON-RPC 2.0 section 5: "If there was an error in detecting the id in the Request
    object (e.g. Parse error/Invalid Request), it MUST be Null." The oracle also reports the
    response without an id under RPC-04 (decisions.md response-without-id: "The Server MUST reply
    with the same value in the Response object if included")."""

    clause = "RPC-10"
    also = ("RPC-04",)
    evidence = "not under id null"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def no_id(m: Dict[str, Any]) -> Optional[List[Wire]]:
            if _is_response(m) and "id" in m and m["id"] is None:
                return [{k: v for k, v in m.items() if k != "id"}]
            return None

        on_the_wire(driver, no_id)


class AnswersNotifications(Conforming):
    """Answers a notification it does not know (``_acpref/notice``) with -32601 under id null:
    a client that treats every message with a method as a request.

    OVERVIEW-09, JSON-RPC 2.0 section 4.1: "The Server MUST NOT reply to a Notification,
    including those that are within a batch request." EXT-10 ("implementations SHOULD ignore
    unrecognized notifications") fails too, at SHOULD."""

    clause = "OVERVIEW-09"
    evidence = "_acpref/notice notification was answered"

    def bend(self, driver: AgentDriver, session: str) -> None:
        driver.connection.set_handler(
            "_acpref/notice", _answer_as_a_request(driver, lambda params, ctx: None)
        )


class AnswersCancelRequests(Conforming):
    """Answers ``$/cancel_request`` (a notification) with -32601 under id null, then honours it.

    CANCEL-06, JSON-RPC 2.0 section 4.1: "The Server MUST NOT reply to a Notification, including
    those that are within a batch request." ($/cancel_request is one: cancellation.mdx). The
    oracle reads the answer as one to a notification: OVERVIEW-09, the same sentence."""

    clause = "CANCEL-06"
    also = ("OVERVIEW-09",)
    evidence = "$/cancel_request was answered"

    def bend(self, driver: AgentDriver, session: str) -> None:
        connection = driver.connection
        connection._on_cancel_request = _answer_as_a_request(  # type: ignore[method-assign]
            driver, connection._on_cancel_request
        )


class CancelAsRequest(Conforming):
    """Sends ``session/cancel`` with an id, as a request: a notification with an id is a request,
    and session/cancel is defined as a notification. The agent refuses it, so the turn goes on and
    the permission answered ``cancelled`` afterwards is no cancel (PROMPT-21 is SKIPPED).

    OVERVIEW-01, transports.mdx: "The client MUST NOT write anything to the agent's `stdin` that
    is not a valid ACP message.\""""

    clause = "OVERVIEW-01"
    evidence = "session/cancel is a notification"

    def cancel(self, driver: AgentDriver, session: str) -> None:
        driver.connection.request_async("session/cancel", {"sessionId": session})


class SessionBeforeInitialize(Conforming):
    """Sends ``session/new`` first and ``initialize`` only when the agent refuses it: a client
    that initializes lazily. Then it goes on as a conforming client.

    INIT-01, session-setup.mdx: "Before creating a session, Clients MUST first complete the
    initialization phase to establish protocol compatibility and capabilities."."""

    clause = "INIT-01"
    evidence = "session/new sent before initialize"

    def start(self, driver: AgentDriver, cwd: str) -> str:
        try:
            driver.request("session/new", {"cwd": cwd, "mcpServers": []})
        except RpcError:
            pass  # refused -32600: initialize first, then
        return super().start(driver, cwd)


class PromptsAnUnknownSession(Conforming):
    """Sends its first prompt to a session id it remembers from another connection, without
    ``session/load``; refused -32002, it opens a new session and goes on there.

    PROMPT-01, prompt-turn.mdx: "Before sending prompts, Clients MUST first complete the
    initialization phase and session setup."."""

    clause = "PROMPT-01"
    evidence = "unknown session"

    def prompt(self, driver: AgentDriver, session: str, text: str) -> Any:
        if text == "step one":
            try:
                driver.prompt("sess_from_yesterday", text)
            except RpcError:
                pass
        return super().prompt(driver, session, text)


class RelativeCwd(Conforming):
    """Sends ``session/new`` with ``cwd`` as the user typed it, relative to the client's own
    directory; refused, it sends the absolute path.

    SETUP-25, session-setup.mdx: "The `cwd` (current working directory) parameter establishes
    the primary file system context for the session. This directory: - MUST be an absolute
    path"."""

    clause = "SETUP-25"
    evidence = "is not an absolute path"

    def start(self, driver: AgentDriver, cwd: str) -> str:
        driver.initialize(client_capabilities=self.caps)
        try:
            return driver.new_session(os.path.relpath(cwd))
        except RpcError:
            return driver.new_session(cwd)


class LoadWithoutMcpServers(Conforming):
    """Reopens the session with ``session/load`` but leaves ``mcpServers`` out when it has none.

    SETUP-04, schema.json ``LoadSessionRequest``: "required: sessionId, cwd, mcpServers". The
    oracle's strict decoding of the params and the session-setup rule see the same missing key:
    one finding, under SETUP-04, naming the path (spec_notes/oracle.md, "Which clause a shape
    error is filed under")."""

    clause = "SETUP-04"
    evidence = "params.mcpServers: required key is missing"

    def load(self, driver: AgentDriver, session: str, cwd: str) -> None:
        driver.request("session/load", {"sessionId": session, "cwd": cwd})


class ImageWithoutCapability(Conforming):
    """Attaches an image to the first prompt although the agent's ``promptCapabilities.image``
    is false; refused, the user sends the text alone.

    PROMPT-03, prompt-turn.mdx: "Clients MUST restrict types of content according to the
    Prompt Capabilities established during initialization." (CONTENT-04 is the same rule as the
    content page states it, without a keyword: the oracle files it under PROMPT-03)."""

    clause = "PROMPT-03"
    evidence = "did not advertise promptCapabilities.image"

    def prompt(self, driver: AgentDriver, session: str, text: str) -> Any:
        if text == "step one":
            image = s.ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
            try:
                driver.prompt(session, text, image)
            except RpcError:
                pass
        return super().prompt(driver, session, text)


# -- The wire: bytes and lines ---------------------------------------------------------------------


class Latin1Prompt(Conforming):
    """Writes the user's first prompt (``café``) in Latin-1, as a client that encodes with the
    platform's code page does; the agent cannot read the line (-32700), so the user sends it
    again, and the client, now in UTF-8, goes on.

    TRANSPORT-01, transports.mdx: "JSON-RPC messages MUST be UTF-8 encoded."."""

    clause = "TRANSPORT-01"
    evidence = "not UTF-8"

    def prompt(self, driver: AgentDriver, session: str, text: str) -> Any:
        if text == "step one":
            request = {
                "jsonrpc": "2.0",
                "id": "latin-1",
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "caf\u00e9"}]},
            }
            since = driver.sink.received_count
            driver.send_raw((json.dumps(request, ensure_ascii=False) + "\n").encode("latin-1"))
            driver.wait_response(None, since=since)  # spec RPC-10: -32700 under id null
        return super().prompt(driver, session, text)


class LogLineOnStdin(Conforming):
    """Writes a log line to the agent's stdin once connected: a client whose logger shares the
    pipe.

    TRANSPORT-09, transports.mdx: "The client MUST NOT write anything to the agent's `stdin` that
    is not a valid ACP message."."""

    clause = "TRANSPORT-09"
    evidence = "not an ACP message on the agent's stdin"

    def bend(self, driver: AgentDriver, session: str) -> None:
        since = driver.sink.received_count
        driver.send_raw(b"[client] session ready, sending the first prompt\n")
        driver.wait_response(None, since=since)  # the agent's -32700: it read the line


class PrettyPrintedCancel(Conforming):
    """Writes ``session/cancel`` pretty-printed over several lines: a client that indents the
    notifications it logs and sends the same text. The agent cannot read it, so no cancel
    arrives (PROMPT-21 is SKIPPED: the permission is answered ``cancelled`` without one).

    TRANSPORT-05, transports.mdx: "Messages are delimited by newlines (`\\n`), and MUST NOT
    contain embedded newlines."."""

    clause = "TRANSPORT-05"
    evidence = "cut by a raw newline"

    def cancel(self, driver: AgentDriver, session: str) -> None:
        notice = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
        driver.send_raw(json.dumps(notice, indent=2) + "\n")


# -- Permissions and cancellation -----------------------------------------------------------------


class SelectsAfterCancel(Conforming):
    """Cancels the turn while its permission request is open, then answers that request with
    the option the user had clicked, not ``cancelled``.

    PROMPT-21, prompt-turn.mdx: "The Client MUST respond to all pending
    `session/request_permission` requests with the `cancelled` outcome."."""

    clause = "PROMPT-21"
    evidence = "after session/cancel"

    def answer_permission(
        self, driver: AgentDriver, session: str, request: s.RequestPermissionRequest
    ) -> Any:
        if request.tool_call.tool_call_id == "check-cancel":
            self.clicks_stop(driver, session)
        return "allow"  # even after the cancel


class FlatPermissionOutcome(Conforming):
    """Answers a permission it grants with ``{"optionId": ...}`` at the top of the result, not
    inside ``outcome``: a client that flattened the tagged outcome. Its ``cancelled`` answers
    keep the right shape.

    SCHEMA-04, schema.json ``RequestPermissionResponse``: "required: outcome". The grader cannot
    use the answer: TOOL-08 (spec-gap) fails with it."""

    clause = "SCHEMA-04"
    evidence = "outcome"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def flat(m: Dict[str, Any]) -> Optional[List[Wire]]:
            result = m.get("result") if _is_response(m) else None
            outcome = result.get("outcome") if isinstance(result, dict) else None
            if isinstance(outcome, dict) and "optionId" in outcome:
                return [{**m, "result": {"optionId": outcome["optionId"]}}]
            return None

        on_the_wire(driver, flat)


class UndefinedPermissionOutcome(Conforming):
    """Answers a permission it grants with the outcome ``"approved"`` (its ``optionId`` kept),
    which RequestPermissionOutcome does not define (``cancelled`` or ``selected``): a client
    built on a spec of its own. Its ``cancelled`` answers keep the right shape.

    OVERVIEW-01, transports.mdx: "The client MUST NOT write anything to the agent's `stdin` that
    is not a valid ACP message" (the set is a definition of schema.json: decisions.md
    undefined-value). The grader cannot use the answer: TOOL-08 (spec-gap) fails with it."""

    clause = "OVERVIEW-01"
    evidence = "'approved'"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def approved(m: Dict[str, Any]) -> Optional[List[Wire]]:
            result = m.get("result") if _is_response(m) else None
            outcome = result.get("outcome") if isinstance(result, dict) else None
            if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
                return [{**m, "result": {**result, "outcome": {**outcome, "outcome": "approved"}}}]
            return None

        on_the_wire(driver, approved)


def _flag_only(connection: Any, params: Any) -> None:
    ctx = connection._inbound.get(params.get("requestId"))
    if ctx is not None:
        ctx.cancelled.set()


def honours_cancel_late(driver: AgentDriver, answer: Callable[[Any], Any]) -> None:
    """A client whose $/cancel_request only flags the request: its read handler, which waits
    for the flag on the second read of the check's cancelled file (the first is the plain read
    before it), answers with ``answer(params)``."""
    connection = driver.connection
    connection._on_cancel_request = lambda params: _flag_only(connection, params)  # type: ignore
    seen: List[str] = []

    def on_read(params: Any, ctx: Any) -> Any:
        if ".acpref-check-cancel-" in params.path:
            seen.append(params.path)
            if len(seen) > 1 and ctx.cancelled.wait(10):
                return answer(params)
        return driver._on_read(params, ctx)

    connection.set_handler("fs/read_text_file", on_read)


class AbortsCancelledRead(Conforming):
    """Answers a read cancelled by ``$/cancel_request`` with -32603 "read aborted", neither the
    content nor -32800.

    CANCEL-05, cancellation.mdx: "MUST send one of these responses for the original request"
    (a result, or -32800 Request cancelled)."""

    clause = "CANCEL-05"
    evidence = "-32603"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def aborted(params: Any) -> Any:
            raise RpcError(-32603, "read aborted")

        honours_cancel_late(driver, aborted)
        # A cancel that reaches the request before its handler starts is answered -32800 by the
        # connection itself: that answer is bent too.
        on_the_wire(driver, _recode(-32800, -32603))


def _recode(old: int, new: int) -> Change:
    def recoded(m: Dict[str, Any]) -> Optional[List[Wire]]:
        error = m.get("error") if _is_response(m) else None
        if isinstance(error, dict) and error.get("code") == old:
            return [{**m, "error": {**error, "code": new}}]
        return None

    return recoded


# -- Files, terminals, _meta, subagents ------------------------------------------------------------


class WritesOnlyExistingFiles(Conforming):
    """Refuses ``fs/write_text_file`` for a file that does not exist yet (-32002): a client that
    saves into an open buffer and has none for a new file.

    FS-07, file-system.mdx: "The Client MUST create the file if it doesn't exist."."""

    clause = "FS-07"
    evidence = "was not created"

    def bend(self, driver: AgentDriver, session: str) -> None:
        serve = driver._on_write

        def on_write(params: Any, ctx: Any) -> Any:
            if params.path not in driver.files and not os.path.exists(params.path):
                raise RpcError.resource_not_found(f"no open buffer for {params.path}")
            return serve(params, ctx)

        driver.connection.set_handler("fs/write_text_file", on_write)


class CutsInsideCharacters(Conforming):
    """Keeps a terminal's whole output and, when asked for it, keeps the last
    ``outputByteLimit`` bytes and decodes them with replacement: the cut lands inside a
    character, which comes out as U+FFFD.

    TERM-05, terminals.mdx: "The Client MUST ensure truncation happens at a character boundary
    to maintain valid string output, even if this means the retained output is slightly less
    than the specified limit."."""

    clause = "TERM-05"
    evidence = "cut inside a character"

    def bend(self, driver: AgentDriver, session: str) -> None:
        limits: Dict[str, int] = {}
        terminals = driver.terminals

        def create(params: s.CreateTerminalRequest, ctx: Any) -> Any:
            limit = params.output_byte_limit
            whole = terminals.create(_without_limit(params))
            if isinstance(limit, int):
                limits[whole.terminal_id] = limit
            return whole

        def output(params: s.TerminalOutputRequest, ctx: Any) -> Any:
            answer = terminals.output(params)
            limit = limits.get(params.terminal_id)
            data = answer.output.encode("utf-8")
            if limit is None or len(data) <= limit:
                return answer
            kept = data[len(data) - limit :].decode("utf-8", "replace")
            return s.TerminalOutputResponse(
                output=kept, truncated=True, exit_status=answer.exit_status
            )

        driver.connection.set_handler("terminal/create", create)
        driver.connection.set_handler("terminal/output", output)


def _without_limit(params: s.CreateTerminalRequest) -> s.CreateTerminalRequest:
    return attrs.evolve(params, output_byte_limit=s.UNSET)


class RefusesMeta(Conforming):
    """Refuses a ``fs/read_text_file`` that carries ``_meta`` at its params root (-32602
    "unknown field _meta"): a client with a strict schema that forgot the extension point.

    EXT-02, schema.json (the ``_meta`` description): "Implementations MUST NOT make assumptions
    about values at these keys."."""

    clause = "EXT-02"
    evidence = "fs/read_text_file with _meta"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def on_read(params: Any, ctx: Any) -> Any:
            if params.meta:
                raise RpcError.invalid_params("unknown field _meta")
            return driver._on_read(params, ctx)

        driver.connection.set_handler("fs/read_text_file", on_read)


#: Capabilities with subagents: check-client then asks a permission for a child.
SUBAGENT_CAPS = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    "subagents": {},
}


class RefusesChildRequests(Conforming):
    """Advertises subagents but answers a permission request for a child session with -32002
    "unknown session": a client that only knows the sessions it created.

    SUBAGENT-19, subagents.md: "Responses to Agent-to-Client requests are not Client-initiated
    session mutations and MUST still be delivered."."""

    clause = "SUBAGENT-19"
    evidence = "child's permission request"
    caps = SUBAGENT_CAPS

    def answer_permission(
        self, driver: AgentDriver, session: str, request: s.RequestPermissionRequest
    ) -> Any:
        if request.session_id != session:
            raise RpcError(-32002, f"unknown session {request.session_id}")
        return super().answer_permission(driver, session, request)


# -- Proof-table peers (spec_notes/proof.md), appended -----------------------------------------


class InvalidRequestUnderAnotherId(Conforming):
    """Answers the request whose method is 42 (id "acpref-bad") -32600 under another id, its
    upper-case spelling: a client that normalises the ids it cannot dispatch.

    RPC-11, JSON-RPC 2.0 section 5: "If there was an error in detecting the id in the Request
    object (e.g. Parse error/Invalid Request), it MUST be Null." (its own id is what the client
    detected; any other id is neither)."""

    clause = "RPC-11"
    evidence = "a request whose method is 42 was answered under id 'ACPREF-BAD'"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def other_id(m: Dict[str, Any]) -> Optional[List[Wire]]:
            if _is_response(m) and m.get("id") == "acpref-bad":
                return [{**m, "id": "ACPREF-BAD"}]
            return None

        on_the_wire(driver, other_id)

DEFECTS = {
    name: cls
    for name, cls in dict(globals()).items()
    if isinstance(cls, type) and issubclass(cls, Conforming) and cls.clause is not None
}


# -- Clauses no keyworded sentence states (spec-gap) -----------------------------------------------


class SelectsAnOptionNotOffered(Conforming):
    """Answers the permission request with ``optionId: "yolo"``, which it was never offered.

    TOOL-08: "The ID of the selected permission option" is a definition, no RFC 2119 keyword
    (decisions.md ``unquoted``): spec-gap."""

    gap = "TOOL-08"
    evidence = "yolo"

    def answer_permission(
        self, driver: AgentDriver, session: str, request: s.RequestPermissionRequest
    ) -> Any:
        return "yolo"


class RefusesAMalformedTitle(Conforming):
    """Refuses a permission request whose tool call ``title`` is not a string (-32602) instead
    of reading that default-on-error field as absent: a client with a strict schema.

    SCHEMA-11: the x-deserialize-default-on-error mark has no sentence, no keyword
    (decisions.md ``unquoted``): spec-gap."""

    gap = "SCHEMA-11"
    evidence = "toolCall.title 5"

    def answer_permission(
        self, driver: AgentDriver, session: str, request: s.RequestPermissionRequest
    ) -> Any:
        # The driver reads the title as absent: what came on the wire says it was malformed.
        asked = [
            m
            for _, m in driver.sink.received(0)
            if isinstance(m, dict) and m.get("method") == "session/request_permission"
        ]
        title = asked[-1]["params"]["toolCall"].get("title") if asked else None
        if not isinstance(title, (str, type(None))):
            raise RpcError.invalid_params("toolCall.title: expected a string")
        return super().answer_permission(driver, session, request)


class PromptsDuringATurn(Conforming):
    """Sends a second prompt to the session while its first turn runs (from the permission
    dialog of step 1), as a client that queues nothing.

    ``spec-gap:concurrent-prompt``: prompt-turn.mdx describes one turn at a time, but no sentence
    forbids a second prompt (decisions.md ``concurrent-prompt``)."""

    gap = "spec-gap:concurrent-prompt"
    evidence = "a turn is already running"

    def answer_permission(
        self, driver: AgentDriver, session: str, request: s.RequestPermissionRequest
    ) -> Any:
        if request.tool_call.tool_call_id == "check-permission":
            driver.prompt_async(session, "are you done yet?")
        return super().answer_permission(driver, session, request)


class AcceptsAnUnadvertisedForm(Conforming):
    """Advertises no elicitation, yet accepts the form check-client sends anyway instead of
    answering -32602.

    ELICIT-29: "Requests using a mode the Client has not advertised produce -32602" is
    descriptive, no keyword (decisions.md ``unquoted``): spec-gap."""

    gap = "ELICIT-29"
    evidence = "unadvertised form mode answered"

    def bend(self, driver: AgentDriver, session: str) -> None:
        def accept(params: Any, ctx: Any) -> Any:
            return s.CreateElicitationResponse(
                action=s.ElicitationAcceptAction(content={"name": "me"})
            )

        driver.connection.set_handler("elicitation/create", accept)


class ServesAnUnadvertisedMethod(Conforming):
    """Serves ``fs/read_text_file`` without advertising ``fs.readTextFile``.

    RPC-12: JSON-RPC's table defines -32601 without a keyword (decisions.md ``unquoted``):
    spec-gap."""

    gap = "RPC-12"
    evidence = "unadvertised fs/read_text_file"
    caps = {"terminal": True}

    def bend(self, driver: AgentDriver, session: str) -> None:
        driver.connection.set_handler(
            "fs/read_text_file", lambda params, ctx: s.ReadTextFileResponse(content="x")
        )


class ReleaseLeavesTheCommandRunning(Conforming):
    """Answers ``terminal/release`` with ``{}`` and forgets the terminal, but leaves a command
    that still runs running (a client that detaches the process instead of killing it); it
    stops what it left only when the connection ends.

    TERM-13: "The `terminal/release` kills the command if still running and releases all
    resources" is descriptive, no keyword (decisions.md ``unquoted``, ``release-kills``):
    spec-gap."""

    gap = "TERM-13"
    evidence = "was still running"
    #: The release waits min(--timeout, 10 s) for the command's end: 3 s is plenty for a command
    #: that never ends, and keeps the test from waiting the default 10 s for it.
    serve_args = ("--timeout", "3")

    def bend(self, driver: AgentDriver, session: str) -> None:
        manager = driver.terminals.manager
        left: List[Any] = []
        release = driver.terminals.release

        def detach(params: s.ReleaseTerminalRequest, ctx: Any) -> Any:
            term = manager._live.get(params.terminal_id)
            if term is None or term.exited.is_set():
                return release(params)  # an ended command: released as it should be
            left.append(manager._live.pop(params.terminal_id))
            return s.ReleaseTerminalResponse()

        close_all = driver.terminals.close_all

        def stop_what_was_left() -> None:
            for term in left:
                term.close(manager.kill_grace)
            close_all()

        driver.connection.set_handler("terminal/release", detach)
        driver.terminals.close_all = stop_what_was_left  # type: ignore[method-assign]


class AcceptsAFormOffItsSchema(Conforming):
    """Advertises form elicitation and accepts check-client's form with ``name`` a number,
    where the requested schema says a string.

    ELICIT-22: "For an accepted form elicitation, `content` SHOULD conform to the requested
    schema": a SHOULD finding, failing the run only with ``--fail-on SHOULD``."""

    should = "ELICIT-22"
    evidence = "'name'"
    caps = {**DEFAULT_CLIENT_CAPABILITIES, "elicitation": {"form": {}}}

    def bend(self, driver: AgentDriver, session: str) -> None:
        def accept(params: Any) -> Any:
            return s.CreateElicitationResponse(
                action=s.ElicitationAcceptAction(content={"name": "me"})
            )

        def off_schema(m: Dict[str, Any]) -> Optional[List[Wire]]:
            result = m.get("result")
            if isinstance(result, dict) and result.get("action") == "accept":
                return [{**m, "result": {**result, "content": {"name": 5}}}]
            return None

        driver.elicitation = accept
        on_the_wire(driver, off_schema)  # below the driver's own form check


#: Each breaks one SHOULD sentence (``should``: its clause): reported at SHOULD, run ok.
SHOULD_DEFECTS = {
    name: cls
    for name, cls in dict(globals()).items()
    if isinstance(cls, type) and issubclass(cls, Conforming) and getattr(cls, "should", None)
}


GAP_DEFECTS = {
    name: cls
    for name, cls in dict(globals()).items()
    if isinstance(cls, type) and issubclass(cls, Conforming) and getattr(cls, "gap", None)
}


# -- Clients that stop answering (check-client's deadlines) -----------------------------------------


class SilentAfterInitialize(Conforming):
    """Sends initialize, session/new and the user's prompts, and answers none of the agent's
    requests (a client whose UI thread hangs): check-client must end each step within its
    documented bound, with no FAIL (spec-gap gave-up). Nothing is ever answered, so a short
    timeout decides the same as a long one."""

    serve_args = ("--timeout", "0.5")

    def bend(self, driver: AgentDriver, session: str) -> None:
        on_the_wire(driver, lambda m: [] if _is_response(m) else None)


class StopsReadingFiles(Conforming):
    """Never answers fs/read_text_file (its answers are dropped); everything else it answers: the
    first read costs one timeout, the later reads are not sent."""

    serve_args = ("--timeout", "1")

    def bend(self, driver: AgentDriver, session: str) -> None:
        def read_answer(m: Dict[str, Any]) -> Optional[List[Wire]]:
            result = m.get("result")
            return [] if isinstance(result, dict) and "content" in result else None

        on_the_wire(driver, read_answer)
