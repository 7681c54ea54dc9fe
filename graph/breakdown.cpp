// Retained sizes broken down by group (class, class loader): a group's retained size is that
// of all its members taken as one set, i.e. the sum over members that no other member
// dominates. One depth-first walk of the dominator tree counts, per group, how many members
// are open above the current node.
#include <algorithm>

#include "graph.h"

namespace heapgraph::graph {

namespace {

constexpr std::uint32_t kNoGroup = 0xFFFFFFFFu;

// `groups_of(v, out)` writes up to two groups of node v into out and returns how many.
template <typename GroupsOf>
std::vector<std::uint64_t> retained_by_group(const Retained& retained, std::size_t groups, GroupsOf groups_of) {
    const DominatorTree& tree = retained.tree;
    const Csr& children = retained.children;
    std::vector<std::uint64_t> total(groups, 0);
    std::vector<std::uint32_t> open(groups, 0);
    struct Frame {
        NodeId v;
        std::uint64_t next;
    };
    std::vector<Frame> stack;
    std::uint32_t member_of[2];
    auto enter = [&](NodeId v) {
        for (int i = 0, n = groups_of(v, member_of); i < n; ++i)
            if (open[member_of[i]]++ == 0) total[member_of[i]] += tree.retained_bytes[v];
        stack.push_back({v, children.begin(v)});
    };
    for (NodeId top : retained.top) {
        enter(top);
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.next == children.begin(f.v + 1)) {
                for (int i = 0, n = groups_of(f.v, member_of); i < n; ++i) --open[member_of[i]];
                stack.pop_back();
                continue;
            }
            enter(children.targets[f.next++]);
        }
    }
    return total;
}

}  // namespace

std::vector<NodeId> top_dominators(const Retained& retained, std::size_t limit) {
    const DominatorTree& tree = retained.tree;
    std::vector<NodeId> top = retained.top;
    std::sort(top.begin(), top.end(), [&](NodeId a, NodeId b) {
        if (tree.retained_bytes[a] != tree.retained_bytes[b]) return tree.retained_bytes[a] > tree.retained_bytes[b];
        return a < b;
    });
    if (top.size() > limit) top.resize(limit);
    return top;
}

// MAT's set for a class row: the class object and the class's instances. A class object is
// also an instance of java.lang.Class, so it belongs to two rows.
std::vector<std::uint64_t> retained_bytes_by_class(const HeapGraph& graph, const Retained& retained) {
    std::vector<std::uint32_t> described(graph.node_count(), kNoGroup);
    for (std::uint32_t c = 0; c < graph.classes.size(); ++c)
        if (graph.classes[c].node != kNoNode) described[graph.classes[c].node] = c;
    return retained_by_group(retained, graph.classes.size(), [&](NodeId v, std::uint32_t* out) {
        out[0] = graph.class_index[v];
        if (described[v] == kNoGroup || described[v] == out[0]) return 1;
        out[1] = described[v];
        return 2;
    });
}

std::vector<LoaderRow> class_loader_table(const HeapGraph& graph, const Retained& retained) {
    // Group index per loader: the loader object, its classes and their instances.
    std::vector<NodeId> loaders;
    for (const ClassInfo& c : graph.classes)
        if (c.node != kNoNode) loaders.push_back(c.loader);
    std::sort(loaders.begin(), loaders.end());
    loaders.erase(std::unique(loaders.begin(), loaders.end()), loaders.end());
    auto loader_group = [&](NodeId loader) {
        return static_cast<std::uint32_t>(std::lower_bound(loaders.begin(), loaders.end(), loader) - loaders.begin());
    };
    std::vector<std::uint32_t> group(graph.node_count(), kNoGroup);
    std::vector<LoaderRow> rows(loaders.size());
    for (std::size_t i = 0; i < loaders.size(); ++i) rows[i].loader = loaders[i];
    for (const ClassInfo& c : graph.classes)
        if (c.node != kNoNode) ++rows[loader_group(c.loader)].classes;
    std::vector<std::uint32_t> class_group(graph.classes.size(), kNoGroup);
    for (std::uint32_t i = 0; i < graph.classes.size(); ++i)
        if (graph.classes[i].node != kNoNode) {
            class_group[i] = loader_group(graph.classes[i].loader);
            group[graph.classes[i].node] = class_group[i];
        }
    for (NodeId v = 0; v < graph.node_count(); ++v)
        if (graph.kind[v] != NodeKind::class_object && group[v] == kNoGroup)
            group[v] = class_group[graph.class_index[v]];
    for (std::size_t i = 0; i < loaders.size(); ++i)
        if (loaders[i] != kNoNode) group[loaders[i]] = static_cast<std::uint32_t>(i);  // the loader itself
    auto totals = retained_by_group(retained, loaders.size(), [&](NodeId v, std::uint32_t* out) {
        out[0] = group[v];
        return group[v] == kNoGroup ? 0 : 1;
    });
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].retained_bytes = totals[i];
    std::sort(rows.begin(), rows.end(), [](const LoaderRow& a, const LoaderRow& b) {
        if (a.retained_bytes != b.retained_bytes) return a.retained_bytes > b.retained_bytes;
        return a.loader < b.loader;
    });
    return rows;
}

}  // namespace heapgraph::graph
