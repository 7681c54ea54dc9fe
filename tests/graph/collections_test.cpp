// Collection sizes from the graph's shape (graph/collections.cpp): small hand-built graphs
// for each rule, then Eclipse MAT's asserted sizes on the J9 PHD and the JDK 6 HPROF
// (ExtractCollectionEntriesTest.java; figures in data/phd/README.md's provenance).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>

#include "graph.h"
#include "pipeline.h"
#include "analysis.h"
#include "reports.h"
#include "test_support.h"

using namespace heapgraph;
using graph::NodeId;
using graph::NodeKind;

namespace {

// Builds a HeapInput whose rows keep the order of the calls: an object's edge to its class
// comes first, then its references, as the loaders write them.
struct GraphBuilder {
    graph::HeapInput in;
    std::uint32_t class_of_classes = 0;

    GraphBuilder() {
        in.classes.push_back({"java.lang.Class", graph::kNoNode, graph::kNoNode});
        class_of_classes = 0;
        in.classes[0].node = class_node(0, graph::kNoNode);
        in.root_kind_names = {"test"};
    }
    NodeId node(NodeKind kind, std::uint32_t class_index) {
        NodeId v = static_cast<NodeId>(in.types.size());
        in.types.push_back(kind, class_index);
        in.shallow_bytes.push_back(16);
        return v;
    }
    // A class object: its type edge, then its super class, as for HPROF and PHD.
    NodeId class_node(std::uint32_t described, NodeId super) {
        NodeId v = node(NodeKind::class_object, class_of_classes);
        if (described != 0) ref(v, in.classes[0].node);
        if (super != graph::kNoNode) ref(v, super);
        return v;
    }
    std::uint32_t define(const std::string& name, std::uint32_t super = 0xFFFFFFFFu) {
        std::uint32_t c = static_cast<std::uint32_t>(in.classes.size());
        in.classes.push_back({name, graph::kNoNode, graph::kNoNode});
        in.classes[c].node = class_node(c, super == 0xFFFFFFFFu ? graph::kNoNode : in.classes[super].node);
        return c;
    }
    NodeId object(std::uint32_t class_index, NodeKind kind = NodeKind::instance) {
        NodeId v = node(kind, class_index);
        ref(v, in.classes[class_index].node);
        return v;
    }
    void ref(NodeId from, NodeId to) { in.edges.push_back({from, to}); }
    graph::HeapGraph build() { return graph::build_heap_graph(std::move(in)); }
};

// A HashMap of `chains`: each inner list is one bucket, linked through `next`; each entry also
// points to a key and a value of another class.
struct HashMapFixture {
    GraphBuilder b;
    std::uint32_t map_class, entry_class, table_class, string_class;
    NodeId map = 0, table = 0;

    explicit HashMapFixture(const std::string& map_name = "java.util.HashMap",
                            const std::string& entry_name = "java.util.HashMap$Entry") {
        map_class = b.define(map_name);
        entry_class = b.define(entry_name);
        table_class = b.define(entry_name + "[]");
        string_class = b.define("java.lang.String");
    }
    NodeId entry() {
        NodeId e = b.object(entry_class);
        b.ref(e, b.object(string_class));  // key
        b.ref(e, b.object(string_class));  // value
        return e;
    }
    // Buckets of the given lengths; returns the entries in order.
    std::vector<NodeId> fill(std::initializer_list<int> buckets) {
        map = b.object(map_class);
        table = b.object(table_class, NodeKind::object_array);
        b.ref(map, table);
        std::vector<NodeId> all;
        for (int length : buckets) {
            NodeId previous = graph::kNoNode;
            for (int i = 0; i < length; ++i) {
                NodeId e = entry();
                all.push_back(e);
                if (previous == graph::kNoNode) b.ref(table, e);
                else b.ref(previous, e);  // next
                previous = e;
            }
        }
        return all;
    }
};

}  // namespace

TEST_CASE("collections: a hash map counts every entry of every bucket chain") {
    HashMapFixture f;
    f.fill({1, 3, 2});
    graph::HeapGraph g = f.b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.treated_as(f.map) == "java.util.HashMap");
    CHECK(sizer.shape(f.map) == graph::CollectionShape::hashed);
    CHECK(sizer.size(f.map) == 6);
    CHECK(sizer.size(f.map) == 6);  // the sizer is reusable: marks are cleared between calls
    CHECK(graph::collection_size(g, f.map) == 6);
}

TEST_CASE("collections: non-collections, strings and arrays have no size") {
    HashMapFixture f;
    std::vector<NodeId> entries = f.fill({1});
    graph::HeapGraph g = f.b.build();
    graph::CollectionSizer sizer(g);
    CHECK(!sizer.size(entries[0]).has_value());
    CHECK(!sizer.size(f.table).has_value());
    CHECK(!sizer.size(g.classes[f.map_class].node).has_value());  // the class object
    CHECK(sizer.treated_as(entries[0]).empty());
}

TEST_CASE("collections: empty maps count 0: no table, an empty table, a self-linked header") {
    GraphBuilder b;
    std::uint32_t map_class = b.define("java.util.HashMap");
    std::uint32_t linked_class = b.define("java.util.LinkedHashMap");
    std::uint32_t entry_class = b.define("java.util.LinkedHashMap$Entry");
    std::uint32_t table_class = b.define("java.util.HashMap$Entry[]");
    NodeId no_table = b.object(map_class);
    NodeId empty_table = b.object(map_class);
    b.ref(empty_table, b.object(table_class, NodeKind::object_array));
    NodeId linked = b.object(linked_class);  // Java 6: header.before = header.after = header
    b.ref(linked, b.object(table_class, NodeKind::object_array));
    NodeId header = b.object(entry_class);
    b.ref(linked, header);
    b.ref(header, header);
    b.ref(header, header);
    graph::HeapGraph g = b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.size(no_table) == 0);
    CHECK(sizer.size(empty_table) == 0);
    CHECK(sizer.size(linked) == 0);
}

TEST_CASE("collections: cycles and branches among same-class entries count each entry once") {
    HashMapFixture f("java.util.HashMap", "java.util.HashMap$TreeNode");
    std::vector<NodeId> e = f.fill({3});  // e0 -> e1 -> e2 from the slot
    f.b.ref(e[2], e[0]);                  // a cycle back to the head
    NodeId left = f.entry(), right = f.entry();
    f.b.ref(e[1], left);  // a tree bin: two same-class children, one walked later (MAT's `extra`)
    f.b.ref(e[1], right);
    f.b.ref(right, e[1]);  // parent link
    f.b.ref(f.table, e[2]);  // a second slot reaching entries already seen
    graph::HeapGraph g = f.b.build();
    CHECK(graph::collection_size(g, f.map) == 5);
}

TEST_CASE("collections: slots holding java.lang.Object or class objects are not entries") {
    HashMapFixture f;
    f.fill({2});
    std::uint32_t object_class = f.b.define("java.lang.Object");
    f.b.ref(f.table, f.b.object(object_class));
    f.b.ref(f.table, f.b.in.classes[f.string_class].node);
    graph::HeapGraph g = f.b.build();
    CHECK(graph::collection_size(g, f.map) == 2);
}

TEST_CASE("collections: a Java 6 LinkedHashMap's header is not an entry, Java 8 head and tail are") {
    SUBCASE("header sentinel, before/after links around all entries") {
        HashMapFixture f("java.util.LinkedHashMap", "java.util.LinkedHashMap$Entry");
        std::vector<NodeId> e = f.fill({2, 1});
        NodeId header = f.b.object(f.entry_class);  // no key, no value
        f.b.ref(f.map, header);
        std::vector<NodeId> ring{header, e[0], e[1], e[2]};
        for (std::size_t i = 0; i < ring.size(); ++i) {
            f.b.ref(ring[i], ring[(i + ring.size() - 1) % ring.size()]);  // before
            f.b.ref(ring[i], ring[(i + 1) % ring.size()]);                // after
        }
        graph::HeapGraph g = f.b.build();
        CHECK(graph::collection_size(g, f.map) == 3);
    }
    SUBCASE("head and tail are real entries") {
        HashMapFixture f("java.util.LinkedHashMap", "java.util.LinkedHashMap$Entry");
        std::vector<NodeId> e = f.fill({1, 1, 1});
        f.b.ref(f.map, e[0]);  // head
        f.b.ref(f.map, e[2]);  // tail
        for (std::size_t i = 0; i + 1 < e.size(); ++i) {
            f.b.ref(e[i], e[i + 1]);  // after
            f.b.ref(e[i + 1], e[i]);  // before
        }
        graph::HeapGraph g = f.b.build();
        CHECK(graph::collection_size(g, f.map) == 3);
    }
    SUBCASE("a one-entry Java 8 map: head == tail, two edges, no sentinel") {
        HashMapFixture f("java.util.LinkedHashMap", "java.util.LinkedHashMap$Entry");
        f.map = f.b.object(f.map_class);
        f.table = f.b.object(f.table_class, NodeKind::object_array);
        f.b.ref(f.map, f.table);
        NodeId only = f.b.object(f.entry_class);  // a null key and a null value
        f.b.ref(f.table, only);
        f.b.ref(f.map, only);
        f.b.ref(f.map, only);
        graph::HeapGraph g = f.b.build();
        CHECK(graph::collection_size(g, f.map) == 1);
    }
}

TEST_CASE("collections: subclasses take their parent's rule through the super class edge") {
    GraphBuilder b;
    std::uint32_t hash_map = b.define("java.util.HashMap");
    std::uint32_t mine = b.define("com.example.Registry", hash_map);
    std::uint32_t deeper = b.define("com.example.SpecialRegistry", mine);
    std::uint32_t unrelated = b.define("com.example.Other", b.define("java.lang.Object"));
    std::uint32_t entry_class = b.define("java.util.HashMap$Entry");
    NodeId map = b.object(deeper);
    NodeId table = b.object(b.define("java.util.HashMap$Entry[]"), NodeKind::object_array);
    b.ref(map, table);
    b.ref(table, b.object(entry_class));
    NodeId other = b.object(unrelated);
    graph::HeapGraph g = b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.treated_as(map) == "java.util.HashMap");
    CHECK(sizer.size(map) == 1);
    CHECK(!sizer.size(other).has_value());
}

TEST_CASE("collections: a HashSet counts the entries of its inner map") {
    HashMapFixture f;
    f.fill({2, 2});
    std::uint32_t set_class = f.b.define("java.util.LinkedHashSet");  // no super known: an alias
    NodeId set = f.b.object(set_class);
    f.b.ref(set, f.map);
    NodeId two_maps = f.b.object(set_class);  // two inner maps: cannot tell which holds the entries
    f.b.ref(two_maps, f.map);
    f.b.ref(two_maps, f.b.object(f.map_class));
    NodeId subclass = f.b.object(set_class);  // a subclass's extra field beside the one inner map
    f.b.ref(subclass, f.b.object(f.string_class));
    f.b.ref(subclass, f.map);
    NodeId no_map = f.b.object(set_class);
    graph::HeapGraph g = f.b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.treated_as(set) == "java.util.HashSet");
    CHECK(sizer.size(set) == 4);
    CHECK(!sizer.size(two_maps).has_value());
    CHECK(sizer.size(subclass) == 4);
    CHECK(sizer.size(no_map) == 0);
}

TEST_CASE("collections: two candidate tables make the size unknown unless one is an entry table") {
    HashMapFixture f;
    f.fill({1});
    NodeId cells = f.b.object(f.b.define("java.util.concurrent.ConcurrentHashMap$CounterCell[]"), NodeKind::object_array);
    f.b.ref(f.map, cells);
    NodeId ambiguous = f.b.object(f.map_class);
    f.b.ref(ambiguous, f.b.object(f.b.define("java.lang.Object[]"), NodeKind::object_array));
    f.b.ref(ambiguous, f.b.object(f.b.define("java.lang.String[]"), NodeKind::object_array));
    graph::HeapGraph g = f.b.build();
    CHECK(graph::collection_size(g, f.map) == 1);
    CHECK(!graph::collection_size(g, ambiguous).has_value());
}

TEST_CASE("collections: a Java 6 ConcurrentHashMap sums its segments, each walked on its own") {
    GraphBuilder b;
    std::uint32_t chm = b.define("java.util.concurrent.ConcurrentHashMap");
    std::uint32_t segment = b.define("java.util.concurrent.ConcurrentHashMap$Segment");
    std::uint32_t segments_class = b.define("java.util.concurrent.ConcurrentHashMap$Segment[]");
    std::uint32_t entry = b.define("java.util.concurrent.ConcurrentHashMap$HashEntry");
    std::uint32_t entries_class = b.define("java.util.concurrent.ConcurrentHashMap$HashEntry[]");
    NodeId map = b.object(chm);
    NodeId segments = b.object(segments_class, NodeKind::object_array);
    b.ref(map, segments);
    std::vector<NodeId> segs;
    for (int length : {2, 0, 3}) {
        NodeId s = b.object(segment);
        segs.push_back(s);
        b.ref(segments, s);
        NodeId table = b.object(entries_class, NodeKind::object_array);
        b.ref(s, table);
        NodeId previous = graph::kNoNode;
        for (int i = 0; i < length; ++i) {
            NodeId e = b.object(entry);
            b.ref(previous == graph::kNoNode ? table : previous, e);
            previous = e;
        }
    }
    graph::HeapGraph g = b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.size(map) == 5);
    CHECK(sizer.size(segs[0]) == 2);
    CHECK(sizer.size(segs[1]) == 0);
    CHECK(sizer.size(segs[2]) == 3);
}

TEST_CASE("collections: a TreeMap counts the entries reached from its root, comparator or not") {
    GraphBuilder b;
    std::uint32_t tree = b.define("java.util.TreeMap");
    std::uint32_t entry = b.define("java.util.TreeMap$Entry");
    std::uint32_t comparator = b.define("com.example.ByName");
    NodeId map = b.object(tree);
    b.ref(map, b.object(comparator));
    NodeId root = b.object(entry), left = b.object(entry), right = b.object(entry), leaf = b.object(entry);
    b.ref(map, root);
    b.ref(root, left);
    b.ref(root, right);
    b.ref(left, root);  // parent
    b.ref(right, leaf);
    b.ref(right, root);
    b.ref(leaf, right);
    NodeId empty = b.object(tree);
    NodeId set = b.object(b.define("java.util.TreeSet"));
    b.ref(set, map);
    graph::HeapGraph g = b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.shape(map) == graph::CollectionShape::tree);
    CHECK(sizer.size(map) == 4);
    CHECK(sizer.size(empty) == 0);
    CHECK(sizer.size(set) == 4);
}

TEST_CASE("collections: array lists count non-null slots, class objects included") {
    GraphBuilder b;
    std::uint32_t list = b.define("java.util.ArrayList");
    std::uint32_t vector = b.define("java.util.Vector");
    std::uint32_t stack = b.define("java.util.Stack", vector);
    std::uint32_t objects = b.define("java.lang.Object[]");
    std::uint32_t string = b.define("java.lang.String");
    NodeId a = b.object(list);
    NodeId data = b.object(objects, NodeKind::object_array);
    b.ref(a, data);
    NodeId s = b.object(string);
    b.ref(data, s);
    b.ref(data, s);  // the same element twice is two elements
    b.ref(data, b.in.classes[string].node);
    NodeId st = b.object(stack);
    b.ref(st, b.object(objects, NodeKind::object_array));
    NodeId no_array = b.object(list);
    graph::HeapGraph g = b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.size(a) == 3);
    CHECK(sizer.treated_as(st) == "java.util.Vector");
    CHECK(sizer.size(st) == 0);
    CHECK(sizer.size(no_array) == 0);
}

TEST_CASE("collections: a LinkedList counts its nodes, without the Java 6 header") {
    GraphBuilder b;
    std::uint32_t list = b.define("java.util.LinkedList");
    std::uint32_t entry = b.define("java.util.LinkedList$Entry");
    std::uint32_t node = b.define("java.util.LinkedList$Node");
    std::uint32_t string = b.define("java.lang.String");
    // Java 6: a circular list through a header with no element.
    NodeId old_list = b.object(list);
    NodeId header = b.object(entry);
    b.ref(old_list, header);
    std::vector<NodeId> ring{header, b.object(entry), b.object(entry)};
    for (std::size_t i = 1; i < ring.size(); ++i) b.ref(ring[i], b.object(string));
    for (std::size_t i = 0; i < ring.size(); ++i) {
        b.ref(ring[i], ring[(i + 1) % ring.size()]);
        b.ref(ring[i], ring[(i + ring.size() - 1) % ring.size()]);
    }
    // Java 7+: first and last, the first node holding null.
    NodeId new_list = b.object(list);
    NodeId first = b.object(node), middle = b.object(node), last = b.object(node);
    b.ref(new_list, first);
    b.ref(new_list, last);
    b.ref(first, middle);
    b.ref(middle, b.object(string));
    b.ref(middle, last);
    b.ref(middle, first);
    b.ref(last, b.object(string));
    b.ref(last, middle);
    NodeId empty = b.object(list);
    graph::HeapGraph g = b.build();
    graph::CollectionSizer sizer(g);
    CHECK(sizer.size(old_list) == 2);
    CHECK(sizer.size(new_list) == 3);
    CHECK(sizer.size(empty) == 0);
}

namespace {

NodeId node_at(const LoadedDump& dump, std::uint64_t address) {
    const NodeId node = dump.addresses.node_of(address);
    REQUIRE(node != graph::kNoNode);
    return node;
}

struct Expected {
    std::uint64_t address;
    const char* class_name;
    std::uint64_t entries;
};

void check_sizes(const std::string& file, std::initializer_list<Expected> expected) {
    LoadedDump dump = load_dump(test::data_path(file), {});
    graph::CollectionSizer sizer(dump.graph);
    for (const Expected& e : expected) {
        CAPTURE(e.class_name);
        CAPTURE(e.address);
        NodeId v = node_at(dump, e.address);
        CHECK(graph::node_class_name(dump.graph, v) == e.class_name);
        CHECK(sizer.size(v) == e.entries);
    }
}

}  // namespace

TEST_CASE("collections: MAT's sizes on the 2010 J9 PHD, which has no field values") {
    // ExtractCollectionEntriesTest.java, IBM_JDK6_32BIT_HEAP_AND_JAVA (the javacore adds
    // thread roots only; sizes do not depend on it).
    check_sizes("phd/heapdump.20100112.141124.11580.0002.phd",
                {{0xcb1d88, "java.util.HashMap", 454},
                 {0xcf7808, "java.util.Hashtable", 26},
                 {0xcb1808, "java.util.Properties", 71},
                 {0xcb1c10, "java.lang.ThreadLocal$ThreadLocalMap", 2},
                 {0xcb4958, "java.util.concurrent.ConcurrentHashMap$Segment", 5},
                 {0xcb4578, "java.util.concurrent.ConcurrentHashMap", 19}});
}

TEST_CASE("collections: MAT's sizes on sun_jdk6_18_x32, which MAT reads from size fields") {
    check_sizes("hprof/sun_jdk6_18_x32.hprof",
                {{0x241957d0, "java.util.HashMap", 60},
                 {0x24166668, "java.util.LinkedHashMap", 45},
                 {0x241abf40, "java.util.HashSet", 2},
                 {0x2416f090, "java.util.LinkedHashSet", 23},
                 {0x2416b168, "java.util.Hashtable", 19},
                 {0x24120b38, "java.util.Properties", 53},
                 {0x2416b9f0, "java.util.WeakHashMap", 11},
                 {0x241a10b8, "java.lang.ThreadLocal$ThreadLocalMap", 2},
                 {0x24196fd8, "java.util.concurrent.ConcurrentHashMap$Segment", 8},
                 {0x2419d490, "java.util.concurrent.ConcurrentHashMap", 65},
                 {0x24185f68, "java.util.TreeMap", 16},
                 {0x24196458, "java.util.TreeMap", 0}});
}

TEST_CASE("collections: the report's section sums per class, ranks by retained bytes, ignores threads") {
    LoadedDump dump = load_dump(test::data_path("phd/heapdump.20100112.141124.11580.0002.phd"), {});
    analysis::Findings analysis = analysis::analyse(dump, {.top = 1000, .keep_unreachable = true});
    std::string one, two;
    tbb::task_arena(1).execute([&] { one = reports::json_report(analysis); });
    tbb::task_arena(2).execute([&] { two = reports::json_report(analysis); });
    CHECK(one == two);
    auto section = nlohmann::json::parse(one)["collections"];
    CHECK(section["computed"] == true);
    std::uint64_t instances = 0;
    for (const auto& row : section["classes"]) {
        CHECK(row["instances"] >= row["empty"].get<std::uint64_t>() + row["unknown"].get<std::uint64_t>());
        instances += row["instances"].get<std::uint64_t>();
        if (row["class"] == "java.util.Properties") CHECK(row["counted_as"] == "java.util.Properties");
    }
    const auto& top = section["top"];
    CHECK(top.size() == instances);  // --top 1000 covers them all; none is unknown here
    for (std::size_t i = 1; i < top.size(); ++i) CHECK(top[i - 1]["retained_bytes"] >= top[i]["retained_bytes"]);
    auto hash_map = std::find_if(top.begin(), top.end(), [](const auto& row) { return row["id"] == "0xcb1d88"; });
    REQUIRE(hash_map != top.end());
    CHECK((*hash_map)["class"] == "java.util.HashMap");
    CHECK((*hash_map)["entries"] == 454);
}

TEST_CASE("collections: a report of an analysis that did not count them says they were not computed") {
    LoadedDump dump = load_dump(test::data_path("hprof/sun_jdk6_18_x32.hprof"), {});
    analysis::Findings analysis = analysis::analyse(dump, {.top = 10, .report = false});
    auto section = nlohmann::json::parse(reports::json_report(analysis))["collections"];
    CHECK(section["computed"] == false);
    CHECK(section["classes"].empty());
    CHECK(section["top"].empty());
}

TEST_CASE("collections: every collection MAT's CreateCollectionDump fills has its COUNT entries") {
    // CreateCollectionDump.java puts COUNT entries in every collection its *TestData objects
    // hold, none in the Empty* ones. COUNT was 17 for the 2014 HPROFs and 341 (colliding keys:
    // Java 8 tree bins) for the 2016 PHD. Attributes and PrinterStateReasons take only one
    // special key (the 2015 version, in the PHD).
    struct Case {
        const char* file;
        std::uint64_t count;
    };
    for (Case c : {Case{"hprof/oracle_jdk7_21_x64.hprof", 17}, Case{"hprof/oracle_jdk8_05_x64.hprof", 17},
                   Case{"phd/heapdump.20160404.083909.9480.0002.phd", 341}}) {
        CAPTURE(c.file);
        LoadedDump dump = load_dump(test::data_path(c.file), {});
        const graph::HeapGraph& g = dump.graph;
        graph::CollectionSizer sizer(g);
        std::uint64_t checked = 0;
        for (NodeId v = 0; v < g.node_count(); ++v) {
            const std::string& holder = g.classes[g.types.class_index(v)].name;
            if (g.types.kind(v) != NodeKind::instance || !holder.starts_with("org.eclipse.mat.tests.CreateCollectionDump$") ||
                !holder.ends_with("TestData"))
                continue;
            for (NodeId array : g.out.of(v)) {
                if (g.types.kind(array) != NodeKind::object_array) continue;
                for (NodeId coll : g.out.of(array)) {
                    if (g.types.kind(coll) != NodeKind::instance || sizer.shape(coll) == graph::CollectionShape::none) continue;
                    std::string name = graph::node_class_name(g, coll);
                    CAPTURE(name);
                    bool one_key = name == "java.util.jar.Attributes" ||
                                   name == "javax.print.attribute.standard.PrinterStateReasons";
                    std::uint64_t expected = holder.find("$Empty") != std::string::npos ? 0 : one_key ? 1 : c.count;
                    CHECK(sizer.size(coll) == expected);
                    ++checked;
                }
            }
        }
        CHECK(checked >= 24);
    }
}
