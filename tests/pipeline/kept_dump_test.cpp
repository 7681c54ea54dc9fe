// The index's kept graph (pipeline/kept_dump.cpp): a reopened dump analyses to the same
// report as the loaded one; a kept file cut or altered is a KeptDumpError, never a crash.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <zlib.h>

#include "analysis.h"
#include "kept_dump.h"
#include "reports.h"
#include "test_support.h"

using heapgraph::test::data_path;
using heapgraph::test::temp_dir;

namespace {

std::string kept_bytes(const heapgraph::LoadedDump& dump) {
    std::ostringstream out;
    heapgraph::keep_dump(dump, out);
    return out.str();
}

std::string write_file(const std::string& name, const std::string& bytes) {
    const std::string path = temp_dir() + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

std::string report_of(heapgraph::LoadedDump& dump) {
    heapgraph::analysis::Findings f = heapgraph::analysis::analyse(dump, {.top = 20});
    return heapgraph::reports::json_report(f);
}

}  // namespace

TEST_CASE("kept dump: reopened, every format analyses to the loaded dump's report, byte for byte") {
    heapgraph::LoadOptions options;
    for (const char* name : {"samples/leakdemo.hprof", "samples/contentdemo.hprof.gz", "hprof/sun_jdk6_32bit.hprof",
                             "phd/heapdump.20100209.165721.4484.phd"}) {
        CAPTURE(name);
        const std::string dump = data_path(name);
        heapgraph::LoadedDump loaded = heapgraph::load_dump(dump, options);
        const std::string bytes = kept_bytes(loaded);
        const std::string kept = write_file("kept-dump", bytes);
        heapgraph::LoadedDump reopened = heapgraph::reopen_dump(kept, dump, options);
        CHECK(reopened.graph.node_count() == loaded.graph.node_count());
        CHECK(reopened.graph.out.targets == loaded.graph.out.targets);
        CHECK(reopened.addresses.size() == loaded.addresses.size());
        CHECK(kept_bytes(reopened) == bytes);  // nothing lost or added on the way
        CHECK(report_of(reopened) == report_of(loaded));
    }
}

TEST_CASE("kept dump: cut anywhere, or with a byte changed, it is a KeptDumpError or a whole graph, never a crash") {
    heapgraph::LoadOptions options;
    const std::string dump = data_path("samples/leakdemo.hprof");
    heapgraph::LoadedDump loaded = heapgraph::load_dump(dump, options);
    const std::string bytes = kept_bytes(loaded);
    REQUIRE(bytes.size() > 100000);
    std::size_t errors = 0, opened = 0;
    for (std::size_t cut = 0; cut < bytes.size(); cut += bytes.size() / 97 + 1) {
        CAPTURE(cut);
        const std::string kept = write_file("kept-cut", bytes.substr(0, cut));
        CHECK_THROWS_AS(heapgraph::reopen_dump(kept, dump, options), heapgraph::KeptDumpError);
    }
    CHECK_THROWS_AS(heapgraph::reopen_dump(write_file("kept-long", bytes + "x"), dump, options), heapgraph::KeptDumpError);
    // Changed bytes in the first kilobytes (counts, sizes, names) and then across the file.
    for (std::size_t at = 0; at < bytes.size(); at += at < 4096 ? 7 : bytes.size() / 61) {
        CAPTURE(at);
        std::string changed = bytes;
        changed[at] = static_cast<char>(changed[at] ^ 0xa5);
        try {
            heapgraph::LoadedDump reopened = heapgraph::reopen_dump(write_file("kept-changed", changed), dump, options);
            ++opened;
            CHECK(reopened.graph.node_count() == reopened.graph.shallow_bytes.size());
        } catch (const heapgraph::KeptDumpError&) {
            ++errors;
        }
    }
    CHECK(errors > 0);
    CHECK(opened > 0);  // a changed value inside a column passes: the index's CRC-32 is what finds it
}

TEST_CASE("kept dump: given the CRC-32 kept with it, any changed byte is reported as damage") {
    heapgraph::LoadOptions options;
    const std::string dump = data_path("samples/leakdemo.hprof");
    heapgraph::LoadedDump loaded = heapgraph::load_dump(dump, options);
    const std::string bytes = kept_bytes(loaded);
    const auto crc = static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
    heapgraph::LoadedDump whole = heapgraph::reopen_dump(write_file("kept-whole", bytes), dump, options, crc);
    CHECK(report_of(whole) == report_of(loaded));
    for (std::size_t at = 0; at < bytes.size(); at += bytes.size() / 37) {
        CAPTURE(at);
        std::string changed = bytes;
        changed[at] = static_cast<char>(changed[at] ^ 0x5a);
        bool damaged = false;
        try {
            heapgraph::reopen_dump(write_file("kept-crc", changed), dump, options, crc);
        } catch (const heapgraph::KeptDumpError& e) {
            damaged = e.damaged;
        }
        CHECK(damaged);
    }
}

TEST_CASE("kept dump: a kept HPROF whose dump has since changed size is refused") {
    heapgraph::LoadOptions options;
    heapgraph::LoadedDump loaded = heapgraph::load_dump(data_path("samples/leakdemo.hprof"), options);
    const std::string kept = write_file("kept-other", kept_bytes(loaded));
    CHECK_THROWS_AS(heapgraph::reopen_dump(kept, data_path("hprof/sun_jdk6_32bit.hprof"), options), heapgraph::KeptDumpError);
}
