// The value tables the decode collects (LoadOptions::values, pipeline/values.h) against one
// pass over the dump after the load: the same rows, records and record places on every
// HPROF dump under data/, with the later pass reading only the chunks that can hold the
// records asked for.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "edge_names.h"
#include "test_support.h"
#include "values.h"

using namespace heapgraph;

namespace {

// Small chunks, so that a dump has many and the later pass has some to leave out.
LoadOptions options_with(bool values) {
    LoadOptions options;
    options.chunk_bytes = 64u << 10;
    options.values = values;
    options.temp_dir = test::temp_dir();
    return options;
}

// Every 97th object's record and every 89th object's place in the file, and the threads'.
ValueRequest some_request(const LoadedDump& dump) {
    ValueRequest request;
    const graph::Column<std::uint64_t> addresses = dump.addresses.addresses();
    for (std::size_t v = 0; v < addresses.size(); v += 97) request.addresses.push_back(addresses[v]);
    for (std::size_t v = 5; v < addresses.size(); v += 89) request.locate.push_back(addresses[v]);
    request.classes = thread_classes();
    return request;
}

template <typename Rows, typename Same>
void check_rows(const Rows& a, const Rows& b, Same same) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(same(a[i], b[i]));
}

void check_same_values(const DumpValues& a, const DumpValues& b) {
    check_rows(a.strings, b.strings, [](const StringObject& x, const StringObject& y) {
        return x.address == y.address && x.value == y.value && x.offset == y.offset && x.count == y.count &&
               x.coder == y.coder;
    });
    check_rows(a.arrays, b.arrays, [](const ArrayObject& x, const ArrayObject& y) {
        return x.address == y.address && x.data_offset == y.data_offset && x.length == y.length && x.type == y.type &&
               x.hash == y.hash;
    });
    check_rows(a.object_arrays, b.object_arrays,
               [](const ArrayLength& x, const ArrayLength& y) { return x.address == y.address && x.length == y.length; });
    check_rows(a.records, b.records, [](const ObjectRecordCopy& x, const ObjectRecordCopy& y) {
        return x.address == y.address && x.class_id == y.class_id && x.array == y.array && x.length == y.length &&
               x.bytes == y.bytes;
    });
    check_rows(a.thread_roots, b.thread_roots, [](const ThreadRoot& x, const ThreadRoot& y) {
        return x.object == y.object && x.thread_serial == y.thread_serial && x.frame == y.frame && x.thread == y.thread;
    });
    check_rows(a.located, b.located, [](const RecordSpan& x, const RecordSpan& y) {
        return x.address == y.address && x.file_offset == y.file_offset && x.bytes == y.bytes;
    });
    CHECK(a.split_arrays == b.split_arrays);
    CHECK(a.utf16_big_endian == b.utf16_big_endian);
}

std::vector<std::string> hprof_dumps() {
    std::vector<std::string> out;
    for (const char* dir : {"hprof", "hprof-android", "hprof-gz", "samples"})
        for (const auto& entry : std::filesystem::directory_iterator(test::data_path(dir))) {
            const std::string name = entry.path().filename().string();
            if (name.find(".hprof") != std::string::npos || name.ends_with(".bin")) out.push_back(entry.path().string());
        }
    std::sort(out.begin(), out.end());
    return out;
}

// HPROF with 8-byte ids: names, classes, then one heap dump segment of `sub_records`.
struct HprofBuilder {
    test::ByteBuilder b;
    HprofBuilder() { b.text("JAVA PROFILE 1.0.2").u1(0).u4(8).u8(0); }
    HprofBuilder& string(std::uint64_t id, const std::string& text) {
        b.u1(0x01).u4(0).u4(static_cast<std::uint32_t>(8 + text.size())).id(id).text(text);
        return *this;
    }
    HprofBuilder& load_class(std::uint32_t serial, std::uint64_t class_id, std::uint64_t name_id) {
        b.u1(0x02).u4(0).u4(24).u4(serial).id(class_id).u4(0).id(name_id);
        return *this;
    }
    HprofBuilder& segment(const std::vector<std::uint8_t>& sub_records) {
        b.u1(0x1c).u4(0).u4(static_cast<std::uint32_t>(sub_records.size()));
        b.bytes.insert(b.bytes.end(), sub_records.begin(), sub_records.end());
        b.u1(0x2c).u4(0).u4(0);
        return *this;
    }
};

// CLASS DUMP with no statics; `fields`: (name id, type).
void class_dump(test::ByteBuilder& s, std::uint64_t id, std::uint64_t super, std::uint32_t size,
                const std::vector<std::pair<std::uint64_t, std::uint8_t>>& fields) {
    s.u1(0x20).id(id).u4(0).id(super).id(0).id(0).id(0).id(0).id(0).u4(size).u2(0).u2(0);
    s.u2(static_cast<std::uint32_t>(fields.size()));
    for (const auto& [name, type] : fields) s.id(name).u1(type);
}

}  // namespace

TEST_CASE("the decode's value tables and the chunks they name give what one pass over each data/ dump gives") {
    std::uint64_t skipped = 0;
    for (const std::string& path : hprof_dumps()) {
        CAPTURE(path);
        LoadedDump collected = load_dump(path, options_with(true));
        LoadedDump plain = load_dump(path, options_with(false));
        REQUIRE(collected.values);
        CHECK(!plain.values);
        const ValueRequest request = some_request(plain);
        DumpValues after = read_values(collected, request);
        DumpValues whole = read_values(plain, request);
        CHECK(whole.chunks_read == whole.chunks);
        CHECK(after.chunks == plain.source->chunks.size());
        CHECK(after.chunks_read <= after.chunks);
        skipped += after.chunks - after.chunks_read;
        check_same_values(after, whole);
        // A second read has no decode's tables left: it reads the whole dump, to the same values.
        DumpValues again = read_values(collected, request);
        CHECK(again.chunks_read == again.chunks);
        check_same_values(again, whole);
    }
    CHECK(skipped > 0);  // somewhere the records asked for left chunks out
}

TEST_CASE("the decode's value tables: a request for other classes reads the whole dump") {
    const std::string path = test::data_path("samples/contentdemo.hprof.gz");
    LoadedDump collected = load_dump(path, options_with(true));
    LoadedDump plain = load_dump(path, options_with(false));
    ValueRequest request = some_request(plain);
    request.classes = {"java.util.HashMap"};
    DumpValues after = read_values(collected, request);
    CHECK(after.chunks_read == after.chunks);
    check_same_values(after, read_values(plain, request));
    CHECK(!after.records.empty());
}

TEST_CASE("the decode's value tables: a String met before its class dump is read when its chunk is decoded again") {
    HprofBuilder h;
    h.string(0x100, "java/lang/String").string(0x101, "java/lang/Object").string(0x102, "value").string(0x103, "coder");
    h.load_class(1, 0x1000, 0x101).load_class(2, 0x2000, 0x100);
    test::ByteBuilder s;
    s.u1(0x08).id(0x5000).u4(1).u4(0);                       // ROOT THREAD OBJECT, thread 1 (17 bytes)
    s.u1(0x21).id(0x5000).u4(0).id(0x2000).u4(9).id(0x6000).u1(0);  // the String, before its class (34)
    s.u1(0x08).id(0x6000).u4(2).u4(0);                       // thread 2, in the next chunk
    s.u1(0x23).id(0x6000).u4(0).u4(5).u1(8).text("hello");  // the String's byte[] value
    class_dump(s, 0x1000, 0, 0, {});
    class_dump(s, 0x2000, 0x1000, 9, {{0x102, 2}, {0x103, 8}});
    h.segment(s.bytes);
    for (bool values : {true, false}) {
        CAPTURE(values);
        LoadOptions options = options_with(values);
        options.chunk_bytes = 51;  // the first chunk: thread 1's root and the String, deferred
        LoadedDump dump = load_dump_bytes(h.b.bytes, "string-first.hprof", options);
        DumpValues read = read_values(dump, {.addresses = {}, .classes = thread_classes(), .locate = {}});
        REQUIRE(read.strings.size() == 1);
        CHECK(read.strings[0].address == 0x5000);
        CHECK(read.strings[0].value == 0x6000);
        CHECK(read.strings[0].coder == 0);
        CHECK(read.text(0x5000, 100) == "hello");
        // The roots in file order, the deferred chunk's first.
        REQUIRE(read.thread_roots.size() == 2);
        CHECK(read.thread_roots[0].thread_serial == 1);
        CHECK(read.thread_roots[1].thread_serial == 2);
        CHECK(read.chunks_read == (values ? 0u : read.chunks));
    }
}

TEST_CASE("spilled rows come back in the order they were appended") {
    graph::SpilledRows<std::uint64_t> rows;
    std::vector<std::uint64_t> expected;
    for (std::uint64_t part = 0; part < 40; ++part) {
        std::vector<std::uint64_t> some(part * 50'000 % 70'001);
        for (std::uint64_t& x : some) x = expected.size() * 2654435761u + part, expected.push_back(x);
        rows.append(some);
    }
    CHECK(rows.size() == expected.size());
    CHECK(rows.spilled());  // past 1 MiB: in the file, the first rows too
    graph::Column<std::uint64_t> back{7, 8};
    rows.append_to(back);
    REQUIRE(back.size() == expected.size() + 2);
    CHECK(back[0] == 7);
    CHECK(std::equal(expected.begin(), expected.end(), back.begin() + 2));

    graph::SpilledRows<std::uint64_t> few;  // a small dump's: in memory, no file
    few.append(std::vector<std::uint64_t>{3, 1, 2});
    few.append(std::vector<std::uint64_t>{5});
    CHECK(!few.spilled());
    graph::Column<std::uint64_t> small;
    few.append_to(small);
    CHECK(small == std::vector<std::uint64_t>{3, 1, 2, 5});
}
