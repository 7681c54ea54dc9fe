// Turns the decoded HPROF blocks into the heap graph: dense node ids in address order,
// shallow sizes from the size model, the class table, the outgoing CSR and GC roots.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "edge_blocks.h"
#include "formats.h"
#include "pipeline.h"

namespace heapgraph {

struct HprofParts {
    const std::unordered_map<ObjectId, std::string_view>& strings;
    const std::unordered_map<ObjectId, ObjectId>& class_name_ids;
    std::vector<ClassDump> classes;  // in file order: class ordinal i+1 is classes[i]
    std::vector<EdgeBlock> blocks;   // in file order; freed once the CSR is built
    Bytes file = {};                 // the whole file: referents are read back from it
};

// Also sets info.compressed_oops, info.size_model and info.sub_records.
LoadedDump build_hprof_graph(HprofParts& parts, DumpInfo& info, const LoadOptions& options);

}  // namespace heapgraph
