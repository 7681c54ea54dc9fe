// The classic text writer: OpenJ9's exact layout, and real dumps that survive the trip to
// classic text and back (issue: every PHD and two HPROFs, both layouts).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <sstream>

#include "pipeline.h"
#include "reports.h"
#include "reports/classic_text.h"
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
        rows[dump.addresses[v]] = {graph::node_class_name(dump.graph, v), dump.graph.shallow_bytes[v],
                                   idom < dump.graph.node_count() ? dump.addresses[idom] : 0, r.tree.retained_bytes[v]};
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
