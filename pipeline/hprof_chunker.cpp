#include "hprof_chunker.h"

namespace heapgraph {

HeapChunker::HeapChunker(Bytes file, std::vector<SegmentSpan> segments, std::uint32_t id_size,
                         std::uint64_t target_chunk_bytes)
    : file_(file), segments_(std::move(segments)), id_size_(id_size), target_(target_chunk_bytes) {
    for (const SegmentSpan& s : segments_) total_ += s.length;
    if (!segments_.empty()) pos_ = segments_[0].offset;
}

void HeapChunker::read_classes(Bytes bytes, std::uint64_t pos, std::uint64_t size, const HeapChunk* chunk) {
    if (bytes[pos] != 0x20) return;
    classes_.push_back(read_class_dump_at(bytes.first(pos + size), pos, id_size_));
    classes_.back().file_offset = chunk ? chunk->file_offset(pos) : pos;
}

HeapChunker::HeapChunker(Bytes file, std::vector<SegmentSpan> segments, std::uint32_t id_size,
                         std::vector<ChunkCut> plan)
    : HeapChunker(file, std::move(segments), id_size, 0) {
    plan_ = std::move(plan);
}

HeapChunk HeapChunker::run_of(std::uint64_t run, std::uint64_t length) {
    HeapChunk chunk;
    chunk.bytes = file_.subspan(run, length);
    chunk.pieces = {{0, run}};
    done_ += length;
    return chunk;
}

std::variant<std::optional<HeapChunk>, DecodeError> HeapChunker::replay() {
    if (planned_ == plan_->size()) return std::optional<HeapChunk>();
    const ChunkCut cut = (*plan_)[planned_++];
    if (cut.length) return std::optional<HeapChunk>(run_of(cut.pos, cut.length));
    segment_ = cut.segment;
    return straddle(cut.pos);
}

std::variant<std::optional<HeapChunk>, DecodeError> HeapChunker::next() {
    if (plan_) return replay();
    while (segment_ < segments_.size()) {
        const std::uint64_t end = segments_[segment_].offset + segments_[segment_].length;
        const Bytes view = file_.first(end);
        const std::uint64_t run = pos_;
        while (pos_ < end) {
            auto size = sub_record_size(view, pos_, id_size_);
            if (auto* error = std::get_if<DecodeError>(&size)) return *error;
            std::uint64_t whole = std::get<std::uint64_t>(size);
            if (whole == 0) break;  // continues in the next segment
            if (pos_ > run && pos_ - run + whole > target_) break;
            read_classes(view, pos_, whole, nullptr);
            pos_ += whole;
        }
        if (pos_ > run) {  // a run of whole sub-records
            cuts_.push_back({run, pos_ - run, segment_});
            return std::optional<HeapChunk>(run_of(run, pos_ - run));
        }
        if (pos_ < end) {
            const ChunkCut cut{pos_, 0, segment_};
            auto chunk = straddle(pos_);
            if (auto* made = std::get_if<std::optional<HeapChunk>>(&chunk); made && *made) cuts_.push_back(cut);
            return chunk;
        }
        if (++segment_ < segments_.size()) pos_ = segments_[segment_].offset;
    }
    return std::optional<HeapChunk>();
}

// Copies the sub-record at `pos` and the following segments' bytes until it is whole.
std::variant<std::optional<HeapChunk>, DecodeError> HeapChunker::straddle(std::uint64_t pos) {
    HeapChunk chunk;
    const SegmentSpan& first = segments_[segment_];
    auto& buffer = chunk.owned;
    buffer.assign(file_.begin() + pos, file_.begin() + first.offset + first.length);
    chunk.pieces = {{0, pos}};
    for (std::size_t next = segment_ + 1; next < segments_.size(); ++next) {
        std::uint64_t before = buffer.size();
        const SegmentSpan& seg = segments_[next];
        buffer.insert(buffer.end(), file_.begin() + seg.offset, file_.begin() + seg.offset + seg.length);
        chunk.pieces.push_back({before, seg.offset});
        auto size = sub_record_size(buffer, 0, id_size_);
        if (auto* error = std::get_if<DecodeError>(&size)) {
            error->offset = pos;
            return *error;
        }
        std::uint64_t whole = std::get<std::uint64_t>(size);
        if (whole == 0) continue;
        buffer.resize(whole);
        chunk.bytes = buffer;
        read_classes(chunk.bytes, 0, whole, &chunk);
        done_ += whole;
        segment_ = next;
        pos_ = seg.offset + (whole - before);
        return std::optional<HeapChunk>(std::move(chunk));
    }
    if (last_segment_cut_) {
        stopped_at_ = pos;
        return std::optional<HeapChunk>();
    }
    return DecodeError{pos, hprof_sub_tag_name(file_[pos]),
                       "runs past the end of the last heap dump segment at " +
                           hex_offset(first.offset + first.length)};
}

}  // namespace heapgraph
