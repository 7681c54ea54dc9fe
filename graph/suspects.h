// Leak suspects, paths from the GC roots, edge names and top consumers (graph/suspects.cpp,
// after Eclipse MAT's FindLeaksQuery, LeakHunterQuery and TopConsumers2Query; docs/suspects.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dominators.h"

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
// Where each node's path edge sits in its parent's row (kNoSlot: no parent): 2 bytes a
// node. Slots of 0xFFFF and beyond (elements of object arrays past 65,534, few) are kept
// beside, by node: on the 2 GB BigHeap dump 66 MB instead of 131 MB.
class PathSlots {
public:
    void assign(std::size_t nodes) { narrow_.assign(nodes, kBeside), beside_.clear(); }
    // Each node once, then finish() before the first read.
    void set(NodeId v, std::uint32_t slot) {
        if (slot < kBeside) narrow_[v] = static_cast<std::uint16_t>(slot);
        else beside_.push_back({v, slot});
    }
    void finish() { std::sort(beside_.begin(), beside_.end()); }
    std::uint32_t operator[](NodeId v) const {
        if (narrow_[v] != kBeside) return narrow_[v];
        auto it = std::lower_bound(beside_.begin(), beside_.end(), std::pair<NodeId, std::uint32_t>{v, 0});
        return it != beside_.end() && it->first == v ? it->second : kNoSlot;
    }
    void release_pages() const { narrow_.release_pages(); }

private:
    static constexpr std::uint16_t kBeside = 0xFFFF;  // the slot is beside, or there is none
    Column<std::uint16_t> narrow_;
    std::vector<std::pair<NodeId, std::uint32_t>> beside_;
};

// Each node's BFS parent (kNoNode: a root, or a pseudo-root). By default a column by node.
// Made with the bits of the nodes that have referrer rows (two or more referrers), it keeps
// only theirs and those of the nodes the roots do not reach, by rank. Every other node but
// a root has one referrer, which is both its BFS parent and its immediate dominator: read
// from the dominator tree once attach_dominators() has been called. On the 2 GB BigHeap
// dump 38 MB instead of 132 MB, beside the dominator step and at the suspects.
class PathParents {
public:
    NodeId operator[](NodeId v) const;
    std::size_t size() const { return nodes_; }
    bool empty() const { return nodes_ == 0; }
    void attach_dominators(const Column<NodeId>& idom) { idom_ = &idom; }
    void release_pages() const { all_.release_pages(), shared_parent_.release_pages(); }

    // For shortest_path_tree: a column by node, or the kept parents only (`shared`: the
    // nodes with referrer rows; `roots`: the global roots, ascending).
    void keep_all(std::size_t nodes);
    void keep_shared(std::size_t nodes, NodeBits&& shared, std::span<const NodeId> roots);
    // The nodes not reached from the roots, once the roots' search is done: theirs are kept.
    void keep_unreached(NodeBits&& unreached);
    void set(NodeId v, NodeId parent);
    bool compact() const { return compact_; }

private:
    std::size_t nodes_ = 0;
    bool compact_ = false;
    Column<NodeId> all_;
    RankedBits shared_, unreached_;
    Column<NodeId> shared_parent_, unreached_parent_;
    std::vector<NodeId> roots_;
    const Column<NodeId>* idom_ = nullptr;
};

struct PathTree {
    PathParents parent;
    PathSlots slot;  // where the parent's edge to the node sits in its row
    NodeBits weak;   // set: no path without `weak_edges` (or none at all) exists

    void release_pages() const { parent.release_pages(), slot.release_pages(); }
};
// Breadth first from `roots`, not following `weak_edges` (sorted (from, to) pairs: the
// referents of java.lang.ref.Reference objects, Finalizer.unfinalized). Nodes reached only
// through them get a second BFS over every edge (flagged weak). Nodes still unreached
// (unreachable ones, kept under --keep-unreachable) are taken as pseudo-roots in ascending
// order and searched from, so every node has a path.
// `shared`: when given (nonempty_rows of graph.in, taken before the dominator step may free
// the rows), the tree keeps the parents compactly (PathParents) and answers for the other
// nodes once the dominator tree is attached.
PathTree shortest_path_tree(const HeapGraph& graph, std::span<const Edge> weak_edges, const Progress& progress = {},
                            NodeBits shared = {});
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
