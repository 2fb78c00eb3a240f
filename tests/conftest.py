"""Shared test helpers: where the ACP spec lives.

The spec (``schema.json``, ``meta.json``, ``clauses.tsv`` and the ``v1/*.mdx`` pages) sits beside
the repository in ``../shared/spec``; ``ACPREF_SPEC_DIR`` points elsewhere. Tests that read it
skip, saying why, only when the directory is absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def find_spec_dir() -> Path:
    """The spec directory: ``$ACPREF_SPEC_DIR``, else ``<repo>/../shared/spec`` (may not exist)."""
    return Path(os.environ.get("ACPREF_SPEC_DIR") or REPO.parent / "shared" / "spec")


def missing_spec_reason() -> str:
    """Why a test that needs the spec was skipped."""
    return f"ACP spec not found at {find_spec_dir()} (set ACPREF_SPEC_DIR to the spec directory)"


def require_spec_dir() -> Path:
    """The spec directory, or skip the calling test with a clear message."""
    path = find_spec_dir()
    if not path.is_dir():
        pytest.skip(missing_spec_reason())
    return path


def load_schema_defs(name: str = "schema.json") -> dict[str, Any]:
    """The ``$defs`` of a schema file of the spec, or ``{}`` when absent (collection-time use)."""
    path = find_spec_dir() / name
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["$defs"]


@pytest.fixture
def spec_dir() -> Path:
    """The spec directory; the test is skipped if it is absent."""
    return require_spec_dir()
