// Retained sizes broken down by group (class, class loader): a group's retained size is that
// of all its members taken as one set, i.e. the sum over members that no other member
// dominates. One depth-first walk of the dominator tree counts, per group, how many members
// are open above the current node.
#include <algorithm>
#include <unordered_map>

#include "graph.h"
#include "node_bits.h"

namespace heapgraph::graph {

namespace {

constexpr std::uint32_t kNoGroup = 0xFFFFFFFFu;

// `groups_of(v, out)` writes up to three groups of node v into out and returns how many.
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
    std::uint32_t member_of[3];
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

// The sizes are read once, in node order, and the sort compares them in memory: a comparison
// that read the retained-bytes column would read it at random some 2 n log n times, a fault
// each when the column is in a file (the 8x replica at --memory-limit 2G was still in this
// sort after 10 minutes).
std::vector<NodeId> top_dominators(const Retained& retained, std::size_t limit) {
    struct Sized {
        std::uint64_t bytes;
        NodeId node;
    };
    std::vector<Sized> top;
    top.reserve(retained.top.size());
    for (NodeId v : retained.top) top.push_back({0, v});
    std::sort(top.begin(), top.end(), [](const Sized& a, const Sized& b) { return a.node < b.node; });
    for (Sized& t : top) t.bytes = retained.tree.retained_bytes[t.node];
    std::sort(top.begin(), top.end(), [](const Sized& a, const Sized& b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.node < b.node;
    });
    std::vector<NodeId> nodes;
    nodes.reserve(std::min(limit, top.size()));
    for (std::size_t i = 0; i < std::min(limit, top.size()); ++i) nodes.push_back(top[i].node);
    return nodes;
}

namespace {

// The groups of a node in both tables, class rows [0, classes) then loader rows after them.
// MAT's set for a class row: the class object and the class's instances (a class object is
// also an instance of java.lang.Class, so it belongs to two rows). A loader's set: the loader
// object, its classes and their instances. Most nodes are instances, whose groups follow
// from their class; class objects and loaders, few, are marked and looked up in maps, so
// no table of a group per node is made (4 bytes a node each, for the two tables).
class TableGroups {
public:
    TableGroups(const HeapGraph& g, bool loaders) : g_(g), special_(g.node_count()) {
        for (NodeId v = 0; v < g.node_count(); ++v)
            if (g.types.kind(v) == NodeKind::class_object) special_.set(v);
        for (std::uint32_t c = 0; c < g.classes.size(); ++c)
            if (g.classes[c].node != kNoNode) described_[g.classes[c].node] = c, special_.set(g.classes[c].node);
        if (loaders) group_loaders();
    }

    std::size_t groups() const { return g_.classes.size() + loaders_.size(); }
    const std::vector<NodeId>& loaders() const { return loaders_; }
    std::uint32_t loader_index(NodeId loader) const {  // of a loader that defined a class
        return static_cast<std::uint32_t>(std::lower_bound(loaders_.begin(), loaders_.end(), loader) - loaders_.begin());
    }

    int operator()(NodeId v, std::uint32_t* out) const {
        const std::uint32_t c = g_.types.class_index(v);
        out[0] = c;
        if (!special_.test(v)) {
            if (class_group_.empty() || class_group_[c] == kNoGroup) return 1;
            out[1] = class_group_[c];
            return 2;
        }
        int n = 1;
        const auto described = described_.find(v);
        if (described != described_.end() && described->second != c) out[n++] = described->second;
        if (class_group_.empty()) return n;
        std::uint32_t group = kNoGroup;
        if (g_.types.kind(v) != NodeKind::class_object) group = class_group_[c];
        else if (described != described_.end()) group = class_group_[described->second];
        if (const auto loader = loader_group_.find(v); loader != loader_group_.end()) group = loader->second;
        if (group != kNoGroup) out[n++] = group;
        return n;
    }

private:
    void group_loaders() {
        for (const ClassInfo& c : g_.classes)
            if (c.node != kNoNode) loaders_.push_back(c.loader);
        std::sort(loaders_.begin(), loaders_.end());
        loaders_.erase(std::unique(loaders_.begin(), loaders_.end()), loaders_.end());
        const auto first = static_cast<std::uint32_t>(g_.classes.size());
        class_group_.assign(g_.classes.size(), kNoGroup);
        for (std::uint32_t c = 0; c < g_.classes.size(); ++c)
            if (g_.classes[c].node != kNoNode) class_group_[c] = first + loader_index(g_.classes[c].loader);
        for (std::uint32_t i = 0; i < loaders_.size(); ++i) {
            if (loaders_[i] == kNoNode) continue;
            loader_group_[loaders_[i]] = first + i;
            special_.set(loaders_[i]);
        }
    }

    const HeapGraph& g_;
    NodeBits special_;                                       // class objects, described or not, and loaders
    std::unordered_map<NodeId, std::uint32_t> described_;    // class object -> the class it describes
    std::vector<NodeId> loaders_;                            // ascending; kNoNode: the bootstrap loader
    std::vector<std::uint32_t> class_group_;                 // class -> its loader's row (kNoGroup: none)
    std::unordered_map<NodeId, std::uint32_t> loader_group_;  // loader object -> its own row
};

}  // namespace

RetainedTables retained_tables(const HeapGraph& graph, const Retained& retained, bool loaders) {
    const TableGroups groups(graph, loaders);
    std::vector<std::uint64_t> totals = retained_by_group(retained, groups.groups(), groups);
    RetainedTables tables;
    const std::size_t classes = graph.classes.size();
    tables.by_class.assign(totals.begin(), totals.begin() + static_cast<std::ptrdiff_t>(classes));
    if (!loaders) return tables;
    for (std::size_t i = 0; i < groups.loaders().size(); ++i)
        tables.loaders.push_back({groups.loaders()[i], 0, totals[classes + i]});
    for (const ClassInfo& c : graph.classes)
        if (c.node != kNoNode) ++tables.loaders[groups.loader_index(c.loader)].classes;
    std::sort(tables.loaders.begin(), tables.loaders.end(), [](const LoaderRow& a, const LoaderRow& b) {
        if (a.retained_bytes != b.retained_bytes) return a.retained_bytes > b.retained_bytes;
        return a.loader < b.loader;
    });
    return tables;
}

std::vector<std::uint64_t> retained_bytes_by_class(const HeapGraph& graph, const Retained& retained) {
    return retained_tables(graph, retained, false).by_class;
}

}  // namespace heapgraph::graph
