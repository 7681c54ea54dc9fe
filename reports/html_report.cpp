// The HTML report (docs/html-report.md): one self-contained page, with inline CSS, JS and
// SVG and a Content-Security-Policy that lets no request leave it, so it works from file://.
// It embeds two data sets and draws everything with the inline script:
//   1. the JSON report (json_document), with long arrays and strings cut to fit the budget;
//   2. an extract of the dominator tree, chosen best-first by retained size under a node
//      budget, for the treemap and the tree explorer.
// Whatever was cut is listed in the data, and the page says so.
//
// Escaping: a dump's strings reach the page only inside the embedded JSON, where `<`, `>`,
// `&`, U+2028 and U+2029 are written as \uXXXX, so no string can close the <script> element;
// the script puts them in the DOM with textContent only. The one string outside the JSON, the
// dump's file name in <title>, is HTML-escaped.
#include <nlohmann/json.hpp>
#include <oneapi/tbb/parallel_invoke.h>

#include <algorithm>
#include <cstdio>
#include <queue>
#include <string_view>
#include <unordered_map>

#include "html_common.h"
#include "hex_id.h"
#include "reports.h"

namespace heapgraph::reports {

namespace {

using html::html_escape;
using html::script_safe;

using Json = nlohmann::ordered_json;

// The page stays under 10 MB (10,000,000 bytes) whatever the dump.
constexpr std::size_t kMaxPageBytes = 10'000'000;
constexpr std::size_t kMaxReportBytes = 4'000'000;  // the embedded JSON report, after cuts
constexpr std::size_t kMaxRowsAtFirst = 5000;       // per array of the JSON report, at first
constexpr std::size_t kMaxStringBytes = 1000;       // class names of hostile dumps can be huge
constexpr std::size_t kMaxTreeNodes = 50'000;
constexpr std::size_t kMaxChildren = 1000;  // per node of the extract, the largest ones
constexpr std::uint32_t kMaxTreeDepth = 40;
constexpr std::size_t kTreeNodeBytes = 110;  // a generous estimate of one node row

// The page around the data: head (CSS, error capture) and tail (markup, script); at the end.
std::string_view page_head();
std::string_view page_tail();

// Cuts at a UTF-8 character boundary.
std::string cut_string(const std::string& s, std::size_t max_bytes) {
    std::size_t end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    return s.substr(0, end) + "\u2026";
}

struct Cuts {
    Json left_out = Json::array();  // [{what, shown, total}]
    std::uint64_t strings_cut = 0;
};

// Cuts every array longer than `max_rows` and every string longer than kMaxStringBytes.
void bound_json(Json& value, const std::string& where, std::size_t max_rows, Cuts& cuts) {
    if (value.is_string()) {
        const std::string& s = value.get_ref<const std::string&>();
        if (s.size() > kMaxStringBytes) {
            value = cut_string(s, kMaxStringBytes);
            ++cuts.strings_cut;
        }
    } else if (value.is_array()) {
        if (value.size() > max_rows) {
            cuts.left_out.push_back(Json{{"what", where}, {"shown", max_rows}, {"total", value.size()}});
            value.erase(value.begin() + static_cast<std::ptrdiff_t>(max_rows), value.end());
        }
        for (Json& item : value) bound_json(item, where, max_rows, cuts);
    } else if (value.is_object()) {
        for (auto& [key, item] : value.items()) bound_json(item, where.empty() ? key : where + "." + key, max_rows, cuts);
    }
}

std::string compact(const Json& json) {
    return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The report with arrays cut to fewer rows until it fits kMaxReportBytes.
Json bounded_report(const Json& original, Cuts& cuts) {
    for (std::size_t rows = kMaxRowsAtFirst;; rows /= 2) {
        Cuts attempt;
        Json report = original;
        bound_json(report, "", rows, attempt);
        if (compact(report).size() <= kMaxReportBytes || rows <= 10) {
            cuts = std::move(attempt);
            return report;
        }
    }
}

// A node's children, largest retained size first (then node id), at most kMaxChildren.
std::vector<graph::NodeId> largest_children(const graph::Retained& r, std::span<const graph::NodeId> children) {
    std::vector<graph::NodeId> out(children.begin(), children.end());
    auto larger = [&](graph::NodeId x, graph::NodeId y) {
        const auto& bytes = r.tree.retained_bytes;
        return bytes[x] != bytes[y] ? bytes[x] > bytes[y] : x < y;
    };
    std::size_t keep = std::min(out.size(), kMaxChildren);
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(), larger);
    out.resize(keep);
    return out;
}

// The dominator tree extract, in three steps:
//   1. best-first selection: a queue of "next child of node p" cursors ordered by that
//      child's retained size takes the biggest node not yet taken, until the budget is
//      spent. Each node's taken children are thus a prefix of its children by size;
//   2. numbering in breadth-first order, so each node's taken children are contiguous;
//   3. rows [id, class, kind, shallow, retained, retained_objects, children, first, taken],
//      with class names in a shared table.
Json tree_extract(const analysis::Findings& a, std::size_t budget) {
    const graph::Retained& r = a.retained;
    struct Taken {
        graph::NodeId node;
        std::uint32_t depth;
        std::vector<graph::NodeId> children;  // largest first
        std::size_t count = 0;                // children taken (a prefix)
    };
    std::vector<Taken> taken;
    taken.push_back({graph::kSuperRoot, 0, largest_children(r, r.top)});
    struct Cursor {
        std::uint64_t bytes;
        graph::NodeId node;
        std::size_t parent, rank;
        bool operator<(const Cursor& o) const { return bytes != o.bytes ? bytes < o.bytes : node > o.node; }
    };
    std::priority_queue<Cursor> queue;
    auto push_next = [&](std::size_t parent) {
        const Taken& t = taken[parent];
        if (t.count < t.children.size())
            queue.push({r.tree.retained_bytes[t.children[t.count]], t.children[t.count], parent, t.count});
    };
    push_next(0);
    while (!queue.empty() && taken.size() <= budget) {
        Cursor c = queue.top();
        queue.pop();
        ++taken[c.parent].count;
        std::uint32_t depth = taken[c.parent].depth + 1;
        std::vector<graph::NodeId> children;
        if (depth < kMaxTreeDepth) children = largest_children(r, r.children.of(c.node));
        taken.push_back({c.node, depth, std::move(children)});
        push_next(c.parent);
        push_next(taken.size() - 1);
    }
    // Breadth-first numbering: order[i] is the taken entry of row i - 1 (row 0: super root).
    std::vector<std::size_t> order{0};
    std::unordered_map<graph::NodeId, std::size_t> index_of;
    for (std::size_t i = 0; i < taken.size(); ++i) index_of.emplace(taken[i].node, i);
    std::vector<std::size_t> first_row(taken.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        Taken& t = taken[order[i]];
        first_row[order[i]] = order.size() - 1;
        for (std::size_t k = 0; k < t.count; ++k) order.push_back(index_of.at(t.children[k]));
    }
    Json classes = Json::array(), rows = Json::array();
    std::unordered_map<std::string, std::size_t> class_row;
    for (std::size_t i = 1; i < order.size(); ++i) {
        const Taken& t = taken[order[i]];
        graph::NodeId v = t.node;
        std::string name = graph::node_class_name(a.graph, v);
        if (name.size() > kMaxStringBytes) name = cut_string(name, kMaxStringBytes);
        auto [it, added] = class_row.emplace(name, classes.size());
        if (added) classes.push_back(name);
        rows.push_back(Json::array({hex_id(a.addresses[v]), it->second, static_cast<int>(a.graph.types.kind(v)),
                                    a.graph.shallow_bytes[v], r.tree.retained_bytes[v], r.tree.retained_objects[v],
                                    r.children.degree(v), first_row[order[i]], t.count}));
    }
    Json out;
    out["max_depth"] = kMaxTreeDepth;
    out["max_children"] = kMaxChildren;
    out["root"] = Json{{"children", r.top.size()}, {"first", 0}, {"taken", taken[0].count},
                       {"retained", r.tree.super_root_retained_bytes}};
    out["classes"] = std::move(classes);
    out["nodes"] = std::move(rows);
    return out;
}

std::size_t tree_size(const graph::Retained& r) {
    return r.in_tree.count();
}

}  // namespace

std::string html_report(const analysis::Findings& a) { return html_report(a, json_document(a)); }

JsonAndHtml json_and_html(const analysis::Findings& a, bool json, bool html) {
    JsonAndHtml out;
    if (!json && !html) return out;
    Json document = json_document(a);
    if (!json) out.html = html_report(a, std::move(document));
    else if (!html) out.json = json_report(document);
    else
        tbb::parallel_invoke([&] { out.json = json_report(document); }, [&] { out.html = html_report(a, document); });
    return out;
}

std::string html_report(const analysis::Findings& a, Json document) {
    Cuts cuts;
    Json data;
    data["report"] = bounded_report(std::move(document), cuts);
    data["objects"] = inspected_objects_json(a, false);
    std::string report_text = compact(data);
    std::size_t fixed = page_head().size() + page_tail().size() + report_text.size() * 11 / 10 + 200'000;
    std::size_t budget = std::min(kMaxTreeNodes, (kMaxPageBytes - std::min(kMaxPageBytes, fixed)) / kTreeNodeBytes);
    std::string page;
    for (;; budget /= 2) {
        Json tree = tree_extract(a, budget);
        Json left_out = cuts.left_out;
        std::size_t nodes = tree["nodes"].size(), total = tree_size(a.retained);
        if (nodes < total)
            left_out.push_back(Json{{"what", "dominator tree"}, {"shown", nodes}, {"total", total}});
        data["tree"] = std::move(tree);
        data["left_out"] = std::move(left_out);
        data["strings_cut"] = cuts.strings_cut;
        data["max_string_bytes"] = kMaxStringBytes;
        std::string file = a.dump.path.substr(a.dump.path.find_last_of('/') + 1);
        page = std::string(page_head()) + "<title>" + html_escape(file) + " \u2014 heapgraph</title>\n" +
               "<script type=\"application/json\" id=\"heapgraph-data\">" + script_safe(compact(data)) + "</script>\n" +
               std::string(page_tail());
        if (page.size() <= kMaxPageBytes || budget == 0) return page;
    }
}

}  // namespace heapgraph::reports

namespace heapgraph::reports {

namespace {

// Errors are collected from the first script on, so the browser test (and the red banner)
// see any that happen while the page draws.
std::string_view page_head() {
    return R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="heapgraph">
<script>
window.__hgErrors = [];
window.addEventListener('error', function (e) { window.__hgErrors.push('error: ' + (e.message || e.type)); });
window.addEventListener('unhandledrejection', function (e) { window.__hgErrors.push('unhandled rejection: ' + e.reason); });
document.addEventListener('securitypolicyviolation', function (e) {
  window.__hgErrors.push('blocked by the page policy: ' + e.violatedDirective + ' ' + e.blockedURI);
});
(function () {
  var original = console.error;
  console.error = function () {
    window.__hgErrors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
})();
</script>
<style>
:root {
  --ink: #1d2430; --muted: #5f6b7a; --faint: #8a95a3; --line: #e3e7ec; --panel: #ffffff;
  --bg: #f5f7fa; --accent: #2f6fdf; --accent-soft: #e7effd; --warn: #b54708; --warn-soft: #fff4e5;
  --bad: #b42318; --bad-soft: #fdecea; --mono: ui-monospace, "SF Mono", "Cascadia Mono", "DejaVu Sans Mono", Menlo, Consolas, monospace;
}
* { box-sizing: border-box; }
html { scroll-behavior: smooth; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
header.top { background: #17202e; color: #fff; padding: 18px 0 0; }
header.top .wrap { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; }
header.top h1 { font-size: 20px; font-weight: 600; margin: 0; letter-spacing: .2px; }
header.top .file { font-family: var(--mono); font-size: 14px; color: #c9d4e3; overflow-wrap: anywhere; }
header.top nav { width: 100%; display: flex; flex-wrap: wrap; gap: 2px; margin-top: 12px; }
header.top nav a { color: #c9d4e3; text-decoration: none; padding: 8px 12px; border-radius: 6px 6px 0 0; font-size: 13px; }
header.top nav a:hover { background: #253247; color: #fff; }
.wrap { max-width: 1240px; margin: 0 auto; padding: 0 24px; }
main.wrap { padding-bottom: 48px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 20px 24px; margin-top: 20px; }
h2 { font-size: 17px; font-weight: 600; margin: 0 0 4px; }
h3 { font-size: 14px; font-weight: 600; margin: 18px 0 6px; }
p.lead { color: var(--muted); margin: 0 0 14px; }
.muted { color: var(--muted); }
.faint { color: var(--faint); }
code, .mono { font-family: var(--mono); font-size: 12.5px; }
.cls { font-family: var(--mono); font-size: 12.5px; overflow-wrap: anywhere; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: #fbfcfd; }
.card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .4px; }
.card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; margin-top: 2px; }
.card .sub { color: var(--muted); font-size: 12px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 16px 0 0; font-size: 13px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.notice { border-radius: 8px; padding: 10px 14px; margin-top: 12px; font-size: 13px; }
.notice.warn { background: var(--warn-soft); color: #7a2e0b; border: 1px solid #f5d2a8; }
.notice.bad { background: var(--bad-soft); color: var(--bad); border: 1px solid #f4c7c3; }
.notice ul { margin: 4px 0 0; padding-left: 18px; }
svg { display: block; width: 100%; height: auto; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif; pointer-events: none; }
svg .tm rect { stroke: #fff; stroke-width: 1; cursor: pointer; }
svg .tm rect:hover { filter: brightness(0.93); }
.treemap-box { border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; margin-top: 10px; font-size: 13px; }
.legend .sw { display: inline-block; width: 11px; height: 11px; border-radius: 3px; margin-right: 6px; vertical-align: -1px; }
.suspect { border: 1px solid var(--line); border-left: 4px solid var(--bad); border-radius: 8px; padding: 14px 16px; margin-top: 14px; }
.suspect .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 6px 12px; }
.suspect .size { margin-left: auto; font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; text-transform: uppercase; letter-spacing: .5px; padding: 1px 8px; border-radius: 10px; background: var(--bad-soft); color: var(--bad); }
.sentence { margin: 10px 0; font-size: 14px; overflow-wrap: anywhere; }
ol.path { list-style: none; margin: 6px 0 0; padding: 0; font-size: 12.5px; }
ol.path li { position: relative; padding: 2px 0 2px 22px; }
ol.path li::before { content: ""; position: absolute; left: 7px; top: 0; bottom: 0; border-left: 2px solid #cfd6df; }
ol.path li::after { content: ""; position: absolute; left: 4px; top: 9px; width: 8px; height: 8px; border-radius: 50%; background: #9aa6b5; }
ol.path li.end::after { background: var(--bad); }
ol.path .field { color: var(--accent); font-family: var(--mono); }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; background: #f8fafc; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fafbfc; }
tbody tr:hover td { background: var(--accent-soft); }
th button { all: unset; cursor: pointer; }
th button:focus-visible { outline: 2px solid var(--accent); }
th .arrow { display: inline-block; width: 1em; color: var(--accent); }
.bar { display: inline-block; height: 8px; border-radius: 4px; background: var(--accent); opacity: .75; vertical-align: middle; margin-right: 8px; }
.toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; margin-bottom: 10px; }
input[type=search] { font: inherit; padding: 6px 10px; border: 1px solid #cbd3dc; border-radius: 6px; min-width: 280px; }
button.more { font: inherit; font-size: 13px; margin: 8px 0 0; padding: 5px 12px; border: 1px solid #cbd3dc; background: #fff; border-radius: 6px; cursor: pointer; color: var(--accent); }
button.more:hover { background: var(--accent-soft); }
.table-box { max-height: 640px; overflow: auto; border: 1px solid var(--line); border-radius: 8px; }
.consumers { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 8px 24px; }
.tree { border: 1px solid var(--line); border-radius: 8px; font-size: 13px; overflow: hidden; }
.trow { display: grid; grid-template-columns: minmax(0, 1fr) 150px 64px 86px 90px 72px; align-items: center; border-bottom: 1px solid #eef1f4; min-height: 30px; }
.trow > span { padding: 4px 8px; }
.trow.head { background: #f8fafc; color: var(--muted); font-weight: 600; font-size: 12px; }
.trow.node { cursor: default; }
.trow.node[aria-expanded] { cursor: pointer; }
.trow.node:hover { background: var(--accent-soft); }
.trow.flash { animation: flash 1.6s ease-out; }
@keyframes flash { from { background: #ffe9a8; } to { background: transparent; } }
.trow .name { display: flex; align-items: baseline; gap: 6px; min-width: 0; }
.trow .tog { flex: none; width: 14px; color: var(--muted); font-size: 11px; text-align: center; }
.trow .id { color: var(--faint); font-family: var(--mono); font-size: 11.5px; flex: none; }
.trow .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.tnote { padding: 5px 8px; color: var(--muted); font-size: 12px; border-bottom: 1px solid #eef1f4; }
.tnote button.more { margin: 0; }
footer { color: var(--faint); font-size: 12px; text-align: center; padding: 24px 0 40px; }
#selftest { display: none; }
.insp { border: 1px solid var(--line); background: transparent; border-radius: 4px; font-size: 11px; padding: 0 5px; margin-left: 8px; cursor: pointer; color: var(--faint); }
.insp:hover { color: inherit; }
button.link { border: 0; background: none; padding: 0; font: inherit; color: #2457a6; cursor: pointer; text-align: left; text-decoration: underline; }
aside.inspector { position: fixed; top: 0; right: 0; bottom: 0; width: min(560px, 96vw); overflow: auto; background: #fff; box-shadow: -4px 0 18px rgba(0,0,0,.18); padding: 14px 18px 30px; z-index: 20; font-size: 13px; }
aside.inspector .close { float: right; }
aside.inspector td.v { word-break: break-all; }
.frames { margin: 4px 0 10px 18px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
.frames li { margin: 1px 0; }
</style>
)html";
}

std::string_view page_tail() {
    return R"html(</head>
<body>
<header class="top"><div class="wrap">
  <h1>heapgraph</h1><span class="file" id="file"></span>
  <nav>
    <a href="#overview">Overview</a><a href="#picture">Heap picture</a><a href="#suspects">Leak suspects</a>
    <a href="#tree">Dominator tree</a><a href="#consumers">Top consumers</a><a href="#histogram">Histogram</a>
    <a href="#collections">Collections</a><a href="#threads">Threads</a><a href="#properties">Properties</a><a href="#left-out">Left out</a>
  </nav>
</div></header>
<main class="wrap">
  <div id="errors" class="notice bad" hidden></div>
  <section id="overview"><h2>Overview</h2><div id="overview-body"></div></section>
  <section id="picture"><h2>Heap picture</h2>
    <p class="lead">Retained sizes in the dominator tree: each rectangle is an object with the area of the memory it keeps alive; nested rectangles are the objects it dominates. Click one to find it in the tree.</p>
    <div class="treemap-box" id="treemap"></div>
    <h3 id="share-title">Leak suspects against the rest of the heap</h3>
    <div id="share"></div>
  </section>
  <section id="suspects"><h2>Leak suspects</h2><div id="suspects-body"></div></section>
  <section id="tree"><h2>Dominator tree</h2>
    <p class="lead">The objects that keep the most memory alive, from the GC roots down. Click a row to open it; children come largest first.</p>
    <div class="tree" id="tree-list" role="tree"></div>
  </section>
  <section id="consumers"><h2>Top consumers</h2><div id="consumers-body"></div></section>
  <section id="histogram"><h2>Class histogram</h2><div id="histogram-body"></div></section>
  <section id="duplicates"><h2>Duplicate strings and arrays</h2><div id="duplicates-body"></div></section>
  <section id="collections"><h2>Collections</h2><div id="collections-body"></div></section>
  <section id="threads"><h2>Threads</h2><div id="threads-body"></div></section>
  <section id="properties"><h2>System properties</h2><div id="properties-body"></div></section>
  <section id="left-out"><h2>Left out of this page</h2><div id="left-out-body"></div></section>
</main>
<aside id="inspector" class="inspector" hidden aria-label="Object inspector"><button class="more close" id="inspector-close">Close</button><h2>Object</h2><div id="inspector-body"></div></aside>
<footer id="footer"></footer>
<script>
(function () {
'use strict';
var SVGNS = 'http://www.w3.org/2000/svg';
var DATA = JSON.parse(document.getElementById('heapgraph-data').textContent);
var R = DATA.report || {}, T = DATA.tree || {nodes: [], classes: [], root: {}};
var S = R.summary || {};
var TOTAL = (T.root && T.root.retained) || S.retained_bytes_total || 0;

// ---- helpers: dump strings go into the DOM as text nodes only ----
function $(id) { return document.getElementById(id); }
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function add(parent) { for (var i = 1; i < arguments.length; i++) if (arguments[i] != null) parent.append(arguments[i]); return parent; }
function svg(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
function num(n) { return typeof n === 'number' ? n.toLocaleString('en-US') : (n == null ? '' : String(n)); }
function bytes(n) {
  if (typeof n !== 'number' || !isFinite(n)) return n == null ? '' : String(n);
  if (n < 1024) return n + ' B';
  var units = ['KB', 'MB', 'GB', 'TB', 'PB'], v = n / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return (v >= 100 ? v.toFixed(0) : v.toFixed(1)) + ' ' + units[u];
}
function pct(part, whole) {
  if (!whole || typeof part !== 'number') return '';
  var p = 100 * part / whole;
  if (p > 0 && p < 0.1) return '<0.1%';
  return p.toFixed(1) + '%';
}
function shortName(name) {
  var s = String(name);
  if (s.indexOf('class ') === 0) return 'class ' + shortName(s.slice(6));
  var cut = s.lastIndexOf('.');
  return cut > 0 && cut < s.length - 1 ? s.slice(cut + 1) : s;
}
function fit(text, width, charWidth) {
  var max = Math.floor(width / charWidth);
  if (max < 3) return '';
  return text.length <= max ? text : text.slice(0, max - 1) + '\u2026';
}
// fact(key, value) adds a row to the <dl> when the value is not empty.
function factAdder(dl) {
  return function (k, v) { if (v !== undefined && v !== null && v !== '') add(dl, el('dt', null, k), el('dd', null, v)); };
}
function hue(i) { return (210 + i * 137.508) % 360; }
function guard(name, draw) {
  try { draw(); } catch (e) {
    console.error('heapgraph: drawing ' + name + ' failed: ' + (e && e.stack || e));
    var box = $(name);
    if (box) add(box, el('div', 'notice bad', 'This part could not be drawn: ' + e));
  }
}

// ---- the dominator tree extract: rows [id, class, kind, shallow, retained, objects, children, first, taken] ----
var nodeCache = [];
function node(i) {
  if (i < 0) return {i: -1, id: '', cls: 'all GC roots', retained: TOTAL, shallow: 0, objects: 0,
                     children: T.root.children || 0, first: T.root.first || 0, taken: T.root.taken || 0};
  if (!nodeCache[i]) {
    var r = T.nodes[i];
    nodeCache[i] = {i: i, id: r[0], cls: T.classes[r[1]], kind: r[2], shallow: r[3], retained: r[4], objects: r[5],
                    children: r[6], first: r[7], taken: r[8]};
  }
  return nodeCache[i];
}
var parentOf = new Int32Array(T.nodes.length).fill(-1);
(function () {
  for (var i = 0; i < T.nodes.length; i++) {
    var r = T.nodes[i];
    for (var c = r[7]; c < r[7] + r[8]; c++) parentOf[c] = i;
  }
})();
function kidsOf(n) { var out = []; for (var c = n.first; c < n.first + n.taken; c++) out.push(node(c)); return out; }

// ---- overview ----
function card(label, value, sub) {
  return add(el('div', 'card'), el('div', 'label', label), el('div', 'value', value), sub ? el('div', 'sub', sub) : null);
}
function drawOverview() {
  var d = R.dump || {}, box = $('overview-body');
  var file = String(d.path || '').split('/').pop();
  $('file').textContent = file;
  var cards = el('div', 'cards');
  add(cards,
    card('Retained heap', bytes(TOTAL), 'kept alive by the GC roots'),
    card('Objects', num(S.objects), num(S.instances) + ' instances, ' + num((S.object_arrays || 0) + (S.primitive_arrays || 0)) + ' arrays'),
    card('Classes', num(S.classes), num(S.reachable_classes) + ' reachable'),
    card('GC roots', num(S.gc_roots), num(S.edges) + ' references'),
    card('Unreachable', bytes(S.unreachable_bytes), num(S.unreachable_objects) + ' objects' + (S.keep_unreachable ? ', kept in the tree' : '')),
    card('Dump file', bytes(d.bytes), (d.format || '') + (d.inflated_bytes ? ', ' + bytes(d.inflated_bytes) + ' inflated' : '')));
  if (Array.isArray(R.suspects))
    cards.insertBefore(card('Leak suspects', num(R.suspects.length), R.suspects.length ? bytes(sumRetained(R.suspects)) + ' retained' : 'none above the threshold'), cards.children[1]);
  add(box, cards);
  var facts = el('dl', 'facts'), fact = factAdder(facts);
  fact('File', d.path);
  fact('Format', [d.format, d.format_version].filter(Boolean).join(', '));
  if (d.dumps_in_file > 1) fact('Heap dump', (d.dump_index + 1) + ' of ' + d.dumps_in_file);
  fact('Size model', d.size_model);
  fact('Shallow size of all objects', bytes(S.shallow_bytes));
  fact('Report', (R.schema || '') + (R.tool ? ', heapgraph ' + R.tool.version : ''));
  add(box, facts);
  var warnings = Array.isArray(R.warnings) ? R.warnings : [];
  if (warnings.length) {
    var list = el('ul');
    warnings.forEach(function (w) { add(list, add(el('li'), el('b', null, num(w.count) + ' ' + w.code), document.createTextNode(': ' + w.message))); });
    add(box, add(el('div', 'notice warn'), el('b', null, 'Warnings from reading the dump'), list));
  }
}
function sumRetained(rows) { return rows.reduce(function (s, r) { return s + (typeof r.retained_bytes === 'number' ? r.retained_bytes : 0); }, 0); }

// ---- treemap of the dominator tree (squarified: Bruls, Huizing, van Wijk 2000) ----
function squarify(items, x, y, w, h) {
  var out = [], total = 0, i = 0;
  items.forEach(function (it) { total += it.value; });
  while (i < items.length && w > 0.5 && h > 0.5 && total > 0) {
    var scale = w * h / total, side = Math.min(w, h), row = [], rowArea = 0, worst = Infinity, rowValue = 0;
    while (i < items.length) {
      var area = items[i].value * scale, sum = rowArea + area;
      var big = row.length ? row[0].value * scale : area;
      var ratio = Math.max(side * side * big / (sum * sum), sum * sum / (side * side * area));
      if (row.length && ratio > worst) break;
      row.push(items[i]); rowArea = sum; rowValue += items[i].value; worst = ratio; i++;
    }
    var thick = rowArea / side, off = 0;
    row.forEach(function (it) {
      var len = it.value * scale / thick;
      out.push(w >= h ? {item: it, x: x, y: y + off, w: thick, h: len} : {item: it, x: x + off, y: y, w: len, h: thick});
      off += len;
    });
    if (w >= h) { x += thick; w -= thick; } else { y += thick; h -= thick; }
    total -= rowValue;
  }
  return out;
}
// A node's children as treemap items; those smaller than `minValue` (a few pixels) join the
// grey "other" item with the node's own size and its children left out of the page.
function treemapItems(n, minValue) {
  var items = [], covered = 0;
  kidsOf(n).forEach(function (k) { if (k.retained > 0 && k.retained >= minValue) { items.push({value: k.retained, node: k}); covered += k.retained; } });
  var rest = n.retained - covered;
  if (rest > 0 && rest >= n.retained * 0.004) items.push({value: rest, rest: true, of: n});
  items.sort(function (a, b) { return b.value - a.value; });
  return items;
}
function drawTreemapLevel(g, n, x, y, w, h, depth, baseHue) {
  if (w < 4 || h < 4) return;
  squarify(treemapItems(n, n.retained * 150 / (w * h)), x, y, w, h).forEach(function (r, index) {
    var it = r.item, k = it.node, hueNow = depth === 0 ? hue(index) : baseHue;
    var fill = it.rest ? '#dfe3e8' : 'hsl(' + hueNow.toFixed(0) + ',58%,' + Math.min(86, 62 + depth * 8) + '%)';
    var rect = svg('rect', {x: r.x.toFixed(1), y: r.y.toFixed(1), width: Math.max(0, r.w).toFixed(1), height: Math.max(0, r.h).toFixed(1), fill: fill});
    var title = svg('title', {});
    title.textContent = it.rest
      ? (n.i < 0 ? 'Other objects under the GC roots' : 'The object itself and its smaller children') + '\n' + bytes(it.value) + ' (' + pct(it.value, TOTAL) + ' of the heap)'
      : k.cls + ' @ ' + k.id + '\nretains ' + bytes(k.retained) + ' (' + pct(k.retained, TOTAL) + ' of the heap)';
    rect.append(title);
    if (k) rect.addEventListener('click', function () { revealInTree(k.i); });
    g.append(rect);
    var nested = k && k.taken > 0 && depth < 3 && r.w > 60 && r.h > 44;
    var label = it.rest ? 'other' : shortName(k.cls);
    if (r.w > 46 && r.h > 15) {
      var line = fit(label + '  ' + bytes(it.value), r.w - 8, 6.3);
      var text = svg('text', {x: (r.x + 4).toFixed(1), y: (r.y + 12).toFixed(1), 'font-size': 11, fill: it.rest ? '#5f6b7a' : '#17202e'});
      text.textContent = line;
      g.append(text);
    }
    if (nested) drawTreemapLevel(g, k, r.x + 3, r.y + 17, r.w - 6, r.h - 20, depth + 1, hueNow);
  });
}
function drawTreemap() {
  var box = $('treemap');
  if (!T.nodes.length) { add(box, el('p', 'muted', 'The dominator tree is empty.')); box.style.padding = '12px'; return; }
  var W = 1180, H = 540, root = svg('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'Treemap of retained sizes'});
  var g = svg('g', {'class': 'tm'});
  root.append(g);
  drawTreemapLevel(g, node(-1), 0, 0, W, H, 0, 0);
  box.append(root);
}

// ---- suspects against the rest ----
function drawShare() {
  var box = $('share'), parts = [], title = $('share-title');
  if (Array.isArray(R.suspects) && R.suspects.length) {
    R.suspects.forEach(function (s, i) {
      parts.push({label: (s.kind === 'group' ? 'instances of ' : '') + (s['class'] || '?'), value: s.retained_bytes || 0, color: 'hsl(' + (4 + i * 31) % 360 + ',70%,' + (52 + (i % 3) * 8) + '%)'});
    });
  } else {
    title.textContent = Array.isArray(R.suspects) ? 'No leak suspects: the largest dominators against the rest' : 'The largest dominators against the rest of the heap';
    kidsOf(node(-1)).slice(0, 5).forEach(function (k, i) { parts.push({label: k.cls, value: k.retained, color: 'hsl(' + hue(i).toFixed(0) + ',58%,62%)'}); });
  }
  var used = parts.reduce(function (s, p) { return s + p.value; }, 0), whole = Math.max(TOTAL, used);
  parts.push({label: 'rest of the heap', value: Math.max(0, whole - used), color: '#dfe3e8'});
  var W = 1180, H = 34, x = 0, bar = svg('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'Share of the heap'});
  parts.forEach(function (p) {
    var w = whole ? W * p.value / whole : 0;
    var r = svg('rect', {x: x.toFixed(1), y: 0, width: w.toFixed(1), height: H, fill: p.color, rx: 0});
    var t = svg('title', {});
    t.textContent = p.label + ': ' + bytes(p.value) + ' (' + pct(p.value, whole) + ')';
    r.append(t);
    bar.append(r);
    if (w > 70) {
      var text = svg('text', {x: (x + 6).toFixed(1), y: 21, 'font-size': 12, fill: '#17202e'});
      text.textContent = fit(pct(p.value, whole) + '  ' + shortName(p.label), w - 10, 6.8);
      bar.append(text);
    }
    x += w;
  });
  var legend = el('div', 'legend');
  parts.forEach(function (p) {
    var sw = el('span', 'sw');
    sw.style.background = p.color;
    add(legend, add(el('span'), sw, el('span', 'cls', p.label), document.createTextNode(' ' + bytes(p.value) + ' (' + pct(p.value, whole) + ')')));
  });
  add(box, bar, legend);
}

// ---- suspects ----
function drawSuspects() {
  var box = $('suspects-body');
  if (!Array.isArray(R.suspects)) {
    add(box, el('p', 'muted', 'This report has no leak-suspect analysis. The dominator tree and the top consumers below show where the memory is.'));
    return;
  }
  if (!R.suspects.length) {
    add(box, el('p', 'muted', 'No leak suspects: no single object and no class of objects retains more than the suspect threshold.'));
    return;
  }
  R.suspects.forEach(function (s, i) {
    var c = el('div', 'suspect');
    var head = add(el('div', 'head'), el('span', 'badge', 'Suspect ' + (i + 1) + (s.kind ? ' \u00b7 ' + s.kind : '')), el('span', 'cls', s['class']),
                   s.id ? el('span', 'faint mono', '@ ' + s.id) : null, el('span', 'size', bytes(s.retained_bytes) + ' \u00b7 ' + (typeof s.percent === 'number' ? s.percent.toFixed(1) + '%' : pct(s.retained_bytes, TOTAL))));
    add(c, head);
    if (s.description) add(c, el('p', 'sentence', s.description));
    var facts = el('dl', 'facts'), fact = factAdder(facts);
    fact('Class loader', typeof s.class_loader === 'object' && s.class_loader ? JSON.stringify(s.class_loader) : s.class_loader);
    if (s.instances !== undefined) fact('Instances', num(s.instances));
    var ap = s.accumulation_point;
    if (ap) fact('Accumulation point', (ap['class'] || '') + (ap.id ? ' @ ' + ap.id : '') + (ap.retained_bytes !== undefined ? ', ' + bytes(ap.retained_bytes) : ''));
    add(c, facts);
    if (Array.isArray(s.path) && s.path.length) {
      add(c, el('h3', null, 'Path from the GC roots to the accumulation point'));
      var ol = el('ol', 'path');
      s.path.forEach(function (step, k) {
        var li = el('li', k === s.path.length - 1 ? 'end' : null);
        if (typeof step !== 'object' || step === null) { li.textContent = String(step); }
        else {
          if (step.field !== undefined && step.field !== null && step.field !== '') add(li, el('span', 'field', String(step.field)), document.createTextNode(' \u2192 '));
          add(li, step.id ? inspectLink(step.id, step['class'] || '', step['class'] || '') : el('span', 'cls', step['class'] || ''),
              step.id ? el('span', 'faint mono', ' @ ' + step.id) : null);
        }
        ol.append(li);
      });
      add(c, ol);
    }
    if (Array.isArray(s.top_retained_classes) && s.top_retained_classes.length) {
      add(c, el('h3', null, 'What it retains, by class'));
      add(c, genericTable(s.top_retained_classes, s.retained_bytes));
    }
    box.append(c);
  });
}

// ---- generic tables (consumers, retained classes): columns from the rows' keys ----
function isBytesKey(k) { return /bytes$/.test(k); }
function genericTable(rows, whole) {
  if (!rows.length) return el('p', 'muted', 'None.');
  if (typeof rows[0] !== 'object' || rows[0] === null) {
    var ul = el('ul');
    rows.forEach(function (r) { add(ul, el('li', 'cls', r)); });
    return ul;
  }
  var keys = [];
  rows.forEach(function (r) { Object.keys(r).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
  var barKey = keys.indexOf('retained_bytes') >= 0 ? 'retained_bytes' : null;
  var max = barKey ? Math.max.apply(null, rows.map(function (r) { return r[barKey] || 0; })) : 0;
  var table = el('table'), tr = el('tr');
  keys.forEach(function (k) {
    var numeric = typeof rows[0][k] === 'number';
    add(tr, el('th', numeric ? 'num' : null, k.replace(/_/g, ' ')));
    if (k === barKey) add(tr, el('th', 'num', '%'));
  });
  add(table, add(el('thead'), tr));
  var body = el('tbody');
  rows.forEach(function (r) {
    var row = el('tr');
    keys.forEach(function (k) {
      var v = r[k], td;
      if (typeof v === 'number') {
        td = el('td', 'num');
        if (k === barKey && max > 0) { var b = el('span', 'bar'); b.style.width = Math.max(1, 60 * v / max).toFixed(0) + 'px'; td.append(b); }
        td.append(document.createTextNode(isBytesKey(k) ? bytes(v) : k === 'percent' ? v.toFixed(1) + '%' : num(v)));
      } else {
        td = el('td', 'cls', v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
      }
      row.append(td);
      if (k === barKey) add(row, el('td', 'num', pct(v, whole || TOTAL)));
    });
    body.append(row);
  });
  return add(table, body);
}

// ---- dominator tree explorer ----
var PAGE = 50, rowOf = [], openBoxes = [];
function treeRow(n, depth) {
  var row = el('div', 'trow node');
  row.setAttribute('role', 'treeitem');
  row.dataset.index = n.i;
  var name = el('span', 'name');
  name.style.paddingLeft = (8 + depth * 18) + 'px';
  var expandable = n.taken > 0 || n.children > 0;
  add(name, el('span', 'tog', expandable ? '\u25b8' : '\u00b7'), el('span', 'cls', n.cls), el('span', 'id', n.id), inspectLink(n.id, n.cls, 'fields', 'insp'));
  var share = el('span', 'num'), b = el('span', 'bar');
  b.style.width = Math.max(1, 70 * (TOTAL ? n.retained / TOTAL : 0)).toFixed(0) + 'px';
  add(share, b, document.createTextNode(bytes(n.retained)));
  add(row, name, share, el('span', 'num', pct(n.retained, TOTAL)), el('span', 'num', bytes(n.shallow)),
      el('span', 'num', num(n.objects)), el('span', 'num', n.children ? num(n.children) : ''));
  if (expandable) {
    row.setAttribute('aria-expanded', 'false');
    row.addEventListener('click', function () { toggle(n, row, depth); });
  }
  rowOf[n.i] = row;
  return row;
}
function toggle(n, row, depth) {
  var box = openBoxes[n.i];
  var open = row.getAttribute('aria-expanded') !== 'true';
  row.setAttribute('aria-expanded', open ? 'true' : 'false');
  row.querySelector('.tog').textContent = open ? '\u25be' : '\u25b8';
  if (!box) {
    box = el('div');
    box.setAttribute('role', 'group');
    row.after(box);
    openBoxes[n.i] = box;
    fillChildren(box, n, depth + 1);
  }
  box.hidden = !open;
}
function fillChildren(box, n, depth) {
  var shown = 0, more = null;
  function page() {
    var end = Math.min(n.taken, shown + PAGE), frag = document.createDocumentFragment();
    for (; shown < end; shown++) frag.append(treeRow(node(n.first + shown), depth));
    if (more) more.remove();
    more = null;
    if (shown < n.taken) {
      more = el('div', 'tnote');
      more.style.paddingLeft = (30 + depth * 18) + 'px';
      var btn = el('button', 'more', 'Show ' + Math.min(PAGE, n.taken - shown) + ' more (' + num(shown) + ' of ' + num(n.taken) + ' shown)');
      btn.addEventListener('click', function (e) { e.stopPropagation(); page(); });
      more.append(btn);
      frag.append(more);
    }
    box.insertBefore(frag, note);
  }
  var note = null;
  if (n.children > n.taken || (n.taken === 0 && n.children > 0)) {
    var left = n.children - n.taken, why = n.taken === 0 && depth > (T.max_depth || 40) - 1 ? ' (deeper than this page goes)' : '';
    note = el('div', 'tnote', num(left) + (n.taken ? ' smaller' : '') + ' child object' + (left === 1 ? '' : 's') + ' not in this page' + why + '.');
    note.style.paddingLeft = (30 + depth * 18) + 'px';
    box.append(note);
  }
  box.showThrough = function (k) { while (shown <= k && shown < n.taken) page(); };
  page();
}
function drawTree() {
  var list = $('tree-list');
  var head = el('div', 'trow head');
  add(head, el('span', null, 'Object'), el('span', 'num', 'Retained'), el('span', 'num', '%'), el('span', 'num', 'Shallow'),
      el('span', 'num', 'Objects'), el('span', 'num', 'Children'));
  list.append(head);
  var root = node(-1), box = el('div');
  list.append(box);
  fillChildren(box, root, 0);
  openBoxes.root = box;
}
function revealInTree(i) {
  var chain = [];
  for (var k = i; k >= 0; k = parentOf[k]) chain.unshift(k);
  var parentBox = openBoxes.root;
  chain.forEach(function (k, depth) {
    var first = depth === 0 ? (T.root.first || 0) : node(chain[depth - 1]).first;
    parentBox.showThrough(k - first);
    var row = rowOf[k];
    if (depth < chain.length - 1 && row.getAttribute('aria-expanded') !== 'true') toggle(node(k), row, depth);
    parentBox = openBoxes[k];
  });
  var target = rowOf[i];
  target.classList.remove('flash');
  void target.offsetWidth;
  target.classList.add('flash');
  target.scrollIntoView({block: 'center'});
}

// ---- histogram: sortable, filterable ----
function drawHistogram() {
  var box = $('histogram-body'), rows = Array.isArray(R.histogram) ? R.histogram : [];
  var hasRetained = rows.some(function (r) { return typeof r.retained_bytes === 'number'; });
  var cols = [{key: 'class', label: 'Class', text: true}, {key: 'count', label: 'Objects'}, {key: 'shallow_bytes', label: 'Shallow'}];
  if (hasRetained) cols.push({key: 'retained_bytes', label: 'Retained'});
  var state = {key: hasRetained ? 'retained_bytes' : 'shallow_bytes', desc: true, filter: '', limit: 200};
  var cut = (Array.isArray(DATA.left_out) ? DATA.left_out : []).filter(function (x) { return x.what === 'histogram'; })[0];
  var input = el('input');
  input.type = 'search';
  input.placeholder = 'Filter classes, e.g. HashMap';
  input.setAttribute('aria-label', 'Filter classes');
  var counter = el('span', 'muted');
  add(box, el('p', 'lead', 'Objects in the dominator tree by class. Retained is the memory the class\u2019s objects keep alive together. Click a column to sort.'),
      add(el('div', 'toolbar'), input, counter));
  var table = el('table'), thead = el('thead'), tbody = el('tbody'), htr = el('tr');
  table.id = 'hist-table';
  var buttons = {};
  cols.forEach(function (c) {
    var th = el('th', c.text ? null : 'num'), btn = el('button', null, c.label), arrow = el('span', 'arrow');
    btn.append(arrow);
    btn.addEventListener('click', function () {
      if (state.key === c.key) state.desc = !state.desc; else { state.key = c.key; state.desc = !c.text; }
      render();
    });
    th.append(btn);
    htr.append(th);
    buttons[c.key] = {th: th, arrow: arrow};
  });
  if (hasRetained) add(htr, el('th', 'num', '% of heap'));
  add(table, add(thead, htr), tbody);
  var tableBox = add(el('div', 'table-box'), table), more = el('button', 'more');
  more.hidden = true;
  add(box, tableBox, more);
  more.addEventListener('click', function () { state.limit += 500; render(); });
  input.addEventListener('input', function () { state.filter = input.value.toLowerCase(); state.limit = 200; render(); });
  function render() {
    var f = state.filter, k = state.key, sign = state.desc ? -1 : 1;
    var shown = rows.filter(function (r) { return !f || String(r['class']).toLowerCase().indexOf(f) >= 0; });
    shown.sort(function (a, b) {
      var x = a[k], y = b[k];
      if (typeof x === 'string' || typeof y === 'string') return sign * String(x).localeCompare(String(y));
      return sign * ((x || 0) - (y || 0));
    });
    tbody.textContent = '';
    var frag = document.createDocumentFragment();
    shown.slice(0, state.limit).forEach(function (r) {
      var tr = el('tr');
      add(tr, el('td', 'cls', r['class']), el('td', 'num', num(r.count)), el('td', 'num', bytes(r.shallow_bytes)));
      if (hasRetained) add(tr, el('td', 'num', bytes(r.retained_bytes)), el('td', 'num', pct(r.retained_bytes, TOTAL)));
      frag.append(tr);
    });
    tbody.append(frag);
    cols.forEach(function (c) {
      var b = buttons[c.key];
      b.arrow.textContent = c.key === k ? (state.desc ? '\u2193' : '\u2191') : '';
      b.th.setAttribute('aria-sort', c.key === k ? (state.desc ? 'descending' : 'ascending') : 'none');
    });
    counter.textContent = num(Math.min(shown.length, state.limit)) + ' of ' + num(shown.length) + (f ? ' matching' : '') + ' classes shown' +
      (cut ? '; the page holds the first ' + num(cut.shown) + ' of ' + num(cut.total) + ' rows of the histogram' : '');
    more.hidden = shown.length <= state.limit;
    more.textContent = 'Show ' + num(Math.min(500, shown.length - state.limit)) + ' more';
  }
  render();
}

// ---- duplicate strings and arrays (the value reader's findings) ----
function drawDuplicates() {
  var box = $('duplicates-body'), c = R.content || {};
  if (!c.values_read) {
    add(box, el('p', 'muted', 'Not computed: ' + (c.unavailable || 'this report has no content section') + '.'));
    return;
  }
  add(box, el('p', 'lead', num(c.duplicate_string_groups) + ' groups of equal strings waste ' + bytes(c.duplicate_strings_wasted_bytes) +
      '; ' + num(c.duplicate_array_groups) + ' groups of equal primitive arrays waste ' + bytes(c.duplicate_arrays_wasted_bytes) +
      '. Wasted is what keeping one copy would save.'));
  var strings = (Array.isArray(R.duplicate_strings) ? R.duplicate_strings : []).map(function (d) {
    return {value: d.value + (d.value_cut ? '\u2026' : ''), length: d.length, copies: d.count, arrays: d.arrays, wasted_bytes: d.wasted_bytes, example: d.example_id};
  });
  var arrays = (Array.isArray(R.duplicate_arrays) ? R.duplicate_arrays : []).map(function (d) {
    return {'class': d['class'], length: d.length, copies: d.count, wasted_bytes: d.wasted_bytes, first_elements: d.first_elements, example: d.example_id};
  });
  add(box, el('h3', null, 'Strings'), add(el('div', 'table-box'), genericTable(strings)),
      el('h3', null, 'Primitive arrays'), add(el('div', 'table-box'), genericTable(arrays)));
}

// ---- object inspector: the report's `objects` (fields, first elements); others by what the tree knows ----
var OBJECTS = {}, TREE_INDEX = null;
(Array.isArray(R.objects) ? R.objects : []).concat(Array.isArray(DATA.objects) ? DATA.objects : []).forEach(function (o) { OBJECTS[o.id] = o; });
function treeNodeById(id) {
  if (!TREE_INDEX) { TREE_INDEX = {}; for (var i = 0; i < T.nodes.length; i++) TREE_INDEX[T.nodes[i][0]] = i; }
  var i = TREE_INDEX[id];
  return i === undefined ? null : node(i);
}
function inspectLink(id, cls, text, style) {
  var b = el('button', style || 'link', text);
  b.title = 'Open in the object inspector';
  b.addEventListener('click', function (e) { e.stopPropagation(); inspect(id, cls); });
  return b;
}
function valueCell(v) {
  var td = el('td', 'v');
  if (v.type !== 'object') { td.textContent = v.value; return td; }
  if (!v.ref) { add(td, el('span', 'faint', 'null')); return td; }
  add(td, inspectLink(v.ref, v.ref_class || '', (v.ref_class || 'object') + ' @ ' + v.ref));
  if (typeof v.text === 'string') add(td, el('div', 'mono', JSON.stringify(v.text) + (v.text_cut ? '\u2026' : '')));
  return td;
}
function valueTable(rows) {
  var table = el('table'), body = el('tbody');
  add(table, add(el('thead'), add(el('tr'), el('th', null, 'Name'), el('th', null, 'Type'), el('th', null, 'Value'))));
  rows.forEach(function (v) { add(body, add(el('tr'), el('td', 'mono', v.name), el('td', 'faint', v.type), valueCell(v))); });
  return add(table, body);
}
function inspect(id, cls) {
  var box = $('inspector-body'), o = OBJECTS[id], n = treeNodeById(id), c = R.content || {};
  box.textContent = '';
  add(box, add(el('div', 'head'), el('span', 'cls', o ? o['class'] : n ? n.cls : cls), el('span', 'faint mono', ' @ ' + id)));
  var facts = el('dl', 'facts'), fact = factAdder(facts);
  var shallow = o ? o.shallow_bytes : n ? n.shallow : null, retained = o ? o.retained_bytes : n ? n.retained : null;
  fact('Shallow', shallow == null ? null : bytes(shallow) + ' (' + num(shallow) + ' bytes)');
  fact('Retained', retained == null ? null : bytes(retained) + ' (' + num(retained) + ' bytes, ' + pct(retained, TOTAL) + ')');
  if (o && /array/.test(o.kind)) fact('Length', num(o.length));
  add(box, facts);
  if (!o) {
    add(box, el('p', 'muted', c.values_read
      ? 'Fields are in this page for the ' + num(Object.keys(OBJECTS).length) + ' largest objects and every object on a suspect\u2019s path; this one is not among them.'
      : 'No fields: ' + (c.unavailable || 'this report has no values') + '.'));
  } else if (!o.read) {
    add(box, el('p', 'muted', 'No fields: ' + (c.unavailable || 'the dump holds no values for this object') + '.'));
  } else if (o.kind === 'object_array' || o.kind === 'primitive_array') {
    add(box, el('h3', null, 'First ' + num(o.elements.length) + ' of ' + num(o.length) + ' elements'), valueTable(o.elements));
  } else {
    add(box, el('h3', null, o.kind === 'class' ? 'Static fields' : 'Fields'), valueTable(o.fields));
  }
  $('inspector').hidden = false;
}
function drawInspector() {
  $('inspector-close').addEventListener('click', function () { $('inspector').hidden = true; });
}

// ---- collections: capacity, fill and collision ratios (value reader) ----
function ratio(x) { return typeof x === 'number' ? x.toFixed(3) : ''; }
function drawCollections() {
  var box = $('collections-body'), c = R.collections || {};
  if (!c.computed) { add(box, el('p', 'muted', 'Not computed.')); return; }
  var classes = (c.classes || []).map(function (r) {
    return {'class': r['class'], instances: r.instances, entries: r.entries, empty: r.empty, capacity: r.capacity == null ? '' : r.capacity,
            fill_ratio: ratio(r.fill_ratio), collision_ratio: ratio(r.collision_ratio)};
  });
  var waste = (c.over_allocated || []).map(function (r) {
    return {'class': r['class'], id: r.id, entries: r.entries, capacity: r.capacity, fill_ratio: ratio(r.fill_ratio), retained_bytes: r.retained_bytes};
  });
  add(box, el('p', 'lead', 'Known collections in the dominator tree. Capacity is the length of the backing array; fill ratio is entries over capacity, collision ratio the share of entries that share a bucket (as Eclipse MAT counts them).'),
      el('h3', null, 'By class'), add(el('div', 'table-box'), genericTable(classes)),
      el('h3', null, 'Most over-allocated'), add(el('div', 'table-box'), genericTable(waste)));
}

// ---- threads and their stacks ----
function frameText(f) {
  var where = f['native'] ? 'Native Method' : (f.source || 'Unknown Source') + (f.line ? ':' + f.line : '');
  return 'at ' + f['class'] + '.' + f.method + '(' + where + ')';
}
function drawThreads() {
  var box = $('threads-body'), rows = Array.isArray(R.threads) ? R.threads : [], c = R.content || {};
  if (!rows.length) {
    add(box, el('p', 'muted', c.values_read ? 'The dump lists no threads.' : 'Not available: ' + (c.unavailable || 'no values') + ' (for PHD, give the javacore with --javacore).'));
    return;
  }
  add(box, el('p', 'lead', num(rows.length) + ' threads, largest retained first. Retained counts the thread object and what its stack frames keep alive; a frame\u2019s locals count the objects only that thread keeps. Click a thread for its stack.'));
  var table = el('table'), body = el('tbody');
  table.id = 'threads-table';
  add(table, add(el('thead'), add(el('tr'), el('th', null, 'Thread'), el('th', null, 'State'), el('th', null, 'Daemon'),
      el('th', 'num', 'Retained'), el('th', 'num', 'Locals'), el('th', 'num', 'Frames'))));
  rows.forEach(function (t) {
    var tr = el('tr'), name = el('td', 'cls');
    add(name, t.id ? inspectLink(t.id, t['class'], t.name + (t.name_cut ? '\u2026' : '')) : el('span', null, t.name));
    add(tr, name, el('td', null, t.state || ''), el('td', null, t.daemon == null ? '' : t.daemon ? 'yes' : 'no'),
        el('td', 'num', bytes(t.retained_bytes)), el('td', 'num', num(t.locals)), el('td', 'num', num(t.frames.length)));
    var stack = el('tr');
    stack.hidden = true;
    var cell = el('td');
    cell.colSpan = 6;
    var ol = el('ol', 'frames');
    ol.start = 0;
    t.frames.forEach(function (f) {
      add(ol, add(el('li'), document.createTextNode(frameText(f)),
                  f.locals ? el('span', 'faint', '  \u2014 ' + num(f.locals) + ' locals' + (f.locals_retained_bytes ? ', ' + bytes(f.locals_retained_bytes) + ' kept by this thread alone' : '')) : null));
    });
    if (!t.frames.length) add(ol, el('li', 'faint', t.stack_known ? 'no frames' : 'the dump holds no stack trace for this thread'));
    add(stack, add(cell, ol));
    tr.addEventListener('click', function () { stack.hidden = !stack.hidden; });
    tr.style.cursor = 'pointer';
    add(body, tr, stack);
  });
  add(box, add(el('div', 'table-box'), add(table, body)));
}

// ---- system properties ----
function drawProperties() {
  var box = $('properties-body'), rows = Array.isArray(R.system_properties) ? R.system_properties : [], c = R.content || {};
  if (!rows.length) {
    add(box, el('p', 'muted', !c.values_read ? 'Not available: ' + (c.unavailable || 'no values') + '.' : c.system_properties_found ? 'java.lang.System\u2019s properties are empty.' : 'The dump holds no java.lang.System properties.'));
    return;
  }
  var table = el('table'), body = el('tbody');
  table.id = 'properties-table';
  add(table, add(el('thead'), add(el('tr'), el('th', null, 'Key'), el('th', null, 'Value'))));
  rows.forEach(function (p) { add(body, add(el('tr'), el('td', 'mono', p.key), el('td', 'mono v', p.value + (p.value_cut ? '\u2026' : '')))); });
  add(box, add(el('div', 'table-box'), add(table, body)));
}

// ---- top consumers: the `consumers` section when the report has it ----
function drawConsumers() {
  var box = $('consumers-body'), grid = el('div', 'consumers');
  var c = R.consumers;
  if (c && typeof c === 'object') {
    [['by_class', 'By class'], ['by_loader', 'By class loader'], ['by_package', 'By package']].forEach(function (p) {
      if (Array.isArray(c[p[0]])) add(grid, add(el('div'), el('h3', null, p[1]), genericTable(c[p[0]].slice(0, 50))));
    });
    add(box, el('p', 'lead', 'Retained size by class, class loader and package.'), grid);
    return;
  }
  var byClass = (Array.isArray(R.histogram) ? R.histogram : []).filter(function (r) { return typeof r.retained_bytes === 'number'; })
    .slice().sort(function (a, b) { return b.retained_bytes - a.retained_bytes; }).slice(0, 15)
    .map(function (r) { return {'class': r['class'], objects: r.count, retained_bytes: r.retained_bytes}; });
  var byLoader = (Array.isArray(R.class_loaders) ? R.class_loaders : []).slice(0, 15)
    .map(function (r) { return {loader: r['class'] + (r.id && r.id !== 'bootstrap' ? ' @ ' + r.id : ''), classes: r.classes, retained_bytes: r.retained_bytes}; });
  add(grid, add(el('div'), el('h3', null, 'By class'), genericTable(byClass)), add(el('div'), el('h3', null, 'By class loader'), genericTable(byLoader)));
  add(box, el('p', 'lead', 'Retained size by class and by class loader (this report has no per-package view).'), grid);
}

// ---- what the page leaves out ----
function drawLeftOut() {
  var box = $('left-out-body'), list = el('ul'), items = Array.isArray(DATA.left_out) ? DATA.left_out : [];
  items.forEach(function (x) {
    var text = x.what === 'dominator tree'
      ? 'Dominator tree: ' + num(x.shown) + ' of ' + num(x.total) + ' objects, the ones that retain the most (at most ' + num(T.max_children) + ' children per object, ' + num(T.max_depth) + ' levels deep).'
      : 'The report\u2019s ' + x.what + ': the first ' + num(x.shown) + ' of ' + num(x.total) + ' rows.';
    add(list, el('li', null, text));
  });
  if (DATA.strings_cut) add(list, el('li', null, num(DATA.strings_cut) + ' strings longer than ' + num(DATA.max_string_bytes) + ' bytes were shortened.'));
  if (!list.children.length) add(box, el('p', 'muted', 'Nothing: this page holds the whole report and the whole dominator tree.'));
  else add(box, el('p', 'lead', 'To stay under 10 MB, this page holds only part of some data. The JSON report (--json) has the full tables.'), list);
  $('footer').textContent = 'heapgraph ' + (R.tool ? R.tool.version : '') + ' \u00b7 ' + (R.schema || '') + ' \u00b7 a self-contained page: nothing is loaded from the network.';
}

function showErrors() {
  var errors = window.__hgErrors;
  if (!errors.length) return;
  var box = $('errors');
  box.hidden = false;
  box.textContent = '';
  var list = el('ul');
  errors.forEach(function (e) { add(list, el('li', null, e)); });
  add(box, el('b', null, 'The page hit errors while drawing:'), list);
}

function selftest() {
  var result = {};
  var rows = function () { return document.querySelectorAll('#tree-list .trow.node').length; };
  result.tree_rows_before = rows();
  var first = document.querySelector('#tree-list .trow.node[aria-expanded="false"]');
  if (first) first.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
  result.tree_rows_after = rows();
  result.expanded = !!first && first.getAttribute('aria-expanded') === 'true' && result.tree_rows_after > result.tree_rows_before;
  var sortButton = document.querySelector('#hist-table thead button');
  if (sortButton) sortButton.click();
  result.histogram_rows = document.querySelectorAll('#hist-table tbody tr').length;
  result.treemap_rects = document.querySelectorAll('#treemap rect').length;
  result.duplicate_rows = document.querySelectorAll('#duplicates-body tbody tr').length;
  result.thread_rows = document.querySelectorAll('#threads-table > tbody > tr:not([hidden])').length;
  result.property_rows = document.querySelectorAll('#properties-table tbody tr').length;
  result.collection_rows = document.querySelectorAll('#collections-body tbody tr').length;
  // The inspector: open the largest object from its tree row, then follow its first reference.
  var open = document.querySelector('#tree-list .trow.node .insp');
  if (open) open.click();
  result.inspector_open = !$('inspector').hidden;
  result.inspector_embedded = Object.keys(OBJECTS).length;
  result.report_objects = Array.isArray(R.objects) ? R.objects.length : 0;
  result.inspector_title = ($('inspector-body').querySelector('.cls') || {}).textContent || '';
  result.inspector_fields = document.querySelectorAll('#inspector-body tbody tr').length;
  var ref = document.querySelector('#inspector-body tbody button.link');
  if (ref) ref.click();
  result.inspector_followed = ($('inspector-body').querySelector('.cls') || {}).textContent || '';
  var step = document.querySelector('#suspects-body ol.path button.link');
  if (step) step.click();
  result.suspect_step_inspected = !!step && document.querySelectorAll('#inspector-body tbody tr').length > 0;
  result.inspector_text = $('inspector-body').textContent;
  result.img_elements = document.getElementsByTagName('img').length;
  result.script_elements = document.getElementsByTagName('script').length;
  result.errors = window.__hgErrors.slice();
  var pre = el('pre', null, JSON.stringify(result));
  pre.id = 'selftest';
  document.body.append(pre);
}

guard('overview', drawOverview);
guard('picture', drawTreemap);
guard('picture', drawShare);
guard('suspects', drawSuspects);
guard('tree', drawTree);
guard('consumers', drawConsumers);
guard('histogram', drawHistogram);
guard('duplicates', drawDuplicates);
guard('collections', drawCollections);
guard('threads', drawThreads);
guard('properties', drawProperties);
guard('inspector', drawInspector);
guard('left-out', drawLeftOut);
if (location.hash === '#selftest') selftest();
showErrors();
window.addEventListener('error', function () { setTimeout(showErrors, 0); });
})();
</script>
</body>
</html>
)html";
}

}  // namespace

}  // namespace heapgraph::reports
