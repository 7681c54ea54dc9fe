// Cuts one heap dump (a HEAP DUMP record, or a run of HEAP DUMP SEGMENTs) into chunks of
// whole sub-records, one chunk per call, asking the decoder where each sub-record ends
// (a fast boundary scan: a few header bytes per sub-record). A sub-record that continues
// into the next segment (Android does this) is copied into a chunk of its own. Class dumps
// met on the way are read here, so decoders get layouts before the instances that need them.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "formats.h"

namespace heapgraph {

struct SegmentSpan {
    std::uint64_t offset = 0;  // body offset in the file
    std::uint64_t length = 0;
};

// Where a chunk was cut: a run of whole sub-records in one segment, or a sub-record that
// continues into later segments (copied whole when the chunk is made).
struct ChunkCut {
    std::uint64_t pos = 0, length = 0;  // file offset; length 0: a straddling sub-record
    std::size_t segment = 0;
};

class HeapChunker {
public:
    HeapChunker(Bytes file, std::vector<SegmentSpan> segments, std::uint32_t id_size,
                std::uint64_t target_chunk_bytes);
    // The same chunks again, as an earlier chunker cut them (its cuts()): no walk over the
    // sub-records, which on a 2 GB dump cost a serial second in each later pass.
    HeapChunker(Bytes file, std::vector<SegmentSpan> segments, std::uint32_t id_size, std::vector<ChunkCut> plan);

    // The next chunk, std::nullopt after the last one, or the first malformed sub-record.
    std::variant<std::optional<HeapChunk>, DecodeError> next();

    // Class dumps read so far, in file order; grows as chunks are cut.
    const std::vector<ClassDump>& classes() const { return classes_; }
    std::uint64_t total_bytes() const { return total_; }
    std::uint64_t done_bytes() const { return done_; }

    // --allow-truncated: the last segment was cut by the end of the file, so a sub-record
    // that runs past its end ends the dump instead of failing it.
    void set_last_segment_cut() { last_segment_cut_ = true; }
    // Where the dump stopped (the file offset of the first incomplete sub-record), if it did.
    std::optional<std::uint64_t> stopped_at() const { return stopped_at_; }
    // The chunks cut so far, in order.
    std::vector<ChunkCut> take_cuts() { return std::move(cuts_); }

private:
    std::variant<std::optional<HeapChunk>, DecodeError> straddle(std::uint64_t pos);
    std::variant<std::optional<HeapChunk>, DecodeError> replay();
    HeapChunk run_of(std::uint64_t run, std::uint64_t length);
    void read_classes(Bytes bytes, std::uint64_t pos, std::uint64_t size, const HeapChunk* chunk);

    Bytes file_;
    std::vector<SegmentSpan> segments_;
    std::uint32_t id_size_;
    std::uint64_t target_;
    std::size_t segment_ = 0;
    std::uint64_t pos_ = 0;
    std::uint64_t total_ = 0, done_ = 0;
    std::vector<ClassDump> classes_;
    bool last_segment_cut_ = false;
    std::optional<std::uint64_t> stopped_at_;
    std::vector<ChunkCut> cuts_;
    std::optional<std::vector<ChunkCut>> plan_;  // replaying an earlier chunker's cuts
    std::size_t planned_ = 0;                   // the next cut of plan_
};

}  // namespace heapgraph
