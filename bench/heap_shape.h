// A generator of heap-shaped graphs for the graph benchmarks: class objects that are roots
// and receive an edge from every instance, long singly and doubly linked lists (deep
// dominator chains and cycles), wide arrays, binary trees, and a sprinkle of shared
// references (diamonds). Deterministic for a given size and seed.
#pragma once

#include <random>

#include "graph.h"

namespace heapgraph::bench {

inline graph::HeapInput heap_shaped(std::uint32_t vertices, std::uint32_t seed = 42) {
    graph::HeapInput in;
    std::mt19937 rng(seed);
    const std::uint32_t classes = std::max<std::uint32_t>(1, vertices / 20000);
    in.types.assign(vertices, graph::NodeKind::instance, 0);
    in.shallow_bytes.assign(vertices, 24);
    in.root_kind_names = {"sticky_class", "jni_global"};
    for (graph::NodeId c = 0; c < classes; ++c) {
        in.types.set(c, graph::NodeKind::class_object, 0);
        in.roots.push_back({c, 0, true});
    }
    auto add = [&](graph::NodeId from, graph::NodeId to) { in.edges.push_back({from, to}); };
    graph::NodeId next = classes;
    while (next < vertices) {
        graph::NodeId holder = static_cast<graph::NodeId>(rng() % classes);  // a static field
        std::uint32_t shape = rng() % 4;
        std::uint32_t size = std::min<std::uint32_t>(vertices - next, 1000 + rng() % 200000);
        graph::NodeId first = next;
        add(holder, first);
        for (graph::NodeId v = first; v < first + size; ++v) {
            add(v, static_cast<graph::NodeId>(rng() % classes));  // instance -> class
            graph::NodeId i = v - first;
            if (shape == 0 && i + 1 < size) add(v, v + 1);                       // linked list
            if (shape == 1 && i + 1 < size) add(v, v + 1), add(v + 1, v);        // doubly linked
            if (shape == 2 && i > 0) add(first, v);                              // wide array
            if (shape == 3 && i > 0) add(first + (i - 1) / 2, v);                // binary tree
            if (rng() % 50 == 0) add(v, first + rng() % size);                   // shared reference
        }
        next += size;
    }
    return in;
}

}  // namespace heapgraph::bench
