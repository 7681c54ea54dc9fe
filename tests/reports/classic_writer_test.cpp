// The classic text writer: OpenJ9's exact layout, and real dumps that survive the trip to
// classic text and back (issue: every PHD and two HPROFs, both layouts).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "pipeline.h"
#include "reports.h"
#include "reports/classic_text.h"
#include "html_fixtures.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

using test::classic_of;

LoadedDump load_text(const std::string& text, const std::string& name) {
    return load_dump_bytes(std::vector<std::uint8_t>(text.begin(), text.end()), name, {});
}

// Per object address: its class, shallow size, immediate dominator's address (0: the super
// root) and retained bytes, with unreachable objects kept as the CLI does for these formats.
struct Row {
    std::string cls;
    std::uint64_t shallow, idom, retained;
    bool operator==(const Row&) const = default;
};
std::map<std::uint64_t, Row> dominator_rows(const LoadedDump& dump) {
    graph::Retained r = graph::compute_retained(dump.graph, {.keep_unreachable = true});
    std::map<std::uint64_t, Row> rows;
    for (graph::NodeId v = 0; v < dump.graph.node_count(); ++v) {
        graph::NodeId idom = r.tree.idom[v];
        rows[dump.addresses.address_of(v)] = {graph::node_class_name(dump.graph, v), dump.graph.shallow_bytes[v],
                                   idom < dump.graph.node_count() ? dump.addresses.address_of(idom) : 0, r.tree.retained_bytes[v]};
    }
    return rows;
}

// (class name, count, bytes) rows: class indexes may differ between the two loads.
std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> histogram(const LoadedDump& dump) {
    std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> rows;
    for (const graph::HistogramRow& r : graph::class_histogram(dump.graph, true))
        rows.emplace_back(dump.graph.classes[r.class_index].name, r.count, r.shallow_bytes);
    std::sort(rows.begin(), rows.end());
    return rows;
}

void check_same_counts(const LoadedDump& a, const LoadedDump& b) {
    graph::Summary x = graph::summarize(a.graph), y = graph::summarize(b.graph);
    CHECK(x.objects == y.objects);
    CHECK(x.instances == y.instances);
    CHECK(x.object_arrays == y.object_arrays);
    CHECK(x.primitive_arrays == y.primitive_arrays);
    CHECK(x.classes == y.classes);
    CHECK(x.shallow_bytes == y.shallow_bytes);
    for (const Warning& w : b.warnings) CHECK(w.code != "classic_trailer_mismatch");
}

}  // namespace

TEST_CASE("classic writer: a dump read from OpenJ9's layout is written back byte for byte") {
    // OpenJ9 heapdump_classic.c: no newline after the version, "\n0x%p [%zu] OBJ|CLS type\n\t",
    // then "0x%p " per non-null reference; objects, then classes, then the two trailers.
    std::string text =
        "// Version: JRE 1.8.0 Linux amd64-64 test"
        "\n0x00000000E0000AF0 [16] OBJ java/lang/String\n\t0x00000000E0000B00 "
        "\n0x00000000E0000B00 [24] OBJ [C\n\t"
        "\n0x00000000E0000B18 [24] OBJ [Ljava/lang/String;\n\t0x00000000E0000AF0 0x00000000E0000AF0 "
        "\n0x00000000E00174F0 [80] CLS java/lang/String\n\t0x00000000E0000B18 "
        "\n0x00000000E0017540 [80] CLS [C\n\t"
        "\n// Breakdown - Classes: 2, Objects: 1, ObjectArrays: 1, PrimitiveArrays: 1\n"
        "// EOF:  Total 'Objects',Refs(null) : 5,4(0)\n";
    LoadedDump dump = load_text(text, "fixture.txt");
    CHECK(dump.warnings.empty());
    CHECK(classic_of(dump, false, "JRE 1.8.0 Linux amd64-64 test") == text);
}

TEST_CASE("classic writer: the sdk layout puts the class block first and reads back the same") {
    LoadedDump dump = load_dump(test::data_path("hprof/hprof-32.bin"), {});
    std::string sdk = classic_of(dump, true);
    CHECK(sdk.find("\n\t") == std::string::npos);  // no tab-led lines
    LoadedDump back = load_text(sdk, "sdk.txt");
    CHECK(back.info.format_version.starts_with("classic sdk"));
    check_same_counts(dump, back);
}

TEST_CASE("classic writer: every PHD converted to either layout gives the same histogram and dominators") {
    for (const char* file : {"phd/heapdump.20100112.141124.11580.0002.phd", "phd/heapdump.20100209.165721.4484.phd",
                             "phd/heapdump.20160404.083909.9480.0002.phd"}) {
        LoadedDump dump = load_dump(test::data_path(file), {});
        std::map<std::uint64_t, Row> expected = dominator_rows(dump);
        for (bool sdk : {false, true}) {
            CAPTURE(file);
            CAPTURE(sdk);
            LoadedDump back = load_text(classic_of(dump, sdk), "converted.txt");
            check_same_counts(dump, back);
            CHECK(histogram(back) == histogram(dump));
            CHECK(graph::summarize(back.graph).gc_roots_by_kind == graph::summarize(dump.graph).gc_roots_by_kind);
            CHECK(dominator_rows(back) == expected);
        }
    }
}

TEST_CASE("classic writer: HPROF dumps converted to either layout keep their object and class counts") {
    for (const char* file : {"hprof/sun_jdk6_18_x32.hprof", "hprof/oracle_jdk8_05_x64.hprof"}) {
        LoadedDump dump = load_dump(test::data_path(file), {});
        for (bool sdk : {false, true}) {
            CAPTURE(file);
            CAPTURE(sdk);
            check_same_counts(dump, load_text(classic_of(dump, sdk), "converted.txt"));
        }
    }
}

TEST_CASE("classic writer: the convert command writes the file atomically and refuses unknown layouts") {
    std::string dir = test::temp_dir();
    std::string dump = test::data_path("phd/heapdump.20100209.165721.4484.phd");
    test::Run ok = test::run("convert " + dump + " --to classic --variant sdk -o " + dir + "/out.txt");
    CHECK(ok.code == 0);
    test::Run again = test::run("analyze " + dir + "/out.txt --json " + dir + "/out.json");
    CHECK(again.code == 0);
    test::Run bad = test::run("convert " + dump + " --to classic --variant ibm -o " + dir + "/bad.txt");
    CHECK(bad.code == 1);
    test::Run missing = test::run("convert " + dump + " --to classic -o /nonexistent-dir/x.txt");
    CHECK(missing.code == 4);
}

namespace {

// A heap with one class object and one object per case: the object's class has the case's
// name, and the object the case's kind. Classes without a class object get none.
struct NamedObject {
    std::string class_name;
    graph::NodeKind kind;
};
// How many classes the objects (not the class objects) belong to.
std::size_t object_classes(const LoadedDump& dump) {
    std::set<std::uint32_t> classes;
    for (graph::NodeId v = 0; v < dump.graph.node_count(); ++v)
        if (dump.graph.types.kind(v) != graph::NodeKind::class_object) classes.insert(dump.graph.types.class_index(v));
    return classes.size();
}

LoadedDump hostile_names_heap(const std::vector<NamedObject>& cases) {
    graph::HeapInput in;
    in.classes.push_back({"java.lang.Class", graph::kNoNode, graph::kNoNode});
    LoadedDump dump;
    std::vector<std::uint64_t> addresses;
    for (const NamedObject& c : cases) {
        auto object = static_cast<graph::NodeId>(in.types.size());
        in.types.push_back(c.kind, static_cast<std::uint32_t>(in.classes.size()));
        in.shallow_bytes.push_back(24 + 8 * object);
        in.types.push_back(graph::NodeKind::class_object, 0);  // its class object
        in.shallow_bytes.push_back(100);
        in.classes.push_back({c.class_name, object + 1, graph::kNoNode});
        addresses.push_back(0x10000 + 0x100 * object);
        addresses.push_back(0x10000 + 0x100 * (object + 1));
    }
    dump.addresses = AddressIndex::of(addresses);
    dump.graph = graph::build_heap_graph(std::move(in));
    dump.info.id_size = 8;
    return dump;
}

}  // namespace

TEST_CASE("classic writer: class names the reader cannot take are rewritten, counted, and read back with the same counts") {
    using K = graph::NodeKind;
    const std::string long_name(70000, 'x');
    const std::vector<NamedObject> cases = {
        {std::string("nul\0byte", 8), K::instance},        // 0x00 ends a token
        {"\x01start", K::instance},                         // a control byte
        {"new\nline\ttab\r", K::instance},                  // blanks split the record
        {"del\x7f", K::instance},                           // DEL is no token byte
        {long_name, K::instance},                           // past a u2 length
        {long_name + "y", K::instance},                     // cut too, and kept apart from the one above
        {long_name + "[]", K::object_array},                // an array of it
        {"[", K::instance},                                 // read as an array once
        {"[", K::object_array},                             // not an array type: "[L\x5b;"
        {"Plain", K::object_array},                         // an object array whose class says no array
        {"int[]", K::object_array},                         // would read as a primitive array
        {"[[", K::instance},                                // only the first '[' escaped
        {"ok.Name", K::instance},                           // written as it is: not counted
        {"int[][]", K::object_array},                       // an array of int arrays: as it is
        {"long[]", K::primitive_array},                     // as it is
    };
    LoadedDump dump = hostile_names_heap(cases);
    std::ostringstream out;
    reports::ClassicWritten written = reports::write_classic({dump.graph, dump.addresses.addresses(), "test", 8, false}, out);
    const std::string text = out.str();
    CHECK(written.names_rewritten == 12);
    REQUIRE(written.examples.size() == 3);
    CHECK(written.examples[0] == "nul\\x00byte");
    CHECK(written.examples[1] == "\\x01start");
    CHECK(written.examples[2] == "new_line_tab_");
    CHECK(text.find("OBJ del\\x7f\n") != std::string::npos);
    CHECK(text.find("OBJ \\x5b\n") != std::string::npos);
    CHECK(text.find("OBJ [L\\x5b;\n") != std::string::npos);
    CHECK(text.find("OBJ [LPlain;\n") != std::string::npos);
    CHECK(text.find("OBJ [Lint;\n") != std::string::npos);  // reads back as of class int[]
    CHECK(text.find("OBJ ok/Name\n") != std::string::npos);
    CHECK(text.find("OBJ [[I\n") != std::string::npos);
    CHECK(text.find("OBJ [J\n") != std::string::npos);
    for (bool sdk : {false, true}) {
        CAPTURE(sdk);
        std::ostringstream layout;
        (void)reports::write_classic({dump.graph, dump.addresses.addresses(), "two\nlines", 8, sdk}, layout);  // one line written
        LoadedDump back = load_text(layout.str(), "names.txt");
        check_same_counts(dump, back);
        CHECK(back.info.format_version.ends_with(": two lines"));
        CHECK(object_classes(back) == object_classes(dump));  // no two names merged into one class
    }
}

TEST_CASE("classic writer: convert says on stderr how many class names it rewrote, and its file reads back") {
    // The payload dump's two class names hold blanks, which would split their records.
    std::string dir = test::temp_dir();
    std::vector<std::uint8_t> hprof = test::payload_hprof();
    std::ofstream(dir + "/payload.hprof", std::ios::binary).write(reinterpret_cast<const char*>(hprof.data()),
                                                                 static_cast<std::streamsize>(hprof.size()));
    test::Run convert = test::run("convert " + dir + "/payload.hprof --to classic -o " + dir + "/payload.txt");
    CHECK(convert.code == 0);
    CHECK(convert.out == "heapgraph: warning: 2 class names rewritten for classic text: <img_src=x_onerror=alert(1)> "
                         "<svg_onload=alert(2)>&amp;\"'\n");
    LoadedDump back = load_dump(dir + "/payload.txt", {});
    check_same_counts(load_dump_bytes(hprof, "payload.hprof", {}), back);
    test::Run plain = test::run("convert " + test::data_path("phd/heapdump.20100209.165721.4484.phd") +
                                " --to classic -o " + dir + "/plain.txt");
    CHECK(plain.out.empty());  // nothing rewritten, nothing said
}
