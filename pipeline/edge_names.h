// What name_edges (pipeline/edge_names.cpp) needs to read an HPROF dump's records back after
// the graph is built: the bytes, kept mapped by `owner`, and where the chosen heap dump lies.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats.h"
#include "hprof_chunker.h"

namespace heapgraph {

class MappedFile;

// A STACK FRAME record, with its names resolved.
struct StackFrame {
    std::string class_name, method, signature, source;
    std::int32_t line = 0;  // > 0 a line; 0 none, -1 unknown, -2 compiled, -3 native (HPROF)
};
// A STACK TRACE record: its frames, top first.
struct StackTrace {
    std::uint32_t serial = 0, thread_serial = 0;
    std::vector<StackFrame> frames;
};

struct DumpSource {
    Bytes file;                          // the whole (inflated) HPROF
    std::vector<SegmentSpan> segments;   // of the chosen heap dump
    std::uint32_t id_size = 0;
    std::vector<ClassDump> classes;      // the dump's class dumps: instance layouts
    bool release_pages = false;          // `file` is a file mapping whose pages may be dropped
    std::shared_ptr<const void> owner;   // keeps `file` mapped (null: the caller's memory)
    const MappedFile* mapping = nullptr; // `file`'s mapping, kept by `owner`: checked intact after reading
    // The names of every instance field and static, by string id: the value reader finds
    // fields by name (pipeline/values.cpp).
    std::unordered_map<ObjectId, std::string> field_names;
    // The dump's STACK TRACE records, by serial, their frames' names resolved when the
    // top-level records were read (threads: analysis/objects.cpp).
    std::vector<StackTrace> stack_traces;
    // The load's chunks, for the later passes to cut the same without walking the
    // sub-records again (empty: walk them).
    std::vector<ChunkCut> chunks;
};

// A chunker for a later pass over `source`: the load's chunks when known.
inline HeapChunker chunker_for(const DumpSource& source, std::uint64_t target_chunk_bytes) {
    if (source.chunks.empty()) return HeapChunker(source.file, source.segments, source.id_size, target_chunk_bytes);
    return HeapChunker(source.file, source.segments, source.id_size, source.chunks);
}

// Calls visit(pos, size) for each whole sub-record of `bytes`, in order, while visit returns
// true. The passes that read a dump back (edge names, values) walk chunks the load already
// checked, so a malformed or cut sub-record (a file changed since) just ends the walk.
template <typename Visit>
void for_each_sub_record(Bytes bytes, std::uint32_t id_size, Visit&& visit) {
    for (std::uint64_t pos = 0; pos < bytes.size();) {
        auto size = sub_record_size(bytes, pos, id_size);
        auto* whole = std::get_if<std::uint64_t>(&size);
        if (!whole || *whole == 0 || !visit(pos, *whole)) return;
        pos += *whole;
    }
}

}  // namespace heapgraph
