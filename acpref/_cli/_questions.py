"""The questions ``acpref client`` asks the user on the terminal: a permission, a form, a URL.

Spec: tool-calls.mdx (Requesting Permission), elicitation.mdx; clauses TOOL-08, ELICIT-01 ..
ELICIT-37 as cited. Each runs on the main thread (``Console.ask_on_main`` hands it over from the
connection thread that received the request) and gives up once its request is cancelled.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Optional

from .. import schema as s
from ..client.forms import fields_of, parse, validate
from .._tools.terminal import describe_url, inert, permission_lines
from ._console import Console

__all__ = ["permission", "elicit"]


def permission(
    console: Console,
    request: s.RequestPermissionRequest,
    cancelled: threading.Event,
    title: Optional[str],
) -> Optional[str]:
    for line in permission_lines(request, title):
        console.say(line)
    while not cancelled.is_set():
        answer = console.read_line(f"choose 1-{len(request.options)} (Enter: reject): ", cancelled)
        if answer is None:
            return None
        answer = answer.strip()
        if not answer:
            rejects = [
                o for o in request.options if "reject" in str(getattr(o.kind, "value", o.kind))
            ]
            return rejects[0].option_id if rejects else None
        if answer.isdigit() and 1 <= int(answer) <= len(request.options):
            return request.options[int(answer) - 1].option_id
        console.say("  please type the number of an option")
    return None


def elicit(
    console: Console, agent: str, request: s.CreateElicitationRequest, cancelled: threading.Event
) -> Any:
    # spec ELICIT-01, ELICIT-04: who asks, and what for; decline and cancel are always offered.
    # spec ELICIT-37: the message is plain text: no URL in it is made clickable (no hyperlink).
    console.say(f"[question from {agent}] {inert(request.message)}")
    mode = request.mode
    if isinstance(mode, s.ElicitationUrlMode):
        # spec ELICIT-03: the whole URL and its host are shown, and consent asked, before anything.
        for line in describe_url(mode.url):
            console.say(line)
        # spec ELICIT-35: acpref opens nothing: the user opens the URL in their own browser, out
        # of sight of acpref and of the agent's model.
        console.say(
            "  acpref never opens it for you: if you accept, open it yourself in your browser."
        )
        answer = console.read_line("accept (a), decline (d) or cancel (Enter)? ", cancelled)
        return _action((answer or "").strip().lower())
    assert isinstance(mode, s.ElicitationFormMode)  # registered for form and url; url returned
    # spec ELICIT-01: the way out is named before the first field is asked.
    console.say("  answer each field; then send, edit, decline or cancel (Ctrl-C cancels now)")
    content: dict = {}
    while True:
        filled = _fill_form(console, mode.requested_schema, content, cancelled)
        if filled is None:
            return s.ElicitationCancelAction()
        content = filled
        problems = validate(mode.requested_schema, content)  # spec ELICIT-12
        for name, problem in problems.items():
            console.say(f"  {name} {problem}")
        # spec ELICIT-02: the answers are shown, and can be edited, before they are sent.
        console.say(f"  your answers: {json.dumps(content, ensure_ascii=False)}")
        # Enter takes the first choice: send (or, with problems, edit); giving the answers up
        # is always a word typed, never a bare Enter.
        choices = (
            "edit (e), decline (d) or cancel (c); Enter edits"
            if problems
            else "send (s), edit (e), decline (d) or cancel (c); Enter sends"
        )
        while True:
            typed = console.read_line(f"{choices}? ", cancelled)
            if typed is None:
                return s.ElicitationCancelAction()
            answer = typed.strip().lower() or ("e" if problems else "s")
            if answer in ("e", "edit", "d", "decline", "c", "cancel"):
                break
            if answer in ("s", "send") and not problems:
                # spec ELICIT-22: accepted form content is sent only once it fits the schema.
                return s.ElicitationAcceptAction(content=content)
            console.say("  please type one of the letters shown")
        if answer not in ("e", "edit"):
            return _action(answer)


def _fill_form(
    console: Console, schema: Any, previous: dict, cancelled: threading.Event
) -> Optional[dict]:
    """Ask each field in turn; defaults are the schema's or the previous answers (ELICIT-14)."""
    content: dict = {}
    for field in fields_of(schema):
        if not field.supported:
            console.say(f"  ({field.name}: a field type acpref does not know; left empty)")
            continue
        choices = field.choices()
        hint = f" [{'/'.join(choices)}]" if choices else ""
        default = previous.get(field.name, field.default)
        shown = f" (default {default})" if default is not None else ""  # spec ELICIT-14
        optional = "" if field.required else " (optional)"
        while True:
            text = console.read_line(f"  {field.label}{hint}{shown}{optional}: ", cancelled)
            if text is None:
                return None
            if not text.strip():
                if default is not None:
                    content[field.name] = default
                break
            try:
                content[field.name] = parse(field, text)
                break
            except ValueError as exc:
                console.say(f"  {exc}")
    return content


def _action(answer: str) -> Any:
    if answer in ("c", "cancel"):
        return s.ElicitationCancelAction()
    if answer in ("a", "accept", "y", "yes"):
        # spec ELICIT-22: a URL-mode accept carries no content.
        return s.ElicitationAcceptAction()
    if answer in ("d", "decline", "n", "no"):
        return s.ElicitationDeclineAction()
    return s.ElicitationCancelAction()
