// Collection sizes from the graph's shape alone (graph/collections.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "heap_graph.h"
#include "progress.h"

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

// The one object array a collection's entries live in: a hash table, a list's elements.
struct BackingArray {
    std::uint64_t slots_used = 0;  // its non-null slots: a hash table's buckets in use
    NodeId node = kNoNode;         // kNoNode: none yet, several (a Java 6 CHM's segments), or not an array shape
    bool none = false;             // a table or array shape with no array yet: capacity 0
};

// Reusable across calls: sizes for every collection of a heap cost time linear in the
// entries walked, with no allocation per call. Not thread-safe (one per thread).
class CollectionSizer {
public:
    explicit CollectionSizer(const HeapGraph& graph);
    ~CollectionSizer();

    // The known class whose rule applies to v's class ("java.util.HashMap" for a
    // LinkedHashMap or a user subclass of HashMap), or empty for a non-collection.
    std::string_view treated_as(NodeId v) const;
    std::uint8_t rule(NodeId v) const;  // the same as an index (CollectionCount::rule); 0: none
    CollectionShape shape(NodeId v) const;
    // Entries of the collection v; nullopt for a non-collection, and for a collection whose
    // backing structure cannot be told apart (two candidate arrays, roots or inner maps).
    std::optional<std::uint64_t> size(NodeId v);
    // Of the last size(): the array its entries live in.
    const BackingArray& backing() const;

private:
    class Walker;  // the per-class rules and the marks of one walk (graph/collections.cpp)
    std::unique_ptr<Walker> walker_;
};

// One-off convenience; use a CollectionSizer for many objects.
std::optional<std::uint64_t> collection_size(const HeapGraph& graph, NodeId v);

// One collection, packed: 32 bytes (40 with 64-bit ids) where its plain fields took 56, as
// millions of them stay in memory from the dominator step, beside its peak, to the report.
struct CollectionCount {
    NodeId node = kNoNode;
    NodeId backing_node = kNoNode;  // BackingArray::node
    CollectionShape shape = CollectionShape::none;
    std::uint8_t rule = 0;      // the known class whose rule applied (counted_as)
    bool sized = false;         // the entries could be told (entries)
    bool backing_none = false;  // BackingArray::none
    std::uint64_t entry_count = 0;
    std::uint64_t slots_used = 0;  // BackingArray::slots_used

    std::string_view counted_as() const;  // the known class's name
    // nullopt: the structure could not be told apart.
    std::optional<std::uint64_t> entries() const { return sized ? std::optional(entry_count) : std::nullopt; }
};
// Every collection of the heap, by node ascending. Needs the out rows: run it before
// compute_retained releases them.
// A column: millions of collections are hundreds of MB, which past the budget go to a file.
Column<CollectionCount> count_collections(const HeapGraph& graph, const Progress& progress = {});

}  // namespace heapgraph::graph
