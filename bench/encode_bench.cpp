// Decoding HPROF chunks into compressed edge blocks (the flow graph's decode node), in
// bytes of HPROF per second, single-threaded; `block_bytes/ref` is what the compressed
// edge list costs per reference (objects included) against 8 bytes for a plain u64.
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>

#include "edge_blocks.h"
#include "hprof_chunker.h"

namespace {

std::vector<std::uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The heap dump segments of a one-dump HPROF file (leakdemo: 1.0.2, id size 8).
std::vector<heapgraph::SegmentSpan> segments(heapgraph::Bytes file, std::uint64_t start) {
    std::vector<heapgraph::SegmentSpan> out;
    for (std::uint64_t at = start; at < file.size();) {
        auto frame = std::get<heapgraph::RecordFrame>(heapgraph::read_record_frame(file, at));
        if (frame.tag == 0x0C || frame.tag == 0x1C) out.push_back({frame.body_offset, frame.body_length});
        at = frame.body_offset + frame.body_length;
    }
    return out;
}

void encode_blocks(benchmark::State& state) {
    auto bytes = read_all(std::string(HEAPGRAPH_DATA_DIR) + "/samples/leakdemo.hprof");
    if (bytes.empty()) return state.SkipWithError("data/samples/leakdemo.hprof missing");
    auto header = std::get<heapgraph::HprofHeader>(heapgraph::read_hprof_header(bytes));
    heapgraph::HeapChunker chunker(bytes, segments(bytes, header.records_offset), header.id_size, 1u << 20);
    std::vector<heapgraph::HeapChunk> chunks;
    while (auto next = std::get<std::optional<heapgraph::HeapChunk>>(chunker.next())) chunks.push_back(std::move(*next));
    heapgraph::ClassTable table;
    table.context.id_size = header.id_size;
    for (std::uint32_t i = 0; i < chunker.classes().size(); ++i) table.ordinal.emplace(chunker.classes()[i].class_id, i + 1);
    table.context.layouts = heapgraph::ClassLayouts(chunker.classes(), header.id_size);
    std::uint64_t stream = 0, refs = 0, input = 0;
    for (auto _ : state) {
        stream = refs = input = 0;
        for (const auto& chunk : chunks) {
            auto block = std::get<heapgraph::EdgeBlock>(heapgraph::decode_to_block(chunk, table));
            stream += block.stream.size();
            refs += block.refs;
            input += chunk.bytes.size();
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * input));
    state.counters["block_bytes/ref"] = static_cast<double>(stream) / static_cast<double>(refs);
}

}  // namespace

BENCHMARK(encode_blocks)->Unit(benchmark::kMillisecond);
