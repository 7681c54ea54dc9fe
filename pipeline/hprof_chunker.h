// Splits one heap dump (a HEAP DUMP record, or a run of HEAP DUMP SEGMENTs) into chunks of
// whole sub-records, asking the decoder where each sub-record ends. A sub-record that
// continues into the next segment (Android does this) is copied into a chunk of its own.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "formats.h"

namespace heapgraph {

struct SegmentSpan {
    std::uint64_t offset = 0;  // body offset in the file
    std::uint64_t length = 0;
};

std::variant<std::vector<HeapChunk>, DecodeError> split_heap_dump(
    Bytes file, const std::vector<SegmentSpan>& segments, std::uint32_t id_size,
    std::uint64_t target_chunk_bytes);

}  // namespace heapgraph
