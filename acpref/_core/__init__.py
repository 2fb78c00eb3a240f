"""The protocol core of acpref: ACP's rules as plain state over wire JSON (layer L2).

No threads, no I/O, no sockets: the core is told every message of one connection, in wire
order, by whoever holds it (the agent side, the client side, the oracle), and says what each
message breaks. The live sides and the oracle use the very same object, so they cannot disagree.

**Where to start reading** (an afternoon, in this order):

1. ``state`` — the contract (Rule 1 .. Rule 3): ``ProtocolState.check``, ``apply``,
   ``observe``, ``finish``; and the JSON-RPC envelope every message obeys whatever its method
   (which messages are requests, notifications and responses, ids in flight, unknown and
   ungated methods: RPC-*, OVERVIEW-01, EXT-05, INIT-01).
2. ``facts`` — what the rules know of a connection: capabilities, requests in flight, sessions
   (``SessionState``), terminals. ``findings`` and ``register`` say how a broken rule is named,
   graded (MUST fails, SHOULD/MAY are reported, spec-gaps fail only when strict) and quoted.
3. ``lifecycle`` — a session's phases and a prompt turn's, as tables: one row per transition
   with its clause (drawn in spec_notes/lifecycles.md). The rules change a phase only there.
4. The pages, in protocol order (``pages``): ``initialization``, ``authentication``,
   ``session_setup``, ``session_list``, ``session_modes``, ``prompt_turn``, ``tool_calls``,
   ``file_system``, ``elicitation``, ``cancellation``, ``session_notices``,
   ``session_compaction``, ``results``. Each opens with the spec page it implements and holds
   its rules in both directions; the line that enforces a rule cites its clause id in a comment.
   ``book`` is how they are keyed; ``capabilities`` and ``values`` are the small readers they
   share; ``effects`` is what a message makes the live sides do (a turn starts, a turn stops).
   Cancelling, by the pages: the ``session/cancel`` notification's rules are prompt-turn.mdx's
   (``prompt_turn``: the turn ends ``cancelled``, permissions answered ``cancelled``);
   ``cancellation`` is cancellation.mdx, ``$/cancel_request`` of any request, and the one
   table of which message stops a running turn (session/cancel, close, delete, end of input).

**After the reading order**, each in a module of its own, named as what it is:

* The provisional features (shapes from the unstable schema), ``pages.PROVISIONAL``:
  ``plan_operations``, ``subagents``, ``system_prompt``. They hook into the stable rules, not
  the other way round: a provisional page's rules on a stable method run only once its feature
  is in play on the connection (``book``, ``ConnectionFacts.in_play``: ``subagents`` from the
  first child announced), and the stable pages ask only small facts of what it keeps
  (``ConnectionFacts.announced``, ``descendants``).
* Hardening: ``bounded``, the memory-bounded containers behind ``ConnectionFacts`` and
  ``SessionState`` (``AnsweredIds``, ``remember``, the shared empty ``NO_IDS`` and
  ``NOTHING``). The rules use them as the sets and mappings they are, and a reader need not
  open it; how each stays within its bound is told there.

**Why the shell around it looks the way it does.** ACP runs over blocking pipes, and acpref is
synchronous and threaded, not asyncio. ``acpref/_shell/framing.py`` cuts the stream into lines;
``acpref/_shell/connection.py`` reads them in wire order on whichever thread holds the reading
role (notifications are handled in that order) and runs request handlers on host threads that
do not read (``acpref/_shell/threads.py``), so that a prompt handler that waits on the client
for a permission does not block the reading that will deliver the answer; one lock serialises
its writes. Because several threads send while one reads and records, the one lock of the rules
sits in ``acpref/_shell/observer.py`` (``RulesObserver``: check and record a message in one
step), not in the core: the core stays plain state that a single-threaded user
(the oracle replaying a transcript) pays nothing for. Cleverness for speed lives in that shell,
behind this boundary, and only where a measurement (benchmarks/README.md) shows it pays.
"""

from .capabilities import elicitation_modes, gate_open, prompt_block_gate, wire_caps
from .findings import Finding, Party, other
from .register import clauses, level_of
from .state import ProtocolState, SessionState, classify

__all__ = [
    "Finding",
    "Party",
    "ProtocolState",
    "SessionState",
    "classify",
    "clauses",
    "elicitation_modes",
    "gate_open",
    "level_of",
    "other",
    "prompt_block_gate",
    "wire_caps",
]
