// Retained sizes over the heap graph: which roots the super root gets, the MAT rule for
// keeping unreachable objects, and retained sizes of sets (classes, class loaders).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>

#include <algorithm>
#include <utility>

#include "graph.h"

namespace heapgraph::graph {

namespace {

// Eclipse MAT's GarbageCleaner.markUnreachableAsGCRoots, step by step (docs/dominators.md):
//   1. inbound[v]: edges into v from unreachable objects other than v (saturating at 255);
//   2. every unreachable object with no such edge becomes a root; mark what it reaches;
//   3. ten passes over what is still unmarked, in ascending node order, with outbound[v] the
//      edges from v to other unmarked objects (saturating): pass 0 takes an object in a
//      two-cycle with no other entry; passes 1..8 take objects with outbound > 0, inbound > 1
//      and outbound - inbound >= 8 - pass; pass 9 any object with outbound > 0. Each chosen
//      root is marked from at once, so later candidates see it.
class UnreachableRoots {
public:
    UnreachableRoots(const HeapGraph& graph, const NodeBits& reachable)
        : graph_(graph), reachable_(reachable), marked_(reachable), inbound_(graph.node_count(), 0),
          outbound_(graph.node_count(), 0) {}

    std::vector<NodeId> choose() {
        const NodeId n = graph_.node_count();
        for (NodeId v = 0; v < n; ++v)
            if (!reachable_.test(v))
                for (NodeId w : graph_.out.of(v))
                    if (w != v && inbound_[w] < 255) ++inbound_[w];
        for (NodeId v = 0; v < n; ++v)
            if (!reachable_.test(v) && inbound_[v] == 0) chosen_.push_back(v);
        for (NodeId v : chosen_) mark_from(v);
        for (int pass = 0; pass < 10; ++pass) run_pass(pass);
        return chosen_;
    }

private:
    void run_pass(int pass) {
        std::vector<NodeId> unmarked;
        for (NodeId v = 0; v < graph_.node_count(); ++v)
            if (!marked_.test(v)) unmarked.push_back(v);
        for (NodeId v : unmarked) {
            std::uint32_t count = 0;
            for (NodeId w : graph_.out.of(v)) count += w != v && !marked_.test(w);
            outbound_[v] = static_cast<std::uint8_t>(std::min<std::uint32_t>(count, 255));
        }
        for (NodeId v : unmarked)
            if (!marked_.test(v) && selected(v, pass)) {
                chosen_.push_back(v);
                mark_from(v);
            }
    }

    bool selected(NodeId v, int pass) const {
        if (pass == 0) {
            if (inbound_[v] != 1) return false;
            for (NodeId w : graph_.out.of(v)) {
                if (w == v || marked_.test(w) || inbound_[w] != 1) continue;
                for (NodeId back : graph_.out.of(w))
                    if (back == v) return true;
            }
            return false;
        }
        if (outbound_[v] == 0) return false;
        return pass == 9 || (inbound_[v] > 1 && outbound_[v] - inbound_[v] >= 8 - pass);
    }

    void mark_from(NodeId start) {
        std::vector<NodeId> stack{start};
        marked_.set(start);
        while (!stack.empty()) {
            NodeId x = stack.back();
            stack.pop_back();
            for (NodeId w : graph_.out.of(x))
                if (!marked_.test(w)) marked_.set(w), stack.push_back(w);
        }
    }

    const HeapGraph& graph_;
    const NodeBits& reachable_;
    NodeBits marked_;
    Column<std::uint8_t> inbound_, outbound_;
    std::vector<NodeId> chosen_;
};

// Each tree node's top-level dominator, as its position in r.top (which is in preorder):
// worked out in preorder, in place in the dominators by DFS number (a node's dominator comes
// before it), then handed over by node. The suspects count each suspect's classes by it in
// node order (graph/suspects.cpp); a walk of the suspects' subtrees read every column at
// random, a fault per node where the columns are in files. The hand-over by node goes in
// slices of the node ids in files (scatter_passes; at 512M 0.46 s against 0.70 s).
void top_positions(Retained& r) {
    Column<NodeId>& by_number = r.tree.idom_by_number;  // 0: the super root
    NodeId next = 0;
    for (std::size_t w = 1; w < by_number.size(); ++w) by_number[w] = by_number[w] == 0 ? next++ : by_number[by_number[w]];
    const std::size_t n = r.tree.idom.size();
    r.top_index = Column<NodeId>(n);
    const Column<NodeId>& preorder = r.tree.preorder;
    in_node_slices(n, scatter_passes(n * sizeof(NodeId), r.top_index.in_file()), [&](std::size_t first, std::size_t last) {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, preorder.size()), [&](const auto& range) {
            for (std::size_t i = range.begin(); i < range.end(); ++i)
                if (preorder[i] >= first && preorder[i] < last) r.top_index[preorder[i]] = by_number[i + 1];
        });
    });
}

// Child lists of the dominator tree, each in preorder (count, prefix sum, scatter), the
// preorder's two halves on a core each (0.75 s on one on the 2 GB BigHeap dump). The first
// half counts each parent's children at starts[parent + 1] and scatters through starts; the
// second counts them in `second`, which the prefix sum turns into its cursors: each begins
// where the first half's children of that parent end, so every list keeps the preorder's
// order, and each ends where its parent's row ends. A node has at most one parent, so the
// rows hold fewer targets than there are nodes: starts and cursors fit a NodeId. The scatter
// writes each child in its parent's row through the parent's cursor: in files, in slices of
// the parents' ids (scatter_passes), each a pass over the preorder (the 2 GB BigHeap dump at
// 512M: 2.0 s in 3 passes against 3.9 s in one, 0.6 s in memory). The count in slices
// gained nothing there (2.5 s against 2.2 s).
void make_children(Retained& r) {
    const std::size_t n = r.tree.idom.size(), half = r.tree.preorder.size() / 2;
    const Column<NodeId>& preorder = r.tree.preorder;
    Csr& c = r.children;
    Column<NodeId> starts(n + 1, 0);
    Column<NodeId> second(n, 0);
    std::vector<NodeId> second_top;
    // The parent of preorder[i], found near it in the preorder (by node id, the dominator
    // column is read at random: 0.1 s more on the 2 GB dump).
    const Column<NodeId>& by_number = r.tree.idom_by_number;
    auto parent = [&](std::size_t i) {
        const NodeId p = by_number[i + 1];
        return p == 0 ? kSuperRoot : preorder[p - 1];
    };
    auto count = [&](std::size_t first, std::size_t last, auto& counts, std::size_t shift, std::vector<NodeId>& top) {
        for (std::size_t i = first; i < last; ++i)
            if (const NodeId p = parent(i); p == kSuperRoot) top.push_back(preorder[i]);
            else ++counts[p + shift];
    };
    tbb::parallel_invoke([&] { count(0, half, starts, 1, r.top); },
                         [&] { count(half, preorder.size(), second, 0, second_top); });
    r.top.insert(r.top.end(), second_top.begin(), second_top.end());
    // Both halves' counts summed into row starts as every CSR's are (sum_degrees); a second
    // cursor then begins that many children before its parent's row ends.
    using Range = tbb::blocked_range<std::size_t>;
    tbb::parallel_for(Range(0, n), [&](const Range& range) {
        for (std::size_t u = range.begin(); u < range.end(); ++u) starts[u + 1] += second[u];
    });
    sum_degrees(starts);
    tbb::parallel_for(Range(0, n), [&](const Range& range) {
        for (std::size_t u = range.begin(); u < range.end(); ++u) second[u] = starts[u + 1] - second[u];
    });
    c.targets.resize(starts[n]);
    // Preorder positions [first, last), parents in [low, high).
    auto scatter = [&](std::size_t first, std::size_t last, auto& cursors, std::size_t low, std::size_t high) {
        for (std::size_t i = first; i < last; ++i)
            if (const NodeId p = parent(i); p != kSuperRoot && p >= low && p < high) c.targets[cursors[p]++] = preorder[i];
    };
    const bool in_file = starts.in_file() || second.in_file() || c.targets.in_file();
    in_node_slices(n, scatter_passes(n * 3 * sizeof(NodeId), in_file), [&](std::size_t low, std::size_t high) {
        tbb::parallel_invoke([&] { scatter(0, half, starts, low, high); },
                             [&] { scatter(half, preorder.size(), second, low, high); });
    });
    // Each second cursor ends its parent's row: the next parent's row starts there.
    tbb::parallel_for(Range(0, n), [&](const Range& range) {
        for (std::size_t u = range.begin(); u < range.end(); ++u) starts[u + 1] = second[u];
    });
    starts[0] = 0;
    second = {};  // done with (the stage is near its peak): the top positions take its room
    top_positions(r);
    r.tree.idom_by_number = {};
    c.set_starts(std::move(starts));
}

}  // namespace

namespace {

// The tree's nodes: those with an immediate dominator, a word of bits at a time side by side
// (setting each preorder node's bit, at random, took 0.1 s on one core on the 2 GB dump).
NodeBits in_tree_bits(const Column<NodeId>& idom) {
    NodeBits bits(idom.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bits.words()), [&](const auto& range) {
        for (std::size_t w = range.begin(); w != range.end(); ++w) {
            std::uint64_t word = 0;
            for (std::size_t v = w * 64, b = 0; b < 64 && v < idom.size(); ++v, ++b)
                word |= std::uint64_t{idom[v] != kUnreached} << b;
            bits.word(w) = word;
        }
    });
    return bits;
}

template <typename Dominators>
Retained retained_with(const HeapGraph& graph, const RetainedOptions& options, Dominators dominators) {
    Retained result;
    std::vector<NodeId> roots = graph.root_nodes;
    NodeBits walked;
    if (options.keep_unreachable) {
        result.unreachable_roots = UnreachableRoots(graph, reachable_of(graph, walked)).choose();
        roots.insert(roots.end(), result.unreachable_roots.begin(), result.unreachable_roots.end());
        std::sort(roots.begin(), roots.end());
    }
    result.tree = dominators(roots);
    result.in_tree = in_tree_bits(result.tree.idom);
    // From the global roots alone the step reached exactly what they reach.
    if (graph.reachable.words() == 0) result.reachable = options.keep_unreachable ? std::move(walked) : result.in_tree;
    make_children(result);
    // Nothing reads the preorder after the children and top positions: on the 2 GB BigHeap
    // dump 125 MB less through the suspects and the values stage, the run's peak.
    result.tree.preorder = {};
    return result;
}

}  // namespace

Retained compute_retained(const HeapGraph& graph, const RetainedOptions& options) {
    return retained_with(graph, options, [&](const std::vector<NodeId>& roots) {
        return compute_dominators(graph.out, graph.in, roots, graph.shallow_bytes, options.progress,
                                  options.beside);
    });
}

Retained compute_retained(HeapGraph& graph, const RetainedOptions& options) {
    if (!options.release_edges) return compute_retained(std::as_const(graph), options);
    return retained_with(graph, options, [&](const std::vector<NodeId>& roots) {
        return compute_dominators_releasing(graph.out, graph.in, roots, graph.shallow_bytes, options.progress,
                                            options.beside, options.before_release);
    });
}

}  // namespace heapgraph::graph
