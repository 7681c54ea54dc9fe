// Dominator tree and retained sizes. Semi-NCA, as in Georgiadis, Tarjan and Werneck,
// "Finding dominators in practice" (2006), and Perfetto's dominator_tree.cc:
//   1. DFS from the super root (children: the roots, ascending) numbers the reached nodes in
//      preorder; `parent` is the DFS tree parent, in DFS numbers.
//   2. Semidominators, in reverse preorder: semi(w) = min over predecessors v of
//      semi(eval(v)), where eval walks v's linked ancestors with path compression (explicit
//      stack, no recursion); then w is linked to its DFS parent.
//   3. Immediate dominators in preorder: idom(w) starts at parent(w) and climbs the
//      dominator tree until its number is at most semi(w) (the nearest common ancestor step).
//   4. Retained sizes and counts summed up the tree in reverse preorder.
// All arrays are indexed by DFS number (DfsIndex) except the inputs and outputs (NodeId).
#include <algorithm>
#include <chrono>
#include <memory>

#include <oneapi/tbb/task_group.h>

#include "dominators.h"

namespace heapgraph::graph {

namespace {

using DfsIndex = std::uint32_t;
constexpr DfsIndex kNone = 0xFFFFFFFFu;
// How many nodes ahead the search asks for the referrer row it will read.
constexpr DfsIndex kAhead = 16;

struct Numbering {
    Column<DfsIndex> number;  // by node; kNone when not reached
    Column<NodeId> vertex;    // by DFS number; vertex[0] is the super root (kSuperRoot)
    Column<DfsIndex> parent;  // by DFS number
};

// Step 1: preorder DFS with an explicit stack of (node, next edge) frames.
Numbering number_nodes(const Csr& out, std::span<const NodeId> roots, std::uint32_t nodes, const Progress& progress) {
    Ticker tick(progress, 4 * std::uint64_t{nodes});
    Numbering n;
    n.number.assign(nodes, kNone);
    n.vertex.push_back(kSuperRoot);
    n.parent.push_back(kNone);
    struct Frame {
        DfsIndex at;
        std::uint64_t next, end;
    };
    std::vector<Frame> stack;
    auto visit = [&](NodeId v, DfsIndex parent) {
        DfsIndex number = static_cast<DfsIndex>(n.vertex.size());
        n.number[v] = number;
        n.vertex.push_back(v);
        n.parent.push_back(parent);
        tick.step();
        stack.push_back({number, out.begin(v), out.begin(v + 1)});
    };
    for (NodeId root : roots) {
        if (n.number[root] != kNone) continue;
        visit(root, 0);
        while (!stack.empty()) {
            Frame& top = stack.back();
            if (top.next == top.end) {
                stack.pop_back();
                continue;
            }
            NodeId w = out.targets[top.next++];
            if (n.number[w] == kNone) visit(w, top.at);
        }
    }
    return n;
}

// Step 2. Each forest slot holds its compressed ancestor and the smallest semidominator on
// the path to it (Semi-NCA needs the value only, not the vertex that has it), so eval reads
// slots alone: one random access a step, not three.
struct Slot {
    DfsIndex ancestor, best;
};

class LinkEval {
public:
    explicit LinkEval(std::size_t size) : semi_(size) { slots_.assign(size, Slot{kNone, kNone}); }

    void set_semi(DfsIndex w, DfsIndex semi) { semi_[w] = semi; }
    void link(DfsIndex parent, DfsIndex w) { slots_[w] = {parent, semi_[w]}; }

    // The smallest semi on linked v's compressed path to its forest root (the root excluded).
    DfsIndex eval(DfsIndex v) {
        if (slots_[slots_[v].ancestor].ancestor != kNone) compress(v);
        return slots_[v].best;
    }

    Column<DfsIndex> take_semi() {
        slots_ = {};
        return std::move(semi_);
    }

private:
    void compress(DfsIndex v) {
        path_.clear();
        for (DfsIndex x = v; slots_[slots_[x].ancestor].ancestor != kNone; x = slots_[x].ancestor) path_.push_back(x);
        for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
            Slot& x = slots_[*it];
            const Slot& a = slots_[x.ancestor];
            x.best = std::min(x.best, a.best);
            x.ancestor = a.ancestor;
        }
    }

    Column<Slot> slots_;
    Column<DfsIndex> semi_;
    std::vector<DfsIndex> path_;
};

// `evaluated` counts the reached nodes that needed a search: roots and shared objects.
Column<DfsIndex> semidominators(const Numbering& n, const Csr& in, std::span<const NodeId> roots,
                                     std::uint64_t& evaluated, const Progress& progress) {
    const std::size_t size = n.vertex.size();
    Ticker tick(progress, 4 * n.number.size(), n.number.size());
    // The roots' DFS numbers, ascending, met from the top as w descends (roots are few: this
    // beats a flag per node).
    std::vector<DfsIndex> root_numbers;
    for (NodeId r : roots)
        if (n.number[r] != kNone) root_numbers.push_back(n.number[r]);
    std::sort(root_numbers.begin(), root_numbers.end());
    auto is_root = [&](DfsIndex w) {
        while (!root_numbers.empty() && root_numbers.back() > w) root_numbers.pop_back();
        return !root_numbers.empty() && root_numbers.back() == w;
    };
    LinkEval forest(size);
    for (DfsIndex w = static_cast<DfsIndex>(size) - 1; w >= 1; --w) {
        NodeId node = n.vertex[w];
        // The referrer rows' offsets are read at random: ask for them a few nodes ahead.
        if (w > kAhead) in.prefetch(n.vertex[w - kAhead]);
        // An object with one referrer has no row: its referrer is its DFS parent and its
        // semidominator (and, in step 3, its immediate dominator) without a search.
        std::span<const NodeId> preds = in.of(node);
        const bool root = is_root(w);
        DfsIndex semi = root ? 0 : preds.empty() ? n.parent[w] : w;  // 0: the super root's edge
        evaluated += root || !preds.empty();
        for (NodeId pred : preds) {
            DfsIndex v = n.number[pred];
            if (v == kNone) continue;  // an unreached referrer does not dominate anything
            semi = std::min(semi, v <= w ? v : forest.eval(v));  // v == w: a self-reference
        }
        forest.set_semi(w, semi);
        forest.link(n.parent[w], w);
        tick.step();
    }
    return forest.take_semi();
}

// Step 3, in place: semi[w] becomes idom[w]. Nodes are done in preorder, so idom[d] for
// every d < w is final when w needs it.
void immediate_dominators(const Column<DfsIndex>& parent, Column<DfsIndex>& semi_then_idom, std::size_t nodes,
                          const Progress& progress) {
    Column<DfsIndex>& idom = semi_then_idom;
    Ticker tick(progress, 4 * nodes, 2 * nodes);
    idom[0] = 0;
    for (DfsIndex w = 1; w < idom.size(); ++w) {
        DfsIndex d = parent[w];
        while (d > idom[w]) d = idom[d];
        idom[w] = d;
        tick.step();
    }
}

// Step 4: sums in reverse preorder straight into the node-indexed outputs (no temporaries
// by DFS number: this is what keeps the peak near 50 bytes a node with the CSR).
DominatorTree fill_tree(Numbering& n, const Column<DfsIndex>& idom, std::span<const std::uint64_t> shallow,
                        std::size_t nodes, const Progress& progress) {
    Ticker tick(progress, 4 * nodes, 3 * nodes);
    DominatorTree tree;
    tree.idom.assign(nodes, kUnreached);
    tree.retained_bytes.assign(nodes, 0);
    tree.retained_objects.assign(nodes, 0);
    for (DfsIndex w = static_cast<DfsIndex>(n.vertex.size()) - 1; w >= 1; --w) {
        NodeId v = n.vertex[w];
        tick.step();
        tree.retained_bytes[v] += shallow[v];
        tree.retained_objects[v] += 1;
        if (idom[w] == 0) {
            tree.idom[v] = kSuperRoot;
            tree.super_root_retained_bytes += tree.retained_bytes[v];
            continue;
        }
        NodeId up = n.vertex[idom[w]];
        tree.idom[v] = up;
        tree.retained_bytes[up] += tree.retained_bytes[v];
        tree.retained_objects[up] += tree.retained_objects[v];
    }
    tick.finish();
    std::copy(n.vertex.begin() + 1, n.vertex.end(), n.vertex.begin());  // the super root goes
    n.vertex.pop_back();
    tree.preorder = std::move(n.vertex);
    return tree;
}

}  // namespace

namespace {

// `release(csr)` is called on each CSR once the algorithm no longer reads it.
template <typename Release>
DominatorTree dominators(const Csr& out, const Csr& in, std::span<const NodeId> roots,
                         std::span<const std::uint64_t> shallow, const Progress& progress,
                         const std::function<void()>& beside, Release release) {
    const std::uint32_t nodes = static_cast<std::uint32_t>(out.rows());
    using Clock = std::chrono::steady_clock;
    auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    Numbering n;
    double numbering_seconds = 0;
    // The walks beside need the out rows, as the numbering does. While every column has fit in
    // memory they also run beside the search, and the rows go once both are done (the 2 GB
    // BigHeap dump: 1.4 s less, 280 MB more at the peak); once columns have gone to files,
    // memory is short and the rows go before the search.
    const bool beside_search = storage_use().file_columns == 0;
    tbb::task_group walks;
    walks.run([&] { if (beside) beside(); });
    const auto numbering_started = Clock::now();
    n = number_nodes(out, roots, nodes, progress);
    numbering_seconds = seconds_since(numbering_started);
    auto release_out = [&] {
        walks.wait();
        release(out);
    };
    if (!beside_search) release_out();
    const auto search_started = Clock::now();
    std::uint64_t condensed = 0;
    Column<DfsIndex> idom = semidominators(n, in, roots, condensed, progress);
    if (beside_search) release_out();
    release(in);
    n.number = {};
    immediate_dominators(n.parent, idom, nodes, progress);
    n.parent = {};
    DominatorTree tree = fill_tree(n, idom, shallow, nodes, progress);
    tree.condensed_nodes = condensed;
    tree.numbering_seconds = numbering_seconds;
    tree.search_seconds = seconds_since(search_started);
    return tree;
}

}  // namespace

DominatorTree compute_dominators(const Csr& out, const Csr& in, std::span<const NodeId> roots,
                                 std::span<const std::uint64_t> shallow, const Progress& progress,
                                 const std::function<void()>& beside) {
    return dominators(out, in, roots, shallow, progress, beside, [](const Csr&) {});
}

DominatorTree compute_dominators_releasing(Csr& out, Csr& in, std::span<const NodeId> roots,
                                           std::span<const std::uint64_t> shallow, const Progress& progress,
                                           const std::function<void()>& beside) {
    // Returning gigabytes to the OS takes a while; a task does it while this thread goes on
    // (the dominator step uses one core), and the step waits for it before returning.
    tbb::task_group freeing;
    DominatorTree tree = dominators(out, in, roots, shallow, progress, beside, [&](const Csr& csr) {
        Csr& owned = &csr == &out ? out : in;
        freeing.run([dead = std::make_shared<Csr>(std::move(owned))] { *dead = Csr{}; });
        owned = Csr{};
    });
    freeing.wait();
    return tree;
}

}  // namespace heapgraph::graph
