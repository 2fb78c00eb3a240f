"""Checks on single values that several rules share: absolute paths, timestamps, line numbers.

Spec: overview.mdx (Argument requirements); clauses OVERVIEW-06, OVERVIEW-07, LIST-06.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["is_absolute_path", "is_iso8601", "is_one_based"]

_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
_ISO8601 = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?$"
)


def is_absolute_path(path: Any) -> bool:
    """True for an absolute POSIX path, or an absolute Windows path (drive or UNC).

    spec OVERVIEW-06: every file-system path in ACP params or results is absolute.
    """
    if not isinstance(path, str) or not path:
        return False
    return path.startswith("/") or bool(_WINDOWS_ABSOLUTE.match(path))


def is_iso8601(value: Any) -> bool:
    """True for an ISO 8601 date or date-time (spec LIST-06)."""
    return isinstance(value, str) and bool(_ISO8601.match(value))


def is_one_based(value: Any) -> bool:
    """True for a line number that can be 1-based: an integer >= 1 (spec OVERVIEW-07)."""
    return type(value) is int and value >= 1
