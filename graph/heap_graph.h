// The heap graph: dense node ids, CSR adjacency (out and in), GC roots, reachability and
// class histograms. Node ids are dense `NodeId`s in dump-address order; addresses themselves
// never reach this library (the pipeline keeps them).
//
// Data flow: HeapInput (nodes + edge list + roots) -> build_heap_graph() -> HeapGraph ->
// summarize() / class_histogram().
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "column.h"
#include "node_bits.h"
#include "node_types.h"
#include "progress.h"
#include "shallow_sizes.h"

namespace heapgraph::graph {

// Node ids are 32-bit; the `heapgraph-wide` build (HEAPGRAPH_WIDE_IDS) makes them 64-bit
// for the dumps of more than kMaxNodes objects, which `heapgraph` hands over to it
// (docs/heap-graph.md). Everything that counts or numbers nodes uses NodeId.
#ifdef HEAPGRAPH_WIDE_IDS
using NodeId = std::uint64_t;
#else
using NodeId = std::uint32_t;
#endif
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();
// 32 in heapgraph, 64 in heapgraph-wide: what the tools test and say of the width.
inline constexpr unsigned kNodeIdBits = 8 * sizeof(NodeId);
// The most objects (class objects included) one graph numbers: the top three id values are
// reserved (kNoNode, the dominator step's super root and "unreached"). The loaders refuse a
// dump that holds more, naming the count (docs/heap-graph.md).
inline constexpr std::uint64_t kMaxNodes = kNoNode - 2;

struct ClassInfo {
    std::string name;          // Java form: "java.util.HashMap$Node[]"
    NodeId node = kNoNode;     // the class object, when the dump has one
    NodeId loader = kNoNode;   // kNoNode for the bootstrap loader
};

struct Edge {
    NodeId from, to;
};

struct GcRoot {
    NodeId node;
    std::uint8_t kind;    // index into HeapInput::root_kind_names
    bool global = true;   // false: a thread's local, reached through an edge from the thread
};

// What the pipeline hands over: every node's kind, class and shallow size, the edges, roots.
struct HeapInput {
    NodeTypes types;  // each node's kind and class index (into classes)
    ShallowSizes shallow_bytes;
    std::vector<ClassInfo> classes;
    std::vector<Edge> edges;  // either an edge list ...
    struct Csr* out = nullptr;  // ... or outgoing rows already built (moved from)
    std::vector<GcRoot> roots;
    std::vector<std::string> root_kind_names;
    Progress progress{};  // of the transpose
};

// Compressed sparse rows: the neighbours of v are targets[begin(v) .. begin(v + 1)). Readers
// go through begin()/of()/degree()/rows(), so the offsets' layout can change behind them.
// Builders count and scatter with row starts of 32 bits where the targets' count allows, else
// 64, then hand them to set_starts(), which keeps them as 32-bit offsets within blocks of
// 2^16 rows beside each block's 64-bit start: 4 bytes a row instead of 8, for any number of
// targets (docs/pipeline.md, "Column storage"). Rows for a few nodes only (the referrer
// rows) keep a start for those alone, by rank among them, and a bit per node saying which:
// set_starts_of().
struct Csr {
    Column<NodeId> targets;

    std::uint64_t begin(NodeId v) const { return start(present_.empty() ? v : rank(v)); }
    std::span<const NodeId> of(NodeId v) const {
        if (present_.empty()) return {targets.data() + start(v), targets.data() + start(v + 1)};
        if (!present_.test(v)) return {};
        const std::uint64_t at = rank(v);
        return {targets.data() + start(at), targets.data() + start(at + 1)};
    }
    // Bit i set when node 64 * word + i has a row that is not empty.
    std::uint64_t nonempty_word(std::size_t word) const;
    std::uint64_t degree(NodeId v) const { return begin(v + 1) - begin(v); }
    bool empty() const { return rows_ == 0; }
    std::size_t rows() const { return rows_; }
    void prefetch(NodeId v) const {
        if (!present_.empty()) return;  // the bits and ranks: 6 bytes a 64 nodes, cached
        __builtin_prefetch(wide_ ? static_cast<const void*>(&starts_[v]) : &narrow_[v]);
    }

    // Takes the rows' starts (rows + 1 of them, the last one the number of targets). A block
    // whose rows span more than `narrow_span` targets (2^32 - 1; smaller in tests) keeps
    // every start at 64 bits instead.
    void set_starts(Column<std::uint64_t>&& starts, std::uint64_t narrow_span = 0xFFFFFFFFu);
    // The same for starts that fit 32 bits (rows of fewer than 2^32 targets in all): the
    // column becomes the offsets in place.
    void set_starts(Column<std::uint32_t>&& starts);
    // The same for rows only the nodes flagged in `present` have (the others' are empty):
    // starts by node, kept as the flagged nodes' starts alone, and the flags kept to rank
    // them. The referrer rows of the 2 GB BigHeap dump: 5.0M of 32.9M nodes, 20 MB of starts
    // instead of 131 MB. `present` has a bit for node `rows` too (unset): begin(rows) ranks it.
    template <typename Offset>
    void set_starts_of(NodeBits&& present, Column<Offset>&& starts, std::uint64_t narrow_span = 0xFFFFFFFFu);
    std::uint64_t offset_bytes() const;  // of the row starts as kept
    // The parts agree in size (and the ranks count the bits): what rows read back from a file
    // (pipeline/kept_dump.cpp) must hold before the first begin().
    bool layout_holds() const;
    bool wide() const { return wide_; }
    // Hands each part to archive.io(), in a fixed order: the index keeps the rows in a file
    // and reopens them (pipeline/kept_dump.cpp).
    template <typename Archive>
    void keep(Archive& archive) {
        archive.io(targets), archive.io(narrow_), archive.io(bases_), archive.io(starts_);
        archive.io(present_), archive.io(ranks_), archive.io(count_), archive.io(rows_), archive.io(wide_);
    }

private:
    static constexpr unsigned kBlockBits = 16;
    template <typename Offset>
    void narrow_blocks(const Column<Offset>& starts, Column<std::uint32_t>& offsets);
    Column<std::uint32_t> narrow_;  // v's start minus its block's
    Column<std::uint64_t> bases_;   // each block's first start
    Column<std::uint64_t> starts_;  // every start, when some block's rows span too many targets
    // With set_starts_of(): a bit per node, set for those with a start, and the number of set
    // bits before each word's.
    NodeBits present_;
    Column<NodeId> ranks_;
    std::uint64_t start(std::uint64_t at) const { return wide_ ? starts_[at] : bases_[at >> kBlockBits] + narrow_[at]; }
    std::uint64_t rank(NodeId v) const {
        const std::uint64_t below = (std::uint64_t{1} << (v & 63)) - 1;
        return ranks_[v >> 6] + static_cast<std::uint64_t>(std::popcount(present_.word(v >> 6) & below));
    }
    std::size_t count_ = 0;  // starts kept
    std::size_t rows_ = 0;   // nodes
    bool wide_ = false;
};

// The two halves of building rows in place, shared by every Csr made here. Degrees are
// counted at offsets[v + 1]; sum_degrees() turns them into row starts. A scatter then uses
// offsets[v] as v's cursor, which leaves it at v's row end; ends_to_starts() shifts the
// offsets back by one, so no second array of cursors is needed.
template <typename Offset>
void sum_degrees(Column<Offset>& offsets);
template <typename Offset>
void ends_to_starts(Column<Offset>& offsets);

struct HeapGraph {
    NodeTypes types;  // each node's kind and class index (into classes)
    ShallowSizes shallow_bytes;
    std::vector<ClassInfo> classes;
    Csr out;
    // Referrers, only of objects with two or more (the rest have an empty row): all the
    // dominator step needs, since one referrer is the immediate dominator (docs/dominators.md).
    Csr in;
    std::vector<GcRoot> roots;  // one entry per root record, as the dump lists them
    std::vector<std::string> root_kind_names;
    std::vector<NodeId> root_nodes;      // distinct nodes of global roots, ascending
    // Set when some path from a root reaches the node. Empty (no words) until the analysis
    // sets it (compute_retained): its dominator step reaches the same nodes from the same
    // roots, so a walk of its own at load would repeat one (reachable_of).
    NodeBits reachable;
    std::uint64_t edges = 0;              // kept when the rows are released after dominators

    NodeId node_count() const { return static_cast<NodeId>(types.size()); }
};

// Builds the outgoing rows from an edge list (count degrees, prefix sum, scatter, as gapbs
// does) unless given them, and transposes them; `reachable` is left empty.
HeapGraph build_heap_graph(HeapInput input);
// Referrer rows of the objects with two or more referrers, each sorted by source, except the
// `roots`' (no step reads them: on the 2 GB BigHeap dump a fifth of the referrers). Counted
// with 32-bit row starts when the out rows hold at most `narrow_targets` targets (2^32 - 1;
// 0 in tests, for the 64-bit path), else 64-bit. When the columns are in files (or with a
// `window_bytes`, in tests) the edges are first sorted into parts of targets whose counts and
// rows fit that window, so the random writes stay within pages the pager leaves mapped.
Csr transpose(const Csr& out, std::span<const NodeId> roots = {}, const Progress& progress = {},
              std::uint64_t narrow_targets = 0xFFFFFFFFu, std::uint64_t window_bytes = 0);

// A bit for each of `nodes` nodes, set where `rows` has a row that is not empty (none past
// its rows): of the referrer rows, the objects with two or more referrers.
NodeBits nonempty_rows(const Csr& rows, std::size_t nodes);

// Nodes reachable from `starts` along out-edges, a bit per node.
NodeBits mark_reachable(const Csr& out, std::span<const NodeId> starts);
// graph.reachable once set; before that, a walk from the roots into `walked`.
const NodeBits& reachable_of(const HeapGraph& graph, NodeBits& walked);

// Counts of objects leave class objects out; byte totals include them (a class object's
// bytes are its statics), so the histogram's bytes add up to reachable_bytes.
struct Summary {
    std::uint64_t objects = 0, instances = 0, object_arrays = 0, primitive_arrays = 0;
    std::uint64_t classes = 0, reachable_classes = 0, class_bytes = 0;
    std::uint64_t gc_roots = 0, shallow_bytes = 0;
    std::uint64_t reachable_objects = 0, reachable_bytes = 0;
    std::uint64_t unreachable_objects = 0, unreachable_bytes = 0;
    std::uint64_t edges = 0;
    std::vector<std::uint64_t> gc_roots_by_kind;  // parallel to root_kind_names
};

Summary summarize(const HeapGraph& graph);

struct HistogramRow {
    std::uint32_t class_index;
    std::uint64_t count = 0, shallow_bytes = 0;
};

// Per-class counts over the nodes that are (`reachable` true) or are not reachable; class
// objects count under the class of classes (java.lang.Class), as in MAT. Sorted by shallow bytes desc, then class name, then class index.
std::vector<HistogramRow> class_histogram(const HeapGraph& graph, bool reachable);
// The same over the nodes whose `mask` entry equals `value`.
std::vector<HistogramRow> class_histogram(const HeapGraph& graph, const NodeBits& mask,
                                          bool value);

// "java.util.HashMap", or "class java.util.HashMap" for a class object.
std::string node_class_name(const HeapGraph& graph, NodeId v);
// "instance", "object_array", "primitive_array" or "class", as the reports write kinds.
const char* node_kind_name(NodeKind kind);

}  // namespace heapgraph::graph
