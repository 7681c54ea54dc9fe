// Decode throughput of whole dumps through the pipeline (frame, split, two decode passes,
// graph build), in bytes of HPROF per second. Inputs come from data/; a missing file skips.
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "pipeline.h"

namespace {

std::vector<std::uint8_t> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void load_hprof(benchmark::State& state, const char* relative) {
    std::vector<std::uint8_t> bytes = read_all(std::string(HEAPGRAPH_DATA_DIR) + "/" + relative);
    if (bytes.empty()) {
        state.SkipWithError("input dump missing");
        return;
    }
    heapgraph::LoadOptions options;
    options.threads = static_cast<unsigned>(state.range(0));
    for (auto _ : state) {
        auto dump = heapgraph::load_dump_bytes(bytes, relative, options);
        benchmark::DoNotOptimize(dump.graph.out.targets.data());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes.size()));
}

}  // namespace

BENCHMARK_CAPTURE(load_hprof, leakdemo, "samples/leakdemo.hprof")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_hprof, android, "hprof-android/leak_service_binder.hprof")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_hprof, jdk6_x64, "hprof/sun_jdk6_18_x64.hprof")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
