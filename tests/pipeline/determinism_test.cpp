// The same dump gives byte-identical JSON for any thread count, and for its gzipped bytes
// apart from the fields that describe the file itself.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

std::string report_for(const std::string& file, unsigned threads, const std::string& extra = "") {
    test::Run r = test::run("analyze " + file + " --threads " + std::to_string(threads) + " --json - " +
                            extra + " 2>/dev/null");
    REQUIRE(r.code == 0);
    return r.out;
}

}  // namespace

TEST_CASE("JSON reports are byte-identical for 1 and 2 threads") {
    for (const char* file : {"hprof/sun_jdk6_18_x64.hprof", "hprof-android/leak_service_binder.hprof",
                             "samples/leakdemo.hprof"}) {
        CAPTURE(file);
        std::string path = test::data_path(file);
        CHECK(report_for(path, 1) == report_for(path, 2));
        CHECK(report_for(path, 1, "--keep-unreachable") == report_for(path, 2, "--keep-unreachable"));
    }
}

TEST_CASE("a gzipped dump reports what its plain bytes report, file facts aside") {
    auto zipped = nlohmann::json::parse(report_for(test::data_path("samples/leakdemo-nocoops.hprof.gz"), 2));
    std::string copy = test::temp_dir() + "/leakdemo-nocoops.hprof";
    REQUIRE(std::system(("gzip -dc " + test::data_path("samples/leakdemo-nocoops.hprof.gz") + " > " + copy).c_str()) == 0);
    auto unzipped = nlohmann::json::parse(report_for(copy, 1));
    CHECK(zipped["dump"]["inflated_bytes"] == unzipped["dump"]["bytes"]);
    for (auto* r : {&zipped, &unzipped})
        for (const char* key : {"path", "bytes", "format", "inflated_bytes", "gzip_members"}) (*r)["dump"].erase(key);
    CHECK(zipped == unzipped);
}
