// Holders and their signatures, the units `heapgraph diff` matches across dumps (docs/diff.md):
//   1. walk the dominator tree from the super root's children, into every child that retains
//      at least min_percent of the reachable heap, to max_depth levels (a child never retains
//      more than its parent, so the walk stops where the sizes do);
//   2. keep the max_holders largest (retained desc, depth, node id: a parent sorts before its
//      children, so the kept set is closed upwards);
//   3. name each by its shortest path from the GC roots (the PathTree built for the leak
//      suspects), cut at the last class object on it: a class is named the same in every dump
//      of the program, while the path above it (loader, class list) is not. Steps are class
//      names joined by the edge: a field name, "[]" from an array, "?" when it cannot be told.
//      The CLI reads the fields of the holders' paths back from the dump first (the
//      pipeline's name_edges), so "?" is rare.
// Addresses change from dump to dump; signatures stay while the program's structure does.
#include <algorithm>

#include "holders.h"
#include "slot_name.h"

namespace heapgraph::graph {

namespace {

// Steps of a holder's path kept after its anchor (the rest are one "(N steps)" step).
constexpr std::size_t kHolderTailSteps = 15;

class HolderNamer {
public:
    HolderNamer(const HeapGraph& g, const PathTree& paths, const FieldNames& names) : g_(g), paths_(paths), names_(names) {
        for (std::uint32_t i = 0; i < g.classes.size(); ++i)
            if (g.classes[i].node != kNoNode) described_.push_back({g.classes[i].node, i});
        std::sort(described_.begin(), described_.end());
        for (const GcRoot& r : g.roots)
            if (r.global) root_kind_.push_back({r.node, r.kind});
        std::stable_sort(root_kind_.begin(), root_kind_.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    }

    void name(Holder& h) const {
        std::vector<NodeId> path = path_from_root(paths_, h.node);
        std::size_t anchor = 0;
        for (std::size_t i = path.size(); i-- > 0;)
            if (g_.types.kind(path[i]) == NodeKind::class_object) {
                anchor = i;
                break;
            }
        h.path.push_back({node_class_name(g_, path[anchor]), std::string()});
        // A long chain below the anchor keeps its last steps, the ones that tell holders apart;
        // the steps left out are one step that says how many (signatures stay bounded).
        std::size_t first = anchor + 1;
        if (path.size() - first > kHolderTailSteps) {
            first = path.size() - kHolderTailSteps;
            // Appended, not "(" + to_string(...): GCC 12 warns falsely on that form (-Wrestrict, its bug 105329).
            std::string steps = "(";
            steps.append(std::to_string(first - anchor - 1)).append(" steps)");
            h.path.push_back({std::move(steps), "..."});
        }
        for (std::size_t i = first; i < path.size(); ++i) h.path.push_back({node_class_name(g_, path[i]), via(path[i])});
        if (g_.types.kind(path[anchor]) != NodeKind::class_object) h.anchor_kind = root_kind(path[anchor]);
        h.signature = holder_signature(h.path, h.anchor_kind);
    }

private:
    std::string root_kind(NodeId v) const {
        auto it = std::lower_bound(root_kind_.begin(), root_kind_.end(), std::pair<NodeId, std::uint8_t>{v, 0},
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
        if (it == root_kind_.end() || it->first != v) return paths_.weak.test(v) ? "unreachable" : "root";
        return g_.root_kind_names[it->second];
    }

    std::uint32_t own_class(NodeId v) const {
        auto it = std::lower_bound(described_.begin(), described_.end(), std::pair<NodeId, std::uint32_t>{v, 0});
        return it != described_.end() && it->first == v ? it->second : g_.types.class_index(v);
    }

    // edge_name, with the class-object lookup kept across calls. Array slots stay "[]": an
    // element's index changes from dump to dump (a list that grows, a map that rehashes).
    std::string via(NodeId v) const {
        NodeId from = paths_.parent[v];
        if (g_.types.kind(from) == NodeKind::object_array) return "[]";
        std::string name = slot_name(g_, names_, from, own_class(from), paths_.slot[v]);
        return name.empty() ? "?" : name;
    }

    const HeapGraph& g_;
    const PathTree& paths_;
    const FieldNames& names_;
    std::vector<std::pair<NodeId, std::uint32_t>> described_;
    std::vector<std::pair<NodeId, std::uint8_t>> root_kind_;
};

// The `max_holders` largest (retained desc, then depth, then node id: a parent sorts before
// its children, so the kept set is closed upwards), parents renumbered to the new order.
std::vector<Holder> biggest_holders(std::vector<Holder> found, std::size_t max_holders) {
    std::vector<std::uint32_t> order(found.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const Holder &x = found[a], &y = found[b];
        if (x.retained_bytes != y.retained_bytes) return x.retained_bytes > y.retained_bytes;
        if (x.depth != y.depth) return x.depth < y.depth;
        return x.node < y.node;
    });
    if (order.size() > max_holders) order.resize(max_holders);
    std::vector<std::uint32_t> renumbered(found.size(), kNoHolder);
    for (std::uint32_t i = 0; i < order.size(); ++i) renumbered[order[i]] = i;
    std::vector<Holder> out;
    out.reserve(order.size());
    for (std::uint32_t i : order) {
        Holder h = std::move(found[i]);
        h.parent = h.parent == kNoHolder ? kNoHolder : renumbered[h.parent];
        out.push_back(std::move(h));
    }
    return out;
}

}  // namespace

std::string holder_signature(std::span<const HolderStep> path, const std::string& anchor_kind) {
    std::string out;
    for (std::size_t i = 0; i < path.size(); ++i) {
        if (i) out += " -" + path[i].via + "-> ";
        out += path[i].class_name;
        if (i == 0 && !anchor_kind.empty()) out += " [" + anchor_kind + "]";
    }
    return out;
}

std::vector<Holder> select_holders(const Retained& retained, const HolderOptions& options) {
    const auto& bytes = retained.tree.retained_bytes;
    const std::uint64_t min_bytes = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(options.min_percent * static_cast<double>(retained.tree.super_root_retained_bytes) / 100));
    std::vector<Holder> found;
    struct Visit {
        NodeId node;
        std::uint32_t parent, depth;
    };
    std::vector<Visit> stack;
    for (NodeId v : retained.top)
        if (bytes[v] >= min_bytes) stack.push_back({v, kNoHolder, 1});
    while (!stack.empty()) {
        Visit visit = stack.back();
        stack.pop_back();
        Holder h;
        h.node = visit.node, h.parent = visit.parent, h.depth = visit.depth;
        h.retained_bytes = bytes[visit.node];
        h.retained_objects = retained.tree.retained_objects[visit.node];
        found.push_back(std::move(h));
        if (visit.depth >= options.max_depth) continue;
        for (NodeId c : retained.children.of(visit.node))
            if (bytes[c] >= min_bytes) stack.push_back({c, static_cast<std::uint32_t>(found.size() - 1), visit.depth + 1});
    }
    return biggest_holders(std::move(found), options.max_holders);
}

std::vector<NodeId> holder_path_tails(const PathTree& paths, std::span<const Holder> holders) {
    std::vector<NodeId> tails;
    for (const Holder& h : holders) {
        std::vector<NodeId> path = path_from_root(paths, h.node);
        std::size_t keep = std::min(path.size(), kHolderTailSteps + 1);
        tails.insert(tails.end(), path.end() - static_cast<std::ptrdiff_t>(keep), path.end());
    }
    return tails;
}

void name_holders(const HeapGraph& graph, const PathTree& paths, const FieldNames& names, std::vector<Holder>& holders) {
    HolderNamer namer(graph, paths, names);
    for (Holder& h : holders) namer.name(h);
}

std::vector<Holder> find_holders(const HeapGraph& graph, const Retained& retained, const PathTree& paths,
                                 const FieldNames& names, const HolderOptions& options) {
    std::vector<Holder> holders = select_holders(retained, options);
    name_holders(graph, paths, names, holders);
    return holders;
}

}  // namespace heapgraph::graph
