// Bad input: a dump cut at any byte offset gives an error naming an offset (or, cut exactly
// between records, a smaller valid dump), never a crash; random bytes in a record are caught.
#include <doctest/doctest.h>

#include <regex>

#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;

namespace {

// Loads the first `size` bytes; returns "" on success, else the error message.
std::string load_prefix(const std::vector<std::uint8_t>& bytes, std::size_t size) {
    return test::load_error(Bytes(bytes.data(), size), "cut.hprof");
}

}  // namespace

TEST_CASE("a small dump cut at every byte offset fails with a message naming an offset") {
    // hprof-32.bin up to the end of its first 2,000 records keeps this test fast but covers
    // every top-level record kind it has; the heap dump itself is covered below by sampling.
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("hprof/hprof-32.bin"));
    REQUIRE(bytes.size() == 282310);
    const std::regex offset(R"(^cut\.hprof @0x[0-9a-f]{8}: )");
    std::size_t errors = 0;
    for (std::size_t size = 0; size < 40000; ++size) {
        std::string message = load_prefix(bytes, size);
        if (message.empty()) continue;
        ++errors;
        if (!std::regex_search(message, offset)) FAIL_CHECK("size " << size << ": " << message);
    }
    CHECK(errors == 40000);  // the heap dump record starts later: no prefix is a whole dump
}

TEST_CASE("a dump cut inside its heap dump names the offset where the file ends") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("hprof/sun_jdk6_30_x64_compressedOops.hprof"));
    const std::regex offset(R"(cut\.hprof @0x[0-9a-f]{8}: )");
    for (std::size_t size = bytes.size() - 1; size > 0; size = size > 997 ? size - 997 : 0) {
        std::string message = load_prefix(bytes, size);
        CAPTURE(size);
        CHECK(!message.empty());
        CHECK(std::regex_search(message, offset));
    }
}

TEST_CASE("a corrupted sub-record tag in the middle of a heap dump is reported at its offset") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("hprof/hprof-32.bin"));
    LoadedDump whole = load_dump_bytes(bytes, "good.hprof", {});
    // Find a sub-record start deep inside the heap dump: the first INSTANCE_DUMP after 200,000.
    // We corrupt the byte right after a complete primitive array, found by scanning forward
    // with the decoder's own size function.
    std::size_t pos = 0;
    for (std::size_t offset = 31; offset < bytes.size();) {  // header is 31 bytes (id 4)
        auto frame = std::get<RecordFrame>(read_record_frame(bytes, offset));
        if (frame.tag == 0x0C) {
            std::size_t p = frame.body_offset;
            while (p < 200000) p += std::get<std::uint64_t>(sub_record_size(Bytes(bytes).first(frame.body_offset + frame.body_length), p, 4));
            pos = p;
            break;
        }
        offset = frame.body_offset + frame.body_length;
    }
    REQUIRE(pos > 0);
    bytes[pos] = 0x77;  // no such sub-record
    try {
        load_dump_bytes(bytes, "bad.hprof", {});
        FAIL("no error");
    } catch (const DumpError& e) {
        CHECK(e.error.offset == pos);
        CHECK(e.error.record == "sub-record tag 0x77");
        CHECK(std::string(e.what()).find("bad.hprof @" + hex_offset(pos)) == 0);
    }
    CHECK(graph::summarize(whole.graph).objects == 2565);
}

TEST_CASE("content that is no heap dump is refused with its first bytes shown") {
    std::vector<std::uint8_t> text = {'h', 'e', 'l', 'l', 'o', '\n'};
    try {
        load_dump_bytes(text, "note.txt", {});
        FAIL("no error");
    } catch (const UnreadableDump& e) {
        CHECK(std::string(e.what()).find("68 65 6c 6c 6f 0a \"hello.\"") != std::string::npos);
    }
}

TEST_CASE("a PHD cut inside its header, or a classic dump with no records, is an error naming the offset") {
    std::vector<std::uint8_t> phd = {0x00, 0x12};
    for (char c : std::string("portable heap dump")) phd.push_back(static_cast<std::uint8_t>(c));
    phd.insert(phd.end(), {0, 0, 0, 6});
    try {
        load_dump_bytes(phd, "x.phd", {});
        FAIL("no error");
    } catch (const DumpError& e) {
        CHECK(std::string(e.what()).find("x.phd @0x") == 0);
    }
    std::string classic = "// Version: J9 VM\n";
    try {
        load_dump_bytes(std::vector<std::uint8_t>(classic.begin(), classic.end()), "x.txt", {});
        FAIL("no error");
    } catch (const DumpError& e) {
        CHECK(std::string(e.what()).find("x.txt @0x") == 0);
    }
}

TEST_CASE("a truncated gzip dump is an error naming the compressed offset") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("samples/leakdemo-nocoops.hprof.gz"));
    bytes.resize(bytes.size() / 2);
    try {
        load_dump_bytes(bytes, "half.hprof.gz", {});
        FAIL("no error");
    } catch (const DumpError& e) {
        CHECK(std::string(e.what()).find("half.hprof.gz @") == 0);
        CHECK(std::string(e.what()).find("truncated") != std::string::npos);
    }
}

namespace {

// A complete little dump with 8-byte ids: two strings, a class and its instance, arrays,
// roots, in two heap dump segments (the second opening mid-way through the objects).
std::vector<std::uint8_t> mini_dump() {
    test::ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0);    // header, id size 8, timestamp
    b.u1(0x01).u4(0).u4(8 + 3).id(0x50).text("Foo");  // STRING 0x50 "Foo"
    b.u1(0x02).u4(0).u4(24).u4(1).id(0x100).u4(0).id(0x50);  // LOAD CLASS 0x100 named 0x50
    const std::uint32_t class_dump = 1 + 7 * 8 + 8 + 2 + 2 + 2 + 9;  // one instance field
    const std::uint32_t instance = 1 + 8 + 4 + 8 + 4 + 8;
    b.u1(0x1C).u4(0).u4(class_dump + instance + 9);  // HEAP DUMP SEGMENT 1
    b.u1(0x20).id(0x100).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(8);  // CLASS DUMP, no super
    b.u2(0).u2(0).u2(1).id(0x50).u1(2);                // no pool, no statics, field "Foo": object
    b.u1(0x21).id(0x200).u4(0).id(0x100).u4(8).id(0x300);  // INSTANCE 0x200 -> 0x300
    b.u1(0x05).id(0x100);                               // ROOT STICKY CLASS 0x100
    b.u1(0x1C).u4(0).u4(1 + 8 + 4 + 4 + 8 + 16 + 1 + 8 + 4 + 4 + 1 + 4);  // HEAP DUMP SEGMENT 2
    b.u1(0x22).id(0x300).u4(0).u4(2).id(0x100).id(0x200).id(0);  // OBJECT ARRAY [0x200, null]
    b.u1(0x23).id(0x400).u4(0).u4(4).u1(8).u4(0x01020304);      // byte[4]
    b.u1(0x2C).u4(0).u4(0);                                       // HEAP DUMP END
    return b.bytes;
}

}  // namespace

TEST_CASE("a complete mini dump cut at every byte offset always names an offset") {
    std::vector<std::uint8_t> bytes = mini_dump();
    LoadedDump whole = load_dump_bytes(bytes, "mini.hprof", {});
    CHECK(graph::summarize(whole.graph).objects == 3);
    CHECK(whole.graph.out.targets.size() == 4);  // instance->class, ->array; array->class, ->instance
    const std::regex offset(R"(^cut\.hprof @0x[0-9a-f]{8}: )");
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        CAPTURE(size);
        try {
            LoadedDump part = load_dump_bytes(Bytes(bytes.data(), size), "cut.hprof", {});
            // Only a cut between segments leaves a readable dump, and it says so.
            CHECK((size == bytes.size() - 9 || size == 215));
            REQUIRE(!part.warnings.empty());
            CHECK(part.warnings.back().code == "heap_dump_end_missing");
        } catch (const DumpError& e) {
            CHECK(std::regex_search(std::string(e.what()), offset));
        }
    }
}
