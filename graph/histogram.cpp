// Headline counts and per-class histograms over the heap graph.
#include "graph.h"

#include <algorithm>

namespace heapgraph::graph {

Summary summarize(const HeapGraph& graph) {
    Summary s;
    std::vector<NodeId> named;
    for (const GcRoot& root : graph.roots) named.push_back(root.node);
    std::sort(named.begin(), named.end());
    s.gc_roots = static_cast<std::uint64_t>(std::unique(named.begin(), named.end()) - named.begin());
    s.edges = graph.edges;
    s.gc_roots_by_kind.assign(graph.root_kind_names.size(), 0);
    for (const GcRoot& root : graph.roots) ++s.gc_roots_by_kind[root.kind];
    NodeBits walked;
    const NodeBits& reached = reachable_of(graph, walked);
    for (NodeId v = 0; v < graph.node_count(); ++v) {
        std::uint64_t bytes = graph.shallow_bytes[v];
        bool reachable = reached.test(v);
        s.shallow_bytes += bytes;
        (reachable ? s.reachable_bytes : s.unreachable_bytes) += bytes;
        switch (graph.types.kind(v)) {
            case NodeKind::class_object:
                ++s.classes;
                s.class_bytes += bytes;
                s.reachable_classes += reachable;
                continue;
            case NodeKind::instance: ++s.instances; break;
            case NodeKind::object_array: ++s.object_arrays; break;
            case NodeKind::primitive_array: ++s.primitive_arrays; break;
        }
        ++s.objects;
        ++(reachable ? s.reachable_objects : s.unreachable_objects);
    }
    return s;
}

std::vector<HistogramRow> class_histogram(const HeapGraph& graph, bool reachable) {
    NodeBits walked;
    return class_histogram(graph, reachable_of(graph, walked), reachable);
}

const char* node_kind_name(NodeKind kind) {
    switch (kind) {
        case NodeKind::instance: return "instance";
        case NodeKind::object_array: return "object_array";
        case NodeKind::primitive_array: return "primitive_array";
        case NodeKind::class_object: return "class";
    }
    return "?";
}

std::string node_class_name(const HeapGraph& graph, NodeId v) {
    if (graph.types.kind(v) != NodeKind::class_object) return graph.classes[graph.types.class_index(v)].name;
    for (const ClassInfo& c : graph.classes)
        if (c.node == v) return "class " + c.name;
    return "class ?";
}

std::vector<HistogramRow> class_histogram(const HeapGraph& graph, const NodeBits& mask,
                                          bool value) {
    std::vector<HistogramRow> rows(graph.classes.size());
    for (std::uint32_t c = 0; c < rows.size(); ++c) rows[c].class_index = c;
    for (NodeId v = 0; v < graph.node_count(); ++v) {
        if (mask.test(v) != value) continue;
        HistogramRow& row = rows[graph.types.class_index(v)];
        ++row.count;
        row.shallow_bytes += graph.shallow_bytes[v];
    }
    std::erase_if(rows, [](const HistogramRow& row) { return row.count == 0; });
    std::sort(rows.begin(), rows.end(), [&](const HistogramRow& a, const HistogramRow& b) {
        if (a.shallow_bytes != b.shallow_bytes) return a.shallow_bytes > b.shallow_bytes;
        const std::string& an = graph.classes[a.class_index].name;
        const std::string& bn = graph.classes[b.class_index].name;
        if (an != bn) return an < bn;
        return a.class_index < b.class_index;
    });
    return rows;
}

}  // namespace heapgraph::graph
