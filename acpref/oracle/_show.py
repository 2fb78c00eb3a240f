"""The layout of ``acpref show``: a transcript as rows of a sequence diagram, with its findings.

This module decides *what* the report shows, as plain data that tests can read;
``acpref._tools.show_html`` decides how it looks. From a transcript and the oracle's ``Report``
it builds a ``Layout``:

* **lanes**: the parties, left to right: ``client`` and ``agent``, and ``terminals`` (the client's,
  terminals.mdx) when the agent used any. MCP traffic never crosses the ACP connection, so no
  transcript holds it and no MCP lane is drawn;
* **rows**, one per record in wire order: an arrow between two lanes for each message
  (``request``, ``response``, ``error``, ``notification``, or ``invalid`` for a line nobody could
  read), a mark on one lane for an event (end of a stream, an oversize line). A request and its
  answer point at each other (``pair``); a message sent while a prompt turn of its session is open
  belongs to that turn (prompt-turn.mdx), so a turn can be folded away as a whole;
* **items**, the order of display: a row, or a **fold** standing for a run of at least
  ``fold_min`` consecutive ``session/update`` notifications of one session and turn. A row with a
  finding is never folded: a violation is always on screen. A fold keeps ``fold_keep`` rows at
  each end and counts the middle in its label: the layout holds what the page shows, and the
  transcript is read as it is laid out, so a flood of updates costs the page nothing;
* **findings**, each on the row of the message that caused it (findings the end of the transcript
  revealed go on the last row), with a level class for colour (``MUST``, ``SHOULD``, ``spec-gap``,
  ``warning``; ``probe`` for a finding blamed on acpref's own side of a check, which breaks
  rules on purpose: the transcript's header names the party under test), the spec's sentence (the quotes table's, else the register's wording of the
  clause) and the page of the spec it is on;
* **summary**: counts by level, messages, sessions, turns, duration, who talked.

Whatever comes from the peers (labels, raw lines) is made inert here: control characters and
bidirectional overrides are shown as escapes, never passed on. HTML escaping is the writer's job
(``acpref._tools.show_html``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple, Union

import attrs

from .._core import Finding
from .._core.register import clauses, quote_of
from ._show_labels import (
    LEVELS,
    PROBE,
    SNIPPET,
    answer_label,
    as_list,
    brief,
    decode_line,
    inert,
    level_class,
    obj,
    request_label,
    snippet,
    text_of,
    update_label,
)
from ._transcript import Record, iter_transcript, subject_of
from ._validate import Report, Validator

__all__ = [
    "Layout", "Row", "Fold", "Turn", "Shown", "build_layout", "level_class", "inert", "LEVELS",
    "PROBE",
]

#: Consecutive updates of one session and turn from this many on are shown as one fold.
FOLD_MIN = 8
#: Rows of a fold drawn at each of its ends; the middle of a longer run is counted, not drawn.
FOLD_KEEP = 50
#: Characters of a raw line kept for "show the raw line"; the transcript keeps all of it.
RAW_LIMIT = 65536

@attrs.frozen(kw_only=True)
class Shown:
    """One finding as the report shows it."""

    clause: str
    level: str  # the finding's level (MUST, SHOULD NOT, ...)
    level_class: str  # one of LEVELS, or PROBE
    blame: str
    #: Who the page says broke the rule: "the agent", "the client", or acpref's probe.
    who: str
    message: str
    row: int  # the row it is drawn on
    index: Optional[int]  # the message index, None for an end-of-transcript finding
    requirement: str  # the spec's sentence (quoted) or the register's wording ("" for a decision)
    quoted: bool  # True when ``requirement`` is the spec's own sentence (register.quotes)
    page: str  # the spec page (``prompt-turn.mdx``), "" for a decision
    section: str


@attrs.frozen(kw_only=True)
class Row:
    """One record: an arrow (a message) or a mark (an event)."""

    n: int  # position among the rows
    index: Optional[int]  # the message index the oracle uses; None for an event
    ts: float  # seconds since the first record
    sender: str  # a lane
    receiver: str  # a lane (the sender's own for an event)
    kind: str  # request, response, error, notification, invalid, event
    method: Optional[str]  # a response's is its request's
    label: str
    pair: Optional[int] = None  # the row of the answer (for a request) or of the request
    turn: Optional[int] = None
    session: Optional[str] = None
    update: Optional[str] = None  # the sessionUpdate kind of a session/update
    findings: Tuple[int, ...] = ()
    raw: str = ""
    size: int = 0


@attrs.frozen(kw_only=True)
class Fold:
    """A run of rows shown as one line until opened."""

    first: int
    last: int  # inclusive
    label: str


@attrs.frozen(kw_only=True)
class Turn:
    """A prompt turn: from the ``session/prompt`` request to its answer (or the end)."""

    number: int  # 1-based, in wire order
    session: str
    request: int  # its row
    answer: Optional[int]  # the row of the answer, None if never answered
    label: str  # what the prompt said
    outcome: str  # its stop reason, its error, or "never answered"


@attrs.frozen(kw_only=True)
class Layout:
    lanes: List[str]
    rows: List[Row]
    items: List[Union[int, Fold]]
    turns: List[Turn]
    findings: List[Shown]
    summary: Dict[str, Any]


def _id_key(value: Any) -> str:
    """The key that pairs a request and its answer: the id's JSON type and value (RPC-04)."""
    if isinstance(value, (dict, list)):
        return "container"  # not an id (RPC-02): answered, if at all, as a broken request
    try:
        return json.dumps(value)
    except ValueError:  # an integer of more digits than Python spells
        return "number"


def _session_of(message: Dict[str, Any]) -> Optional[str]:
    for part in ("params", "result"):
        body = message.get(part)
        if isinstance(body, dict) and isinstance(body.get("sessionId"), str):
            return body["sessionId"]
    return None


def _lane(method: Optional[str], party: str) -> str:
    """The terminals the agent asks for run on the client's side: their own lane."""
    if method is not None and method.startswith("terminal/") and party == "client":
        return "terminals"
    return party


class _Builder:
    """Lays records out one at a time, holding only what the page shows.

    Rows are numbered by record (``n`` is the record's position) while building; a run of
    foldable updates keeps its first ``head`` and last ``tail`` rows, and ``build_layout``
    renumbers the rows kept at the end. ``flagged`` holds the message indices that carry a
    finding: their rows are never folded.
    """

    def __init__(self, flagged: Set[int], fold_min: int, head: int, tail: int) -> None:
        self.rows: List[Row] = []
        self.items: List[Union[int, Fold]] = []
        self.flagged = flagged
        self.fold_min, self.head, self.tail = fold_min, head, tail
        self.t0: Optional[float] = None
        self.index = 0
        self.serial = 0
        self.sent = {"client": 0, "agent": 0}
        #: (requester, id key) -> (row, method, turn, session) of requests not answered yet.
        self.waiting: Dict[Tuple[str, str], Tuple[int, str, Optional[int], Optional[str]]] = {}
        self.turns: List[Dict[str, Any]] = []
        self.open_turn: Dict[str, int] = {}  # session -> turn number (0-based) while open
        self.sessions: Dict[str, None] = {}
        self.pairs: Dict[int, int] = {}
        self.names: Dict[str, str] = {}
        #: Rows of lines each party could not read and nobody answered yet (RPC-10, RPC-11).
        self.unreadable: Dict[str, List[int]] = {"client": [], "agent": []}
        self.run = _Run()

    def add(self, record: Record) -> None:
        if self.t0 is None:
            self.t0 = record.ts
        ts = record.ts - self.t0
        n = self.serial
        self.serial += 1
        if record.event is not None:
            label = (
                f"{record.sender} closed its output"
                if record.event == "eof"
                else f"a line over the bound ({record.size or '?'} bytes), not kept"
                if record.event == "oversize"
                else f"event {snippet(record.event, 32)}"
            )
            self._put(
                Row(n=n, index=None, ts=ts, sender=record.sender, receiver=record.sender,
                    kind="event", method=None, label=label)
            )
            return
        index = self.index
        self.index += 1
        self.sent[record.sender] += 1
        raw_bytes = record.raw or b""
        try:
            raw = raw_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raw = raw_bytes.decode("utf-8", errors="backslashreplace")
        shown_raw = inert(raw[:RAW_LIMIT])
        if len(raw) > RAW_LIMIT:
            shown_raw += f"… [{len(raw) - RAW_LIMIT} more characters: see the transcript]"
        sender, receiver = record.sender, "agent" if record.sender == "client" else "client"
        message, unreadable = decode_line(raw_bytes)
        base: Dict[str, Any] = dict(n=n, index=index, ts=ts, raw=shown_raw, size=len(raw_bytes))
        if not isinstance(message, dict):
            self.unreadable[sender].append(n)
            row = Row(sender=sender, receiver=receiver, kind="invalid", method=None,
                      label=f"unreadable line ({unreadable}): {snippet(raw, 48)}", **base)
            self._put(row)
            return
        method = message.get("method") if isinstance(message.get("method"), str) else None
        session = _session_of(message)
        if session is not None:
            self.sessions[session] = None
        if "method" in message:
            self._call(message, method, session, sender, receiver, base)
        else:
            self._answer(message, session, sender, receiver, base)

    def _call(self, message: Dict[str, Any], method: Optional[str], session: Optional[str],
              sender: str, receiver: str, base: Dict[str, Any]) -> None:
        n = base["n"]
        params = message.get("params")
        is_request = "id" in message
        turn = self.open_turn.get(session) if session is not None else None
        update = None
        text = ""
        if method is None:
            label = f"method {brief(message.get('method'), 32, quote=True)} (not a string)"
        elif method == "session/update":
            update, label = update_label(params)
            if update in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
                text = text_of(obj(obj(params).get("update")).get("content"))[:SNIPPET]
        elif is_request:
            label = request_label(method, params)
        else:
            label = inert(method)
        if method == "initialize" and isinstance(params, dict):
            info = params.get("clientInfo")
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                self.names["client"] = snippet(info["name"], 48)
        if is_request and method == "session/prompt" and sender == "client" and session:
            turn = len(self.turns)
            said = " ".join(text_of(b) for b in as_list(obj(params).get("prompt"))[:16])
            self.turns.append(
                {"session": session, "request": n, "answer": None,
                 "label": "“" + snippet(said, 60) + "”", "outcome": "never answered"}
            )
            self.open_turn[session] = turn
        if is_request:
            key = (sender, _id_key(message.get("id")))
            if key not in self.waiting:  # a reused id keeps the first request (duplicate-id)
                self.waiting[key] = (n, method or "?", turn, session)
        self._put(
            Row(sender=_lane(method, sender), receiver=_lane(method, receiver),
                kind="request" if is_request else "notification", method=method, label=label,
                turn=turn, session=_inert(session), update=update, **base),
            text,
        )

    def _answer(self, message: Dict[str, Any], session: Optional[str], sender: str,
                receiver: str, base: Dict[str, Any]) -> None:
        n = base["n"]
        found = self.waiting.pop((receiver, _id_key(message.get("id"))), None)
        method = found[1] if found is not None else None
        turn = found[2] if found is not None else None
        unreadable = self.unreadable[receiver]
        answers_unreadable = (
            found is None and message.get("id") is None and "error" in message and bool(unreadable)
        )
        if found is not None:
            self.pairs[found[0]] = n
            self.pairs[n] = found[0]
        elif answers_unreadable:
            # An error with id null answers a line its receiver could not read (RPC-10).
            first = unreadable.pop(0)
            self.pairs[first] = n
            self.pairs[n] = first
        if method == "session/prompt" and turn is not None:
            self.turns[turn]["answer"] = n
            result = message.get("result")
            self.turns[turn]["outcome"] = (
                f"error {brief(obj(message['error']).get('code'), 12)}"
                if isinstance(message.get("error"), dict)
                else brief(obj(result).get("stopReason"), 24)
                if isinstance(result, dict)
                else "?"
            )
            self.open_turn.pop(self.turns[turn]["session"], None)
        if method == "initialize" and isinstance(message.get("result"), dict):
            info = message["result"].get("agentInfo")
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                self.names["agent"] = snippet(info["name"], 48)
        kind = "error" if "error" in message else "response"
        if session is None and found is not None:
            session = found[3]
        self._put(
            Row(sender=_lane(method, sender), receiver=_lane(method, receiver), kind=kind,
                method=method, label=answer_label(method, message, answers_unreadable), turn=turn,
                session=_inert(session), **base)
        )

    def _put(self, row: Row, text: str = "") -> None:
        """Keep a row; fold it into the run of updates it continues, or end that run."""
        foldable = (
            row.method == "session/update"
            and row.kind == "notification"
            and row.index not in self.flagged
        )
        if self.run.count and (
            not foldable or (row.sender, row.session, row.turn) != self.run.key
        ):
            self._end_run()
        run = self.run
        if not foldable:
            self.rows.append(row)
            self.items.append(row.n)
            return
        if not run.count:
            run.key, run.start = (row.sender, row.session, row.turn), len(self.rows)
        run.count += 1
        run.kinds[row.update or "?"] = run.kinds.get(row.update or "?", 0) + 1
        if len(run.preview) <= SNIPPET:
            run.preview += text
        self.rows.append(row)
        if len(self.rows) - run.start > self.head + self.tail:
            # The middle of a long run is not drawn: the page stays bounded (the transcript
            # keeps every line).
            del self.rows[run.start + self.head]
            run.hidden += 1

    def _end_run(self) -> None:
        run, kept = self.run, self.rows[self.run.start :]
        if run.count >= self.fold_min:
            self.items.append(Fold(first=kept[0].n, last=kept[-1].n, label=run.label()))
        else:
            self.items.extend(r.n for r in kept)
        self.run = _Run()

    def finish(self) -> None:
        if self.run.count:
            self._end_run()


class _Run:
    """The run of consecutive foldable updates being laid out."""

    def __init__(self) -> None:
        self.key: Tuple[str, Optional[str], Optional[int]] = ("", None, None)
        self.start = 0  # its first row's position in the rows kept
        self.count = 0
        self.hidden = 0  # rows of the run not kept (the middle of a long one)
        self.kinds: Dict[str, int] = {}
        self.preview = ""

    def label(self) -> str:
        kinds = ", ".join(
            f"{k} ×{v}" for k, v in sorted(self.kinds.items(), key=lambda kv: -kv[1])
        )
        said = f": “{snippet(self.preview)}”" if self.preview.strip() else ""
        hidden = (
            f"; {self.hidden} of them not drawn (see the transcript)" if self.hidden else ""
        )
        return f"{self.count} session/update ({kinds}){said}{hidden}"


def _inert(text: Optional[str]) -> Optional[str]:
    return None if text is None else inert(text)


def _shown(f: Finding, row: int, subject: Optional[str]) -> Shown:
    clause = clauses().get(f.clause)
    quote = quote_of(f.clause)
    requirement = clause.requirement if clause is not None else ""
    page = clause.page if clause is not None else ""
    if quote is not None:  # the spec's own sentence, where the quotes table has it
        requirement, page = quote.text, quote.source.split("#", 1)[0]
    probe = subject is not None and f.blame.value != subject
    return Shown(
        clause=f.clause,
        level=f.level,
        level_class=PROBE if probe else level_class(f),
        blame=f.blame.value,
        who=f"acpref's probe (the {f.blame.value}, on purpose)" if probe else f"the {f.blame.value}",
        message=inert(f.message),
        row=row,
        index=f.index,
        requirement=requirement,
        quoted=quote is not None,
        page=page,
        section=clause.section if clause is not None else "",
    )


def build_layout(
    transcript: Union[str, Iterable[Any]],
    report: Optional[Report] = None,
    *,
    fold_min: int = FOLD_MIN,
    fold_keep: int = FOLD_KEEP,
    subject: Optional[str] = None,
) -> Layout:
    """The layout of a transcript (a path, or records); ``report`` is judged here if not given.

    A path is read as it is laid out (twice without a report: once to judge it), so that what
    the layout holds is what the page shows: a fold keeps ``fold_keep`` rows at each end.
    ``subject``: the party under test (default: the one a path's header names, ``subject_of``);
    the other party's findings are acpref's probes (``PROBE``), not counted in the levels."""
    if subject is None and isinstance(transcript, (str, os.PathLike)):
        subject = subject_of(transcript)
    if report is None:
        validator = Validator()
        for record in iter_transcript(transcript):
            validator.feed(record)
        report = validator.finish()
    flagged = {f.index for f in report.findings if f.index is not None}
    builder = _Builder(flagged, fold_min, fold_keep, fold_keep)
    for record in iter_transcript(transcript):
        builder.add(record)
    builder.finish()
    rows = builder.rows
    if not rows:
        rows.append(Row(n=0, index=None, ts=0.0, sender="client", receiver="client", kind="event",
                        method=None, label="the transcript is empty"))
        builder.items.append(0)
    at = {r.n: i for i, r in enumerate(rows)}  # a record's row -> its place among those kept
    by_index = {r.index: at[r.n] for r in rows if r.index is not None}
    last = len(rows) - 1
    shown: List[Shown] = []
    on_row: Dict[int, List[int]] = {}
    for f in report.findings:
        row = by_index.get(f.index, last) if f.index is not None else last
        on_row.setdefault(row, []).append(len(shown))
        shown.append(_shown(f, row, subject))
    rows = [
        attrs.evolve(r, n=i, pair=at.get(builder.pairs.get(r.n, -1)),
                     findings=tuple(on_row.get(i, ())))
        for i, r in enumerate(rows)
    ]
    turns = [
        Turn(number=i + 1, session=inert(t["session"]), request=at[t["request"]],
             answer=None if t["answer"] is None else at[t["answer"]], label=t["label"],
             outcome=t["outcome"])
        for i, t in enumerate(builder.turns)
    ]
    items: List[Union[int, Fold]] = [
        at[it] if isinstance(it, int) else attrs.evolve(it, first=at[it.first], last=at[it.last])
        for it in builder.items
    ]
    lanes = ["client", "agent"]
    if any("terminals" in (r.sender, r.receiver) for r in rows):
        lanes.insert(1, "terminals")
    return Layout(lanes=lanes, rows=rows, items=items, turns=turns, findings=shown,
                  summary=_summary(report, builder, rows, turns, shown))


def _summary(report: Report, builder: _Builder, rows: List[Row], turns: List[Turn],
             shown: List[Shown]) -> Dict[str, Any]:
    counts = {level: 0 for level in LEVELS}
    for s in shown:
        if s.level_class in counts:
            counts[s.level_class] += 1
    return {
        "messages": report.messages,
        "from_client": builder.sent["client"],
        "from_agent": builder.sent["agent"],
        "levels": counts,
        "sessions": len(builder.sessions),
        "turns": len(turns),
        "duration": rows[-1].ts if rows else 0.0,
        "names": dict(builder.names),
        "blamed": {p: sum(1 for s in shown if s.blame == p) for p in ("agent", "client")},
        "probes": sum(1 for s in shown if s.level_class == PROBE),
    }
