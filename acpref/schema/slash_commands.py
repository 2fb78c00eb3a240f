"""Slash commands: the commands an agent advertises, run as ordinary prompts.

Spec: slash-commands.mdx; clauses SLASH-01 .. SLASH-06.
"""

from typing import ClassVar, List

import attrs

from ._base import Meta, Unset, field

__all__ = [
    "UnstructuredCommandInput",
    "AvailableCommandInput",
    "AvailableCommand",
    "AvailableCommandsUpdate",
]


@attrs.frozen(kw_only=True)
class UnstructuredCommandInput:
    """Free text typed after the command name, with a hint.

    Spec: slash-commands.mdx
    """

    hint: str = field(required=True)
    """A hint to display when the input hasn't been provided yet."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: What input a command takes; v1 defines only free text. Spec: slash-commands.mdx.
AvailableCommandInput = UnstructuredCommandInput


@attrs.frozen(kw_only=True)
class AvailableCommand:
    """A slash command the user can type in a prompt.

    Spec: slash-commands.mdx
    """

    # spec SLASH-02: name and description required; input {hint} optional.
    name: str = field(required=True)
    """Command name (e.g., ``create_plan``, ``research_codebase``)."""
    description: str = field(required=True)
    """Human-readable description of what the command does."""
    input: AvailableCommandInput | None | Unset = field(default_on_error=True)
    """Input for the command if required."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AvailableCommandsUpdate:
    """Session update: the complete list of commands now available.

    Spec: slash-commands.mdx
    """

    session_update: ClassVar[str] = "available_commands_update"

    available_commands: List[AvailableCommand] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    """Commands the agent can execute."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
