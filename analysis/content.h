// The content analyses (analysis/content.cpp): what the value reader's records say about waste.
#pragma once

#include <span>

#include "analysis.h"

namespace heapgraph::analysis {

// Fills out's duplicate strings and arrays over the objects `counted` marks (by node),
// keeping the `top` most wasteful groups of each and totals over all.
// A primitive value (`type` a BasicType, `bits` as read big-endian) as Java prints it: chars as
// the character (control characters and lone surrogates as U+XXXX), floats and doubles to
// full precision ("%.9g", "%.17g"). Shared by duplicate arrays' first elements and the
// inspector's fields.
std::string java_value_text(std::uint8_t type, std::uint64_t bits);

void find_duplicates(const graph::HeapGraph& g, const graph::NodeBits& counted,
                     NodeAddresses addresses, const DumpValues& values, std::size_t top,
                     ContentFindings& out);

}  // namespace heapgraph::analysis
