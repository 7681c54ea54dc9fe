// HPROF -> heap graph, in these steps:
//   1. scan_top_level: frame every top-level record; keep strings and LOAD CLASS names;
//      group HEAP DUMP / HEAP DUMP SEGMENT records into heap dumps.
//   2. split_heap_dump: cut the chosen dump into chunks of whole sub-records.
//   3. pass 1 (parallel): class dumps -> class layouts.
//   4. pass 2 (parallel): objects, references and roots of every chunk.
//   5. choose the size model (compressed oops) from the objects' address spacing.
//   6. number the nodes in address order, map references and roots to node ids, add
//      MAT's implicit edges (docs/heap-graph.md), and build the graph.
#include "hprof_loader.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <unordered_map>

#include "hprof_chunker.h"
#include "hprof_graph_builder.h"

namespace heapgraph {

namespace {

constexpr std::uint64_t kChunkBytes = 8u << 20;

struct TopLevel {
    HprofHeader header;
    std::unordered_map<ObjectId, std::string_view> strings;
    std::unordered_map<ObjectId, ObjectId> class_name_ids;  // class id -> name string id
    std::vector<std::vector<SegmentSpan>> dumps;
    std::uint64_t unterminated_segment_runs = 0;
    std::uint64_t stray_dump_ends = 0;
};

[[noreturn]] void fail(const DumpInfo& info, DecodeError error) {
    throw DumpError(info.path, error);
}

template <typename T>
T take(const DumpInfo& info, std::variant<T, DecodeError>&& result) {
    if (auto* error = std::get_if<DecodeError>(&result)) fail(info, std::move(*error));
    return std::move(std::get<T>(result));
}

void keep_top_record(TopLevel& top, const TopRecord& record) {
    if (auto* s = std::get_if<StringRecord>(&record)) top.strings[s->id] = s->text;
    if (auto* c = std::get_if<LoadClassRecord>(&record)) top.class_name_ids[c->class_id] = c->name_id;
}

// Heap dumps: one HEAP DUMP record each, or a run of segments closed by HEAP DUMP END.
void group_heap_record(TopLevel& top, const RecordFrame& frame, bool& in_segments) {
    if (frame.tag == 0x0C) {
        in_segments = false;
        top.dumps.push_back({{frame.body_offset, frame.body_length}});
    } else if (frame.tag == 0x1C) {
        if (!in_segments) top.dumps.emplace_back();
        in_segments = true;
        top.dumps.back().push_back({frame.body_offset, frame.body_length});
    } else if (frame.tag == 0x2C) {
        if (!in_segments) ++top.stray_dump_ends;
        in_segments = false;
    }
}

TopLevel scan_top_level(Bytes file, DumpInfo& info) {
    TopLevel top;
    top.header = take(info, read_hprof_header(file));
    bool in_segments = false;
    for (std::uint64_t offset = top.header.records_offset; offset < file.size();) {
        RecordFrame frame = take(info, read_record_frame(file, offset));
        ++info.records[hprof_tag_name(frame.tag)];
        if (frame.tag == 0x0C || frame.tag == 0x1C || frame.tag == 0x2C) {
            if (frame.tag == 0x2C)
                take(info, decode_top_record(frame, file.subspan(frame.body_offset, 0), top.header.id_size));
            group_heap_record(top, frame, in_segments);
        } else {
            keep_top_record(top, take(info, decode_top_record(
                                                frame, file.subspan(frame.body_offset, frame.body_length),
                                                top.header.id_size)));
        }
        offset = frame.body_offset + frame.body_length;
    }
    if (in_segments) top.unterminated_segment_runs = 1;
    return top;
}

template <typename Result, typename Decode>
std::vector<Result> decode_chunks(const DumpInfo& info, const std::vector<HeapChunk>& chunks,
                                  Decode decode) {
    std::vector<std::variant<Result, DecodeError>> results(chunks.size());
    tbb::parallel_for(std::size_t{0}, chunks.size(),
                      [&](std::size_t i) { results[i] = decode(chunks[i]); });
    std::vector<Result> out;
    out.reserve(results.size());
    for (auto& result : results) out.push_back(take(info, std::move(result)));
    return out;
}

}  // namespace

LoadedDump load_hprof(Bytes file, DumpInfo info, const LoadOptions& options) {
    TopLevel top = scan_top_level(file, info);
    info.format_version = top.header.version;
    info.id_size = top.header.id_size;
    info.dumps_in_file = static_cast<std::uint32_t>(top.dumps.size());
    info.dump_index = options.dump_index;
    if (top.dumps.empty())
        fail(info, {file.size(), "end of file", "reached with no HEAP DUMP or HEAP DUMP SEGMENT record: "
                                                "the file holds no heap dump (cut short?)"});
    if (options.dump_index >= top.dumps.size())
        throw BadRequest(info.path + ": --dump-index " + std::to_string(options.dump_index) +
                         " is out of range: the file holds " + std::to_string(top.dumps.size()) +
                         " heap dump(s), numbered from 0");
    auto chunks = take(info, split_heap_dump(file, top.dumps[options.dump_index], info.id_size, kChunkBytes));

    std::uint32_t id = info.id_size;
    auto class_lists = decode_chunks<std::vector<ClassDump>>(
        info, chunks, [id](const HeapChunk& chunk) { return read_class_dumps(chunk, id); });
    std::vector<ClassDump> classes;
    for (auto& list : class_lists)
        for (auto& c : list) classes.push_back(std::move(c));

    HprofContext context;
    context.id_size = id;
    std::unordered_map<ObjectId, const ClassDump*> by_id;
    for (const ClassDump& c : classes) by_id.emplace(c.class_id, &c);
    for (const ClassDump& c : classes) context.layouts.emplace(c.class_id, make_layout(by_id, c.class_id, id));

    HprofParts parts{top.strings, top.class_name_ids, std::move(classes), std::move(context), {}};
    parts.records = decode_chunks<HeapRecords>(
        info, chunks, [&parts](const HeapChunk& chunk) { return decode_heap_chunk(chunk, parts.context); });
    chunks.clear();

    LoadedDump loaded = build_hprof_graph(parts, info);
    if (top.unterminated_segment_runs)
        loaded.warnings.push_back({"heap_dump_end_missing", top.unterminated_segment_runs,
                                   "the last heap dump segment run has no HEAP DUMP END record: "
                                   "harmless when the file is complete, a sign of truncation otherwise"});
    if (top.stray_dump_ends)
        loaded.warnings.push_back({"stray_heap_dump_end", top.stray_dump_ends,
                                   "HEAP DUMP END records with no open segment run: ignored"});
    loaded.info = std::move(info);
    return loaded;
}

}  // namespace heapgraph
