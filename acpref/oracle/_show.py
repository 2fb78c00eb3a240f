"""The layout of ``acpref show``: a transcript as rows of a sequence diagram, with its findings.

This module decides *what* the report shows, as plain data that tests can read; ``_show_html``
decides how it looks. From a transcript and the oracle's ``Report`` it builds a ``Layout``:

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
  finding is never folded: a violation is always on screen;
* **findings**, each on the row of the message that caused it (findings the end of the transcript
  revealed go on the last row), with a level class for colour (``MUST``, ``SHOULD``, ``spec-gap``,
  ``warning``), the spec's sentence (the quotes table's, else the register's wording of the
  clause) and the page of the spec it is on;
* **summary**: counts by level, messages, sessions, turns, duration, who talked.

Whatever comes from the peers (labels, raw lines) is made inert here: control characters and
bidirectional overrides are shown as escapes, never passed on. HTML escaping is the writer's job
(``acpref._show_html``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import attrs

from .._core import Finding
from .._core.register import clauses, quote_of
from ._show_labels import (
    SNIPPET,
    answer_label,
    as_list,
    inert,
    obj,
    request_label,
    snippet,
    text_of,
    update_label,
)
from ._transcript import Record, read_transcript
from ._validate import Report, Validator

__all__ = ["Layout", "Row", "Fold", "Turn", "Shown", "build_layout", "level_class", "inert"]

#: Consecutive updates of one session and turn from this many on are shown as one fold.
FOLD_MIN = 8
#: Characters of a raw line kept for "show the raw line"; the transcript keeps all of it.
RAW_LIMIT = 65536

LEVELS = ("MUST", "SHOULD", "spec-gap", "warning")

def level_class(f: Finding) -> str:
    """The colour a finding is drawn in: ``MUST``, ``SHOULD``, ``spec-gap`` or ``warning``."""
    if f.clause.startswith("spec-gap"):
        return "spec-gap"
    if f.level in ("MUST", "MUST NOT"):
        return "MUST"
    if f.level in ("SHOULD", "SHOULD NOT"):
        return "SHOULD"
    return "warning"


@attrs.frozen(kw_only=True)
class Shown:
    """One finding as the report shows it."""

    clause: str
    level: str  # the finding's level (MUST, SHOULD NOT, ...)
    level_class: str  # one of LEVELS
    blame: str
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
    return json.dumps(value, sort_keys=True)


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
    def __init__(self) -> None:
        self.rows: List[Row] = []
        self.t0: Optional[float] = None
        self.index = 0
        #: (requester, id key) -> (row, method, turn) of requests not answered yet.
        self.waiting: Dict[Tuple[str, str], Tuple[int, str, Optional[int]]] = {}
        self.turns: List[Dict[str, Any]] = []
        self.open_turn: Dict[str, int] = {}  # session -> turn number (0-based) while open
        self.sessions: List[str] = []
        self.pairs: Dict[int, int] = {}
        self.names: Dict[str, str] = {}
        #: Rows of lines each party could not read and nobody answered yet (RPC-10, RPC-11).
        self.unreadable: Dict[str, List[int]] = {"client": [], "agent": []}
        #: The start of each message chunk's text, by row, for the preview of a fold.
        self.texts: Dict[int, str] = {}

    def add(self, record: Record) -> None:
        if self.t0 is None:
            self.t0 = record.ts
        ts = record.ts - self.t0
        n = len(self.rows)
        if record.event is not None:
            label = (
                f"{record.sender} closed its output"
                if record.event == "eof"
                else f"a line over the bound ({record.size or '?'} bytes), not kept"
                if record.event == "oversize"
                else f"event {snippet(record.event, 32)}"
            )
            self.rows.append(
                Row(n=n, index=None, ts=ts, sender=record.sender, receiver=record.sender,
                    kind="event", method=None, label=label)
            )
            return
        index = self.index
        self.index += 1
        raw_bytes = record.raw or b""
        try:
            raw, utf8 = raw_bytes.decode("utf-8"), True
        except UnicodeDecodeError:
            raw, utf8 = raw_bytes.decode("utf-8", errors="backslashreplace"), False
        shown_raw = inert(raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT])
        sender, receiver = record.sender, "agent" if record.sender == "client" else "client"
        try:
            message = json.loads(raw_bytes)
        except ValueError:
            message = None
        base: Dict[str, Any] = dict(n=n, index=index, ts=ts, raw=shown_raw, size=len(raw_bytes))
        if not isinstance(message, dict):
            what = f"a JSON {type(message).__name__}" if message is not None else "not JSON"
            what = what if utf8 else "not UTF-8"
            self.unreadable[sender].append(n)
            row = Row(sender=sender, receiver=receiver, kind="invalid", method=None,
                      label=f"unreadable line ({what}): {snippet(raw, 48)}", **base)
            self.rows.append(row)
            return
        method = message.get("method") if isinstance(message.get("method"), str) else None
        session = _session_of(message)
        if session is not None and session not in self.sessions:
            self.sessions.append(session)
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
        if method is None:
            label = f"method {snippet(repr(message.get('method')), 32)} (not a string)"
        elif method == "session/update":
            update, label = update_label(params)
            if update in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
                self.texts[n] = text_of(obj(obj(params).get("update")).get("content"))[:SNIPPET]
        elif is_request:
            label = request_label(method, params)
        else:
            label = method
        if method == "initialize" and isinstance(params, dict):
            info = params.get("clientInfo")
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                self.names["client"] = snippet(info["name"], 48)
        if is_request and method == "session/prompt" and sender == "client" and session:
            turn = len(self.turns)
            text = " ".join(text_of(b) for b in as_list(obj(params).get("prompt")))
            self.turns.append(
                {"session": session, "request": n, "answer": None,
                 "label": "“" + snippet(text, 60) + "”", "outcome": "never answered"}
            )
            self.open_turn[session] = turn
        if is_request:
            key = (sender, _id_key(message.get("id")))
            if key not in self.waiting:  # a reused id keeps the first request (duplicate-id)
                self.waiting[key] = (n, method or "?", turn)
        self.rows.append(
            Row(sender=_lane(method, sender), receiver=_lane(method, receiver),
                kind="request" if is_request else "notification", method=method, label=label,
                turn=turn, session=session, update=update, **base)
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
                f"error {snippet(str(message['error'].get('code')), 12)}"
                if isinstance(message.get("error"), dict)
                else snippet(str(result.get("stopReason")), 24)
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
            session = self.rows[found[0]].session
        self.rows.append(
            Row(sender=_lane(method, sender), receiver=_lane(method, receiver), kind=kind,
                method=method, label=answer_label(method, message, answers_unreadable), turn=turn,
                session=session, **base)
        )


def _shown(f: Finding, row: int) -> Shown:
    clause = clauses().get(f.clause)
    quote = quote_of(f.clause)
    requirement = clause.requirement if clause is not None else ""
    page = clause.page if clause is not None else ""
    if quote is not None:  # the spec's own sentence, where the quotes table has it
        requirement, page = quote.text, quote.source.split("#", 1)[0]
    return Shown(
        clause=f.clause,
        level=f.level,
        level_class=level_class(f),
        blame=f.blame.value,
        message=inert(f.message),
        row=row,
        index=f.index,
        requirement=requirement,
        quoted=quote is not None,
        page=page,
        section=clause.section if clause is not None else "",
    )


def _fold_label(rows: Sequence[Row], texts: Dict[int, str]) -> str:
    counts: Dict[str, int] = {}
    for r in rows:
        counts[r.update or "?"] = counts.get(r.update or "?", 0) + 1
    kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
    preview = ""
    for r in rows:
        if len(preview) > SNIPPET:
            break
        preview += texts.get(r.n, "")
    said = f": “{snippet(preview)}”" if preview.strip() else ""
    return f"{len(rows)} session/update ({kinds}){said}"


def _items(rows: List[Row], fold_min: int, texts: Dict[int, str]) -> List[Union[int, Fold]]:
    items: List[Union[int, Fold]] = []
    run: List[Row] = []

    def flush() -> None:
        if len(run) >= fold_min:
            items.append(Fold(first=run[0].n, last=run[-1].n, label=_fold_label(run, texts)))
        else:
            items.extend(r.n for r in run)
        run.clear()

    for row in rows:
        foldable = (
            row.method == "session/update" and row.kind == "notification" and not row.findings
        )
        if foldable and run and (row.sender, row.session, row.turn) != (
            run[-1].sender, run[-1].session, run[-1].turn
        ):
            flush()
        if foldable:
            run.append(row)
        else:
            flush()
            items.append(row.n)
    flush()
    return items


def build_layout(
    transcript: Union[str, Iterable[Any]],
    report: Optional[Report] = None,
    *,
    fold_min: int = FOLD_MIN,
) -> Layout:
    """The layout of a transcript (a path, or records); ``report`` is judged here if not given."""
    records = read_transcript(transcript)
    if report is None:
        validator = Validator()
        for record in records:
            validator.feed(record)
        report = validator.finish()
    builder = _Builder()
    for record in records:
        builder.add(record)
    rows = builder.rows
    if not rows:
        rows.append(Row(n=0, index=None, ts=0.0, sender="client", receiver="client", kind="event",
                        method=None, label="the transcript is empty"))
    by_index = {r.index: r.n for r in rows if r.index is not None}
    shown: List[Shown] = []
    on_row: Dict[int, List[int]] = {}
    for f in report.findings:
        row = by_index.get(f.index, rows[-1].n) if f.index is not None else rows[-1].n
        on_row.setdefault(row, []).append(len(shown))
        shown.append(_shown(f, row))
    rows = [
        attrs.evolve(r, pair=builder.pairs.get(r.n), findings=tuple(on_row.get(r.n, ())))
        for r in rows
    ]
    turns = [
        Turn(number=i + 1, session=t["session"], request=t["request"], answer=t["answer"],
             label=t["label"], outcome=t["outcome"])
        for i, t in enumerate(builder.turns)
    ]
    lanes = ["client", "agent"]
    if any("terminals" in (r.sender, r.receiver) for r in rows):
        lanes.insert(1, "terminals")
    counts = {level: 0 for level in LEVELS}
    for s in shown:
        counts[s.level_class] += 1
    summary = {
        "messages": report.messages,
        "from_client": sum(1 for r in rows if r.index is not None and r.sender == "client"),
        "from_agent": sum(1 for r in rows if r.index is not None and r.sender != "client"),
        "levels": counts,
        "sessions": len(builder.sessions),
        "turns": len(turns),
        "duration": rows[-1].ts if rows else 0.0,
        "names": dict(builder.names),
        "blamed": {p: sum(1 for s in shown if s.blame == p) for p in ("agent", "client")},
    }
    return Layout(lanes=lanes, rows=rows, items=_items(rows, fold_min, builder.texts), turns=turns,
                  findings=shown, summary=summary)
