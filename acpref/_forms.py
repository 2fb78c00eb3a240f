"""Form-mode elicitation: the fields of a requested schema, typed input, and validation.

Spec: elicitation.mdx (Form mode, Responses); clauses ELICIT-02, ELICIT-11, ELICIT-12, ELICIT-14,
ELICIT-22, SCHEMA-10, SCHEMA-17.

A front end (the CLI, a dialog) asks for each ``Field`` in turn, turns the typed text into a value
with ``parse``, pre-fills defaults (ELICIT-14), and checks the whole answer with ``validate``
before sending it (ELICIT-12). Fields of a type this version does not know (``Unknown``,
SCHEMA-10) are listed with ``supported = False`` and never filled in.

Pure functions: no I/O. Both sides use them (the client to ask and check, the echo agent to check
what it got), so they sit below both; ``acpref.client.forms`` is their public name.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

import attrs

from . import schema as s
from .schema import UNSET

__all__ = ["Field", "fields_of", "parse", "validate"]


@attrs.frozen
class Field:
    name: str
    prop: Any
    required: bool

    @property
    def supported(self) -> bool:
        return not isinstance(self.prop, s.Unknown)

    @property
    def label(self) -> str:
        title = getattr(self.prop, "title", UNSET)
        return title if isinstance(title, str) and title else self.name

    @property
    def default(self) -> Any:
        # spec ELICIT-14: the schema's default, for the front end to pre-fill.
        value = getattr(self.prop, "default", UNSET)
        return None if value is UNSET else value

    def choices(self) -> List[str]:
        """The allowed strings of an enum or multi-select field (empty: free input)."""
        p = self.prop
        if isinstance(p, s.StringPropertySchema):
            if isinstance(p.one_of, list):
                return [o.const for o in p.one_of]
            return list(p.enum) if isinstance(p.enum, list) else []
        if isinstance(p, s.MultiSelectPropertySchema):
            if isinstance(p.items, s.StringMultiSelectItems):
                return list(p.items.enum)
            if isinstance(p.items, s.TitledMultiSelectItems):
                return [o.const for o in p.items.any_of]
        return []


def fields_of(schema: s.ElicitationSchema) -> List[Field]:
    """The form's fields in the schema's order."""
    required = set(schema.required) if isinstance(schema.required, list) else set()
    props = schema.properties if isinstance(schema.properties, dict) else {}
    return [Field(name=name, prop=prop, required=name in required) for name, prop in props.items()]


def parse(field: Field, text: str) -> Any:
    """The value of typed ``text`` for ``field``; ValueError with a reason if it is not one."""
    p = field.prop
    text = text.strip()
    if isinstance(p, s.BooleanPropertySchema):
        if text.lower() in ("y", "yes", "true", "on", "1"):
            return True
        if text.lower() in ("n", "no", "false", "off", "0"):
            return False
        raise ValueError("answer yes or no")
    if isinstance(p, s.IntegerPropertySchema):
        try:
            return int(text)
        except ValueError:
            raise ValueError("enter a whole number") from None
    if isinstance(p, s.NumberPropertySchema):
        try:
            return float(text)
        except ValueError:
            raise ValueError("enter a number") from None
    if isinstance(p, s.MultiSelectPropertySchema):
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def _check(field: Field, value: Any) -> Optional[str]:
    p = field.prop
    if isinstance(p, s.StringPropertySchema):
        if not isinstance(value, str):
            return "must be text"
        choices = field.choices()
        if choices and value not in choices:
            return f"must be one of {', '.join(choices)}"
        if isinstance(p.min_length, int) and len(value) < p.min_length:
            return f"needs at least {p.min_length} characters"
        if isinstance(p.max_length, int) and len(value) > p.max_length:
            return f"takes at most {p.max_length} characters"
        if isinstance(p.pattern, str):
            try:
                if re.search(p.pattern, value) is None:
                    return f"must match {p.pattern}"
            except re.error:
                pass  # a pattern Python cannot read is not held against the user
        return None
    if isinstance(p, (s.IntegerPropertySchema, s.NumberPropertySchema)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a number"
        if isinstance(p, s.IntegerPropertySchema) and not isinstance(value, int):
            return "must be a whole number"
        if isinstance(p.minimum, (int, float)) and value < p.minimum:
            return f"must be at least {p.minimum}"
        if isinstance(p.maximum, (int, float)) and value > p.maximum:
            return f"must be at most {p.maximum}"
        return None
    if isinstance(p, s.BooleanPropertySchema):
        return None if isinstance(value, bool) else "must be yes or no"
    if isinstance(p, s.MultiSelectPropertySchema):
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return "must be a list of choices"
        choices = field.choices()
        bad = [v for v in value if choices and v not in choices]
        if bad:
            return f"{', '.join(bad)} not among {', '.join(choices)}"
        if isinstance(p.min_items, int) and len(value) < p.min_items:
            return f"pick at least {p.min_items}"
        if isinstance(p.max_items, int) and len(value) > p.max_items:
            return f"pick at most {p.max_items}"
        return None
    return "this field type is not supported"


def validate(schema: s.ElicitationSchema, content: Dict[str, Any]) -> Dict[str, str]:
    """Problems of an answer, by field name (empty: it conforms, spec ELICIT-12, ELICIT-22)."""
    # spec ELICIT-12, ELICIT-22: the answer is checked against requestedSchema before it is sent.
    problems: Dict[str, str] = {}
    for field in fields_of(schema):
        if field.name not in content:
            if field.required:
                problems[field.name] = "is required"
            continue
        problem = _check(field, content[field.name])
        if problem is not None:
            problems[field.name] = problem
    return problems
