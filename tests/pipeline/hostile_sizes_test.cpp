// Hostile sizes: every count and length a dump claims is checked against the bytes that
// remain before anything is allocated for it. Each case is a file of a few dozen bytes that
// claims billions of elements, references or bytes; it must fail at once with a message naming
// the offset of the claim, while the process's peak resident memory rises by less than 50 MB.
#include <doctest/doctest.h>

#include <zlib.h>

#include <optional>

#include "pipeline.h"
#include "gzip_fixtures.h"
#include "test_support.h"

using namespace heapgraph;
using test::peak_rss_increase;
using heapgraph::test::ByteBuilder;

namespace {

constexpr std::uint64_t kSizesMaxExtraRss = 50u << 20;

// HPROF header with 8-byte ids (31 bytes), then the records `body` adds.
ByteBuilder hprof() {
    ByteBuilder b;
    b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0);  // header, id size 8, timestamp
    return b;
}

ByteBuilder phd(std::uint32_t version = 6) {
    ByteBuilder b;
    b.id_size = 8;
    b.u2(18).text("portable heap dump");  // UTF magic
    b.u4(version).u4(1 | 4);              // version; flags: 64-bit, J9
    b.u1(1).u1(2);                        // start of header, end of header
    b.u1(2);                              // start of dump (body at 0x1e)
    return b;
}

// The error load_dump_bytes gives; fails the test when the bytes load.
DumpError load_error(const std::vector<std::uint8_t>& bytes, const std::string& name, LoadOptions options = {}) {
    try {
        load_dump_bytes(bytes, name, options);
    } catch (const DumpError& e) {
        return e;
    }
    FAIL("loaded without an error: " << name);
    return DumpError(name, {});
}

// load_dump_bytes fails with an error at `offset`, while memory rises by less than 50 MB.
DumpError check_refused(const std::vector<std::uint8_t>& bytes, const std::string& name, std::uint64_t offset,
                        LoadOptions options = {}) {
    std::optional<DumpError> error;
    std::uint64_t rise = test::peak_rss_increase([&] {
        try {
            load_dump_bytes(bytes, name, options);
        } catch (const DumpError& e) {
            error = e;
        }
    });
    CHECK(rise < kSizesMaxExtraRss);
    REQUIRE(error);
    CHECK(error->error.offset == offset);
    CHECK(std::string(error->what()).find(name + " @" + hex_offset(offset) + ": ") == 0);
    return *error;
}

// The CLI refuses the file with exit 2 and one line naming `offset`.
void check_cli_refuses(const std::string& name, const std::vector<std::uint8_t>& bytes, std::uint64_t offset) {
    test::Run run = test::run("analyze " + test::write_temp(name, bytes) + " --json /dev/null");
    CAPTURE(run.out);
    CHECK(run.code == 2);
    CHECK(run.out.find(" @" + hex_offset(offset) + ": ") != std::string::npos);
}

}  // namespace

TEST_CASE("hostile sizes: an HPROF primitive array claiming 4 billion ints fails at its offset, in little memory") {
    ByteBuilder b = hprof();
    b.u1(0x0C).u4(0).u4(1 + 8 + 4 + 4 + 1 + 8);      // HEAP DUMP of 26 bytes
    const std::uint64_t array = b.size();             // 0x28
    b.u1(0x23).id(0x500).u4(0).u4(0xFFFFFFFF).u1(10);  // PRIMITIVE ARRAY: 2^32-1 ints (16 GiB)
    b.u8(0);                                          //   and 8 bytes of them
    DumpError e = check_refused(b.bytes, "array.hprof", array);
    CHECK(e.error.record == "PRIMITIVE_ARRAY_DUMP");
    check_cli_refuses("array.hprof", b.bytes, array);
}

TEST_CASE("hostile sizes: an HPROF object array and an instance claiming gigabytes fail at their offsets") {
    ByteBuilder arrays = hprof();
    arrays.u1(0x0C).u4(0).u4(1 + 8 + 4 + 4 + 8 + 8);
    const std::uint64_t at = arrays.size();
    arrays.u1(0x22).id(0x500).u4(0).u4(0xFFFFFFFF).id(0x100).id(0x200);  // OBJECT ARRAY: 2^32-1 ids
    check_refused(arrays.bytes, "objects.hprof", at);
    check_cli_refuses("objects.hprof", arrays.bytes, at);

    ByteBuilder instance = hprof();
    instance.u1(0x0C).u4(0).u4(1 + 8 + 4 + 8 + 4 + 8);
    const std::uint64_t inst = instance.size();
    instance.u1(0x21).id(0x500).u4(0).id(0x100).u4(0xFFFFFFF0).u8(0);  // INSTANCE: 4 GiB of field values
    check_refused(instance.bytes, "instance.hprof", inst);
    check_cli_refuses("instance.hprof", instance.bytes, inst);
}

TEST_CASE("hostile sizes: an HPROF record or segment claiming more bytes than the file holds fails at its header") {
    ByteBuilder segment = hprof();
    segment.u1(0x01).u4(0).u4(8 + 1).id(0x50).text("x");  // a STRING first: the error is not at the start
    const std::uint64_t seg = segment.size();
    segment.u1(0x1C).u4(0).u4(0xFFFFFFFF);  // HEAP DUMP SEGMENT: 4 GiB past a 49-byte file
    segment.u1(0x05).id(0x100);
    DumpError e = check_refused(segment.bytes, "segment.hprof", seg);
    CHECK(e.error.record == "HEAP_DUMP_SEGMENT");
    CHECK(std::string(e.what()).find("file ends at " + hex_offset(segment.size())) != std::string::npos);
    check_cli_refuses("segment.hprof", segment.bytes, seg);

    ByteBuilder trace = hprof();
    const std::uint64_t st = trace.size();
    trace.u1(0x05).u4(0).u4(12 + 8).u4(1).u4(1).u4(0xFFFFFFFF).id(0x10);  // STACK TRACE: 2^32-1 frames in 20 bytes
    trace.u1(0x0C).u4(0).u4(9).u1(0x05).id(0x100);
    check_refused(trace.bytes, "trace.hprof", st);
    check_cli_refuses("trace.hprof", trace.bytes, st);
}

TEST_CASE("hostile sizes: an HPROF class dump claiming 65535 statics in a few bytes fails at its offset") {
    ByteBuilder b = hprof();
    b.u1(0x0C).u4(0).u4(1 + 8 + 4 + 6 * 8 + 4 + 2 + 2 + 4);  // HEAP DUMP: the class dump below
    const std::uint64_t at = b.size();
    b.u1(0x20).id(0x100).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(8);  // CLASS DUMP
    b.u2(0).u2(0xFFFF).u4(0);                                             // no pool, 65535 statics
    check_refused(b.bytes, "statics.hprof", at);
    check_cli_refuses("statics.hprof", b.bytes, at);
}

TEST_CASE("hostile sizes: a PHD record claiming 4 billion references fails at its offset, in little memory") {
    ByteBuilder object = phd();
    const std::uint64_t at = object.size();
    object.u1(0x04).u1(0xC0);                  // long object record: long gap, byte references
    object.u8(0x1000 >> 2).id(0x2000);         //   gap (4-byte units) and class
    object.u4(0xFFFFFFFF).u1(1).u1(2).u1(3);   //   2^32-1 references, 3 written
    object.u1(3);                              // end of dump
    DumpError e = check_refused(object.bytes, "refs.phd", at);
    CHECK(e.error.record == "PHD long object record");
    check_cli_refuses("refs.phd", object.bytes, at);

    ByteBuilder array = phd();
    const std::uint64_t arr = array.size();
    array.u1(0x08).u1(0xC0).u8(0x1000 >> 2).id(0x2000);  // object array (tag 8), long gap, byte refs
    array.u4(0xFFFFFFFF).u1(1);                           //   2^32-1 references, 1 written
    array.u1(3);
    check_refused(array.bytes, "array.phd", arr);
    check_cli_refuses("array.phd", array.bytes, arr);
}

TEST_CASE("hostile sizes: a PHD primitive array claiming 2^62 elements is refused without allocating for them") {
    // The length of a primitive array is a number, not a count of bytes that follow: nothing
    // is allocated for it, and a length past Java's 2^31 - 1 is malformed (formats.h).
    ByteBuilder b = phd();
    const std::uint64_t at = b.size();
    b.u1(0x23 | (2 << 2)).u8(0x1000 >> 2).u8(std::uint64_t{1} << 62);  // int[] with long gap and length
    b.u4(0);                                                            //   v6 instance size
    b.u1(3);
    DumpError e = check_refused(b.bytes, "long.phd", at);
    CHECK(e.error.message == "primitive array length 4611686018427387904 exceeds Java's maximum 2147483647");
}

TEST_CASE("hostile sizes: classic records claiming huge sizes and reference counts stay small") {
    // A classic dump lists its references one token each, so no claim sizes a buffer; the
    // trailers' totals are only compared. Both are checked here all the same.
    std::string text = "// Version: J9 VM\n"
                       "0x00001000 [17179869240] OBJ [J\n"  // a long[] of 2^31 - 1 and room for its header
                       "\t\n"
                       "0x00002000 [4294967296] OBJ java/lang/Object\n"
                       "\t0x00001000\n"
                       "// Breakdown - Classes: 0, Objects: 4294967296, ObjectArrays: 0, PrimitiveArrays: 4294967296\n"
                       "// EOF:  Total 'Objects',Refs(null) : 2,4294967296(0)\n";
    std::vector<std::uint8_t> bytes(text.begin(), text.end());
    std::uint64_t rise = test::peak_rss_increase([&] {
        LoadedDump dump = load_dump_bytes(bytes, "huge.txt", {});
        CHECK(graph::summarize(dump.graph).objects == 2);
        (void)graph::compute_retained(dump.graph, {.keep_unreachable = true});
    });
    CHECK(rise < kSizesMaxExtraRss);
    test::Run run = test::run("analyze " + test::write_temp("huge.txt", bytes) + " --json /dev/null");
    CHECK(run.code == 0);
    // An address with more digits than a word holds is an error at its offset.
    std::string wide = "// Version: J9 VM\n0x" + std::string(4096, 'f') + " [16] OBJ java/lang/Object\n\t\n";
    DumpError e = load_error(std::vector<std::uint8_t>(wide.begin(), wide.end()), "wide.txt");
    CHECK(e.error.offset == 18);
}

namespace {

std::vector<std::uint8_t> gzip(const std::vector<std::uint8_t>& raw, const std::string& comment = "") {
    return test::gzip_member(raw, comment);
}

}  // namespace

TEST_CASE("hostile sizes: a gzip bomb stops at max_inflated_bytes, naming the member's offset") {
    // 64 MiB of zeros after an HPROF header deflate to about 64 KB. The first record, a 1 MiB
    // STRING, passes the check of the inflated head (gzip_input_test has the bombs it stops).
    ByteBuilder b = hprof();
    b.u1(0x01).u4(0).u4(1u << 20);
    std::vector<std::uint8_t> raw = b.bytes;
    raw.resize(64u << 20);
    std::vector<std::uint8_t> bomb = gzip(raw);
    CHECK(bomb.size() < 200000);
    LoadOptions small;
    small.max_inflated_bytes = 8u << 20;
    DumpError e = check_refused(bomb, "bomb.hprof.gz", 0, small);
    CHECK(std::string(e.what()).find("inflates past the limit of 8388608 bytes") != std::string::npos);

    // HotSpot's chunked form: the first member declares 1 MiB blocks, then inflates to 64 MiB.
    // Workers hold one block each, so the member is refused, not inflated into memory.
    std::vector<std::uint8_t> chunked = gzip(raw, "HPROF BLOCKSIZE=1048576");
    e = check_refused(chunked, "chunked.hprof.gz", 0);
    CHECK(std::string(e.what()).find("more than the HPROF BLOCKSIZE=1048576") != std::string::npos);
    check_cli_refuses("chunked.hprof.gz", chunked, 0);

    // A BLOCKSIZE past 4 MiB is no HotSpot file: it streams (and fails on its content, here
    // an HPROF whose first record tag is 0).
    std::vector<std::uint8_t> zeros = hprof().bytes;
    zeros.resize(64u << 20);
    std::vector<std::uint8_t> huge_block = gzip(zeros, "HPROF BLOCKSIZE=99999999999999");
    e = check_refused(huge_block, "huge-block.hprof.gz", 31);
    CHECK(std::string(e.what()).find("record tag 0x00 is not a known top-level tag") != std::string::npos);
}

TEST_CASE("hostile sizes: a small chunked gzip claiming a 1 GiB BLOCKSIZE allocates for its bytes, not for the claim") {
    // Workers buffer members of at most 4 MiB: a larger BLOCKSIZE claim streams through zlib
    // in its 4 MiB window. 4 KiB of zeros deflate to a few dozen bytes.
    ByteBuilder b = hprof();
    std::vector<std::uint8_t> raw = b.bytes;
    raw.resize(4096);
    std::vector<std::uint8_t> chunked = gzip(raw, "HPROF BLOCKSIZE=1073741824");
    CHECK(chunked.size() < 200);
    DumpError e = check_refused(chunked, "big-block.hprof.gz", 31);
    CHECK(std::string(e.what()).find("record tag 0x00 is not a known top-level tag") != std::string::npos);
}

namespace {

// The refusal a load gives with one of its limits (`limit`, a DumpLimits member) set to
// `value`; empty when it loads.
std::string refusal(const std::string& file, std::uint64_t DumpLimits::*limit, std::uint64_t value) {
    try {
        LoadOptions options;
        options.limits.*limit = value;
        (void)load_dump(test::data_path(file), options);
    } catch (const UnsupportedFormat& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("hostile sizes: a dump with more objects than 32-bit node ids number is refused by count, never wrapped (forced small limit)") {
    // The real limit is graph::kMaxNodes (2^32 - 3); a small one takes the same path.
    auto refusal = [](const std::string& file, std::uint64_t value) { return ::refusal(file, &DumpLimits::objects, value); };
    const std::string hprof = refusal("samples/leakdemo.hprof", 1000);
    // The HPROF decode stops at the first block past the limit and says where it was.
    CHECK(hprof.find("samples/leakdemo.hprof: holds more than 1000 objects by byte offset 0x") != std::string::npos);
    CHECK(hprof.find("; heapgraph numbers at most 1000 in one dump") != std::string::npos);
    CHECK(refusal("phd/heapdump.20100112.141124.11580.0002.phd", 1000).find("numbers at most 1000") != std::string::npos);
    // At the dump's own count it loads.
    const LoadedDump whole = load_dump(test::data_path("samples/leakdemo.hprof"), {});
    CHECK(refusal("samples/leakdemo.hprof", whole.graph.node_count()).empty());
    CHECK(refusal("samples/leakdemo.hprof", whole.graph.node_count() - 1).find("holds " + std::to_string(whole.graph.node_count()) + " objects") !=
          std::string::npos);
    CHECK(test::run("analyze " + test::data_path("samples/leakdemo.hprof") + " --json /dev/null").code == 0);
}

TEST_CASE("hostile sizes: a dump with more classes than a node's 30-bit class field numbers is refused by count (forced small limit)") {
    // The real limit is graph::NodeTypes::kMaxClasses (2^30); a small one takes the same path.
    auto refusal = [](const std::string& file, std::uint64_t value) { return ::refusal(file, &DumpLimits::classes, value); };
    const std::string hprof = refusal("samples/leakdemo.hprof", 100);
    CHECK(hprof.find("samples/leakdemo.hprof: holds more than 100 classes; heapgraph numbers at most that many") !=
          std::string::npos);
    CHECK(refusal("phd/heapdump.20100112.141124.11580.0002.phd", 100).find("more than 100 classes") != std::string::npos);
    // At the dump's own count it loads, and every node's class is one of them.
    const LoadedDump whole = load_dump(test::data_path("samples/leakdemo.hprof"), {});
    const std::uint64_t classes = whole.graph.classes.size();
    CHECK(refusal("samples/leakdemo.hprof", classes).empty());
    CHECK(!refusal("samples/leakdemo.hprof", classes - 1).empty());
    for (graph::NodeId v = 0; v < whole.graph.node_count(); ++v) REQUIRE(whole.graph.types.class_index(v) < classes);
}
