// The analysis stage on its own (analysis/analysis.h): what it computes, in which order,
// what it releases, and that one naming pass gives what the former two passes gave.
#include <doctest/doctest.h>

#include "analysis.h"
#include "values.h"
#include "test_support.h"

namespace {

using namespace heapgraph;
using graph::NodeId;
using graph::NodeKind;

// A root holding a list of 8 objects (a 40% suspect), and a second root with a small object.
graph::HeapGraph small_heap() {
    graph::HeapInput in;
    in.classes = {{"com.example.Holder", graph::kNoNode, graph::kNoNode}, {"java.lang.Object[]", graph::kNoNode, graph::kNoNode},
                  {"com.example.Item", graph::kNoNode, graph::kNoNode}};
    in.types.push_back(NodeKind::instance, 0), in.types.push_back(NodeKind::object_array, 1);
    in.shallow_bytes = {16, 48};
    in.edges = {{0, 1}};
    for (NodeId i = 0; i < 8; ++i) {
        in.types.push_back(NodeKind::instance, 2), in.shallow_bytes.push_back(100);
        in.edges.push_back({1, 2 + i});
    }
    in.types.push_back(NodeKind::instance, 2), in.shallow_bytes.push_back(1136);
    in.roots = {{0, 0, true}, {10, 0, true}};
    in.root_kind_names = {"jni_global"};
    return graph::build_heap_graph(std::move(in));
}

std::vector<std::string> stages(const analysis::Findings& f) {
    std::vector<std::string> out;
    for (const StageTiming& t : f.timings) out.push_back(t.stage);
    return out;
}

}  // namespace

TEST_CASE("analysis: each analysis runs once, in order, and the edges are released after the dominators") {
    graph::HeapGraph g = small_heap();
    std::vector<std::uint64_t> addresses(g.node_count());
    for (NodeId v = 0; v < g.node_count(); ++v) addresses[v] = 0x1000 + 0x100 * v;
    int naming_passes = 0;
    std::size_t named_edges = 0;
    const AddressIndex index = AddressIndex::of(addresses);
    analysis::Input in{.graph = g, .addresses = index};
    in.name_edges = [&](std::span<const graph::PathEdge> edges, std::span<const RecordSpan>) {
        ++naming_passes, named_edges = edges.size();
    };
    analysis::Findings f = analysis::analyse(std::move(in), {.top = 5, .suspect_threshold = 30, .holders = true});

    // Collections and paths run beside the dominator step: its note gives their time.
    // The tables run beside the content analyses: the values stage's note gives their time.
    CHECK(stages(f) == std::vector<std::string>{"dominators", "suspects", "path names", "values"});
    CHECK(f.timings[3].note.find("duplicates ") == 0);
    CHECK(f.timings[3].note.find("; tables alongside: ") != std::string::npos);
    CHECK(f.timings[0].note.find("condensed to ") == 0);
    CHECK(f.timings[0].note.find("; paths ") != std::string::npos);
    CHECK(f.timings[0].note.find(" s and collections ") != std::string::npos);
    CHECK(f.timings[0].note.find(" s alongside, ") != std::string::npos);
    CHECK(g.out.empty());  // released: nothing after the dominators needs them
    CHECK(g.in.empty());
    CHECK(f.retained.tree.super_root_retained_bytes == 16 + 48 + 800 + 1136);
    REQUIRE(f.suspects.size() == 2);  // the holder (864 bytes, 43%) and the big item (1136, 57%)
    CHECK(f.suspects[0].node == 10);
    CHECK(f.suspects[1].node == 0);
    REQUIRE(f.suspect_fields.size() == 2);
    CHECK(f.suspect_fields[1].size() == f.suspects[1].path.size());
    CHECK(naming_passes == 1);  // suspects' paths and holders' tails in one pass over the dump
    CHECK(named_edges > 0);
    CHECK(f.dominators == std::vector<NodeId>{10, 0});
    CHECK(f.summary.objects == 11);
    CHECK(f.histogram.size() == 3);
    CHECK(f.collections_counted);
    CHECK_FALSE(f.holders.empty());
    CHECK(f.holders.front().signature.find("com.example.Item") != std::string::npos);
}

TEST_CASE("analysis: a snapshot-only analysis skips collections and suspects, and may keep the edges") {
    graph::HeapGraph g = small_heap();
    std::vector<std::uint64_t> addresses(g.node_count());
    for (NodeId v = 0; v < g.node_count(); ++v) addresses[v] = 0x1000 + 0x100 * v;
    const AddressIndex index = AddressIndex::of(addresses);
    analysis::Findings f = analysis::analyse({.graph = g, .addresses = index},
                                             {.report = false, .holders = true, .release_edges = false});
    CHECK(stages(f) == std::vector<std::string>{"dominators", "suspects", "path names", "tables"});
    CHECK(f.timings[0].note.find("; paths ") != std::string::npos);
    CHECK(f.timings[0].note.find("collections") == std::string::npos);
    CHECK_FALSE(f.collections_counted);
    CHECK(f.suspects.empty());
    CHECK_FALSE(f.holders.empty());
    CHECK(g.out.rows() == g.node_count());  // kept, as asked
    CHECK(f.unreachable_histogram.empty());
}

TEST_CASE("analysis: a rootless format keeps unreachable objects, as MAT does for PHD") {
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20100209.165721.4484.phd"), {});
    analysis::Findings f = analysis::analyse(dump, {});
    CHECK(f.keep_unreachable);
    CHECK(f.summary.objects == dump.graph.node_count() - f.summary.classes);
    CHECK(f.retained.tree.super_root_retained_bytes == f.summary.shallow_bytes);
}

TEST_CASE("analysis: holders named in the one pass equal holders found, named and found again") {
    LoadedDump once = load_dump(test::data_path("samples/threeleaks.hprof.gz"), {});
    analysis::Findings f = analysis::analyse(once, {.holders = true});

    // The former way: find, read the names of their paths' ends back, find again.
    LoadedDump twice = load_dump(test::data_path("samples/threeleaks.hprof.gz"), {});
    graph::PathTree paths = graph::shortest_path_tree(twice.graph, twice.weak_edges);
    graph::Retained retained = graph::compute_retained(twice.graph, {.release_edges = true});
    graph::HolderOptions options;
    auto first = graph::find_holders(twice.graph, retained, paths, twice.field_names, options);
    std::vector<graph::PathEdge> edges;
    for (const auto& e : graph::path_edges(paths, graph::holder_path_tails(paths, first)))
        if (twice.graph.types.kind(e.from) != NodeKind::object_array) edges.push_back(e);
    name_edges(twice, edges);
    auto again = graph::find_holders(twice.graph, retained, paths, twice.field_names, options);

    REQUIRE(f.holders.size() == again.size());
    CHECK(f.holders.size() > 3);
    for (std::size_t i = 0; i < again.size(); ++i) {
        CHECK(f.holders[i].node == again[i].node);
        CHECK(f.holders[i].signature == again[i].signature);
    }
}

TEST_CASE("analysis: edges whose records the value pass located are named with no walk, as a walk names them") {
    for (const char* file : {"samples/threeleaks.hprof.gz", "samples/leakdemo.hprof", "hprof/sun_jdk6_18_x64.hprof"}) {
        CAPTURE(file);
        // The edges into every 13th reached object: fields of instances and array slots.
        auto path_edges_of = [](const LoadedDump& dump) {
            graph::PathTree paths = graph::shortest_path_tree(dump.graph, dump.weak_edges);
            std::vector<NodeId> nodes;
            for (NodeId v = 0; v < dump.graph.node_count(); v += 13)
                if (paths.parent[v] != graph::kNoNode) nodes.push_back(v);
            return graph::path_edges(paths, nodes);
        };
        auto counted = [](int& events) { return [&events](const ProgressEvent&) { ++events; }; };

        LoadedDump walked = load_dump(test::data_path(file), {});
        const std::vector<graph::PathEdge> edges = path_edges_of(walked);
        int walk_events = 0;
        name_edges(walked, edges, counted(walk_events));
        CHECK(walk_events > 0);  // the walk draws its progress

        LoadedDump located = load_dump(test::data_path(file), {});
        ValueRequest request;
        for (const graph::PathEdge& e : edges) request.locate.push_back(located.addresses.address_of(e.from));
        std::sort(request.locate.begin(), request.locate.end());
        request.locate.erase(std::unique(request.locate.begin(), request.locate.end()), request.locate.end());
        const DumpValues values = read_values(located, request);
        CHECK(!values.located.empty());
        CHECK(values.located.size() <= request.locate.size());
        int located_events = 0;
        name_edges(located, edges, counted(located_events), values.located);
        CHECK(located_events == 0);  // every record was located: no walk

        const auto& a = walked.field_names.exact;
        const auto& b = located.field_names.exact;
        REQUIRE(a.size() == b.size());
        CHECK(a.size() > 10);
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK(a[i].from == b[i].from);
            CHECK(a[i].slot == b[i].slot);
            CHECK(a[i].name == b[i].name);
        }
    }
}
