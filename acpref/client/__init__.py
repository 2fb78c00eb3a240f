"""The client side of ACP: serve an agent's requests, drive its sessions, and a reference client.

Spec: overview.mdx (Client), and every page a client acts on; walk-through and decisions:
spec_notes/client.md; what an agent may make the reference client do: spec_notes/threat-model.md.

* ``Client``: the interface an editor implements, one method per client method of meta.json.
* ``ClientSideConnection``: spawns (or attaches to) an agent, runs ``initialize`` with the
  client's real capabilities, offers one typed call per agent method plus conveniences, and
  refuses to send anything the rules forbid (``acpref._core``).
* ``ReferenceClient``: a complete ``Client`` with real files confined to the session's roots, real
  terminals, permission policies, elicitation callbacks and a ``SessionView`` per session.

**Where to start reading**, in the order a prompt turn and its cancellation travel:

1. ``connection`` — ``ClientSideConnection``: the typed calls (``session_prompt_async``,
   ``session_cancel``...) and the agent's messages as they come in; ``_conveniences`` adds
   keyword forms on top (``prompt(session_id, "text")``, ``cancel(session_id)``).
2. ``turns`` — ``PromptTurn``, a ``session/prompt`` in flight, to wait for or cancel.
3. ``_desk`` — the observer that puts the rules on every message, and the permission desk
   (PROMPT-21: pending permission requests answered ``cancelled``).
4. ``reference`` — ``ReferenceClient``, serving the agent's requests; ``interface`` — ``Client``.
5. ``views`` — ``SessionView``, the updates folded into what a UI shows; ``_view_records`` — the
   records it is made of (messages, tool calls, notices, compactions); ``_kept`` — the bound on
   what a view keeps.

Beside them, for the requests a plain text turn does not make: ``roots`` and ``files``,
``terminals``, ``permissions``, ``plans``, ``subagents``.

The terminal UI of ``acpref client`` and the demo (``Renderer``) is not part of this library: it
is ``acpref._tools.terminal``, which this package never imports.

A short session::

    from acpref.client import ClientSideConnection, ReferenceClient, Allow

    client = ReferenceClient(permissions=Allow())
    with ClientSideConnection.spawn(client, ["my-agent", "--acp"]) as conn:
        conn.initialize(timeout=30)                      # 1. negotiate
        session = conn.new_session("/path/to/project")   # 2. open a session
        answer = conn.prompt(session.session_id, "hi")   # 3. one turn, updates delivered first
        print(client.view(session.session_id).messages[-1].text, answer.stop_reason)
"""

from .._core.facts import DEFAULT_MAX_REMEMBERED
from ._kept import DEFAULT_MAX_KEPT, KeptBlocks
from .connection import ClientSideConnection
from .interface import CLIENT_INFO, Client, OpenedSession
from .permissions import Allow, Ask, AskCallback, PermissionPolicy, Reject, policy_named
from .reference import ElicitationCallback, ReferenceClient, UpdateListener
from .roots import Roots
from .terminals import OutputBuffer, TerminalManager
from .turns import AgentExited, PromptTurn, UnsupportedProtocolVersion
from .views import Message, SessionView, ToolCallView

__all__ = [
    "AgentExited",
    "Allow",
    "Ask",
    "AskCallback",
    "CLIENT_INFO",
    "Client",
    "ClientSideConnection",
    "DEFAULT_MAX_KEPT",
    "DEFAULT_MAX_REMEMBERED",
    "ElicitationCallback",
    "KeptBlocks",
    "Message",
    "OpenedSession",
    "OutputBuffer",
    "PermissionPolicy",
    "PromptTurn",
    "ReferenceClient",
    "Reject",
    "Roots",
    "SessionView",
    "TerminalManager",
    "ToolCallView",
    "UnsupportedProtocolVersion",
    "UpdateListener",
    "policy_named",
]
