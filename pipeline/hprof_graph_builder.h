// Turns decoded HPROF records into the heap graph's input: dense node ids in address order,
// shallow sizes from the size model, the class table, edges and GC roots.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats.h"
#include "pipeline.h"

namespace heapgraph {

struct HprofParts {
    const std::unordered_map<ObjectId, std::string_view>& strings;
    const std::unordered_map<ObjectId, ObjectId>& class_name_ids;
    std::vector<ClassDump> classes;
    HprofContext context;
    std::vector<HeapRecords> records;  // one per chunk, in file order
};

// Also sets info.compressed_oops and info.sub_records.
LoadedDump build_hprof_graph(const HprofParts& parts, DumpInfo& info);

}  // namespace heapgraph
