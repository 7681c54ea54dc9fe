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

// A class's name as its LOAD CLASS record gives it: a string id, and where the record lies.
struct ClassNameRef {
    ObjectId name_id = 0;
    std::uint64_t record_offset = 0;
};

struct HprofParts {
    const std::unordered_map<ObjectId, std::string_view>& strings;  // modified UTF-8, as dumped
    const std::unordered_map<ObjectId, ClassNameRef>& class_names;  // by class id
    std::vector<ClassDump> classes;  // in file order: class ordinal i+1 is classes[i]
    std::vector<EdgeBlock> blocks;   // in file order; freed once the CSR is built
    Bytes file = {};                 // the whole file: referents are read back from it
    // Set by build_hprof_graph: instances kept without their fields (a cut dump lost their
    // class dumps), and how many classes they belong to.
    std::uint64_t unreadable_instances = 0, unreadable_classes = 0;
};

// Also sets info.compressed_oops, info.size_model and info.sub_records.
LoadedDump build_hprof_graph(HprofParts& parts, DumpInfo& info, const LoadOptions& options);

}  // namespace heapgraph
