"""Permission policies: how a client answers ``session/request_permission``.

Spec: tool-calls.mdx (Requesting Permission); clauses TOOL-08, TOOL-09, PROMPT-21, SCHEMA-04.

A policy turns a request into an outcome: ``Allow`` and ``Reject`` decide on their own (the user's
standing settings, TOOL-09), ``Ask`` hands the question to a callback (a dialog, a terminal
prompt). Whatever the policy, the answer names one of the offered options or is ``cancelled``
(TOOL-08). The ``cancelled`` event a policy receives is set when the turn is cancelled: an asking
policy stops waiting for the user then (the connection has already answered ``cancelled``,
PROMPT-21, see ``ClientSideConnection.cancel``).

Nothing here does I/O or starts threads.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Iterable, Optional, Protocol

from .. import schema as s

__all__ = [
    "PermissionPolicy",
    "Allow",
    "Reject",
    "Ask",
    "AskCallback",
    "allow",
    "reject",
    "selected",
    "cancelled",
    "policy_named",
]

log = logging.getLogger("acpref.client.permissions")

#: ``callback(request, cancelled) -> option id or None``: ask the user. ``None`` (or an id that
#: was not offered) answers ``cancelled``. It should return soon after ``cancelled`` is set.
AskCallback = Callable[[s.RequestPermissionRequest, threading.Event], Optional[str]]


class PermissionPolicy(Protocol):
    def decide(
        self, request: s.RequestPermissionRequest, cancelled: threading.Event
    ) -> s.RequestPermissionResponse:
        """Answer one permission request; ``cancelled`` is set when the turn is cancelled meanwhile
        (then answer ``cancelled``, spec PROMPT-21).
        """


def selected(option_id: str) -> s.RequestPermissionResponse:
    """The answer that picks ``option_id`` (spec SCHEMA-04)."""
    return s.RequestPermissionResponse(outcome=s.SelectedPermissionOutcome(option_id=option_id))


def cancelled() -> s.RequestPermissionResponse:
    """The ``cancelled`` answer (spec PROMPT-21, SCHEMA-04)."""
    return s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome())


def _first_of_kind(
    request: s.RequestPermissionRequest, kinds: Iterable[s.PermissionOptionKind]
) -> Optional[str]:
    for kind in kinds:
        for option in request.options:
            if option.kind == kind:
                return option.option_id
    return None


def allow(request: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
    """Pick the offered ``allow_once`` option, else ``allow_always``.

    spec-gap no-matching-option: with no allow option offered, the answer is ``cancelled``
    (the only outcome that selects nothing).
    """
    K = s.PermissionOptionKind
    option = _first_of_kind(request, (K.ALLOW_ONCE, K.ALLOW_ALWAYS))
    return selected(option) if option is not None else cancelled()


def reject(request: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
    """Pick the offered ``reject_once`` option, else ``reject_always``, else ``cancelled``."""
    K = s.PermissionOptionKind
    option = _first_of_kind(request, (K.REJECT_ONCE, K.REJECT_ALWAYS))
    return selected(option) if option is not None else cancelled()


class Allow:
    """Allow every tool call without asking (spec TOOL-09)."""

    def decide(
        self, request: s.RequestPermissionRequest, cancelled: threading.Event
    ) -> s.RequestPermissionResponse:
        """Pick the offered ``allow_once`` option, else ``allow_always``, else ``cancelled``
        (see ``allow``), without asking.
        """
        return allow(request)


class Reject:
    """Reject every tool call without asking (spec TOOL-09)."""

    def decide(
        self, request: s.RequestPermissionRequest, cancelled: threading.Event
    ) -> s.RequestPermissionResponse:
        """Pick the offered ``reject_once`` option, else ``reject_always``, else ``cancelled``
        (see ``reject``), without asking.
        """
        return reject(request)


class Ask:
    """Ask the user through ``callback`` (see ``AskCallback``)."""

    def __init__(self, callback: AskCallback) -> None:
        self._callback = callback

    def decide(
        self, request: s.RequestPermissionRequest, cancelled_event: threading.Event
    ) -> s.RequestPermissionResponse:
        """Ask ``callback`` for an option id; ``cancelled`` when the turn was cancelled meanwhile
        or the callback gave none.
        """
        option_id = self._callback(request, cancelled_event)
        if cancelled_event.is_set() or option_id is None:
            return cancelled()
        offered = {o.option_id for o in request.options}
        if option_id not in offered:
            # spec TOOL-08: only an offered option may be selected.
            log.warning(
                "permission callback chose %r, which was not offered; answering cancelled",
                option_id,
            )
            return cancelled()
        return selected(option_id)


def policy_named(name: str, ask: Optional[AskCallback] = None) -> PermissionPolicy:
    """``"allow"``, ``"reject"`` or ``"ask"`` (which needs ``ask``): the CLI's three choices."""
    if name == "allow":
        return Allow()
    if name == "reject":
        return Reject()
    if name == "ask" and ask is not None:
        return Ask(ask)
    raise ValueError(f"unknown permission policy {name!r} (or 'ask' without a callback)")
