"""session-modes.mdx and session-config-options.mdx: what a session can be switched between.

An agent may offer *modes* (``modes``: the available ones and the current one, MODES-02) and
*config options* (``configOptions``: selects and, for a client that supports them, booleans,
CONFIG-05) when it sets a session up. The client switches with ``session/set_mode`` (a mode that
was offered, MODES-04) and ``session/set_config_option`` (an advertised option and one of its
values, CONFIG-17, CONFIG-18); the agent answers a config change with the complete new list
(CONFIG-19) and reports changes of its own with ``current_mode_update`` and
``config_option_update``. An agent that offers both keeps them in step (CONFIG-24). What a
session remembers of both is in ``facts.SessionState``.
"""

from __future__ import annotations

from typing import AbstractSet, Any, Dict, Iterable, List, Optional, Set, Tuple

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
        _state_modes(state, s, state.shared_mode_ids(modes.get("availableModes") or []))
        _stated(state, s, "mode", modes.get("currentModeId"))
    options = result.get("configOptions")
    if isinstance(options, list):
        _state_config(state, s, options)
        _stated_options(state, s, options)


#: How many superseded config tables a session keeps for a client that may not have read past
#: them (``SessionState.config_before``).
_KEPT_CONFIGS = 8


def _state_config(state: ConnectionFacts, s: SessionState, options: Any) -> None:
    """The agent states the session's config options anew (a setup or config result, or a
    ``config_option_update``); the tables before it are kept while the client may not have read
    past them."""
    if s.config:
        s.config_before, let_go = _superseded(state, s.config_before, s.config_seq, s.config)
        s.config_forgot |= let_go
    s.config = state.shared_config(options)
    s.config_seq = state.sent[A]


def _state_modes(state: ConnectionFacts, s: SessionState, ids: AbstractSet[Any]) -> None:
    """The agent states the session's available modes anew (a setup or config result); the sets
    before it are kept while the client may not have read past them (as ``_state_config``)."""
    if s.mode_ids is not None and ids != s.mode_ids:
        s.modes_before, let_go = _superseded(state, s.modes_before, s.mode_seq, s.mode_ids)
        s.modes_forgot |= let_go
    if ids != s.mode_ids:
        s.mode_ids, s.mode_seq = ids, state.sent[A]


def _superseded(
    state: ConnectionFacts, before: Tuple[Any, ...], seq: int, last: Any
) -> Tuple[Tuple[Any, ...], bool]:
    """The statements to keep once ``last`` (stated at the agent's count ``seq``) is superseded:
    those the client may not have read past, at most ``_KEPT_CONFIGS``; and whether one was let
    go for that bound."""
    kept = [*before, (seq, last)]
    kept = kept[_floor(state, kept) :]
    return tuple(kept[-_KEPT_CONFIGS:]), len(kept) > _KEPT_CONFIGS


def _may_go_by(
    state: ConnectionFacts, before: Tuple[Any, ...], seq: int, last: Any, forgot: bool
) -> Tuple[List[Any], bool]:
    """The statements before ``last`` that the client may still be going by, and whether it may
    be going by one no longer kept (it read none of those that are)."""
    tables = [*before, (seq, last)]
    older = [t for _, t in tables[_floor(state, tables) : -1]]
    return older, forgot and tables[0][0] > state.read[C][0]


def _floor(state: ConnectionFacts, tables: Any) -> int:
    """The position in ``tables`` (``(count, table)``, oldest first) of the last one the client
    provably read: each direction of stdio is ordered, so a client that answered a request of
    the agent had read everything the agent sent before it (``ConnectionFacts.read``)."""
    read = state.read[C][0]
    return max((i for i, (seq, _) in enumerate(tables) if seq <= read), default=0)


# -- Modes and the mode option in step (CONFIG-24) ------------------------------------------------
#
# spec-gap mode-option-values: no sentence says the mode option's values are mode ids; the two
# are compared only where the option's values are exactly the session's mode ids (as in the
# spec's examples). Each API's statement of the mode is kept with when it last moved. A statement
# that moves one is not judged (the other may follow in the agent's next message); a statement
# that repeats one after the other moved elsewhere is the two out of step.


def _mode_option(mode_ids: Any, options: Any) -> Optional[Dict[str, Any]]:
    """The one select option of category "mode" whose values are exactly ``mode_ids``."""
    found = [
        o
        for o in (options if isinstance(options, list) else [])
        if isinstance(o, dict) and o.get("category") == "mode" and o.get("type") == "select"
    ]
    if len(found) != 1 or mode_ids is None or select_values(found[0]) != set(mode_ids):
        return None
    return found[0]


def _sides(s: SessionState, side: str) -> Any:
    """(this API's statement, the other's): ``side`` is "mode" or "option"."""
    if side == "mode":
        return s.stated_mode, s.stated_option
    return s.stated_option, s.stated_mode


def _out_of_step(s: SessionState, side: str, value: Any) -> Optional[str]:
    """Why a statement of the mode by one API (``side``) shows the two out of step, or None."""
    mine, other = _sides(s, side)
    if mine is None or other is None or mine[0] != value or other[0] == value:
        return None
    if other[1] <= mine[1]:
        return None  # this API moved last (the other may follow), or this was reported
    if side == "mode":
        return f"the mode is still {value!r} after the mode option moved to {other[0]!r}"
    return f"the mode option is still {value!r} after the mode moved to {other[0]!r}"


def _stated(state: ConnectionFacts, s: SessionState, side: str, value: Any) -> None:
    """Record one API's statement of the mode."""
    seq = state.sent[A]
    mine, other = _sides(s, side)
    if mine is None or mine[0] != value:
        mine = (value, seq)  # moved
    elif other is not None and _out_of_step(s, side, value) is not None:
        # Reported now: both count as moved here, judged again once either moves.
        mine, other = (value, seq), (other[0], seq)
    if side == "mode":
        s.stated_mode, s.stated_option = mine, other
    else:
        s.stated_option, s.stated_mode = mine, other


def _stated_options(state: ConnectionFacts, s: SessionState, options: Any) -> None:
    option = _mode_option(s.mode_ids, options)
    if option is not None:
        _stated(state, s, "option", option.get("currentValue"))


def _sync_findings(
    s: Optional[SessionState], side: str, m: Message, value: Any = None, options: Any = None
) -> Iterable[Finding]:
    """A statement of the mode by one API (the mode ``value``, or the ``options`` list) that the
    other API's newer statement contradicts."""
    if s is None:
        return
    if side == "option":
        option = _mode_option(s.mode_ids, options)
        if option is None:
            return
        value = option.get("currentValue")
    elif _mode_option(s.mode_ids, list(s.config.values())) is None:
        return
    why = _out_of_step(s, side, value)
    if why is not None:
        # spec CONFIG-24: an agent with both keeps modes and the mode option in step.
        yield finding("CONFIG-24", A, why, m.index)


def result_sync_findings(result: Dict[str, Any], m: Message) -> Iterable[Finding]:
    """A session result whose modes and mode option already disagree (CONFIG-24)."""
    modes = result.get("modes")
    if not isinstance(modes, dict):
        return
    ids = {x.get("id") for x in modes.get("availableModes") or [] if isinstance(x, dict)}
    option = _mode_option(ids, result.get("configOptions"))
    if option is not None and option.get("currentValue") != modes.get("currentModeId"):
        # spec CONFIG-24: an agent with both keeps modes and the mode option in step.
        yield finding(
            "CONFIG-24",
            A,
            f"currentModeId {modes.get('currentModeId')!r} but the mode option is "
            f"{option.get('currentValue')!r}",
            m.index,
        )


# -- The client switches --------------------------------------------------------------------------


@check("request", C, "session/set_mode")
def _set_mode(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    mode = m.params.get("modeId")
    if s is not None and s.mode_ids is not None and mode not in s.mode_ids:
        older, forgot = _may_go_by(state, s.modes_before, s.mode_seq, s.mode_ids, s.modes_forgot)
        if forgot or any(mode in ids for ids in older):
            # spec-gap config-crossing: the mode is one the agent advertised before its latest
            # statement of the modes (a load's, a resume's or a config result's), which the
            # client may not have read when it wrote the request: the two crossed on the wire.
            said = f"mode {mode!r} is not one of the modes the agent stated last; it is one it "
            said += "stated before, which may be the client's latest (the two crossed on the wire)"
            yield finding("spec-gap:config-crossing", C, said, m.index, INVALID)
            return
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
    fault = _config_fault(s.config, config_id, value, is_boolean)
    if fault is None:
        return
    clause, why = fault
    older, forgot = _may_go_by(state, s.config_before, s.config_seq, s.config, s.config_forgot)
    if forgot or any(_config_fault(t, config_id, value, is_boolean) is None for t in older):
        # spec-gap config-crossing: the request fits options the agent stated before its latest
        # statement, which the client may not have read when it wrote the request (the two
        # directions cross on the wire; where they are observed says nothing about what the
        # client had read). No sentence says which statement the request is held to.
        said = (
            f"{why} in the options the agent stated last; the request fits options it stated "
            "before, which may be the client's latest (the two crossed on the wire)"
        )
        yield finding("spec-gap:config-crossing", C, said, m.index, INVALID)
        return
    # spec CONFIG-17: configId is an advertised option, a select value one of its values.
    # spec CONFIG-18: a boolean option is set with type "boolean" and a JSON boolean.
    yield finding(clause, C, why, m.index, INVALID)


def _config_fault(
    config: Any, config_id: Any, value: Any, is_boolean: bool
) -> Optional[Tuple[str, str]]:
    """(clause, why) when ``set_config_option`` of ``config_id`` to ``value`` does not fit the
    options ``config`` (by id), or None."""
    option = config.get(config_id)
    if option is None:
        return "CONFIG-17", f"unknown config option {config_id!r}"
    if option.get("type") == "boolean" and not (is_boolean and type(value) is bool):
        return "CONFIG-18", f"{config_id!r} is boolean: send type 'boolean' and true/false"
    if option.get("type") == "select" and value not in select_values(option):
        return "CONFIG-17", f"{value!r} is not a value of {config_id!r}"
    return None


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
    s = state.session(m.request.params.get("sessionId"))
    yield from _sync_findings(s, "option", m, options=options)


@check("response", A, "session/set_mode")
def _mode_set(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    assert m.request is not None
    if not m.is_error:
        s = state.session(m.request.params.get("sessionId"))
        yield from _sync_findings(s, "mode", m, m.request.params.get("modeId"))


@transition("response", A, "session/set_mode")
def _mode_set_apply(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if s is not None and not m.is_error:
        _stated(state, s, "mode", m.request.params.get("modeId"))


@transition("response", A, "session/set_config_option")
def _config_set_apply(state: ConnectionFacts, m: Message) -> None:
    assert m.request is not None
    s = state.session(m.request.params.get("sessionId"))
    if s is not None and not m.is_error and isinstance(m.result, dict):
        result, options = m.result, m.result.get("configOptions")
        set_id = m.request.params.get("configId")
        kept = s.config.get(set_id) if s.config and isinstance(set_id, str) else None
        if kept is not None and isinstance(options, list):
            if all(not isinstance(o, dict) or o.get("id") != set_id for o in options):
                # spec CONFIG-19: the result is the complete list: an option it leaves out
                # while setting it is still the session's, as the agent stated it last.
                result = {**result, "configOptions": [*options, kept]}
        remember_options(state, s, result)


@update_check("current_mode_update")
def _mode_update(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    s = state.session(m.session_id)
    mode = update_of(m).get("currentModeId")
    if s is not None and s.mode_ids is not None and mode not in s.mode_ids:
        # spec MODES-02: the current mode is one of the available modes.
        yield finding("MODES-02", A, f"current mode {mode!r} is not an available mode", m.index)
    yield from _sync_findings(s, "mode", m, mode)


@update_transition("current_mode_update")
def _mode_update_apply(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    if s is not None:
        _stated(state, s, "mode", update_of(m).get("currentModeId"))


@update_check("config_option_update")
def _config_update(state: ConnectionFacts, m: Message) -> Iterable[Finding]:
    if state.session(m.session_id) is not None:
        yield from config_findings(state, update_of(m).get("configOptions"), m)
        options = update_of(m).get("configOptions")
        yield from _sync_findings(state.session(m.session_id), "option", m, options=options)


@update_transition("config_option_update")
def _config_update_apply(state: ConnectionFacts, m: Message) -> None:
    s = state.session(m.session_id)
    options = update_of(m).get("configOptions")
    if s is not None and isinstance(options, list):
        _state_config(state, s, options)
        _stated_options(state, s, options)
