"""The methods table: every ACP v1 method with its types, receiver, kind, gate and clause.

Spec: ``spec_notes/spec/meta.json`` (method names) and schema.json (``x-method``, ``x-side``);
overview.mdx (Agent and Client methods); clauses OVERVIEW-02 .. OVERVIEW-05, EXT-05.

``receiver`` is the side that *handles* the method: ``"agent"`` methods are sent by the client,
``"client"`` methods by the agent, ``"both"`` by either. ``gate`` names the capability that makes
an optional method available, as a dotted path into the receiver's advertised capabilities
(``"loadSession"`` in ``agentCapabilities``, ``"fs.readTextFile"`` in ``clientCapabilities``);
``acpref._core.capabilities.gate_open`` reads it with the schema's defaults. ``clause`` is the
clause that makes the gate (or, ungated, the one that makes the method baseline).

Nothing here does I/O; the connection, the rules and the oracle all read this one table.

The rows name their models (``"InitializeRequest"``); ``Method.params`` and ``Method.result``
look them up in ``acpref.schema``, so that reading the table imports only the schema pages of
the methods actually used (see ``acpref.schema``: pages are imported on first use).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import attrs

from . import schema as s

__all__ = [
    "Method",
    "METHODS",
    "AGENT_METHODS",
    "CLIENT_METHODS",
    "PROTOCOL_METHODS",
    "CANCEL_REQUEST",
    "PROTOCOL_VERSION",
    "is_extension",
    "lookup",
]

#: The protocol version this implementation speaks, and the newest it knows.
# spec SCHEMA-12, INIT-06: one integer major version (uint16), ACP v1 is 1, for the whole
# connection.
PROTOCOL_VERSION = 1

#: The protocol-level notification that cancels one outstanding request (cancellation.mdx).
CANCEL_REQUEST = "$/cancel_request"


@attrs.frozen(kw_only=True)
class Method:
    """One row of the table."""

    #: The wire method name.
    name: str
    #: The name of the params model in ``acpref.schema``.
    params_name: str
    #: The name of the result model; ``None`` for a notification.
    result_name: Optional[str]
    #: ``"agent"``, ``"client"`` or ``"both"``: who handles (receives) it.
    receiver: str
    #: The capability path that gates it in the receiver's capabilities, or ``None`` (baseline).
    gate: Optional[str]
    #: The clause that gates it, or that makes it baseline.
    clause: str

    @property
    def params(self) -> Any:
        """The params model."""
        return getattr(s, self.params_name)

    @property
    def result(self) -> Any:
        """The result model; ``None`` for a notification."""
        return None if self.result_name is None else getattr(s, self.result_name)

    @property
    def is_notification(self) -> bool:
        return self.result_name is None

    @property
    def sender(self) -> str:
        return {"agent": "client", "client": "agent"}.get(self.receiver, "both")


def _m(
    name: str, params: str, result: Optional[str], receiver: str, gate: Optional[str], clause: str
) -> Method:
    return Method(
        name=name,
        params_name=params,
        result_name=result,
        receiver=receiver,
        gate=gate,
        clause=clause,
    )


#: Methods the agent handles (``agentMethods`` of meta.json), in meta.json order.
AGENT_METHODS: Dict[str, Method] = {
    m.name: m
    for m in (
        # spec OVERVIEW-02: the baseline methods (no gate): initialize, authenticate,
        # session/new, session/prompt and the session/cancel notification.
        _m("initialize", "InitializeRequest", "InitializeResponse", "agent", None, "OVERVIEW-02"),
        _m(
            "authenticate",
            "AuthenticateRequest",
            "AuthenticateResponse",
            "agent",
            None,
            "OVERVIEW-02",
        ),
        # spec INIT-17: session/new, session/prompt and session/cancel need no capability.
        _m("session/new", "NewSessionRequest", "NewSessionResponse", "agent", None, "OVERVIEW-02"),
        # spec OVERVIEW-03, SETUP-03: session/load only when loadSession is advertised.
        _m(
            "session/load",
            "LoadSessionRequest",
            "LoadSessionResponse",
            "agent",
            "loadSession",
            "SETUP-03",
        ),
        # spec OVERVIEW-03: session/set_mode is optional for the agent, but has no gate.
        _m(
            "session/set_mode",
            "SetSessionModeRequest",
            "SetSessionModeResponse",
            "agent",
            None,
            "OVERVIEW-03",
        ),
        # spec CONFIG-16: no gate and no turn check: accepted at any time, idle or mid-turn.
        _m(
            "session/set_config_option",
            "SetSessionConfigOptionRequest",
            "SetSessionConfigOptionResponse",
            "agent",
            None,
            "CONFIG-16",
        ),
        # spec INIT-17: baseline (no gate), like session/new and session/cancel.
        _m("session/prompt", "PromptRequest", "PromptResponse", "agent", None, "OVERVIEW-02"),
        # spec INIT-17: baseline (no gate).
        _m("session/cancel", "CancelNotification", None, "agent", None, "OVERVIEW-02"),
        _m(
            "session/list",
            "ListSessionsRequest",
            "ListSessionsResponse",
            "agent",
            "sessionCapabilities.list",
            "LIST-01",
        ),
        _m(
            "session/delete",
            "DeleteSessionRequest",
            "DeleteSessionResponse",
            "agent",
            "sessionCapabilities.delete",
            "DELETE-01",
        ),
        _m(
            "session/resume",
            "ResumeSessionRequest",
            "ResumeSessionResponse",
            "agent",
            "sessionCapabilities.resume",
            "SETUP-10",
        ),
        _m(
            "session/close",
            "CloseSessionRequest",
            "CloseSessionResponse",
            "agent",
            "sessionCapabilities.close",
            "SETUP-14",
        ),
        # spec OVERVIEW-03, AUTH-03: logout only when auth.logout is advertised.
        _m("logout", "LogoutRequest", "LogoutResponse", "agent", "auth.logout", "AUTH-03"),
    )
}

#: Methods the client handles (``clientMethods`` of meta.json), in meta.json order.
CLIENT_METHODS: Dict[str, Method] = {
    m.name: m
    for m in (
        _m(
            "session/request_permission",
            "RequestPermissionRequest",
            "RequestPermissionResponse",
            "client",
            None,
            "OVERVIEW-04",
        ),
        _m("session/update", "SessionNotification", None, "client", None, "OVERVIEW-04"),
        # spec FS-02: fs/write_text_file only when fs.writeTextFile is advertised.
        _m(
            "fs/write_text_file",
            "WriteTextFileRequest",
            "WriteTextFileResponse",
            "client",
            "fs.writeTextFile",
            "FS-02",
        ),
        # spec FS-01: fs/read_text_file only when fs.readTextFile is advertised.
        _m(
            "fs/read_text_file",
            "ReadTextFileRequest",
            "ReadTextFileResponse",
            "client",
            "fs.readTextFile",
            "FS-01",
        ),
        # spec TERM-01: every terminal/* method only when terminal is advertised (this row and
        # the four below).
        _m(
            "terminal/create",
            "CreateTerminalRequest",
            "CreateTerminalResponse",
            "client",
            "terminal",
            "TERM-01",
        ),
        _m(
            "terminal/output",
            "TerminalOutputRequest",
            "TerminalOutputResponse",
            "client",
            "terminal",
            "TERM-01",
        ),
        _m(
            "terminal/release",
            "ReleaseTerminalRequest",
            "ReleaseTerminalResponse",
            "client",
            "terminal",
            "TERM-01",
        ),
        _m(
            "terminal/wait_for_exit",
            "WaitForTerminalExitRequest",
            "WaitForTerminalExitResponse",
            "client",
            "terminal",
            "TERM-01",
        ),
        _m(
            "terminal/kill",
            "KillTerminalRequest",
            "KillTerminalResponse",
            "client",
            "terminal",
            "TERM-01",
        ),
        # The gate of elicitation/create depends on the request's mode (ELICIT-06): the rules
        # check "elicitation.form" or "elicitation.url"; "elicitation" here is the family.
        _m(
            "elicitation/create",
            "CreateElicitationRequest",
            "CreateElicitationResponse",
            "client",
            "elicitation",
            "ELICIT-06",
        ),
        _m(
            "elicitation/complete",
            "CompleteElicitationNotification",
            None,
            "client",
            None,
            "OVERVIEW-05",
        ),
    )
}

#: Protocol-level methods either side may send (``protocolMethods`` of meta.json).
PROTOCOL_METHODS: Dict[str, Method] = {
    CANCEL_REQUEST: _m(
        CANCEL_REQUEST, "CancelRequestNotification", None, "both", None, "CANCEL-01"
    ),
}

#: Every method ACP v1 defines, by wire name.
METHODS: Dict[str, Method] = {**AGENT_METHODS, **CLIENT_METHODS, **PROTOCOL_METHODS}


def is_extension(method: str) -> bool:
    """True for a custom method: its name starts with ``_`` (spec EXT-05)."""
    return method.startswith("_")


def lookup(method: str) -> Optional[Method]:
    """The table row of a method name, or ``None`` (an extension or an unknown method)."""
    return METHODS.get(method)
