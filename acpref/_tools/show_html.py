"""The HTML of ``acpref show``: one self-contained page from one or more ``Layout``s.

The layout is the oracle's (``acpref.oracle._show``, plain data); this writer is presentation,
used by the command line and the pytest plugin, and may look at the checkout acpref runs from
(the carried spec and ``spec_notes/decisions.md`` to link and quote).

The page needs nothing beyond itself (no network, no external asset; it opens from disk). The
summary, the legend and the list of findings are plain HTML, complete without scripts. The
diagram is drawn by a little inline script from the layout embedded as JSON, a screenful at a
time as the reader scrolls, so that a transcript of 100,000 messages opens at once; folds and
turns open and close in place.

Every string that came from a peer is escaped where it is written: ``html.escape`` here, and in
the script an ``esc`` for markup or ``textContent`` for raw lines. The embedded JSON escapes
``<``, ``>`` and ``&`` so that no message can close its ``<script>`` element.

Every tool writes its page through ``write_page``: whole or not at all (a temporary file in the
same directory, renamed over the old page), so a page that fails to be written never replaces a
good one and never is left empty. Writing never fails on the text: the layout made peer text
inert, and whatever else cannot be UTF-8 is written as its ``\\u`` escape.

The fixed parts of the page are package data files beside this module, written into every page
as they are: ``show.css`` (the stylesheet), ``show.js`` (the script that draws the diagram from
the arrays of ``_data``, in the field order it names) and ``show_legend.html`` (how to read the
diagram).
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import tempfile
from importlib import resources
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..oracle._show import LEVELS, PROBE, Layout, build_layout
from ..oracle._validate import Report
from .spec_index import repo_root

__all__ = ["render_html", "spec_link", "write_report", "write_page", "SPEC_SITE"]

#: The public pages of the spec, for a report written where no carried copy can be linked.
SPEC_SITE = "https://agentclientprotocol.com/protocol/"
#: The JSON-RPC 2.0 sentences a finding may quote (ACP follows JSON-RPC 2.0), and their origin.
JSONRPC_PAGE, JSONRPC_SITE = "jsonrpc-2.0.md", "https://www.jsonrpc.org/specification"


def spec_link(page: str, out_path: Optional[str], root: Optional[str]) -> str:
    """Where a finding's page link points (spec_notes/oracle.md, "acpref show").

    The carried spec (``spec_notes/spec/v1/PAGE`` of the checkout acpref runs from) by a relative
    path when the report is written inside that checkout (the link survives moving the checkout),
    by its absolute ``file://`` URL when written elsewhere on the machine; an installed acpref
    carries no spec, so its reports link the spec's public site.
    """
    if not page:
        return ""
    # The schemas and JSON-RPC 2.0's sentences sit beside the pages, in spec_notes/spec/.
    name = page if page.endswith(".json") or page == JSONRPC_PAGE else os.path.join("v1", page)
    if root is not None:
        target = os.path.join(root, "spec_notes", "spec", name)
        if os.path.exists(target):
            return _local_link(target, out_path, root)
    if page == JSONRPC_PAGE:
        return JSONRPC_SITE
    stem = os.path.splitext(os.path.basename(page))[0]
    return SPEC_SITE + ("schema" if page.endswith(".json") else stem)


def _decision_link(clause: str, out_path: Optional[str], root: Optional[str]) -> str:
    if root is None:
        return ""
    return _local_link(os.path.join(root, "spec_notes", "decisions.md"), out_path, root)


def _local_link(target: str, out_path: Optional[str], root: str) -> str:
    """A link to a file of the checkout: relative when the page is written inside it (the
    page and the file move together), else an absolute ``file://`` URL."""
    if out_path is not None:
        out_dir = os.path.dirname(os.path.realpath(out_path))
        real_root = os.path.realpath(root)
        if os.path.commonpath([out_dir, real_root]) == real_root:
            return os.path.relpath(os.path.realpath(target), out_dir).replace(os.sep, "/")
    return "file://" + os.path.realpath(target)


@functools.lru_cache(maxsize=4)
def _decisions(root: Optional[str]) -> Dict[str, str]:
    """acpref's decisions by name, from ``spec_notes/decisions.md`` of the checkout, if any."""
    path = os.path.join(root, "spec_notes", "decisions.md") if root else None
    if path is None or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out: Dict[str, str] = {}
    for match in re.finditer(r"^### ([a-z0-9-]+)\n(.*?)(?:\n\n|\Z)", text, re.M | re.S):
        paragraph = " ".join(match.group(2).replace("*", "").replace("`", "").split())
        out[match.group(1)] = paragraph if len(paragraph) <= 400 else paragraph[:399] + "…"
    return out


def _requirement(clause: str, requirement: str, root: Optional[str]) -> str:
    """The clause's sentence, or for a decision of acpref its paragraph in decisions.md."""
    if requirement or not clause.startswith("spec-gap:"):
        return requirement
    return _decisions(root).get(clause.split(":", 1)[1], "")


def _json_for_script(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _data(layout: Layout, links: List[str], root: Optional[str]) -> Dict[str, Any]:
    """The layout as compact arrays for the script (see the field order in show.js)."""
    rows = [
        [
            round(r.ts * 1000, 1),
            r.sender,
            r.receiver,
            r.kind,
            r.label,
            -1 if r.pair is None else r.pair,
            -1 if r.turn is None else r.turn,
            list(r.findings),
            -1 if r.index is None else r.index,
            r.size,
        ]
        for r in layout.rows
    ]
    items: List[Any] = [
        it if isinstance(it, int) else [it.first, it.last, it.label] for it in layout.items
    ]
    return {
        "lanes": layout.lanes,
        "rows": rows,
        "raw": [r.raw for r in layout.rows],
        "items": items,
        "turns": [
            [t.number, t.session, t.request, -1 if t.answer is None else t.answer, t.label,
             t.outcome]
            for t in layout.turns
        ],
        "findings": [
            [f.clause, f.level, f.level_class, f.who, f.message, f.row,
             _requirement(f.clause, f.requirement, root), f.page, f.section, links[i],
             f.quoted]
            for i, f in enumerate(layout.findings)
        ],
    }


def _plural(n: int, one: str, many: Optional[str] = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _probes(n: int) -> str:
    """The clause naming acpref's deliberate rule-breaking, for a headline ("" for none)."""
    if not n:
        return ""
    return f" ({_plural(n, 'finding')} of acpref's probes, on purpose, drawn grey)"


def _headline(layout: Layout) -> Tuple[str, str]:
    """One sentence a newcomer reads first, and its level class (for its colour).

    Only the subject's findings count: acpref's probes are named apart, never as broken rules.
    """
    musts: Dict[str, int] = {}
    for f in layout.findings:
        if f.level_class == "MUST":
            musts[f.who] = musts.get(f.who, 0) + 1
    levels = layout.summary["levels"]
    probes = _probes(layout.summary["probes"])
    if musts:
        parts = [f"{who} broke {_plural(n, 'MUST rule')}" for who, n in sorted(musts.items())]
        text = " and ".join(parts)
        return text[0].upper() + text[1:] + probes + ".", "MUST"
    others = [f"{_plural(levels[k], k + ' finding')}" for k in LEVELS[1:] if levels[k]]
    if others:
        return "No MUST rule was broken; " + ", ".join(others) + probes + ".", next(
            k for k in LEVELS[1:] if levels[k]
        )
    if probes:
        return "No rule was broken" + probes + ".", "ok"
    return "No rule was broken: every message passed every check of the oracle.", "ok"


def _overall(parts: Sequence[Tuple[str, Layout]], verdict: Optional[bool]) -> Tuple[str, str]:
    """The headline of a page of several transcripts (a check-agent run).

    ``verdict`` is the run's own (True: ok), which the page states first: the same words as the
    terminal's first line. None (no run behind the page): judged from the transcripts alone.
    """
    worst = [next((k for k in LEVELS if layout.summary["levels"][k]), "") for _, layout in parts]
    broken = sum(1 for w in worst if w == "MUST")
    probes = _probes(sum(layout.summary["probes"] for _, layout in parts))
    found = sum(1 for w in worst if w)
    if verdict is False or (verdict is None and broken):
        where = (f"MUST rules were broken in {broken} of {_plural(len(parts), 'transcript')}: "
                 "the scenarios marked red") if broken else "see the checks, clause by clause"
        return f"Failed: {where}{probes}.", "MUST"
    start = "ok: " if verdict else ""
    if broken:  # the run passed, yet the subject broke a MUST rule no clause of it decides
        return (f"ok: the check passed, yet MUST rules were broken in {broken} of "
                f"{_plural(len(parts), 'transcript')}: the scenarios marked red{probes}.", "MUST")
    if found:
        have = "has" if found == 1 else "have"
        text = f"no MUST rule was broken; {found} of {len(parts)} transcripts {have} findings"
        text = (start + text) if start else text[0].upper() + text[1:]
        # A run that passed opens on green, as the terminal's "ok": the chips say the rest.
        return text + probes + ".", "ok" if verdict else next(w for w in worst if w)
    text = f"no rule was broken in any of the {_plural(len(parts), 'transcript')}"
    text = (start + text) if start else text[0].upper() + text[1:]
    return text + probes + ".", "ok"


def _first_shown(parts: Sequence[Tuple[str, Layout]]) -> int:
    """The part shown first: the first with a MUST finding, else with any finding, else 0."""
    for wanted in (("MUST",), LEVELS):
        for i, (_, layout) in enumerate(parts):
            if any(layout.summary["levels"][k] for k in wanted):
                return i
    return 0


def _rule_html(text: str, quoted: bool) -> str:
    """The spec's sentence in quotes; the register's wording of a clause (or a decision) not."""
    if not text:
        return ""
    escaped = html.escape(text)
    return f"<q>{escaped}</q>" if quoted else f'<span class="rule">{escaped}</span>'


def _seconds(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def _summary_html(layout: Layout, index: int, links: List[str], root: Optional[str]) -> str:
    s = layout.summary
    e = html.escape
    headline, cls = _headline(layout)
    chips = " ".join(
        f'<span class="chip lv-{e(k)}" data-count="{k}">{e(k)} <b>{s["levels"][k]}</b></span>'
        for k in LEVELS
    )
    names = s["names"]
    facts = [
        ("messages", f"{s['messages']} (client → agent {s['from_client']}, "
                     f"agent → client {s['from_agent']})"),
        ("sessions", str(s["sessions"])),
        ("turns", str(s["turns"])),
        ("duration", _seconds(s["duration"])),
        ("agent", names.get("agent", "(no agentInfo)")),
        ("client", names.get("client", "(no clientInfo)")),
    ]
    table = "".join(
        f'<tr><th>{e(k)}</th><td data-fact="{e(k)}">{e(v)}</td></tr>' for k, v in facts
    )
    findings = []
    for i, f in enumerate(layout.findings):
        where = f"message #{f.index}" if f.index is not None else "end of transcript"
        link = (
            f' <a class="spec" href="{e(links[i])}">{e(f.page or "decisions.md")}'
            f'{(" · " + e(f.section)) if f.section else ""}</a>'
            if links[i]
            else ""
        )
        requirement = _requirement(f.clause, f.requirement, root)
        req = _rule_html(requirement, f.quoted)
        findings.append(
            f'<li class="lv-{e(f.level_class)}"><span class="chip lv-{e(f.level_class)}">'
            f"{e(f.level)}</span> <code>{e(f.clause)}</code> "
            f'<a class="goto" href="#r{f.row}" data-part="{index}" data-row="{f.row}">{where}</a>'
            f" · {e(f.who)}: {e(f.message)}<br>{req}{link}</li>"
        )
    listing = (
        f'<ol class="findings">{"".join(findings)}</ol>'
        if findings
        else '<p class="none">No findings.</p>'
    )
    return (
        f'<p class="headline lv-{e(cls)}">{e(headline)}</p>'
        f'<div class="chips">{chips}</div><table class="facts">{table}</table>'
        f"<h2>Findings</h2>{listing}"
    )


def render_html(
    parts: Sequence[Tuple[str, Layout]],
    *,
    title: str,
    out_path: Optional[str] = None,
    root: Optional[str] = None,
    notes: str = "",
    verdict: Optional[bool] = None,
) -> str:
    """The page for one transcript or several (check-agent: one per scenario); ``verdict``:
    the run's own (check-agent's ``ok``), which the page's headline states."""
    e = html.escape
    sections, scripts, tabs = [], [], []
    for i, (name, layout) in enumerate(parts):
        links = [
            _decision_link(f.clause, out_path, root)
            if f.clause.startswith("spec-gap")
            else spec_link(f.page, out_path, root)
            for f in layout.findings
        ]
        levels = dict(layout.summary["levels"], **{PROBE: layout.summary["probes"]})
        badge = "".join(
            f' <span class="chip lv-{e(k)}">{levels[k]}</span>' for k in (*LEVELS, PROBE)
            if levels[k]
        )
        tabs.append(f'<button data-part="{i}">{e(name)}{badge}</button>')
        heading = f"<h2>{e(name)}</h2>" if len(parts) > 1 else ""
        sections.append(
            f'<section class="part" id="part-{i}">{heading}{_summary_html(layout, i, links, root)}'
            "</section>"
        )
        scripts.append(
            f'<script type="application/json" class="acpref-data">'
            f"{_json_for_script(_data(layout, links, root))}</script>"
        )
    overall, overall_class = _overall(parts, verdict)
    tab_bar = (
        f'<p class="headline lv-{e(overall_class)}">{e(overall)}</p>'
        f'<div class="tabs">{"".join(tabs)}</div>'
        if len(parts) > 1
        else ""
    )
    first = _first_shown(parts)
    notes_html = (
        f"<details><summary>The checks, clause by clause</summary><pre>{e(notes)}</pre></details>"
        if notes
        else ""
    )
    style, script, legend = _asset("show.css"), _asset("show.js"), _asset("show_legend.html")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{e(title)}</title><meta name=\"viewport\" content=\"width=device-width\">"
        f'<style>{style}</style></head><body data-first="{first}"><header><h1>{e(title)}</h1>'
        f"{tab_bar}"
        f"{''.join(sections)}{notes_html}{legend}</header>"
        '<noscript><p>The diagram is drawn by the page\'s script; the findings above are '
        "complete without it.</p></noscript>"
        '<div id="lanes"></div><div id="board"></div><div id="more"></div>'
        f"{''.join(scripts)}<script>{script}</script></body></html>\n"
    )


@functools.lru_cache(maxsize=None)
def _asset(name: str) -> str:
    """A fixed part of the page: a data file of this package (setup.cfg ships it)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def write_report(
    out_path: str,
    transcripts: Sequence[Tuple[str, Any, Optional[Report]]],
    *,
    title: Optional[str] = None,
    notes: str = "",
    verdict: Optional[bool] = None,
) -> str:
    """Write the page for ``(name, transcript, report or None)`` parts; returns ``out_path``.

    A transcript is a path or records; a report not given is judged from the transcript.
    ``verdict`` is the run's own, when a run wrote the page (see ``render_html``).
    """
    parts = [(name, build_layout(transcript, report)) for name, transcript, report in transcripts]
    page = render_html(
        parts,
        title=title or f"acpref show: {parts[0][0] if len(parts) == 1 else 'transcripts'}",
        out_path=out_path,
        root=repo_root(),
        notes=notes,
        verdict=verdict,
    )
    write_page(out_path, page)
    return out_path


def write_page(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: the old file stays whole until the new one is."""
    data = text.encode("utf-8", "backslashreplace")
    fd, part = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".part",
        dir=os.path.dirname(os.path.abspath(path)),
    )
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o644)
            f.write(data)
        os.replace(part, path)
    except BaseException:
        try:
            os.unlink(part)
        except OSError:
            pass
        raise
