// HPROF input that is valid but shaped to cost out of proportion, and names the dump gives
// badly: a class hierarchy thousands of classes deep (layouts share their super chain: memory
// and time linear in classes and fields), class names in modified UTF-8, LOAD CLASS records
// whose name is missing or empty. Each dump is generated here, the smallest that shows it.
#include <doctest/doctest.h>

#include <chrono>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;
using heapgraph::test::ByteBuilder;

namespace {

// An HPROF file with 8-byte ids: the header, then whole records.
struct Hprof {
    ByteBuilder b;
    Hprof() { b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0); }  // header, id size 8, timestamp

    void record(std::uint8_t tag, const ByteBuilder& body) {
        b.u1(tag).u4(0).u4(body.size());  // tag, time, length
        b.bytes.insert(b.bytes.end(), body.bytes.begin(), body.bytes.end());
    }
    void string(ObjectId id, const std::string& text) {
        ByteBuilder body;
        body.id(id).text(text);
        record(0x01, body);
    }
    void load_class(ObjectId class_id, ObjectId name_id) {
        ByteBuilder body;
        body.u4(1).id(class_id).u4(0).id(name_id);  // serial, class id, stack trace serial, name id
        record(0x02, body);
    }
};

// CLASS DUMP with one instance field of `field_type` (none when 0) and no statics.
void class_dump(ByteBuilder& s, ObjectId id, ObjectId super, ObjectId field_name = 0, std::uint8_t field_type = 0) {
    s.u1(0x20).id(id).u4(0).id(super);  // tag, class id, stack trace serial, super class
    s.id(0).id(0).id(0).id(0).id(0);     // loader, signers, protection domain, 2 reserved
    s.u4(0).u2(0).u2(0);                  // instance size, constant pool, statics
    if (field_type) s.u2(1).id(field_name).u1(field_type);
    else s.u2(0);
}

// ---- a deep hierarchy ----------------------------------------------------------------------

constexpr std::uint32_t kDepth = 20000;
constexpr ObjectId kFirstClass = 0x100000;     // class k at kFirstClass + 8k
constexpr ObjectId kFirstInstance = 0x800000;  // instances of the deepest class, apart by more than their size
constexpr ObjectId kClassNames = 0x1000000000, kFieldNames = 0x2000000000;

ObjectId deep_class(std::uint32_t k) { return kFirstClass + 8 * ObjectId{k}; }
ObjectId deep_instance(std::uint32_t i) { return kFirstInstance + ObjectId{i} * 8 * (kDepth + 8); }

// Classes C0 <- C1 <- ... <- C19999, each declaring one object field "f<k>", and three
// instances of C19999: a GC root I0 whose f0 (the last value, C0's) holds I1, whose f19999
// (the first value, its own class's) holds I2.
std::vector<std::uint8_t> deep_hierarchy() {
    Hprof h;
    for (std::uint32_t k = 0; k < kDepth; ++k) {
        std::string number = std::to_string(k);  // appended: gcc 12 misreads "f" + to_string(k) as an overlap
        h.string(kClassNames + k, std::string("deep/C").append(number));
        h.string(kFieldNames + k, std::string("f").append(number));
        h.load_class(deep_class(k), kClassNames + k);
    }
    ByteBuilder s;
    for (std::uint32_t k = 0; k < kDepth; ++k) class_dump(s, deep_class(k), k ? deep_class(k - 1) : 0, kFieldNames + k, 2);
    for (std::uint32_t i = 0; i < 3; ++i) {
        s.u1(0x21).id(deep_instance(i)).u4(0).id(deep_class(kDepth - 1)).u4(8 * kDepth);  // INSTANCE, its field bytes
        for (std::uint32_t level = kDepth; level-- > 0;)  // values in dump order: C19999's first, C0's last
            s.id(i == 0 && level == 0 ? deep_instance(1) : i == 1 && level == kDepth - 1 ? deep_instance(2) : 0);
    }
    s.u1(0x01).id(deep_instance(0)).id(0x77);  // ROOT JNI GLOBAL: I0
    h.record(0x1C, s);                         // HEAP DUMP SEGMENT
    h.record(0x2C, {});                        // HEAP DUMP END
    return h.b.bytes;
}

graph::NodeId node_of(const LoadedDump& dump, ObjectId address) {
    const graph::NodeId node = dump.addresses.node_of(address);
    REQUIRE(node != graph::kNoNode);
    return node;
}

}  // namespace

TEST_CASE("hprof bounds: a class hierarchy 20,000 deep loads and gets its dominators in linear memory and time") {
    const std::vector<std::uint8_t> bytes = deep_hierarchy();  // 2.9 MB
    std::optional<LoadedDump> dump;
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t rise = test::peak_rss_increase([&] {
        dump = load_dump_bytes(bytes, "deep.hprof", {});
        auto retained = graph::compute_retained(dump->graph, {.keep_unreachable = false});
        CHECK(retained.tree.super_root_retained_bytes > 0);
    });
    const double elapsed = test::seconds_since(start);
    // Flattened per class, the layouts alone took 20,000²/2 fields: over 8 GB.
    CHECK(rise <= 512u << 20);
    CHECK(elapsed <= 5.0);
    MESSAGE("peak RSS rise " << (rise >> 20) << " MB, " << elapsed << " s");
    CHECK(graph::summarize(dump->graph).objects == 3);  // instances; the classes are counted apart
    // Sizes fold down the chain: 20,000 reference fields (4 bytes with compressed oops, 8
    // without) after a 12- or 16-byte header, aligned to 8.
    const std::uint64_t shallow = dump->graph.shallow_bytes[node_of(*dump, deep_instance(0))];
    CHECK((shallow == 12 + 4 * kDepth + 4 || shallow == 16 + 8 * kDepth));
    CHECK(dump->field_names.instance_fields.at(kDepth - 1).total == kDepth);
}

TEST_CASE("hprof bounds: fields of a 20,000-deep hierarchy are named on paths, the farthest super class's too") {
    const std::vector<std::uint8_t> bytes = deep_hierarchy();
    LoadedDump dump = load_dump_bytes(bytes, "deep.hprof", {});
    const auto start = std::chrono::steady_clock::now();
    graph::PathTree paths = graph::shortest_path_tree(dump.graph, dump.weak_edges);
    const graph::NodeId i2 = node_of(dump, deep_instance(2));
    name_edges(dump, graph::path_edges(paths, graph::path_from_root(paths, i2)));
    CHECK(graph::edge_name(dump.graph, dump.field_names, paths, node_of(dump, deep_instance(1))) == "f0");
    CHECK(graph::edge_name(dump.graph, dump.field_names, paths, i2) == "f19999");
    CHECK(test::seconds_since(start) <= 5.0);
    // Without nulls a slot is its field: the k-th reference of the deepest class, walking up.
    CHECK(dump.field_names.instance_field(kDepth - 1, 0) == "f19999");
    CHECK(dump.field_names.instance_field(kDepth - 1, kDepth - 1) == "f0");
    CHECK(dump.field_names.instance_field(kDepth - 1, kDepth).empty());
}

// ---- class names -----------------------------------------------------------------------------

namespace {

// One class per name string (nullopt: a LOAD CLASS whose string id has no STRING record), and
// a class with no LOAD CLASS at all, each with one instance.
std::vector<std::uint8_t> named_classes(const std::vector<std::optional<std::string>>& names) {
    Hprof h;
    ByteBuilder s;
    for (std::uint32_t k = 0; k < names.size(); ++k) {
        if (names[k]) h.string(0x500 + k, *names[k]);
        h.load_class(0x1000 + 0x10 * k, 0x500 + k);
    }
    for (std::uint32_t k = 0; k <= names.size(); ++k) {
        class_dump(s, 0x1000 + 0x10 * k, 0);
        s.u1(0x21).id(0x9000 + 0x10 * k).u4(0).id(0x1000 + 0x10 * k).u4(0);  // INSTANCE, no fields
    }
    h.record(0x1C, s);
    h.record(0x2C, {});
    return h.b.bytes;
}

const Warning* warning(const LoadedDump& dump, const std::string& code) {
    for (const Warning& w : dump.warnings)
        if (w.code == code) return &w;
    return nullptr;
}

std::string class_name(const LoadedDump& dump, std::uint32_t k) { return dump.graph.classes.at(k).name; }

}  // namespace

TEST_CASE("hprof bounds: class names are decoded from modified UTF-8") {
    LoadedDump dump = load_dump_bytes(named_classes({
                                          "app/\xED\xA0\xBD\xED\xB8\x80",  // U+1F600 as a surrogate pair
                                          "app/A\xC0\x80" "B",           // U+0000 as C0 80
                                          "app/\xED\xA0\xBD" "x",        // a lone high surrogate
                                          "app/\xED\xB8\x80",            // a lone low surrogate
                                          "app/\xFF\x80z\xE4\xB8",       // bytes that are no sequence, a cut one
                                          "app/\xC3\xA9t\xC3\xA9",       // plain 2-byte sequences: "été"
                                      }),
                                      "names.hprof", {});
    CHECK(class_name(dump, 0) == "app.\xF0\x9F\x98\x80");
    CHECK(class_name(dump, 1) == std::string("app.A\0B", 7));
    CHECK(class_name(dump, 2) == "app.\xEF\xBF\xBDx");
    CHECK(class_name(dump, 3) == "app.\xEF\xBF\xBD");
    CHECK(class_name(dump, 4) == "app.\xEF\xBF\xBD\xEF\xBF\xBDz\xEF\xBF\xBD");
    CHECK(class_name(dump, 5) == "app.\xC3\xA9t\xC3\xA9");
}

TEST_CASE("hprof bounds: a LOAD CLASS naming a missing string and an empty name get warnings of their own") {
    const std::vector<std::uint8_t> bytes = named_classes({"app/Fine", std::nullopt, "", std::nullopt});
    LoadedDump dump = load_dump_bytes(bytes, "unnamed.hprof", {});
    CHECK(class_name(dump, 0) == "app.Fine");
    CHECK(class_name(dump, 1) == "<unnamed class 0x00001010>");
    CHECK(class_name(dump, 2) == "<unnamed class 0x00001020>");
    CHECK(class_name(dump, 4) == "<unnamed class 0x00001040>");  // no LOAD CLASS
    // Header 31 bytes; STRING "app/Fine" 9 + 16; LOAD CLASS records 9 + 24 each, the STRING
    // "" (9 + 8) before the third.
    const std::uint64_t second_load = 31 + 25 + 33;
    const Warning* missing = warning(dump, "class_name_strings_missing");
    REQUIRE(missing);
    CHECK(missing->count == 2);
    CHECK(missing->message == "LOAD CLASS records whose name string id has no STRING record (the first: LOAD_CLASS @" +
                                  hex_offset(second_load) + " names string 0x00000501): their classes are named "
                                                             "<unnamed class ID>");
    const Warning* empty = warning(dump, "empty_class_names");
    REQUIRE(empty);
    CHECK(empty->count == 1);
    CHECK(empty->message == "LOAD CLASS records whose name string is empty (the first: LOAD_CLASS @" +
                                hex_offset(second_load + 33 + 17) + " for class 0x00001020): their classes are named "
                                                                     "<unnamed class ID>");
    const Warning* unnamed = warning(dump, "unnamed_classes");
    REQUIRE(unnamed);
    CHECK(unnamed->count == 1);
    CHECK(unnamed->message == "classes with no LOAD CLASS name record");
}

// ---- class dumps lost to a cut ---------------------------------------------------------------

TEST_CASE("hprof bounds: a cut that loses class dumps keeps their instances, counted in the truncated warning") {
    Hprof h;
    h.string(0x501, "app/Lost");
    h.load_class(0x1010, 0x501);
    ByteBuilder s;
    class_dump(s, 0x1000, 0, 0x601, 2);                 // Base { Object f; }
    class_dump(s, 0x1020, 0x1030, 0x602, 10);           // Child { int g; } extends a class dumped later
    s.u1(0x21).id(0x9000).u4(0).id(0x1000).u4(8).id(0x9010);  // INSTANCE of Base: f -> the next one
    s.u1(0x21).id(0x9010).u4(0).id(0x1010).u4(12).id(0x9000).u4(7);  // INSTANCE of Lost (dumped later)
    s.u1(0x21).id(0x9020).u4(0).id(0x1020).u4(12).u4(7).id(0x9000);  // INSTANCE of Child
    s.u1(0x01).id(0x9000).id(0x77);                      // ROOT JNI GLOBAL
    const std::size_t cut_at = h.b.size() + 9 + s.size() + 5;  // 5 bytes into the next sub-record
    class_dump(s, 0x1010, 0, 0x603, 2);                 // Lost: the cut falls in its class dump
    class_dump(s, 0x1030, 0);
    h.record(0x1C, s);
    h.record(0x2C, {});
    Bytes cut(h.b.bytes.data(), cut_at);
    LoadOptions options;
    options.allow_truncated = true;
    LoadedDump dump = load_dump_bytes(cut, "lost.hprof", options);
    const Warning* truncated = warning(dump, "truncated");
    REQUIRE(truncated);
    CAPTURE(truncated->message);
    CHECK(truncated->message.ends_with("; 2 instances of 2 classes whose CLASS DUMP lay after the cut: their "
                                       "references are lost"));
    CHECK(graph::summarize(dump.graph).objects == 3);
    const graph::NodeId lost = node_of(dump, 0x9010);
    CHECK(dump.graph.classes[dump.graph.types.class_index(lost)].name == "app.Lost");  // named by its LOAD CLASS
    CHECK(dump.graph.out.degree(lost) == 0);      // no references read
    CHECK(dump.graph.shallow_bytes[lost] >= 12 + 12);                              // header and field bytes
    // Strictly, the cut is an error naming where the file ends.
    CHECK(test::load_error(cut, "lost.hprof").find("lost.hprof @") == 0);
    CHECK(test::load_error(cut, "lost.hprof").find(hex_offset(cut_at)) != std::string::npos);
}

TEST_CASE("hprof bounds: an array length past Java's 2^31 - 1 is refused at its sub-record, NODATA arrays too") {
    for (std::uint8_t tag : {0x23, 0xC3}) {
        Hprof h;
        ByteBuilder s;
        s.u1(tag).id(0x1000).u4(0).u4(0x80000000u).u1(10);  // PRIMITIVE ARRAY (NODATA) int[2^31]
        if (tag == 0x23) s.bytes.resize(s.size() + 64);      // a few data bytes: the claim is refused before
        h.record(0x1C, s);
        h.b.u1(0x2C).u4(0).u4(0);
        const std::uint64_t at = 31 + 9;  // header, then the segment's record header
        std::string error = test::load_error(h.b.bytes, "long.hprof");
        CAPTURE(int(tag));
        CAPTURE(error);
        CHECK(error.find("long.hprof @" + hex_offset(at) + ": ") == 0);
        // With data, the bytes the length needs run past the segment first.
        CHECK(error.find(tag == 0xC3 ? "array length 2147483648 exceeds Java's maximum 2147483647" : "runs past the end") !=
              std::string::npos);
    }
}
