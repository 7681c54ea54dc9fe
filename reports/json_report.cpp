// The JSON report, version 1 (docs/report-schema.md). Keys keep their documented order;
// numbers are exact integers; the output depends only on the dump, never on thread count.
#include <nlohmann/json.hpp>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "hex_id.h"
#include "reports.h"
#include "top_rows.h"

namespace heapgraph::reports {

namespace {

using Json = nlohmann::ordered_json;
using analysis::Findings;

// Sections list at most kMaxRows rows: a small dump can declare 100,000 classes that share
// one long name. What a section leaves out is said in a `truncated_output` warning.
constexpr std::size_t kMaxRows = 50000;

struct Cut {
    std::uint64_t count = 0;  // rows or steps left out
    std::string note;         // "histogram: 12 of 50,012 classes ... left out"
};

template <typename Row>
void cut_rows(std::vector<Row>& rows, const char* section, const char* what, Cut& cut) {
    if (rows.size() <= kMaxRows) return;
    cut.count += rows.size() - kMaxRows;
    cut.note = std::string(section) + ": " + std::to_string(rows.size() - kMaxRows) + " of " +
               std::to_string(rows.size()) + " " + what + " left out";
    rows.resize(kMaxRows);
}

Json dump_section(const DumpInfo& d) {
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

Json summary_section(const Findings& a) {
    const graph::HeapGraph& g = a.graph;
    const graph::Summary& s = a.summary;
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
    out["dangling_references"] = a.dump.dangling_references;
    out["keep_unreachable"] = a.keep_unreachable;
    out["unreachable_roots"] = a.retained.unreachable_roots.size();
    out["retained_bytes_total"] = a.retained.tree.super_root_retained_bytes;
    return out;
}

Json class_id(const Findings& a, std::uint32_t class_index) {
    graph::NodeId node = a.graph.classes[class_index].node;
    return node == graph::kNoNode ? Json(nullptr) : Json(hex_id(a.addresses[node]));
}

// `histogram` covers the objects in the dominator tree (the reachable ones, plus the kept
// unreachable ones under --keep-unreachable); `unreachable_histogram` the rest.
Json histogram_section(const Findings& a, bool in_tree, Cut& cut) {
    std::vector<graph::HistogramRow> rows = in_tree ? a.histogram : a.unreachable_histogram;
    cut_rows(rows, in_tree ? "histogram" : "unreachable_histogram", "classes (the smallest by shallow bytes)", cut);
    const std::vector<std::uint64_t>& retained = a.retained_by_class;
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

Json dominators_section(const Findings& a) {
    const graph::DominatorTree& tree = a.retained.tree;
    const std::vector<graph::NodeId>& top = a.dominators;
    const graph::Csr& children = a.retained.children;
    Json out = Json::array();
    for (graph::NodeId v : top) {
        Json item;
        item["id"] = hex_id(a.addresses[v]);
        item["class"] = graph::node_class_name(a.graph, v);
        item["shallow_bytes"] = a.graph.shallow_bytes[v];
        item["retained_bytes"] = tree.retained_bytes[v];
        item["retained_objects"] = tree.retained_objects[v];
        item["children"] = children.degree(v);
        out.push_back(std::move(item));
    }
    return out;
}

Json class_loaders_section(const Findings& a, std::vector<graph::LoaderRow> loaders, Cut& cut) {
    cut_rows(loaders, "class_loaders", "loaders (the smallest by retained bytes)", cut);
    Json out = Json::array();
    for (const graph::LoaderRow& row : loaders) {
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
// collection class, the `top` largest by retained bytes and the `top` most over-allocated
// (unused slots of their backing array). Capacity is the backing array's length (value
// reader); fill and collision ratios follow MAT (docs/report-schema.md). `computed: false`
// and empty lists when the analysis did not count them.
struct CollectionRow {
    graph::NodeId node;
    std::uint64_t entries, retained_bytes;
    std::optional<std::uint32_t> capacity;
    std::optional<double> collision_ratio;
};

// MAT's collision ratio (HashedMapCollectionExtractorBase): the share of entries that share
// a bucket with an earlier one; 0 for an empty map.
double collision_ratio(std::uint64_t entries, std::uint64_t buckets_used) {
    return entries ? static_cast<double>(entries - std::min(entries, buckets_used)) / static_cast<double>(entries) : 0.0;
}

// MAT's fill ratio: entries over capacity; an empty collection with no slots counts as full.
Json fill_ratio(std::uint64_t entries, std::optional<std::uint64_t> capacity) {
    if (!capacity) return nullptr;
    if (*capacity == 0) return entries == 0 ? Json(1.0) : Json(nullptr);
    return Json(static_cast<double>(entries) / static_cast<double>(*capacity));
}

Json collection_item(const Findings& a, const CollectionRow& c) {
    const graph::HeapGraph& g = a.graph;
    Json item;
    item["id"] = hex_id(a.addresses[c.node]);
    item["class"] = g.classes[g.types.class_index(c.node)].name;
    item["entries"] = c.entries;
    item["retained_bytes"] = c.retained_bytes;
    item["capacity"] = c.capacity ? Json(*c.capacity) : Json(nullptr);
    item["fill_ratio"] = fill_ratio(c.entries, c.capacity);
    item["collision_ratio"] = c.collision_ratio ? Json(*c.collision_ratio) : Json(nullptr);
    return item;
}

// The `top` rows by `first`, ties by node (analysis/top_rows.h: a row per collection is not
// kept).
template <typename First>
auto top_collections(std::size_t top, First first) {
    auto less = [first](const CollectionRow& x, const CollectionRow& y) {
        if (first(x) != first(y)) return first(x) > first(y);
        return x.node < y.node;
    };
    return analysis::TopRows<CollectionRow, decltype(less)>(top, less);
}

Json collection_items(const Findings& a, std::vector<CollectionRow> rows) {
    Json out = Json::array();
    for (const CollectionRow& row : rows) out.push_back(collection_item(a, row));
    return out;
}

// What the collections section sums by class and keeps of the largest and most
// over-allocated, over a slice of the collections: slices are tallied side by side and then
// merged (3.3M collections on the 2 GB BigHeap dump: 0.24 s on one core).
class CollectionTally {
public:
    struct ClassRow {
        std::uint64_t instances = 0, entries = 0, empty = 0, unknown = 0;
        std::uint64_t with_capacity = 0, capacity = 0, capacity_entries = 0;
        std::uint64_t hashed_entries = 0, buckets_used = 0;
        bool hashed = false;
        std::string_view counted_as;
    };

    explicit CollectionTally(const Findings& a)
        : a_(a), by_class_(a.graph.classes.size()),
          by_retained_(top_collections(a.top, RetainedBytes{})), over_allocated_(top_collections(a.top, UnusedSlots{})) {}

    void add(std::size_t i) {
        const graph::CollectionCount& c = a_.collections[i];
        if (!a_.retained.in_tree.test(c.node)) return;
        ClassRow& row = by_class_[a_.graph.types.class_index(c.node)];
        ++row.instances;
        row.counted_as = c.counted_as();
        if (!c.sized) {
            ++row.unknown;
            return;
        }
        row.entries += c.entry_count;
        row.empty += c.entry_count == 0;
        std::optional<std::uint32_t> capacity = i < a_.capacities.size() ? a_.capacities[i] : std::nullopt;
        if (capacity) {
            ++row.with_capacity;
            row.capacity += *capacity;
            row.capacity_entries += c.entry_count;
        }
        std::optional<double> collision;
        if (c.shape == graph::CollectionShape::hashed && (c.backing_node != graph::kNoNode || c.backing_none)) {
            row.hashed = true;
            row.hashed_entries += c.entry_count;
            row.buckets_used += c.slots_used;
            collision = collision_ratio(c.entry_count, c.slots_used);
        }
        const CollectionRow sized{c.node, c.entry_count, a_.retained.tree.retained_bytes[c.node], capacity, collision};
        by_retained_.add(sized);
        if (capacity && *capacity > sized.entries) over_allocated_.add(sized);
    }

    // Adds the tally of a later slice: sums, and the later slice's `counted_as`, as one pass
    // in order would leave it.
    void merge(CollectionTally&& later) {
        for (std::size_t c = 0; c < by_class_.size(); ++c) {
            ClassRow &row = by_class_[c], &more = later.by_class_[c];
            if (!more.instances) continue;
            row.instances += more.instances, row.entries += more.entries, row.empty += more.empty;
            row.unknown += more.unknown, row.with_capacity += more.with_capacity, row.capacity += more.capacity;
            row.capacity_entries += more.capacity_entries, row.hashed_entries += more.hashed_entries;
            row.buckets_used += more.buckets_used, row.hashed = row.hashed || more.hashed;
            row.counted_as = more.counted_as;
        }
        for (const CollectionRow& r : later.by_retained_.take()) by_retained_.add(r);
        for (const CollectionRow& r : later.over_allocated_.take()) over_allocated_.add(r);
    }

    const std::vector<ClassRow>& by_class() const { return by_class_; }
    std::vector<CollectionRow> take_by_retained() { return by_retained_.take(); }
    std::vector<CollectionRow> take_over_allocated() { return over_allocated_.take(); }

private:
    struct RetainedBytes {
        std::uint64_t operator()(const CollectionRow& r) const { return r.retained_bytes; }
    };
    struct UnusedSlots {  // of a row with a capacity
        std::uint64_t operator()(const CollectionRow& r) const { return *r.capacity - r.entries; }
    };
    const Findings& a_;
    std::vector<ClassRow> by_class_;
    decltype(top_collections(0, RetainedBytes{})) by_retained_;
    decltype(top_collections(0, UnusedSlots{})) over_allocated_;
};

CollectionTally tally_collections(const Findings& a) {
    // Each slice keeps a row for every class: the slices' rows stay within 64 MB (a dump of
    // a million classes is tallied in one). From 256 collections on, so the golden dumps take
    // both paths.
    const std::size_t n = a.collections.size();
    const std::size_t row_bytes = sizeof(CollectionTally::ClassRow) * std::max<std::size_t>(a.graph.classes.size(), 1);
    const std::size_t slices = n < 256 ? 1 : std::clamp<std::size_t>((std::size_t{64} << 20) / row_bytes, 1, 8);
    std::vector<CollectionTally> tallies;
    for (std::size_t k = 0; k < slices; ++k) tallies.emplace_back(a);
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t k) {
        for (std::size_t i = k * n / slices; i < (k + 1) * n / slices; ++i) tallies[k].add(i);
    });
    for (std::size_t k = 1; k < slices; ++k) tallies[0].merge(std::move(tallies[k]));
    return std::move(tallies[0]);
}

Json collections_section(const Findings& a, Cut& cut) {
    const graph::HeapGraph& g = a.graph;
    Json out;
    out["computed"] = a.collections_counted;
    CollectionTally tally = tally_collections(a);
    const std::vector<CollectionTally::ClassRow>& by_class = tally.by_class();
    std::vector<std::uint32_t> classes;
    for (std::uint32_t c = 0; c < by_class.size(); ++c)
        if (by_class[c].instances) classes.push_back(c);
    std::sort(classes.begin(), classes.end(), [&](std::uint32_t x, std::uint32_t y) {
        if (by_class[x].entries != by_class[y].entries) return by_class[x].entries > by_class[y].entries;
        if (g.classes[x].name != g.classes[y].name) return g.classes[x].name < g.classes[y].name;
        return x < y;
    });
    cut_rows(classes, "collections.classes", "classes (the fewest entries)", cut);
    Json class_rows = Json::array();
    for (std::uint32_t c : classes) {
        const CollectionTally::ClassRow& row = by_class[c];
        Json item;
        item["class"] = g.classes[c].name;
        item["class_id"] = class_id(a, c);
        item["counted_as"] = std::string(row.counted_as);
        item["instances"] = row.instances;
        item["entries"] = row.entries;
        item["empty"] = row.empty;
        item["unknown"] = row.unknown;
        item["with_capacity"] = row.with_capacity;
        item["capacity"] = row.with_capacity ? Json(row.capacity) : Json(nullptr);
        item["fill_ratio"] = row.with_capacity ? fill_ratio(row.capacity_entries, row.capacity) : Json(nullptr);
        item["collision_ratio"] =
            row.hashed && row.hashed_entries ? Json(collision_ratio(row.hashed_entries, row.buckets_used)) : Json(nullptr);
        class_rows.push_back(std::move(item));
    }
    out["classes"] = std::move(class_rows);
    out["top"] = collection_items(a, tally.take_by_retained());
    out["over_allocated"] = collection_items(a, tally.take_over_allocated());
    return out;
}

// ---- content (analysis/content.cpp) -------------------------------------------------------

Json content_section(const Findings& a) {
    const analysis::ContentFindings& c = a.content;
    Json out;
    out["values_read"] = c.values_read;
    out["unavailable"] = c.values_read ? Json(nullptr) : Json(c.unavailable);
    out["duplicate_string_groups"] = c.string_groups;
    out["duplicate_strings_wasted_bytes"] = c.string_wasted_bytes;
    out["duplicate_array_groups"] = c.array_groups;
    out["duplicate_arrays_wasted_bytes"] = c.array_wasted_bytes;
    out["threads_from"] = c.threads_from.empty() ? Json(nullptr) : Json(c.threads_from);
    out["system_properties_found"] = c.properties_found;
    out["system_properties_skipped"] = c.properties_skipped;
    out["objects_inspected"] = std::count_if(c.objects.begin(), c.objects.end(), [](const auto& o) { return o.in_report; });
    return out;
}

// HPROF line numbers: > 0 a line; -3 a native method; 0, -1 and -2 no line.
Json frame_item(const analysis::ThreadFrame& f) {
    return Json{{"class", f.class_name},
                {"method", f.method},
                {"signature", f.signature},
                {"source", f.source.empty() ? Json(nullptr) : Json(f.source)},
                {"line", f.line > 0 ? Json(f.line) : Json(nullptr)},
                {"native", f.line == -3},
                {"locals", f.locals},
                {"locals_retained_bytes", f.locals_retained_bytes}};
}

Json threads_section(const Findings& a) {
    Json rows = Json::array();
    for (const analysis::ThreadRow& t : a.content.threads) {
        Json frames = Json::array();
        for (const analysis::ThreadFrame& f : t.frames) frames.push_back(frame_item(f));
        bool known = t.node != graph::kNoNode;
        rows.push_back(Json{{"id", known ? Json(hex_id(a.addresses[t.node])) : Json(nullptr)},
                            {"class", known ? Json(graph::node_class_name(a.graph, t.node)) : Json(nullptr)},
                            {"name", t.name},
                            {"name_cut", t.name_cut},
                            {"daemon", t.daemon ? Json(*t.daemon) : Json(nullptr)},
                            {"state", t.state.empty() ? Json(nullptr) : Json(t.state)},
                            {"tid", t.tid ? Json(*t.tid) : Json(nullptr)},
                            {"retained_bytes", t.retained_bytes},
                            {"locals", t.locals},
                            {"stack_known", t.stack_known},
                            {"frames", std::move(frames)}});
    }
    return rows;
}

Json system_properties_section(const Findings& a) {
    Json rows = Json::array();
    for (const analysis::SystemProperty& p : a.content.system_properties)
        rows.push_back(Json{{"key", p.key}, {"value", p.value}, {"value_cut", p.value_cut}});
    return rows;
}

Json shown_value(const Findings& a, const analysis::ShownValue& v) {
    Json out{{"name", v.name}, {"type", v.type}};
    if (v.type != "object") {
        out["value"] = v.value;
        return out;
    }
    out["ref"] = v.ref ? Json(hex_id(v.ref)) : Json(nullptr);
    out["ref_class"] = v.ref_node != graph::kNoNode ? Json(graph::node_class_name(a.graph, v.ref_node)) : Json(nullptr);
    out["text"] = v.text ? Json(v.value) : Json(nullptr);  // a String's text
    if (v.value_cut) out["text_cut"] = true;
    return out;
}

}  // namespace

// The objects the HTML inspector opens (analysis/objects.cpp): the report lists the `top`
// largest of the dominator tree and every suspect path; the page embeds more.
Json inspected_objects_json(const Findings& a, bool in_report) {
    Json rows = Json::array();
    for (const analysis::InspectedObject& o : a.content.objects) {
        if (o.in_report != in_report) continue;
        Json fields = Json::array(), elements = Json::array();
        for (const analysis::ShownValue& v : o.fields) fields.push_back(shown_value(a, v));
        for (const analysis::ShownValue& v : o.elements) elements.push_back(shown_value(a, v));
        rows.push_back(Json{{"id", hex_id(a.addresses[o.node])},
                            {"class", graph::node_class_name(a.graph, o.node)},
                            {"kind", graph::node_kind_name(a.graph.types.kind(o.node))},
                            {"shallow_bytes", a.graph.shallow_bytes[o.node]},
                            {"retained_bytes", a.retained.tree.retained_bytes[o.node]},
                            {"read", o.read},
                            {"length", o.length},
                            {"fields", std::move(fields)},
                            {"elements", std::move(elements)}});
    }
    return rows;
}

namespace {

Json duplicate_strings_section(const Findings& a) {
    Json rows = Json::array();
    for (const analysis::DuplicateString& d : a.content.duplicate_strings)
        rows.push_back(Json{{"value", d.value}, {"value_cut", d.value_cut}, {"length", d.length}, {"count", d.count},
                            {"arrays", d.arrays}, {"wasted_bytes", d.wasted_bytes},
                            {"example_id", hex_id(a.addresses[d.example])}});
    return rows;
}

Json duplicate_arrays_section(const Findings& a) {
    Json rows = Json::array();
    for (const analysis::DuplicateArray& d : a.content.duplicate_arrays)
        rows.push_back(Json{{"class", a.graph.classes[a.graph.types.class_index(d.example)].name}, {"length", d.length},
                            {"count", d.count}, {"wasted_bytes", d.wasted_bytes}, {"first_elements", d.first_elements},
                            {"example_id", hex_id(a.addresses[d.example])}});
    return rows;
}

// ---- suspects and consumers (docs/suspects.md) -------------------------------------------

// "12,345,678"
std::string grouped(std::uint64_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

double percent_of(std::uint64_t part, std::uint64_t total) {
    return total ? std::round(10000.0 * static_cast<double>(part) / static_cast<double>(total)) / 100 : 0;
}

// MAT's formatRetainedHeap: "12,345,678 (37.20%)".
std::string bytes_and_percent(std::uint64_t bytes, std::uint64_t total) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f%%", total ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total) : 0.0);
    return grouped(bytes) + " (" + pct + ")";
}

class SuspectWriter {
public:
    explicit SuspectWriter(const Findings& a) : a_(a), g_(a.graph), total_(a.retained.tree.super_root_retained_bytes) {
        for (std::uint32_t c = 0; c < g_.classes.size(); ++c) {
            if (g_.classes[c].node != graph::kNoNode) described_.emplace(g_.classes[c].node, c);
            if (g_.classes[c].loader != graph::kNoNode) loaders_.insert(g_.classes[c].loader);
        }
    }

    Json write(const graph::Suspect& s, const std::vector<std::string>& fields) const {
        Json out;
        out["kind"] = s.group ? "group" : "single";
        out["id"] = s.group ? Json(nullptr) : Json(hex_id(a_.addresses[s.node]));
        out["class"] = g_.classes[s.class_index].name;
        out["class_object"] = !s.group && g_.types.kind(s.node) == graph::NodeKind::class_object;
        out["class_loader"] = loader_name(g_.classes[s.class_index].loader);
        out["instances"] = s.group ? s.instances.size() : 1;
        out["retained_bytes"] = s.retained_bytes;
        out["percent"] = percent_of(s.retained_bytes, total_);
        out["description"] = description(s);
        if (s.accumulation_point == graph::kNoNode) {
            out["accumulation_point"] = nullptr;
        } else {
            graph::NodeId ap = s.accumulation_point;
            out["accumulation_point"] = Json{{"id", hex_id(a_.addresses[ap])},
                                             {"class", graph::node_class_name(g_, ap)},
                                             {"retained_bytes", a_.retained.tree.retained_bytes[ap]},
                                             {"percent", percent_of(a_.retained.tree.retained_bytes[ap], total_)}};
        }
        out["path"] = path(s.path, fields);
        if (s.path_omitted) out["path_omitted"] = Json{{"after_step", graph::kPathHeadSteps}, {"steps", s.path_omitted}};
        out["path_strong"] = !s.path_weak;
        Json top = Json::array();
        for (const graph::ClassShare& c : s.top_classes)
            top.push_back(Json{{"class", c.class_node != graph::kNoNode ? "class " + g_.classes[c.class_index].name
                                                                         : g_.classes[c.class_index].name},
                               {"objects", c.objects},
                               {"shallow_bytes", c.shallow_bytes}});
        out["top_retained_classes"] = std::move(top);
        return out;
    }

private:
    // MAT names the bootstrap loader "<system class loader>", others by technical name.
    std::string loader_name(graph::NodeId loader) const {
        if (loader == graph::kNoNode) return "<system class loader>";
        return g_.classes[g_.types.class_index(loader)].name + " @ " + hex_id(a_.addresses[loader]);
    }
    std::uint32_t own_class(graph::NodeId v) const {
        auto it = described_.find(v);
        return it != described_.end() ? it->second : g_.types.class_index(v);
    }
    bool is_class(graph::NodeId v) const { return g_.types.kind(v) == graph::NodeKind::class_object; }
    std::string technical(graph::NodeId v) const {
        return graph::node_class_name(g_, v) + " @ " + hex_id(a_.addresses[v]);
    }

    Json path(const std::vector<graph::NodeId>& nodes, const std::vector<std::string>& fields) const {
        Json out = Json::array();
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            graph::NodeId v = nodes[i];
            Json step{{"id", hex_id(a_.addresses[v])}, {"class", graph::node_class_name(g_, v)}, {"field", nullptr}};
            if (!fields[i].empty()) step["field"] = fields[i];
            out.push_back(std::move(step));
        }
        return out;
    }

    // LeakHunterQuery's top consumers: "X (1 instance totaling 24), Y (...) and Z (...)".
    std::string consumers(const graph::Suspect& s) const {
        std::string out;
        for (std::size_t i = 0; i < s.top_classes.size(); ++i) {
            const graph::ClassShare& c = s.top_classes[i];
            if (i) out += i + 1 == s.top_classes.size() ? " and " : ", ";
            out += g_.classes[c.class_index].name + " (" + grouped(c.objects) +
                   (c.objects == 1 ? " instance" : " instances") + " totaling " + grouped(c.shallow_bytes) + " bytes)";
        }
        return out.empty() ? "Empty" : out;
    }

    std::string held_by(graph::NodeId v) const {
        if (loaders_.count(v)) return "classloader/component " + technical(v);
        if (is_class(v)) return "class " + g_.classes[own_class(v)].name + ", loaded by " + loader_name(g_.classes[own_class(v)].loader);
        return technical(v) + ", loaded by " + loader_name(g_.classes[g_.types.class_index(v)].loader);
    }

    std::string accumulation(const graph::Suspect& s) const {
        graph::NodeId ap = s.accumulation_point;
        if (ap == graph::kNoNode) return "";
        std::string size = bytes_and_percent(a_.retained.tree.retained_bytes[ap], total_);
        std::string where;
        if (loaders_.count(ap)) where = "classloader/component " + technical(ap);
        else if (is_class(ap)) where = "class " + g_.classes[own_class(ap)].name + ", loaded by " + loader_name(g_.classes[own_class(ap)].loader) + ",";
        else where = "one instance of " + g_.classes[g_.types.class_index(ap)].name + ", loaded by " + loader_name(g_.classes[g_.types.class_index(ap)].loader) + ",";
        return (s.group ? " Most of these instances are referenced from " : " The memory is accumulated in ") + where +
               " which occupies " + size + " bytes.";
    }

    std::string description(const graph::Suspect& s) const {
        std::string size = bytes_and_percent(s.retained_bytes, total_), text;
        const std::string& name = g_.classes[s.class_index].name;
        const std::string loader = loader_name(g_.classes[s.class_index].loader);
        if (s.group) {
            text = grouped(s.instances.size()) + " instances of " + name + ", loaded by " + loader + " occupy " + size +
                   " bytes. The top consumers of their minimum retained heap are " + consumers(s) + ".";
        } else if (s.thread == s.node) {
            text = "The thread " + technical(s.node) + " keeps local variables with total size " + size +
                   " bytes. The top consumers of its minimum retained heap are " + consumers(s) + ".";
        } else if (loaders_.count(s.node)) {
            text = "The classloader/component " + technical(s.node) + " occupies " + size +
                   " bytes. The top consumers of its minimum retained heap are " + consumers(s) + ".";
        } else if (is_class(s.node)) {
            text = "The class " + name + ", loaded by " + loader + ", occupies " + size +
                   " bytes. The top consumers of its minimum retained heap are " + consumers(s) + ".";
        } else {
            text = "One instance of " + name + " loaded by " + loader + " occupies " + size +
                   " bytes. The top consumers of its minimum retained heap are " + consumers(s) + ".";
        }
        if (!s.group && s.referrer != graph::kNoNode) text += " The instance is referenced by " + held_by(s.referrer) + ".";
        text += accumulation(s);
        if (s.group && s.referrer != graph::kNoNode) text += " The instance is referenced by " + held_by(s.referrer) + ".";
        if (s.path_weak) text += " No path from the GC roots avoids weak references.";
        return text;
    }

    const Findings& a_;
    const graph::HeapGraph& g_;
    std::uint64_t total_;
    std::unordered_map<graph::NodeId, std::uint32_t> described_;
    std::unordered_set<graph::NodeId> loaders_;
};

Json suspects_section(const Findings& a, Cut& cut) {
    SuspectWriter writer(a);
    Json out = Json::array();
    std::uint64_t steps = 0, paths = 0;
    for (std::size_t i = 0; i < a.suspects.size(); ++i) {
        const graph::Suspect& s = a.suspects[i];
        out.push_back(writer.write(s, a.suspect_fields[i]));
        steps += s.path_omitted, paths += s.path_omitted != 0;
    }
    std::vector<std::string> notes;
    if (a.suspects_left_out)
        notes.push_back("suspects: " + std::to_string(a.suspects_left_out) + " smaller suspects left out");
    if (paths)
        notes.push_back("suspects: " + std::to_string(steps) + " steps left out of " + std::to_string(paths) +
                        " long paths (path_omitted)");
    for (const std::string& note : notes) cut.note += (cut.note.empty() ? "" : "; ") + note;
    cut.count += a.suspects_left_out + steps;
    return out;
}

// Top consumers: retained size by class, by class loader, and by package of the top-level
// dominators (TopConsumers2Query), `top` rows each.
Json consumers_section(const Findings& a) {
    const std::vector<std::uint64_t>& by_class = a.retained_by_class;
    const std::vector<graph::LoaderRow>& loaders = a.class_loaders;
    const graph::HeapGraph& g = a.graph;
    const std::uint64_t total = a.retained.tree.super_root_retained_bytes;
    std::vector<std::uint32_t> classes;
    for (std::uint32_t c = 0; c < by_class.size(); ++c)
        if (by_class[c]) classes.push_back(c);
    std::sort(classes.begin(), classes.end(), [&](std::uint32_t x, std::uint32_t y) {
        if (by_class[x] != by_class[y]) return by_class[x] > by_class[y];
        if (g.classes[x].name != g.classes[y].name) return g.classes[x].name < g.classes[y].name;
        return x < y;
    });
    Json class_rows = Json::array();
    for (std::size_t i = 0; i < classes.size() && i < a.top; ++i)
        class_rows.push_back(Json{{"class", g.classes[classes[i]].name},
                                  {"class_id", class_id(a, classes[i])},
                                  {"retained_bytes", by_class[classes[i]]},
                                  {"percent", percent_of(by_class[classes[i]], total)}});
    Json loader_rows = Json::array();
    for (std::size_t i = 0; i < loaders.size() && i < a.top; ++i) {
        const graph::LoaderRow& row = loaders[i];
        bool boot = row.loader == graph::kNoNode;
        loader_rows.push_back(Json{{"id", boot ? Json("bootstrap") : Json(hex_id(a.addresses[row.loader]))},
                                   {"class", boot ? "<system class loader>" : graph::node_class_name(g, row.loader)},
                                   {"retained_bytes", row.retained_bytes},
                                   {"percent", percent_of(row.retained_bytes, total)}});
    }
    Json package_rows = Json::array();
    const std::vector<graph::PackageRow>& packages = a.packages;
    for (std::size_t i = 0; i < packages.size() && i < a.top; ++i)
        package_rows.push_back(Json{{"package", packages[i].package},
                                    {"dominators", packages[i].dominators},
                                    {"retained_bytes", packages[i].retained_bytes},
                                    {"percent", percent_of(packages[i].retained_bytes, total)}});
    return Json{{"by_class", std::move(class_rows)}, {"by_loader", std::move(loader_rows)},
                {"by_package", std::move(package_rows)}};
}

// The loader's warnings, and what the sections cut, merged into one `truncated_output`.
Json warnings_section(std::vector<Warning> warnings, const std::vector<Cut>& cuts) {
    Warning cut{"truncated_output", 0, ""};
    for (const Cut& c : cuts)
        if (c.count) cut.count += c.count, cut.message += (cut.message.empty() ? "" : "; ") + c.note;
    if (cut.count) {
        cut.message = "the report is cut to stay bounded: " + cut.message;
        auto same = std::find_if(warnings.begin(), warnings.end(), [](const Warning& w) { return w.code == "truncated_output"; });
        if (same == warnings.end()) warnings.push_back(cut);
        else same->count += cut.count, same->message += "; " + cut.message;
    }
    Json out = Json::array();
    for (const Warning& w : warnings)
        out.push_back(Json{{"code", w.code}, {"count", w.count}, {"message", w.message}});
    return out;
}

std::string text_of(const Json& json) {
    // Dump strings need not be valid UTF-8: replace bad bytes rather than fail the report.
    return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// The sections are written side by side: each reads its own part of the findings.
Json json_document(const Findings& a) {
    Json summary, histogram, unreachable, dominators, loaders, collections, suspects, consumers;
    std::vector<Cut> cuts(5);  // each section cuts its own: they run side by side
    tbb::parallel_invoke([&] { summary = summary_section(a); },
                         [&] { histogram = histogram_section(a, true, cuts[0]); },
                         [&] { unreachable = histogram_section(a, false, cuts[1]); },
                         [&] { dominators = dominators_section(a); },
                         [&] { loaders = class_loaders_section(a, a.class_loaders, cuts[2]); },
                         [&] { collections = collections_section(a, cuts[3]); },
                         [&] { suspects = suspects_section(a, cuts[4]); },
                         [&] { consumers = consumers_section(a); });
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
    report["suspect_threshold_percent"] = a.suspect_threshold;
    report["suspects"] = std::move(suspects);
    report["consumers"] = std::move(consumers);
    report["content"] = content_section(a);
    report["duplicate_strings"] = duplicate_strings_section(a);
    report["duplicate_arrays"] = duplicate_arrays_section(a);
    report["threads"] = threads_section(a);
    report["system_properties"] = system_properties_section(a);
    report["objects"] = inspected_objects_json(a, true);
    report["warnings"] = warnings_section(a.warnings, cuts);
    return report;
}

std::string json_report(const Findings& a) { return json_report(json_document(a)); }
std::string json_report(const Json& document) { return text_of(document) + "\n"; }

// The report ends with "\n}\n": `timings` goes in as its last key, after the rest was
// built, so measuring the report stage does not mean building the report twice.
std::string add_timings(std::string json, const std::vector<StageTiming>& timings) {
    Json list = Json::array();
    for (const StageTiming& t : timings) {
        Json entry{{"stage", t.stage},
                   {"seconds", t.seconds},
                   {"peak_rss_bytes", t.peak_rss_bytes},
                   {"user_seconds", t.user_seconds},
                   {"system_seconds", t.system_seconds},
                   {"page_faults", t.page_faults}};
        if (!t.note.empty()) entry["note"] = t.note;
        list.push_back(std::move(entry));
    }
    std::string entry = text_of(Json{{"timings", std::move(list)}});  // "{\n  \"timings\": [...]\n}"
    std::size_t close = json.rfind('}');
    std::string body = entry.substr(1, entry.size() - 2);               // "\n  \"timings\": [...]\n"
    return json.substr(0, close - 1) + "," + body + "}\n";
}

}  // namespace heapgraph::reports
