// Classic text through the pipeline: real heaps written as classic text (by the converter)
// load with the same counts in ASCII and in EBCDIC, any thread count gives the same JSON, and
// errors name the file, the offset and the line.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "pipeline.h"
#include "reports.h"
#include "reports/classic_text.h"
#include "test_support.h"

using namespace heapgraph;
using heapgraph::test::bytes_of;

namespace {

std::string classic_text(const std::string& dump_file) {
    return test::classic_of(load_dump(test::data_path(dump_file), {}));
}

// ASCII to IBM-1047, inverted from the reader's own table ('\n' becomes NL, 0x15).
std::vector<std::uint8_t> to_ebcdic(const std::string& text) {
    std::uint8_t inverse[256] = {};
    for (int b = 255; b >= 0; --b) {
        std::uint8_t byte = static_cast<std::uint8_t>(b);
        inverse[classic_ebcdic_to_ascii(Bytes(&byte, 1))[0]] = byte;
    }
    inverse[static_cast<std::uint8_t>('\n')] = 0x15;
    std::vector<std::uint8_t> out;
    for (char c : text) out.push_back(inverse[static_cast<std::uint8_t>(c)]);
    return out;
}

}  // namespace

TEST_CASE("classic pipeline: a z/OS (EBCDIC) classic dump loads like its ASCII original") {
    std::string text = classic_text("phd/heapdump.20100112.141124.11580.0002.phd");
    LoadedDump ascii = load_dump_bytes(bytes_of(text), "ascii.txt", {});
    LoadedDump ebcdic = load_dump_bytes(to_ebcdic(text), "ebcdic.txt", {});
    CHECK(ebcdic.info.format_version.find("EBCDIC") != std::string::npos);
    graph::Summary a = graph::summarize(ascii.graph), e = graph::summarize(ebcdic.graph);
    CHECK(e.objects == a.objects);
    CHECK(e.classes == a.classes);
    CHECK(e.shallow_bytes == a.shallow_bytes);
    CHECK(e.gc_roots_by_kind == a.gc_roots_by_kind);
    CHECK(ebcdic.addresses.addresses() == ascii.addresses.addresses());
}

TEST_CASE("classic pipeline: a classic dump in several blocks gives byte-identical JSON for 1 and 2 threads") {
    std::string file = test::temp_dir() + "/threads.txt";
    std::ofstream(file, std::ios::binary) << classic_text("phd/heapdump.20160404.083909.9480.0002.phd");
    test::Run one = test::run("analyze " + file + " --threads 1 --json - 2>/dev/null");
    test::Run two = test::run("analyze " + file + " --threads 2 --json - 2>/dev/null");
    CHECK(one.code == 0);
    CHECK(one.out == two.out);
    CHECK(one.out.find("\"format\": \"classic\"") != std::string::npos);
}

TEST_CASE("classic pipeline: blocks of 64 KiB, whose objects name classes whose records come blocks later, give the same report as one block") {
    // The converter writes the class records last: with small blocks every object's type is
    // met before its record, and the builder resolves it by name (heap_builder.cpp).
    const std::string text = classic_text("samples/leakdemo.hprof");
    REQUIRE(text.size() > 2'000'000);
    auto report = [&](std::uint64_t block_bytes) {
        LoadOptions options;
        options.chunk_bytes = block_bytes;
        LoadedDump dump = load_dump_bytes(bytes_of(text), "leakdemo.txt", options);
        return reports::json_report(analysis::analyse(dump, {}));
    };
    const std::string whole = report(64u << 20), blocks = report(64u << 10);
    CHECK(whole == blocks);
    CHECK(whole.find("AppClassLoader") != std::string::npos);  // a loader found through a stand-in
}

TEST_CASE("classic pipeline: a malformed line names the file, the offset and the line, in any block") {
    // The 2016 PHD as classic text is over 4 MiB: two blocks. Its last class record lies in the
    // second, whose first line is only known once the first block's lines are counted.
    std::string text = classic_text("phd/heapdump.20160404.083909.9480.0002.phd");
    REQUIRE(text.size() > (4u << 20));
    for (std::size_t at : {text.find(" OBJ ", text.size() / 3), text.rfind(" CLS ")}) {
        std::string bad = text;
        bad.replace(at, 5, " OBX ");
        std::uint64_t line = 1 + static_cast<std::uint64_t>(std::count(bad.begin(), bad.begin() + at, '\n'));
        try {
            load_dump_bytes(bytes_of(bad), "bad.txt", {});
            FAIL("no error");
        } catch (const DumpError& e) {
            std::string message = e.what();
            CHECK(message.find("bad.txt @0x") == 0);
            CHECK(message.find("line " + std::to_string(line) + ":") != std::string::npos);
        }
    }
}

TEST_CASE("classic pipeline: a classic dump cut in half says the // EOF trailer is missing") {
    std::string text = classic_text("phd/heapdump.20100209.165721.4484.phd");
    text.resize(text.rfind('\n', text.size() / 2) + 1);
    try {
        load_dump_bytes(bytes_of(text), "half.txt", {});
        FAIL("no error");
    } catch (const DumpError& e) {
        CHECK(std::string(e.what()).find("half.txt @0x") == 0);
        CHECK(std::string(e.what()).find("EOF") != std::string::npos);
    }
}

TEST_CASE("classic pipeline: object sizes past Java's largest object are refused at the size, before they can wrap a sum") {
    // Two objects of 2^64 - 1 bytes once summed to 14; a size one byte past a long[] of
    // 2^31 - 1 elements (and its header) is refused as well, for an OBJ or a CLS record.
    const std::string limit = " exceeds Java's maximum object size 17179869240 (a long[] of 2^31 - 1 elements)";
    auto dump = [](const std::string& first, const std::string& second, const std::string& kind) {
        return "// Version: test\n"
               "0x00001000 [" + first + "] OBJ [J\n"
               "\t\n"
               "0x00002000 [" + second + "] " + kind + "\n"
               "\t\n"
               "// Breakdown - Classes: 0, Objects: 0, ObjectArrays: 0, PrimitiveArrays: 2\n"
               "// EOF:  Total 'Objects',Refs(null) : 2,0(0)\n";
    };
    std::string two_huge = dump("18446744073709551615", "18446744073709551615", "OBJ [J");
    CHECK(test::load_error(bytes_of(two_huge), "huge.txt") ==
          "huge.txt @0x0000001c: classic OBJ record line 2: size 18446744073709551615" + limit);
    std::string just_over = dump("17179869240", "17179869241", "OBJ [J");
    std::uint64_t second = just_over.find("[17179869241]");
    CHECK(test::load_error(bytes_of(just_over), "over.txt") ==
          "over.txt @" + hex_offset(second) + ": classic OBJ record line 4: size 17179869241" + limit);
    std::string class_over = dump("16", "17179869241", "CLS java/lang/Object");
    CHECK(test::load_error(bytes_of(class_over), "class.txt") ==
          "class.txt @" + hex_offset(class_over.find("[17179869241]")) + ": classic CLS record line 4: size 17179869241" + limit);
    // At the limit both load, and their sum is exact.
    LoadedDump at_limit = load_dump_bytes(bytes_of(dump("17179869240", "17179869240", "OBJ [J")), "limit.txt", {});
    CHECK(graph::summarize(at_limit.graph).shallow_bytes == 2 * 17179869240ull);
}
