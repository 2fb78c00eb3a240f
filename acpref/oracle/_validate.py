"""``validate``: judge a recorded transcript, both directions, clause by clause.

Spec: every page. Three layers of checks, in order, for each message:

1. **The line** (``_lines``, transports.mdx): UTF-8, one JSON object per line, nothing else on
   the protocol stream.
2. **The envelope and the shape** (overview.mdx, schema.json): the envelope as the live sides
   read it (``acpref._core.envelope``: ``jsonrpc`` RPC-01, ids and params RPC-02, RPC-03,
   exactly one of result or error RPC-05), the params or result of every
   known method through the strict codec (OVERVIEW-01; unknown keys EXT-04; a few shapes have
   clauses of their own), ``_meta`` (EXT-02, EXT-03), and the bookkeeping the rules cannot see
   from well-formed messages alone: a null-id error is due only after a line its sender could
   not read (RPC-10, RPC-11), a response that follows a notification answers it
   (OVERVIEW-09), and a result that fits another request in flight, not its own, is an answer
   under the wrong id (RPC-07, ``_swap``).
3. **The protocol**: ``acpref._core.ProtocolState``, the very rules the agent and client sides
   enforce live: sequencing, capability gates both ways, sessions, turns, cancellation, tool
   calls, terminals, elicitations, paths, bookkeeping of ids.

MUST-level findings are *violations*; SHOULD-level ones are *warnings*. This module uses layers
L0-L2 only (schema, codec, methods, rules): no threads, no I/O beyond reading the transcript.
"""

from __future__ import annotations

import collections
import re
from typing import Any, Deque, Dict, Iterable, List, Optional, Set, Tuple, Union

from .. import codec
from .. import schema as s
from .._bounds import MAX_DEPTH, nesting
from .._core import Finding, Party, ProtocolState, envelope, other
from .._core.findings import finding
from .._core.compat import describe_unknown_key, undefined_value
from .._core.register import WARNING
from ..errors import ErrorCode
from ..methods import PROTOCOL_VERSION, lookup
from ._lines import parse_line
from ._report import Report, format_finding, format_quote
from ._shape_clauses import bad_version as _bad_version, content_clause, shape_clause
from ._transcript import Record, read_transcript

__all__ = ["Report", "validate", "Validator", "format_finding", "format_quote"]

#: A notification among the last few messages a party received is what a stray response of that
#: party most likely answers (OVERVIEW-09); older ones are not blamed.
_RECENT_WINDOW = 3
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")


_valid_id = envelope.valid_id


class Validator:
    """Incremental validation: feed records one by one (the proxy does), then ``finish``."""

    def __init__(self, *, newer_spec: bool = False) -> None:
        #: A value no carried schema defines is a warning, not a failure (the peer is taken for
        #: one built on a newer spec: ``--newer-spec``); see ``compat.undefined_value``.
        self.newer_spec = newer_spec
        self.state = ProtocolState()
        self.findings: List[Finding] = []
        self.messages = 0
        self._eof: Set[str] = set()
        #: True once the client stopped the agent process (a ``stop`` event).
        self._agent_stopped = False
        #: The parties that gave up waiting for an answer at a deadline of their own (``gave-up``).
        self._gave_up: Set[Party] = set()
        #: True while a sender is inside a message cut by raw newlines (TRANSPORT-05, once).
        self._cut: Dict[Party, bool] = {Party.AGENT: False, Party.CLIENT: False}
        #: Null-id errors a party owes for lines it could not read (RPC-10, RPC-11).
        self._owed_null: Dict[Party, int] = {Party.AGENT: 0, Party.CLIENT: 0}
        #: -32600 errors a party owes for lines over its bound: under the id it could read from the
        #: line's head, or null (spec-gap oversize-line).
        self._owed_oversize: Dict[Party, int] = {Party.AGENT: 0, Party.CLIENT: 0}
        #: Errors a party owes, by id, for requests the rules never saw (a non-string method).
        self._owed_ids: Dict[Party, Set[Any]] = {Party.AGENT: set(), Party.CLIENT: set()}
        #: How many messages each party has received, and the notifications among the last ones.
        self._received: Dict[Party, int] = {Party.AGENT: 0, Party.CLIENT: 0}
        self._notified: Dict[Party, Deque[Tuple[int, int, str]]] = {
            Party.AGENT: collections.deque(maxlen=_RECENT_WINDOW),
            Party.CLIENT: collections.deque(maxlen=_RECENT_WINDOW),
        }
        #: Requests whose answer came under another request's id, by requester: id -> the method
        #: whose result that answer is expected to carry, the other half of a swap (RPC-07).
        self._swapped: Dict[Party, Dict[Any, str]] = {Party.AGENT: {}, Party.CLIENT: {}}
        #: Requests whose only fault is their ``_meta``: (requester, id) -> index (EXT-02).
        self._meta_only: Dict[Tuple[Party, Any], Optional[int]] = {}
        #: Refusals a party owes for requests that reused an id in flight: id -> count.
        self._refusals: Dict[Party, Dict[Any, int]] = {Party.AGENT: {}, Party.CLIENT: {}}
        self._report: Optional[Report] = None
        #: The strict shape findings of the message being checked (see ``feed``).
        self._shaped: List[Finding] = []
        #: The JSON object the last message record held, as ``feed`` decoded it (None when the
        #: line held none): a live recorder hands it to its waiters instead of decoding again.
        self.last_message: Optional[Dict[str, Any]] = None

    def feed(self, record: Record) -> List[Finding]:
        """Check one record; returns the findings it caused (also kept in ``findings``)."""
        if record.event is not None:
            if record.event == "eof":
                self._eof.add(record.sender)
            elif record.event == "stop" and record.sender == Party.CLIENT.value:
                self._agent_stopped = True
            elif record.event == "gave-up":
                self._gave_up.add(Party(record.sender))
            elif record.event == "oversize":
                # spec-gap oversize-line: the receiver answers -32600, under the line's id if it
                # could read it from the line's first or last bytes, else with id null.
                self._owed_oversize[other(Party(record.sender))] += 1
            return []
        index = self.messages
        self.messages += 1
        sender = Party(record.sender)
        self.last_message = None
        self._shaped = []
        out = list(self._check_message(sender, record.raw or b"", index))
        if self._shaped:
            # One finding per sentence broken: where a rule sees the field missing that the
            # strict shape reported (session/load without cwd: SETUP-04), the shape's finding,
            # which names the path, stands for both.
            shaped = {(f.clause, f.blame) for f in self._shaped}
            out = [f for f in out if (f.clause, f.blame) not in shaped or f in self._shaped]
        self._received[other(sender)] += 1
        self.findings.extend(out)
        return out

    def finish(self) -> Report:
        """The report, with the findings only the end shows (requests never answered...).

        Idempotent: the first call closes the judgement; records fed later are not in it.
        """
        if self._report is None:
            # The transcript ended cleanly when the client closed the agent's input.
            complete = "client" in self._eof
            owed = self.state.finish(complete=complete)
            if self._agent_stopped:
                # spec-gap stopped-agent: an agent its client stopped while it was still at work
                # (a turn whose model keeps it busy past the client's patience) did not end
                # without answering (RPC-06) or releasing (TERM-07): it was cut off.
                owed = [f for f in owed if f.blame != Party.AGENT]
            for party in self._gave_up:
                # spec-gap gave-up: a party that stopped waiting at a deadline of its own (no spec
                # sentence sets one) and then ended the connection cut its peer off too: an agent
                # that exits at that end of input does what TRANSPORT-10 asks of it.
                owed = [f for f in owed if f.blame != other(party)]
            self.findings.extend(owed)
            self._report = Report(findings=list(self.findings), messages=self.messages)
        return self._report

    # -- layer 1: the line -----------------------------------------------------------------------

    def _check_message(self, sender: Party, raw: bytes, index: int) -> Iterable[Finding]:
        if envelope.blank(raw):
            return  # spec-gap blank-line: carries nothing; receivers skip it
        verdict, message = parse_line(sender, raw)
        self.last_message = message  # the one decoding of the line, for a live recorder's waiters
        if verdict is not None:
            # spec RPC-10, RPC-11: the receiver answers each unreadable line with id null
            # (spec-gap malformed-json: -32700 for a line that is not JSON).
            self._owed_null[other(sender)] += 1
            was_cut = self._cut[sender]
            self._cut[sender] = verdict.opens or verdict.continues
            if verdict.continues and was_cut:
                return  # the cut was reported at its first line
            yield finding(verdict.clause, sender, verdict.message, index)
            return
        self._cut[sender] = False
        assert message is not None  # no verdict: the line held a JSON object
        if nesting(raw, MAX_DEPTH):
            # spec-gap nesting-bound: deeper than a receiver need parse (RFC 8259, 9); one that
            # refuses it answers -32700 with id null, as acpref does, and is not blamed for it.
            self._owed_null[other(sender)] += 1
        yield from self._check_envelope(sender, message, index)

    # -- layer 2: envelope and shape -------------------------------------------------------------

    def _check_envelope(
        self, sender: Party, message: Dict[str, Any], index: int
    ) -> Iterable[Finding]:
        env = envelope.inspect(message)
        if env.kind is envelope.RESPONSE:
            # What makes a response unusable (RPC-05, RPC-09) the rules report, as they see it.
            theirs = envelope.response_faults(message)
            for fault in env.faults:
                if fault not in theirs:
                    yield finding(fault.clause, sender, fault.message, index)
            if env.id is envelope.NO_ID:
                # spec-gap response-without-id: it answers no request, and its receiver owes
                # nothing for it (a receiver that answers it -32600 with id null is not blamed).
                self._owed_null[other(sender)] += 1
                return
            yield from self._check_response(sender, message, index)
            return
        for fault in env.faults:
            yield finding(fault.clause, sender, fault.message, index)
        answer = env.answer
        # A call the rules can read: a request or notification with a string method.
        is_call = envelope.kind_of(message) in (envelope.REQUEST, envelope.NOTIFICATION)
        if answer is not None and not (is_call and _valid_id(env.id)):
            # spec RPC-10, RPC-11: a line the rules never see as a request is answered by its
            # receiver, under its id when it can be read, else with id null.
            reply_id = answer[0]
            if reply_id is None:
                self._owed_null[other(sender)] += 1
            else:
                self._owed_ids[other(sender)].add(reply_id)
        if is_call:
            yield from self._check_call(sender, message, index)

    def _check_call(self, sender: Party, message: Dict[str, Any], index: int) -> Iterable[Finding]:
        method = message["method"]
        is_request = "id" in message
        params = message.get("params")
        if params is None or isinstance(params, dict):  # else RPC-02, from the envelope
            shape = list(self._check_shape(sender, method, "params", params, index))
            yield from (f for _, f in shape)
            valid_id = _valid_id(message.get("id"))  # else RPC-02: no answer can match it
            if is_request and valid_id and shape and all(only_meta for only_meta, _ in shape):
                self._meta_only[(sender, message.get("id"))] = index
            yield from _check_meta(sender, method, "params", params, index)
        request_id = message.get("id")
        if is_request and _valid_id(request_id) and request_id in self.state.outstanding[sender]:
            # spec-gap duplicate-id: judged, but not recorded over the request still in flight;
            # its refusal (an error under the same id) is expected once.
            yield from self.state.check(sender, message, index)
            self._refusals[other(sender)][request_id] = (
                self._refusals[other(sender)].get(request_id, 0) + 1
            )
            return
        yield from self.state.observe(sender, message, index)
        if not is_request:
            receiver = other(sender)
            self._notified[receiver].append((self._received[receiver], index, method))

    def _check_response(
        self, sender: Party, message: Dict[str, Any], index: int
    ) -> Iterable[Finding]:
        request_id = message["id"]
        requester = other(sender)
        request = (
            self.state.outstanding[requester].get(request_id) if _valid_id(request_id) else None
        )
        error = message.get("error")
        # The method whose result this answer carries if it is the second half of a swap (RPC-07).
        swapped = self._swapped[requester].pop(request_id, None) if request is not None else None
        swap: Optional[List[Finding]] = None
        if (
            request is not None
            and "result" in message
            and "error" not in message
            # spec INIT-06: an initialize answer naming another major version follows that
            # version's schema, not this one (the rules judge its protocolVersion only).
            and not (request.method == "initialize" and _other_version(message["result"]))
        ):
            method, result = request.method, message["result"]
            shape = [f for _, f in self._check_shape(sender, method, "result", result, index)]
            if self._shaped:  # the result is not one of its request's: another one's?
                swap = self._swap(sender, request_id, method, result, swapped, index)
            if swap is None:
                yield from shape
                yield from _check_meta(sender, method, "result", result, index)
            else:
                self._shaped = []  # filed as the swap, not as the shape it breaks here
                yield from swap
        elif _well_formed_error(message):
            yield from (f for _, f in self._check_shape(sender, None, "error", error, index))
        meta_index = (
            self._meta_only.pop((requester, request_id), None) if request is not None else None
        )
        if (
            meta_index is not None
            and isinstance(error, dict)
            and error.get("code") == ErrorCode.INVALID_PARAMS
        ):
            # spec EXT-02: unknown or malformed _meta never causes an error.
            yield finding(
                "EXT-02", sender, f"request #{meta_index} refused -32602 for its _meta alone", index
            )
        refusals = self._refusals[sender]
        if "error" in message and _valid_id(request_id) and refusals.get(request_id):
            refusals[request_id] -= 1  # the refusal of a duplicate id: the original still waits
            return
        found = self.state.observe(sender, message, index)
        if swap is not None:
            return  # what the rules read into another request's result is no finding of its own
        if request is None:
            found = self._judge_stray(sender, message, index, found)
        yield from found

    def _swap(
        self,
        sender: Party,
        request_id: Any,
        method: str,
        result: Any,
        swapped: Optional[str],
        index: int,
    ) -> Optional[List[Finding]]:
        """A result that is not one of its request's, but is one of another request in flight:
        the answers were swapped. Returns the findings of the swap (one at its first half, none
        at its second), or None when the result answers no other request.

        spec RPC-07: responses are correlated by id, not by arrival order. An answer under the
        id of request A that fits request B, sent the same way and still in flight, is B's answer
        (and the answer under B's id then fits A): one finding, under RPC-07, not the shape each
        result breaks as the answer it was not meant to be (SETUP-02, LIST-02...).
        """
        if swapped is not None and _fits(swapped, result):
            return []  # the other half of a swap, filed at its first half
        requester = other(sender)
        for other_id, other_request in self.state.outstanding[requester].items():
            if other_id != request_id and _fits(other_request.method, result):
                self._swapped[requester][other_id] = method
                text = (
                    f"the answer to {method} request {request_id!r} is the result of "
                    f"{other_request.method} request {other_id!r}, in flight at the same time"
                )
                # spec RPC-07: the answer carries the id of the request it answers.
                return [finding("RPC-07", sender, text, index)]
        return None

    def _judge_stray(
        self, sender: Party, message: Dict[str, Any], index: int, found: List[Finding]
    ) -> List[Finding]:
        """A response that matches no request in flight: due, a duplicate, or an answer to what?"""
        request_id = message.get("id")
        if request_id is None and "error" in message and self._owed_null[sender] > 0:
            # spec RPC-10, RPC-11: the error for a line that could not be read has id null; it
            # answers that line, not again a request with id null answered before it.
            self._owed_null[sender] -= 1
            return [f for f in found if f.clause != "RPC-06"]
        if any(f.clause == "RPC-06" for f in found):
            return found  # answered more than once: the rules said so
        error = message.get("error")
        if (
            self._owed_oversize[sender] > 0
            and isinstance(error, dict)
            and error.get("code") == ErrorCode.INVALID_REQUEST
        ):
            # spec-gap oversize-line: the refusal of a line over the bound.
            self._owed_oversize[sender] -= 1
            return [f for f in found if f.clause != "RPC-04"]
        if "error" in message and _valid_id(request_id) and request_id in self._owed_ids[sender]:
            # spec RPC-11: an invalid request whose id could be read is refused under that id.
            self._owed_ids[sender].discard(request_id)
            return [f for f in found if f.clause != "RPC-04"]
        if request_id is None and "error" in message and self._owed_ids[sender]:
            # spec RPC-11: ... or with id null (JSON-RPC 2.0: "If there was an error in detecting
            # the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null").
            self._owed_ids[sender].pop()
            return [f for f in found if f.clause != "RPC-04"]
        unknown_id = any(f.clause == "RPC-04" for f in found)
        if "error" in message and self._owed_ids[sender] and unknown_id:
            return self._refusal_under_another_id(sender, request_id, index, found)
        recent = self._notified[sender]
        while recent and self._received[sender] - recent[-1][0] > _RECENT_WINDOW:
            recent.pop()
        # A wrong id while requests of the peer wait for an answer is a wrong id (RPC-04); a
        # stray answer right after notifications answers one of them (OVERVIEW-09).
        owes_answers = request_id is not None and bool(self.state.outstanding[other(sender)])
        if recent and not owes_answers:
            _, notified_at, method = recent.pop()
            found = [f for f in found if f.clause != "RPC-04"]
            # spec OVERVIEW-09: a notification is never answered, not even with an error.
            found.append(
                finding(
                    "OVERVIEW-09",
                    sender,
                    f"response id {request_id!r} answers the {method} notification #{notified_at}",
                    index,
                )
            )
        elif request_id is None:
            # spec RPC-04: a response echoes the id of a request in flight.
            found.append(
                finding("RPC-04", sender, "response with id null matches no request", index)
            )
        return found

    def _refusal_under_another_id(
        self, sender: Party, request_id: Any, index: int, found: List[Finding]
    ) -> List[Finding]:
        """spec RPC-11: an error under an id no request carries, while an invalid request waits
        for its refusal, is that refusal under neither its id nor null. RPC-04's sentence binds
        the answer to a Request object, which the invalid one is not."""
        self._owed_ids[sender].pop()
        found = [f for f in found if f.clause != "RPC-04"]
        text = f"error id {request_id!r} is neither the invalid request's id nor null"
        return [*found, finding("RPC-11", sender, text, index)]

    def _check_shape(
        self, sender: Party, method: Optional[str], part: str, value: Any, index: int
    ) -> Iterable[Tuple[bool, Finding]]:
        """Strict shape findings, each with a flag: True when it lies under a ``_meta``."""
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
        judged: Dict[str, Any] = {"blame": sender, "index": index, "newer_spec": self.newer_spec}
        if method == "session/update" and part == "params":
            kind = _update_kind(value)
            tags = s.UNIONS[s.SessionUpdate].by_tag
            if isinstance(kind, str) and kind not in tags:
                # spec SCHEMA-24: the stable SessionUpdate is a closed oneOf (the live sides keep
                # an unknown kind as ``Unknown``; the strict codec does too, so it is judged here).
                what = ("session/update", part, "params.update.sessionUpdate", repr(kind))
                yield False, undefined_value(*what, ", ".join(map(repr, tags)), **judged)
        try:
            codec.decode(value, model, strict=True, root=part)
        except codec.DecodeError as exc:
            unknown = [(p, m) for p, m in exc.errors if m.startswith("unknown key")]
            undefined = [(p, m) for p, m in exc.errors if codec.UNDEFINED_VALUE in m]
            other_errors = [
                (p, m)
                for p, m in exc.errors
                if not m.startswith("unknown key") and codec.UNDEFINED_VALUE not in m
            ]
            for path, msg in undefined:
                # A value or variant tag outside a closed set of the carried schemas (ToolKind,
                # StopReason, a content type, a permission outcome...).
                received, _, allowed = msg.partition(f" {codec.UNDEFINED_VALUE} ")
                yield False, undefined_value(method, part, path, received, allowed, **judged)
            if method == "session/update" and _is_mode_update(value):
                # spec SCHEMA-03: the docs' `modeId` is one finding (the wrong name), not two.
                renamed = [(p, m) for p, m in unknown if p.endswith(".modeId")]
                unknown = [(p, m) for p, m in unknown if not p.endswith(".modeId")]
                other_errors = other_errors or renamed
            if other_errors:
                path, msg = other_errors[0]
                clause = content_clause(value, path, part) or shape_clause(method, part, value, path)
                more = f" (+{len(other_errors) - 1} more)" if len(other_errors) > 1 else ""
                only_meta = all("._meta" in p for p, _ in other_errors)
                text = f"{method or 'error'} {part}: {path}: {msg}{more}"
                self._shaped.append(finding(clause, sender, text, index))  # see ``feed``
                yield only_meta, self._shaped[-1]
            if unknown:
                # spec EXT-04 forbids custom fields at the root of a spec type, but a key the
                # stable schema lacks may be a field of the unstable or of a newer schema: a
                # forward-compatibility warning saying which, never a violation (compat.py).
                root_type = getattr(model, "__name__", None)
                keys = "; ".join(describe_unknown_key(p, root_type) for p, _ in unknown)
                text = f"{method or 'error'} {part} has keys the stable schema lacks: {keys}"
                yield False, finding("EXT-04", sender, text, index, level=WARNING)


def _fits(method: str, result: Any) -> bool:
    """True when ``result`` is, exactly, a result of ``method``: it decodes strictly, with no key
    the schema lacks, and carries at least one field (``{}`` is a result of every method whose
    result fields are all optional, so it tells nothing of which request it answers)."""
    row = lookup(method)
    model = row.result if row is not None else None
    if model is None or not isinstance(result, dict) or not set(result) - {"_meta"}:
        return False
    try:
        codec.decode(result, model, strict=True, root="result")
    except codec.DecodeError:
        return False
    return True


def _well_formed_error(message: Dict[str, Any]) -> bool:
    """The rules already report a malformed error object (RPC-09): judge its shape only if not."""
    return "error" in message and not envelope.response_faults({"error": message["error"]})


def _check_meta(
    sender: Party, method: Optional[str], part: str, value: Any, index: int
) -> Iterable[Finding]:
    """spec EXT-03: the root ``_meta`` keys traceparent, tracestate, baggage are W3C trace context."""
    meta = value.get("_meta") if isinstance(value, dict) else None
    if not isinstance(meta, dict):
        return
    traceparent = meta.get("traceparent")
    if "traceparent" in meta and not (
        isinstance(traceparent, str) and _TRACEPARENT.match(traceparent)
    ):
        # spec EXT-03: traceparent is reserved for a W3C trace context header value.
        yield finding(
            "EXT-03", sender, f"{method} {part}._meta.traceparent {traceparent!r} is not W3C", index
        )
    for key in ("tracestate", "baggage"):
        if key in meta and not isinstance(meta[key], str):
            # spec EXT-03: tracestate and baggage are W3C header values (strings).
            yield finding(
                "EXT-03", sender, f"{method} {part}._meta.{key} is not a W3C string", index
            )


def _update_kind(params: Any) -> Any:
    update = params.get("update") if isinstance(params, dict) else None
    return update.get("sessionUpdate") if isinstance(update, dict) else None


def _is_mode_update(params: Any) -> bool:
    update = params.get("update") if isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") == "current_mode_update"


def _other_version(value: Any) -> bool:
    version = value.get("protocolVersion") if isinstance(value, dict) else None
    return not _bad_version(value) and version != PROTOCOL_VERSION


def validate(transcript: Union[str, Iterable[Any]], *, newer_spec: bool = False) -> Report:
    """Every violation and warning in a transcript (a path, or records, dicts or JSON lines).

    ``newer_spec``: a value no carried schema defines is a warning, not a violation (a peer
    built on a newer spec; ``acpref validate --newer-spec``).
    """
    validator = Validator(newer_spec=newer_spec)
    for record in read_transcript(transcript):
        validator.feed(record)
    return validator.finish()
