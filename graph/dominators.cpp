// Dominator tree and retained sizes. Semi-NCA, as in Georgiadis, Tarjan and Werneck,
// "Finding dominators in practice" (2006), and Perfetto's dominator_tree.cc:
//   1. DFS from the super root (children: the roots, ascending) numbers the reached nodes in
//      preorder, keeping each node's number and its DFS parent's side by side.
//   2. Semidominators, in reverse preorder: semi(w) = min over predecessors v of
//      semi(eval(v)), where eval walks v's linked ancestors with path compression (explicit
//      stack, no recursion); then w is linked to its DFS parent. Only the roots and the
//      objects with two or more referrers are searched: an object with one referrer has
//      that referrer, its DFS parent, as semidominator and immediate dominator. Before the
//      search, the referrer rows are rewritten in parallel to what it reads of them: numbers.
//   3. Immediate dominators in preorder: idom(w) starts at parent(w) and climbs the
//      dominator tree until its number is at most semi(w) (the nearest common ancestor step).
//   4. Retained sizes and counts summed up the tree in reverse preorder, by DFS number.
// The work arrays are indexed by DFS number (DfsIndex), except the per-node records; the
// inputs and outputs by NodeId.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <memory>

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_group.h>

#include "dominators.h"
#include "huge_vector.h"
#include "node_bits.h"

namespace heapgraph::graph {

namespace {

using DfsIndex = NodeId;
constexpr DfsIndex kNone = kNoNode;

// Number 0 is the super root's, which no node has: a node's number 0 is a node not reached,
// so a fresh column of numbers needs no pass to say so.
constexpr DfsIndex kUnnumbered = 0;

// Each forest slot holds its compressed ancestor and the smallest semidominator on the path
// to it (Semi-NCA needs the value only, not the vertex that has it), so eval reads slots
// alone: one random access a step, not three.
struct Slot {
    DfsIndex ancestor, best;
};

struct Numbering {
    // By node: its DFS number, and where the columns are in files its DFS parent's after it.
    // In memory the number alone: a referrer's DFS parent, where the search needs it, is in
    // the forest (a referrer's slot mostly lies beside its parent's, which eval reads next);
    // 4 bytes a node less at the step's peak. In files, bytes cost disk and each random read
    // of a dropped page a fault: the parent beside the number spares the search the referrer's
    // slot (eval_start; --memory-limit 64M, 2 GB dump, one pair: step 229 s with it, 302 s
    // without).
    Column<DfsIndex> node;
    std::size_t stride = 1;  // 2: the parent kept
    bool keeps_parents() const { return stride == 2; }
    DfsIndex number(NodeId v) const { return node[v * stride]; }
    DfsIndex parent(NodeId v) const { return node[v * stride + 1]; }  // keeps_parents() only
    const DfsIndex* record(NodeId v) const { return &node[v * stride]; }
    std::size_t nodes() const { return node.size() / stride; }
    Column<NodeId> vertex;  // by DFS number; vertex[0] is the super root (kSuperRoot)
    // By DFS number: the search forest, each ancestor set to the DFS parent before the search
    // starts, so linking a node is a sequential write.
    Column<Slot> forest;
};

constexpr std::uint64_t kSiblingsAhead = 4;

// The numbering's columns at their full size, before the DFS. Their pages are faulted in
// by the DFS's own writes: faulting them in ahead on the other core delayed the walks there
// by 0.6-0.7 s and slowed the DFS beside it (docs/dominators.md, "Stop 55").
Numbering numbering_columns(NodeId nodes) {
    Numbering n;
    n.stride = fits_memory_budget(std::uint64_t{nodes} * sizeof(DfsIndex)) ? 1 : 2;
    n.node.resize(nodes * n.stride);           // zeros: not reached
    n.vertex.reserve(std::size_t{nodes} + 1);  // no regrowing copies
    n.forest.reserve(std::size_t{nodes} + 1);
    // A file's pages come in far faster by one sequential pass than by number_by_node's random
    // first writes (--memory-limit 64M, 2 GB dump: step 7.9 s with the pass, 11.5 s without).
    if (n.node.in_file()) std::fill(n.node.begin(), n.node.end(), kUnnumbered);
    return n;
}

// Step 1: preorder DFS with an explicit stack of (node, next edge) frames.
void number_nodes(const Csr& out, std::span<const NodeId> roots, NodeId nodes, Numbering& n,
                  const Progress& progress) {
    Ticker tick(progress, 4 * std::uint64_t{nodes});
    n.vertex.push_back(kSuperRoot);
    n.forest.push_back({kNone, kNone});
    NodeBits seen(nodes);  // every edge tests it: the bits, not the 8-byte records
    struct Frame {
        DfsIndex at;
        std::uint64_t next, end;
    };
    HugeVector<Frame> stack;  // as deep as the longest chain of single references
    auto visit = [&](NodeId v, DfsIndex parent) {
        DfsIndex number = static_cast<DfsIndex>(n.vertex.size());
        seen.set(v);
        n.vertex.push_back(v);
        n.forest.push_back({parent, kNone});
        tick.step();
        stack.push_back({number, out.begin(v), out.begin(v + 1)});
    };
    for (NodeId root : roots) {
        if (seen.test(root)) continue;
        visit(root, 0);
        while (!stack.empty()) {
            Frame& top = stack.back();
            if (top.next == top.end) {
                stack.pop_back();
                continue;
            }
            // A row's later targets are visited after the subtree of this one (most subtrees
            // are small): ask for their row offsets, and nearer ones for their rows.
            if (top.next + 2 * kSiblingsAhead < top.end) out.prefetch(out.targets[top.next + 2 * kSiblingsAhead]);
            if (top.next + kSiblingsAhead < top.end) {
                const NodeId later = out.targets[top.next + kSiblingsAhead];
                if (!seen.test(later)) __builtin_prefetch(out.targets.data() + out.begin(later));
            }
            NodeId w = out.targets[top.next++];
            if (!seen.test(w)) visit(w, top.at);
        }
    }
}

// The numbers (and parents) by node, from the preorder once the DFS is done: their random
// writes in parallel, and out of the DFS's way (2 GB BigHeap dump, three runs alternated:
// the step 4.32-4.82 s against 4.98-5.36 s with the writes in the DFS).
void number_by_node(Numbering& n) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(1, n.vertex.size()), [&](const auto& range) {
        for (std::size_t w = range.begin(); w != range.end(); ++w) {
            const std::size_t at = n.vertex[w] * n.stride;
            n.node[at] = static_cast<DfsIndex>(w);
            if (n.keeps_parents()) n.node[at + 1] = n.forest[w].ancestor;
        }
    });
}

// Step 2. The forest is linked in descending DFS numbers, so while w is searched a node is
// linked exactly when its number is above w: the test needs no read.
class LinkEval {
public:
    // `semi`: a block for the semidominators, one entry a number (its contents are stale).
    LinkEval(Column<Slot>&& forest, Column<DfsIndex>&& semi)
        : slots_(std::move(forest)), semi_(Column<DfsIndex>::reuse(std::move(semi), slots_.size())) {}

    DfsIndex parent(DfsIndex w) const { return slots_[w].ancestor; }  // before w is linked
    const Column<Slot>& slots() const { return slots_; }
    void link(DfsIndex w, DfsIndex semi) {
        semi_[w] = semi;
        slots_[w].best = semi;
    }

    // The smallest semi on linked v's compressed path to its forest root (the root excluded),
    // while w is searched.
    DfsIndex eval(DfsIndex v, DfsIndex w) {
        if (slots_[v].ancestor > w) compress(v, w);
        return slots_[v].best;
    }

    // The semidominators; the slots' block goes back to `slots` (fill_tree reuses its pages).
    Column<DfsIndex> take_semi(Column<Slot>& slots) {
        slots = std::move(slots_);
        return std::move(semi_);
    }

private:
    void compress(DfsIndex v, DfsIndex w) {
        path_.clear();
        for (DfsIndex x = v; slots_[x].ancestor > w; x = slots_[x].ancestor) path_.push_back(x);
        // The last node pushed has a linked ancestor whose own ancestor is the root.
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

// The nodes the search looks at: the roots and the objects with two or more referrers (a
// row in `in`). Every other reached node has one referrer, its DFS parent. By number (below),
// the search and step 3, which go through every number, skip the others without reading
// each number's vertex; the bits by node are made only to be turned into those.
NodeBits searched_by_node(const Csr& in, std::span<const NodeId> roots, NodeId nodes) {
    NodeBits by_node = nonempty_rows(in, nodes);
    for (NodeId r : roots) by_node.set(r);
    return by_node;
}

NodeBits searched_by_number(const NodeBits& by_node, const Column<NodeId>& vertex) {
    NodeBits by_number(vertex.size());
    // Number 0, the super root, is not searched.
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, by_number.words()), [&](const auto& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            std::uint64_t word = 0;
            for (std::size_t w = std::max<std::size_t>(i * 64, 1); w < std::min(vertex.size(), i * 64 + 64); ++w)
                word |= std::uint64_t{by_node.test(vertex[w])} << (w & 63);
            by_number.word(i) = word;
        }
    });
    return by_number;
}

// Reads ahead of the search. Each searched node costs a few dependent misses (its row's
// offset, the row, then a forest slot for each referrer numbered above it); asking for them
// over the next searched nodes in stages lets the misses of several nodes overlap.
class ReadAhead {
public:
    ReadAhead(const Numbering& n, const Csr& in, const NodeBits& searched, const Column<Slot>& slots)
        : n_(n), in_(in), searched_(searched), slots_(slots), next_(static_cast<DfsIndex>(n.vertex.size())) {
        while (queued_ < kDepth && scan()) {}
    }

    // Called as the search reaches searched node w (the next one queued).
    void reached(DfsIndex w) {
        if (queued_ == 0 || at(0) != w) return;
        head_ = (head_ + 1) % kDepth;
        --queued_;
        scan();
        if (queued_ > kRows) in_.prefetch(n_.vertex[at(kRows)]);
        if (queued_ > kTargets) {
            const auto row = in_.of(n_.vertex[at(kTargets)]);
            if (!row.empty()) __builtin_prefetch(row.data());
        }
        if (queued_ > kSlots) {
            const DfsIndex x = at(kSlots);
            const auto row = in_.of(n_.vertex[x]);
            for (std::size_t i = 0; i < std::min(row.size(), kSomePreds); ++i) prefetch_slot(row[i], x);
        }
    }

    // Within a long row, past what reached() asked for: slots kSomePreds ahead.
    void within_row(std::span<const DfsIndex> row, std::size_t i, DfsIndex w) const {
        if (i + kSomePreds < row.size()) prefetch_slot(row[i + kSomePreds], w);
    }

private:
    static constexpr std::size_t kDepth = 16, kRows = 15, kTargets = 8, kSlots = 3;
    // How many of a row's referrers reached() asks for; within_row() asks for the rest.
    static constexpr std::size_t kSomePreds = 16;

    void prefetch_slot(DfsIndex v, DfsIndex w) const {
        if (v > w) __builtin_prefetch(&slots_[v]);  // else below w, or 0: the row's end
    }
    DfsIndex at(std::size_t i) const { return queue_[(head_ + i) % kDepth]; }
    bool scan() {
        while (next_ > 1) {
            --next_;
            if (!searched_.test(next_)) continue;
            queue_[(head_ + queued_++) % kDepth] = next_;
            return true;
        }
        return false;
    }
    const Numbering& n_;
    const Csr& in_;
    const NodeBits& searched_;
    const Column<Slot>& slots_;
    DfsIndex next_;
    std::array<DfsIndex, kDepth> queue_{};
    std::size_t head_ = 0, queued_ = 0;
};

// What referrer `pred`, numbered v above w, gives w's search: where its eval may start. When
// the records hold parents and v is not searched, v's one referrer, its DFS parent p (a node,
// not the super root: roots are searched), is its semidominator: eval(v) is p when p is at
// most w (p is then v's forest root, not counted), else eval(p) (which is below p: eval(p) <=
// semi(p) < p). That spares the search v's slot, a random read in a file. In memory the same
// step through the forest's slots cost more here than the search's evals saved (2 GB BigHeap
// dump, three runs alternated: the step less its numbering 3.53-3.97 s with up to 4 such steps,
// 2.57-2.87 s with none; before the rows were rewritten 3.05-3.55 s).
DfsIndex eval_start(const Numbering& n, const NodeBits& searched, NodeId pred, DfsIndex v) {
    return n.keeps_parents() && !searched.test(v) ? n.parent(pred) : v;
}

// How far ahead numbered_rows() asks for referrers' records: its rows lie one after another.
constexpr std::size_t kRecordsAhead = 32;

// One row of numbered_rows(): written from its front while read, never past what is read.
// `end`: the end of the rows this thread rewrites; it reads ahead no further.
void number_row(const Numbering& n, const NodeBits& searched, DfsIndex w, NodeId* row, std::size_t size,
                const NodeId* end) {
    DfsIndex below = w;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size; ++i) {
        if (end - (row + i) > std::ptrdiff_t{kRecordsAhead}) __builtin_prefetch(n.record(row[i + kRecordsAhead]));
        const NodeId pred = row[i];
        DfsIndex v = n.number(pred);
        if (v == kUnnumbered) continue;  // an unreached referrer does not dominate anything
        if (v > w) v = eval_start(n, searched, pred, v);
        if (v > w)
            row[kept++] = v;
        else
            below = std::min(below, v);  // v == w: a self-reference
    }
    if (below < w) row[kept++] = below;  // room: the referrer it came from was not kept
    std::fill(row + kept, row + size, kUnnumbered);  // no node id is left for ReadAhead to take
}

// Before the search, in parallel, each searched object w's referrer row becomes in place what
// the search needs of it: the numbers above w to eval (eval_start), then the smallest number
// below w if there is one, then 0s to the row's end; the unreached are left out. In the
// search each read of a referrer's number waited on the row before it; here they overlap,
// asked for ahead (2 GB BigHeap dump, the step less its numbering, three runs alternated:
// 2.76-3.30 s against 3.56-3.89 s). The roots' rows are not read.
void numbered_rows(Csr& in, const Numbering& n, const NodeBits& searched, std::span<const NodeId> roots) {
    const std::size_t words = (in.rows() + 63) / 64;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, words), [&](const auto& range) {
        auto root = std::lower_bound(roots.begin(), roots.end(), static_cast<NodeId>(range.begin() * 64));
        const auto end = static_cast<NodeId>(std::min<std::size_t>(range.end() * 64, in.rows()));
        const NodeId* rows_end = in.targets.data() + in.begin(end);
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            for (std::uint64_t word = in.nonempty_word(i); word != 0; word &= word - 1) {
                const NodeId u = static_cast<NodeId>(i * 64 + static_cast<std::size_t>(std::countr_zero(word)));
                const DfsIndex w = n.number(u);
                while (root != roots.end() && *root < u) ++root;
                if (w == kUnnumbered || (root != roots.end() && *root == u)) continue;
                const std::uint64_t begin = in.begin(u);
                number_row(n, searched, w, in.targets.data() + begin, in.begin(u + 1) - begin, rows_end);
            }
        }
    });
}

// Where the search keeps its semidominators (then step 3 the immediate dominators, by
// number). In memory the numbers by node are done with once the rows are numbered: their
// block holds them, 125 MB less at the step's peak on the 2 GB BigHeap dump, and the
// immediate dominators by node get a block of their own after the search (unreached_idoms),
// once the referrer rows' block is free. In files the records hold the parents eval_start
// reads during the search: a block of its own.
Column<DfsIndex> semi_block(Numbering& n) {
    if (n.keeps_parents()) return {};
    return std::move(n.node);
}

// `parents` gets the DFS parent of each searched node, in the search's descending order:
// step 3 reads them back from the end instead of each node's record at random.
// `in`'s rows are as numbered_rows() leaves them.
Column<DfsIndex> semidominators(Numbering& n, const Csr& in, const NodeBits& searched, std::span<const NodeId> roots,
                                HugeVector<DfsIndex>& parents, const Progress& progress) {
    const std::size_t size = n.vertex.size();
    Ticker tick(progress, 4 * n.nodes(), n.nodes());
    // The roots' DFS numbers, ascending, met from the top as w descends (roots are few: this
    // beats a flag per node).
    std::vector<DfsIndex> root_numbers;
    for (NodeId r : roots)
        if (n.number(r) != kUnnumbered) root_numbers.push_back(n.number(r));
    std::sort(root_numbers.begin(), root_numbers.end());
    auto is_root = [&](DfsIndex w) {
        while (!root_numbers.empty() && root_numbers.back() > w) root_numbers.pop_back();
        return !root_numbers.empty() && root_numbers.back() == w;
    };
    parents.reserve(searched.count());
    LinkEval forest(std::move(n.forest), semi_block(n));
    ReadAhead ahead(n, in, searched, forest.slots());
    for (DfsIndex w = static_cast<DfsIndex>(size) - 1; w >= 1; --w) {
        tick.step();
        // An object with one referrer has no row: its referrer is its DFS parent and its
        // semidominator (and, in step 3, its immediate dominator) without a search. Roots
        // are searched, so is_root() is asked of searched nodes only.
        if (!searched.test(w)) {
            forest.link(w, forest.parent(w));
            continue;
        }
        const NodeId node = n.vertex[w];
        const bool root = is_root(w);
        parents.push_back(forest.parent(w));
        ahead.reached(w);
        DfsIndex semi = root ? 0 : w;  // 0: the super root's edge
        // No referrer can bring a semidominator below the super root's 0: a root's referrers
        // are not read at all, and a node's stop at the first that gives 0 (on the 2 GB BigHeap
        // dump half of the 59.5M referrers the search meets, 11.8M of them the roots').
        const std::span<const DfsIndex> row = root ? std::span<const DfsIndex>{} : in.of(node);
        for (std::size_t i = 0; i < row.size() && semi != 0; ++i) {
            const DfsIndex v = row[i];
            if (v == kUnnumbered) break;  // the row's end
            ahead.within_row(row, i, w);
            semi = std::min(semi, v < w ? v : forest.eval(v, w));
        }
        forest.link(w, semi);
    }
    return forest.take_semi(n.forest);
}

// Step 3, in place: semi[w] becomes idom[w]. Nodes are done in preorder, so idom[d] for
// every d < w is final when w needs it. A node the search skipped keeps its semidominator,
// its DFS parent, which is its immediate dominator; the searched ones are found a word of
// bits at a time.
void immediate_dominators(const NodeBits& searched, const HugeVector<DfsIndex>& parents,
                          Column<DfsIndex>& semi_then_idom, std::size_t nodes, const Progress& progress) {
    Column<DfsIndex>& idom = semi_then_idom;
    Ticker tick(progress, 4 * nodes, 2 * nodes);
    idom[0] = 0;
    auto parent = parents.rbegin();
    for (std::size_t i = 0; i < searched.words(); ++i) {
        for (std::uint64_t word = searched.word(i); word != 0; word &= word - 1) {
            const DfsIndex w = static_cast<DfsIndex>(i * 64 + static_cast<std::size_t>(std::countr_zero(word)));
            DfsIndex d = *parent++;
            while (d > idom[w]) d = idom[d];
            idom[w] = d;
        }
        tick.step(64);
    }
}

// The immediate dominators by node, the unreached marked; the hand-over writes the others.
// In files, the numbers' block (done with, its pages faulted in; a DFS number is a node id),
// its records packed to numbers first, in place and in order (a file's pages, read in
// sequence). In memory the search took that block (semi_block): a fresh one, whose zeros
// read as unnumbered. Then one parallel pass marks the unreached.
Column<NodeId> unreached_idoms(Numbering& n, std::size_t nodes) {
    Column<NodeId> idom;
    if (n.keeps_parents()) {
        idom = std::move(n.node);
        for (std::size_t v = 0; v < nodes; ++v) idom[v] = idom[v * n.stride];
    }
    idom.resize(nodes);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, idom.size()), [&](const auto& range) {
        for (std::size_t v = range.begin(); v != range.end(); ++v)
            if (idom[v] == kUnnumbered) idom[v] = kUnreached;
    });
    return idom;
}

// Step 4: sums in reverse preorder by DFS number, where a dominator's entry is mostly near
// its children's (a node-indexed sum jumps about the whole column at every step); the
// gather before and the hand-over to the node-indexed outputs after run in parallel.
DominatorTree fill_tree(Numbering& n, const Column<DfsIndex>& idom, const ShallowSizes& shallow,
                        std::size_t nodes, const Progress& progress) {
    Ticker tick(progress, 4 * nodes, 3 * nodes);
    const std::size_t reached = n.vertex.size();  // the super root is number 0
    // The search forest's pages hold the sums (a fresh column would fault each page in).
    auto bytes = Column<std::uint64_t>::reuse(std::move(n.forest), reached);
    if (reached) bytes[0] = 0;
    Column<NodeId> objects(reached);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(1, std::max<std::size_t>(reached, 1)), [&](const auto& range) {
        for (std::size_t w = range.begin(); w != range.end(); ++w) bytes[w] = shallow[n.vertex[w]], objects[w] = 1;
    });
    for (DfsIndex w = static_cast<DfsIndex>(reached) - 1; w >= 1; --w) {
        tick.step();
        bytes[idom[w]] += bytes[w];  // the super root's children add up in bytes[0]
        objects[idom[w]] += objects[w];
    }
    DominatorTree tree;
    tree.super_root_retained_bytes = reached ? bytes[0] : 0;
    tree.idom = unreached_idoms(n, nodes);
    tree.retained_bytes = ByteCounts(nodes, tree.super_root_retained_bytes);
    tree.retained_objects.assign(nodes, 0);
    // Each node's outputs at its node id, in DFS order, so all over the three outputs: in
    // files, in slices of the node ids (the 2 GB dump at 512M: the sums 4.2-4.8 s against
    // 6.4-8.2 s in one pass).
    const bool in_file = tree.idom.in_file() || tree.retained_bytes.in_file() || tree.retained_objects.in_file();
    const std::size_t passes = scatter_passes(nodes * (sizeof(NodeId) * 2 + tree.retained_bytes.width()), in_file);
    in_node_slices(nodes, passes, [&](std::size_t first, std::size_t last) {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(1, std::max<std::size_t>(reached, 1)), [&](const auto& range) {
            for (std::size_t w = range.begin(); w != range.end(); ++w) {
                const NodeId v = n.vertex[w];
                if (v < first || v >= last) continue;
                tree.idom[v] = idom[w] == 0 ? kSuperRoot : n.vertex[idom[w]];
                tree.retained_bytes.set(v, bytes[w]);
                tree.retained_objects[v] = objects[w];
            }
        });
    });
    tick.finish();
    std::copy(n.vertex.begin() + 1, n.vertex.end(), n.vertex.begin());  // the super root goes
    n.vertex.pop_back();
    tree.preorder = std::move(n.vertex);
    tree.reached = tree.preorder.size();
    return tree;
}

}  // namespace

namespace {

// `release(csr)` is called on each CSR once the algorithm no longer reads it; `before_rewrite`
// before the referrer rows are rewritten (numbered_rows).
template <typename Release>
DominatorTree dominators(const Csr& out, Csr& in, std::span<const NodeId> roots, const ShallowSizes& shallow,
                         const Progress& progress, const std::vector<std::function<void()>>& beside,
                         Release release, const std::function<void()>& before_rewrite) {
    const NodeId nodes = static_cast<NodeId>(out.rows());
    using Clock = std::chrono::steady_clock;
    auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    Numbering n = numbering_columns(nodes);
    // The walks beside need the out rows, as the numbering does. They also run beside the
    // search, and the rows go once both are done. With columns in files too since stop 55, as
    // the paths' queue no longer holds twice its nodes (the 8x replica at 4G: the stage 36-38 s
    // against 40.6 s, peak 5.34 GB against 5.48 GB). The cost lies at tiny budgets, where the
    // walks' working set now sits beside the search's: classic text from the 2 GB dump at 64M
    // peaks at 0.40-0.42x against 0.36-0.38x, 2 s sooner (docs/pipeline.md, "Stop 55").
    // Each walk is taken once, by the other thread as it comes free or by this one when it
    // needs the rows gone: the walks do not wait for a thread busy with the search.
    std::atomic<std::size_t> next_walk{0};
    auto run_walks = [&] {
        for (std::size_t i; (i = next_walk.fetch_add(1)) < beside.size();) beside[i]();
    };
    tbb::task_group walks;
    walks.run(run_walks);
    const auto numbering_started = Clock::now();
    number_nodes(out, roots, nodes, n, progress);
    number_by_node(n);
    const double numbering_seconds = seconds_since(numbering_started);
    const auto search_started = Clock::now();
    const NodeBits searched = searched_by_number(searched_by_node(in, roots, nodes), n.vertex);
    if (before_rewrite) before_rewrite();
    numbered_rows(in, n, searched, roots);
    const double rewrite_seconds = seconds_since(search_started);
    const auto semi_started = Clock::now();
    HugeVector<DfsIndex> parents;
    Column<DfsIndex> idom = semidominators(n, in, searched, roots, parents, progress);
    const double semi_seconds = seconds_since(semi_started);
    release(in);
    immediate_dominators(searched, parents, idom, nodes, progress);
    const std::uint64_t condensed = parents.size();
    // The walks may end after the search; the rows go before the sums make their outputs.
    const auto waiting_started = Clock::now();
    run_walks();
    walks.wait();
    const double waited_seconds = seconds_since(waiting_started);
    release(out);
    const auto sums_started = Clock::now();
    DominatorTree tree = fill_tree(n, idom, shallow, nodes, progress);
    tree.sums_seconds = seconds_since(sums_started);
    tree.rewrite_seconds = rewrite_seconds;
    tree.semi_seconds = semi_seconds;
    tree.idom_by_number = std::move(idom);
    tree.condensed_nodes = condensed;
    tree.numbering_seconds = numbering_seconds;
    tree.search_seconds = seconds_since(search_started) - waited_seconds;
    tree.waited_seconds = waited_seconds;
    return tree;
}

}  // namespace

DominatorTree compute_dominators(const Csr& out, const Csr& in, std::span<const NodeId> roots,
                                 const ShallowSizes& shallow, const Progress& progress,
                                 const std::vector<std::function<void()>>& beside) {
    Csr rows = in;  // the search rewrites its referrer rows
    return dominators(out, rows, roots, shallow, progress, beside, [&](const Csr& csr) {
        if (&csr == &rows) rows = Csr{};
    }, {});
}

DominatorTree compute_dominators_releasing(Csr& out, Csr& in, std::span<const NodeId> roots,
                                           const ShallowSizes& shallow, const Progress& progress,
                                           const std::vector<std::function<void()>>& beside,
                                           const std::function<void()>& before_release) {
    // Returning gigabytes to the OS takes a while; a task does it while this thread goes on
    // (the dominator step uses one core), and the step waits for it before returning.
    tbb::task_group freeing;
    DominatorTree tree = dominators(out, in, roots, shallow, progress, beside, [&](const Csr& csr) {
        Csr& owned = &csr == &out ? out : in;
        if (before_release) before_release();
        freeing.run([dead = std::make_shared<Csr>(std::move(owned))] { *dead = Csr{}; });
        owned = Csr{};
    }, before_release);
    freeing.wait();
    return tree;
}

}  // namespace heapgraph::graph
