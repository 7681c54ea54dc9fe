// Every HPROF file in data/ (copied from public projects, see data/README.md) decodes to its
// last byte, and its record and root counts equal the figures in data/README.md, which come
// from PROVENANCE.md and hprof-slurp's golden output for hprof-32.bin.
#include <doctest/doctest.h>

#include <map>
#include <numeric>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

struct Expected {
    const char* file;
    std::uint32_t dump_index;
    std::uint32_t dumps_in_file;
    std::uint64_t classes, instances, object_arrays, primitive_arrays, root_records;
};

// Measured record counts from data/README.md (PROVENANCE.md "format (measured)").
const Expected kCorpus[] = {
    {"hprof/sun_jdk5_13_x32.hprof", 0, 1, 336, 544, 289, 196, 377},
    {"hprof/sun_jdk6_32bit.hprof", 0, 1, 1281, 8664, 2431, 3822, 1495},
    {"hprof/sun_jdk6_18_x32.hprof", 0, 1, 1260, 8518, 2399, 3933, 1473},
    {"hprof/sun_jdk6_18_x64.hprof", 0, 1, 1262, 13831, 3934, 9105, 1552},
    {"hprof/sun_jdk6_30_x64_compressedOops.hprof", 0, 1, 376, 1453, 434, 2088, 471},
    {"hprof/sun_jdk6_30_x64_nocompressedOops.hprof", 0, 1, 376, 1453, 434, 2088, 471},
    {"hprof/sun_jdk6_31_hprofagent_compressedOops.hprof", 0, 2, 377, 1270, 423, 763, 984},
    {"hprof/sun_jdk6_31_hprofagent_compressedOops.hprof", 1, 2, 380, 1297, 425, 784, 991},
    {"hprof/sun_jdk6_31_hprofagent_nocompressedOops.hprof", 1, 2, 380, 1297, 425, 784, 989},
    {"hprof/oracle_jdk7_21_x64.hprof", 0, 1, 541, 10217, 2430, 8853, 588},
    {"hprof/oracle_jdk8_05_x64.hprof", 0, 1, 603, 7920, 1752, 4965, 569},
    {"hprof/py-hprof_example-java.hprof", 0, 1, 504, 14484, 1500, 7977, 482},
    {"hprof/hprof-32.bin", 0, 1, 361, 1293, 423, 849, 862},
    {"hprof-android/leak_service_binder.hprof", 0, 1, 3645, 25183, 1980, 13610, 11424},
    {"hprof-android/leak_service_binder_ignored.hprof", 0, 1, 3630, 24782, 1931, 13509, 11404},
    {"hprof-gz/java_pid1884.0001.hprof.gz", 0, 1, 560, 7900, 1199, 2282, 545},
};

std::uint64_t count(const std::map<std::string, std::uint64_t>& counts, const std::string& name) {
    auto found = counts.find(name);
    return found == counts.end() ? 0 : found->second;
}

std::uint64_t root_records(const DumpInfo& info) {
    std::uint64_t total = 0;
    for (const auto& [name, n] : info.sub_records)
        if (name.starts_with("ROOT_")) total += n;
    return total;
}

}  // namespace

TEST_CASE("every corpus HPROF dump decodes with the record counts its provenance gives") {
    for (const Expected& e : kCorpus) {
        CAPTURE(e.file);
        CAPTURE(e.dump_index);
        LoadOptions options;
        options.dump_index = e.dump_index;
        LoadedDump dump = load_dump(test::data_path(e.file), options);
        CHECK(dump.info.dumps_in_file == e.dumps_in_file);
        CHECK(count(dump.info.sub_records, "CLASS_DUMP") == e.classes);
        CHECK(count(dump.info.sub_records, "INSTANCE_DUMP") == e.instances);
        CHECK(count(dump.info.sub_records, "OBJECT_ARRAY_DUMP") == e.object_arrays);
        CHECK(count(dump.info.sub_records, "PRIMITIVE_ARRAY_DUMP") == e.primitive_arrays);
        CHECK(root_records(dump.info) == e.root_records);
        graph::Summary s = graph::summarize(dump.graph);
        CHECK(s.classes == e.classes);
        CHECK(s.objects == e.instances + e.object_arrays + e.primitive_arrays);
        CHECK(s.reachable_objects + s.unreachable_objects == s.objects);
    }
}

TEST_CASE("hprof-32.bin matches hprof-slurp's golden summary record for record") {
    LoadedDump dump = load_dump(test::data_path("hprof/hprof-32.bin"), {});
    const auto& top = dump.info.records;
    CHECK(count(top, "STRING") == 1496);
    CHECK(count(top, "LOAD_CLASS") == 361);
    CHECK(count(top, "UNLOAD_CLASS") == 0);
    CHECK(count(top, "STACK_TRACE") == 216);
    CHECK(count(top, "STACK_FRAME") == 365);
    CHECK(count(top, "START_THREAD") == 5);
    CHECK(count(top, "ALLOC_SITES") == 1);
    CHECK(count(top, "END_THREAD") == 1);
    CHECK(count(top, "CONTROL_SETTINGS") == 1);
    CHECK(count(top, "CPU_SAMPLES") == 0);
    CHECK(count(top, "HEAP_SUMMARY") == 0);
    CHECK(count(top, "HEAP_DUMP") == 1);
    const auto& sub = dump.info.sub_records;
    CHECK(count(sub, "ROOT_UNKNOWN") == 54);
    CHECK(count(sub, "ROOT_THREAD_OBJECT") == 8);
    CHECK(count(sub, "ROOT_JNI_GLOBAL") == 395);
    CHECK(count(sub, "ROOT_JNI_LOCAL") == 1);
    CHECK(count(sub, "ROOT_JAVA_FRAME") == 14);
    CHECK(count(sub, "ROOT_NATIVE_STACK") == 0);
    CHECK(count(sub, "ROOT_STICKY_CLASS") == 381);
    CHECK(count(sub, "ROOT_THREAD_BLOCK") == 7);
    CHECK(count(sub, "ROOT_MONITOR_USED") == 2);
    std::uint64_t all = std::accumulate(sub.begin(), sub.end(), std::uint64_t{0},
                                        [](std::uint64_t t, const auto& kv) { return t + kv.second; });
    CHECK(all == 3788);  // "1 heap dumps containing in total 3788 segments"
}

TEST_CASE("the two dumps of an hprof-agent file are told apart by --dump-index") {
    LoadOptions second;
    second.dump_index = 1;
    LoadedDump a = load_dump(test::data_path("hprof/sun_jdk6_31_hprofagent_nocompressedOops.hprof"), {});
    LoadedDump b = load_dump(test::data_path("hprof/sun_jdk6_31_hprofagent_nocompressedOops.hprof"), second);
    CHECK(graph::summarize(a.graph).classes == 377);
    CHECK(graph::summarize(b.graph).classes == 380);
    LoadOptions third;
    third.dump_index = 2;
    CHECK_THROWS_AS(load_dump(test::data_path("hprof/sun_jdk6_31_hprofagent_nocompressedOops.hprof"), third),
                    BadRequest);
}

TEST_CASE("Android dumps keep their extra root kinds") {
    LoadedDump dump = load_dump(test::data_path("hprof-android/leak_service_binder.hprof"), {});
    CHECK(count(dump.info.sub_records, "ROOT_INTERNED_STRING") == 7388);
    CHECK(dump.info.format_version == "JAVA PROFILE 1.0.3");
    CHECK(count(dump.info.records, "HEAP_DUMP_SEGMENT") == 647);
}

TEST_CASE("the gzip dump inflates to the size its provenance gives") {
    LoadedDump dump = load_dump(test::data_path("hprof-gz/java_pid1884.0001.hprof.gz"), {});
    CHECK(dump.info.format == "hprof-gz");
    CHECK(dump.info.inflated_bytes == 522836448);
    CHECK(dump.info.bytes == 935006);
}
