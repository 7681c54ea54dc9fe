// Leak suspects (graph/suspects.cpp): MAT's accumulation-point descent and group suspects on
// small hand-built graphs, weak edges in the path search, and the three planted leaks of
// data/gen/ThreeLeaks.java end to end through the JSON report.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <fstream>

#include "graph.h"
#include "pipeline.h"
#include "analysis.h"
#include "reports.h"
#include "test_support.h"

using namespace heapgraph;
using graph::NodeId;

namespace {

// Every node an instance of class 0 ("A") or 1 ("B"), no class objects, one root record each.
graph::HeapGraph small_graph(std::vector<std::uint64_t> shallow, std::vector<std::uint32_t> classes,
                             std::vector<graph::Edge> edges, std::vector<NodeId> roots) {
    graph::HeapInput in;
    for (std::uint32_t c : classes) in.types.push_back(graph::NodeKind::instance, c);
    in.shallow_bytes = graph::ShallowSizes(shallow);
    in.classes = {{"com.example.A"}, {"com.example.B"}};
    in.edges = std::move(edges);
    for (NodeId r : roots) in.roots.push_back({r, 0});
    in.root_kind_names = {"jni_global"};
    return graph::build_heap_graph(std::move(in));
}

}  // namespace

TEST_CASE("paths: each node's slot in its parent's row, past 2^16 elements too (kept beside the 2-byte slots)") {
    // Node 0 a root holding 70,000 elements 1..70,000 in that order (an object array), and
    // element 70,000 holding node 70,001 at its second slot (its first: element 1).
    constexpr NodeId kElements = 70'000;
    std::vector<graph::Edge> edges;
    for (NodeId e = 1; e <= kElements; ++e) edges.push_back({0, e});
    edges.push_back({kElements, 1});
    edges.push_back({kElements, kElements + 1});
    const std::size_t nodes = kElements + 2;
    graph::HeapGraph g = small_graph(std::vector<std::uint64_t>(nodes, 16), std::vector<std::uint32_t>(nodes, 0),
                                     std::move(edges), {0});
    const graph::PathTree paths = graph::shortest_path_tree(g, {});
    CHECK(paths.slot[0] == graph::kNoSlot);
    std::size_t mismatches = 0;
    for (NodeId e = 1; e <= kElements; ++e) mismatches += paths.parent[e] != 0 || paths.slot[e] != e - 1;
    CHECK(mismatches == 0);
    CHECK(paths.slot[0xFFFF] == 0xFFFE);
    CHECK(paths.slot[0x10000] == 0xFFFF);
    CHECK(paths.slot[kElements] == kElements - 1);
    CHECK(paths.parent[kElements + 1] == kElements);
    CHECK(paths.slot[kElements + 1] == 1);
    const auto path = graph::path_edges(paths, graph::path_from_root(paths, kElements + 1));
    REQUIRE(path.size() == 2);
    CHECK(path[0].slot == kElements - 1);
    CHECK(path[1].slot == 1);
}

namespace {

// Nodes whose parent in the compact tree (parents kept for the nodes with referrer rows and
// the unreached, the others read from the dominator tree) differs from the full tree's.
std::size_t compact_mismatches(const graph::HeapGraph& g, std::span<const graph::Edge> weak, bool keep_unreachable) {
    const graph::PathTree full = graph::shortest_path_tree(g, weak);
    graph::PathTree compact = graph::shortest_path_tree(g, weak, {}, graph::nonempty_rows(g.in, g.node_count()));
    const graph::Retained r = graph::compute_retained(g, {.keep_unreachable = keep_unreachable});
    compact.parent.attach_dominators(r.tree.idom);
    REQUIRE(compact.parent.compact());
    REQUIRE_FALSE(full.parent.compact());
    std::size_t mismatches = 0;
    for (NodeId v = 0; v < g.node_count(); ++v) mismatches += compact.parent[v] != full.parent[v];
    return mismatches;
}

}  // namespace

TEST_CASE("paths: parents kept for shared and unreached nodes only, the rest from the dominator tree, equal every full parent") {
    // 0 is the root. 1 and 2 are shared (two referrers each, 2 one of them weak); 3 hangs from
    // 2 alone; 4 -> 5 -> 4 is an unreachable cycle and 6 -> 7 an unreachable chain whose
    // head 6 has no referrer; 8 refers to itself only; 9 is held by a weak edge alone.
    graph::HeapGraph g = small_graph(std::vector<std::uint64_t>(10, 16), std::vector<std::uint32_t>(10, 0),
                                     {{0, 1}, {0, 2}, {1, 2}, {1, 1}, {2, 3}, {4, 5}, {5, 4}, {6, 7}, {8, 8}, {0, 9}, {3, 1}},
                                     {0});
    const std::vector<graph::Edge> weak{{0, 2}, {0, 9}};
    const graph::PathTree full = graph::shortest_path_tree(g, weak);
    CHECK(full.parent[2] == 1);  // not through the weak edge
    CHECK(full.parent[9] == 0);
    CHECK(full.parent[7] == 6);
    for (bool keep : {false, true}) {
        CAPTURE(keep);
        CHECK(compact_mismatches(g, weak, keep) == 0);
    }
    // Read before the dominator tree is attached, a parent that needs it is an error.
    const graph::PathTree compact = graph::shortest_path_tree(g, weak, {}, graph::nonempty_rows(g.in, g.node_count()));
    CHECK(compact.parent[0] == graph::kNoNode);
    CHECK(compact.parent[2] == 1);
    CHECK_THROWS_AS(compact.parent[3], std::logic_error);
}

TEST_CASE("paths: the compact parents equal the full ones on real dumps, unreachable objects kept or not") {
    for (const char* file : {"samples/threeleaks.hprof.gz", "samples/leakdemo.hprof", "hprof/sun_jdk6_18_x64.hprof",
                             "hprof-android/leak_service_binder.hprof", "phd/heapdump.20100209.165721.4484.phd"}) {
        CAPTURE(file);
        LoadedDump dump = load_dump(test::data_path(file), {});
        std::size_t shared = graph::nonempty_rows(dump.graph.in, dump.graph.node_count()).count();
        CHECK(shared > 0);
        CHECK(shared < dump.graph.node_count() / 2);
        for (bool keep : {false, true}) {
            CAPTURE(keep);
            CHECK(compact_mismatches(dump.graph, dump.weak_edges, keep) == 0);
        }
    }
}

TEST_CASE("suspect: the accumulation point is where the biggest child drops below 0.7 of its parent") {
    // 0 -> 1 -> 2 -> {3 (big), 4}; 3 -> {5, 6, 7} of equal size; 8 is a small second root.
    graph::HeapGraph g = small_graph({8, 8, 8, 100, 10, 300, 300, 300, 50}, {0, 0, 0, 1, 0, 1, 1, 1, 0},
                                     {{0, 1}, {1, 2}, {2, 3}, {2, 4}, {3, 5}, {3, 6}, {3, 7}}, {0, 8});
    graph::Retained r = graph::compute_retained(g, {});
    graph::PathTree paths = graph::shortest_path_tree(g, {});
    auto suspects = graph::find_suspects(g, r, paths, {});
    REQUIRE(suspects.size() == 1);
    CHECK_FALSE(suspects[0].group);
    CHECK(suspects[0].node == 0);
    CHECK(suspects[0].accumulation_point == 3);  // 300/1000 < 0.7 under node 3
    CHECK(suspects[0].path == std::vector<NodeId>{0, 1, 2, 3});
    // A leaf is its own accumulation point.
    graph::HeapGraph leaf = small_graph({10, 1000, 5}, {0, 1, 0}, {{0, 1}}, {0, 2});
    graph::Retained lr = graph::compute_retained(leaf, {});
    auto one = graph::find_suspects(leaf, lr, graph::shortest_path_tree(leaf, {}), {});
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
    auto suspects = graph::find_suspects(g, r, graph::shortest_path_tree(g, {}), {});
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
    graph::PathTree paths = graph::shortest_path_tree(g, weak);
    CHECK(graph::path_from_root(paths, 2) == std::vector<NodeId>{0, 1, 2});
    CHECK_FALSE(paths.weak.test(2));
    // Only a weak path to 3: taken as a fallback, and flagged.
    CHECK(graph::path_from_root(paths, 3) == std::vector<NodeId>{0, 3});
    CHECK(paths.weak.test(3));
}

TEST_CASE("suspects: ThreeLeaks gives exactly its three planted leaks, at the holding collections") {
    LoadedDump dump = load_dump(test::data_path("samples/threeleaks.hprof.gz"), {});
    CHECK_FALSE(dump.weak_edges.empty());  // ThreadLocalMap entries, soft caches ...
    analysis::Findings a = analysis::analyse(dump, {.top = 20});  // gzip: names read back from the inflated file
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
    // Every edge named (data/gen/ThreeLeaks.java): main's locals, the class, the statics,
    // HashMap.table, ArrayList.elementData, Thread.threadLocals, an Entry[] index, Entry.value.
    auto fields = [&](const std::string& suspect) {
        std::vector<std::string> out;
        for (const auto& step : by_class[suspect]["path"]) out.push_back(step["field"].is_null() ? "-" : std::string(step["field"]));
        return out;
    };
    using Names = std::vector<std::string>;
    CHECK(fields("ThreeLeaks$SessionCache") == Names{"-", "<Java Local>", "<class>", "SESSIONS", "table"});
    CHECK(fields("ThreeLeaks$EventBus") == Names{"-", "<Java Local>", "<class>", "LISTENERS", "elementData"});
    Names thread = fields("java.lang.Thread");
    REQUIRE(thread.size() == 5);
    CHECK(thread[1] == "threadLocals");
    CHECK(thread[2] == "table");
    CHECK(thread[3] == "[14]");
    CHECK(thread[4] == "value");
    // Both follow nulls: Thread has null reference fields, so its row alone could not name
    // threadLocals; the Entry sits at a lower slot than its index.
    auto thread_path = a.suspects[0].path;
    // analyse() lets its tree go once the paths are named, and the out rows after the
    // dominator step: the same tree again, from the same dump loaded again.
    const LoadedDump again = load_dump(test::data_path("samples/threeleaks.hprof.gz"), {});
    const graph::PathTree paths = graph::shortest_path_tree(again.graph, again.weak_edges);
    CHECK(a.paths.parent.empty());
    for (const auto& s : a.suspects)
        if (dump.graph.classes[s.class_index].name == "java.lang.Thread") thread_path = s.path;
    graph::FieldNames without_exact = dump.field_names;
    without_exact.exact.clear();
    CHECK(graph::edge_name(dump.graph, without_exact, paths, thread_path[1]) == "");
    CHECK(paths.slot[thread_path[3]] - 1 < 14);  // slot 0 is the class edge
    // Weak edges are never on a strong path: the thread's path ends at Entry.value, not referent.
    CHECK(by_class["java.lang.Thread"]["path"][3]["class"] == "java.lang.ThreadLocal$ThreadLocalMap$Entry");
    CHECK(report["consumers"]["by_package"][0]["package"] == "<default>");
}

namespace {

// A dump with nulls and a dangling reference before the edges of its paths (8-byte ids):
//   Holder 0x200 (a JNI global): first = null, count = 7, third = Holder[] 0x300, and from
//   its super class Base, inherited = Base 0x210;
//   Holder[] 0x300: [null, 0x999 (no such object), null, Base 0x220];
// the array's record is split across the two heap dump segments.
std::vector<std::uint8_t> nulls_dump() {
    test::ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0);  // header, id size 8, timestamp
    const char* names[] = {"Holder", "first", "count", "third", "Base", "inherited", "Holder[]"};
    for (std::uint64_t i = 0; i < 7; ++i)
        b.u1(0x01).u4(0).u4(static_cast<std::uint32_t>(8 + std::string(names[i]).size())).id(0x50 + i).text(names[i]);
    b.u1(0x02).u4(0).u4(24).u4(1).id(0x100).u4(0).id(0x50);  // LOAD CLASS 0x100 "Holder"
    b.u1(0x02).u4(0).u4(24).u4(2).id(0x110).u4(0).id(0x54);  // LOAD CLASS 0x110 "Base"
    b.u1(0x02).u4(0).u4(24).u4(3).id(0x120).u4(0).id(0x56);  // LOAD CLASS 0x120 "Holder[]"
    test::ByteBuilder h;  // the heap dump's sub-records
    h.u1(0x20).id(0x110).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(8);  // CLASS DUMP Base, no super
    h.u2(0).u2(0).u2(1).id(0x55).u1(2);                                 // field inherited: object
    h.u1(0x20).id(0x100).u4(0).id(0x110).id(0).id(0).id(0).id(0).id(0).u4(20);  // CLASS DUMP Holder extends Base
    h.u2(0).u2(0).u2(3).id(0x51).u1(2).id(0x52).u1(10).id(0x53).u1(2);  // first: object, count: int, third: object
    h.u1(0x20).id(0x120).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(0);   // CLASS DUMP Holder[]
    h.u2(0).u2(0).u2(0);                                                 // nothing
    h.u1(0x21).id(0x200).u4(0).id(0x100).u4(28);      // INSTANCE Holder 0x200, 28 bytes:
    h.id(0).u4(7).id(0x300).id(0x210);                 //   first null, count 7, third, inherited
    h.u1(0x21).id(0x210).u4(0).id(0x110).u4(8).id(0);  // INSTANCE Base 0x210, inherited null
    h.u1(0x21).id(0x220).u4(0).id(0x110).u4(8).id(0);  // INSTANCE Base 0x220, inherited null
    const std::size_t split = h.size() + 20;           // inside the array's elements
    h.u1(0x22).id(0x300).u4(0).u4(4).id(0x120);        // OBJECT ARRAY 0x300, 4 elements of Holder[]:
    h.id(0).id(0x999).id(0).id(0x220);                 //   null, dangling, null, 0x220
    h.u1(0x01).id(0x200).id(1);                        // ROOT JNI GLOBAL 0x200
    b.u1(0x1C).u4(0).u4(static_cast<std::uint32_t>(split));  // HEAP DUMP SEGMENT 1
    b.bytes.insert(b.bytes.end(), h.bytes.begin(), h.bytes.begin() + static_cast<std::ptrdiff_t>(split));
    b.u1(0x1C).u4(0).u4(static_cast<std::uint32_t>(h.size() - split));  // HEAP DUMP SEGMENT 2
    b.bytes.insert(b.bytes.end(), h.bytes.begin() + static_cast<std::ptrdiff_t>(split), h.bytes.end());
    b.u1(0x2C).u4(0).u4(0);  // HEAP DUMP END
    return b.bytes;
}

// The names of the edges on the path to the object at `address`, read back from the dump.
std::vector<std::string> named_path(LoadedDump& dump, const graph::PathTree& paths, ObjectId address) {
    const NodeId node = dump.addresses.node_of(address);
    REQUIRE(node != graph::kNoNode);
    std::vector<NodeId> path = graph::path_from_root(paths, node);
    name_edges(dump, graph::path_edges(paths, path));
    std::vector<std::string> names;
    for (std::size_t i = 1; i < path.size(); ++i) names.push_back(graph::edge_name(dump.graph, dump.field_names, paths, path[i]));
    return names;
}

}  // namespace

TEST_CASE("path edges name the field after a null field, the inherited field and the array index after nulls") {
    std::vector<std::uint8_t> bytes = nulls_dump();
    LoadedDump dump = load_dump_bytes(bytes, "nulls.hprof", {});
    graph::PathTree paths = graph::shortest_path_tree(dump.graph, dump.weak_edges);
    // Without reading back, a null field hides which field a slot is.
    const NodeId array = static_cast<NodeId>(dump.addresses.size() - 1);  // 0x300, the highest address
    CHECK(dump.addresses.address_of(array) == 0x300);
    CHECK(graph::edge_name(dump.graph, dump.field_names, paths, array).empty());
    CHECK(named_path(dump, paths, 0x220) == std::vector<std::string>{"third", "[3]"});
    CHECK(named_path(dump, paths, 0x210) == std::vector<std::string>{"inherited"});
    // Read back after the dominator pass released the rows, as the CLI does.
    graph::compute_retained(dump.graph, {.release_edges = true});
    CHECK(named_path(dump, paths, 0x220) == std::vector<std::string>{"third", "[3]"});
}

TEST_CASE("path edges are named from a dump loaded from a file, and the CLI report shows them") {
    std::string path = test::temp_dir() + "/nulls.hprof";
    std::vector<std::uint8_t> bytes = nulls_dump();
    {
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    LoadedDump dump = load_dump(path, {});
    graph::PathTree paths = graph::shortest_path_tree(dump.graph, dump.weak_edges);
    CHECK(named_path(dump, paths, 0x220) == std::vector<std::string>{"third", "[3]"});
}
