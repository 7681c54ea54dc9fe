// HeapChunker: a replay of the load's cuts gives the later passes the same chunks as a walk.
#include <algorithm>

#include <doctest/doctest.h>

#include "../test_support.h"
#include "hprof_chunker.h"

using namespace heapgraph;
using test::ByteBuilder;

namespace {

struct Cut {
    std::vector<std::uint8_t> bytes;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;
    bool operator==(const Cut&) const = default;
};

std::vector<Cut> all_chunks(HeapChunker& chunker) {
    std::vector<Cut> out;
    for (;;) {
        auto next = chunker.next();
        auto* chunk = std::get_if<std::optional<HeapChunk>>(&next);
        REQUIRE(chunk);
        if (!*chunk) return out;
        Cut& cut = out.emplace_back();
        cut.bytes.assign((*chunk)->bytes.begin(), (*chunk)->bytes.end());
        for (const HeapChunk::Piece& p : (*chunk)->pieces) cut.pieces.push_back({p.chunk_pos, p.file_offset});
    }
}

}  // namespace

TEST_CASE("HeapChunker: replaying the cuts gives the walk's chunks, a sub-record split across segments too") {
    // Three segments (4-byte ids), each after a 9-byte record header as in a file: roots, then
    // roots and a primitive array whose elements continue into the third segment, then roots.
    ByteBuilder b;
    b.id_size = 4;
    auto header = [&] { b.u1(0x1C).u4(0).u4(0); };
    std::vector<SegmentSpan> segments;
    header();
    segments.push_back({b.size(), 0});
    b.u1(0xFF).id(0x10).u1(0xFF).id(0x14);
    segments.back().length = b.size() - segments.back().offset;
    header();
    segments.push_back({b.size(), 0});
    b.u1(0xFF).id(0x18);
    b.u1(0x23).id(0x20).u4(0).u4(6).u1(8);  // byte[6]: 4 elements here, 2 in the next segment
    b.u1(1).u1(2).u1(3).u1(4);
    segments.back().length = b.size() - segments.back().offset;
    header();
    segments.push_back({b.size(), 0});
    b.u1(5).u1(6);
    b.u1(0xFF).id(0x30).u1(0xFF).id(0x34);
    segments.back().length = b.size() - segments.back().offset;

    HeapChunker walked(Bytes(b.bytes), segments, 4, 8);  // tiny chunks: every few sub-records
    const std::vector<Cut> expected = all_chunks(walked);
    const std::vector<ChunkCut> cuts = walked.take_cuts();
    REQUIRE(cuts.size() == expected.size());
    // The split array is a chunk of its own, copied whole: 1 + 4 + 4 + 4 + 1 + 6 bytes.
    const auto split = std::find_if(expected.begin(), expected.end(), [](const Cut& c) { return c.pieces.size() == 2; });
    REQUIRE(split != expected.end());
    CHECK(split->bytes.size() == 20);
    CHECK(cuts[static_cast<std::size_t>(split - expected.begin())].length == 0);

    HeapChunker replayed(Bytes(b.bytes), segments, 4, cuts);
    CHECK(all_chunks(replayed) == expected);
    CHECK(replayed.done_bytes() == walked.done_bytes());
}
