"""The working-directory scenario of ``check-agent``: the session's cwd, not the agent's own.

Spec: session-setup.mdx, "Working Directory": the session's cwd "MUST be used for the session
regardless of where the Agent subprocess was spawned" (SETUP-26) and "MUST remain the base for
relative-path resolution" (SETUP-27). How an agent resolves a path is inside it; what it names
on the wire is not. So the agent is started in one scratch directory and the session opened in
another (``Scenario.apart``), each holding a file ``CWD_FILE`` of its own, and a prompt
(``--cwd-prompt``) asks for that file by its relative name. What the agent then names for it
shows the base it took:

* a path of the file (an ``fs/*`` ``path``, a ``terminal/create`` command or argument, a tool
  call's location or raw input) that is the name resolved against the directory the agent was
  started in breaks SETUP-27; the name resolved against the session's cwd passes it;
* a ``terminal/create`` ``cwd`` that is the directory the agent was started in breaks SETUP-26
  (a command of the session run where the process was spawned); the session's cwd passes it.

Only those two exact directories decide: any other path shows no base at MUST (an agent reads
files of its own, its configuration; a model may look elsewhere), and is named in a SKIPPED
row. No such request at all (an agent that reads with tools of its own and says nothing of
them, a model that did not follow the prompt) is SKIPPED with the option to set.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, List, Optional, Tuple

from .. import schema as s
from ..errors import ConnectionClosed
from ..schema import UNSET
from ._scenario import NotReached, ScenarioContext

__all__ = ["CWD_FILE", "CWD_PROMPT", "CWD_HINT", "cwd_scenario"]

#: The file the prompt asks for, by this relative name, in both directories.
CWD_FILE = "acpref-cwd-check.txt"

#: The default prompt: the echo agent's ``/read`` (it reads the name after it through the
#: client, resolved against the session's cwd), then words a model can follow.
CWD_PROMPT = (
    "/read {file} (acpref check-agent: please read the file {file}, named relative to this "
    "session's working directory, and answer with its first line)"
)

#: The marker of a reason that ``--cwd-prompt`` would turn into a verdict (see ``_hints``).
CWD_HINT = "give --cwd-prompt a prompt that makes the agent read {file} through the client"

#: What each directory's copy of the file says: the transcript shows which one was read.
_CONTENT = {
    "spawned": "acpref check-agent: the directory the agent process was started in\n",
    "session": "acpref check-agent: the session's working directory (cwd)\n",
}


def cwd_scenario(ctx: ScenarioContext) -> None:
    # Nothing on the way decides either clause: only what the agent names for the file does.
    ctx.at()
    spawned, session_cwd = ctx.spawn_dir, ctx.cwd
    assert spawned is not None, "the cwd scenario starts the agent apart (Scenario.apart)"
    for where, directory in (("spawned", spawned), ("session", session_cwd)):
        with open(os.path.join(directory, CWD_FILE), "w", encoding="utf-8") as f:
            f.write(_CONTENT[where])
    try:
        ctx.initialize()
    except ConnectionClosed as exc:
        raise NotReached(
            f"the agent, started in {spawned}, closed the connection at initialize ({exc}): a "
            "command that names its files by relative paths starts only where check-agent "
            "runs; give them as absolute paths"
        ) from None
    session_id = ctx.new_session()
    requests_before = len(ctx.driver.agent_requests)
    updates_before = ctx.driver.update_count(session_id)
    prompt = (ctx.options.cwd_prompt or CWD_PROMPT).replace("{file}", CWD_FILE)
    refused: Optional[NotReached] = None
    try:
        ctx.prompt(session_id, prompt)
    except NotReached as exc:
        refused = exc  # what the agent named before its error still counts
    requests = ctx.driver.agent_requests[requests_before:]
    updates = ctx.driver.updates(session_id, since=updates_before)
    paths = [
        (what, _base(path, spawned, session_cwd))
        for what, path in _paths(requests, updates, session_id)
    ]
    cwds = [
        (what, _base(os.path.join(path, CWD_FILE), spawned, session_cwd))
        for what, path in _cwds(requests, session_id)
    ]
    if refused is not None and not paths and not cwds:
        raise refused
    _judge(ctx, paths, cwds, spawned, session_cwd)


def _judge(
    ctx: ScenarioContext,
    paths: List[Tuple[str, Optional[str]]],
    cwds: List[Tuple[str, Optional[str]]],
    spawned: str,
    session_cwd: str,
) -> None:
    """The verdicts: each clause FAILs on the spawn directory, PASSes on the session's cwd."""
    where = f"(the agent was started in {spawned}, the session's cwd is {session_cwd})"
    wrong = [what for what, base in paths if base == "spawned"]
    if wrong:
        # spec SETUP-27: cwd "MUST remain the base for relative-path resolution": the relative
        # name resolved against the directory the agent process was started in is a wrong base.
        named = "; ".join(wrong)
        ctx.check("SETUP-27", False, f"asked for {CWD_FILE!r}, it named {named}: the name "
                  f"resolved against its own directory, not the session's cwd {where}")
    else:
        hint = CWD_HINT.replace("{file}", CWD_FILE)
        none = f"nothing the agent sent named {CWD_FILE} of either directory {where}; {hint}"
        _pass_or_skip(ctx, "SETUP-27", paths, none)
    wrong = [what for what, base in cwds if base == "spawned"]
    if wrong:
        # spec SETUP-26: cwd "MUST be used for the session regardless of where the Agent
        # subprocess was spawned": a command of the session run in the spawn directory is not.
        named = "; ".join(wrong)
        ctx.check("SETUP-26", False, f"{named}: the session's command runs in the directory "
                  f"the agent was started in, not the session's cwd {where}")
    else:
        none = (
            f"no terminal/create with a cwd came in the turn, so where the agent runs the "
            f"session's commands was not seen {where}; give --cwd-prompt a prompt that makes it "
            f"run a command on {CWD_FILE} in a client terminal ('/run cat {{file}}' for acpref "
            "echo)"
        )
        _pass_or_skip(ctx, "SETUP-26", cwds, none)


def _pass_or_skip(
    ctx: ScenarioContext, clause: str, seen: List[Tuple[str, Optional[str]]], none: str
) -> None:
    """PASS when the agent named the session's cwd as the base; otherwise SKIPPED, saying what
    it named instead (a path of neither directory shows no base) or ``none``."""
    if any(base == "session" for _, base in seen):
        ctx.passed(clause)
        return
    if seen:
        named = "; ".join(what for what, _ in seen)
        ctx.skip(
            clause,
            f"the agent named {named}: the file in neither directory, so no base is shown (a "
            "path outside cwd may be one of the agent's own, its configuration)",
        )
        return
    ctx.skip(clause, none)


def _base(path: str, spawned: str, session_cwd: str) -> Optional[str]:
    """``"spawned"`` or ``"session"`` when ``path`` is ``CWD_FILE`` of that directory, else None
    (a relative path too: TOOL-15 forbids it, and the oracle judges that)."""
    if not os.path.isabs(path):
        return None
    for base, directory in (("spawned", spawned), ("session", session_cwd)):
        wanted = os.path.join(directory, CWD_FILE)
        if os.path.normpath(path) == wanted or os.path.realpath(path) == wanted:
            return base
    return None


def _paths(requests: List[Any], updates: List[Any], session_id: str) -> Iterator[Tuple[str, str]]:
    """Each path the agent named for a file, as (what named it, the path): the ``fs/*`` paths,
    tool call locations, and the absolute paths of the file among the words of
    ``terminal/create`` commands and of tool calls' raw input (a name left relative there is
    resolved by the command, in the terminal's cwd: SETUP-26's)."""
    for method, params in requests:
        if getattr(params, "session_id", None) != session_id:
            continue
        if method in ("fs/read_text_file", "fs/write_text_file"):
            yield f"{method} path {params.path}", params.path
        elif method == "terminal/create":
            args = params.args if isinstance(params.args, list) else []
            for word in _words([params.command, *args]):
                if CWD_FILE in word and os.path.isabs(word):
                    yield f"terminal/create naming {word}", word
    for update in updates:
        if not isinstance(update, (s.ToolCall, s.ToolCallUpdate)):
            continue
        for location in update.locations if isinstance(update.locations, list) else []:
            yield f"tool call {update.tool_call_id} location {location.path}", location.path
        raw = update.raw_input if update.raw_input is not UNSET else None
        for word in _words(_strings(raw)):
            if CWD_FILE in word and os.path.isabs(word):
                yield f"tool call {update.tool_call_id} input {word}", word


def _cwds(requests: List[Any], session_id: str) -> Iterator[Tuple[str, str]]:
    """The ``cwd`` of each ``terminal/create`` of the session: (what named it, the directory)."""
    for method, params in requests:
        if method == "terminal/create" and getattr(params, "session_id", None) == session_id:
            if isinstance(params.cwd, str):
                yield f"terminal/create cwd {params.cwd}", params.cwd


def _words(texts: List[str]) -> Iterator[str]:
    """The words of each text (a shell line names its paths among other words), unquoted."""
    for text in texts:
        for word in text.split():
            yield word.strip("'\"`;,()")


def _strings(value: Any, depth: int = 0) -> List[str]:
    """The strings of a JSON value, a few levels deep (a tool's raw input)."""
    if isinstance(value, str):
        return [value]
    if depth > 3:
        return []
    if isinstance(value, dict):
        return [t for v in value.values() for t in _strings(v, depth + 1)]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v, depth + 1)]
    return []
