// Analyses that read single objects back (analysis/objects.h). Each asks the value pass for
// a few records (by address, or every thread by class) and decodes their fields by name:
//   - threads: every ROOT THREAD OBJECT, with Thread.name, daemon, threadStatus and tid
//     (JDK 19+: daemon and threadStatus in Thread.holder), its STACK TRACE's frames, and
//     per frame the objects its ROOT JAVA FRAME / ROOT JNI LOCAL records name;
//   - system properties: java.lang.System.props -> Properties.map (JDK 9+: a
//     ConcurrentHashMap; before: the Hashtable's own table) -> table -> entries;
//   - the inspector's objects: fields (class objects: statics), or an array's first elements;
//   - collections' capacities: the length of the backing array the collection walk found.
#include "objects.h"
#include "content.h"

#include <oneapi/tbb/parallel_for.h>

#include "byte_reader.h"
#include "edge_names.h"
#include "search.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace heapgraph::analysis {

namespace {

using graph::NodeId;
using graph::kNoNode;

bool is_class(const graph::HeapGraph& g, NodeId v, std::initializer_list<std::string_view> names) {
    const std::string& name = g.classes[g.types.class_index(v)].name;
    return std::find(names.begin(), names.end(), name) != names.end();
}

// java.lang.Thread.State from Thread.threadStatus (JVMTI bits), as jdk.internal.misc.VM.toThreadState.
std::string thread_state(std::uint64_t status) {
    if (status & 0x0004) return "RUNNABLE";
    if (status & 0x0400) return "BLOCKED";
    if (status & 0x0010) return "WAITING";
    if (status & 0x0020) return "TIMED_WAITING";
    if (status & 0x0002) return "TERMINATED";
    if (!(status & 0x0001)) return "NEW";
    return "RUNNABLE";
}

// "int", "boolean" ...; "object" for a reference.
std::string type_name(std::uint8_t type) {
    if (type == static_cast<std::uint8_t>(BasicType::object)) return "object";
    return std::string(basic_type_java_name(static_cast<BasicType>(type)));
}

ShownValue shown(const Findings& f, const DumpValues& values, std::string name, std::uint8_t type, std::uint64_t bits) {
    ShownValue v{.name = std::move(name), .type = type_name(type)};
    if (type != static_cast<std::uint8_t>(BasicType::object)) {
        v.value = java_value_text(type, bits);
        return v;
    }
    v.ref = bits;
    if (!bits) return v;
    v.ref_node = f.addresses.node_of(bits);
    if (!values.string(bits)) return v;
    if (auto text = values.text(bits, kValueChars, &v.value_cut)) {
        v.value = std::move(*text);
        v.text = true;
    }
    return v;
}

// The first elements of a primitive array.
std::vector<ShownValue> primitive_elements(const DumpValues& values, const ArrayObject& a) {
    std::vector<ShownValue> out;
    Bytes bytes = values.elements(a);
    const std::uint32_t width = basic_type_size(a.type, values.id_size());
    for (std::uint64_t i = 0; width && i < a.length && i < kInspectedElements && (i + 1) * width <= bytes.size(); ++i)
        out.push_back({.name = "[" + std::to_string(i) + "]", .type = type_name(a.type),
                       .value = java_value_text(a.type, ByteReader(bytes, i * width).u(width))});
    return out;
}

InspectedObject inspect(const Findings& f, const DumpValues& values, NodeId v) {
    const graph::HeapGraph& g = f.graph;
    InspectedObject out{.node = v};
    const std::uint64_t address = f.addresses[v];
    if (g.types.kind(v) == graph::NodeKind::class_object) {
        out.read = values.available;
        for (const FieldValue& s : values.statics(address)) out.fields.push_back(shown(f, values, std::string(s.name), s.type, s.bits));
    } else if (g.types.kind(v) == graph::NodeKind::primitive_array) {
        if (const ArrayObject* a = values.array(address)) {
            out.read = true;
            out.length = a->length;
            out.elements = primitive_elements(values, *a);
        }
    } else if (const ObjectRecordCopy* r = values.record(address)) {
        out.read = true;
        out.length = r->length;
        if (r->array) {
            const std::uint32_t copied = static_cast<std::uint32_t>(r->bytes.size() / values.id_size());
            for (std::uint32_t i = 0; i < copied && i < kInspectedElements; ++i)
                out.elements.push_back(shown(f, values, "[" + std::to_string(i) + "]",
                                             static_cast<std::uint8_t>(BasicType::object), values.element(*r, i)));
        } else {
            for (const FieldValue& field : values.fields(*r))
                out.fields.push_back(shown(f, values, std::string(field.name), field.type, field.bits));
        }
    }
    return out;
}

// A thread's fields, from its record (and, JDK 19+, its holder's).
void read_thread_fields(const DumpValues& values, const ObjectRecordCopy& r, ThreadRow& row) {
    if (auto name = values.field(r, "name"); name && *name)
        if (auto text = values.text(*name, kValueChars, &row.name_cut)) row.name = std::move(*text);
    const ObjectRecordCopy* state = &r;
    if (auto holder = values.field(r, "holder"); holder && *holder)
        if (const ObjectRecordCopy* h = values.record(*holder)) state = h;
    if (auto daemon = values.field(*state, "daemon")) row.daemon = *daemon != 0;
    if (auto status = values.field(*state, "threadStatus")) row.state = thread_state(*status);
    if (auto tid = values.field(r, "tid")) row.tid = static_cast<std::int64_t>(*tid);
}

// Each frame's locals: an object counts once per thread, at its top-most frame; its retained
// bytes count when the thread alone keeps it (its immediate dominator is the thread object).
void add_locals(const Findings& f, std::vector<std::pair<ThreadRoot, std::size_t>> locals, std::vector<ThreadRow>& rows) {
    std::sort(locals.begin(), locals.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second, a.first.object, a.first.frame) < std::tie(b.second, b.first.object, b.first.frame);
    });
    for (std::size_t i = 0; i < locals.size(); ++i) {
        const auto& [root, row_index] = locals[i];
        if (i && locals[i - 1].second == row_index && locals[i - 1].first.object == root.object) continue;
        ThreadRow& row = rows[row_index];
        ++row.locals;
        if (root.frame < 0 || static_cast<std::size_t>(root.frame) >= row.frames.size()) continue;
        ThreadFrame& frame = row.frames[static_cast<std::size_t>(root.frame)];
        ++frame.locals;
        const NodeId v = f.addresses.node_of(root.object);
        if (v != kNoNode && f.retained.tree.idom[v] == row.node) frame.locals_retained_bytes += f.retained.tree.retained_bytes[v];
    }
}

// The entries of a ConcurrentHashMap or Hashtable table: calls entry(record) for each.
template <typename Entry>
void for_each_entry(const DumpValues& values, const ObjectRecordCopy& table, Entry&& entry) {
    const std::uint32_t copied = static_cast<std::uint32_t>(table.bytes.size() / values.id_size());
    std::unordered_set<ObjectId> seen;  // each entry once: a chain that loops (a damaged dump) ends
    for (std::uint32_t i = 0; i < copied; ++i) {
        for (ObjectId next = values.element(table, i); next && seen.insert(next).second;) {
            const ObjectRecordCopy* node = values.record(next);
            if (!node) break;
            if (auto first = values.field(*node, "first"); first && values.class_name(node->class_id).ends_with("$TreeBin")) {
                next = *first;  // a CHM bin turned tree: its TreeNodes are linked by `next` too
                continue;
            }
            entry(*node);
            next = values.field(*node, "next").value_or(0);
        }
    }
}

}  // namespace

std::vector<NodeId> property_nodes(const graph::HeapGraph& g) {
    std::vector<NodeId> out;
    if (g.out.empty()) return out;
    for (const graph::ClassInfo& c : g.classes) {
        if (c.name != "java.lang.System" || c.node == kNoNode) continue;
        for (NodeId t : g.out.of(c.node))
            if (g.types.kind(t) == graph::NodeKind::instance && is_class(g, t, {"java.util.Properties"})) out.push_back(t);
    }
    // The map's parts: its map, tables, entries and tree bins (not keys and values: the value
    // pass reads every String anyway).
    for (std::size_t i = 0; i < out.size() && out.size() < (1u << 20); ++i)
        for (NodeId t : g.out.of(out[i]))
            if (is_class(g, t, {"java.util.concurrent.ConcurrentHashMap", "java.util.concurrent.ConcurrentHashMap$Node[]",
                                "java.util.concurrent.ConcurrentHashMap$Node", "java.util.concurrent.ConcurrentHashMap$TreeBin",
                                "java.util.concurrent.ConcurrentHashMap$TreeNode", "java.util.Hashtable$Entry[]",
                                "java.util.Hashtable$Entry"}) &&
                std::find(out.begin(), out.end(), t) == out.end())
                out.push_back(t);
    return out;
}

InspectedNodes inspected_nodes(const Findings& f, std::size_t report, std::size_t page) {
    const graph::Retained& r = f.retained;
    const std::size_t count = std::max(report, page);
    std::vector<NodeId> out;
    struct Next {
        std::uint64_t bytes;
        NodeId node;
        bool operator<(const Next& o) const { return bytes != o.bytes ? bytes < o.bytes : node > o.node; }
    };
    // Only a node's `count` largest children can be taken: a node that dominates millions
    // of objects adds `count` entries to the queue, not millions.
    std::priority_queue<Next> queue;
    auto push_largest = [&](std::span<const NodeId> children) {
        auto smaller_on_top = [](const Next& a, const Next& b) { return b < a; };
        std::priority_queue<Next, std::vector<Next>, decltype(smaller_on_top)> kept(smaller_on_top);
        for (NodeId c : children) {
            const Next next{r.tree.retained_bytes[c], c};
            // Once `count` are kept, one no larger than the smallest of them would be popped
            // at once: skip the push (most children of a node with millions are).
            if (count != 0 && kept.size() == count && !(kept.top() < next)) continue;
            kept.push(next);
            if (kept.size() > count) kept.pop();
        }
        for (; !kept.empty(); kept.pop()) queue.push(kept.top());
    };
    push_largest(r.top);
    while (!queue.empty() && out.size() < count) {
        NodeId v = queue.top().node;
        queue.pop();
        out.push_back(v);
        push_largest(r.children.of(v));
    }
    std::vector<NodeId> suspects;
    for (const graph::Suspect& s : f.suspects) {
        suspects.insert(suspects.end(), s.path.begin(), s.path.end());
        if (s.node != kNoNode) suspects.push_back(s.node);
        if (s.accumulation_point != kNoNode) suspects.push_back(s.accumulation_point);
    }
    auto with_suspects = [&](std::vector<NodeId> nodes) {
        nodes.insert(nodes.end(), suspects.begin(), suspects.end());
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        return nodes;
    };
    // Best first: the first `report` taken are the report's, whatever `page` is.
    std::vector<NodeId> largest(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(report, out.size())));
    return {with_suspects(std::move(out)), with_suspects(std::move(largest))};
}

ValueRequest value_request(NodeAddresses addresses, std::vector<NodeId> nodes) {
    ValueRequest request;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (NodeId v : nodes) request.addresses.push_back(addresses[v]);
    request.classes = thread_classes();
    return request;
}

void find_threads(const Findings& f, const DumpValues& values, ContentFindings& out) {
    std::vector<ThreadRow> rows;
    std::unordered_map<std::uint32_t, std::size_t> row_of_serial;
    for (const ThreadRoot& root : values.thread_roots) {
        // Object 0 names no thread (some writers list roots for threads without an object).
        if (!root.thread || !root.object || row_of_serial.count(root.thread_serial)) continue;
        ThreadRow row;
        row.node = f.addresses.node_of(root.object);
        if (row.node != kNoNode) row.retained_bytes = f.retained.tree.retained_bytes[row.node];
        if (const ObjectRecordCopy* r = values.record(root.object)) read_thread_fields(values, *r, row);
        const std::vector<StackTrace>& traces = values.source->stack_traces;
        auto trace = std::lower_bound(traces.begin(), traces.end(), static_cast<std::uint32_t>(root.frame),
                                      [](const StackTrace& t, std::uint32_t serial) { return t.serial < serial; });
        if (trace != traces.end() && trace->serial == static_cast<std::uint32_t>(root.frame)) {
            row.stack_known = true;
            for (const StackFrame& s : trace->frames)
                row.frames.push_back({.class_name = s.class_name, .method = s.method, .signature = s.signature,
                                      .source = s.source, .line = s.line});
        }
        row_of_serial.emplace(root.thread_serial, rows.size());
        rows.push_back(std::move(row));
    }
    std::vector<std::pair<ThreadRoot, std::size_t>> locals;
    for (const ThreadRoot& root : values.thread_roots)
        if (auto row = row_of_serial.find(root.thread_serial); !root.thread && row != row_of_serial.end())
            locals.emplace_back(root, row->second);
    add_locals(f, std::move(locals), rows);
    std::sort(rows.begin(), rows.end(), [](const ThreadRow& a, const ThreadRow& b) {
        return std::tie(b.retained_bytes, a.name, a.node) < std::tie(a.retained_bytes, b.name, b.node);
    });
    out.threads_from = "hprof";
    out.threads = std::move(rows);
}

void javacore_threads(const Findings& f, std::span<const Javacore::Thread> threads, ContentFindings& out) {
    if (threads.empty()) return;
    for (const Javacore::Thread& t : threads) {
        ThreadRow row;
        row.name = t.name;
        row.state = t.state;
        row.daemon = t.daemon;
        row.stack_known = true;
        if (t.object) row.node = f.addresses.node_of(*t.object);
        if (row.node != kNoNode) row.retained_bytes = f.retained.tree.retained_bytes[row.node];
        for (const Javacore::Frame& frame : t.frames)
            row.frames.push_back({.class_name = frame.class_name, .method = frame.method, .source = frame.source, .line = frame.line});
        out.threads.push_back(std::move(row));
    }
    std::stable_sort(out.threads.begin(), out.threads.end(), [](const ThreadRow& a, const ThreadRow& b) {
        return std::tie(b.retained_bytes, a.name) < std::tie(a.retained_bytes, b.name);
    });
    out.threads_from = "javacore";
}

void find_system_properties(const DumpValues& values, ContentFindings& out) {
    const ObjectId props = values.static_field("java.lang.System", "props").value_or(0);
    const ObjectRecordCopy* properties = props ? values.record(props) : nullptr;
    if (!properties) return;
    // JDK 9+: the entries live in Properties.map; before, in the Hashtable's own table.
    const ObjectRecordCopy* holder = properties;
    if (auto map = values.field(*properties, "map"); map && *map) holder = values.record(*map);
    auto table_id = holder ? values.field(*holder, "table") : std::nullopt;
    const ObjectRecordCopy* table = table_id && *table_id ? values.record(*table_id) : nullptr;
    out.properties_found = holder != nullptr;
    if (!table) return;
    for_each_entry(values, *table, [&](const ObjectRecordCopy& entry) {
        auto key = values.field(entry, "key");
        auto value = values.field(entry, "val");
        if (!value) value = values.field(entry, "value");
        std::optional<std::string> key_text, value_text;
        SystemProperty p;
        if (key && values.string(*key)) key_text = values.text(*key, kPropertyChars);
        if (value && values.string(*value)) value_text = values.text(*value, kPropertyChars, &p.value_cut);
        if (!key_text || !value_text) {
            ++out.properties_skipped;
            return;
        }
        p.key = std::move(*key_text);
        p.value = std::move(*value_text);
        out.system_properties.push_back(std::move(p));
    });
    std::sort(out.system_properties.begin(), out.system_properties.end(),
              [](const SystemProperty& a, const SystemProperty& b) { return std::tie(a.key, a.value) < std::tie(b.key, b.value); });
}

void inspect_objects(const Findings& f, const DumpValues& values, const InspectedNodes& nodes, ContentFindings& out) {
    for (NodeId v : nodes.all) {
        out.objects.push_back(inspect(f, values, v));
        out.objects.back().in_report = std::binary_search(nodes.in_report.begin(), nodes.in_report.end(), v);
    }
}

std::vector<std::optional<std::uint32_t>> collection_capacities(const Findings& f, const DumpValues& values) {
    // The object arrays by node (ascending, as their addresses are): a collection's backing
    // array is then found by its node, without turning each node back into an address (two
    // searches and a select each: 0.3 s of the values stage on the 2 GB BigHeap dump).
    struct NodeLength {
        NodeId node;
        std::uint32_t length;
    };
    const auto& arrays = values.object_arrays;
    std::vector<NodeLength> by_node(arrays.size());
    tbb::parallel_for(std::size_t{0}, arrays.size(), [&](std::size_t a) {
        by_node[a] = {f.addresses.node_of(arrays[a].address), arrays[a].length};
    });
    std::erase_if(by_node, [](const NodeLength& a) { return a.node == kNoNode; });  // keeps the order
    std::vector<std::optional<std::uint32_t>> out(f.collections.size());
    // A backing array mostly lies just past its collection: searched from the last one found.
    const std::span<const NodeLength> sorted(by_node);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, f.collections.size()), [&](const auto& range) {
        std::size_t hint = 0;
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            const NodeId backing = f.collections[i].backing_node;
            if (f.collections[i].backing_none) out[i] = 0;
            if (backing == kNoNode) continue;
            const std::size_t at = graph::lower_bound_near(sorted, backing, hint,
                                                           [](const NodeLength& a, NodeId v) { return a.node < v; });
            if (at < sorted.size() && sorted[at].node == backing) out[i] = sorted[at].length;
        }
    });
    return out;
}

}  // namespace heapgraph::analysis
