"""Reading advertised capabilities, with the schema's defaults, in one place.

Spec: initialization.mdx (Capabilities); clauses INIT-11, INIT-13, INIT-18, INIT-19, ELICIT-05,
AUTH-03, SCHEMA-14.

Rule: a capability is *open* only when its value is ``true`` (a boolean flag) or an object (an
object-valued capability such as ``sessionCapabilities.list: {}``). Omitted, ``null``, ``false``,
or any value of the wrong type means unsupported (INIT-11), at every level of the path
(``session: null`` closes ``session.configOptions.boolean``, INIT-13). ``{}`` for elicitation
advertises no mode (ELICIT-05). ``loadSession`` is read only at the top level, never inside
``sessionCapabilities`` (INIT-19).

The readers take capability objects as wire JSON (``dict``), so that the live sides and the oracle
read exactly the same thing; ``wire_caps`` turns a model into that JSON.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

from .. import codec

__all__ = ["gate_open", "wire_caps", "prompt_block_gate", "elicitation_modes", "PROMPT_BLOCK_GATES"]


def wire_caps(caps: Any) -> Dict[str, Any]:
    """Capabilities as wire JSON: a model is encoded, a dict is kept, anything else is empty."""
    if isinstance(caps, dict):
        return caps
    if caps is None or not hasattr(caps, "__attrs_attrs__"):
        return {}
    return codec.encode(caps)


def gate_open(gate: Optional[str], caps: Any) -> bool:
    """True when the dotted capability path ``gate`` is advertised in ``caps`` (see the rule above)."""
    if gate is None:
        return True
    node: Any = wire_caps(caps)
    # spec INIT-10: any combination of capabilities, of any shape, reads as open or closed here;
    # nothing fails on what a peer advertised or left out.
    for part in gate.split("."):
        # spec INIT-11, INIT-13, SCHEMA-14: omitted or null at any level means unsupported (the
        # schema's default false for every flag).
        if not isinstance(node, dict):
            return False
        node = node.get(part)
    # spec INIT-18, ELICIT-05: a flag is open when true, an object capability when an object.
    return node is True or isinstance(node, dict)


#: Which prompt capability each content block type needs (spec PROMPT-03, CONTENT-04); text and
#: resource_link are baseline (INIT-15, CONTENT-09).
PROMPT_BLOCK_GATES: Dict[str, Optional[str]] = {
    "text": None,  # spec CONTENT-02, INIT-15: every agent accepts text in prompts
    # spec INIT-15, CONTENT-09, spec-gap resource-link-baseline: resource_link is baseline too
    # (the initialization page and the schema; not on the content page).
    "resource_link": None,
    "image": "promptCapabilities.image",
    "audio": "promptCapabilities.audio",
    "resource": "promptCapabilities.embeddedContext",
}


def prompt_block_gate(block_type: Any) -> Optional[str]:
    """The agent capability a prompt block of this ``type`` needs (None: always allowed)."""
    return PROMPT_BLOCK_GATES.get(block_type) if isinstance(block_type, str) else None


def elicitation_modes(client_caps: Any) -> Iterable[str]:
    """The elicitation modes a client advertised (spec ELICIT-05: each only when non-null)."""
    return [mode for mode in ("form", "url") if gate_open(f"elicitation.{mode}", client_caps)]
