// Naming one out-edge by its slot (graph/suspects.cpp), shared with the holders' signatures.
#pragma once

#include <string>

#include "graph.h"

namespace heapgraph::graph {

// The name of slot `slot` of from's out row; `own_class` is from's class, or for a class
// object the class it describes. Empty when it cannot be told (see edge_name).
std::string slot_name(const HeapGraph& graph, const FieldNames& names, NodeId from, std::uint32_t own_class,
                      std::uint32_t slot);

}  // namespace heapgraph::graph
