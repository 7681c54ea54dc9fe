// Dominators and retained sizes (graph/dominators.cpp, graph/retained.cpp, docs/dominators.md),
// and the retained-size tables built on them: top dominators, by class, by class loader.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "byte_counts.h"
#include "heap_graph.h"
#include "progress.h"

namespace heapgraph::graph {

struct RetainedOptions {
    bool keep_unreachable = false;  // MAT's -keep_unreachable_objects (docs/dominators.md)
    // Free the graph's edges (out and in) as soon as the dominator step is done with each:
    // lowers the peak when nothing after needs them (the CLI's reports do not).
    bool release_edges = false;
    // Other walks over the out rows, run beside the numbering of the nodes (the step's last
    // use of the rows) and beside the search; the rows are released once both are done with
    // them. Each walk runs once, on whichever thread is free first, in the order given: the
    // longest first.
    std::vector<std::function<void()>> beside{};
    Progress progress{};  // of the dominator step, in four phases over the nodes
    // With release_edges: called before the first rows are freed or the referrer rows are
    // rewritten (the search's numbers in place), so that a reader of them on another thread
    // (the index keeping the graph, cli/indexed.cpp) is done first.
    std::function<void()> before_release{};
};

struct Retained;

// The dominator tree over a super root whose children are the given roots. Nodes the
// search from the roots does not reach (or that `keep` excludes) get idom kUnreached.
inline constexpr NodeId kSuperRoot = kNoNode - 1;
inline constexpr NodeId kUnreached = kNoNode;

struct DominatorTree {
    Column<NodeId> idom;                   // kSuperRoot for the super root's children
    ByteCounts retained_bytes;             // 0 for unreached nodes
    Column<NodeId> retained_objects;
    // Reached nodes in DFS order from the super root (compute_retained frees it once the
    // child lists are made); `reached` keeps its length.
    Column<NodeId> preorder;
    std::uint64_t reached = 0;
    // By DFS number (preorder index + 1): the immediate dominator's DFS number, 0 for the super
    // root's children. The child lists are made from it (graph/retained.cpp), which then frees
    // it: a node's dominator mostly lies near it in the preorder, where by node id it does not.
    Column<NodeId> idom_by_number;
    std::uint64_t super_root_retained_bytes = 0;
    // Reached nodes with two or more referrers, and the roots: the only ones the general
    // algorithm searches (each other node's one referrer is its immediate dominator).
    std::uint64_t condensed_nodes = 0;
    // The step's own time, without what ran beside it: the DFS numbering, then
    // the search, the immediate dominators and the sums. `waited_seconds`: what the step
    // spent, before the sums, on the walks beside it (running those not yet started, then
    // waiting for the others), as the out rows go only once they are done.
    double numbering_seconds = 0, search_seconds = 0, waited_seconds = 0;
    // Parts of search_seconds: the rewrite of the referrer rows (with the searched-node bits
    // before it), the semidominators' search, and the sums with their hand-over.
    double rewrite_seconds = 0, semi_seconds = 0, sums_seconds = 0;
};

// Semi-NCA (Georgiadis, Tarjan, Werneck 2006) with iterative DFS and iterative path
// compression, on dense uint32_t arrays. `roots` must be ascending and distinct; `shallow`
// is indexed by node. Deterministic for a given graph.
// `beside` runs alongside steps 1 and 2 (see RetainedOptions). The search rewrites the
// referrer rows in place to what it reads of them: this form rewrites a copy of `in`'s.
DominatorTree compute_dominators(const Csr& out, const Csr& in, std::span<const NodeId> roots,
                                 const ShallowSizes& shallow, const Progress& progress = {},
                                 const std::vector<std::function<void()>>& beside = {});
// The same, rewriting `in`'s rows themselves, and freeing `out` once numbered and `in` once
// the semidominators are known, calling `before_release` before any of these.
DominatorTree compute_dominators_releasing(Csr& out, Csr& in, std::span<const NodeId> roots,
                                           const ShallowSizes& shallow, const Progress& progress = {},
                                           const std::vector<std::function<void()>>& beside = {},
                                           const std::function<void()>& before_release = {});


struct Retained {
    DominatorTree tree;
    Csr children;                           // the dominator tree's child lists
    std::vector<NodeId> top;                // the super root's children, in preorder
    // By node: the position in `top` of the node's top-level dominator (itself for those in
    // `top`); nodes not in the tree hold any value. The suspects count by it, then free it.
    Column<NodeId> top_index;
    std::vector<NodeId> unreachable_roots;  // with keep_unreachable: the extra roots chosen
    NodeBits in_tree;                       // set when the node is in the dominator tree
    // What the global roots reach, for an empty graph.reachable (heap_graph.h): the tree's
    // nodes, or with keep_unreachable a walk of its own. Empty when the graph had it already.
    NodeBits reachable;
};

// Dominators and retained sizes over the graph's global roots, plus, with keep_unreachable,
// roots chosen among unreachable objects as MAT does.
Retained compute_retained(const HeapGraph& graph, const RetainedOptions& options);  // keeps edges
// With options.release_edges the graph's out and in rows are empty afterwards.
Retained compute_retained(HeapGraph& graph, const RetainedOptions& options);


// The super root's children, by retained bytes desc then node id, at most `limit`.
std::vector<NodeId> top_dominators(const Retained& retained, std::size_t limit);

// Retained bytes of each class's objects taken as one set (index = class index): the sum
// over its objects that no other object of the class dominates. Class objects count under
// java.lang.Class, as in the histogram.
std::vector<std::uint64_t> retained_bytes_by_class(const HeapGraph& graph, const Retained& retained);

struct LoaderRow {
    NodeId loader;  // kNoNode: the bootstrap loader
    std::uint64_t classes = 0;
    std::uint64_t retained_bytes = 0;  // of the loader, its classes and their instances, as one set
};
struct RetainedTables {
    std::vector<std::uint64_t> by_class;  // as retained_bytes_by_class
    // One row per class loader that defined a class, by retained bytes desc then loader id
    // (only when asked for).
    std::vector<LoaderRow> loaders;
};
// Both tables from one walk of the dominator tree.
RetainedTables retained_tables(const HeapGraph& graph, const Retained& retained, bool loaders);

}  // namespace heapgraph::graph
