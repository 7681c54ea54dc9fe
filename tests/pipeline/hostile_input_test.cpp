// Hostile input: memory, disk and time stay proportional to the honest content of a file.
// A gzip bomb stops at the head of its content; a dump cut by another process while it is
// read is an error naming where reading failed, not a SIGBUS; a FIFO, a directory or a
// device given as a dump or a javacore is refused at once, by name, instead of blocking.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>

#include "gzip_fixtures.h"
#include "mapped_file.h"
#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

constexpr std::uint64_t kMaxExtraRss = 100u << 20;

// The HPROF header with 8-byte ids (31 bytes): the first record starts at 0x1f.
std::vector<std::uint8_t> hprof_header() {
    test::ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0);
    return b.bytes;
}

// Runs the CLI under `timeout 10`, so a regression that blocks fails (exit 124) instead of
// hanging the suite, and with files limited to 16 MiB (`ulimit -f`): an inflated temp file
// that grows past that kills it (SIGXFSZ).
test::Run run_guarded(const std::string& args) {
    return test::run_command("ulimit -f 16384; timeout 10 " + std::string(HEAPGRAPH_CLI) + " " + args + " 2>&1");
}

// What loading `bytes` throws (DumpError or UnreadableDump), with the peak RSS rise.
struct Refusal {
    std::string message;
    std::optional<DumpError> dump_error;
    std::uint64_t rss_rise = 0;
};
Refusal refusal(const std::vector<std::uint8_t>& bytes, const std::string& name, LoadOptions options = {}) {
    Refusal r;
    options.temp_dir = test::temp_dir();
    r.rss_rise = test::peak_rss_increase([&] {
        try {
            load_dump_bytes(bytes, name, options);
        } catch (const DumpError& e) {
            r.message = e.what();
            r.dump_error = e;
        } catch (const UnreadableDump& e) {
            r.message = e.what();
        }
    });
    return r;
}

}  // namespace

// ---- gzip bombs --------------------------------------------------------------------------

TEST_CASE("hostile input: a gzip bomb of 4 GiB of zeros is refused after its first 64 KiB") {
    // 4 MB that inflate to 4 GiB; all of it used to be written to the temp dir first.
    std::vector<std::uint8_t> bomb = test::gzip_bomb({}, 4096);
    CHECK(bomb.size() < 5'000'000);
    auto started = std::chrono::steady_clock::now();
    Refusal r = refusal(bomb, "zeros.gz");
    CHECK(test::seconds_since(started) < 5);
    CHECK(r.rss_rise < kMaxExtraRss);
    CHECK(r.message == "zeros.gz: gzip content is not a heap dump we recognise; first bytes: "
                       "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \"................\"");

    // The same after an HPROF header: the first record's tag 0x00 is named at its offset.
    std::vector<std::uint8_t> hprof_bomb = test::gzip_bomb(hprof_header(), 4096);
    r = refusal(hprof_bomb, "zeros.hprof.gz");
    REQUIRE(r.dump_error);
    CHECK(r.dump_error->error.offset == 0x1f);
    CHECK(r.message == "zeros.hprof.gz @0x0000001f: record tag 0x00 is not a known top-level tag");
    CHECK(r.rss_rise < kMaxExtraRss);

    started = std::chrono::steady_clock::now();
    test::Run run = run_guarded("analyze " + test::write_temp("zeros.hprof.gz", hprof_bomb) + " --json /dev/null");
    CHECK(test::seconds_since(started) < 5);
    CHECK(run.code == 2);
    CHECK(run.out.find("zeros.hprof.gz @0x0000001f: record tag 0x00 is not a known top-level tag\n") != std::string::npos);
}

TEST_CASE("hostile input: a chunked gzip bomb of 4000 one-MiB members is refused after its first member") {
    // HotSpot's form: 4 MB of members, each 1 MiB of zeros. One round used to hold every
    // member of 32 MB of compressed input in memory: 4 GB.
    const std::vector<std::uint8_t> zeros(1u << 20);
    std::vector<std::uint8_t> first = hprof_header();
    first.resize(1u << 20);
    std::vector<std::uint8_t> bomb = test::chunked_gzip(first, zeros, 3999);
    CHECK(bomb.size() < 5'000'000);
    auto started = std::chrono::steady_clock::now();
    Refusal r = refusal(bomb, "chunked.hprof.gz");
    CHECK(test::seconds_since(started) < 5);
    CHECK(r.rss_rise < kMaxExtraRss);
    REQUIRE(r.dump_error);
    CHECK(r.message == "chunked.hprof.gz @0x0000001f: record tag 0x00 is not a known top-level tag");

    started = std::chrono::steady_clock::now();
    test::Run run = run_guarded("analyze " + test::write_temp("chunked.gz", test::chunked_gzip(zeros, zeros, 3999)) +
                                " --threads 1 --json /dev/null");
    CHECK(test::seconds_since(started) < 5);
    CHECK(run.code == 2);
    CHECK(run.out.find("chunked.gz: gzip content is not a heap dump we recognise; first bytes: 00 00") != std::string::npos);
}

TEST_CASE("hostile input: a gzip HPROF whose first record claims more than max_inflated_bytes stops at its header") {
    std::vector<std::uint8_t> content = hprof_header();
    test::ByteBuilder record;
    record.u1(0x1C).u4(0).u4(0x7FFFFFFF);  // HEAP DUMP SEGMENT of 2 GiB
    content.insert(content.end(), record.bytes.begin(), record.bytes.end());
    content.resize(2u << 20);
    LoadOptions options;
    options.max_inflated_bytes = 1u << 20;
    Refusal r = refusal(test::gzip_member(content), "segment.hprof.gz", options);
    CHECK(r.message == "segment.hprof.gz @0x0000001f: HEAP_DUMP_SEGMENT needs 2147483647 bytes, past the limit of "
                       "1048576 bytes the content may inflate to");
}

// ---- a dump cut while it is read ---------------------------------------------------------

namespace {

// A copy of a sample dump, to be truncated.
std::string copy_of(const std::string& sample, const std::string& name) {
    std::string path = test::temp_dir() + "/" + name;
    std::filesystem::copy_file(test::data_path(sample), path, std::filesystem::copy_options::overwrite_existing);
    return path;
}

constexpr std::uint64_t kCutSize = 64u << 10;

void check_shrank(const DumpError& e, const std::string& path, std::uint64_t size) {
    CHECK(e.error.offset >= kCutSize);
    CHECK(e.error.offset < size);
    CHECK(std::string(e.what()) == path + " @" + hex_offset(e.error.offset) + ": file shrank from " + std::to_string(size) +
                                       " to 65536 bytes while it was being read (truncated by another process?): "
                                       "reading failed here");
}

}  // namespace

TEST_CASE("hostile input: a mapped file cut short reads as zeros past its new end, and says where reading failed") {
    std::vector<std::uint8_t> bytes(1u << 20, 0x5a);
    std::string path = test::write_temp("cut.bin", bytes);
    MappedFile file(path);
    CHECK(file.bytes()[100'000] == 0x5a);
    REQUIRE(::truncate(path.c_str(), kCutSize) == 0);
    file.check_intact();  // nothing read past the end yet
    CHECK(file.bytes()[1000] == 0x5a);
    CHECK(file.bytes()[500'000] == 0);  // a SIGBUS before
    CHECK(file.bytes()[200'000] == 0);
    CHECK(file.bytes()[1000] == 0x5a);
    try {
        file.check_intact();
        FAIL("no error");
    } catch (const DumpError& e) {
        CHECK(e.error.offset == 200'000);  // the lowest offset that failed
        CHECK(std::string(e.what()).find(path + " @0x00030d40: file shrank from 1048576 to 65536 bytes") == 0);
    }
}

TEST_CASE("hostile input: a dump truncated by another process while it is read is an error, not a SIGBUS") {
    const std::string path = copy_of("samples/leakdemo.hprof", "leakdemo-cut.hprof");
    const std::uint64_t size = std::filesystem::file_size(path);
    LoadOptions options;
    options.chunk_bytes = 64u << 10;  // progress comes after the first small chunk, long before the end
    options.bytes_in_flight = 256u << 10;
    std::atomic<bool> cut{false};
    options.progress = [&](const ProgressEvent&) {
        if (!cut.exchange(true)) REQUIRE(::truncate(path.c_str(), kCutSize) == 0);
    };
    try {
        load_dump(path, options);
        FAIL("loaded without an error");
    } catch (const DumpError& e) {
        check_shrank(e, path, size);
    }
    CHECK(cut);
}

TEST_CASE("hostile input: a dump truncated after it is loaded fails name_edges, not the process") {
    const std::string path = copy_of("samples/leakdemo.hprof", "leakdemo-cut-later.hprof");
    const std::uint64_t size = std::filesystem::file_size(path);
    LoadedDump dump = load_dump(path, {});
    graph::PathTree paths = graph::shortest_path_tree(dump.graph, dump.weak_edges);
    graph::NodeId last = static_cast<graph::NodeId>(dump.addresses.size() - 1);
    while (graph::path_from_root(paths, last).size() < 3) --last;  // an object held by another object
    REQUIRE(::truncate(path.c_str(), kCutSize) == 0);
    try {
        name_edges(dump, graph::path_edges(paths, graph::path_from_root(paths, last)));
        FAIL("no error");
    } catch (const DumpError& e) {
        check_shrank(e, path, size);
    }
}

// ---- files that are no regular file ------------------------------------------------------

TEST_CASE("hostile input: a FIFO with no writer or a directory as the dump is refused at once, by name") {
    const std::string fifo = test::temp_dir() + "/dump.fifo";
    ::unlink(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    test::Run run = run_guarded("analyze " + fifo + " --json /dev/null");
    CHECK(run.code == 2);  // 124: open() blocked until `timeout` killed it
    CHECK(run.out == "heapgraph: " + fifo + ": is a FIFO, not a regular file\n");
    test::Run indexed = run_guarded("analyze " + fifo + " --json /dev/null --index " + test::temp_dir() + "/fifo-index");
    CHECK(indexed.code == 2);  // the index's fingerprint does not open it blocking either
    CHECK(indexed.out == run.out);
    CHECK_THROWS_WITH(load_dump(fifo, {}), (fifo + ": is a FIFO, not a regular file").c_str());
    CHECK_THROWS_WITH(load_dump(test::temp_dir(), {}), (test::temp_dir() + ": is a directory, not a regular file").c_str());
    CHECK_THROWS_WITH(load_dump("/dev/null", {}), "/dev/null: is a character device, not a regular file");
}

TEST_CASE("hostile input: a FIFO, a directory or a missing file as --javacore is one line naming it") {
    const std::string phd = test::data_path("phd/heapdump.20100209.165721.4484.phd");
    const std::string fifo = test::temp_dir() + "/javacore.fifo";
    ::unlink(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string missing = test::temp_dir() + "/no-such-javacore.txt";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {fifo, "is a FIFO, not a regular file"},
        {test::temp_dir(), "is a directory, not a regular file"},
        {missing, "cannot open: No such file or directory"}};
    for (const auto& javacore : cases) {
        CAPTURE(javacore.first);
        test::Run run = run_guarded("analyze " + phd + " --javacore " + javacore.first + " --json /dev/null");
        CHECK(run.code == 2);
        CHECK(run.out == "heapgraph: --javacore " + javacore.first + ": " + javacore.second + "\n");
    }
}
