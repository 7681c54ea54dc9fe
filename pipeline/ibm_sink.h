// The sink driver half PHD and classic text share: their chunks' records go through a
// BlockSink into EdgeBlocks beside their class records, and the chunks, in file order,
// become HeapParts for the one builder, which works out the loaders and roots such dumps
// do not record (inferred_roots.h).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "heap_builder.h"
#include "inferred_roots.h"

namespace heapgraph {

// One decoded run (PHD) or block (classic text) in the sink's form. Objects name their
// class by id (an object array by its element class); sizes the records give are in the
// block.
struct IbmChunk {
    EdgeBlock block;
    std::vector<HeapClass> classes;
    std::vector<std::string> raw_names;  // of `classes`, as written
};

// The shallow size of an object the records give, or for an array whose record gives none
// an estimate of J9's layout (16-byte header, word-sized references), rounded to the heap's
// 8-byte alignment; nullopt for an instance, which takes its class record's size.
std::optional<std::uint64_t> ibm_object_bytes(ObjectKind kind, std::uint64_t given, std::uint64_t length,
                                              std::uint8_t element_type, std::uint32_t word_bytes);
std::uint64_t align8(std::uint64_t bytes);

// Classes with no record: classic text names them by type (`without_records`, by the
// stand-in ids its driver gave them), PHD gives only their address.
class IbmClassNamer final : public ClassNamer {
public:
    std::string name_of(ObjectId class_id) override;
    std::vector<std::pair<ObjectId, std::string>> stand_ins() const override;
    std::unordered_map<ObjectId, std::string> without_records;  // as written
};

struct IbmHeap {
    std::vector<IbmChunk> chunks;  // in file order
    std::optional<Javacore> javacore;
    std::unique_ptr<IbmClassNamer> namer = std::make_unique<IbmClassNamer>();
    std::string record_name;       // "PHD record", "classic record"
    std::uint64_t class_refs_dropped = 0;  // PHD: J9's class "references", dropped as DTFJ does
    std::function<void(const ProgressEvent&)> progress;  // the loader's
    DumpLimits limits;                                   // LoadOptions::limits
};

// Builds the heap from the chunks (the one builder with its inferred-roots step).
LoadedDump build_ibm_heap(IbmHeap heap, DumpInfo& info);

// The javacore named by --javacore, or nullopt when none is.
std::optional<Javacore> read_javacore_option(const LoadOptions& options);

}  // namespace heapgraph
