// The one heap builder, driven by hand through its sink: class records, objects and roots as a
// decoder would add them, and the graph that comes out (node kinds, classes, shallow sizes,
// edges in row order, roots), for a format that records roots and for a rootless one whose
// loaders and roots are inferred.
#include <doctest/doctest.h>

#include <array>
#include <stdexcept>

#include "heap_builder.h"
#include "ibm_sink.h"
#include "inferred_roots.h"

using namespace heapgraph;

namespace {

using graph::NodeKind;

// A sink driver in miniature: objects go through one BlockSink, one block per call. Given
// class ordinals, it resolves class ids as the HPROF decoder does; without, it leaves them
// to the builder as PHD's and classic text's do.
struct Chunk {
    explicit Chunk(const std::unordered_map<ObjectId, std::uint32_t>* ordinals = nullptr) : sink(block, ordinals) {}
    EdgeBlock block;
    BlockSink sink;

    Chunk& object(ObjectId address, ObjectKind kind, ObjectId class_id, std::uint64_t bytes,
                  std::vector<ObjectId> refs = {}, std::uint8_t element_type = 0) {
        sink.add_object({address, kind, class_id, element_type, 0, bytes, address}, refs);
        return *this;
    }
    EdgeBlock done() {
        sink.finish();
        return std::move(block);
    }
};

HeapClass record(ObjectId id, std::string name, std::vector<ObjectId> refs = {}, std::uint64_t instance_bytes = 16) {
    return {id, 0, 0, std::move(name), instance_bytes, 64, id, std::move(refs), 0};
}

// Keys in the order a driver gives them: each object's class by id, first use first.
void key_every_class(HeapParts& parts) {
    for (const EdgeBlock& block : parts.blocks)
        for (const ClassKeyRef& key : block.class_keys) parts.class_keys.push_back({key.kind, key.id});
}

std::vector<ObjectId> row(const LoadedDump& dump, ObjectId from) {
    const graph::NodeId node = dump.addresses.node_of(from);
    std::vector<ObjectId> out;
    for (graph::NodeId to : dump.graph.out.of(static_cast<graph::NodeId>(node))) out.push_back(dump.addresses.address_of(to));
    return out;
}

graph::NodeId node(const LoadedDump& dump, ObjectId address) {
    return dump.addresses.node_of(address);
}

std::string class_of(const LoadedDump& dump, ObjectId address) {
    return dump.graph.classes[dump.graph.types.class_index(node(dump, address))].name;
}

std::string build_error(HeapParts& parts) {
    DumpInfo info;
    info.path = "fixture";
    try {
        build_heap(parts, info);
    } catch (const DumpError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("heap builder: objects, classes and roots added through the sink become the graph") {
    HeapParts parts;
    parts.namer = std::make_unique<IbmClassNamer>();
    parts.classes = {record(0x100, "java.lang.Object"), record(0x200, "com.example.Node", {0x100})};
    const std::unordered_map<ObjectId, std::uint32_t> ordinals = {{0x100, 1}, {0x200, 2}};
    parts.blocks.push_back(Chunk(&ordinals)
                               .object(0x1000, ObjectKind::instance, 0x200, 24, {0x1020, 0x1000})  // a node: next, itself
                               .object(0x1020, ObjectKind::instance, 0x200, 24, {0x9999})          // one dangling ref
                               .object(0x1040, ObjectKind::primitive_array, 0, 40, {}, 10)         // int[]
                               .done());
    parts.blocks.push_back(Chunk(&ordinals).object(0x2000, ObjectKind::object_array, 0x300, 32, {0x1000, 0x1040}).done());
    BlockSink(parts.blocks[1], nullptr).add_root({0x2000, RootKind::jni_global, 0});
    key_every_class(parts);
    DumpInfo info;
    LoadedDump dump = build_heap(parts, info);

    REQUIRE(dump.addresses.addresses() == std::vector<ObjectId>{0x100, 0x200, 0x1000, 0x1020, 0x1040, 0x2000});
    const graph::HeapGraph& g = dump.graph;
    std::vector<NodeKind> kinds;
    for (graph::NodeId v = 0; v < g.node_count(); ++v) kinds.push_back(g.types.kind(v));
    CHECK(kinds == std::vector<NodeKind>{NodeKind::class_object, NodeKind::class_object, NodeKind::instance,
                                         NodeKind::instance, NodeKind::primitive_array, NodeKind::object_array});
    CHECK(g.shallow_bytes == std::vector<std::uint64_t>{64, 64, 24, 24, 40, 32});
    CHECK(class_of(dump, 0x1000) == "com.example.Node");
    CHECK(class_of(dump, 0x1040) == "int[]");
    CHECK(class_of(dump, 0x2000) == "<unknown class 0x00000300>");  // no record: the namer names it
    CHECK(class_of(dump, 0x100) == "java.lang.Class");
    // Rows: the class edge first, then references in record order; dangling ones dropped.
    CHECK(row(dump, 0x1000) == std::vector<ObjectId>{0x200, 0x1020, 0x1000});
    CHECK(row(dump, 0x1020) == std::vector<ObjectId>{0x200});
    CHECK(row(dump, 0x200) == std::vector<ObjectId>{0x100});  // no java.lang.Class record: no class edge
    CHECK(row(dump, 0x2000) == std::vector<ObjectId>{0x1000, 0x1040});
    REQUIRE(g.roots.size() == 3);  // the JNI global, then the bootstrap classes (no sticky-class roots)
    CHECK(g.roots[0].node == node(dump, 0x2000));
    CHECK(g.root_kind_names[g.roots[0].kind] == "jni_global");
    CHECK(g.root_kind_names[g.roots[1].kind] == "system_class");
    // One dangling reference of ten is counted, not warned about: HotSpot leaves objects out.
    REQUIRE(dump.warnings.size() == 1);
    CHECK(dump.warnings[0].code == "system_classes_as_roots");
    CHECK(info.dangling_references == 1);
    // The load leaves reachability to the analysis (graph/heap_graph.h).
    CHECK(g.reachable.words() == 0);
    graph::NodeBits walked;
    CHECK(graph::reachable_of(g, walked).test(node(dump, 0x1020)));
}

TEST_CASE("heap builder: a thread's local roots hang from its thread object, at the end of its row") {
    HeapParts parts;
    parts.namer = std::make_unique<IbmClassNamer>();
    parts.classes = {record(0x100, "java.lang.Thread")};
    const std::unordered_map<ObjectId, std::uint32_t> ordinals = {{0x100, 1}};
    parts.blocks.push_back(Chunk(&ordinals)
                               .object(0x1000, ObjectKind::instance, 0x100, 16, {0x1010})  // the thread
                               .object(0x1010, ObjectKind::instance, 0x100, 16)
                               .object(0x1020, ObjectKind::instance, 0x100, 16)            // a local of the thread
                               .done());
    BlockSink roots(parts.blocks[0], nullptr);
    roots.add_root({0x1000, RootKind::thread_object, 7});
    roots.add_root({0x1020, RootKind::java_frame, 7});
    roots.add_root({0x100, RootKind::sticky_class, 0});
    key_every_class(parts);
    DumpInfo info;
    LoadedDump dump = build_heap(parts, info);
    CHECK(row(dump, 0x1000) == std::vector<ObjectId>{0x100, 0x1010, 0x1020});
    REQUIRE(dump.graph.roots.size() == 3);
    CHECK_FALSE(dump.graph.roots[1].global);
    CHECK(dump.warnings.empty());  // a sticky-class root: no bootstrap classes are made roots
}

TEST_CASE("heap builder: a rootless format gets its class loaders and GC roots inferred") {
    // java/lang/ClassLoader and a subclass; one loader object; a class that names it (its
    // first static reference); java.lang.* classes enough for no bootstrap loader to be found.
    InferredParts inferred;
    inferred.raw_names = {"java/lang/ClassLoader", "com/example/AppLoader", "com/example/Thing", "java/lang/Class"};
    HeapParts parts;
    parts.namer = std::make_unique<IbmClassNamer>();
    parts.objects_name_records = true;
    parts.record_name = "PHD record";
    HeapClass app = record(0x200, "com.example.AppLoader", {0x100});
    app.super_id = 0x100;
    parts.classes = {record(0x100, "java.lang.ClassLoader"), app, record(0x300, "com.example.Thing", {0x1000}),
                     record(0x400, "java.lang.Class")};
    parts.blocks.push_back(Chunk()
                               .object(0x1000, ObjectKind::instance, 0x200, 32)                 // the loader
                               .object(0x1020, ObjectKind::instance, 0x300, 16, {0x1040})       // a Thing
                               .object(0x1040, ObjectKind::object_array, 0x300, 24, {0x1020})   // Thing[]
                               .done());
    key_every_class(parts);
    parts.inferred = &inferred;
    DumpInfo info;
    LoadedDump dump = build_heap(parts, info);

    CHECK(info.roots_inferred);
    const graph::HeapGraph& g = dump.graph;
    CHECK(class_of(dump, 0x1040) == "com.example.Thing[]");  // arrays name their element class
    const graph::ClassInfo& thing = g.classes[g.types.class_index(node(dump, 0x1020))];
    CHECK(thing.loader == node(dump, 0x1000));
    CHECK(g.classes[g.types.class_index(node(dump, 0x1040))].loader == node(dump, 0x1000));  // the element's loader
    // The loader references each class it defines, and each class its loader (DTFJ, MAT):
    // Thing's record holds the loader already, so only the loader -> Thing edge is added.
    CHECK(row(dump, 0x1000) == std::vector<ObjectId>{0x200, 0x300});
    CHECK(row(dump, 0x300) == std::vector<ObjectId>{0x400, 0x1000});
    CHECK(g.root_kind_names == std::vector<std::string>{"system_class", "unreferenced", "thread_object"});
    std::vector<ObjectId> rooted;
    for (const graph::GcRoot& r : g.roots) rooted.push_back(dump.addresses.address_of(r.node));
    // Bootstrap classes (those no loader object names), then what nothing references. The
    // Thing and its array reference each other only: both stay unrooted, as MAT has them.
    CHECK(rooted == std::vector<ObjectId>{0x100, 0x200, 0x400});
    CHECK(dump.warnings.empty());
}

TEST_CASE("heap builder: an address dumped twice or at 0 is an error naming the record") {
    SUBCASE("twice: the lowest such address, at its second record") {
        HeapParts parts;
        parts.namer = std::make_unique<IbmClassNamer>();
        parts.classes = {record(0x100, "A")};
        parts.blocks.push_back(Chunk().object(0x1000, ObjectKind::instance, 0x100, 16).object(0x100, ObjectKind::instance, 0x100, 16).done());
        key_every_class(parts);
        CHECK(build_error(parts) ==
              "fixture @0x00000100: heap dump dumps object 0x00000100 a second time: one address cannot hold two objects");
    }
    SUBCASE("at 0, in a format's own words") {
        HeapParts parts;
        parts.namer = std::make_unique<IbmClassNamer>();
        parts.record_name = "PHD record";
        parts.null_address = "places an object at address 0, which is null";
        parts.blocks.push_back(Chunk().object(0x40, ObjectKind::primitive_array, 0, 16, {}, 8).done());
        parts.blocks.push_back(Chunk().object(0, ObjectKind::primitive_array, 0, 16, {}, 8).done());
        key_every_class(parts);
        CHECK(build_error(parts) == "fixture @0x00000000: PHD record places an object at address 0, which is null");
    }
}

TEST_CASE("heap builder: sizes whose sum would pass 2^63 bytes are an error at the record that passes it") {
    HeapParts parts;
    parts.namer = std::make_unique<IbmClassNamer>();
    parts.record_name = "classic record";
    parts.blocks.push_back(Chunk()
                               .object(0x1000, ObjectKind::primitive_array, 0, kMaxHeapBytes / 2, {}, 8)
                               .object(0x2000, ObjectKind::primitive_array, 0, kMaxHeapBytes / 2, {}, 8)
                               .object(0x3000, ObjectKind::primitive_array, 0, 8, {}, 8)
                               .done());
    key_every_class(parts);
    CHECK(build_error(parts) ==
          "fixture @0x00003000: classic record takes the heap's objects past 2^63 bytes, more than any heap can hold");
}

TEST_CASE("heap builder: dangling references are counted, and a warning only past a fifth of all references") {
    auto build = [](std::vector<ObjectId> refs) {
        HeapParts parts;
        parts.namer = std::make_unique<IbmClassNamer>();
        parts.classes = {record(0x100, "java.lang.Object")};
        const std::unordered_map<ObjectId, std::uint32_t> ordinals = {{0x100, 1}};
        parts.blocks.push_back(Chunk(&ordinals)
                                   .object(0x1000, ObjectKind::instance, 0x100, 16, refs)
                                   .object(0x1010, ObjectKind::instance, 0x100, 16)
                                   .done());
        key_every_class(parts);
        DumpInfo info;
        LoadedDump dump = build_heap(parts, info);
        dump.info.dangling_references = info.dangling_references;
        return dump;
    };
    // Kept: two class edges and three references; dangling: one (1 of 6) or two (2 of 7).
    LoadedDump few = build({0x1010, 0x1010, 0x1010, 0x9990});
    CHECK(few.info.dangling_references == 1);
    CHECK(std::none_of(few.warnings.begin(), few.warnings.end(), [](const Warning& w) { return w.code == "dangling_references"; }));
    LoadedDump many = build({0x1010, 0x1010, 0x1010, 0x9990, 0x9998});
    CHECK(many.info.dangling_references == 2);
    auto warning = std::find_if(many.warnings.begin(), many.warnings.end(),
                                [](const Warning& w) { return w.code == "dangling_references"; });
    REQUIRE(warning != many.warnings.end());
    CHECK(warning->count == 2);
}
