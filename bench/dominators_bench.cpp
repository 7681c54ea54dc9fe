// Dominators + retained sizes on a heap-shaped graph (bench/heap_shape.h): vertices (objects)
// per second, the condensed share (the objects the general algorithm searched), and the peak
// resident bytes per vertex while they run (VmHWM after resetting it through
// /proc/self/clear_refs; the graph's CSRs stay resident throughout and count). Each run takes
// copies of the CSRs, made while the clock is stopped, and frees them as it goes, as the
// CLI's step does (the search rewrites the referrer rows in place).
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>

#include "heap_shape.h"

namespace {

std::uint64_t status_bytes(const char* key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(key, 0) == 0) return std::stoull(line.substr(std::string(key).size())) * 1024;
    return 0;
}

std::uint64_t csr_bytes(const heapgraph::graph::Csr& csr) {
    return csr.offset_bytes() + csr.targets.size() * sizeof(csr.targets[0]);
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

void dominators(benchmark::State& state) {
    const auto vertices = static_cast<std::uint32_t>(state.range(0));
    heapgraph::graph::HeapGraph g = heapgraph::graph::build_heap_graph(heapgraph::bench::heap_shaped(vertices));
    std::uint64_t peak = 0, extra = 0, condensed = 0, reached = 0;
    for (auto _ : state) {
        state.PauseTiming();
        heapgraph::graph::Csr out = g.out, in = g.in;
        reset_peak_rss();
        std::uint64_t before = status_bytes("VmRSS:");
        state.ResumeTiming();
        auto tree = heapgraph::graph::compute_dominators_releasing(out, in, g.root_nodes, g.shallow_bytes);
        benchmark::DoNotOptimize(tree.idom.data());
        state.PauseTiming();
        condensed = tree.condensed_nodes;
        reached = tree.reached;
        peak = std::max(peak, status_bytes("VmHWM:"));
        extra = std::max(extra, status_bytes("VmHWM:") - before);
        state.ResumeTiming();
    }
    // The budget counts the CSR (both directions) and what the dominator step adds at its
    // peak, past the copies it frees as it goes; the process peak also holds the node
    // attributes (kind, class, shallow size).
    state.counters["csr_bytes/vertex"] = static_cast<double>(csr_bytes(g.out) + csr_bytes(g.in)) / vertices;
    state.counters["dom_peak_bytes/vertex"] = static_cast<double>(extra) / vertices;
    state.counters["vertices/s"] = benchmark::Counter(static_cast<double>(vertices) * state.iterations(),
                                                      benchmark::Counter::kIsRate);
    state.counters["edges"] = static_cast<double>(g.out.targets.size());
    // The share of reached objects the general algorithm searched (shared objects and roots);
    // the rest take their one referrer as immediate dominator.
    state.counters["condensed_share"] = reached ? static_cast<double>(condensed) / static_cast<double>(reached) : 0;
    state.counters["process_peak_bytes/vertex"] = static_cast<double>(peak) / vertices;
}

}  // namespace

BENCHMARK(dominators)->Arg(1'000'000)->Arg(20'000'000)->Unit(benchmark::kSecond)->UseRealTime();
