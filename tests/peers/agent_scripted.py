"""Small ``Agent`` subclasses for the agent-side tests, served in-process (``in_process``).

* ``Scripted``: its prompt turn runs a function the test gives; any keyword sets an attribute
  (``auth_required=True``, ``capabilities=lambda: ...``), so that a test states exactly the
  agent it needs.
* ``Modal``: a scripted agent with modes and a mode config option (CONFIG-22, CONFIG-24).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from acpref import schema as s
from acpref.agent import Agent, PromptTurn

Run = Callable[[s.PromptRequest, PromptTurn], Any]


class Scripted(Agent):
    """An agent whose prompt turn runs the function a test gives it."""

    def __init__(self, client: Any, run: Optional[Run] = None, **kwargs: Any) -> None:
        super().__init__(client)
        self.run = run or (lambda params, turn: s.StopReason.END_TURN)
        self.opened: List[str] = []
        for name, value in kwargs.items():
            setattr(self, name, value)

    def session_prompt(self, params: s.PromptRequest, turn: PromptTurn) -> Any:
        return self.run(params, turn)

    def session_opened(self, session_id: str) -> None:
        self.opened.append(session_id)
        self.client.update(session_id, s.AvailableCommandsUpdate(available_commands=[]))


class Modal(Scripted):
    """A scripted agent with modes and a mode config option kept in step (CONFIG-24)."""

    def initial_modes(self, session: Any) -> Any:
        return s.SessionModeState(
            current_mode_id="ask",
            available_modes=[
                s.SessionMode(id="ask", name="Ask"),
                s.SessionMode(id="code", name="Code"),
            ],
        )

    def initial_config_options(self, session: Any) -> Any:
        return [
            s.SessionConfigOption(
                id="mode",
                name="Mode",
                category=s.SessionConfigOptionCategory.MODE,
                kind=s.SessionConfigSelect(
                    current_value="ask",
                    options=[
                        s.SessionConfigSelectOption(value="ask", name="Ask"),
                        s.SessionConfigSelectOption(value="code", name="Code"),
                    ],
                ),
            )
        ]
