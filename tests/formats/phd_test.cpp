// Byte-array fixtures for the Portable Heap Dump decoder (formats/phd.cpp), then the real
// dumps in data/phd against their measured counts (data/phd/README.md).
//
// Every fixture is decoded twice: as one run and with a run cut after every record, so each
// test also checks that the scan hands the right state (address, class cache) to each run.
#include "formats.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

using namespace heapgraph;
using heapgraph::test::ByteBuilder;

namespace {

constexpr std::uint32_t k64 = 1, kAllHashed = 2, kJ9 = 4;

// An address that fills all `word` bytes, so a decoder reading too few bytes is caught.
ObjectId wide(std::uint32_t word, ObjectId low) { return word == 8 ? 0x00007FA000000000ULL | low : low; }

// Header of a fixture dump; with the full version "J9" it is 36 bytes, so the body is at 0x24.
ByteBuilder phd_header(std::uint32_t word, std::uint32_t version, std::uint32_t flags,
                       const std::string& full_version = "J9") {
    ByteBuilder b;
    b.id_size = word;
    b.u2(18).text("portable heap dump");      // UTF string: u2 length 18, then the magic
    b.u4(version);                            // PHD version
    b.u4(flags | (word == 8 ? k64 : 0));      // flags: 1 = 64-bit words, 2 = all hashed, 4 = J9
    b.u1(1);                                  // start of header
    b.u1(4).u2(full_version.size());          // header record 4, full version: UTF length
    b.text(full_version);                     //   and text
    b.u1(2);                                  // end of header
    b.u1(2);                                  // start of dump
    return b;
}

// A long object record of class `cls` at `base`, without references. Its gap is from
// address 0, so it needs a long (64-bit) or an int (32-bit) gap; gaps count 4-byte units
// (J9 or version 5). It leaves `cls` in class cache slot 0.
void base_object(ByteBuilder& b, ObjectId base, ObjectId cls) {
    bool w8 = b.id_size == 8;
    b.u1(0x04);                  // long object record
    b.u1(w8 ? 0xC1 : 0x81);      //   flags: gap long (11) or int (10), byte refs, hashed bit
    b.u(base >> 2, w8 ? 8 : 4);  //   gap: base / 4 units from address 0
    b.id(cls);                   //   class address
    b.u4(0);                     //   no references
}

template <typename T, typename Result>
T expect_ok(Result&& result) {
    if (auto* error = std::get_if<DecodeError>(&result))
        FAIL(error->record << " @" << hex_offset(error->offset) << ": " << error->message);
    return std::get<T>(std::move(result));
}

template <typename Result>
DecodeError expect_error(Result&& result) {
    REQUIRE(std::holds_alternative<DecodeError>(result));
    return std::get<DecodeError>(std::move(result));
}

// Appends one run's records, renumbering its reference indexes.
void append(PhdRecords& all, PhdRecords&& part) {
    std::uint64_t shift = all.refs.size();
    for (PhdObject object : part.objects) {
        object.first_ref += shift;
        all.objects.push_back(object);
    }
    all.refs.insert(all.refs.end(), part.refs.begin(), part.refs.end());
    for (PhdClass& cls : part.classes) all.classes.push_back(std::move(cls));
    for (int i = 0; i < 16; ++i) all.counts_by_kind[i] += part.counts_by_kind[i];
    all.class_refs_dropped += part.class_refs_dropped;
    all.null_refs_dropped += part.null_refs_dropped;
}

struct Decoded {
    PhdHeader header;
    std::vector<PhdRun> runs;
    PhdRecords records;
};

Decoded decode_runs(Bytes bytes, std::uint64_t target_run_bytes) {
    Decoded out;
    out.header = expect_ok<PhdHeader>(read_phd_header(bytes));
    out.runs = expect_ok<std::vector<PhdRun>>(scan_phd_runs(bytes, out.header, target_run_bytes));
    for (const PhdRun& run : out.runs)
        append(out.records, expect_ok<PhdRecords>(decode_phd_run(bytes, out.header, run)));
    return out;
}

auto key(const PhdObject& o) {
    return std::tie(o.address, o.class_address, o.kind, o.element_type, o.length, o.instance_size,
                    o.first_ref, o.ref_count, o.file_offset);
}
auto key(const PhdClass& c) {
    return std::tie(c.address, c.super_address, c.name, c.instance_size, c.static_refs, c.hash, c.file_offset);
}

void check_same(const PhdRecords& a, const PhdRecords& b) {
    REQUIRE(a.objects.size() == b.objects.size());
    for (std::size_t i = 0; i < a.objects.size(); ++i) {
        CAPTURE(i);
        CHECK(key(a.objects[i]) == key(b.objects[i]));
    }
    REQUIRE(a.classes.size() == b.classes.size());
    for (std::size_t i = 0; i < a.classes.size(); ++i) {
        CAPTURE(i);
        CHECK(key(a.classes[i]) == key(b.classes[i]));
    }
    CHECK(a.refs == b.refs);
    for (int i = 0; i < 16; ++i) CHECK(a.counts_by_kind[i] == b.counts_by_kind[i]);
    CHECK(a.class_refs_dropped == b.class_refs_dropped);
    CHECK(a.null_refs_dropped == b.null_refs_dropped);
}

// Decodes as one run and as one run per record; both must agree.
Decoded decode(const ByteBuilder& b) {
    Decoded whole = decode_runs(b.bytes, 1 << 20);
    Decoded each = decode_runs(b.bytes, 1);
    check_same(whole.records, each.records);
    return whole;
}

std::vector<ObjectId> refs_of(const PhdRecords& records, const PhdObject& object) {
    auto first = records.refs.begin() + static_cast<std::ptrdiff_t>(object.first_ref);
    return {first, first + object.ref_count};
}

std::uint64_t count(const PhdRecords& records, PhdRecordKind kind) {
    return records.counts_by_kind[static_cast<int>(kind)];
}

}  // namespace

// ---- header ---------------------------------------------------------------------------------

TEST_CASE("phd: a v6 J9 header gives its flags and version, and the body starts after the start-of-dump tag") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    ByteBuilder b = phd_header(word, 6, kJ9);
    b.u1(0x03);  // end of dump
    PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
    CHECK(header.version == 6);
    CHECK(header.words64 == (word == 8));
    CHECK(header.word_bytes() == word);
    CHECK(header.j9);
    CHECK_FALSE(header.all_hashed);
    CHECK(header.full_version == "J9");
    CHECK(header.body_offset == 36);
    CHECK(header.gap_shift() == 2);
    CHECK_FALSE(header.short_hashes());
    CHECK_FALSE(header.pre78432());
    auto runs = expect_ok<std::vector<PhdRun>>(scan_phd_runs(b.bytes, header, 1024));
    CHECK(runs.empty());  // an empty body has no runs
}

TEST_CASE("phd: a v4 header reads the totals and hashcode randoms header records") {
    ByteBuilder b;
    b.u2(18).text("portable heap dump");  // UTF magic
    b.u4(4);                              // version 4
    b.u4(0);                              // flags: 32-bit, not hashed, not J9
    b.u1(1);                              // start of header
    b.u1(1);                              // header record 1, totals:
    b.u4(5000);                           //   objects
    b.u4(12000);                          //   references
    b.u1(3);                              // header record 3, hashcode randoms:
    b.u4(1893316923);                     //   random 1
    b.u4(1266258429);                     //   random 2
    b.u1(4).u2(5).text("1.4.2");          // header record 4, full version
    b.u1(2);                              // end of header
    b.u1(2);                              // start of dump (offset 0x30)
    b.u1(3);                              // end of dump
    PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
    CHECK(header.version == 4);
    CHECK(header.flags == 0);
    CHECK(header.total_objects_hint == 5000);
    CHECK(header.total_refs_hint == 12000);
    CHECK(header.hashcode_random1 == 1893316923);
    CHECK(header.hashcode_random2 == 1266258429);
    CHECK(header.full_version == "1.4.2");
    CHECK(header.body_offset == 0x31);
    CHECK(header.word_bytes() == 4);
    CHECK(header.gap_shift() == 3);
}

TEST_CASE("phd: the gap unit and the hash form follow the version and the J9 and all-hashed flags") {
    struct Case {
        std::uint32_t version, flags;
        int gap_shift;
        bool short_hashes;
    };
    for (Case c : {Case{4, 0, 3, false}, Case{4, kJ9, 2, false}, Case{4, kJ9 | kAllHashed, 2, true},
                   Case{5, 0, 2, false}, Case{5, kAllHashed, 2, false}, Case{5, kJ9 | kAllHashed, 2, true},
                   Case{6, 0, 3, false}, Case{6, kAllHashed, 3, false}, Case{6, kJ9, 2, false}}) {
        CAPTURE(c.version);
        CAPTURE(c.flags);
        ByteBuilder b = phd_header(4, c.version, c.flags);
        b.u1(0x03);  // end of dump
        PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
        CHECK(header.gap_shift() == c.gap_shift);
        CHECK(header.short_hashes() == c.short_hashes);
        CHECK(header.all_hashed == ((c.flags & kAllHashed) != 0));
        CHECK(header.j9 == ((c.flags & kJ9) != 0));
    }
}

TEST_CASE("phd: a bad header is reported at the offset of the bad field") {
    ByteBuilder good = phd_header(4, 6, kJ9);
    good.u1(0x03);  // end of dump
    std::vector<std::uint8_t> bytes = good.bytes;
    std::uint64_t offset = 0;
    std::string message;
    SUBCASE("wrong magic") {
        bytes[5] = 'X';
        offset = 0;
        message = "does not start with the UTF string \"portable heap dump\"";
    }
    SUBCASE("unknown version") {
        bytes[23] = 7;  // last byte of the version int at 0x14
        offset = 20;
        message = "has version 7, expected 4, 5 or 6";
    }
    SUBCASE("unknown flag bits") {
        bytes[27] = 0x0C;  // J9 and an unknown 8
        offset = 24;
        message = "has unknown flag bits 0x08 (known: 1 = 64-bit, 2 = all hashed, 4 = J9)";
    }
    SUBCASE("no start-of-header tag") {
        bytes[28] = 0x04;
        offset = 28;
        message = "has 0x04 where the start-of-header tag 1 belongs";
    }
    SUBCASE("unknown header record") {
        bytes[29] = 0x09;  // where header record 4 starts
        offset = 29;
        message = "has unknown header record tag 0x09";
    }
    SUBCASE("no start-of-dump tag") {
        bytes[35] = 0x03;
        offset = 35;
        message = "has 0x03 where the start-of-dump tag 2 belongs";
    }
    DecodeError error = expect_error(read_phd_header(bytes));
    CHECK(error.record == "PHD header");
    CHECK(error.offset == offset);
    CHECK(error.message == message);
}

// ---- object records -------------------------------------------------------------------------

TEST_CASE("phd: short, medium and long object records give addresses, classes and references") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = wide(word, 0x00C01000), a = base - 0x100, c = base - 0x200;
    ByteBuilder b = phd_header(word, 6, kJ9);
    std::uint64_t at0 = b.size();
    b.u1(0x04);                    // long object record
    b.u1(word == 8 ? 0xD1 : 0x91); //   flags: gap long (11) or int (10), short refs (01), hashed
    b.u(base >> 2, word);          //   gap: base / 4 units from address 0
    b.id(a);                       //   class A (cache slot 0)
    b.u4(2);                       //   2 references
    b.u2(0x0004);                  //   +4 units: base + 0x10
    b.u2(0xFFFE);                  //   -2 units: base - 0x8
    std::uint64_t at1 = b.size();
    b.u1(0x4D);                    // medium object: 01 001 1 01 = 1 ref, short gap, short refs
    b.u2(0x0010);                  //   gap +0x10 units: base + 0x40
    b.id(c);                       //   class C (cache slot 1)
    b.u2(0xFFF0);                  //   -0x10 units: base
    std::uint64_t at2 = b.size();
    b.u1(0xA8);                    // short object: 1 01 01 0 00 = slot 1, 1 ref, byte gap, byte refs
    b.u1(0x08);                    //   gap +8 units: base + 0x60
    b.u1(0xF8);                    //   -8 units: base + 0x40
    std::uint64_t at3 = b.size();
    b.u1(0x80);                    // short object: slot 0, no refs, byte gap
    b.u1(0x04);                    //   gap +4 units: base + 0x70
    b.u1(0x03);                    // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 4);
    const auto& o = records.objects;
    CHECK(o[0].address == base);
    CHECK(o[0].class_address == a);
    CHECK(o[0].kind == ObjectKind::instance);
    CHECK(o[0].file_offset == at0);
    CHECK(refs_of(records, o[0]) == std::vector<ObjectId>{base + 0x10, base - 0x8});
    CHECK(o[1].address == base + 0x40);
    CHECK(o[1].class_address == c);
    CHECK(o[1].file_offset == at1);
    CHECK(refs_of(records, o[1]) == std::vector<ObjectId>{base});
    CHECK(o[2].address == base + 0x60);
    CHECK(o[2].class_address == c);
    CHECK(o[2].file_offset == at2);
    CHECK(refs_of(records, o[2]) == std::vector<ObjectId>{base + 0x40});
    CHECK(o[3].address == base + 0x70);
    CHECK(o[3].class_address == a);
    CHECK(o[3].file_offset == at3);
    CHECK(o[3].ref_count == 0);
    CHECK(count(records, PhdRecordKind::long_object) == 1);
    CHECK(count(records, PhdRecordKind::medium_object) == 1);
    CHECK(count(records, PhdRecordKind::short_object) == 2);
}

TEST_CASE("phd: a J9 all-hashed dump stores a short hash in every record kind") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = wide(word, 0x00C01000), a = base - 0x100, c = base - 0x200;
    ByteBuilder b = phd_header(word, 5, kJ9 | kAllHashed);
    b.u1(0x04);                    // long object record
    b.u1(word == 8 ? 0xC1 : 0x81); //   flags: gap long or int, byte refs, hashed (no int hash)
    b.u(base >> 2, word);          //   gap: base / 4 units
    b.id(a);                       //   class A
    b.u2(0x1234);                  //   short hash: present whatever the flags say
    b.u4(1);                       //   1 reference
    b.u1(0x02);                    //   +2 units: base + 0x8
    b.u1(0x48);                    // medium object: 01 001 0 00 = 1 ref, byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x10
    b.id(c);                       //   class C
    b.u2(0x8001);                  //   short hash
    b.u1(0xFC);                    //   -4 units: base
    b.u1(0x88);                    // short object: 1 00 01 0 00 = slot 0, 1 ref, byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x20
    b.u2(0x0002);                  //   short hash
    b.u1(0xF8);                    //   -8 units: base
    b.u1(0x38);                    // primitive array: 001 110 00 = int[], byte gap and length
    b.u1(0x04);                    //   gap +4 units: base + 0x30
    b.u1(0x03);                    //   length 3
    b.u2(0x7777);                  //   short hash
    b.u1(0x06);                    // class record
    b.u1(0x00);                    //   flags: byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x40
    b.u4(16);                      //   instance size
    b.u2(0x8005);                  //   short hash: 15 bits, 0x0005
    b.id(a);                       //   super class A
    b.u2(1).text("K");             //   name
    b.u4(0);                       //   no references
    b.u1(0x03);                    // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 4);
    CHECK(refs_of(records, records.objects[0]) == std::vector<ObjectId>{base + 0x8});
    CHECK(records.objects[1].address == base + 0x10);
    CHECK(refs_of(records, records.objects[1]) == std::vector<ObjectId>{base});
    CHECK(records.objects[2].address == base + 0x20);
    CHECK(records.objects[2].class_address == a);  // slot 0: the long record's class
    CHECK(records.objects[3].address == base + 0x30);
    CHECK(records.objects[3].length == 3);
    REQUIRE(records.classes.size() == 1);
    CHECK(records.classes[0].address == base + 0x40);
    CHECK(records.classes[0].hash == 0x00050005u);  // J9 widens the 15 bits into both halves
    CHECK(records.classes[0].super_address == a);
    CHECK(records.classes[0].name == "K");
}
