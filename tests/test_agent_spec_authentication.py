"""Spec tests of the agent side for authentication.mdx: one test per clause, named after it.

Clauses: the AUTH clauses of clauses.tsv whose side is ``agent`` or ``both``. Most tests drive
the echo agent as a subprocess (one per module, a fresh session per test, no new finding
allowed); the others serve a small scripted agent, or the echo agent with other client
capabilities, in this process. Fixtures and helpers: ``tests/peers/agent_spec_kit.py``. Clauses
not tested, and why: spec_notes/agent.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from acpref import codec
from acpref import schema as s
from acpref.echo import AUTH_METHOD_ID
from acpref.errors import ErrorCode

sys.path.insert(0, str(Path(__file__).parent / "peers"))
from agent_client import (  # noqa: E402
    EMPTY_CAPS,
    TestClient,
    spawn_echo,
)
from agent_spec_kit import (  # noqa: E402
    echo,
    error_code,
    local,
    new_session,
    raw_init,
    scripted,
    shared,
)

__all__ = ["echo", "local", "shared"]  # the fixtures, for pytest


# == authentication.mdx ===========================================================================


def test_AUTH_01_auth_methods_have_id_and_name(echo: TestClient) -> None:
    methods = raw_init(echo)["authMethods"]
    assert methods and all(m["id"] and m["name"] for m in methods)


def test_AUTH_02_logout_is_advertised(echo: TestClient) -> None:
    assert raw_init(echo)["agentCapabilities"]["auth"]["logout"] == {}
    assert echo.request("logout", s.LogoutRequest()) == s.LogoutResponse()


def test_AUTH_04_agent_method_has_no_type(echo: TestClient) -> None:
    method = raw_init(echo)["authMethods"][0]
    assert "type" not in method
    assert isinstance(codec.decode(method, s.AuthMethod), s.AuthMethodAgent)


def test_AUTH_05_no_terminal_method_without_auth_terminal(local: Any) -> None:
    methods = [s.AuthMethodTerminal(id="t", name="T", args=["--login"])]
    client = local(scripted(auth_methods=lambda: methods), caps=EMPTY_CAPS)
    assert client.init.auth_methods == []


@pytest.fixture(scope="module")
def guarded() -> Iterator[TestClient]:
    client = spawn_echo("--require-auth")
    yield client
    client.close()


def test_AUTH_09_authenticate_answers_empty_object(guarded: TestClient) -> None:
    guarded.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    answers = [m for d, m in guarded.wire if d == "in" and "result" in m]
    assert answers[-1]["result"] == {}


def test_AUTH_10_authenticated_session_methods_work(guarded: TestClient, tmp_path: Path) -> None:
    guarded.request("logout", s.LogoutRequest())
    assert error_code(lambda: guarded.new_session(str(tmp_path))) == ErrorCode.AUTH_REQUIRED
    guarded.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    assert guarded.new_session(str(tmp_path)).session_id


def test_AUTH_16_logout_answers_empty_object(guarded: TestClient) -> None:
    guarded.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    guarded.request("logout", s.LogoutRequest())
    assert [m for d, m in guarded.wire if d == "in" and "result" in m][-1]["result"] == {}


def test_AUTH_17_after_logout_auth_is_required_again(guarded: TestClient, tmp_path: Path) -> None:
    guarded.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    guarded.request("logout", s.LogoutRequest())
    assert error_code(lambda: guarded.new_session(str(tmp_path))) == ErrorCode.AUTH_REQUIRED


def test_AUTH_18_old_sessions_need_auth_again_after_logout(
    guarded: TestClient, tmp_path: Path
) -> None:
    guarded.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    sid = new_session(guarded, tmp_path)
    guarded.request("logout", s.LogoutRequest())
    # spec-gap logout-sessions: our choice: existing sessions answer -32000 until authenticate.
    assert error_code(lambda: guarded.prompt(sid, "hi")) == ErrorCode.AUTH_REQUIRED
    guarded.request("authenticate", s.AuthenticateRequest(method_id=AUTH_METHOD_ID))
    assert guarded.prompt(sid, "hi").stop_reason == s.StopReason.END_TURN
    assert guarded.findings == []
