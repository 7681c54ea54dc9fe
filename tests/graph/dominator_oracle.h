// A reference for graph::compute_dominators: Boost.Graph's Lengauer–Tarjan (1.74) on the same
// CSR, with vertex 0 as the super root and vertex v + 1 as node v. Notes that shaped it
// (shared NOTES.md, "Boost.Graph's Lengauer–Tarjan (1.74): an oracle, not the engine"):
//   - the 3-argument lengauer_tarjan_dominator_tree presets every dfnum to 0, so an unreached
//     vertex with an edge into the reached part counts as the entry; the 7-argument overload
//     with dfnum preset to the maximum skips such predecessors, as the algorithm requires;
//   - its path compression recurses once per linked ancestor: a long cycle needs a big stack,
//     hence run_with_stack;
//   - compressed_sparse_row_graph<bidirectionalS> fails the concept check in 1.74, so the
//     oracle copies the CSR into an adjacency_list.
#pragma once

#include <pthread.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dominator_tree.hpp>

#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "graph.h"

namespace heapgraph::test {

// Immediate dominators by Boost, in compute_dominators' terms: kSuperRoot for the nodes the
// super root immediately dominates, kUnreached for the nodes no root reaches.
inline std::vector<graph::NodeId> boost_idoms(const graph::Csr& out, std::span<const graph::NodeId> roots) {
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
    using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
    using Size = boost::graph_traits<Graph>::vertices_size_type;
    const std::size_t nodes = out.rows();
    Graph g(nodes + 1);
    for (graph::NodeId root : roots) boost::add_edge(0, root + 1, g);
    for (std::size_t v = 0; v < nodes; ++v)
        for (graph::NodeId w : out.of(static_cast<graph::NodeId>(v))) boost::add_edge(v + 1, w + 1, g);

    const std::size_t vertices = boost::num_vertices(g);
    const Vertex null = boost::graph_traits<Graph>::null_vertex();
    auto index = boost::get(boost::vertex_index, g);
    std::vector<Size> dfnum(vertices, std::numeric_limits<Size>::max());
    std::vector<Vertex> parent(vertices, null), by_dfnum(vertices, null), idom(vertices, null);
    const Vertex entry = 0;
    boost::lengauer_tarjan_dominator_tree(g, entry, index, boost::make_iterator_property_map(dfnum.begin(), index),
                                          boost::make_iterator_property_map(parent.begin(), index), by_dfnum,
                                          boost::make_iterator_property_map(idom.begin(), index));

    std::vector<graph::NodeId> result(nodes, graph::kUnreached);
    for (std::size_t v = 0; v < nodes; ++v) {
        Vertex d = idom[v + 1];
        if (d == null) continue;
        result[v] = d == 0 ? graph::kSuperRoot : static_cast<graph::NodeId>(d - 1);
    }
    return result;
}

// Runs `work` on a new thread with `stack_bytes` of stack, waits for it, and rethrows what it
// threw. Assertions belong on the calling thread.
inline void run_with_stack(std::size_t stack_bytes, const std::function<void()>& work) {
    struct Job {
        const std::function<void()>* work;
        std::exception_ptr error;
    } job{&work, nullptr};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t thread;
    if (rc == 0)
        rc = pthread_create(
            &thread, &attr,
            [](void* arg) -> void* {
                auto* j = static_cast<Job*>(arg);
                try {
                    (*j->work)();
                } catch (...) {
                    j->error = std::current_exception();
                }
                return nullptr;
            },
            &job);
    pthread_attr_destroy(&attr);
    if (rc != 0) throw std::runtime_error("cannot start a thread with a big stack: error " + std::to_string(rc));
    pthread_join(thread, nullptr);
    if (job.error) std::rethrow_exception(job.error);
}

// boost_idoms on a thread with a 1 GiB stack, for graphs with long paths.
inline std::vector<graph::NodeId> boost_idoms_big_stack(const graph::Csr& out, std::span<const graph::NodeId> roots) {
    std::vector<graph::NodeId> result;
    run_with_stack(std::size_t{1} << 30, [&] { result = boost_idoms(out, roots); });
    return result;
}

}  // namespace heapgraph::test
