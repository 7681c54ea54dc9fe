// Inputs the fuzz targets (fuzz/, docs/hardening.md) found crashing a reader, kept in
// data/fuzz-regressions/: each must now load or fail with a clean error naming an offset,
// with and without --allow-truncated. The first cases say what each input was.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

// The error message, or "" when the bytes load and get a dominator tree.
std::string load_message(const std::vector<std::uint8_t>& bytes, bool allow_truncated) {
    LoadOptions options;
    options.threads = 1;
    options.allow_truncated = allow_truncated;
    return test::load_error(bytes, "regression", options, true);
}

}  // namespace

TEST_CASE("fuzz regression: an HPROF object dumped at id 0 (null) is an error at its offset, not a write out of bounds") {
    // 108 bytes from fuzz_hprof: a HEAP DUMP that claims 4 GiB, cut after an object at id 0.
    // Read with --allow-truncated, the graph builder indexed that object under "no node" and
    // wrote past its arrays.
    auto bytes = test::read_file(test::data_path("fuzz-regressions/hprof-object-at-null-id.hprof"));
    REQUIRE(bytes.size() == 108);
    CHECK(load_message(bytes, false) == "regression @0x0000001f: HEAP_DUMP needs 4294967295 bytes, file ends at "
                                        "0x0000006c (cut short? --allow-truncated reads it up to its last whole record)");
    CHECK(load_message(bytes, true) == "regression @0x00000043: heap dump dumps an object at id 0, which HPROF reserves for null");
}

TEST_CASE("fuzz regression: a PHD object whose gaps land on address 0 is an error at its record, not a write out of bounds") {
    // 2,534 bytes from fuzz_phd: an object record whose gap brings the address to 0 (null);
    // the heap builder indexed it under "no node" and wrote past its arrays.
    auto bytes = test::read_file(test::data_path("fuzz-regressions/phd-object-at-address-0.phd"));
    REQUIRE(bytes.size() == 2534);
    for (bool allow : {false, true}) {
        std::string message = load_message(bytes, allow);
        CAPTURE(message);
        CHECK(message.find("regression @0x") == 0);
        CHECK((message.find("places an object at address 0, which is null") != std::string::npos ||
               message.find("runs past the end of the file") != std::string::npos));
    }
}

TEST_CASE("fuzz regression: an HPROF instance at a class's id is a duplicate named at its offset, not a read past an empty list") {
    // 9,838 bytes from fuzz_hprof, mutated from a seed in data/fuzz-seeds: an INSTANCE DUMP at
    // 0xeef reuses the id of the CLASS DUMP at 0x8b7. The sparse address index saw the
    // duplicate, but the pass that names it counted object records only, found none and took
    // the lowest of an empty list.
    auto bytes = test::read_file(test::data_path("fuzz-regressions/hprof-class-id-as-instance.hprof"));
    REQUIRE(bytes.size() == 9838);
    for (bool allow : {false, true})
        CHECK(load_message(bytes, allow) ==
              "regression @0x00000eef: heap dump dumps object 0xfe000000 a second time: one address cannot hold two objects");
}

TEST_CASE("fuzz regression: every input in data/fuzz-regressions loads or fails with an offset") {
    const std::regex offset(R"(^regression @0x[0-9a-f]{8}: |^regression( is not| : gzip))");
    for (const auto& entry : std::filesystem::directory_iterator(test::data_path("fuzz-regressions"))) {
        CAPTURE(entry.path().filename().string());
        auto bytes = test::read_file(entry.path().string());
        for (bool allow : {false, true}) {
            std::string message = load_message(bytes, allow);
            if (!message.empty()) CHECK(std::regex_search(message, offset));
        }
    }
}

TEST_CASE("fuzz seeds: the small HPROFs cut from data/ load whole, with instances, references and roots") {
    // fuzz/shrink_hprof.py keeps whole records of the real dumps; a seed that fails to load
    // would leave the fuzzer mutating an error path instead of the heap dump decoder.
    int seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(test::data_path("fuzz-seeds/hprof"))) {
        CAPTURE(entry.path().filename().string());
        auto bytes = test::read_file(entry.path().string());
        CHECK(bytes.size() < 32768);
        LoadedDump dump = load_dump_bytes(bytes, entry.path().string(), {});
        CHECK(dump.graph.node_count() > 60);
        CHECK(dump.graph.classes.size() >= 2);
        CHECK(dump.graph.edges > 0);
        CHECK(!dump.graph.roots.empty());
        ++seeds;
    }
    CHECK(seeds == 12);
}
