// Leak suspects (graph/suspects.cpp): MAT's accumulation-point descent and group suspects on
// small hand-built graphs, weak edges in the path search, and the three planted leaks of
// data/gen/ThreeLeaks.java end to end through the JSON report.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <oneapi/tbb/task_arena.h>

#include "graph.h"
#include "pipeline.h"
#include "reports.h"
#include "test_support.h"

using namespace heapgraph;
using graph::NodeId;

namespace {

// Every node an instance of class 0 ("A") or 1 ("B"), no class objects, one root record each.
graph::HeapGraph small_graph(std::vector<std::uint64_t> shallow, std::vector<std::uint32_t> classes,
                             std::vector<graph::Edge> edges, std::vector<NodeId> roots) {
    graph::HeapInput in;
    in.kind.assign(shallow.size(), graph::NodeKind::instance);
    in.class_index = std::move(classes);
    in.shallow_bytes = std::move(shallow);
    in.classes = {{"com.example.A"}, {"com.example.B"}};
    in.edges = std::move(edges);
    for (NodeId r : roots) in.roots.push_back({r, 0});
    in.root_kind_names = {"jni_global"};
    return graph::build_heap_graph(std::move(in));
}

}  // namespace

TEST_CASE("suspect: the accumulation point is where the biggest child drops below 0.7 of its parent") {
    // 0 -> 1 -> 2 -> {3 (big), 4}; 3 -> {5, 6, 7} of equal size; 8 is a small second root.
    graph::HeapGraph g = small_graph({8, 8, 8, 100, 10, 300, 300, 300, 50}, {0, 0, 0, 1, 0, 1, 1, 1, 0},
                                     {{0, 1}, {1, 2}, {2, 3}, {2, 4}, {3, 5}, {3, 6}, {3, 7}}, {0, 8});
    graph::Retained r = graph::compute_retained(g, {});
    graph::PathTree paths = graph::shortest_path_tree(g, {}, {});
    auto suspects = graph::find_suspects(g, r, paths, {});
    REQUIRE(suspects.size() == 1);
    CHECK_FALSE(suspects[0].group);
    CHECK(suspects[0].node == 0);
    CHECK(suspects[0].accumulation_point == 3);  // 300/1000 < 0.7 under node 3
    CHECK(suspects[0].path == std::vector<NodeId>{0, 1, 2, 3});
    // A leaf is its own accumulation point.
    graph::HeapGraph leaf = small_graph({10, 1000, 5}, {0, 1, 0}, {{0, 1}}, {0, 2});
    graph::Retained lr = graph::compute_retained(leaf, {});
    auto one = graph::find_suspects(leaf, lr, graph::shortest_path_tree(leaf, {}, {}), {});
    REQUIRE(one.size() == 1);
    CHECK(one[0].accumulation_point == 1);
}

TEST_CASE("suspect: many small top-level objects of one class form a group with a common accumulation point") {
    // Root 0 (class B) holds a holder 1, which is one of two paths to each of 20 A objects;
    // the second path (from root 2) makes every A a top-level dominator.
    std::vector<std::uint64_t> shallow{16, 16, 16};
    std::vector<std::uint32_t> cls{1, 1, 1};
    std::vector<graph::Edge> edges{{0, 1}};
    for (NodeId k = 0; k < 20; ++k) {
        shallow.push_back(100);
        cls.push_back(0);
        edges.push_back({1, 3 + k});
        edges.push_back({2, 3 + k});
    }
    graph::HeapGraph g = small_graph(shallow, cls, edges, {0, 2});
    graph::Retained r = graph::compute_retained(g, {});
    auto suspects = graph::find_suspects(g, r, graph::shortest_path_tree(g, {}, {}), {});
    REQUIRE(suspects.size() == 1);
    CHECK(suspects[0].group);
    CHECK(g.classes[suspects[0].class_index].name == "com.example.A");
    CHECK(suspects[0].instances.size() == 20);
    CHECK(suspects[0].retained_bytes == 2000);
    // The shortest paths all start at root 2 (one edge, against two through 0 and 1); below
    // it each instance carries 1/20 of the size, a big drop, so root 2 is the point.
    CHECK(suspects[0].accumulation_point == 2);
    CHECK(suspects[0].path == std::vector<NodeId>{2});
}

TEST_CASE("suspect paths do not follow weak edges while a strong path exists") {
    // 0 -weak-> 2; 0 -> 1 -> 2. Without the weak mark the path would be 0, 2.
    graph::HeapGraph g = small_graph({8, 8, 8, 8}, {0, 0, 0, 0}, {{0, 2}, {0, 1}, {1, 2}, {0, 3}}, {0});
    std::vector<graph::Edge> weak{{0, 2}, {0, 3}};
    graph::PathTree paths = graph::shortest_path_tree(g, weak, {});
    CHECK(graph::path_from_root(paths, 2) == std::vector<NodeId>{0, 1, 2});
    CHECK_FALSE(paths.weak[2]);
    // Only a weak path to 3: taken as a fallback, and flagged.
    CHECK(graph::path_from_root(paths, 3) == std::vector<NodeId>{0, 3});
    CHECK(paths.weak[3]);
}

TEST_CASE("suspects: ThreeLeaks gives exactly its three planted leaks, at the holding collections") {
    LoadedDump dump = load_dump(test::data_path("samples/threeleaks.hprof.gz"), {});
    CHECK_FALSE(dump.weak_edges.empty());  // ThreadLocalMap entries, soft caches ...
    graph::PathTree paths = graph::shortest_path_tree(dump.graph, dump.weak_edges, dump.field_names);
    graph::Retained retained = graph::compute_retained(dump.graph, {.release_edges = true});
    auto suspects = graph::find_suspects(dump.graph, retained, paths, {});
    reports::Analysis a{{}, dump.graph, retained, dump.addresses, {}, "test", 20, false};
    a.suspects = &suspects;
    a.paths = &paths;
    a.field_names = &dump.field_names;
    std::string one, two;
    tbb::task_arena(1).execute([&] { one = reports::json_report(a); });
    tbb::task_arena(2).execute([&] { two = reports::json_report(a); });
    CHECK(one == two);
    auto report = nlohmann::json::parse(one);
    const auto& s = report["suspects"];
    REQUIRE(s.size() == 3);
    std::map<std::string, nlohmann::json> by_class;
    for (const auto& x : s) {
        CHECK(x["kind"] == "single");
        CHECK(x["percent"].get<double>() > 10);
        by_class[x["class"]] = x;
        // A path from a GC root to the accumulation point.
        const auto& path = x["path"];
        REQUIRE(!path.empty());
        CHECK(path.back()["id"] == x["accumulation_point"]["id"]);
        CHECK(x["path_strong"] == true);
        std::string text = x["description"];
        CHECK(text.ends_with("bytes."));
        char pct[16];
        std::snprintf(pct, sizeof pct, "(%.2f%%)", x["percent"].get<double>());
        CHECK(text.find(pct) != std::string::npos);
    }
    REQUIRE(by_class.count("ThreeLeaks$SessionCache"));
    REQUIRE(by_class.count("ThreeLeaks$EventBus"));
    REQUIRE(by_class.count("java.lang.Thread"));
    CHECK(by_class["ThreeLeaks$SessionCache"]["accumulation_point"]["class"] == "java.util.HashMap$Node[]");
    CHECK(by_class["ThreeLeaks$EventBus"]["accumulation_point"]["class"] == "java.lang.Object[]");
    CHECK(by_class["java.lang.Thread"]["accumulation_point"]["class"] == "byte[]");  // the ThreadLocal's value
    std::string cache = by_class["ThreeLeaks$SessionCache"]["description"];
    CHECK(cache.starts_with("The class ThreeLeaks$SessionCache, loaded by jdk.internal.loader.ClassLoaders$AppClassLoader @ 0x"));
    CHECK(cache.find("The memory is accumulated in one instance of java.util.HashMap$Node[], loaded by <system class loader>") !=
          std::string::npos);
    CHECK(std::string(by_class["java.lang.Thread"]["description"]).starts_with("The thread java.lang.Thread @ 0x"));
    // Field names where HPROF gives them: the statics and ArrayList.elementData.
    const auto& bus_path = by_class["ThreeLeaks$EventBus"]["path"];
    CHECK(bus_path[bus_path.size() - 2]["field"] == "LISTENERS");
    CHECK(bus_path.back()["field"] == "elementData");
    // Weak edges are never on a strong path: the thread's path ends at Entry.value, not referent.
    CHECK(by_class["java.lang.Thread"]["path"][3]["class"] == "java.lang.ThreadLocal$ThreadLocalMap$Entry");
    CHECK(report["consumers"]["by_package"][0]["package"] == "<default>");
}
