// gzip dumps: HotSpot's chunked gzip (`jcmd GC.heap_dump -gz=1`, many members) inflates in
// parallel, any other gzip through zlib; both report exactly what the plain bytes report.
// The inflater holds a bounded amount in memory and checks the head of the content first.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gzip_fixtures.h"
#include "gzip_input.h"
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

// ---- the inflater itself: bounded memory, order, and the head check -------------------------

namespace {

// The size of the temporary file being inflated to, found among this process's open files
// (it is unlinked at once); 0 when there is none.
std::uint64_t inflating_file_size() {
    for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code error;
        auto target = std::filesystem::read_symlink(fd.path(), error);
        if (error || target.string().find("heapgraph-inflate-") == std::string::npos) continue;
        struct stat info {};
        if (::stat(fd.path().c_str(), &info) == 0) return static_cast<std::uint64_t>(info.st_size);
    }
    return 0;
}

// Member `index` of the mixed stream: its index in its first 8 bytes, then zeros (deflate
// ~1000:1), or, for every fifth member, bytes that do not compress.
std::vector<std::uint8_t> mixed_member(std::uint64_t index) {
    std::vector<std::uint8_t> raw(1u << 20);
    std::uint64_t state = index * 0x9E3779B97F4A7C15ull + 1;
    if (index % 5 == 0)
        for (auto& byte : raw) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            byte = static_cast<std::uint8_t>(state);
        }
    std::memcpy(raw.data(), &index, sizeof index);
    return raw;
}

LoadOptions temp_dir_options() {
    LoadOptions options;
    options.temp_dir = test::temp_dir();
    return options;
}

}  // namespace

TEST_CASE("gzip: 300 chunked members of 1 MiB inflate with a bounded amount in memory") {
    // One round used to hold every member of 32 MB of compressed input: here 300 MiB.
    std::vector<std::uint8_t> gz = test::chunked_gzip(std::vector<std::uint8_t>(1u << 20), std::vector<std::uint8_t>(1u << 20), 299);
    CHECK(gz.size() < 400'000);
    std::uint64_t members = 0, inflated = 0;
    std::uint64_t rise = test::peak_rss_increase([&] {
        InflatedFile file = inflate_to_temp_file(gz, false, "zeros.hprof.gz", temp_dir_options());
        members = file.members();
        inflated = file.bytes().size();
    });
    CHECK(members == 300);
    CHECK(inflated == 300ull << 20);
    CHECK(rise < (80u << 20));
}

TEST_CASE("gzip: chunked members whose ratio swings from 1:1 to 1000:1 inflate in order, with 2 workers") {
    // Rounds size their compressed span from the last ratio: a worker that runs out of room
    // breaks the chain, and what follows is inflated again in the next round.
    std::vector<std::uint8_t> gz;
    const std::uint64_t count = 120;
    for (std::uint64_t i = 0; i < count; ++i) {
        auto member = test::gzip_member(mixed_member(i), i == 0 ? test::kHotspotComment : "", i % 5 == 0 ? 0 : 1);
        gz.insert(gz.end(), member.begin(), member.end());
    }
    tbb::task_arena arena(2);
    arena.execute([&] {
        InflatedFile file = inflate_to_temp_file(gz, false, "mixed.hprof.gz", temp_dir_options());
        CHECK(file.members() == count);
        REQUIRE(file.bytes().size() == count << 20);
        for (std::uint64_t i = 0; i < count; ++i) {
            CAPTURE(i);
            std::vector<std::uint8_t> expected = mixed_member(i);
            REQUIRE(std::memcmp(file.bytes().data() + (i << 20), expected.data(), expected.size()) == 0);
        }
    });
}

TEST_CASE("gzip: the head check sees the first 64 KiB before more is written, and stops a bomb there") {
    const std::vector<std::uint8_t> zeros(1u << 20);
    const std::vector<std::vector<std::uint8_t>> bombs = {
        test::gzip_bomb({}, 4000),                // one member: zlib
        test::chunked_gzip(zeros, zeros, 3999)};  // HotSpot's members: libdeflate
    for (const auto& bomb : bombs) {
        CHECK(bomb.size() < 5'000'000);
        std::uint64_t calls = 0, head = 0, written = 0;
        HeadCheck check = [&](Bytes bytes) {
            ++calls;
            head = bytes.size();
            written = inflating_file_size();
            throw UnreadableDump("not a heap dump");
        };
        auto started = std::chrono::steady_clock::now();
        CHECK_THROWS_WITH(inflate_to_temp_file(bomb, false, "bomb.gz", temp_dir_options(), check), "not a heap dump");
        CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
        CHECK(calls == 1);
        CHECK(head == kInflateHeadBytes);
        CHECK(written < kInflateHeadBytes);
    }
}
