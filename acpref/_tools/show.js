// The script of the acpref show page (acpref/_tools/show_html.py writes it inline).
// It draws the diagram from the layout embedded as JSON (the arrays of show_html._data, in the
// field order below), a screenful at a time as the reader scrolls. Peer text is escaped with
// esc() for markup and textContent for raw lines.
(function () {
"use strict";
// A row: [ms, from, to, kind, label, pair, turn, findings, index, size]; a finding:
// [clause, level, class, blame, message, row, requirement, page, section, link, quoted].
// A finding's colour, by level class (the stylesheet's .lv-* classes use the same).
var COLOURS = {"MUST": "#c62828", "SHOULD": "#e65100", "spec-gap": "#6a1b9a",
               "warning": "#00796b", "probe": "#757575"};
var TS = 84, LW = 180, PAD = 70, CHUNK = 300, FOLD_CHUNK = 500;
var parts = document.querySelectorAll("script.acpref-data"), cache = {};
var board = document.getElementById("board"), lanesBar = document.getElementById("lanes");
var more = document.getElementById("more"), style = document.createElement("style");
document.head.appendChild(style);
var D, X, W, next, itemOfRow, turnAt, shown = -1;

function esc(s) {
  return String(s).replace(/[&<>"']/g, function (c) {
    return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
  });
}
function secs(ms) { return "+" + (ms / 1000).toFixed(3); }
function worst(ids) {
  var order = ["MUST", "SHOULD", "spec-gap", "warning", "probe"], best = 9;
  ids.forEach(function (i) { best = Math.min(best, order.indexOf(D.findings[i][2])); });
  return best < 9 ? order[best] : null;
}
function arrow(r, lvl) {
  var x1 = X[r[1]], x2 = X[r[2]], k = r[3], c = lvl ? COLOURS[lvl] : null, y = 11, s;
  var paint = c ? ' style="stroke:' + c + (k === "request" ? ";fill:" + c : "") + '"' : "";
  if (k === "event") {
    return '<svg class="ar" width="' + W + '" height="22"><rect x="' + (x1 - 5) +
      '" y="6" width="10" height="10" fill="#888"' + paint + '/></svg>';
  }
  var dir = x2 > x1 ? 1 : -1, tip = x2 - dir * 3, back = tip - dir * 8;
  s = '<svg class="ar" width="' + W + '" height="22"><line x1="' + (x1 + dir * 3) + '" y1="' +
    y + '" x2="' + tip + '" y2="' + y + '" class="a-' + k + '"' + paint + '/>';
  var head = "M" + back + " " + (y - 4.5) + " L" + tip + " " + y + " L" + back + " " +
    (y + 4.5);
  s += k === "request" ? '<path d="' + head + ' z" class="h-request"' + paint + '/>'
                       : '<path d="' + head + '" class="h-open"' + paint + '/>';
  if (k === "invalid") {
    s += '<path d="M' + (x1 + dir * 10 - 4) + ' 7 l8 8 m0 -8 l-8 8" stroke="#b71c1c" ' +
      'stroke-width="2"/>';
  }
  return s + "</svg>";
}
function turnClass(r, n) {
  if (r[6] < 0) return "";
  var t = D.turns[r[6]];
  return " t" + r[6] + (n === t[2] || n === t[3] ? "" : " in");
}
function rowHtml(n) {
  var r = D.rows[n], lvl = worst(r[7]), tc = turnClass(r, n);
  var h = '<div class="row k-' + esc(r[3]) + tc + '" id="r' + n + '" data-n="' + n + '">' +
    '<span class="ts">' + secs(r[0]) + "</span>" + arrow(r, lvl) + '<span class="lb">';
  if (r[8] >= 0) h += '<span class="ix">#' + r[8] + "</span>";
  r[7].forEach(function (i) {
    var f = D.findings[i];
    h += '<span class="chip lv-' + esc(f[2]) + '">' + esc(f[2]) + " " +
      esc(f[0].replace(/^spec-gap:/, "")) + "</span> ";
  });
  h += esc(r[4]);
  if (r[5] >= 0) {
    var p = D.rows[r[5]];
    h += '<a class="pr" href="#r' + r[5] + '" data-row="' + r[5] + '">' +
      (r[5] > n ? "answered by #" : "answers #") + p[8] + " (" +
      Math.abs(p[0] - r[0]).toFixed(1) + " ms)</a>";
  }
  if (r[8] >= 0) h += '<button class="rawb" data-raw="' + n + '">raw</button>';
  h += "</span></div>";
  r[7].forEach(function (i) {
    var f = D.findings[i], link = f[9] ?
      ' <a class="spec" href="' + esc(f[9]) + '">' + esc(f[7] || "decisions.md") +
      (f[8] ? " · " + esc(f[8]) : "") + "</a>" : "";
    h += '<div class="fd lv-' + esc(f[2]) + tc + '"><span class="chip lv-' + esc(f[2]) + '">' +
      esc(f[1]) + "</span> <code>" + esc(f[0]) + "</code> · " + esc(f[3]) + ": " +
      esc(f[4]) + (f[6] ? (f[10] ? "<br><q>" + esc(f[6]) + "</q>" :
      '<br><span class="rule">' + esc(f[6]) + "</span>") : "") + link + "</div>";
  });
  return h;
}
function foldHtml(first, last, label, turn) {
  var r = D.rows[first], lvl = null, tc = turnClass(r, first);
  return '<div class="row fold k-notification' + tc + '" data-first="' + first +
    '" data-last="' + last + '"><span class="ts">' + secs(r[0]) + "</span>" +
    arrow(r, lvl) + '<span class="lb">▸ ' + esc(label) + " <span class=\"ix\">#" + r[8] +
    "–#" + D.rows[last][8] + "</span></span></div>";
}
function turnHtml(t) {
  var T = D.turns[t], end = T[3] >= 0 ? D.rows[T[3]] : null, first = D.rows[T[2]];
  var label = "▾ turn " + T[0] + " · session " + T[1] + " · prompt " + T[4] + " → " + T[5] +
    (end ? " · " + ((end[0] - first[0]) / 1000).toFixed(3) + " s" : "");
  return '<div class="turn" data-turn="' + t + '"><span class="ts">' + secs(first[0]) +
    '</span><span class="tt">' + esc(label) + "</span></div>";
}
function renderMore() {
  var html = [], end = Math.min(D.items.length, next + CHUNK);
  for (; next < end; next++) {
    var it = D.items[next];
    if (typeof it === "number") {
      if (turnAt[it] !== undefined) html.push(turnHtml(turnAt[it]));
      html.push(rowHtml(it));
    } else {
      html.push(foldHtml(it[0], it[1], it[2]));
    }
  }
  board.insertAdjacentHTML("beforeend", html.join(""));
  more.textContent = next < D.items.length ? "… scroll for more (" + next + " of " +
    D.items.length + " rows drawn)" : "end of transcript";
}
function fill() {
  while (next < D.items.length && more.getBoundingClientRect().top < innerHeight + 2500) {
    renderMore();
  }
}
function openFold(el) {
  var first = +el.dataset.first, last = +el.dataset.last, stop = Math.min(last, first +
    FOLD_CHUNK - 1), html = [];
  for (var n = first; n <= stop; n++) html.push(rowHtml(n));
  if (stop < last) {
    html.push(foldHtml(stop + 1, last, (last - stop) + " more session/update", null));
  }
  el.insertAdjacentHTML("afterend", html.join(""));
  el.remove();
}
function goto(n) {
  while (!document.getElementById("r" + n) && next < D.items.length) renderMore();
  var el = document.getElementById("r" + n), guard = 0;
  while (!el && guard++ < 1000) {
    var folds = board.querySelectorAll(".fold"), hit = null;
    for (var i = 0; i < folds.length; i++) {
      if (+folds[i].dataset.first <= n && n <= +folds[i].dataset.last) { hit = folds[i]; break; }
    }
    if (!hit) break;
    openFold(hit);
    el = document.getElementById("r" + n);
  }
  if (!el) return;
  var r = D.rows[n];
  if (r[6] >= 0) setTurn(r[6], true);
  el.scrollIntoView({block: "center"});
  el.classList.add("flash");
  setTimeout(function () { el.classList.remove("flash"); }, 1600);
}
var closed = {};
function setTurn(t, open) {
  closed[t] = !open;
  style.textContent = Object.keys(closed).filter(function (k) { return closed[k]; })
    .map(function (k) { return ".t" + k + ".in{display:none}"; }).join("\n");
  var bar = board.querySelector('.turn[data-turn="' + t + '"] .tt');
  if (bar) bar.textContent = (open ? "▾" : "▸") + bar.textContent.slice(1);
}
function show(i) {
  if (i === shown) return;
  shown = i;
  if (!cache[i]) cache[i] = JSON.parse(parts[i].textContent);
  D = cache[i];
  X = {};
  D.lanes.forEach(function (l, k) { X[l] = PAD + k * LW; });
  W = PAD * 2 + (D.lanes.length - 1) * LW;
  document.documentElement.style.setProperty("--lw", (TS + W + 8) + "px");
  itemOfRow = null;
  turnAt = {};
  D.turns.forEach(function (t, k) { turnAt[t[2]] = k; });
  board.innerHTML = D.lanes.map(function (l) {
    return '<div class="life" style="left:' + (TS + X[l]) + 'px"></div>';
  }).join("");
  lanesBar.innerHTML = D.lanes.map(function (l) {
    return '<span style="left:' + (TS + X[l]) + 'px">' + esc(l) + "</span>";
  }).join("");
  closed = {};
  style.textContent = "";
  next = 0;
  document.querySelectorAll("section.part").forEach(function (s, k) { s.hidden = k !== i; });
  document.querySelectorAll(".tabs button").forEach(function (b, k) {
    b.classList.toggle("on", k === i);
  });
  renderMore();
  fill();
}
document.addEventListener("click", function (ev) {
  var t = ev.target, el;
  if ((el = t.closest(".tabs button"))) { show(+el.dataset.part); return; }
  if ((el = t.closest("a.goto, a.pr"))) {
    ev.preventDefault();
    if (el.dataset.part !== undefined) show(+el.dataset.part);
    goto(+el.dataset.row);
    return;
  }
  if ((el = t.closest(".rawb"))) {
    var row = el.closest(".row"), shownRaw = row.nextElementSibling;
    while (shownRaw && shownRaw.classList.contains("fd")) shownRaw = shownRaw.nextElementSibling;
    if (shownRaw && shownRaw.tagName === "PRE" && shownRaw.dataset.of === el.dataset.raw) {
      shownRaw.remove();
      return;
    }
    var pre = document.createElement("pre"), n = +el.dataset.raw, text = D.raw[n];
    pre.className = "raw" + turnClass(D.rows[n], n);
    pre.dataset.of = el.dataset.raw;
    try { text += "\n\n" + JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
    if (D.rows[n][9] > text.length) text += "\n(" + D.rows[n][9] + " bytes; cut here)";
    pre.textContent = text;
    row.parentNode.insertBefore(pre, shownRaw);
    return;
  }
  if ((el = t.closest(".fold"))) { openFold(el); fill(); return; }
  if ((el = t.closest(".turn"))) { var k = +el.dataset.turn; setTurn(k, !!closed[k]); fill(); }
});
var pending = false;
addEventListener("scroll", function () {
  if (pending) return;
  pending = true;
  requestAnimationFrame(function () { pending = false; fill(); });
});
addEventListener("resize", fill);
show(+document.body.dataset.first || 0);
})();
