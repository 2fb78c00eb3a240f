"""The script of ``check-client``: what each prompt of the client under test runs.

Spec: prompt-turn.mdx, tool-calls.mdx, file-system.mdx, terminals.mdx, elicitation.mdx,
extensibility.mdx, cancellation.mdx, session-setup.mdx. Step 1 (the first prompt) streams every
kind of update, asks a permission, reads and writes a file, keeps two reads open at once, runs
terminals, asks a form, and calls custom methods; step 2 asks the user to cancel while a
permission request is open; then the user may reopen the session (load replay). What a step
cannot see from the answers, the oracle judges from the transcript. The parts written raw (``_meta``
at a params root, odd ids, bad input, the two reads kept open) are in ``_client_wire``.
"""

from __future__ import annotations

import os
import secrets
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import codec
from .. import schema as s
from .._core.subagents import CAPABILITY as SUBAGENTS
from ..agent import PromptTurn
from ..errors import ErrorCode, RemoteProtocolError, RequestTimeout, RpcError
from ._client_wire import bad_input, crossed_reads, extensions, reading_dir, update_with_meta
from ._deadlines import Stalled
from ._grader import META, GraderAgent, code, say
from ._process_witness import ProcessWitness

__all__ = ["STEPS", "STEP_CLAUSES", "say"]


_OPTIONS = [
    s.PermissionOption(
        option_id="allow", name="Allow once", kind=s.PermissionOptionKind.ALLOW_ONCE
    ),
    s.PermissionOption(option_id="reject", name="Reject", kind=s.PermissionOptionKind.REJECT_ONCE),
]


# -- step 1 ---------------------------------------------------------------------------------------


def _basics(agent: GraderAgent, turn: PromptTurn) -> s.PromptResponse:
    say(turn, "acpref check-client, step 1 of 2: updates, a permission request, files, terminals.")
    for part, clauses in _PARTS:
        _guarded(agent, turn, part, clauses)
    say(turn, "Step 1 done. Send any prompt for step 2 (cancellation).")
    return s.PromptResponse(stop_reason=s.StopReason.END_TURN)


def _guarded(
    agent: GraderAgent, turn: PromptTurn, part: Callable[..., None], clauses: tuple
) -> None:
    """Run one part of step 1; if the client's answer stops it, its first undecided clause
    fails with the evidence and the rest of its clauses are SKIPPED as not reached (all of
    them when no answer came in time: no proof against the client, spec-gap gave-up)."""
    g = agent.grader
    name = part.__name__.strip("_")
    try:
        with g.in_part(name):
            part(agent, turn)
    except (RpcError, RequestTimeout, RemoteProtocolError, Stalled) as exc:
        undecided = [c for c in clauses if not g.decided(c)]
        what = f"{name}: the client answered {type(exc).__name__}: {exc}"
        if isinstance(exc, (RequestTimeout, Stalled)):
            for clause in undecided:
                g.skip(clause, f"not reached: {name}: {exc}")
            return
        if undecided:
            g.check(undecided[0], False, what)
        for clause in undecided[1:]:
            g.skip(clause, f"not reached: {what}")


#: Non-ASCII text (two-, three- and four-byte UTF-8), in updates and in the file written.
_TEXT = "acpref: \u00e9t\u00e9 \u65e5\u672c \U0001f642\n"


def _updates(agent: GraderAgent, turn: PromptTurn) -> None:
    turn.update(
        s.AgentMessageChunk(
            content=s.TextContent(text=_TEXT, meta=META),
            message_id=turn.new_message_id(),
            meta=META,
        )
    )
    turn.update(
        s.AgentThoughtChunk(
            content=s.TextContent(text="Thinking about the check."),
            message_id=turn.new_message_id(),
        )
    )
    turn.update(
        s.Plan(
            entries=[
                s.PlanEntry(
                    content="Exercise the client",
                    priority=s.PlanEntryPriority.HIGH,
                    status=s.PlanEntryStatus.IN_PROGRESS,
                )
            ]
        )
    )
    agent.client.update(
        turn.session_id,
        s.AvailableCommandsUpdate(
            available_commands=[s.AvailableCommand(name="check", description="acpref check")]
        ),
    )
    agent.client.update(turn.session_id, s.SessionInfoUpdate(title="acpref client check"))
    # Every kind of update is something the client must accept (OVERVIEW-04, SCHEMA-01).
    agent.grader.passed("OVERVIEW-04")
    update_with_meta(agent, turn)


def _permission(agent: GraderAgent, turn: PromptTurn) -> None:
    session = agent.sessions.get(turn.session_id)
    cwd = session.cwd if session is not None else os.getcwd()
    call = "check-permission"
    turn.update(
        s.ToolCall(
            tool_call_id=call,
            title="acpref check: an edit that needs your permission (allow or reject)",
            kind=s.ToolKind.EDIT,
            status=s.ToolCallStatus.PENDING,
            content=[
                s.Diff(
                    path=os.path.join(cwd, "acpref-check.txt"), old_text=None, new_text="checked\n"
                )
            ],
            locations=[s.ToolCallLocation(path=os.path.join(cwd, "acpref-check.txt"), line=1)],
        )
    )
    outcome = _permission_with_meta(agent, turn, call)
    # spec TOOL-08, SCHEMA-04: an offered option or cancelled (the oracle checks the shape).
    agent.grader.passed("TOOL-08", "SCHEMA-04")
    status = (
        s.ToolCallStatus.COMPLETED
        if isinstance(outcome, s.SelectedPermissionOutcome)
        else s.ToolCallStatus.FAILED
    )
    turn.update(s.ToolCallUpdate(tool_call_id=call, status=status))


def _permission_with_meta(agent: GraderAgent, turn: PromptTurn, call: str) -> Any:
    """Ask the permission with ``_meta`` at the params root and on the tool call, the tool
    call's ``title`` malformed (``5``); if that is refused, ask again with the ``_meta`` alone,
    then without either: the request that is answered tells what the refusal was for. A
    conforming client shows one dialog (the title is the tool call's, announced before it)."""
    g = agent.grader
    request = s.RequestPermissionRequest(
        session_id=turn.session_id,
        tool_call=s.ToolCallUpdate(tool_call_id=call, meta=META),
        options=_OPTIONS,
        meta=META,
    )
    params = codec.encode(request)
    # ToolCallUpdate.title is marked x-deserialize-default-on-error in schema.json.
    params["toolCall"]["title"] = 5
    answer = g.request_raw(agent.stream, "session/request_permission", params)
    if "result" in answer:
        g.passed("EXT-02", "SCHEMA-11")
        return _outcome(answer["result"])
    refused = f"answered {answer!r}"[:300]
    try:
        outcome = agent.client.session_request_permission(request).outcome
    except RpcError as exc:
        outcome = turn.request_permission(s.ToolCallUpdate(tool_call_id=call), _OPTIONS)
        # spec EXT-02: the same request without _meta was answered, so _meta caused the error.
        evidence = f"session/request_permission with _meta answered error {exc.code}: {exc.detail}"
        g.check("EXT-02", False, evidence)
        g.skip("SCHEMA-11", "not reached: the permission request was refused for its _meta")
        return outcome
    g.passed("EXT-02")
    # spec SCHEMA-11: a malformed default-on-error field is read as absent, not refused (the
    # same request with the title left out was answered).
    g.check("SCHEMA-11", False, f"session/request_permission with toolCall.title 5 {refused}")
    return outcome


def _outcome(result: Any) -> Any:
    """The outcome of a raw permission answer (the oracle judges its shape: SCHEMA-04)."""
    try:
        return codec.decode(result, s.RequestPermissionResponse).outcome
    except codec.DecodeError as exc:
        raise RemoteProtocolError(
            "OVERVIEW-01", f"the session/request_permission result does not fit its schema: {exc}"
        ) from None


def _files(agent: GraderAgent, turn: PromptTurn) -> None:
    g = agent.grader
    session = agent.sessions.get(turn.session_id)
    cwd = session.cwd if session is not None else os.getcwd()
    path = os.path.join(cwd, f".acpref-check-{secrets.token_hex(4)}.txt")
    text = "one\ntwo \u00e9\u65e5\U0001f642\nthree\n"
    can_read, can_write = (
        agent.client.supports("fs.readTextFile"),
        agent.client.supports("fs.writeTextFile"),
    )
    written: Optional[str] = None
    try:
        if can_write:
            written = _write_new(agent, turn, path, text)
        else:
            _refused(
                agent,
                "fs/write_text_file",
                {"sessionId": turn.session_id, "path": path, "content": text},
            )
            for clause in ("FS-07", "FS-08"):
                g.skip(clause, "the client does not advertise fs.writeTextFile")
        if can_read:
            _reads(agent, turn, path, written)
        else:
            _refused(agent, "fs/read_text_file", {"sessionId": turn.session_id, "path": path})
            g.skip("FS-04", "the client does not advertise fs.readTextFile")
        if written is not None and not can_read:
            # spec FS-07: the file exists afterwards (checked on disk: this agent runs locally).
            g.check("FS-07", os.path.isfile(path), f"{path} was not created")
    except RpcError as exc:
        g.check("FS-04" if can_read else "FS-08", False, f"a file request failed: {exc}")
    finally:
        if os.path.isfile(path):
            os.remove(path)


def _write_new(agent: GraderAgent, turn: PromptTurn, path: str, text: str) -> Optional[str]:
    """Write ``text`` to ``path``, a file that does not exist yet: the text written, or None when
    the client refused to create it."""
    g = agent.grader
    try:
        turn.write_text_file(path, text)
    except RpcError as exc:
        # spec FS-07: the client creates the file if it does not exist (an error is no creation).
        why = f"writing {path}, which did not exist, was answered error {exc.code}: {exc.detail}"
        g.check("FS-07", False, f"{why}; the file was not created")
        g.skip("FS-08", "the write was refused")
        return None
    g.passed("FS-08")
    return text


def _reads(agent: GraderAgent, turn: PromptTurn, path: str, written: Any) -> None:
    g = agent.grader
    if written is not None:
        content = turn.read_text_file(path)
        # spec FS-07: the file was created and holds what was written.
        g.check("FS-07", content == written, f"read back {content!r}, wrote {written!r}")
        part = turn.read_text_file(path, line=2, limit=1)
        # spec FS-04: from the 1-based line, at most limit lines.
        wanted = written.splitlines()[1]
        g.check("FS-04", part.rstrip("\n") == wanted, f"line 2, limit 1 read {part!r}, not {wanted!r}")
        params = {"sessionId": turn.session_id, "path": path, "_meta": META}
        answer = g.request_raw(agent.stream, "fs/read_text_file", params)
        # spec EXT-02: _meta at the params root never causes an error.
        g.check("EXT-02", "result" in answer, f"fs/read_text_file with _meta answered {answer!r}")
    else:
        g.skip("FS-04", "needs a file made by fs/write_text_file to read")
    try:
        turn.read_text_file(path + ".missing")
        g.check("RPC-17", False, "reading a missing file was answered with content")
    except RpcError as exc:
        # spec RPC-17: a missing file is -32002 (a SHOULD).
        g.check(
            "RPC-17",
            exc.code == ErrorCode.RESOURCE_NOT_FOUND,
            f"a missing file answered {exc.code}, not -32002",
        )


def _refused(agent: GraderAgent, method: str, params: dict) -> None:
    """spec RPC-12: an unadvertised method is answered -32601 (we send it raw, on purpose)."""
    answer = agent.grader.request_raw(agent.stream, method, params)
    agent.grader.check(
        "RPC-12",
        code(answer) == ErrorCode.METHOD_NOT_FOUND,
        f"unadvertised {method} answered {answer!r}",
    )


def _cancelled_read(agent: GraderAgent, turn: PromptTurn) -> None:
    """A file read followed at once by ``$/cancel_request`` for it: still answered exactly
    once, with the content (the read finished first, or the client ignores the cancel) or with
    error -32800. A file of the session's directory that the client read a moment before without
    a cancel, so that an error cannot be the file's fault."""
    g = agent.grader
    cwd = reading_dir(agent, turn, "CANCEL-05", "the request cancelled")
    if cwd is None:
        return
    path = os.path.join(cwd, f".acpref-check-cancel-{secrets.token_hex(4)}.txt")
    params = {"sessionId": turn.session_id, "path": path}
    with open(path, "w", encoding="utf-8") as f:  # this agent runs beside the client
        f.write("acpref check: a read cancelled at once\n")
    try:
        plain = g.request_raw(agent.stream, "fs/read_text_file", params, timeout=10.0)
        if "result" not in plain:
            g.skip("CANCEL-05", f"reading {path} without a cancel already answered {plain!r}")
            return
        answer = g.request_raw(agent.stream, "fs/read_text_file", params, 10.0, cancel=True)
    finally:
        os.remove(path)
    if "no answer" in answer:
        # No time limit is the spec's (spec-gap gave-up): the peer closed before it answered.
        g.skip("CANCEL-05", f"the cancelled read got no answer within 10s: {answer['no answer']}")
        return
    # spec CANCEL-05: the cancelled request still gets one response: a result, or -32800.
    g.check(
        "CANCEL-05",
        "result" in answer or code(answer) == ErrorCode.REQUEST_CANCELLED,
        f"the read cancelled by $/cancel_request answered {answer!r}, not a result or -32800",
    )


def _terminals(agent: GraderAgent, turn: PromptTurn) -> None:
    g = agent.grader
    if not agent.client.supports("terminal"):
        _refused(
            agent, "terminal/create", {"sessionId": turn.session_id, "command": sys.executable}
        )
        for clause in _TERMINAL_CLAUSES:
            g.skip(clause, "the client does not advertise terminal")
        return
    term = turn.create_terminal(sys.executable, ["-c", "print('acpref-check')"])
    g.passed("TERM-03")
    turn.update(
        s.ToolCall(
            tool_call_id="check-terminal",
            title="acpref check: a terminal",
            kind=s.ToolKind.EXECUTE,
            content=[s.Terminal(terminal_id=term.terminal_id)],
        )
    )
    done = term.wait_for_exit(timeout=60)
    # spec TERM-10, TERM-11: exitCode 0 and signal null once the command exited.
    g.check(
        "TERM-11",
        done.exit_code == 0 and done.signal in (None, s.UNSET),
        f"wait_for_exit answered {done!r}",
    )
    out = term.output()
    g.check(
        "TERM-09", "acpref-check" in out.output, f"output {out.output!r} lacks the command's output"
    )
    g.check("TERM-06", out.truncated is False, "output marked truncated without a limit")
    term.release()
    turn.update(s.ToolCallUpdate(tool_call_id="check-terminal", status=s.ToolCallStatus.COMPLETED))
    answer = g.request_raw(
        agent.stream,
        "terminal/output",
        {"sessionId": turn.session_id, "terminalId": term.terminal_id},
    )
    # spec TERM-14: a released terminal id is invalid.
    g.check("TERM-14", "error" in answer, f"terminal/output after release answered {answer!r}")
    _limited_and_killed(agent, turn)


def _limited_and_killed(agent: GraderAgent, turn: PromptTurn) -> None:
    """A terminal whose output (100 bytes of two-byte characters) overflows its limit of 11, so
    that a cut 11 bytes from either end falls inside a character; one killed while it runs."""
    g = agent.grader
    limited = turn.create_terminal(
        sys.executable, ["-c", "print('\\u00e9' * 50, end='')"], output_byte_limit=11
    )
    limited.wait_for_exit(timeout=60)
    out = limited.output()
    size = len(out.output.encode("utf-8"))
    # spec TERM-04, TERM-05, TERM-06: within the limit, whole characters, marked truncated.
    g.check("TERM-04", size <= 11, f"{size} bytes kept with outputByteLimit 11")
    g.check("TERM-05", "\ufffd" not in out.output, "output cut inside a character")
    g.check("TERM-06", out.truncated is True, "output dropped but not marked truncated")
    limited.release()
    sleeper = turn.create_terminal(sys.executable, ["-c", "import time; time.sleep(60)"])
    sleeper.kill()
    sleeper.output()  # spec TERM-12: the id stays valid after kill
    status = sleeper.wait_for_exit(timeout=60)
    g.check(
        "TERM-10",
        status.exit_code is not None or bool(status.signal),
        f"killed command exited {status!r}",
    )
    g.passed("TERM-12")
    sleeper.release()
    _released_running(agent, turn)


#: Seconds a command released while it runs may take to end (a kill ladder's SIGKILL comes
#: within seconds; ours kills at once).
_RELEASE_WAIT = 10.0


def _released_running(agent: GraderAgent, turn: PromptTurn) -> None:
    """A command released while it runs: the client kills it (TERM-13).

    The command tells its pid over a socket of this process and holds it open until it exits
    (``ProcessWitness``; check-client runs beside the client, as for the files of FS-07): the
    socket's end is the command's. Whether it ended is waited for after the release's answer.
    """
    g = agent.grader
    with ProcessWitness() as witness:
        command, *args = witness.argv()
        running = turn.create_terminal(command, args)
        pid = witness.wait_started(min(g.timeout, 60.0))
        running.release()
        if pid is None:
            reason = (
                f"the command of terminal {running.terminal_id!r} never connected back to the "
                "check (a client that runs commands elsewhere, or not at once)"
            )
            g.skip("TERM-13", reason)
            return
        wait = min(g.timeout, _RELEASE_WAIT)
        ended = witness.wait_ended(wait)
    # spec TERM-13: "The `terminal/release` kills the command if still running and releases all
    # resources" (no RFC 2119 keyword: spec-gap, decisions.md unquoted, release-kills).
    g.check(
        "TERM-13",
        ended,
        f"the command of terminal {running.terminal_id!r} (pid {pid}), running when it was "
        f"released, was still running {wait:g}s after terminal/release was answered",
    )


#: What the terminal part decides (all SKIPPED when the client does not advertise terminals).
_TERMINAL_CLAUSES = (
    "TERM-03",
    "TERM-11",
    "TERM-09",
    "TERM-06",
    "TERM-14",
    "TERM-04",
    "TERM-05",
    "TERM-10",
    "TERM-12",
    "TERM-13",
)


def _child_request(agent: GraderAgent, turn: PromptTurn) -> None:
    """To a client that advertised subagents: a child announced, and a permission it asks."""
    g = agent.grader
    if not agent.client.supports(SUBAGENTS):
        g.skip("SUBAGENT-19", "the client does not advertise subagents")
        return
    child = f"sess_check_child_{secrets.token_hex(4)}"
    # spec SUBAGENT-05: announced on its parent first; {}: no mutation is granted on it.
    turn.update(
        s.SubagentUpdate(
            session_id=child,
            title="acpref check: a helper",
            capabilities=s.SubagentSessionCapabilities(),
            state=s.RunningStateUpdate(),
        )
    )
    call = "check-child-permission"
    agent.client.update(
        child,
        s.ToolCall(tool_call_id=call, title="acpref check: the helper asks", kind=s.ToolKind.EDIT),
    )
    request = s.RequestPermissionRequest(
        session_id=child, tool_call=s.ToolCallUpdate(tool_call_id=call), options=_OPTIONS
    )
    # spec SUBAGENT-23: blocked on the user while it asks.
    turn.update(s.SubagentUpdate(session_id=child, state=s.RequiresActionStateUpdate()))
    try:
        agent.client.session_request_permission(request)
        g.passed("SUBAGENT-19")
    except RpcError as exc:
        # spec SUBAGENT-19: a request made for a child is no mutation: it is answered.
        g.check("SUBAGENT-19", False, f"a child's permission request answered {exc}")
    turn.update(
        s.SubagentUpdate(session_id=child, state=s.IdleStateUpdate(stop_reason="end_turn"))
    )


def _elicitation(agent: GraderAgent, turn: PromptTurn) -> None:
    g = agent.grader
    form = {
        "mode": "form",
        "sessionId": turn.session_id,
        "message": "acpref check: enter any name (or decline).",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
        },
    }
    if not agent.client.supports("elicitation.form"):
        answer = g.request_raw(agent.stream, "elicitation/create", form)
        # spec ELICIT-29: a mode the client did not advertise is answered -32602.
        g.check(
            "ELICIT-29",
            code(answer) == ErrorCode.INVALID_PARAMS,
            f"unadvertised form mode answered {answer!r}",
        )
        g.skip("ELICIT-20", "the client does not advertise elicitation.form")
        return
    turn.elicit(codec.decode(form, s.CreateElicitationRequest))
    g.passed("ELICIT-20", "SCHEMA-17")


# -- step 2 ---------------------------------------------------------------------------------------


def _cancellation(agent: GraderAgent, turn: PromptTurn) -> s.PromptResponse:
    g = agent.grader
    say(
        turn,
        "acpref check-client, step 2 of 2: press Stop / Cancel now, while the permission request below is "
        "open. (Answering it instead skips this check.)",
    )
    turn.update(
        s.ToolCall(
            tool_call_id="check-cancel",
            title="acpref check: cancel this turn",
            kind=s.ToolKind.OTHER,
        )
    )
    since = g.sink.received_count
    probe: List[Any] = []
    outcome = turn.request_permission(
        s.ToolCallUpdate(tool_call_id="check-cancel"),
        _OPTIONS,
        then=lambda: probe.append(_probe(agent, turn)),
    )
    if turn.cancelled.is_set() and _read_before_cancel(agent, turn, since, probe):
        # spec PROMPT-19, PROMPT-21: the client had read the request when it cancelled (it
        # answered the probe sent after it first): the oracle judges its answer at MUST.
        g.passed("PROMPT-19", "PROMPT-21")
    elif turn.cancelled.is_set():
        g.passed("PROMPT-19")
        # spec-gap permission-crossing: not provably read at the cancel, so maybe not pending.
        g.skip(
            "PROMPT-21",
            "the permission request may have crossed the client's session/cancel: the client "
            "answered the request sent after it (_acpref/ping) only after cancelling, so it had "
            "not provably read it; its answer is judged as spec-gap permission-crossing",
        )
    else:
        reason = "the permission request was answered without a session/cancel"
        if isinstance(outcome, s.CancelledPermissionOutcome):
            reason = "the permission request was answered cancelled, but no session/cancel came"
        g.skip("PROMPT-21", reason)
    say(
        turn,
        "Last, optional: reopen this session from your client's history (session/load) to check the "
        f"replay. The report is in {g.path}.",
    )
    for clause in ("SETUP-03", "SETUP-04", "SETUP-22"):
        g.skip(clause, "the client has not loaded a session (yet)")
    return s.PromptResponse(
        stop_reason=s.StopReason.CANCELLED if turn.cancelled.is_set() else s.StopReason.END_TURN
    )


#: Said once the client has answered step 2's probe: it has read the permission request.
DIALOG_SHOWN = "acpref check-client: the permission dialog is showing: press Stop / Cancel now."


def _probe(agent: GraderAgent, turn: PromptTurn) -> Any:
    """Sent after step 2's permission request: an extension request any client answers at once,
    without its user (RPC-12 at worst). Answered, it shows the client had read all sent before
    it (stdio is ordered). The answer, or None if none came in time."""
    try:
        answer = agent.grader.request_raw(agent.stream, "_acpref/ping", {})
    except (RequestTimeout, Stalled):
        return None
    if not turn.cancelled.is_set():
        say(turn, DIALOG_SHOWN)
    return answer


def _read_before_cancel(
    agent: GraderAgent, turn: PromptTurn, since: int, probe: List[Any]
) -> bool:
    """True when the client answered the probe before it sent session/cancel for the turn."""
    probe_id = probe[0].get("id") if probe and isinstance(probe[0], dict) else None
    for _, m in agent.grader.sink.received(since):
        if not isinstance(m, dict):
            continue
        if "method" not in m and probe_id is not None and m.get("id") == probe_id:
            return True
        params = m.get("params")
        if m.get("method") == "session/cancel" and isinstance(params, dict):
            if params.get("sessionId") == turn.session_id:
                return False
    return False


#: The parts of step 1 and the clauses each decides.
_PARTS: List[Any] = [
    (_updates, ("OVERVIEW-04", "EXT-02")),
    (_permission, ("TOOL-08", "SCHEMA-04", "EXT-02", "SCHEMA-11")),
    (_files, ("FS-08", "FS-07", "FS-04", "EXT-02", "RPC-17")),
    (_cancelled_read, ("CANCEL-05",)),
    (crossed_reads, ("RPC-07",)),
    (_terminals, _TERMINAL_CLAUSES),
    (_elicitation, ("ELICIT-20", "SCHEMA-17", "ELICIT-29")),
    (_child_request, ("SUBAGENT-19",)),
    (extensions, ("EXT-10", "OVERVIEW-09", "RPC-04", "EXT-08")),
    (
        bad_input,
        ("RPC-10", "RPC-11", "spec-gap:malformed-json", "RPC-12", "RPC-13", "CANCEL-06"),
    ),
]

STEPS: List[Callable[[GraderAgent, PromptTurn], s.PromptResponse]] = [_basics, _cancellation]

#: What each step decides: SKIPPED as "not reached" when the client stops before it.
STEP_CLAUSES: Dict[str, Tuple[str, ...]] = {
    "basics": tuple(dict.fromkeys(c for _, clauses in _PARTS for c in clauses)),
    "cancellation": ("PROMPT-19", "PROMPT-21"),
}
