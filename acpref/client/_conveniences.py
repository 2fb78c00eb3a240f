"""The client side's keyword conveniences: sessions and turns by ids and plain values.

Spec: session-setup.mdx, session-list.mdx, prompt-turn.mdx; clauses SETUP-04, SETUP-11,
SETUP-20, SETUP-25, SETUP-29, OVERVIEW-06, LIST-08, LIST-10, LIST-11, PROMPT-19, SYSPROMPT-11.
Mixed into ``ClientSideConnection`` (``connection``), whose typed calls (``session_new``,
``session_prompt``...) take the schema's request models; these build those models from ids,
paths (made absolute) and strings, and call them.
"""

from __future__ import annotations

import os
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Union,
)

from .. import schema as s

if TYPE_CHECKING:  # pragma: no cover
    from .turns import PromptTurn

__all__ = ["Conveniences", "RESEND", "PromptContent"]

#: ``load_session`` / ``resume_session`` default: re-send the session's systemPrompt.
RESEND: Any = object()

PromptContent = Union[str, Sequence[Any]]


class Conveniences:
    """Keyword forms of the typed calls (``ClientSideConnection`` defines those)."""

    session_new: Callable[..., s.NewSessionResponse]
    session_load: Callable[..., s.LoadSessionResponse]
    session_resume: Callable[..., s.ResumeSessionResponse]
    session_prompt: Callable[..., s.PromptResponse]
    session_prompt_async: Callable[[s.PromptRequest], "PromptTurn"]
    session_cancel: Callable[[s.CancelNotification], None]
    session_set_mode: Callable[..., s.SetSessionModeResponse]
    session_set_config_option: Callable[..., s.SetSessionConfigOptionResponse]
    session_list: Callable[..., s.ListSessionsResponse]
    session_close: Callable[..., s.CloseSessionResponse]
    _system_prompt_of: Callable[[str], Any]


    def new_session(
        self,
        cwd: str,
        *,
        additional_directories: Iterable[str] = (),
        mcp_servers: Iterable[Any] = (),
        system_prompt: Optional[s.SystemPrompt] = None,
        timeout: Optional[float] = None,
    ) -> s.NewSessionResponse:
        """``session/new`` with ``cwd`` (and extra roots) made absolute (spec SETUP-25, SETUP-20).

        ``system_prompt`` (provisional) is sent only when given; the rules refuse it unless the
        agent advertised ``sessionCapabilities.systemPrompt`` (SYSPROMPT-02, SYSPROMPT-03).
        """
        dirs = _absolute_all(additional_directories)
        params = s.NewSessionRequest(
            cwd=os.path.abspath(cwd),  # spec SETUP-25, OVERVIEW-06: cwd is absolute
            additional_directories=dirs if dirs else s.UNSET,
            # spec SETUP-01, SETUP-29: an array, possibly empty, naming any MCP server the client
            # wants the agent to use (its own included).
            mcp_servers=list(mcp_servers),
            system_prompt=system_prompt if system_prompt is not None else s.UNSET,
        )
        return self.session_new(params, timeout=timeout)

    def load_session(
        self,
        session_id: str,
        cwd: str,
        *,
        additional_directories: Iterable[str] = (),
        mcp_servers: Iterable[Any] = (),
        system_prompt: Any = RESEND,
        timeout: Optional[float] = None,
    ) -> s.LoadSessionResponse:
        """``session/load`` of ``session_id`` in ``cwd`` (made absolute); the history is
        replayed as updates before this returns (spec SETUP-05). ``system_prompt`` defaults to
        the one the session was set up with (SYSPROMPT-11).
        """
        dirs = _absolute_all(additional_directories)
        params = s.LoadSessionRequest(
            session_id=session_id,
            cwd=os.path.abspath(cwd),
            additional_directories=dirs if dirs else s.UNSET,
            mcp_servers=list(mcp_servers),  # spec SETUP-04: sent, even empty
            system_prompt=self._system_prompt_of(session_id)
            if system_prompt is RESEND
            else system_prompt,
        )
        return self.session_load(params, timeout=timeout)

    def resume_session(
        self,
        session_id: str,
        cwd: str,
        *,
        additional_directories: Iterable[str] = (),
        mcp_servers: Iterable[Any] = (),
        system_prompt: Any = RESEND,
        timeout: Optional[float] = None,
    ) -> s.ResumeSessionResponse:
        """``session/resume`` of ``session_id`` in ``cwd`` (made absolute), without a replay.
        ``system_prompt`` defaults to the one the session was set up with (SYSPROMPT-11).
        """
        dirs = _absolute_all(additional_directories)
        params = s.ResumeSessionRequest(
            session_id=session_id,
            cwd=os.path.abspath(cwd),
            additional_directories=dirs if dirs else s.UNSET,
            mcp_servers=list(mcp_servers),  # spec SETUP-11: sent, even empty
            system_prompt=self._system_prompt_of(session_id)
            if system_prompt is RESEND
            else system_prompt,
        )
        return self.session_resume(params, timeout=timeout)

    def prompt(
        self, session_id: str, content: PromptContent, *, timeout: Optional[float] = None
    ) -> s.PromptResponse:
        """Send a prompt (a string is one text block) and wait for the turn to end."""
        return self.session_prompt(_prompt_request(session_id, content), timeout=timeout)

    def prompt_async(self, session_id: str, content: PromptContent) -> PromptTurn:
        """Send a prompt (a string is one text block) and return at once with a ``PromptTurn``."""
        return self.session_prompt_async(_prompt_request(session_id, content))

    def cancel(self, session_id: str) -> None:
        """Cancel the session's running turn (``session/cancel``, spec PROMPT-19); the turn
        still answers, with ``stopReason: "cancelled"``.
        """
        # spec PROMPT-19: any time during the turn, a notification naming the session.
        self.session_cancel(s.CancelNotification(session_id=session_id))

    def set_mode(
        self, session_id: str, mode_id: str, *, timeout: Optional[float] = None
    ) -> s.SetSessionModeResponse:
        """``session/set_mode`` by ids."""
        return self.session_set_mode(
            s.SetSessionModeRequest(session_id=session_id, mode_id=mode_id), timeout=timeout
        )

    def set_config_option(
        self,
        session_id: str,
        config_id: str,
        value: Union[str, bool],
        *,
        timeout: Optional[float] = None,
    ) -> s.SetSessionConfigOptionResponse:
        """``session/set_config_option`` by ids, with a select value (str) or a boolean."""
        params = s.SetSessionConfigOptionRequest(
            session_id=session_id, config_id=config_id, value=value
        )
        return self.session_set_config_option(params, timeout=timeout)

    def list_sessions(
        self, cwd: Optional[str] = None, *, timeout: Optional[float] = None
    ) -> Iterator[s.SessionInfo]:
        """Every session the agent lists, page after page (spec LIST-10, LIST-11)."""
        cursor: Any = s.UNSET
        while True:
            params = s.ListSessionsRequest(
                cwd=os.path.abspath(cwd) if cwd else s.UNSET, cursor=cursor
            )
            page = self.session_list(params, timeout=timeout)
            # spec LIST-08: what is listed is shown, never merged into a session's roots.
            yield from page.sessions
            if not isinstance(page.next_cursor, str):
                return  # spec LIST-10: no nextCursor is the end
            cursor = page.next_cursor  # spec LIST-11: echoed back untouched

    def close_session(
        self, session_id: str, *, timeout: Optional[float] = None
    ) -> s.CloseSessionResponse:
        """``session/close`` of ``session_id``; its running turn is cancelled with it."""
        return self.session_close(s.CloseSessionRequest(session_id=session_id), timeout=timeout)


def _absolute_all(paths: Iterable[str]) -> List[str]:
    # spec SETUP-20, OVERVIEW-06: every root we send is absolute; relative ones are made so.
    return [os.path.abspath(p) for p in paths]


def _prompt_request(session_id: str, content: PromptContent) -> s.PromptRequest:
    blocks = [s.TextContent(text=content)] if isinstance(content, str) else list(content)
    return s.PromptRequest(session_id=session_id, prompt=blocks)
