// The HTML diff report (`heapgraph diff --html`, docs/diff.md): one self-contained page, with
// inline CSS, JS and SVG and a Content-Security-Policy that lets no request leave it. The diff's
// JSON (diff_json) is embedded once, script-safe (html_common.h); the script draws from it
// with textContent and createElementNS only, never innerHTML, so dump strings stay text:
//   1. summary: the dumps, reachable heap per dump, the threshold;
//   2. a bar chart of the top growers (retained growth, baseline to last);
//   3. the growth suspects, each with a sparkline of its retained size across the series;
//   4. the per-class delta table, sortable by any column, filtered by class name.
#include "html_common.h"
#include "reports.h"

namespace heapgraph::reports {

namespace {

constexpr const char* kHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { margin: 0; background: #f4f6f9; color: #1d2733; font: 14px/1.5 system-ui, "DejaVu Sans", Arial, sans-serif; }
header { background: #1f2d3d; color: #fff; padding: 16px 28px; }
header h1 { margin: 0; font-size: 20px; }
main { max-width: 1200px; margin: 0 auto; padding: 0 20px 40px; }
section { background: #fff; border: 1px solid #d9dee5; border-radius: 10px; padding: 18px 22px; margin-top: 20px; }
h2 { margin: 0 0 10px; font-size: 17px; }
.mono, code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #e3e7ec; vertical-align: top; }
th { cursor: pointer; user-select: none; background: #f0f3f7; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.up { color: #b3261e; } .down { color: #1b7a3a; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #e8edf3; }
.badge.new { background: #fde2e0; } .badge.vanished { background: #dff3e5; }
.suspect { border-top: 1px solid #e3e7ec; padding: 10px 0; display: flex; gap: 16px; align-items: flex-start; }
.suspect p { margin: 2px 0; }
.empty { color: #5b6776; }
input[type=search] { padding: 4px 8px; margin-bottom: 8px; width: 320px; }
svg text { font: 12px system-ui, "DejaVu Sans", Arial, sans-serif; fill: #1d2733; }
</style>
)";

constexpr const char* kTail = R"(</head><body>
<header><h1>heapgraph diff</h1><div class="mono" id="files"></div></header>
<main>
<section id="summary"><h2>Dumps</h2><table id="dumps"></table><p id="verdict"></p></section>
<section id="growers"><h2>Top growers</h2><p class="empty" id="growers-empty" hidden>No holder grew.</p><svg id="bars" width="1100" height="0" role="img" aria-label="top growers"></svg></section>
<section id="suspects"><h2>Growth suspects</h2><div id="suspect-list"></div></section>
<section id="classes"><h2>Class deltas</h2><input type="search" id="filter" placeholder="filter by class name"><p class="empty" id="unchanged"></p><table id="class-table"></table></section>
</main>
<script>
(function () {
'use strict';
var data = JSON.parse(document.getElementById('heapgraph-data').textContent);
var SVG = 'http://www.w3.org/2000/svg';
function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; }
function sv(tag, attrs) { var e = document.createElementNS(SVG, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); return e; }
function bytes(n) { var a = Math.abs(n), u = ['B', 'KB', 'MB', 'GB', 'TB'], i = 0; while (a >= 1024 && i < u.length - 1) { a /= 1024; i++; } return (n < 0 ? '-' : '') + (i ? a.toFixed(1) : a) + ' ' + u[i]; }
function signed(n) { return (n > 0 ? '+' : '') + bytes(n); }
function grouped(n) { return Number(n).toLocaleString('en-US'); }
var dumps = data.dumps, last = dumps.length - 1, base = dumps[0].retained_bytes_total;
document.getElementById('files').textContent = dumps.map(function (d) { return d.source; }).join('  \u2192  ');
var dt = document.getElementById('dumps');
var hr = el('tr'); ['#', 'file', 'kind', 'objects', 'reachable heap', 'holders'].forEach(function (h, i) { hr.appendChild(el('th', h, i > 2 ? 'num' : '')); }); dt.appendChild(hr);
dumps.forEach(function (d, i) { var r = el('tr'); r.appendChild(el('td', i === 0 ? 'baseline' : i)); r.appendChild(el('td', d.source, 'mono')); r.appendChild(el('td', d.kind)); r.appendChild(el('td', grouped(d.objects), 'num')); r.appendChild(el('td', bytes(d.retained_bytes_total), 'num')); r.appendChild(el('td', d.holders, 'num')); dt.appendChild(r); });
document.getElementById('verdict').textContent = 'Reachable heap ' + signed(data.reachable_growth_bytes) + ' since the baseline; growth suspects grew by more than ' + data.growth_threshold_percent + '% of the baseline (' + bytes(data.growth_threshold_bytes) + '): ' + data.growth_suspects.length + '.';
// Bar chart of the top growers.
var bars = document.getElementById('bars'), top = data.top_growers.slice(0, 15);
if (!top.length) document.getElementById('growers-empty').hidden = false;
var max = top.length ? top[0].growth_bytes : 1, rowH = 24, labelW = 520, barW = 440;
bars.setAttribute('height', top.length * rowH + 4);
top.forEach(function (g, i) {
  var y = i * rowH + 2, w = Math.max(2, barW * g.growth_bytes / max);
  var label = sv('text', { x: labelW - 6, y: y + 15, 'text-anchor': 'end' }); label.textContent = g['class'].length > 70 ? g['class'].slice(0, 69) + '\u2026' : g['class'];
  var title = sv('title', {}); title.textContent = g.signature; label.appendChild(title);
  var bar = sv('rect', { x: labelW, y: y + 3, width: w, height: rowH - 8, rx: 3, fill: g.grew_every_interval && dumps.length > 2 ? '#c0392b' : '#e67e22' });
  var t2 = sv('title', {}); t2.textContent = g.description; bar.appendChild(t2);
  var value = sv('text', { x: labelW + w + 6, y: y + 15 }); value.textContent = signed(g.growth_bytes);
  bars.appendChild(label); bars.appendChild(bar); bars.appendChild(value);
});
// A sparkline of retained bytes across the series.
function sparkline(values) {
  var w = 160, h = 36, hi = Math.max.apply(null, values.concat([1])), s = sv('svg', { width: w, height: h, 'class': 'spark' });
  var pts = values.map(function (v, i) { return [4 + (values.length > 1 ? i * (w - 8) / (values.length - 1) : 0), h - 4 - (h - 8) * v / hi]; });
  s.appendChild(sv('polyline', { points: pts.map(function (p) { return p[0].toFixed(1) + ',' + p[1].toFixed(1); }).join(' '), fill: 'none', stroke: '#c0392b', 'stroke-width': 2 }));
  pts.forEach(function (p, i) { var c = sv('circle', { cx: p[0], cy: p[1], r: 2.5, fill: '#c0392b' }); var t = sv('title', {}); t.textContent = bytes(values[i]); c.appendChild(t); s.appendChild(c); });
  return s;
}
var list = document.getElementById('suspect-list');
if (!data.growth_suspects.length) list.appendChild(el('p', 'No holder grew by more than the threshold.', 'empty'));
data.growth_suspects.forEach(function (g) {
  var box = el('div', null, 'suspect'), text = el('div');
  box.appendChild(sparkline(g.retained_bytes));
  text.appendChild(el('p', g['class'] + '  ' + signed(g.growth_bytes) + ' (' + g.percent_of_baseline + '% of the baseline)', 'mono'));
  text.appendChild(el('p', g.description));
  var path = el('p', null, 'mono');
  g.path.forEach(function (step, i) { if (i) path.appendChild(document.createTextNode(' \u2192 ' + (step.field === null ? '' : step.field + ' \u2192 '))); path.appendChild(el('b', step['class'])); });
  text.appendChild(path);
  box.appendChild(text); list.appendChild(box);
});
// Sortable class delta table.
document.getElementById('unchanged').textContent = data.unchanged_classes + ' classes did not change; ' + data.class_deltas.length + ' did.';
var cols = [['class', function (c) { return c['class']; }, false], ['status', function (c) { return c.status; }, false],
  ['count', function (c) { return c.count[last]; }, true], ['\u0394 count', function (c) { return c.count_delta; }, true],
  ['shallow', function (c) { return c.shallow_bytes[last]; }, true], ['\u0394 shallow', function (c) { return c.shallow_delta; }, true],
  ['retained', function (c) { return c.retained_bytes[last]; }, true], ['\u0394 retained', function (c) { return c.retained_delta; }, true]];
var table = document.getElementById('class-table'), sortCol = 5, sortDesc = true, filter = '';
function draw() {
  while (table.firstChild) table.removeChild(table.firstChild);
  var head = el('tr');
  cols.forEach(function (c, i) { var th = el('th', c[0] + (i === sortCol ? (sortDesc ? ' \u25bc' : ' \u25b2') : ''), c[2] ? 'num' : ''); th.addEventListener('click', function () { if (sortCol === i) sortDesc = !sortDesc; else { sortCol = i; sortDesc = c[2]; } draw(); }); head.appendChild(th); });
  table.appendChild(head);
  var rows = data.class_deltas.filter(function (c) { return c['class'].toLowerCase().indexOf(filter) >= 0; });
  var key = cols[sortCol][1];
  rows.sort(function (a, b) { var x = key(a), y = key(b); var r = x < y ? -1 : x > y ? 1 : 0; return sortDesc ? -r : r; });
  rows.slice(0, 2000).forEach(function (c) {
    var r = el('tr');
    r.appendChild(el('td', c['class'], 'mono'));
    var st = el('td'); st.appendChild(el('span', c.status, 'badge ' + c.status)); r.appendChild(st);
    r.appendChild(el('td', grouped(c.count[last]), 'num'));
    r.appendChild(el('td', (c.count_delta > 0 ? '+' : '') + grouped(c.count_delta), 'num ' + (c.count_delta > 0 ? 'up' : c.count_delta < 0 ? 'down' : '')));
    r.appendChild(el('td', bytes(c.shallow_bytes[last]), 'num'));
    r.appendChild(el('td', signed(c.shallow_delta), 'num ' + (c.shallow_delta > 0 ? 'up' : c.shallow_delta < 0 ? 'down' : '')));
    r.appendChild(el('td', bytes(c.retained_bytes[last]), 'num'));
    r.appendChild(el('td', signed(c.retained_delta), 'num ' + (c.retained_delta > 0 ? 'up' : c.retained_delta < 0 ? 'down' : '')));
    table.appendChild(r);
  });
}
document.getElementById('filter').addEventListener('input', function (e) { filter = e.target.value.toLowerCase(); draw(); });
draw();
})();
</script>
</body></html>
)";

}  // namespace

std::string diff_html(const Diff& diff, const std::string& json) {
    std::string last = diff.series.back().source;
    std::string file = last.substr(last.find_last_of('/') + 1);
    return std::string(kHead) + "<title>" + html::html_escape(file) + " \u2014 heapgraph diff</title>\n" +
           "<script type=\"application/json\" id=\"heapgraph-data\">" + html::script_safe(json) + "</script>\n" + kTail;
}

}  // namespace heapgraph::reports
