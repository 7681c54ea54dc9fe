// Holders for comparing dumps (graph/holders.cpp, docs/diff.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "suspects.h"

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
    NodeId retained_objects = 0;
};
struct HolderOptions {
    double min_percent = 0.5;      // of the reachable heap (the super root's retained)
    std::uint32_t max_depth = 32;
    std::size_t max_holders = 1000;  // the largest; parents are always kept with their children
};
// "A [kind] -field-> B -[]-> C": the path's classes joined by their edges, the anchor's root kind in brackets.
std::string holder_signature(std::span<const HolderStep> path, const std::string& anchor_kind);
// The holders of the dominator tree, without their paths and signatures: biggest first
// (retained desc, then depth, then node id); a holder's parent comes before it.
std::vector<Holder> select_holders(const Retained& retained, const HolderOptions& options);
// The nodes whose edges (from their path parents) name_holders reads: the end of each
// holder's path, as far as its signature shows it. The pipeline reads their names back first.
std::vector<NodeId> holder_path_tails(const PathTree& paths, std::span<const Holder> holders);
// Fills each holder's path, anchor kind and signature.
void name_holders(const HeapGraph& graph, const PathTree& paths, const FieldNames& names, std::vector<Holder>& holders);
// select_holders, then name_holders.
std::vector<Holder> find_holders(const HeapGraph& graph, const Retained& retained, const PathTree& paths,
                                 const FieldNames& names, const HolderOptions& options);

}  // namespace heapgraph::graph
