#include "hprof_chunker.h"

namespace heapgraph {

namespace {

HeapChunk file_chunk(Bytes file, std::uint64_t begin, std::uint64_t end) {
    HeapChunk chunk;
    chunk.bytes = file.subspan(begin, end - begin);
    chunk.pieces = {{0, begin}};
    return chunk;
}

struct Straddle {
    HeapChunk chunk;
    std::size_t segment;      // where the sub-record ends
    std::uint64_t resume_at;  // file offset after it
};

// Copies the sub-record at `pos` and the following segments' bytes until it is whole.
std::variant<Straddle, DecodeError> assemble(Bytes file, const std::vector<SegmentSpan>& segments,
                                             std::size_t index, std::uint64_t pos,
                                             std::uint32_t id_size) {
    Straddle out;
    const SegmentSpan& first = segments[index];
    auto& buffer = out.chunk.owned;
    buffer.assign(file.begin() + pos, file.begin() + first.offset + first.length);
    out.chunk.pieces = {{0, pos}};
    for (std::size_t next = index + 1; next < segments.size(); ++next) {
        std::uint64_t before = buffer.size();
        const SegmentSpan& seg = segments[next];
        buffer.insert(buffer.end(), file.begin() + seg.offset, file.begin() + seg.offset + seg.length);
        out.chunk.pieces.push_back({before, seg.offset});
        auto size = sub_record_size(buffer, 0, id_size);
        if (auto* error = std::get_if<DecodeError>(&size)) {
            error->offset = pos;
            return *error;
        }
        std::uint64_t whole = std::get<std::uint64_t>(size);
        if (whole == 0) continue;
        buffer.resize(whole);
        out.chunk.bytes = buffer;
        out.segment = next;
        out.resume_at = seg.offset + (whole - before);
        return out;
    }
    return DecodeError{pos, hprof_sub_tag_name(file[pos]),
                       "runs past the end of the last heap dump segment at " +
                           hex_offset(first.offset + first.length)};
}

}  // namespace

std::variant<std::vector<HeapChunk>, DecodeError> split_heap_dump(
    Bytes file, const std::vector<SegmentSpan>& segments, std::uint32_t id_size,
    std::uint64_t target_chunk_bytes) {
    std::vector<HeapChunk> chunks;
    std::size_t i = 0;
    std::uint64_t pos = segments.empty() ? 0 : segments[0].offset;
    while (i < segments.size()) {
        const std::uint64_t end = segments[i].offset + segments[i].length;
        const Bytes view = file.first(end);
        std::uint64_t run = pos;
        bool jumped = false;
        while (pos < end) {
            auto size = sub_record_size(view, pos, id_size);
            if (auto* error = std::get_if<DecodeError>(&size)) return *error;
            std::uint64_t whole = std::get<std::uint64_t>(size);
            if (whole == 0) {  // continues in the next segment
                if (pos > run) chunks.push_back(file_chunk(file, run, pos));
                auto straddle = assemble(file, segments, i, pos, id_size);
                if (auto* error = std::get_if<DecodeError>(&straddle)) return *error;
                auto& done = std::get<Straddle>(straddle);
                chunks.push_back(std::move(done.chunk));
                chunks.back().bytes = chunks.back().owned;  // the vector moved: re-point
                i = done.segment;
                pos = done.resume_at;
                jumped = true;
                break;
            }
            if (pos > run && pos - run + whole > target_chunk_bytes) {
                chunks.push_back(file_chunk(file, run, pos));
                run = pos;
            }
            pos += whole;
        }
        if (jumped) continue;
        if (pos > run) chunks.push_back(file_chunk(file, run, pos));
        if (++i < segments.size()) pos = segments[i].offset;
    }
    return chunks;
}

}  // namespace heapgraph
