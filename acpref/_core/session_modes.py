"""session-modes.mdx and session-config-options.mdx: what a session can be switched between.

An agent may offer *modes* (``modes``: the available ones and the current one, MODES-02) and
*config options* (``configOptions``: selects and, for a client that supports them, booleans,
CONFIG-05) when it sets a session up. The client switches with ``session/set_mode`` (a mode that
was offered, MODES-04) and ``session/set_config_option`` (an advertised option and one of its
values, CONFIG-17, CONFIG-18); the agent answers a config change with the complete new list
(CONFIG-19) and reports changes of its own with ``current_mode_update`` and
``config_option_update``. What a session remembers of both is in ``facts.SessionState``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Set

from ..errors import ErrorCode
from .book import Message, check, transition, update_check, update_of, update_transition
from .facts import ConnectionFacts, SessionState
from .findings import Finding, Party, finding

A, C = Party.AGENT, Party.CLIENT
INVALID = ErrorCode.INVALID_PARAMS

#: The option categories ACP reserves (names without a leading ``_``), CONFIG-07 and CONFIG-10.
RESERVED_CATEGORIES = frozenset({"mode", "model", "model_config", "thought_level"})


def select_values(option: Dict[str, Any]) -> Set[Any]:
    """The values of a select option, its groups flattened."""
    values = set()
    for item in option.get("options") or []:
        if isinstance(item, dict) and "group" in item:
            values |= {v.get("value") for v in item.get("options") or [] if isinstance(v, dict)}
        elif isinstance(item, dict):
            values.add(item.get("value"))
    return values


def modes_findings(modes: Any, m: Message) -> Iterable[Finding]:
    """What is wrong with a ``modes`` object the agent sent."""
    if not isinstance(modes, dict):
        return
    ids = {x.get("id") for x in modes.get("availableModes") or [] if isinstance(x, dict)}
    if modes.get("currentModeId") not in ids:
        # spec MODES-02: currentModeId names one of availableModes.
        yield finding(
            "MODES-02",
            A,
            f"currentModeId {modes.get('currentModeId')!r} is not an available mode",
            m.index,
        )


def mode_like_findings(result: Dict[str, Any], m: Message) -> Iterable[Finding]:
    """A session result with a mode config option and no legacy ``modes`` (CONFIG-22)."""
    options = result.get("configOptions")
    mode_like = isinstance(options, list) and any(
        isinstance(o, dict) and o.get("category") == "mode" for o in options
    )
    if mode_like and result.get("modes") is None:
        # spec CONFIG-22: in the transition, an agent with mode-like configuration sends both a
        # category "mode" option and the older modes, for clients that know only modes.
        yield finding(
            "CONFIG-22", A, 'a category "mode" config option is sent without modes', m.index
        )


def config_findings(state: ConnectionFacts, options: Any, m: Message) -> Iterable[Finding]:
    """What is wrong with a ``configOptions`` list the agent sent."""
    boolean_ok = state.gate_open("session.configOptions.boolean", C)
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, dict):
            continue
        category = option.get("category")
        if (
            isinstance(category, str)
            and category not in RESERVED_CATEGORIES
            and not category.startswith("_")
        ):
            # spec CONFIG-10: names without a leading "_" are ACP's; a custom category starts
            # with "_" (like an extension method, EXT-05).
            yield finding(
                "CONFIG-10",
                A,
                f"option {option.get('id')!r} has category {category!r} (custom ones start with _)",
                m.index,
            )
        if option.get("type") == "boolean" and not boolean_ok:
            # spec CONFIG-05: no boolean option unless the client advertised support.
            yield finding(
                "CONFIG-05",
                A,
                f"boolean option {option.get('id')!r} sent to a client without support",
                m.index,
            )
        if option.get("type") == "select" and option.get("currentValue") not in select_values(
            option
        ):
            # spec CONFIG-04: a select's currentValue is one of its values.
            yield finding(
                "CONFIG-04",
                A,
                f"option {option.get('id')!r} currentValue {option.get('currentValue')!r} is not a value",
                m.index,
            )


def remember_options(state: ConnectionFacts, s: SessionState, result: Dict[str, Any]) -> None:
    """Keep the modes and config options a setup or config result gave the session."""
    modes = result.get("modes")
    if isinstance(modes, dict):
        s.mode_ids = state.shared_mode_ids(modes.get("availableModes") or [])
    options = result.get("configOptions")
    if isinstance(options, list):
        s.config = state.shared_config(options)


# -- The client switches --------------------------------------------------------------------------


@check("request", C, "session/set_mode")
def _set_mode(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    mode = m.params.get("modeId")
    if s is not None and s.mode_ids is not None and mode not in s.mode_ids:
        # spec MODES-04: modeId is one of availableModes.
        yield finding(
            "MODES-04",
            C,
            f"mode {mode!r} is not one of {sorted(s.mode_ids, key=repr)}",
            m.index,
            INVALID,
        )


@check("request", C, "session/set_config_option")
def _set_config(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    config_id, value = m.params.get("configId"), m.params.get("value")
    is_boolean = m.params.get("type") == "boolean"
    if is_boolean and not state.gate_open("session.configOptions.boolean", C):
        # spec INIT-13: boolean options exist only for a client that advertised them.
        yield finding(
            "INIT-13", C, "boolean config value without the boolean capability", m.index, INVALID
        )
    if s is None or not s.config:
        return
    option = s.config.get(config_id)
    if option is None:
        # spec CONFIG-17: configId is an advertised option.
        yield finding("CONFIG-17", C, f"unknown config option {config_id!r}", m.index, INVALID)
    elif option.get("type") == "boolean" and not (is_boolean and type(value) is bool):
        # spec CONFIG-18: a boolean option is set with type "boolean" and a JSON boolean.
        yield finding(
            "CONFIG-18",
            C,
            f"{config_id!r} is boolean: send type 'boolean' and true/false",
            m.index,
            INVALID,
        )
    elif option.get("type") == "select" and value not in select_values(option):
        # spec CONFIG-17: a select value is one of the option's values.
        yield finding(
            "CONFIG-17", C, f"{value!r} is not a value of {config_id!r}", m.index, INVALID
        )


# -- The agent answers and reports ----------------------------------------------------------------


@check("response", A, "session/set_config_option")
def _config_set(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    if m.is_error:
        return
    options = m.result.get("configOptions") if isinstance(m.result, dict) else None
    ids = (
        {o.get("id") for o in options if isinstance(o, dict)}
        if isinstance(options, list)
        else set()
    )
    if m.request.params.get("configId") not in ids:
        # spec CONFIG-19: the result carries the complete list, the changed option included.
        yield finding(
            "CONFIG-19", A, "set_config_option result lacks the option that was set", m.index
        )
    yield from config_findings(state, options, m)


@transition("response", A, "session/set_config_option")
def _config_set_apply(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if s is not None and not m.is_error and isinstance(m.result, dict):
        remember_options(state, s, m.result)


@update_check("current_mode_update")
def _mode_update(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    mode = update_of(m).get("currentModeId")
    if s is not None and s.mode_ids is not None and mode not in s.mode_ids:
        # spec MODES-02: the current mode is one of the available modes.
        yield finding("MODES-02", A, f"current mode {mode!r} is not an available mode", m.index)


@update_check("config_option_update")
def _config_update(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if state.session(m.session_id) is not None:
        yield from config_findings(state, update_of(m).get("configOptions"), m)


@update_transition("config_option_update")
def _config_update_apply(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    options = update_of(m).get("configOptions")
    if s is not None and isinstance(options, list):
        s.config = state.shared_config(options)
