"""Shared test helpers: where the ACP spec lives.

The spec (``schema.json``, ``schema.unstable.json``, ``meta.json``, ``clauses.tsv`` and the
``v1/`` pages) is carried in the repository at ``spec_notes/spec/`` (its ``SOURCE.md`` says where
each file came from); ``ACPREF_SPEC_DIR`` points elsewhere, for trying a newer copy. The tests
never read a spec beside the repository. A missing spec directory is an error, not a skip: a
skipped parity or example test would hide a thousand tests behind one line of the summary.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

#: A rule of the core that raises on a message is a bug the tests must see, not a skipped rule
#: (``acpref._core.state._rule_failed``): here, and in every ``acpref`` command the tests start.
os.environ["ACPREF_RULE_ERRORS"] = "raise"
from acpref._core import state as _core_state  # noqa: E402

_core_state.RAISE_RULE_ERRORS = True

REPO = Path(__file__).resolve().parent.parent
#: The spec carried in the repository.
CARRIED_SPEC = REPO / "spec_notes" / "spec"


def find_spec_dir() -> Path:
    """The spec directory: ``$ACPREF_SPEC_DIR``, else the carried ``spec_notes/spec``."""
    return Path(os.environ.get("ACPREF_SPEC_DIR") or CARRIED_SPEC)


def missing_spec_reason() -> str:
    """What is wrong when the spec directory is absent."""
    return (
        f"ACP spec not found at {find_spec_dir()}: the repository carries it in spec_notes/spec "
        "(unset ACPREF_SPEC_DIR, or point it at a complete spec directory)"
    )


def require_spec_dir() -> Path:
    """The spec directory; a missing one fails the calling test (it is part of the repository)."""
    path = find_spec_dir()
    if not path.is_dir():
        pytest.fail(missing_spec_reason())
    return path


def load_schema_defs(name: str = "schema.json") -> dict[str, Any]:
    """The ``$defs`` of a schema file of the spec (collection-time use)."""
    path = require_spec_dir() / name
    return json.loads(path.read_text(encoding="utf-8"))["$defs"]


def pytest_configure(config: pytest.Config) -> None:
    # Collection reads the spec (parity and example tests are parametrized by it): without it,
    # stop at once with the reason instead of collecting a fraction of the suite.
    if not (find_spec_dir() / "schema.json").is_file():
        raise pytest.UsageError(missing_spec_reason())
    _share_bytecode_with_the_children()


_PYC_CACHE: list[str] = []


def _share_bytecode_with_the_children() -> None:
    """With ``PYTHONDONTWRITEBYTECODE`` set (as CI images often do), every Python process the
    suite starts (agents, clients, proxies: over a thousand) compiles acpref from source again,
    a third of its start-up. The children then share one bytecode cache of this run's own,
    outside the checkout, removed at the end; nothing else about them changes."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        _PYC_CACHE.append(tempfile.mkdtemp(prefix="acpref-tests-pyc-"))
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = _PYC_CACHE[0]


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _PYC_CACHE:
        shutil.rmtree(path, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist, nothing calls it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers per CPU (``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides it).

    Most tests start processes (agents, clients, proxies) and wait on them, so a worker's CPU
    is idle for a good part of its time; a second worker per CPU fills it. Each worker also
    collects the whole suite itself, so more workers than that only add collection. The
    measurements are in benchmarks/README.md, "The test suite on two cores"."""
    forced = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if forced:
        return int(forced)
    affinity = getattr(os, "sched_getaffinity", None)
    cpus = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return 2 * cpus


#: Files whose tests take seconds each (a fresh venv, a wheel, a mutant's own test run, a run
#: of every broken peer, the CLI's examples, soak and fuzz runs). Under pytest-xdist they are
#: handed out first, and idle workers take work from busy ones (``--dist worksteal``,
#: pyproject's addopts): a run then ends on the many short tests, on every worker at once.
_HEAVY_FIRST = frozenset(
    {
        "test_mutations.py",
        "test_readme.py",
        "test_packaging.py",
        "test_check_agent.py",
        "test_check_client.py",
        "test_cli_help.py",
        "test_cli_tools.py",
        "test_load.py",
        "test_junit.py",
        "test_hostile.py",
        "test_remembered.py",
        "test_fuzz.py",
        "test_oracle_levels.py",
        "test_spec_register.py",
        "test_plugin.py",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    # Only the order changes, the same way in every worker (xdist requires one collection order);
    # a serial run keeps the files' order.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.path.name not in _HEAVY_FIRST)


@pytest.fixture
def spec_dir() -> Path:
    """The spec directory."""
    return require_spec_dir()
