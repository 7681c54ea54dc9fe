// CSR build (out and in) plus reachability on a heap-shaped edge list, edges per second.
#include <benchmark/benchmark.h>

#include "heap_shape.h"

namespace {

void csr_build(benchmark::State& state) {
    const auto vertices = static_cast<std::uint32_t>(state.range(0));
    const heapgraph::graph::HeapInput input = heapgraph::bench::heap_shaped(vertices);
    for (auto _ : state) {
        state.PauseTiming();
        heapgraph::graph::HeapInput copy = input;
        state.ResumeTiming();
        auto g = heapgraph::graph::build_heap_graph(std::move(copy));
        benchmark::DoNotOptimize(g.out.targets.data());
    }
    state.counters["edges/s"] = benchmark::Counter(static_cast<double>(input.edges.size()) * state.iterations(),
                                                   benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(csr_build)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
