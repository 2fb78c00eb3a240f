"""initialization.mdx: how a connection starts.

The client opens every connection with ``initialize``: the newest protocol version it speaks,
its capabilities and who it is (INIT-02, INIT-03). The agent answers with the version both will
speak (the same one when it supports it, INIT-07; else its own newest, never an error, INIT-08),
its capabilities and who it is (INIT-04, INIT-05). Nothing else is sent before that answer
(INIT-01, checked in ``state``). A client answered with a version newer than the newest it
asked for cannot speak it, and closes the connection instead of going on (INIT-09: SHOULD).
What each capability opens is read in ``capabilities``; the
auth methods of the answer belong to ``authentication``.
"""

from __future__ import annotations

from typing import Iterable

from ..methods import AGENT_METHODS
from .book import Message, check, transition
from .facts import ConnectionFacts
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT


@check("request", C, "initialize")
def _initialize(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if state.initialize_sent:
        # spec-gap initialize-twice: one initialize per connection.
        yield finding(
            "spec-gap:initialize-twice",
            C,
            "initialize sent twice on one connection",
            m.index,
            -32600,
        )
    if not isinstance(m.params.get("clientCapabilities"), dict):
        # spec INIT-02: initialize carries the client's capabilities.
        yield finding("INIT-02", C, "initialize params lack clientCapabilities", m.index)
    info = m.params.get("clientInfo")
    if not (isinstance(info, dict) and info.get("name") and info.get("version")):
        # spec INIT-03, INIT-20: clientInfo with name and version.
        yield finding("INIT-03", C, "initialize params lack clientInfo name and version", m.index)


@transition("request", C, "initialize")
def _initialize_sent(state: ConnectionFacts, m: Message) -> None:
    state.initialize_sent = True
    state.requested_version = m.params.get("protocolVersion")
    caps = m.params.get("clientCapabilities")
    state.client_caps = caps if isinstance(caps, dict) else {}


@check("response", A, "initialize")
def _initialized(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    requested = state.requested_version
    if m.is_error:
        if requested != 1:
            # spec INIT-08: an unsupported version is answered with the agent's newest, not an error.
            yield finding(
                "INIT-08",
                A,
                f"initialize with protocolVersion {requested!r} answered an error",
                m.index,
            )
        else:
            # spec INIT-04: initialize is answered with the version and the agent's capabilities.
            yield finding(
                "INIT-04", A, "initialize with protocolVersion 1 answered an error", m.index
            )
        return
    result = m.result if isinstance(m.result, dict) else {}
    version = result.get("protocolVersion")
    if type(version) is not int:
        # spec INIT-04: the result carries the negotiated protocolVersion (required, an integer).
        yield finding(
            "INIT-04", A, f"initialize result has no integer protocolVersion ({version!r})", m.index
        )
    # agentCapabilities may be omitted: the schema gives it a default (no capability beyond the
    # baseline), and the official SDKs omit it. Its shape, when present, is the codec's business.
    if requested == 1 and version != 1:
        # spec INIT-07: a supported requested version is answered with that same version.
        yield finding("INIT-07", A, f"requested protocolVersion 1, answered {version!r}", m.index)
    if type(version) is int and version != 1:
        # spec INIT-06: the rest of the answer follows the version it names, whose schema these
        # rules do not read (a v1 client closes such a connection, INIT-09).
        return
    info = result.get("agentInfo")
    if not (isinstance(info, dict) and info.get("name") and info.get("version")):
        # spec INIT-05, INIT-20: agentInfo with name and version.
        yield finding("INIT-05", A, "initialize result lacks agentInfo name and version", m.index)


@transition("response", A, "initialize")
def _initialized_apply(state: ConnectionFacts, m: Message) -> None:
    if m.is_error or not isinstance(m.result, dict):
        return
    state.initialized = True
    state.version = m.result.get("protocolVersion")
    caps = m.result.get("agentCapabilities")
    state.agent_caps = caps if isinstance(caps, dict) else {}
    methods = m.result.get("authMethods")
    state.auth_methods = (
        [a for a in methods if isinstance(a, dict)] if isinstance(methods, list) else []
    )


#: The requests a client sends once initialized: all it sends to the agent but ``initialize``.
_AFTER_INITIALIZE = tuple(
    name
    for name, method in AGENT_METHODS.items()
    if name != "initialize" and not method.is_notification
)


@check("request", C, *_AFTER_INITIALIZE)
def _version_not_spoken(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    version, requested = state.version, state.requested_version
    if (
        state.initialized
        and type(version) is int
        and type(requested) is int
        and version > requested
    ):
        # spec INIT-09: the client asked for the newest version it supports (INIT-02), so a newer
        # answer is one it does not support: it closes the connection rather than go on.
        yield finding(
            "INIT-09",
            C,
            f"{m.method} sent after the agent answered protocolVersion {version}, newer than the"
            f" {requested} the client asked for, instead of closing the connection",
            m.index,
        )
