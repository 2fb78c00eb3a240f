"""Forward compatibility: keys the stable schema does not define, and where they may come from.

Spec: extensibility.mdx says custom data goes in ``_meta``, never at the root of a spec type
(EXT-04); but a key the stable ``schema.json`` lacks may just as well be a field of a newer or of
the unstable schema (``schema.unstable.json``: ``sessionCapabilities.fork``, ``usage`` on a prompt
response...) that a peer built on a newer SDK sends. A transcript cannot tell the two apart, so
the oracle reports such keys as ``warning`` findings that say which they may be, never as
violations (spec_notes/oracle.md, "Forward compatibility").

``unstable.tsv`` lists the fields that only the unstable schema of the spec acpref implements
defines, on types both schemas define, with the property names that lead to each type (checked
against the spec's ``schema.unstable.json`` by ``tests/test_oracle_levels.py``).
"""

from __future__ import annotations

import functools
import re
from typing import Dict, FrozenSet, Optional, Tuple

__all__ = ["unstable_fields", "describe_unknown_key"]

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
