"""The two lines both conformance checks write that no conforming peer sends, and how the answer
to each is judged: one rule for ``check-agent`` and ``check-client``.

Spec: JSON-RPC 2.0, sections 5 and 5.1 (``spec_notes/spec/jsonrpc-2.0.md``). Its one keyworded
sentence on these answers is about their id: "If there was an error in detecting the id in the
Request object (e.g. Parse error/Invalid Request), it MUST be Null." (RPC-10, RPC-11). The codes
(-32700, -32600) are a table, and the answers to an unparseable line and to an invalid Request
object are examples, without a keyword; "When a rpc call is made, the Server MUST reply" binds a
Request object, which neither line is. So a missing answer, or another code, is acpref's
reading: ``spec-gap:malformed-json`` (spec_notes/decisions.md).
"""

from __future__ import annotations

from typing import Any, Dict, Protocol, Tuple

from ..errors import ErrorCode

__all__ = ["UNPARSED", "INVALID_REQUEST", "judge_bad_lines"]

#: A line that is not JSON.
UNPARSED = b"this is not JSON\n"
#: Valid JSON that is no valid Request object: its id can be read, its method is not a string.
INVALID_REQUEST = b'{"jsonrpc":"2.0","id":"acpref-bad","method":42}\n'


class _Judge(Protocol):
    def check(self, clause: str, ok: bool, evidence: str) -> bool: ...

    def skip(self, clause: str, reason: str) -> None: ...


def judge_bad_lines(judge: _Judge, unparsed: Dict[str, Any], invalid: Dict[str, Any]) -> None:
    """Judge the answers to ``UNPARSED`` and ``INVALID_REQUEST`` (``{"no answer": why}`` when
    none came): each answer's id by its sentence, the code and a missing answer as a gap."""
    # spec RPC-10: the answer to a line whose id cannot be read has id null (present, and null).
    _judge_id(judge, "RPC-10", unparsed, (None,), "an unparseable line")
    # spec RPC-11: a request that is no valid Request object is answered under its id, or null.
    _judge_id(judge, "RPC-11", invalid, ("acpref-bad", None), "a request whose method is 42")
    wrong = [
        f"{what} was answered {_shown(answer)}, not {wanted}"[:300]
        for what, answer, wanted in (
            ("an unparseable line", unparsed, ErrorCode.PARSE_ERROR),
            ("a request whose method is 42", invalid, ErrorCode.INVALID_REQUEST),
        )
        if _code(answer) != wanted
    ]
    # spec-gap malformed-json: JSON-RPC's table and examples answer -32700 and -32600, without a
    # keyword; a missing answer or another code is acpref's reading, not a MUST.
    judge.check("spec-gap:malformed-json", not wrong, "; ".join(wrong))


def _judge_id(
    judge: _Judge, clause: str, answer: Dict[str, Any], ids: Tuple[Any, ...], what: str
) -> None:
    if "no answer" in answer:
        judge.skip(clause, f"{what} got no answer to judge the id of (spec-gap:malformed-json)")
        return
    ok = "id" in answer and any(type(answer["id"]) is type(i) and answer["id"] == i for i in ids)
    wanted = " or ".join("null" if i is None else repr(i) for i in ids)
    where = "without an id" if "id" not in answer else f"under id {answer['id']!r}"
    judge.check(clause, ok, f"{what} was answered {where}: {_shown(answer)}, not under id {wanted}"[:400])


def _shown(answer: Dict[str, Any]) -> str:
    if "no answer" in answer:
        return f"nothing ({answer['no answer']})"
    return repr(answer)[:200]


def _code(answer: Any) -> Any:
    error = answer.get("error") if isinstance(answer, dict) else None
    return error.get("code") if isinstance(error, dict) else None
