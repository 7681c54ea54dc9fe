// Retained sizes over the heap graph: which roots the super root gets, the MAT rule for
// keeping unreachable objects, and retained sizes of sets (classes, class loaders).
#include <algorithm>

#include "graph.h"

namespace heapgraph::graph {

namespace {

// MAT's GarbageCleaner.markUnreachableAsGCRoots, first step: unreachable objects that no
// other unreachable object references. What those do not reach (unreachable cycles) gets,
// in ascending node order, the first node of each remaining piece as a root, until all are
// covered (MAT uses a heuristic over ten passes instead; docs/dominators.md).
std::vector<NodeId> unreachable_roots(const HeapGraph& graph) {
    const std::uint32_t n = graph.node_count();
    std::vector<NodeId> chosen;
    for (NodeId v = 0; v < n; ++v) {
        if (graph.reachable[v]) continue;
        bool referenced = false;
        for (NodeId from : graph.in.of(v)) referenced |= from != v && !graph.reachable[from];
        if (!referenced) chosen.push_back(v);
    }
    std::vector<std::uint8_t> covered = mark_reachable(graph.out, chosen);
    std::vector<NodeId> stack;
    for (NodeId v = 0; v < n; ++v) {
        if (graph.reachable[v] || covered[v]) continue;
        chosen.push_back(v);
        covered[v] = 1;
        stack.push_back(v);
        while (!stack.empty()) {
            NodeId x = stack.back();
            stack.pop_back();
            for (NodeId w : graph.out.of(x))
                if (!covered[w]) covered[w] = 1, stack.push_back(w);
        }
    }
    return chosen;
}

}  // namespace

Retained compute_retained(const HeapGraph& graph, const RetainedOptions& options) {
    Retained result;
    std::vector<NodeId> roots = graph.root_nodes;
    if (options.keep_unreachable) {
        result.unreachable_roots = unreachable_roots(graph);
        roots.insert(roots.end(), result.unreachable_roots.begin(), result.unreachable_roots.end());
        std::sort(roots.begin(), roots.end());
    }
    result.tree = compute_dominators(graph.out, graph.in, roots, graph.shallow_bytes);
    result.in_tree.assign(graph.node_count(), 0);
    for (NodeId v : result.tree.preorder) result.in_tree[v] = 1;
    return result;
}

std::uint64_t retained_bytes_of_set(const DominatorTree& tree, std::span<const std::uint8_t> member) {
    // A member counts when no other member lies above it in the tree; walking the preorder
    // with a stack of open subtrees finds them in one pass.
    std::uint64_t total = 0;
    std::vector<std::uint8_t> covered(member.size(), 0);
    for (NodeId v : tree.preorder) {
        NodeId up = tree.idom[v];
        bool inside = up != kSuperRoot && (covered[up] || member[up]);
        covered[v] = inside;
        if (member[v] && !inside) total += tree.retained_bytes[v];
    }
    return total;
}

}  // namespace heapgraph::graph
