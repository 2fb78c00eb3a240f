"""The grader of ``check-client``: the report of one client, kept up to date on disk.

``Grader`` is what the steps of the script (``_client_steps``) record their verdicts in, and
how they send what no conforming agent would (``request_raw``); ``say`` writes an agent message
to the user. The scripted agent that runs the steps is ``_check_client.GraderAgent``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from typing import Any, Dict, Iterator, NoReturn, Optional, Protocol, Set, Tuple

from .. import schema as s
from ..agent import ClientHandle, PromptTurn, SessionRegistry
from ..errors import RequestTimeout
from ._deadlines import Deadlines
from ._recording import RecordingStream, RecordSink
from ._results import CheckReport

__all__ = ["Grader", "GraderAgent", "META", "code", "say"]

#: ``_meta`` no client defines: it must never cause an error (EXT-02).
META = {"acpref.dev/check": {"any": ["thing", 1, None], "\u00e9": "\u65e5\u672c"}}


def code(answer: Any) -> Any:
    """The error code of a raw answer (None for a result or no answer)."""
    error = answer.get("error") if isinstance(answer, dict) else None
    return error.get("code") if isinstance(error, dict) else None


class Grader:
    """The report of one client under grading, kept up to date on disk. Thread-safe."""

    def __init__(
        self, report_path: str, sink: RecordSink, *, timeout: float = 300.0, progress: bool = False
    ) -> None:
        self.path = report_path
        self.sink = sink
        self.show_progress = progress
        self._started = time.monotonic()
        #: Seconds to wait for each answer of the client (``--timeout``).
        self.timeout = timeout
        #: A kind of request that got no answer in time is not sent again (``_deadlines``);
        #: its ``part`` names the step or part running now.
        self.deadlines = Deadlines(sink, timeout, {})
        #: The step running now (None between prompts): named if the client stops meanwhile.
        self.running: Optional[str] = None
        self._lock = threading.Lock()  # guards report, _decided and the file
        self._decided: Set[str] = set()
        self.report = _load_or_new(report_path)
        if sink.transcript_path and sink.transcript_path not in self.report.transcripts:
            self.report.transcripts.append(sink.transcript_path)
        self.scenario = "session"
        self.raw_ids = iter(range(1, 1 << 30))

    def record(self, clause: str, status: str, evidence: Optional[str] = None) -> None:
        with self._lock:
            self._decided.add(clause)
            self.report._record(clause, status, self.scenario, evidence)

    def check(self, clause: str, ok: bool, evidence: str) -> bool:
        self.record(clause, "PASS" if ok else "FAIL", None if ok else evidence)
        return ok

    def passed(self, *clause_ids: str) -> None:
        for clause in clause_ids:
            self.record(clause, "PASS")

    def skip(self, clause: str, reason: str) -> None:
        self.record(clause, "SKIPPED", reason)

    def not_reached(self, step_clauses: Dict[str, Tuple[str, ...]]) -> None:
        """Mark the clauses of steps the client never reached as SKIPPED, saying why."""
        with self._lock:
            missing = [
                (step, c)
                for step, cs in step_clauses.items()
                for c in cs
                if c not in self.report.results
            ]
        for step, clause in missing:
            self.scenario = step
            if step == self.running:
                why = f"step {step!r} was running when the client stopped (it disconnected)"
            else:
                why = f"the client sent too few prompts for step {step!r}"
            self.skip(clause, f"not reached: {why}")

    def progress(self, text: str) -> None:
        """One line of progress on stderr (the client's log of its agent), if asked for."""
        if self.show_progress:
            elapsed = time.monotonic() - self._started
            print(f"acpref check-client: [{elapsed:.1f}s] {text}", file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def in_part(self, name: str) -> Iterator[None]:
        """A part of a step runs: named in progress and in the reason of a stalled request."""
        self.deadlines.part = f"part {name!r}"
        self.progress(f"{name} ...")
        try:
            yield
        finally:
            self.deadlines.part = f"step {self.scenario!r}"
            self.progress(f"{name} done")

    def note(self, text: str) -> None:
        with self._lock:
            if text not in self.report.notes:
                self.report.notes.append(text)

    def save(self, final: bool = False) -> None:
        """Write the report: the verdicts so far plus the oracle's findings against the client."""
        report = self.sink.finish() if final else None
        with self._lock:
            snapshot = CheckReport.from_json(self.report.to_json())
            findings = report.findings if report is not None else self.sink.findings
            snapshot.add_findings(findings, "session", self.sink.transcript_path)
            snapshot.final, snapshot.pid = final, os.getpid()
            if final:
                self.report = snapshot
            tmp = f"{self.path}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(snapshot.dumps())
            os.replace(tmp, self.path)

    def decided(self, clause: str) -> bool:
        """True when some step already gave ``clause`` a verdict in this run."""
        with self._lock:
            return clause in self._decided

    def request_raw(
        self,
        stream: RecordingStream,
        method: str,
        params: Dict[str, Any],
        timeout: Optional[float] = None,
        *,
        request_id: Any = None,
        any_id: bool = False,
        cancel: bool = False,
    ) -> Any:
        """Send a request no conforming agent would (an unadvertised method, an odd id).

        The answer is the response with that id; with ``any_id``, the first response that comes
        (any id, or none: nothing else of ours is in flight), so that an answer under a wrong id
        is judged, not waited for. No answer within ``timeout`` seconds (at most the grader's)
        raises ``RequestTimeout``, and a method that already got none raises ``Stalled``
        unsent. With ``cancel``, a ``$/cancel_request`` for it follows the request at once.
        """
        wait = self.deadline(method, timeout)
        if request_id is None:
            request_id = self.new_raw_id()
        since = self.sink.received_count
        self.write_request(stream, method, params, request_id)
        if cancel:
            cancel_it = {"requestId": request_id}
            notice = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": cancel_it}
            stream.write_raw((json.dumps(notice) + "\n").encode("utf-8"))
        answer = self.answer(request_id, since, wait, any_id=any_id)
        if "no answer" in answer and not self.sink.wait_peer_eof(0):
            self.stalled_on(method, wait)
        return answer

    def deadline(self, method: str, timeout: Optional[float] = None) -> float:
        """The seconds a request of ``method`` may wait; ``Stalled`` if its kind got no answer."""
        self.deadlines.refuse(method)
        return self.timeout if timeout is None else min(timeout, self.timeout)

    def stalled_on(self, method: str, waited: float) -> NoReturn:
        """A request of ``method`` got no answer in ``waited`` seconds: raise ``RequestTimeout``.

        No spec sentence sets a deadline: what the client still owes when the connection ends
        is not judged (spec-gap gave-up), and its kind is not sent again."""
        self.deadlines.missed(method)
        raise RequestTimeout(f"{method} got no answer within {waited:g}s (see --timeout)")

    def new_raw_id(self) -> str:
        """An id for a request written raw: no id the typed side uses has this form."""
        return f"acpref-check-{next(self.raw_ids)}"

    def write_request(
        self, stream: RecordingStream, method: str, params: Dict[str, Any], request_id: Any
    ) -> None:
        """Write one request raw; its answer is ``answer(request_id, ...)``."""
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        stream.write_raw((json.dumps(message) + "\n").encode("utf-8"))

    def answer(
        self, request_id: Any, since: int, timeout: float = 30.0, *, any_id: bool = False
    ) -> Any:
        """The first response received from position ``since`` with ``request_id`` (the same
        value and JSON type; with ``any_id``, any response), or ``{"no answer": ...}``."""

        def answers(m: Any) -> bool:
            if not isinstance(m, dict) or "method" in m:
                return False
            got = m.get("id")
            return any_id or (type(got) is type(request_id) and got == request_id)

        try:
            return self.sink.wait_for(answers, since=since, timeout=timeout)[1]
        except TimeoutError as exc:
            return {"no answer": str(exc)}


def _load_or_new(path: str) -> CheckReport:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("subject") == "client":
            report = CheckReport.from_json(data)
            report.findings = []  # re-judged from this run's transcript
            return report
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return CheckReport(subject="client", command=["acpref", "check-client", "--serve", path])


def say(turn: PromptTurn, text: str) -> None:
    """One agent message to the user."""
    turn.update(
        s.AgentMessageChunk(
            content=s.TextContent(text=text + "\n"), message_id=turn.new_message_id()
        )
    )


class GraderAgent(Protocol):
    """What a step works with: the scripted agent of ``_check_client``."""

    client: ClientHandle
    grader: Grader
    stream: RecordingStream
    sessions: SessionRegistry
