"""The page's style sheet and its script (inlined by ``page.py``; the page loads nothing else).

The script reads the charts from the ``<script type="application/json" id="ssdlab-report">`` block:
``{"charts": [{"id", "keys": [[i, j], ...], "specs": [{"data", "layout"}, ...]}]}``. Each chart has
a ``<div id="plot-ID" class="plot">`` and, if switchable, buttons ``<button data-chart=ID data-row=R
data-index=I>``. A click selects that button in its row; if the chart has no spec for the new
combination, the script picks the spec with that button that keeps most of the other rows' choices
(earlier rows first), so a drive button always works and a spare-area button the drive lacks is
greyed out (disabled).
"""

CSS = """
:root {
  --ink: #111827; --muted: #6b7280; --line: #e5e7eb; --bg: #f4f5f7; --card: #ffffff;
  --accent: #2563eb; --accent-ink: #ffffff;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; line-height: 1.5; }
header.top { background: var(--card); border-bottom: 1px solid var(--line); }
header.top .inner, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 24px; }
header.top .inner { padding-top: 28px; padding-bottom: 18px; }
.brand { font-size: 12px; font-weight: 600; letter-spacing: .08em; text-transform: uppercase; color: var(--accent); }
h1 { font-size: 28px; line-height: 1.2; margin: 4px 0 6px; }
p.intro { margin: 0 0 14px; color: var(--muted); max-width: 860px; }
nav { display: flex; flex-wrap: wrap; gap: 8px; }
nav a { font-size: 13px; color: var(--ink); text-decoration: none; border: 1px solid var(--line);
  border-radius: 999px; padding: 3px 12px; background: #fafafa; }
nav a:hover { border-color: var(--accent); color: var(--accent); }
main { padding-top: 20px; padding-bottom: 8px; }
section.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 20px 24px 16px; margin-bottom: 22px; box-shadow: 0 1px 2px rgba(16,24,40,.04); }
section.card > h2 { font-size: 20px; margin: 0 0 4px; }
section.card > p.lede { margin: 0 0 12px; color: var(--muted); font-size: 14px; max-width: 900px; }
figure.chart { margin: 14px 0 18px; padding-top: 6px; border-top: 1px solid var(--line); }
figure.chart:first-of-type { border-top: 0; }
.plot { width: 100%; min-height: 260px; }
.switch { display: grid; grid-template-columns: max-content 1fr; gap: 6px 12px; align-items: center;
  margin: 4px 0 0 8px; }
.switch .row-name { font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase;
  letter-spacing: .05em; }
.switch .buttons { display: flex; flex-wrap: wrap; gap: 6px; }
.switch button { font: inherit; font-size: 13px; padding: 4px 12px; border-radius: 6px; cursor: pointer;
  border: 1px solid #d1d5db; background: #fff; color: var(--ink); transition: background .12s, color .12s; }
.switch button:hover:not(:disabled) { border-color: var(--accent); color: var(--accent); }
.switch button.on, .switch button.on:hover { background: var(--accent); border-color: var(--accent); color: var(--accent-ink); }
.switch button:disabled { cursor: not-allowed; color: #b8bcc4; background: #f3f4f6; border-style: dashed; }
figcaption { font-size: 13px; color: var(--muted); margin: 6px 0 0 8px; }
.table-wrap { overflow-x: auto; margin: 10px 0 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 9px; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: #fafafa; white-space: normal;
  vertical-align: bottom; line-height: 1.25; }
th[title] { text-decoration: underline dotted #c0c4cc; cursor: help; }
td.num, th.num { text-align: right; }
tbody tr:nth-child(even) td { background: #fcfcfd; }
tbody tr:hover td { background: #eff4ff; }
td.missing { color: #b8bcc4; }
footer { color: var(--muted); font-size: 12px; padding-bottom: 32px; }
footer code, p code { font-size: 12px; background: #f3f4f6; padding: 1px 4px; border-radius: 4px; }
@media print { .switch, nav { display: none; } section.card { break-inside: avoid; } }
figure.image { margin: 8px 0 14px; }
figure.image img { width: 100%; height: auto; display: block; border: 1px solid var(--line); border-radius: 6px;
  background: #fff; }
.grid-block h3 { font-size: 16px; margin: 18px 0 8px; }
.grid { display: grid; grid-template-columns: repeat(var(--columns), minmax(0, 1fr)); gap: 16px; }
@media (max-width: 900px) { .grid { grid-template-columns: minmax(0, 1fr); } }
.grid .cell-head { font-size: 13px; font-weight: 600; color: var(--muted); margin-bottom: 4px; }
.notes h4 { font-size: 13px; margin: 8px 0 4px; }
.notes ul { margin: 0 0 10px; padding-left: 20px; font-size: 13px; }
.notes li.none { color: var(--muted); list-style: none; margin-left: -20px; }
"""

JS = r"""
(function () {
  "use strict";
  var report = JSON.parse(document.getElementById("ssdlab-report").textContent);
  var config = { displaylogo: false, responsive: true,
                 modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"] };
  function same(a, b) { for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false; return true; }
  report.charts.forEach(function (chart) {
    var div = document.getElementById("plot-" + chart.id);
    var buttons = Array.prototype.slice.call(
      document.querySelectorAll('button[data-chart="' + chart.id + '"]'));
    var state = chart.keys[0].slice();
    function find(key) {
      for (var i = 0; i < chart.keys.length; i++) if (same(chart.keys[i], key)) return i;
      return -1;
    }
    function show() {
      var i = find(state), spec = chart.specs[i];
      Plotly.react(div, spec.data, spec.layout, config);
      div.setAttribute("data-spec", String(i));
      buttons.forEach(function (b) {
        var r = +b.getAttribute("data-row"), v = +b.getAttribute("data-index");
        var on = state[r] === v;
        b.classList.toggle("on", on);
        b.setAttribute("aria-pressed", on ? "true" : "false");
        if (r > 0) {
          var key = state.slice(); key[r] = v;
          b.disabled = find(key) < 0;
          b.title = b.disabled ? "not measured for this selection" : "";
        }
      });
    }
    function choose(r, v) {
      var key = state.slice(); key[r] = v;
      if (find(key) < 0) {
        var best = -1, bestScore = -1;
        chart.keys.forEach(function (k, i) {
          if (k[r] !== v) return;
          var score = 0;
          for (var j = 0; j < k.length; j++) if (j !== r && k[j] === state[j]) score += 1 << (k.length - j);
          if (score > bestScore) { best = i; bestScore = score; }
        });
        if (best < 0) return;
        key = chart.keys[best].slice();
      }
      state = key;
      show();
    }
    buttons.forEach(function (b) {
      b.addEventListener("click", function () {
        choose(+b.getAttribute("data-row"), +b.getAttribute("data-index"));
      });
    });
    show();
  });
  document.body.setAttribute("data-ready", "true");
})();
"""
