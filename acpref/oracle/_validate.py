"""``validate``: judge a recorded transcript, both directions, clause by clause.

Spec: every page. Three layers of checks, in order, for each message:

1. **The line** (transports.mdx): UTF-8 (TRANSPORT-01); one JSON value per line, so a log line on
   the agent's stdout breaks TRANSPORT-08 (the client's stdin: TRANSPORT-09) and a message split
   over several lines breaks TRANSPORT-05; a JSON-RPC object (OVERVIEW-01, no batches).
2. **The envelope and the shape** (overview.mdx, schema.json): ``jsonrpc`` (RPC-01), ids and
   params (RPC-02, RPC-03), and the params or result of every known method through the strict
   codec (OVERVIEW-01; unknown keys EXT-04; a few shapes have clauses of their own).
3. **The protocol**: ``acpref._rules.ProtocolState``, the very rules the agent and client sides
   enforce live: sequencing, capability gates both ways, sessions, turns, cancellation, tool
   calls, terminals, elicitations, paths, bookkeeping of ids.

MUST-level findings are *violations*; SHOULD-level ones are *warnings*. This module uses layers
L0-L2 only (schema, codec, methods, rules): no threads, no I/O beyond reading the transcript.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Union

import attrs

from .. import codec
from .. import schema as s
from .._rules import Finding, Party, ProtocolState, other
from .._rules.findings import finding
from ..methods import lookup
from ._transcript import Record, read_transcript

__all__ = ["Report", "validate", "Validator"]


@attrs.frozen
class Report:
    """The findings of one transcript."""

    findings: List[Finding]
    messages: int

    @property
    def violations(self) -> List[Finding]:
        """MUST / MUST NOT findings."""
        return [f for f in self.findings if f.is_violation]

    @property
    def warnings(self) -> List[Finding]:
        """SHOULD-level findings (and acpref's own SHOULD-level decisions)."""
        return [f for f in self.findings if not f.is_violation]

    @property
    def ok(self) -> bool:
        """True when no MUST rule was broken."""
        return not self.violations

    def clauses(self) -> List[str]:
        return sorted({f.clause for f in self.findings})

    def format_text(self) -> str:
        lines = [f"{self.messages} messages, {len(self.violations)} violations, {len(self.warnings)} warnings"]
        for title, group in (("violations", self.violations), ("warnings", self.warnings)):
            if group:
                lines.append(f"{title}:")
                for f in group:
                    where = f"#{f.index}" if f.index is not None else "end"
                    lines.append(f"  {where:>6}  {f.clause:<28} {f.level:<9} {f.blame.value:<6}  {f.message}")
        return "\n".join(lines)

    def to_json(self) -> Dict[str, Any]:
        return {
            "messages": self.messages,
            "ok": self.ok,
            "violations": [f.as_dict() for f in self.violations],
            "warnings": [f.as_dict() for f in self.warnings],
        }


def _valid_id(value: Any) -> bool:
    return value is None or type(value) in (str, int)


class Validator:
    """Incremental validation: feed records one by one (the proxy does), then ``finish``."""

    def __init__(self) -> None:
        self.state = ProtocolState()
        self.findings: List[Finding] = []
        self.messages = 0
        self._eof: set = set()

    def feed(self, record: Record) -> List[Finding]:
        """Check one record; returns the findings it caused (also kept in ``findings``)."""
        if record.event is not None:
            if record.event == "eof":
                self._eof.add(record.sender)
            return []
        index = self.messages
        self.messages += 1
        sender = Party(record.sender)
        out = list(self._check_message(sender, record.raw or b"", index))
        self.findings.extend(out)
        return out

    def finish(self) -> Report:
        # The transcript ended cleanly when the client closed the agent's input (or both did).
        complete = "client" in self._eof
        self.findings.extend(self.state.finish(complete=complete))
        return Report(findings=list(self.findings), messages=self.messages)

    # -- layer 1: the line -----------------------------------------------------------------------

    def _check_message(self, sender: Party, raw: bytes, index: int) -> Iterable[Finding]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # spec TRANSPORT-01: messages are UTF-8.
            yield finding("TRANSPORT-01", sender, f"the line is not UTF-8 ({exc.reason} at byte {exc.start})", index)
            return
        try:
            message = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            yield _not_a_message(sender, text, index)
            return
        if isinstance(message, list):
            # spec OVERVIEW-01 (RPC-20): ACP defines no batch messages.
            yield finding("OVERVIEW-01", sender, "a JSON-RPC batch (ACP defines none)", index)
            return
        if not isinstance(message, dict):
            yield _not_a_message(sender, text, index)
            return
        yield from self._check_envelope(sender, message, index)

    # -- layer 2: envelope and shape -------------------------------------------------------------

    def _check_envelope(self, sender: Party, message: Dict[str, Any], index: int) -> Iterable[Finding]:
        if message.get("jsonrpc") != "2.0":
            # spec RPC-01: every message has jsonrpc "2.0".
            yield finding("RPC-01", sender, f"jsonrpc is {message.get('jsonrpc')!r}, not '2.0'", index)
        if "method" in message:
            method = message["method"]
            if not isinstance(method, str):
                yield finding("RPC-02", sender, f"method {method!r} is not a string", index)
                return
            if "id" in message:
                request_id = message["id"]
                if not _valid_id(request_id):
                    # spec RPC-02: ids are strings, integers or null.
                    yield finding("RPC-02", sender, f"request id {request_id!r} is not a string or integer", index)
                elif request_id is None:
                    # spec RPC-03: ids should not be null.
                    yield finding("RPC-03", sender, "request id is null", index)
            params = message.get("params")
            if params is not None and not isinstance(params, dict):
                # spec RPC-02: ACP params are JSON objects.
                yield finding("RPC-02", sender, f"{method} params are {type(params).__name__}, not an object", index)
            else:
                yield from self._check_shape(sender, method, "params", params, index)
        elif "id" in message and ("result" in message or "error" in message):
            request = self.state.outstanding[other(sender)].get(message["id"]) if _valid_id(message["id"]) else None
            if request is not None and "result" in message and "error" not in message:
                yield from self._check_shape(sender, request.method, "result", message["result"], index)
            elif "error" in message and isinstance(message["error"], dict):
                yield from self._check_shape(sender, None, "error", message["error"], index)
        else:
            # spec OVERVIEW-01: a request, a response or a notification, nothing else.
            yield finding("OVERVIEW-01", sender, "neither a request, a response nor a notification", index)
            return
        yield from self.state.observe(sender, message, index)

    def _check_shape(self, sender: Party, method: Optional[str], part: str, value: Any, index: int) -> Iterable[Finding]:
        if part == "error":
            model: Any = s.Error
        else:
            row = lookup(method) if method is not None else None
            if row is None:
                return  # an extension method: its shape is its own (EXT-06)
            model = row.params if part == "params" else row.result
            if model is None:
                return
        if value is None:
            value = {}  # spec RPC-19 for params; a null result is judged by the rules (SCHEMA-09)
        try:
            codec.decode(value, model, strict=True, root=part)
        except codec.DecodeError as exc:
            unknown = [(p, m) for p, m in exc.errors if m.startswith("unknown key")]
            other_errors = [(p, m) for p, m in exc.errors if not m.startswith("unknown key")]
            if method == "session/update" and _is_mode_update(value):
                # spec SCHEMA-03: the docs' `modeId` is one finding (the wrong name), not two.
                renamed = [(p, m) for p, m in unknown if p.endswith(".modeId")]
                unknown = [(p, m) for p, m in unknown if not p.endswith(".modeId")]
                other_errors = other_errors or renamed
            if other_errors:
                clause = _shape_clause(method, part, value)
                path, msg = other_errors[0]
                more = f" (+{len(other_errors) - 1} more)" if len(other_errors) > 1 else ""
                yield finding(clause, sender, f"{method or 'error'} {part}: {path}: {msg}{more}", index)
            if unknown:
                # spec EXT-04: no custom fields at the root of a spec type; they go in _meta.
                keys = ", ".join(p for p, _ in unknown)
                yield finding("EXT-04", sender, f"{method or 'error'} {part} has unknown keys: {keys}", index)


def _is_mode_update(params: Any) -> bool:
    update = params.get("update") if isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") == "current_mode_update"


def _shape_clause(method: Optional[str], part: str, value: Any) -> str:
    """The clause a malformed shape breaks: a specific one where the spec has it."""
    if method == "session/update" and part == "params":
        update = value.get("update") if isinstance(value, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        if kind == "current_mode_update":
            return "SCHEMA-03"  # spec SCHEMA-03: currentModeId, not modeId
        if kind in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
            return "SCHEMA-02"
        if kind == "usage_update":
            return "PROMPT-10"
        return "SCHEMA-01"
    if method == "session/request_permission" and part == "result":
        return "SCHEMA-04"
    if method == "initialize":
        return "SCHEMA-12" if _bad_version(value, part) else ("INIT-04" if part == "result" else "OVERVIEW-01")
    if method == "elicitation/create" and part == "params":
        return "ELICIT-08"
    if method == "elicitation/create" and part == "result":
        return "ELICIT-20"
    if part == "error":
        return "RPC-09"
    return "OVERVIEW-01"


def _bad_version(value: Any, part: str) -> bool:
    version = value.get("protocolVersion") if isinstance(value, dict) else None
    return not (type(version) is int and 0 <= version <= 65535)


def _not_a_message(sender: Party, text: str, index: int) -> Finding:
    stripped = text.strip()
    if stripped[:1] in ("{", "[", '"') or stripped[-1:] in (",", "{", "}", "]", "[") or stripped.startswith('"'):
        # spec TRANSPORT-05: a message spread over several lines (a raw newline inside it).
        return finding("TRANSPORT-05", sender, f"a message fragment: {text[:60]!r}", index)
    clause = "TRANSPORT-08" if sender is Party.AGENT else "TRANSPORT-09"
    where = "stdout" if sender is Party.AGENT else "the agent's stdin"
    # spec TRANSPORT-08 / TRANSPORT-09: nothing but ACP messages on the protocol stream.
    return finding(clause, sender, f"not an ACP message on {where}: {text[:60]!r}", index)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def validate(transcript: Union[str, Iterable[Any]]) -> Report:
    """Every violation and warning in a transcript (a path, or records, dicts or JSON lines)."""
    validator = Validator()
    for record in read_transcript(transcript):
        validator.feed(record)
    return validator.finish()
