// gzip dumps: HotSpot's chunked gzip (`jcmd GC.heap_dump -gz=1`, many members) inflates in
// parallel, any other gzip through zlib; both report exactly what the plain bytes report.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

nlohmann::json report(const std::string& file, unsigned threads) {
    test::Run r = test::run("analyze " + file + " --threads " + std::to_string(threads) + " --json - 2>/dev/null");
    REQUIRE(r.code == 0);
    auto json = nlohmann::json::parse(r.out);
    for (const char* key : {"path", "bytes", "format", "inflated_bytes", "gzip_members"}) json["dump"].erase(key);
    return json;
}

void shell(const std::string& command) { REQUIRE(std::system(command.c_str()) == 0); }

}  // namespace

TEST_CASE("gzip: a jcmd -gz=1 dump (6 members) reads as its plain bytes, with 1 or 2 threads") {
    std::string gz = test::data_path("samples/leakdemo-jcmd.hprof.gz");
    std::string plain = test::temp_dir() + "/jcmd.hprof", single = test::temp_dir() + "/jcmd-single.hprof.gz";
    shell("gzip -dc " + gz + " > " + plain);
    shell("gzip -c " + plain + " > " + single);
    LoadedDump dump = load_dump(gz, {});
    CHECK(dump.info.format == "hprof-gz");
    CHECK(dump.info.gzip_members == 6);
    CHECK(dump.info.inflated_bytes > 5'000'000);
    auto expected = report(plain, 1);
    CHECK(report(gz, 1) == expected);
    CHECK(report(gz, 2) == expected);
    CHECK(report(single, 2) == expected);  // one member: zlib streaming
    CHECK(load_dump(single, {}).info.gzip_members == 1);
}

TEST_CASE("gzip: a chunked gzip cut short names the offset of the broken member") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("samples/leakdemo-jcmd.hprof.gz"));
    for (std::size_t size : {bytes.size() - 1, bytes.size() / 2, std::size_t{100}}) {
        CAPTURE(size);
        try {
            load_dump_bytes(Bytes(bytes.data(), size), "cut.hprof.gz", {});
            FAIL("no error");
        } catch (const DumpError& e) {
            CHECK(std::string(e.what()).find("cut.hprof.gz @0x") == 0);
            CHECK(e.error.record == "gzip member");
            CHECK(e.error.offset <= size);
        }
    }
}

TEST_CASE("gzip: a corrupt byte inside a member is an error, not a wrong answer") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("samples/leakdemo-jcmd.hprof.gz"));
    bytes[bytes.size() / 2] ^= 0x5a;
    CHECK_THROWS_AS(load_dump_bytes(bytes, "bad.hprof.gz", {}), DumpError);
}
