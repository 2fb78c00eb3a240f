"""The protocol's rules (layer L2): capability gates, phases, ordering, id bookkeeping.

Pure state and functions over wire JSON: no I/O. Used by the agent side, the client side and the
oracle alike (see ``state`` for the contract). The rules live in one module per spec page, both
directions together, listed in protocol order in ``pages``; ``facts`` holds what they know of a
connection, ``book`` how they are keyed.
"""

from .capabilities import elicitation_modes, gate_open, prompt_block_gate, wire_caps
from .findings import Finding, Party, other
from .observer import RulesObserver
from .register import clauses, level_of
from .state import ProtocolState, SessionState, classify

__all__ = [
    "Finding",
    "Party",
    "ProtocolState",
    "RulesObserver",
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
