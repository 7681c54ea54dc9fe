#include "ibm_sink.h"

#include <set>

namespace heapgraph {

std::uint64_t align8(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }

std::optional<std::uint64_t> ibm_object_bytes(ObjectKind kind, std::uint64_t given, std::uint64_t length,
                                              std::uint8_t element_type, std::uint32_t word_bytes) {
    if (given) return given;
    if (kind == ObjectKind::instance) return std::nullopt;
    std::uint64_t element = kind == ObjectKind::object_array ? word_bytes : basic_type_size(element_type, 8);
    return align8(16 + length * element);
}

std::string IbmClassNamer::name_of(ObjectId class_id) {
    auto named = without_records.find(class_id);
    if (named != without_records.end()) return java_class_name(named->second);
    return "<unknown class " + hex_offset(class_id) + ">";
}

std::vector<std::pair<ObjectId, std::string>> IbmClassNamer::stand_ins() const {
    std::vector<std::pair<ObjectId, std::string>> out;
    for (const auto& [id, name] : without_records) out.emplace_back(id, java_class_name(name));
    return out;  // in no order: each id is distinct, so the builder's aliases do not depend on it
}

LoadedDump build_ibm_heap(IbmHeap heap, DumpInfo& info) {
    HeapParts parts;
    InferredParts inferred{std::move(heap.javacore), {}};
    std::set<std::pair<ObjectKind, ObjectId>> keyed;
    for (IbmChunk& chunk : heap.chunks) {
        for (HeapClass& c : chunk.classes) parts.classes.push_back(std::move(c));
        for (std::string& name : chunk.raw_names) inferred.raw_names.push_back(std::move(name));
        // The classes objects name join the table in the order of first use, as when
        // each object's class was looked up in turn.
        for (const ClassKeyRef& key : chunk.block.class_keys)
            if (keyed.emplace(key.kind, key.id).second) parts.class_keys.push_back({key.kind, key.id});
        parts.blocks.push_back(std::move(chunk.block));
    }
    heap.chunks.clear();
    parts.namer = std::move(heap.namer);
    parts.objects_name_records = true;
    parts.record_name = heap.record_name;
    parts.progress = std::move(heap.progress);
    parts.limits = heap.limits;
    parts.null_address = "places an object at address 0, which is null";
    parts.inferred = &inferred;
    parts.warnings.add("phd_class_refs_dropped", heap.class_refs_dropped,
                       "J9 writes an object's class as its first reference: dropped, as DTFJ does");
    LoadedDump dump = build_heap(parts, info);
    if (inferred.javacore) dump.javacore_threads = std::move(inferred.javacore->threads);
    return dump;
}

std::optional<Javacore> read_javacore_option(const LoadOptions& options) {
    if (options.javacore.empty()) return std::nullopt;
    // Opened as a dump is: a FIFO, a directory or a missing file is one line naming it.
    return read_javacore(read_regular_file(options.javacore, "--javacore "));
}

}  // namespace heapgraph
