// A loaded dump written as classic text, for the tests that read classic files of real heaps.
#pragma once

#include <sstream>
#include <string>

#include "pipeline.h"
#include "reports.h"

namespace heapgraph::test {

inline std::string classic_of(const LoadedDump& dump, bool sdk = false, const std::string& version = "test") {
    std::ostringstream out;
    reports::write_classic({dump.graph, dump.addresses.addresses(), version, dump.info.id_size == 4 ? 4u : 8u, sdk}, out);
    return out.str();
}

}  // namespace heapgraph::test
