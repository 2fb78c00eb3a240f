"""Forward compatibility: keys the stable schema does not define, and values no carried schema does.

Spec: extensibility.mdx says custom data goes in ``_meta``, never at the root of a spec type
(EXT-04); but a key the stable ``schema.json`` lacks may just as well be a field of a newer or of
the unstable schema (``schema.unstable.json``: ``sessionCapabilities.fork``, ``usage`` on a prompt
response...) that a peer built on a newer SDK sends. A transcript cannot tell the two apart, so
the oracle reports such keys as ``warning`` findings that say which they may be, never as
violations (spec_notes/oracle.md, "Forward compatibility").

A *value* is another matter (``undefined_value``): a string where a closed set of the
carried schemas is due (a ``stopReason``, a ``sessionUpdate`` kind, a tool call ``status``, a
permission ``outcome``) that neither the stable schema nor its unstable schema defines. Keeping,
forwarding and warning about it is the live sides' virtue; an oracle that judges against the spec
it carries fails it, and says which spec that was and how to refresh it (``acpref spec-diff``).
For a peer built on a newer spec, the ``newer_spec`` option (``--newer-spec``) grades such values
as warnings instead (spec_notes/decisions.md, undefined-value).

``unstable.tsv`` lists the fields that only the unstable schema of the spec acpref implements
defines, on types both schemas define, with the property names that lead to each type (checked
against the spec's ``schema.unstable.json`` by ``tests/test_oracle_levels.py``).
"""

from __future__ import annotations

import functools
import re
from typing import Dict, FrozenSet, Optional, Tuple

from .findings import Finding, Party, finding
from .register import WARNING

__all__ = [
    "unstable_fields",
    "describe_unknown_key",
    "undefined_value",
    "value_clause",
    "SCHEMA_DATE",
]

#: The date of the stable schema the oracle judges against (``spec_notes/spec/SOURCE.md``:
#: ``schema.json`` and ``schema.unstable.json`` of ``@agentclientprotocol/sdk`` 2.4.0).
SCHEMA_DATE = "2026-11-02"

_STEP = re.compile(r"\.([^.\[]+)|\[\d+\]")


@functools.lru_cache(maxsize=None)
def unstable_fields() -> Dict[Tuple[str, str], FrozenSet[str]]:
    """``(type, field) -> property names that lead to the type`` for unstable-only fields."""
    from importlib import resources

    text = resources.files(__package__).joinpath("unstable.tsv").read_text(encoding="utf-8")
    out: Dict[Tuple[str, str], FrozenSet[str]] = {}
    for line in text.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 2 and fields[0]:
            parents = fields[2].split(",") if len(fields) > 2 and fields[2] else []
            out[(fields[0], fields[1])] = frozenset(parents)
    return out


def _unstable_type(path: str, root_type: Optional[str]) -> Optional[str]:
    """The type of the unstable schema that defines the last key of ``path``, if one does."""
    keys = [m.group(1) for m in _STEP.finditer("." + path)]
    keys = [k for k in keys if k is not None]
    if not keys:
        return None
    key = keys[-1]
    parent = keys[-2] if len(keys) >= 2 else None
    at_root = len(keys) == 2 and parent in ("params", "result")
    for (type_name, field), parents in unstable_fields().items():
        if field != key:
            continue
        if (at_root and type_name == root_type) or (parent is not None and parent in parents):
            return type_name
    return None


def describe_unknown_key(path: str, root_type: Optional[str]) -> str:
    """Where a key that the stable schema does not define may come from, in a few words."""
    type_name = _unstable_type(path, root_type)
    if type_name is not None:
        field = path.rsplit(".", 1)[-1]
        return f"{path} (unstable: schema.unstable.json {type_name}.{field})"
    return f"{path} (unknown: a newer schema's field, or custom data that belongs in _meta)"


def undefined_value(
    method: Optional[str],
    part: str,
    path: str,
    received: str,
    allowed: str,
    *,
    blame: Party,
    index: Optional[int],
    newer_spec: bool,
) -> Finding:
    """The oracle's finding on a value that no closed set of the carried schemas defines.

    ``received`` is the value as the peer wrote it (``'done'``), at ``path`` of the ``part``
    (params, result) of ``method``; ``allowed`` the set the carried schemas allow. It breaks the
    sentence that names the set, at that sentence's level (``value_clause``); with
    ``newer_spec`` it is a warning, for a peer built on a newer spec. The live sides keep such a
    value and warn either way (spec-gap forward-compatible).
    """
    judged = (
        f"{method or 'error'} {part}: {path} {received} is defined neither by the stable schema "
        f"of {SCHEMA_DATE} nor by its unstable schema (they allow {allowed})"
    )
    if newer_spec:
        text = f"{judged}: taken for a value of a newer spec (--newer-spec), a warning"
    else:
        text = (
            f"{judged}; judged against the spec acpref carries: for a peer built on a newer "
            "spec, `acpref spec-diff NEW_SCHEMA` lists what refreshing acpref's copy changes, "
            "and --newer-spec makes such values warnings"
        )
    clause = value_clause(method, part, path)
    return finding(clause, blame, text, index, level=WARNING if newer_spec else None)


def value_clause(method: Optional[str], part: str, path: str) -> str:
    """The clause a value outside a closed set of the schema breaks.

    spec-gap undefined-value: where a sentence with a keyword names the set, its clause; else
    only the schema's definition names the set, and the sentence broken is the transports' one.
    """
    if method == "session/prompt" and part == "result" and path == "result.stopReason":
        return "PROMPT-17"  # spec PROMPT-17: "it must specify the corresponding `StopReason`"
    # spec OVERVIEW-01: the agent (the client) "MUST NOT write anything ... that is not a valid
    # ACP message", and a value outside a closed set of schema.json makes no valid message.
    return "OVERVIEW-01"
