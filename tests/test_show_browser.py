"""``acpref show`` as a person sees it: the report of a broken agent, rendered by a real browser.

A broken agent (``tests/peers/show_agent.py``: a log line on stdout, an answer under a wrong id,
an update after the turn, hostile text) is driven through a session and its transcript drawn
with ``acpref show``; headless Chromium renders the page, with the network shut off, and the
test reads the DOM the page's script built: the arrows in wire order, each violation marked on
its message with its clause, the summary's counts, and the hostile text shown as text. A
screenshot is kept in ``build/test-artifacts/`` (or ``$ACPREF_ARTIFACTS``) for a person to look
at. Skipped, saying so, where no Chromium is installed (``apt-get install chromium``).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acpref.testing import AgentDriver
from peers.show_agent import UPDATES

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, str(HERE / "peers" / "show_agent.py")]
ARTIFACTS = Path(os.environ.get("ACPREF_ARTIFACTS") or HERE.parent / "build" / "test-artifacts")


def _browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (apt-get install chromium); the page is not rendered")


def _chromium(browser: str, profile: Path, *args: str) -> str:
    argv = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}",
        # No network: the page must need nothing beyond itself.
        "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
        "--window-size=1300,1100", "--virtual-time-budget=5000", *args,
    ]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.timeout(240)
def test_a_person_sees_the_arrows_the_violations_and_the_counts(tmp_path):
    browser = _browser()
    transcript = tmp_path / "broken.jsonl"
    driver = AgentDriver.spawn(AGENT, transcript=transcript, timeout=10)
    driver.initialize()
    session = driver.new_session(str(tmp_path))
    driver.prompt(session, "hello <b>there</b>")
    # The agent's update after its answer (spec-gap content-after-turn) may still be on its way:
    # close only once it is read, so that the transcript has it before the client's close, in
    # the order the test reads below.
    assert driver.wait_updates(session, UPDATES, timeout=10), driver.updates(session)
    report = driver.close()
    assert {f.clause for f in report.violations} == {"TRANSPORT-08", "RPC-04"}
    assert {f.clause for f in report.gaps} == {"spec-gap:content-after-turn"}

    page = tmp_path / "broken.html"
    result = subprocess.run(
        [sys.executable, "-m", "acpref", "show", str(transcript), "-o", str(page)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr

    dom = _chromium(browser, tmp_path / "profile", "--dump-dom", page.as_uri())
    # The hostile text never ran: the title is the page's own, no injected element exists.
    assert "<title>acpref show: broken.jsonl</title>" in dom
    assert "pwned" not in re.search(r"<title>.*?</title>", dom).group(0)
    assert "<img" not in dom and 'onerror="alert' not in dom
    assert html.escape("agent starting <b>up</b>", quote=False) in dom

    # The summary: the headline and the counts by level.
    assert "The agent broke 2 MUST rules." in dom
    counts = dict(re.findall(r'data-count="([\w-]+)">[\w-]+ <b>(\d+)</b>', dom))
    assert counts == {"MUST": "2", "SHOULD": "0", "spec-gap": "1", "warning": "0"}
    assert re.search(r'data-fact="turns">1<', dom) and re.search(r'data-fact="sessions">1<', dom)

    # The arrows, in wire order: one row per message the script drew, numbered as the oracle
    # numbers them; the long run of chunks is one fold.
    rows = re.findall(
        r'<div class="row ([^"]*)" id="r(\d+)"[^>]*>.*?<span class="lb">(.*?)</span></div>', dom
    )
    numbers = [int(n) for _, n, _ in rows]
    assert numbers == sorted(numbers) and len(rows) >= 10
    labels = [label for _, _, label in rows]
    order = ["initialize v1", "unreadable line", "session/new", "session/prompt “hello",
             "no request has id 103", "session/prompt result end_turn", "one more thing",
             "client closed its output"]
    where = [next(i for i, label in enumerate(labels) if text in html.unescape(label))
             for text in order]
    assert where == sorted(where), list(zip(order, where))
    assert re.search(r'class="row fold[^"]*"[^>]*>.*?32 session/update', dom)
    assert dom.count('<svg class="ar"') >= len(rows)

    # Each violation is marked on the message that broke it, with its clause and its page.
    for level, clause, label in (
        ("MUST", "TRANSPORT-08", "unreadable line"),
        ("MUST", "RPC-04", "no request has id"),
        ("spec-gap", "spec-gap:content-after-turn", "one more thing"),
    ):
        row = next(r for r in rows if label in html.unescape(r[2]))
        # A decision's chip reads "spec-gap <name>".
        assert f"{level} {clause.removeprefix('spec-gap:')}" in row[2], row
        marked = re.search(
            rf'id="r{row[1]}".*?</div><div class="fd lv-{level}[^"]*">.*?{clause}.*?</div>', dom)
        assert marked, clause
        assert 'class="spec" href=' in marked.group(0)

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "show-broken-agent.png"
    _chromium(browser, tmp_path / "profile", f"--screenshot={shot}", page.as_uri())
    assert shot.stat().st_size > 10_000


_CLICKS = """<script>
setTimeout(function () {
  function hidden() {
    return [].filter.call(document.querySelectorAll(".row.t0"), function (r) {
      return getComputedStyle(r).display === "none";
    }).length;
  }
  var out = {};
  document.querySelector(".fold").click();
  out.folds = document.querySelectorAll(".fold").length;
  out.rows = document.querySelectorAll(".row").length;
  document.querySelector(".rawb[data-raw='1']").click();
  out.raw = document.querySelector("pre.raw").textContent.split("\\n")[0];
  document.querySelector(".turn").click();
  out.closed = hidden();
  document.querySelector(".turn").click();
  out.reopened = hidden();
  document.body.setAttribute("data-clicked", JSON.stringify(out));
}, 100);
</script></body>"""


@pytest.mark.timeout(240)
def test_a_person_opens_a_fold_a_raw_line_and_folds_a_turn(tmp_path):
    import json

    browser = _browser()
    transcript = tmp_path / "broken.jsonl"
    driver = AgentDriver.spawn(AGENT, transcript=transcript, timeout=10)
    driver.initialize()
    driver.prompt(driver.new_session(str(tmp_path)), "hello")
    driver.close()
    page = tmp_path / "broken.html"
    subprocess.run([sys.executable, "-m", "acpref", "show", str(transcript), "-o", str(page)],
                   check=True, capture_output=True, timeout=60)
    # The page's own script, then clicks as a person would make them.
    clicked = tmp_path / "clicked.html"
    clicked.write_text(page.read_text(encoding="utf-8").replace("</body>", _CLICKS),
                       encoding="utf-8")
    dom = _chromium(browser, tmp_path / "profile", "--dump-dom", clicked.as_uri())
    found = re.search(r'data-clicked="([^"]*)"', dom)
    assert found, "the clicks did not run"
    out = json.loads(html.unescape(found.group(1)))
    assert out["folds"] == 0 and out["rows"] >= 40  # the 32 chunks, one row each
    assert out["raw"] == "agent starting <b>up</b>"  # the line as it travelled, as text
    assert out["closed"] >= 32 and out["reopened"] == 0  # the turn's inner rows hide and return
