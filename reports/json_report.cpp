// The JSON report, version 1 (docs/report-schema.md). Keys keep their documented order;
// numbers are exact integers; the output depends only on the dump, never on thread count.
#include <nlohmann/json.hpp>

#include <oneapi/tbb/parallel_invoke.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "reports.h"

namespace heapgraph::reports {

namespace {

using Json = nlohmann::ordered_json;

std::string hex_id(std::uint64_t address) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

Json dump_section(const DumpFacts& d) {
    Json out;
    out["path"] = d.path;
    out["format"] = d.format;
    out["format_version"] = d.format_version;
    out["id_size"] = d.id_size;
    out["bytes"] = d.bytes;
    if (d.inflated_bytes) out["inflated_bytes"] = d.inflated_bytes;
    if (d.gzip_members) out["gzip_members"] = d.gzip_members;
    out["dumps_in_file"] = d.dumps_in_file;
    out["dump_index"] = d.dump_index;
    out["compressed_oops"] = d.compressed_oops;
    out["size_model"] = d.size_model;
    out["records"] = d.records;
    out["sub_records"] = d.sub_records;
    return out;
}

Json summary_section(const Analysis& a) {
    const graph::HeapGraph& g = a.graph;
    graph::Summary s = graph::summarize(g);
    Json out;
    out["objects"] = s.objects;
    out["instances"] = s.instances;
    out["object_arrays"] = s.object_arrays;
    out["primitive_arrays"] = s.primitive_arrays;
    out["classes"] = s.classes;
    out["reachable_classes"] = s.reachable_classes;
    out["class_bytes"] = s.class_bytes;
    out["gc_roots"] = s.gc_roots;
    Json by_kind = Json::object();
    for (std::size_t k = 0; k < s.gc_roots_by_kind.size(); ++k)
        if (s.gc_roots_by_kind[k]) by_kind[g.root_kind_names[k]] = s.gc_roots_by_kind[k];
    out["gc_roots_by_kind"] = by_kind;
    out["shallow_bytes"] = s.shallow_bytes;
    out["reachable_objects"] = s.reachable_objects;
    out["reachable_bytes"] = s.reachable_bytes;
    out["unreachable_objects"] = s.unreachable_objects;
    out["unreachable_bytes"] = s.unreachable_bytes;
    out["edges"] = s.edges;
    out["keep_unreachable"] = a.keep_unreachable;
    out["unreachable_roots"] = a.retained.unreachable_roots.size();
    out["retained_bytes_total"] = a.retained.tree.super_root_retained_bytes;
    return out;
}

Json class_id(const Analysis& a, std::uint32_t class_index) {
    graph::NodeId node = a.graph.classes[class_index].node;
    return node == graph::kNoNode ? Json(nullptr) : Json(hex_id(a.addresses[node]));
}

// `histogram` covers the objects in the dominator tree (the reachable ones, plus the kept
// unreachable ones under --keep-unreachable); `unreachable_histogram` the rest.
Json histogram_section(const Analysis& a, bool in_tree) {
    std::vector<graph::HistogramRow> rows = graph::class_histogram(a.graph, a.retained.in_tree, in_tree);
    std::vector<std::uint64_t> retained = in_tree ? graph::retained_bytes_by_class(a.graph, a.retained)
                                                  : std::vector<std::uint64_t>();
    Json out = Json::array();
    for (const graph::HistogramRow& row : rows) {
        Json item;
        item["class"] = a.graph.classes[row.class_index].name;
        item["class_id"] = class_id(a, row.class_index);
        item["count"] = row.count;
        item["shallow_bytes"] = row.shallow_bytes;
        if (in_tree) item["retained_bytes"] = retained[row.class_index];
        out.push_back(std::move(item));
    }
    return out;
}

Json dominators_section(const Analysis& a) {
    const graph::DominatorTree& tree = a.retained.tree;
    std::vector<graph::NodeId> top = graph::top_dominators(a.retained, a.top);
    const graph::Csr& children = a.retained.children;
    Json out = Json::array();
    for (graph::NodeId v : top) {
        Json item;
        item["id"] = hex_id(a.addresses[v]);
        item["class"] = graph::node_class_name(a.graph, v);
        item["shallow_bytes"] = a.graph.shallow_bytes[v];
        item["retained_bytes"] = tree.retained_bytes[v];
        item["retained_objects"] = tree.retained_objects[v];
        item["children"] = children.offsets[v + 1] - children.offsets[v];
        out.push_back(std::move(item));
    }
    return out;
}

Json class_loaders_section(const Analysis& a) {
    Json out = Json::array();
    for (const graph::LoaderRow& row : graph::class_loader_table(a.graph, a.retained)) {
        Json item;
        item["id"] = row.loader == graph::kNoNode ? Json("bootstrap") : Json(hex_id(a.addresses[row.loader]));
        item["class"] = row.loader == graph::kNoNode ? "<bootstrap>" : graph::node_class_name(a.graph, row.loader);
        item["classes"] = row.classes;
        item["retained_bytes"] = row.retained_bytes;
        out.push_back(std::move(item));
    }
    return out;
}

// Sizes of the known collections in the dominator tree (graph/collections.cpp): a row per
// collection class, and the `top` largest by retained bytes. `computed: false` and empty
// lists when the caller did not count them.
Json collections_section(const Analysis& a) {
    const graph::HeapGraph& g = a.graph;
    Json out;
    out["computed"] = a.collections != nullptr;
    struct ClassRow {
        std::uint64_t instances = 0, entries = 0, empty = 0, unknown = 0;
        std::string_view counted_as;
    };
    std::vector<ClassRow> by_class(g.classes.size());
    struct Sized {
        graph::NodeId node;
        std::uint64_t entries, retained_bytes;
    };
    std::vector<Sized> sized;
    for (const graph::CollectionCount& c : a.collections ? *a.collections : std::vector<graph::CollectionCount>{}) {
        if (!a.retained.in_tree[c.node]) continue;
        ClassRow& row = by_class[g.class_index[c.node]];
        ++row.instances;
        row.counted_as = c.counted_as;
        if (!c.entries) {
            ++row.unknown;
            continue;
        }
        row.entries += *c.entries;
        row.empty += *c.entries == 0;
        sized.push_back({c.node, *c.entries, a.retained.tree.retained_bytes[c.node]});
    }
    std::vector<std::uint32_t> classes;
    for (std::uint32_t c = 0; c < by_class.size(); ++c)
        if (by_class[c].instances) classes.push_back(c);
    std::sort(classes.begin(), classes.end(), [&](std::uint32_t x, std::uint32_t y) {
        if (by_class[x].entries != by_class[y].entries) return by_class[x].entries > by_class[y].entries;
        if (g.classes[x].name != g.classes[y].name) return g.classes[x].name < g.classes[y].name;
        return x < y;
    });
    Json class_rows = Json::array();
    for (std::uint32_t c : classes) {
        Json item;
        item["class"] = g.classes[c].name;
        item["class_id"] = class_id(a, c);
        item["counted_as"] = std::string(by_class[c].counted_as);
        item["instances"] = by_class[c].instances;
        item["entries"] = by_class[c].entries;
        item["empty"] = by_class[c].empty;
        item["unknown"] = by_class[c].unknown;
        class_rows.push_back(std::move(item));
    }
    std::size_t top = std::min(a.top, sized.size());
    std::partial_sort(sized.begin(), sized.begin() + static_cast<std::ptrdiff_t>(top), sized.end(),
                      [](const Sized& x, const Sized& y) {
                          if (x.retained_bytes != y.retained_bytes) return x.retained_bytes > y.retained_bytes;
                          return x.node < y.node;
                      });
    Json top_rows = Json::array();
    for (std::size_t i = 0; i < top; ++i) {
        Json item;
        item["id"] = hex_id(a.addresses[sized[i].node]);
        item["class"] = g.classes[g.class_index[sized[i].node]].name;
        item["entries"] = sized[i].entries;
        item["retained_bytes"] = sized[i].retained_bytes;
        top_rows.push_back(std::move(item));
    }
    out["classes"] = std::move(class_rows);
    out["top"] = std::move(top_rows);
    return out;
}

Json warnings_section(const std::vector<ReportWarning>& warnings) {
    Json out = Json::array();
    for (const ReportWarning& w : warnings)
        out.push_back(Json{{"code", w.code}, {"count", w.count}, {"message", w.message}});
    return out;
}


std::string text_of(const Json& json) {
    // Dump strings need not be valid UTF-8: replace bad bytes rather than fail the report.
    return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// The sections walk the whole graph or dominator tree independently: they run side by side.
std::string json_report(const Analysis& a) {
    Json summary, histogram, unreachable, dominators, loaders, collections;
    tbb::parallel_invoke([&] { summary = summary_section(a); }, [&] { histogram = histogram_section(a, true); },
                         [&] { unreachable = histogram_section(a, false); },
                         [&] { dominators = dominators_section(a); }, [&] { loaders = class_loaders_section(a); },
                         [&] { collections = collections_section(a); });
    Json report;
    report["schema"] = kSchema;
    report["tool"] = Json{{"name", "heapgraph"}, {"version", a.tool_version}};
    report["dump"] = dump_section(a.dump);
    report["summary"] = std::move(summary);
    report["histogram"] = std::move(histogram);
    report["unreachable_histogram"] = std::move(unreachable);
    report["dominators"] = std::move(dominators);
    report["class_loaders"] = std::move(loaders);
    report["collections"] = std::move(collections);
    report["warnings"] = warnings_section(a.warnings);
    return text_of(report) + "\n";
}

// The report ends with "\n}\n": `timings` goes in as its last key, after the rest was
// built, so measuring the report stage does not mean building the report twice.
std::string add_timings(std::string json, const std::vector<StageTime>& timings) {
    Json list = Json::array();
    for (const StageTime& t : timings)
        list.push_back(Json{{"stage", t.stage}, {"seconds", t.seconds}, {"peak_rss_bytes", t.peak_rss_bytes}});
    std::string entry = text_of(Json{{"timings", std::move(list)}});  // "{\n  \"timings\": [...]\n}"
    std::size_t close = json.rfind('}');
    std::string body = entry.substr(1, entry.size() - 2);               // "\n  \"timings\": [...]\n"
    return json.substr(0, close - 1) + "," + body + "}\n";
}

}  // namespace heapgraph::reports
