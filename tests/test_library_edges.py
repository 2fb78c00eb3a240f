"""The client and agent libraries' public surface refuses misuse clearly, and documents itself.

What a user of ``acpref.client`` and ``acpref.agent`` meets first: a string where a model was
meant, a command line given as one string, an enum printed in a message, a timeout, a method's
help. Decisions: spec_notes/decisions.md (shutdown-ladder for ``new_session``).
"""

from __future__ import annotations

import enum
import inspect
import sys
import threading
from pathlib import Path
from typing import Any, List

import pytest

import acpref.agent
import acpref.client
from acpref import schema as s
from acpref.agent import Agent, ClientHandle
from acpref.client import ClientSideConnection, ReferenceClient
from acpref.errors import RequestTimeout
from acpref.schema._base import WireEnum
from acpref.testing import memory_pair

ECHO = [sys.executable, "-m", "acpref", "echo"]
WAIT = 30.0


# -- enums print as their wire value ---------------------------------------------------------------


def _schema_enums() -> List[type]:
    return [
        obj
        for name in dir(s)
        if isinstance(obj := getattr(s, name), type)
        and issubclass(obj, enum.Enum)
        and issubclass(obj, str)
    ]


def test_every_string_enum_of_the_schema_prints_its_wire_value() -> None:
    enums = _schema_enums()
    assert s.StopReason in enums and s.ToolKind in enums
    for cls in enums:
        assert issubclass(cls, WireEnum), f"{cls.__name__} does not derive from WireEnum"
        for member in cls:
            assert str(member) == member.value, member
            assert f"{member}" == member.value and f"{member:>3}".strip() == member.value
    assert repr(s.StopReason.END_TURN) == "<StopReason.END_TURN: 'end_turn'>"


# -- the agent side refuses an update that is not a model --------------------------------------


class _Careless(Agent):
    """Sends a string as an update, then a real one; remembers what the first one raised."""

    def __init__(self, client: ClientHandle) -> None:
        super().__init__(client)
        self.raised: List[BaseException] = []

    def session_prompt(self, params: s.PromptRequest, turn: Any) -> s.StopReason:
        for wrong in ("hello", {"sessionUpdate": "agent_message_chunk"}):
            try:
                turn.update(wrong)
            except TypeError as exc:
                self.raised.append(exc)
        turn.say("fine")
        return s.StopReason.END_TURN


def test_an_update_that_is_not_a_model_is_refused_before_anything_is_sent() -> None:
    made: List[_Careless] = []

    def factory(client: ClientHandle) -> _Careless:
        made.append(_Careless(client))
        return made[0]

    driver = memory_pair(factory)
    driver.initialize()
    session = driver.new_session()
    turn = driver.prompt(session, "go")
    report = driver.close()
    assert turn.stop_reason == "end_turn"
    [agent] = made
    assert [type(e) for e in agent.raised] == [TypeError, TypeError]
    assert "not str: 'hello'" in str(agent.raised[0])
    # Only the real update went out, and the oracle saw nothing wrong.
    kinds = [type(u).__name__ for u in turn.updates]
    assert kinds == ["AgentMessageChunk"], kinds
    assert report.ok, report.format_text()


# -- the client side -------------------------------------------------------------------------------


class _Counting(ReferenceClient):
    def __init__(self) -> None:
        super().__init__()
        self.cancels: List[str] = []
        self.spoke = threading.Event()

    def on_cancel(self, session_id: str) -> None:
        self.cancels.append(session_id)
        super().on_cancel(session_id)

    def session_update(self, params: s.SessionNotification) -> None:
        super().session_update(params)
        if isinstance(params.update, s.AgentMessageChunk):
            self.spoke.set()


def test_session_prompt_has_one_deadline(tmp_path: Path) -> None:
    # It used to cancel at the deadline and then wait up to the timeout again (twice in all):
    # now the cancel goes out at the deadline and the call ends there.
    client = _Counting()
    with ClientSideConnection.spawn(client, ECHO) as conn:
        conn.initialize(timeout=WAIT)
        session = conn.new_session(str(tmp_path), timeout=WAIT).session_id
        with pytest.raises(RequestTimeout, match="it was cancelled"):
            conn.prompt(session, "/wait", timeout=0.5)
        assert client.cancels == [session]


def test_spawn_refuses_a_string_command_line() -> None:
    with pytest.raises(TypeError, match=r"not a single string.*\['acpref', 'echo'\]"):
        ClientSideConnection.spawn(ReferenceClient(), "acpref echo")  # type: ignore[arg-type]


# -- every public method says what it does -------------------------------------------------------


@pytest.mark.parametrize("module", [acpref.client, acpref.agent], ids=lambda m: m.__name__)
def test_every_public_method_has_a_docstring(module: Any) -> None:
    missing = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not inspect.isclass(obj):
            if inspect.isfunction(obj) and not (obj.__doc__ or "").strip():
                missing.append(name)
            continue
        for attr, value in vars(obj).items():
            if attr.startswith("_"):
                continue
            fn = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
            if inspect.isfunction(fn) and not (fn.__doc__ or "").strip():
                missing.append(f"{obj.__name__}.{attr}")
    assert missing == []
