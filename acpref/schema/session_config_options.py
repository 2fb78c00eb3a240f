"""Session config options: selectors (select or boolean) the agent offers for a session.

Spec: session-config-options.mdx; clauses CONFIG-01 .. CONFIG-24, SCHEMA-07, SCHEMA-08, INIT-13.

On the wire a config option is one flat object: common keys (``id``, ``name``, ``category``, ...)
plus a ``type`` that brings its own keys (``currentValue`` and, for a select, ``options``). Here
the common part is ``SessionConfigOption`` and the typed part is its ``kind`` field, a
``SessionConfigSelect`` or a ``SessionConfigBoolean``; the codec flattens ``kind`` into the
enclosing object.
"""

from typing import ClassVar, List, Union

import attrs

from ._base import Meta, Unset, WireEnum, field, tagged_union
from .identifiers import (
    SessionConfigGroupId,
    SessionConfigId,
    SessionConfigValueId,
    SessionId,
)

__all__ = [
    "SessionConfigOptionCategory",
    "SessionConfigSelectOption",
    "SessionConfigSelectGroup",
    "SessionConfigSelectOptions",
    "SessionConfigSelect",
    "SessionConfigBoolean",
    "SessionConfigKind",
    "SessionConfigOption",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
    "ConfigOptionUpdate",
]


class SessionConfigOptionCategory(WireEnum):
    """A UX hint for a config option; names starting with ``_`` are custom.

    Fields typed with it also accept any other string: an unknown category decodes to the plain
    string (spec CONFIG-09: handle missing or unknown categories gracefully; CONFIG-10).
    Spec: session-config-options.mdx (Option Categories).
    """

    MODE = "mode"
    MODEL = "model"
    MODEL_CONFIG = "model_config"
    THOUGHT_LEVEL = "thought_level"


@attrs.frozen(kw_only=True)
class SessionConfigSelectOption:
    """One value of a select option.

    Spec: session-config-options.mdx (ConfigOptionValue)
    """

    value: SessionConfigValueId = field(required=True)
    """Unique identifier for this option value."""
    name: str = field(required=True)
    """Human-readable label for this option value."""
    description: str | None | Unset = field(default_on_error=True)
    """Optional description for this option value."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SessionConfigSelectGroup:
    """A named group of select values.

    Spec: session-config-options.mdx; SCHEMA-07
    """

    group: SessionConfigGroupId = field(required=True)
    """Unique identifier for this group."""
    name: str = field(required=True)
    """Human-readable label for this group."""
    options: List[SessionConfigSelectOption] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    """The set of option values in this group."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: The values of a select option: a flat list, or a list of groups (spec SCHEMA-07: clients
#: handle both). The codec tells them apart by the ``group`` key of the items.
#: Spec: session-config-options.mdx.
SessionConfigSelectOptions = Union[List[SessionConfigSelectOption], List[SessionConfigSelectGroup]]


@attrs.frozen(kw_only=True)
class SessionConfigSelect:
    """The select part of a config option: current value and choices.

    Spec: session-config-options.mdx; CONFIG-03, CONFIG-04
    """

    type: ClassVar[str] = "select"

    # spec CONFIG-14: every option has a current value (required), so defaults always exist.
    current_value: SessionConfigValueId = field(required=True)
    """The currently selected value."""
    options: SessionConfigSelectOptions = field(required=True)
    """The set of selectable options."""


@attrs.frozen(kw_only=True)
class SessionConfigBoolean:
    """The boolean part of a config option: its current value.

    Sent only to clients that advertised ``session.configOptions.boolean`` (spec CONFIG-05).
    Spec: session-config-options.mdx (Boolean Config Options); CONFIG-03, CONFIG-04
    """

    type: ClassVar[str] = "boolean"

    # spec CONFIG-14: every option has a current value (required), so defaults always exist.
    current_value: bool = field(required=True)
    """The current value of the boolean option."""


#: The typed part of a config option, tagged by ``type`` (not a ``$defs`` entry: the schema writes
#: it inline in ``SessionConfigOption``).
SessionConfigKind = Union[SessionConfigSelect, SessionConfigBoolean]
tagged_union(SessionConfigKind, tag="type")


@attrs.frozen(kw_only=True)
class SessionConfigOption:
    """A config option of a session with its current value: a select or a boolean.

    Spec: session-config-options.mdx (ConfigOption); CONFIG-03
    """

    # spec CONFIG-03: id, name, and (in kind) type with currentValue, required.
    id: SessionConfigId = field(required=True)
    """Unique identifier for the configuration option."""
    name: str = field(required=True)
    """Human-readable label for the option."""
    description: str | None | Unset = field(default_on_error=True)
    """Optional description for the Client to display to the user."""
    # spec CONFIG-07: optional; one of the reserved categories or a custom "_" one (CONFIG-10).
    category: SessionConfigOptionCategory | str | None | Unset = field(default_on_error=True)
    """Optional semantic category for this option (UX only)."""
    kind: SessionConfigKind = field(required=True, flatten=True)
    """The option's type with its ``currentValue``: a select (``type: "select"``, with its
    ``options``) or a boolean (``type: "boolean"``). Its keys sit in the option object itself.
    """
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SetSessionConfigOptionRequest:
    """Params of ``session/set_config_option``: a value id, or a boolean with ``type: "boolean"``.

    ``value`` is a ``str`` (a select value id) or a ``bool``; the codec writes ``type: "boolean"``
    beside a boolean and reads a string value under any other ``type`` as a value id (spec
    SCHEMA-08, CONFIG-18).
    Spec: session-config-options.mdx (Setting a Config Option)
    """

    session_id: SessionId = field(required=True)
    """The ID of the session to set the configuration option for."""
    config_id: SessionConfigId = field(required=True)
    """The ID of the configuration option to set."""
    value: SessionConfigValueId | bool = field(required=True)
    """The value ID. With ``type: "boolean"``, the boolean value."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class SetSessionConfigOptionResponse:
    """Result of ``session/set_config_option``: the complete list of options (spec CONFIG-19).

    Spec: session-config-options.mdx
    """

    config_options: List[SessionConfigOption] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    """The full set of configuration options and their current values."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ConfigOptionUpdate:
    """Session update: the complete list of config options after the agent changed them.

    Spec: session-config-options.mdx (From the Agent); CONFIG-20, CONFIG-21
    """

    session_update: ClassVar[str] = "config_option_update"

    config_options: List[SessionConfigOption] = field(
        required=True, default_on_error=True, skip_invalid_items=True
    )
    """The full set of configuration options and their current values."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """

