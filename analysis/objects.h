// Analyses that read single objects back through the value reader (analysis/objects.cpp):
// threads with their stacks, java.lang.System's properties, the objects the HTML inspector
// opens, and collections' capacities.
#pragma once

#include <span>
#include <vector>

#include "analysis.h"

namespace heapgraph::analysis {

// The objects of System.props's table (Properties, its map, tables and entries), found from
// java.lang.System's class object along the out rows: run before the rows are released.
std::vector<graph::NodeId> property_nodes(const graph::HeapGraph& g);

// The objects the inspector shows, both lists ascending: the `page` largest of the dominator
// tree, best first (each one's dominator is among them), and every object on a suspect's
// path; `in_report` keeps the first `report` of the largest and the suspects' objects.
struct InspectedNodes {
    std::vector<graph::NodeId> all, in_report;
};
InspectedNodes inspected_nodes(const Findings& f, std::size_t report, std::size_t page);

// What the value pass reads for these analyses: the records of `nodes`, and every thread.
ValueRequest value_request(NodeAddresses addresses, std::vector<graph::NodeId> nodes);

void find_threads(const Findings& f, const DumpValues& values, ContentFindings& out);
// The threads a javacore lists (PHD, classic text): names, states and frames; retained bytes
// of the Thread object when the javacore names it. No locals: a javacore has none.
void javacore_threads(const Findings& f, std::span<const Javacore::Thread> threads, ContentFindings& out);
void find_system_properties(const DumpValues& values, ContentFindings& out);
void inspect_objects(const Findings& f, const DumpValues& values, const InspectedNodes& nodes, ContentFindings& out);
// Each collection's capacity: the length of its backing array.
std::vector<std::optional<std::uint32_t>> collection_capacities(const Findings& f, const DumpValues& values);

}  // namespace heapgraph::analysis
