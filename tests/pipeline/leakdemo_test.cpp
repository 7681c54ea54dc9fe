// The planted structures of data/gen/LeakDemo.java, found in its dumps.
#include <doctest/doctest.h>

#include <map>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

struct Counts {
    std::uint64_t reachable = 0, unreachable = 0, reachable_bytes = 0;
};

std::map<std::string, Counts> counts_by_class(const LoadedDump& dump) {
    std::map<std::string, Counts> out;
    for (bool reachable : {true, false})
        for (const auto& row : graph::class_histogram(dump.graph, reachable)) {
            Counts& c = out[dump.graph.classes[row.class_index].name];
            (reachable ? c.reachable : c.unreachable) += row.count;
            if (reachable) c.reachable_bytes += row.shallow_bytes;
        }
    return out;
}

}  // namespace

TEST_CASE("LeakDemo: the planted objects are found, reachable or not as planted") {
    for (const char* file : {"samples/leakdemo.hprof", "samples/leakdemo-nocoops.hprof.gz"}) {
        CAPTURE(file);
        LoadedDump dump = load_dump(test::data_path(file), {});
        auto counts = counts_by_class(dump);
        CHECK(counts["LeakDemo$Session"].reachable == 2000);
        CHECK(counts["LeakDemo$Node"].reachable == 500);
        CHECK(counts["LeakDemo$TreeNode"].reachable == 127);
        CHECK(counts["LeakDemo$Holder"].reachable == 1);  // only a thread's local variable
        CHECK(counts["LeakDemo$HolderThread"].reachable == 1);
        CHECK(counts["LeakDemo$Garbage"].reachable == 0);  // an unreachable ring
        CHECK(counts["LeakDemo$Garbage"].unreachable == 1000);
        CHECK(counts["LeakDemo$Session[]"].reachable == 1);
        CHECK(counts["LeakDemo$TreeNode[][]"].reachable == 1);
        CHECK(counts["LeakDemo$TreeNode[]"].reachable == 7);
        CHECK(dump.info.id_size == 8);
        CHECK(dump.warnings.empty());
    }
}

TEST_CASE("LeakDemo: a Session is 24 bytes with compressed oops and 32 without") {
    // Session { String id; int seq; byte[] payload; }: 12 + 4 + 4 + 4 = 24 (compressed);
    // 8 + 4 (compressed class pointer) + 4 + 8 + 8 = 32 (uncompressed oops).
    auto compressed = counts_by_class(load_dump(test::data_path("samples/leakdemo.hprof"), {}));
    auto plain = counts_by_class(load_dump(test::data_path("samples/leakdemo-nocoops.hprof.gz"), {}));
    CHECK(compressed["LeakDemo$Session"].reachable_bytes == 2000 * 24);
    CHECK(plain["LeakDemo$Session"].reachable_bytes == 2000 * 32);
}
