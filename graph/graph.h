// Public interface of the heap graph: dense node ids, CSR adjacency (out and in), GC roots,
// reachability and class histograms. Node ids are dense `uint32_t` in dump-address order;
// addresses themselves never reach this library (the pipeline keeps them).
//
// Data flow: HeapInput (nodes + edge list + roots) -> build_heap_graph() -> HeapGraph ->
// summarize() / class_histogram().
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapgraph::graph {

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = 0xFFFFFFFFu;

enum class NodeKind : std::uint8_t { instance, object_array, primitive_array, class_object };

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
    std::vector<NodeKind> kind;
    std::vector<std::uint32_t> class_index;  // into classes
    std::vector<std::uint64_t> shallow_bytes;
    std::vector<ClassInfo> classes;
    std::vector<Edge> edges;  // either an edge list ...
    struct Csr* out = nullptr;  // ... or outgoing rows already built (moved from)
    std::vector<GcRoot> roots;
    std::vector<std::string> root_kind_names;
};

// Compressed sparse rows: the neighbours of v are targets[offsets[v] .. offsets[v+1]).
struct Csr {
    std::vector<std::uint64_t> offsets;
    std::vector<NodeId> targets;
    std::span<const NodeId> of(NodeId v) const {
        return {targets.data() + offsets[v], targets.data() + offsets[v + 1]};
    }
};

struct HeapGraph {
    std::vector<NodeKind> kind;
    std::vector<std::uint32_t> class_index;
    std::vector<std::uint64_t> shallow_bytes;
    std::vector<ClassInfo> classes;
    Csr out, in;
    std::vector<GcRoot> roots;  // one entry per root record, as the dump lists them
    std::vector<std::string> root_kind_names;
    std::vector<NodeId> root_nodes;      // distinct nodes of global roots, ascending
    std::vector<std::uint8_t> reachable;  // 1 when some path from a root reaches the node
    std::uint64_t edges = 0;              // kept when the rows are released after dominators

    std::uint32_t node_count() const { return static_cast<std::uint32_t>(kind.size()); }
};

// Builds both CSRs (count degrees, prefix sum, scatter, as gapbs does) and marks reachability.
// Given outgoing rows, it only transposes them (in parallel; each incoming row sorted).
HeapGraph build_heap_graph(HeapInput input);
Csr transpose(const Csr& out);

// Nodes reachable from `starts` along out-edges, as a 0/1 mark per node.
std::vector<std::uint8_t> mark_reachable(const Csr& out, std::span<const NodeId> starts);

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
std::vector<HistogramRow> class_histogram(const HeapGraph& graph, std::span<const std::uint8_t> mask,
                                          bool value);

// "java.util.HashMap", or "class java.util.HashMap" for a class object.
std::string node_class_name(const HeapGraph& graph, NodeId v);

}  // namespace heapgraph::graph

namespace heapgraph::graph {

struct RetainedOptions {
    bool keep_unreachable = false;  // MAT's -keep_unreachable_objects (docs/dominators.md)
    // Free the graph's edges (out and in) as soon as the dominator step is done with each:
    // lowers the peak when nothing after needs them (the CLI's reports do not).
    bool release_edges = false;
};

struct Retained;

// The dominator tree over a super root whose children are the given roots. Nodes the
// search from the roots does not reach (or that `keep` excludes) get idom kUnreached.
inline constexpr NodeId kSuperRoot = 0xFFFFFFFEu;
inline constexpr NodeId kUnreached = 0xFFFFFFFFu;

struct DominatorTree {
    std::vector<NodeId> idom;                   // kSuperRoot for the super root's children
    std::vector<std::uint64_t> retained_bytes;  // 0 for unreached nodes
    std::vector<std::uint32_t> retained_objects;
    std::vector<NodeId> preorder;               // reached nodes in DFS order from the super root
    std::uint64_t super_root_retained_bytes = 0;
};

// Semi-NCA (Georgiadis, Tarjan, Werneck 2006) with iterative DFS and iterative path
// compression, on dense uint32_t arrays. `roots` must be ascending and distinct; `shallow`
// is indexed by node. Deterministic for a given graph.
DominatorTree compute_dominators(const Csr& out, const Csr& in, std::span<const NodeId> roots,
                                 std::span<const std::uint64_t> shallow);
// The same, freeing `out` once numbered and `in` once the semidominators are known.
DominatorTree compute_dominators_releasing(Csr& out, Csr& in, std::span<const NodeId> roots,
                                           std::span<const std::uint64_t> shallow);

}  // namespace heapgraph::graph

namespace heapgraph::graph {

struct Retained {
    DominatorTree tree;
    Csr children;                           // the dominator tree's child lists
    std::vector<NodeId> top;                // the super root's children, in preorder
    std::vector<NodeId> unreachable_roots;  // with keep_unreachable: the extra roots chosen
    std::vector<std::uint8_t> in_tree;      // 1 when the node is in the dominator tree
};

// Dominators and retained sizes over the graph's global roots, plus, with keep_unreachable,
// roots chosen among unreachable objects as MAT does.
Retained compute_retained(const HeapGraph& graph, const RetainedOptions& options);  // keeps edges
// With options.release_edges the graph's out and in rows are empty afterwards.
Retained compute_retained(HeapGraph& graph, const RetainedOptions& options);

// Retained bytes of the set of nodes whose flag is 1: the nodes of the set that no other
// member dominates, summed (MAT's retained size of a class's or loader's objects).
std::uint64_t retained_bytes_of_set(const DominatorTree& tree, std::span<const std::uint8_t> member);

}  // namespace heapgraph::graph

namespace heapgraph::graph {

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
// One row per class loader that defined a class, by retained bytes desc then loader id.
std::vector<LoaderRow> class_loader_table(const HeapGraph& graph, const Retained& retained);

}  // namespace heapgraph::graph

namespace heapgraph::graph {

// Collection sizes from the graph's shape alone, the way Eclipse MAT counts them when a dump
// has no field values (IBM PHD): MAT's getMapSize, getOnlyArrayField and
// followOnlyNonArrayOutgoingReference, restated in graph/collections.cpp. Our graph has no
// field names or values for any format, so this rule serves HPROF too.
enum class CollectionShape : std::uint8_t {
    none,
    hashed,  // a table of entries, chains of same-class entries (HashMap, Hashtable, CHM ...)
    tree,    // a root entry and its same-class links (TreeMap)
    array,   // the non-null slots of one object array (ArrayList, Vector, ArrayDeque)
    linked,  // nodes linked to each other, maybe around a sentinel (LinkedList)
};

// Reusable across calls: sizes for every collection of a heap cost time linear in the
// entries walked, with no allocation per call. Not thread-safe (one per thread).
class CollectionSizer {
public:
    explicit CollectionSizer(const HeapGraph& graph);

    // The known class whose rule applies to v's class ("java.util.HashMap" for a
    // LinkedHashMap or a user subclass of HashMap), or empty for a non-collection.
    std::string_view treated_as(NodeId v) const;
    CollectionShape shape(NodeId v) const;
    // Entries of the collection v; nullopt for a non-collection, and for a collection whose
    // backing structure cannot be told apart (two candidate arrays, roots or inner maps).
    std::optional<std::uint64_t> size(NodeId v);

private:
    std::optional<std::uint64_t> size_as(NodeId v, std::uint8_t rule);
    std::optional<std::uint64_t> hashed_size(NodeId holder, bool segments, bool fallback_to_chm);
    std::optional<std::uint64_t> table_size(NodeId holder, NodeId table);
    std::optional<std::uint64_t> tree_size(NodeId holder);
    std::optional<std::uint64_t> array_size(NodeId holder) const;
    std::uint64_t linked_size(NodeId holder);
    std::uint64_t count_same_class(std::span<const NodeId> starts);
    bool sentinel(NodeId holder, NodeId v) const;
    NodeId inner_collection(NodeId v) const;
    void mark(NodeId v);
    bool marked(NodeId v) const { return (seen_[v >> 6] >> (v & 63)) & 1; }
    void clear_marks();

    const HeapGraph& graph_;
    std::vector<std::uint8_t> rule_;  // per class index: index into the known classes, 0 none
    std::vector<std::uint64_t> seen_;  // one bit per node, cleared through touched_
    std::vector<NodeId> touched_, extra_, starts_;
};

// One-off convenience; use a CollectionSizer for many objects.
std::optional<std::uint64_t> collection_size(const HeapGraph& graph, NodeId v);

struct CollectionCount {
    NodeId node;
    std::string_view counted_as;           // the known class whose rule applied
    std::optional<std::uint64_t> entries;  // nullopt: the structure could not be told apart
};
// Every collection of the heap, by node ascending. Needs the out rows: run it before
// compute_retained releases them.
std::vector<CollectionCount> count_collections(const HeapGraph& graph);

}  // namespace heapgraph::graph

namespace heapgraph::graph {

// Leak suspects, paths from the GC roots and top consumers (graph/suspects.cpp, after Eclipse
// MAT's FindLeaksQuery, LeakHunterQuery and TopConsumers2Query; docs/suspects.md).

// An out-edge by its place: slot `slot` of from's out row (slot 0 is the class edge when the
// class has a class object), to `to`.
struct PathEdge {
    NodeId from, to;
    std::uint32_t slot;
};
// An exact name for slot `slot` of from's row, read back from the dump.
struct NamedEdge {
    NodeId from;
    std::uint32_t slot;
    std::string name;  // a field or static name, or "[12]": an array element's index
};

// Names of out-edges, where the format has them (HPROF). Both by class index.
struct FieldNames {
    // An instance's reference fields in dump order (its class's own first, then the super
    // classes'): the order the builder emits their non-null values after the class edge.
    // Each class keeps only the fields it declares and links to the nearest super class that
    // declares any, so a deep hierarchy costs each class once.
    struct ClassFields {
        std::vector<std::string> own;
        std::uint32_t super = 0xFFFFFFFFu;  // class index; 0xFFFFFFFF: none
        std::uint64_t total = 0;            // own and inherited
    };
    std::vector<ClassFields> instance_fields;
    // Name of reference field `k` (dump order) of an instance of class `c`; empty when none.
    std::string instance_field(std::uint32_t c, std::uint64_t k) const {
        for (; c < instance_fields.size(); c = instance_fields[c].super) {
            if (k < instance_fields[c].own.size()) return instance_fields[c].own[k];
            k -= instance_fields[c].own.size();
        }
        return {};
    }
    // A class object's out-edges exactly as in its row: "<class>", "<super>",
    // "<classloader>", then the non-null object statics by name.
    std::vector<std::vector<std::string>> class_edges;
    // The rows keep no nulls, so an instance's slot names a field only when no reference
    // field is null, and an array's slot is not its index. The pipeline's name_edges reads the
    // few edges of the reported paths back from the dump: sorted by (from, slot).
    std::vector<NamedEdge> exact;
};

// One BFS parent per node, over out rows, from the GC roots. Build it before
// compute_retained releases the rows; afterwards a path to any node costs its length.
inline constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
struct PathTree {
    std::vector<NodeId> parent;       // kNoNode: a root (or a pseudo-root, see weak)
    std::vector<std::uint32_t> slot;  // where the parent's edge to the node sits in its row
    std::vector<std::uint8_t> weak;   // 1: no path without `weak_edges` (or none at all) exists
};
// Breadth first from `roots`, not following `weak_edges` (sorted (from, to) pairs: the
// referents of java.lang.ref.Reference objects, Finalizer.unfinalized). Nodes reached only
// through them get a second BFS over every edge (flagged weak). Nodes still unreached
// (unreachable ones, kept under --keep-unreachable) are taken as pseudo-roots in ascending
// order and searched from, so every node has a path.
PathTree shortest_path_tree(const HeapGraph& graph, std::span<const Edge> weak_edges);
// Root first, `v` last.
std::vector<NodeId> path_from_root(const PathTree& tree, NodeId v);
// The edges of a path (root first, as path_from_root gives it): what name_edges reads back.
std::vector<PathEdge> path_edges(const PathTree& tree, std::span<const NodeId> path);
// The name of the edge from v's path parent to v: names.exact's, else "<class>", a class
// object's edge, an instance field when none of the object's reference fields is null (this
// needs the out rows), or empty when it cannot be told.
std::string edge_name(const HeapGraph& graph, const FieldNames& names, const PathTree& tree, NodeId v);

struct SuspectOptions {
    double threshold_percent = 10;     // of the reachable heap (the super root's retained)
    std::size_t max_paths = 10000;     // instances of a group whose paths are merged
    // ... and at most this many path steps in all: 10,000 instances at the end of a 20,000-link
    // chain would otherwise hold 200M node ids.
    std::size_t max_path_steps = std::size_t{1} << 22;
    std::size_t max_suspects = 100;    // the biggest; the rest are counted, not built
    double big_drop_ratio = 0.7;
    double group_accumulation_ratio = 0.8;
    std::size_t top_classes = 3;
};

struct ClassShare {
    NodeId class_node;            // MAT keys class objects by themselves ...
    std::uint32_t class_index;    // ... and other objects by their class
    std::uint64_t objects = 0, shallow_bytes = 0;
};

struct Suspect {
    bool group = false;
    NodeId node = kNoNode;          // single: the object; group: kNoNode
    std::uint32_t class_index = 0;  // single: of the object (class objects: the class itself); group: the class
    std::vector<NodeId> instances;  // group: its top-level instances, ascending
    std::uint64_t retained_bytes = 0;
    NodeId accumulation_point = kNoNode;  // kNoNode: not found (MAT's "<not found>")
    std::vector<NodeId> path;             // root first, to the accumulation point (or the suspect); cut_path'ed
    std::uint64_t path_omitted = 0;       // steps left out after the first kPathHeadSteps
    bool path_weak = false;               // the path goes through a weak edge (no strong path)
    NodeId referrer = kNoNode;  // platform-class suspects: first non-platform object up the path
    NodeId thread = kNoNode;    // the thread object the suspect is (or hangs from, via referrer)
    std::vector<ClassShare> top_classes;
};

// MAT's find_leaks: single suspects, then group suspects, biggest first (ties: single
// before group, then node / class index), at most options.max_suspects of them; `left_out`
// gets the number of suspects past that cap. Needs no edges: run after compute_retained.
std::vector<Suspect> find_suspects(const HeapGraph& graph, const Retained& retained, const PathTree& paths,
                                   const SuspectOptions& options, std::uint64_t* left_out = nullptr);

// Reports show a path of at most kPathHeadSteps + kPathTailSteps nodes: a chain of 20,000
// links would otherwise put 20,000 steps (and their names) in every report and snapshot.
// The steps near the roots say what holds the path, those near its end what it holds.
inline constexpr std::size_t kPathHeadSteps = 50, kPathTailSteps = 50;
// Keeps the first kPathHeadSteps and the last kPathTailSteps nodes; returns how many it
// left out between them (0 for a short path).
std::uint64_t cut_path(std::vector<NodeId>& path);

// MAT's skip pattern for "platform" classes: java., javax., sun., com.sun., jdk.
bool platform_class(std::string_view class_name);

struct PackageRow {
    std::string package;  // "java.util"; "<default>" for classes in no package
    std::uint64_t dominators = 0, retained_bytes = 0;
};
// TopConsumers2Query's package tree, flattened: every package prefix of the class of each
// top-level dominator (class objects by their own name) sums its retained bytes. By
// retained bytes desc, then name.
std::vector<PackageRow> retained_by_package(const HeapGraph& graph, const Retained& retained);

}  // namespace heapgraph::graph

namespace heapgraph::graph {

// Holders for comparing dumps (graph/holders.cpp, docs/diff.md): the dominator-tree nodes
// that retain at least `min_percent` of the reachable heap, to `max_depth` levels, each named
// by a signature that survives a new dump (addresses do not): its shortest path from the GC
// roots (PathTree), cut at the last class object on it, as class names and field names.
struct HolderStep {
    std::string class_name;  // node_class_name: "class X" for a class object
    std::string via;         // the edge from the previous step: a field, "[]" (array slot), "?" (unknown), "" first
};
inline constexpr std::uint32_t kNoHolder = 0xFFFFFFFFu;
struct Holder {
    NodeId node = kNoNode;
    std::string signature;          // "class A -list-> java.util.ArrayList -elementData-> java.lang.Object[]"
    std::vector<HolderStep> path;   // anchor (a GC root, or the last class object) first
    std::string anchor_kind;        // the root kind when the anchor is not a class object, else empty
    std::uint32_t parent = kNoHolder;  // the nearest holder above it in the dominator tree
    std::uint32_t depth = 1;           // in the dominator tree: 1 for the super root's children
    std::uint64_t retained_bytes = 0;
    std::uint32_t retained_objects = 0;
};
struct HolderOptions {
    double min_percent = 0.5;      // of the reachable heap (the super root's retained)
    std::uint32_t max_depth = 32;
    std::size_t max_holders = 1000;  // the largest; parents are always kept with their children
};
// "A [kind] -field-> B -[]-> C": the path's classes joined by their edges, the anchor's root kind in brackets.
std::string holder_signature(std::span<const HolderStep> path, const std::string& anchor_kind);
// Biggest first (retained desc, then depth, then node id); a holder's parent comes before it.
std::vector<Holder> find_holders(const HeapGraph& graph, const Retained& retained, const PathTree& paths,
                                 const FieldNames& names, const HolderOptions& options);

}  // namespace heapgraph::graph
