// Edge list -> CSR (outgoing and incoming) -> reachability from the GC roots.
// The CSR build follows gapbs' MakeCSR in named steps: count degrees, prefix sum, scatter.
// Scatter keeps edge-list order within a node, so the result does not depend on threads.
#include "graph.h"

#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>

namespace heapgraph::graph {

namespace {

std::vector<std::uint64_t> count_degrees(const std::vector<Edge>& edges, std::uint32_t nodes,
                                         bool outgoing) {
    std::vector<std::uint64_t> degrees(static_cast<std::size_t>(nodes) + 1, 0);
    for (const Edge& e : edges) ++degrees[outgoing ? e.from : e.to];
    return degrees;
}

// Exclusive prefix sum in place: degrees become row offsets; the last entry is the total.
void prefix_sum(std::vector<std::uint64_t>& degrees) {
    std::uint64_t total = 0;
    for (auto& d : degrees) {
        std::uint64_t next = total + d;
        d = total;
        total = next;
    }
}

Csr make_csr(const std::vector<Edge>& edges, std::uint32_t nodes, bool outgoing) {
    Csr csr;
    csr.offsets = count_degrees(edges, nodes, outgoing);
    prefix_sum(csr.offsets);
    csr.targets.resize(edges.size());
    std::vector<std::uint64_t> next(csr.offsets.begin(), csr.offsets.end() - 1);
    for (const Edge& e : edges) {
        NodeId row = outgoing ? e.from : e.to;
        csr.targets[next[row]++] = outgoing ? e.to : e.from;
    }
    return csr;
}

}  // namespace

// A depth-first walk with an explicit stack. Serial on purpose: a parallel BFS paid more in
// atomics and frontier copies than it gained, and this runs beside the transpose anyway.
std::vector<std::uint8_t> mark_reachable(const Csr& out, std::span<const NodeId> starts) {
    std::size_t nodes = out.offsets.empty() ? 0 : out.offsets.size() - 1;
    std::vector<std::uint8_t> seen(nodes, 0);
    std::vector<NodeId> stack;
    for (NodeId s : starts)
        if (!seen[s]) seen[s] = 1, stack.push_back(s);
    while (!stack.empty()) {
        NodeId v = stack.back();
        stack.pop_back();
        for (NodeId w : out.of(v))
            if (!seen[w]) seen[w] = 1, stack.push_back(w);
    }
    return seen;
}

// Incoming rows from outgoing ones. Each worker owns a range of targets and scans every
// edge, sources ascending: no atomics, and every incoming row comes out sorted by source,
// the same for any number of workers.
Csr transpose(const Csr& out, const Progress& progress) {
    const std::size_t n = out.offsets.size() - 1;
    const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(
        static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()), n / 65536 + 1));
    auto owner_range = [&](std::size_t p) { return std::pair<NodeId, NodeId>(n * p / parts, n * (p + 1) / parts); };
    // Every worker walks all rows twice (count, then scatter); the first one draws the bar.
    const Progress none;
    auto ticker = [&](std::size_t p, std::uint64_t start) { return Ticker(p == 0 ? progress : none, 2 * n, start); };
    Csr in;
    in.offsets.assign(n + 1, 0);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        auto [lo, hi] = owner_range(p);
        Ticker tick = ticker(p, 0);
        for (NodeId v = 0; v < n; ++v, tick.step())
            for (NodeId w : out.of(v))
                if (w >= lo && w < hi) ++in.offsets[w + 1];
    });
    for (std::size_t v = 0; v < n; ++v) in.offsets[v + 1] += in.offsets[v];
    in.targets.resize(out.targets.size());
    std::vector<std::uint64_t> cursor(in.offsets.begin(), in.offsets.end() - 1);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        auto [lo, hi] = owner_range(p);
        Ticker tick = ticker(p, n);
        for (NodeId v = 0; v < n; ++v, tick.step())
            for (NodeId w : out.of(v))
                if (w >= lo && w < hi) in.targets[cursor[w]++] = v;
    });
    if (progress) progress(2 * n, 2 * n);
    return in;
}

HeapGraph build_heap_graph(HeapInput input) {
    HeapGraph graph;
    std::uint32_t nodes = static_cast<std::uint32_t>(input.kind.size());
    graph.out = input.out ? std::move(*input.out) : make_csr(input.edges, nodes, true);
    graph.edges = graph.out.targets.size();
    graph.kind = std::move(input.kind);
    graph.class_index = std::move(input.class_index);
    graph.shallow_bytes = std::move(input.shallow_bytes);
    graph.classes = std::move(input.classes);
    graph.roots = std::move(input.roots);
    graph.root_kind_names = std::move(input.root_kind_names);
    for (const GcRoot& root : graph.roots)
        if (root.global) graph.root_nodes.push_back(root.node);
    std::sort(graph.root_nodes.begin(), graph.root_nodes.end());
    graph.root_nodes.erase(std::unique(graph.root_nodes.begin(), graph.root_nodes.end()),
                           graph.root_nodes.end());
    // Both only read the outgoing rows: the walk runs beside the transpose.
    tbb::parallel_invoke(
        [&] { graph.in = input.out ? transpose(graph.out, input.progress) : make_csr(input.edges, nodes, false); },
        [&] { graph.reachable = mark_reachable(graph.out, graph.root_nodes); });
    return graph;
}

}  // namespace heapgraph::graph
