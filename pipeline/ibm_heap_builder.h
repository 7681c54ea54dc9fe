// Turns the records of an IBM dump (PHD, or classic text mapped onto the same records) into
// the heap graph, with the class loaders and GC roots such dumps do not record, worked out
// as OpenJ9's DTFJ and Eclipse MAT do (pipeline/ibm_heap_builder.cpp, docs/heap-graph.md).
#pragma once

#include <optional>
#include <unordered_map>

#include "formats.h"
#include "pipeline.h"

namespace heapgraph {

struct IbmHeap {
    std::vector<PhdRecords>& runs;  // in file order
    std::uint32_t word_bytes = 4;   // for estimating array sizes the records do not give
    std::optional<Javacore> javacore;
    // Classic text names an object's class, which may have no class record: such objects
    // carry a stand-in class address (odd, so never a real object) found here with the name.
    std::unordered_map<ObjectId, std::string> classes_without_records;
    std::string record_name = "PHD record";  // for errors: "classic record"
};

// `info` gains the record counts by kind.
LoadedDump build_ibm_heap(IbmHeap heap, DumpInfo& info);

// The javacore named by --javacore, or nullopt when none is.
std::optional<Javacore> read_javacore_option(const LoadOptions& options, const DumpInfo& info);

}  // namespace heapgraph
