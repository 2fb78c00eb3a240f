"""Every JSON-RPC message shown in the spec pages decodes strictly and re-encodes unchanged.

Spec: the ```json blocks of ``v1/*.mdx``; clause OVERVIEW-10 (a round trip of every example keeps
its keys and tags). Policy for the examples that disagree with schema.json:
``spec_notes/docs-schema-discrepancies.md``.

A block is a message when it holds a ``"jsonrpc"`` key; other blocks (a lone content block, a
capabilities fragment) are not whole messages and are skipped. A message's method is its own
``method``; a response takes the method of the nearest request before it with the same id on the
same page, or, where the page shows a response without its request, the method named in
``UNPAIRED``. Params and results are decoded with the types of ``acpref.methods.METHODS`` in
strict mode, then encoded, and the JSON must be equal to what the page shows.

The examples that cannot pass are listed in ``KNOWN_DISCREPANCIES``; the test checks that each
still fails where it says, so the list cannot rot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from conftest import require_spec_dir

from acpref import schema
from acpref.codec import DecodeError, decode, encode
from acpref.methods import METHODS, is_extension

pytestmark = pytest.mark.timeout(60)

#: Responses a page shows without their request: page -> {id: method}.
UNPAIRED: dict[str, dict[Any, str]] = {
    "authentication.mdx": {0: "initialize"},  # the response comes before its request
    "extensibility.mdx": {0: "initialize"},
    "file-system.mdx": {0: "initialize"},
    "session-config-options.mdx": {1: "session/new"},
    "session-delete.mdx": {0: "initialize"},
    "session-list.mdx": {0: "initialize"},
    "session-modes.mdx": {1: "session/new"},
    "session-setup.mdx": {0: "initialize"},
    "terminals.mdx": {0: "initialize"},
}

#: Message blocks that are not valid JSON because of ``...`` placeholders: (page, label).
UNPARSEABLE = {
    ("session-config-options.mdx", "result id=2"),
    ("session-config-options.mdx", "session/update"),
}


@attrs.frozen
class Discrepancy:
    """A spec example that contradicts schema.json (spec_notes/docs-schema-discrepancies.md)."""

    clause: str
    #: Where strict decoding reports it.
    path: str
    #: Whether the lenient codec (live peers) still reads the example.
    lenient_reads_it: bool
    #: What the schema says instead.
    schema_says: str


#: Examples that cannot round-trip: (page, label) -> what is wrong.
KNOWN_DISCREPANCIES: dict[tuple[str, str], Discrepancy] = {
    ("file-system.mdx", "initialize result id=0"): Discrepancy(
        clause="INIT-02",
        path="result.clientCapabilities",
        lenient_reads_it=True,  # the unknown key is ignored
        schema_says="clientCapabilities belong to the initialize request",
    ),
    ("terminals.mdx", "initialize result id=0"): Discrepancy(
        clause="INIT-02",
        path="result.clientCapabilities",
        lenient_reads_it=True,
        schema_says="clientCapabilities belong to the initialize request",
    ),
    ("file-system.mdx", "fs/write_text_file result id=4"): Discrepancy(
        clause="FS-08",
        path="result",
        lenient_reads_it=False,  # the connection maps a null result to {} before decoding
        schema_says="the result is an object ({}), not null",
    ),
    ("session-setup.mdx", "session/load result id=1"): Discrepancy(
        clause="SETUP-08",
        path="result",
        lenient_reads_it=False,  # as above (SETUP-09)
        schema_says="the result is a LoadSessionResponse object ({}), not null",
    ),
    ("session-modes.mdx", "session/update current_mode_update"): Discrepancy(
        clause="SCHEMA-03",
        path="params.update.currentModeId",
        lenient_reads_it=False,  # currentModeId is required
        schema_says="current_mode_update carries currentModeId, not modeId (MODES-06)",
    ),
    ("session-modes.mdx", "session/request_permission params id=3"): Discrepancy(
        clause="TOOL-12",
        path="params.toolCall.content[0].type",
        lenient_reads_it=True,  # the bad item is dropped (skip-invalid-items)
        schema_says="tool call content items are {type: content, content: <block>}",
    ),
}


@attrs.frozen
class Example:
    """One message block of a spec page."""

    page: str
    line: int
    label: str
    message: Any  # the parsed JSON, or None if the block is not valid JSON
    method: str | None = None
    part: str | None = None  # "params", "result" or "error"

    @property
    def test_id(self) -> str:
        return f"{self.page}:{self.line}:{self.label}"


_BLOCK = re.compile(r"```json[^\n]*\n(.*?)```", re.DOTALL)


def _label(message: dict[str, Any], method: str | None) -> str:
    if "method" in message:
        params = message.get("params")
        if message["method"] == "session/update" and isinstance(params, dict):
            return f"session/update {params.get('update', {}).get('sessionUpdate')}"
        rid = f" id={message['id']}" if "id" in message else ""
        return f"{message['method']} params{rid}"
    part = "error" if "error" in message else "result"
    return f"{method + ' ' if method else ''}{part} id={message.get('id')}"


def extract(path: Path) -> list[Example]:
    """The message blocks of one page, with their methods worked out."""
    text = path.read_text(encoding="utf-8")
    out: list[Example] = []
    requests: dict[Any, str] = {}
    for match in _BLOCK.finditer(text):
        block = match.group(1)
        if '"jsonrpc"' not in block:
            continue  # a fragment, not a whole message
        line = text.count("\n", 0, match.start()) + 1
        try:
            message = json.loads(block)
        except ValueError:  # `...` placeholders
            label = "session/update" if '"session/update"' in block else _unparsed_label(block)
            out.append(Example(page=path.name, line=line, label=label, message=None))
            continue
        if "method" in message:
            method, part = message["method"], "params"
            if "id" in message:
                requests[message["id"]] = method
        else:
            part = "error" if "error" in message else "result"
            method = requests.get(message["id"]) or UNPAIRED.get(path.name, {}).get(message["id"])
        out.append(
            Example(
                page=path.name,
                line=line,
                label=_label(message, method),
                message=message,
                method=method,
                part=part,
            )
        )
    return out


def _unparsed_label(block: str) -> str:
    found = re.search(r'"id":\s*(\d+)', block)
    kind = "result" if '"result"' in block else "params"
    return f"{kind} id={found.group(1) if found else None}"


def _all_examples() -> list[Example]:
    pages = require_spec_dir() / "v1"
    return [e for page in sorted(pages.glob("*.mdx")) for e in extract(page)]


EXAMPLES = _all_examples()
MESSAGES = [e for e in EXAMPLES if e.message is not None]


def _types(example: Example) -> Any:
    """The model of an example's params / result / error."""
    if example.part == "error":
        return schema.Error
    assert example.method is not None, f"{example.test_id}: no method (add it to UNPAIRED)"
    if is_extension(example.method):  # spec EXT-05: custom methods carry any JSON value
        if example.part == "result":
            return schema.ExtResponse
        return schema.ExtRequest if "id" in example.message else schema.ExtNotification
    row = METHODS[example.method]
    return row.params if example.part == "params" else row.result


def round_trip(example: Example) -> Any:
    """Strict decode, then encode, of the example's params / result / error."""
    type_ = _types(example)
    value = example.message[example.part]
    return encode(decode(value, type_, strict=True, root=example.part), type_)


def _params(examples: list[Example]) -> list[Any]:
    return [pytest.param(e, id=e.test_id) for e in examples]


def _is_known(example: Example) -> bool:
    return (example.page, example.label) in KNOWN_DISCREPANCIES


@pytest.mark.parametrize("example", _params([e for e in MESSAGES if not _is_known(e)]))
def test_example_round_trips(example: Example) -> None:
    message = example.message
    assert message["jsonrpc"] == "2.0"
    assert set(message) <= {"jsonrpc", "id", "method", "params", "result", "error"}
    if example.part == "params" and "id" not in message:
        assert METHODS.get(example.method) is None or METHODS[example.method].is_notification
    assert round_trip(example) == message[example.part]


@pytest.mark.parametrize("example", _params([e for e in MESSAGES if _is_known(e)]))
def test_known_discrepancy_still_fails(example: Example) -> None:
    known = KNOWN_DISCREPANCIES[(example.page, example.label)]
    with pytest.raises(DecodeError) as caught:
        round_trip(example)
    assert known.path in [p for p, _ in caught.value.errors], (known.clause, caught.value.errors)
    value = example.message[example.part]
    try:
        decode(value, _types(example), strict=False, root=example.part)
        lenient_reads_it = True
    except DecodeError:
        lenient_reads_it = False
    assert lenient_reads_it == known.lenient_reads_it, known.clause


def test_every_known_discrepancy_is_found() -> None:
    found = {(e.page, e.label) for e in MESSAGES}
    assert set(KNOWN_DISCREPANCIES) <= found


def test_unparseable_blocks_are_listed() -> None:
    # Blocks with `...` placeholders are not JSON; they are listed so that a new one is noticed.
    assert {(e.page, e.label) for e in EXAMPLES if e.message is None} == UNPARSEABLE


def test_unpaired_table_is_used() -> None:
    # Every UNPAIRED entry names a response the page really shows without its request.
    used = {
        (e.page, e.message["id"])
        for e in MESSAGES
        if e.part != "params" and e.method == UNPAIRED.get(e.page, {}).get(e.message["id"])
    }
    assert used == {(page, i) for page, ids in UNPAIRED.items() for i in ids}


def test_every_page_with_messages_was_read() -> None:
    # A guard against a broken extractor: the pages that show protocol traffic all yield some.
    pages = {e.page for e in MESSAGES}
    assert {"initialization.mdx", "prompt-turn.mdx", "tool-calls.mdx", "elicitation.mdx"} <= pages
    assert len(MESSAGES) >= 70


# -- The validated examples of the 2026-11 feature pages ------------------------------------------

#: ``<!-- validate: FILE DEF PART -->`` before a ```json block: the page's author validated the
#: block's PART against the $def DEF of FILE (SOURCE.md). acpref's model of DEF must read it
#: strictly and write it back unchanged.
_VALIDATE = re.compile(r"<!-- validate: (\S+) (\S+) (\S+) -->\s*```json\n(.*?)```", re.S)


def _validated_examples(schema_file: str) -> list[Any]:
    out = []
    for page in sorted((require_spec_dir() / "v1").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for found in _VALIDATE.finditer(text):
            file, def_name, part, block = found.groups()
            if file != schema_file:
                continue
            line = text[: found.start()].count("\n") + 1
            out.append(
                pytest.param(def_name, part, json.loads(block), id=f"{page.name}:{line}:{def_name}")
            )
    return out


STABLE_VALIDATED = _validated_examples("schema.json")


@pytest.mark.parametrize(("def_name", "part", "message"), STABLE_VALIDATED)
def test_validated_example_of_the_stable_schema_round_trips(def_name, part, message) -> None:
    type_ = getattr(schema, def_name)
    value = message[part]
    assert encode(decode(value, type_, strict=True, root=part), type_) == value


def test_every_stable_feature_page_example_is_read() -> None:
    # notices 2, compaction 4, tool-call name 2, leniency 1 (SOURCE.md: 20 validated in all).
    assert len(STABLE_VALIDATED) == 9
