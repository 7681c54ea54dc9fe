// Byte-array fixtures for the Portable Heap Dump decoder (formats/phd.cpp), then the real
// dumps in data/phd against their measured counts (data/phd/README.md).
//
// Every fixture is decoded twice: as one run and with a run cut after every record, so each
// test also checks that the scan hands the right state (address, class cache) to each run.
#include "formats.h"
#include "decode_expect.h"
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

using heapgraph::test::expect_error;
using heapgraph::test::expect_ok;

namespace {

constexpr std::uint32_t k64 = 1, kAllHashed = 2, kJ9 = 4;

// An address that fills all `word` bytes, so a decoder reading too few bytes is caught.
ObjectId phd_id(std::uint32_t word, ObjectId low) { return word == 8 ? 0x00007FA000000000ULL | low : low; }

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

struct PhdDecoded {
    PhdHeader header;
    std::vector<PhdRun> runs;
    PhdRecords records;
};

PhdDecoded decode_runs(Bytes bytes, std::uint64_t target_run_bytes) {
    PhdDecoded out;
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
PhdDecoded decode(const ByteBuilder& b) {
    PhdDecoded whole = decode_runs(b.bytes, 1 << 20);
    PhdDecoded each = decode_runs(b.bytes, 1);
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
    b.u1(2);                              // start of dump (offset 0x38)
    b.u1(3);                              // end of dump
    PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
    CHECK(header.version == 4);
    CHECK(header.flags == 0);
    CHECK(header.total_objects_hint == 5000);
    CHECK(header.total_refs_hint == 12000);
    CHECK(header.hashcode_random1 == 1893316923);
    CHECK(header.hashcode_random2 == 1266258429);
    CHECK(header.full_version == "1.4.2");
    CHECK(header.body_offset == 0x39);
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
    const ObjectId base = phd_id(word, 0x00C01000), a = base - 0x100, c = base - 0x200;
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
    const ObjectId base = phd_id(word, 0x00C01000), a = base - 0x100, c = base - 0x200;
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

TEST_CASE("phd: an IBM 1.4.2 dump (all hashed, not J9) stores an int hash only where a record flags one") {
    const ObjectId base = 0x00C01000, a = base - 0x100;
    ByteBuilder b = phd_header(4, 5, kAllHashed);
    b.u1(0x40);                    // medium object: no refs, byte gap
    b.u1(0x04);                    //   gap +4 units (version 5: 4-byte units): 0x10
    b.id(a);                       //   class A; no hash follows
    b.u1(0x04);                    // long object record
    b.u1(0x83);                    //   flags: int gap, byte refs, hashed and moved, hashed
    b.u4((base - 0x10) >> 2);      //   gap: to base
    b.id(a);                       //   class A
    b.u4(0x12345678);              //   int hash (flagged)
    b.u4(0);                       //   no references
    b.u1(0x06);                    // class record
    b.u1(0x08);                    //   flags: byte gap, byte refs, hashed
    b.u1(0x04);                    //   gap +4 units: base + 0x10
    b.u4(12);                      //   instance size
    b.u4(0x0BADCAFE);              //   int hash (flagged)
    b.id(0);                       //   no super class
    b.u2(1).text("K");             //   name
    b.u4(0);                       //   no references
    b.u1(0x03);                    // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 2);
    CHECK(records.objects[0].address == 0x10);
    CHECK(records.objects[1].address == base);
    REQUIRE(records.classes.size() == 1);
    CHECK(records.classes[0].address == base + 0x10);
    CHECK(records.classes[0].hash == 0x0BADCAFEu);
}

TEST_CASE("phd: a version 4 dump counts 8-byte units and its tag 5 object arrays end with their references") {
    const ObjectId base = 0x00C01000, a = base - 0x100;
    ByteBuilder b = phd_header(4, 4, 0);
    b.u1(0x04);                    // long object record
    b.u1(0x81);                    //   flags: int gap, byte refs, hashed
    b.u4(base >> 3);               //   gap: base / 8 units
    b.id(a);                       //   class A
    b.u4(1);                       //   1 reference
    b.u1(0x02);                    //   +2 units: base + 0x10
    b.u1(0x05);                    // object array record (tag 5)
    b.u1(0x00);                    //   flags: byte gap, byte refs
    b.u1(0x02);                    //   gap +2 units: base + 0x10
    b.id(a);                       //   class A
    b.u4(2);                       //   2 references, last index first
    b.u1(0xFE);                    //   -2 units: base (index 1)
    b.u1(0x04);                    //   +4 units: base + 0x30 (index 0)
    b.u1(0x03);                    // end of dump: no true length, no instance size before it

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 2);
    CHECK(records.objects[0].address == base);
    CHECK(refs_of(records, records.objects[0]) == std::vector<ObjectId>{base + 0x10});
    const PhdObject& array = records.objects[1];
    CHECK(array.kind == ObjectKind::object_array);
    CHECK(array.address == base + 0x10);
    CHECK(array.length == 2);
    CHECK(array.instance_size == 0);
    CHECK(refs_of(records, array) == std::vector<ObjectId>{base + 0x30, base});
    CHECK(count(records, PhdRecordKind::object_array_old) == 1);
}

// ---- arrays ---------------------------------------------------------------------------------

TEST_CASE("phd: primitive arrays in short and long form give element type, length and v6 instance size") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = phd_id(word, 0x00C01000);
    ByteBuilder b = phd_header(word, 6, kJ9);
    base_object(b, base, base - 0x100);  // at base
    b.u1(0x20);                    // primitive array: 001 000 00 = boolean[], byte gap and length
    b.u1(0x04);                    //   gap +4 units: base + 0x10
    b.u1(0xC8);                    //   length 200 (unsigned)
    b.u4(0x36);                    //   instance size 0x36 units: 216 bytes
    b.u1(0x25);                    // primitive array: 001 001 01 = char[], short gap and length
    b.u2(0x0040);                  //   gap +0x40 units: base + 0x110
    b.u2(0x9000);                  //   length 36,864 (unsigned)
    b.u4(0x4804);                  //   instance size: 0x12010 bytes
    b.u1(0x3A);                    // primitive array: 001 110 10 = int[], int gap and length
    b.u4(0xFFFFFFF0);              //   gap -0x10 units: base + 0xD0
    b.u4(5);                       //   length 5
    b.u4(8);                       //   instance size 32 bytes
    b.u1(0x3F);                    // primitive array: 001 111 11 = long[], long gap and length
    b.u8(0x20);                    //   gap +0x20 units: base + 0x150
    b.u8(2);                       //   length 2
    b.u4(8);                       //   instance size 32 bytes
    b.u1(0x07);                    // long primitive array record
    b.u1(0x80);                    //   flags: 100 0 00 0 0 = byte[], byte gap and length
    b.u1(0x04);                    //   gap +4 units: base + 0x160
    b.u1(0xFF);                    //   length 255
    b.u4(0x42);                    //   instance size 264 bytes
    b.u1(0x07);                    // long primitive array record
    b.u1(0xB3);                    //   flags: 101 1 00 1 1 = short[], word gap and length, moved, hashed
    b.id(0x10);                    //   gap word +0x10 units: base + 0x1A0
    b.id(1000);                    //   length word 1000
    b.u4(0xCAFEBABE);              //   int hash (flagged)
    b.u4(0x1F6);                   //   instance size 2008 bytes
    b.u1(0x03);                    // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 7);
    struct Expected {
        ObjectId address;
        BasicType type;
        std::uint64_t length, instance_size;
    };
    const Expected expected[] = {
        {base + 0x10, BasicType::boolean, 200, 216},   {base + 0x110, BasicType::char_, 36864, 0x12010},
        {base + 0xD0, BasicType::int_, 5, 32},          {base + 0x150, BasicType::long_, 2, 32},
        {base + 0x160, BasicType::byte, 255, 264},      {base + 0x1A0, BasicType::short_, 1000, 2008}};
    for (std::size_t i = 0; i < 6; ++i) {
        CAPTURE(i);
        const PhdObject& array = records.objects[i + 1];
        CHECK(array.kind == ObjectKind::primitive_array);
        CHECK(array.address == expected[i].address);
        CHECK(array.element_type == static_cast<std::uint8_t>(expected[i].type));
        CHECK(array.length == expected[i].length);
        CHECK(array.instance_size == expected[i].instance_size);
        CHECK(array.class_address == 0);
        CHECK(array.ref_count == 0);
    }
    CHECK(count(records, PhdRecordKind::primitive_array) == 4);
    CHECK(count(records, PhdRecordKind::long_primitive_array) == 2);
}

TEST_CASE("phd: before defect 78432 a primitive array of size code 3 holds an int gap and an int length") {
    ByteBuilder b = phd_header(4, 5, kJ9, "20050917");
    b.u1(0x3B);                    // primitive array: 001 110 11 = int[], size code 3
    b.u4(0x00C01000 >> 2);         //   gap: an int, not a long
    b.u4(7);                       //   length: an int, not a long
    b.u1(0x03);                    // end of dump
    PhdDecoded decoded = decode(b);
    CHECK(decoded.header.pre78432());
    REQUIRE(decoded.records.objects.size() == 1);
    CHECK(decoded.records.objects[0].address == 0x00C01000);
    CHECK(decoded.records.objects[0].length == 7);
}

TEST_CASE("phd: an array longer than Java allows (2^31 - 1) is refused at its record, by scan and decode") {
    const std::string limit = " exceeds Java's maximum 2147483647";
    struct Case {
        const char* what;
        std::uint32_t word;
        std::vector<std::uint8_t> record;  // the bad record, at the body's start (0x24)
        std::string record_name, message;
    };
    auto bytes = [](ByteBuilder b) { return b.bytes; };
    const Case cases[] = {
        {"long[] of 2^63 - 1: once 8 bytes after the wrap", 4,
         bytes(ByteBuilder().u1(0x3F)            // primitive array: 001 111 11 = long[], long gap and length
                   .u8(0x00C01000 >> 2)          //   gap: an absolute address
                   .u8(0x7FFFFFFFFFFFFFFF)       //   length 2^63 - 1
                   .u4(0)),                      //   instance size
         "PHD primitive array record", "primitive array length 9223372036854775807" + limit},
        {"long primitive array, 2^31 in a 32-bit word", 4,
         bytes(ByteBuilder().u1(0x07)            // long primitive array record
                   .u1(0xF0)                     //   flags: 111 1 0000 = long[], word gap and length
                   .u4(0x00C01000 >> 2)          //   gap word
                   .u4(0x80000000)               //   length 2^31
                   .u4(0)),                      //   instance size
         "PHD long primitive array record", "primitive array length 2147483648" + limit},
        {"object array (tag 8) with a true length of 2^32 - 1", 4,
         bytes(ByteBuilder().u1(0x08)            // object array record (tag 8)
                   .u1(0xC0)                     //   flags: long gap, byte refs
                   .u8(0x00C01000 >> 2)          //   gap
                   .u4(0x00C00F00)               //   class
                   .u4(0)                        //   no references
                   .u4(0xFFFFFFFF)               //   true length 2^32 - 1
                   .u4(0)),                      //   instance size
         "PHD object array record (tag 8)", "object array length 4294967295" + limit},
        {"object array (tag 5) claiming 2^31 references", 4,
         bytes(ByteBuilder().u1(0x05)            // object array record (tag 5)
                   .u1(0xC0)                     //   flags: long gap, byte refs
                   .u8(0x00C01000 >> 2)          //   gap
                   .u4(0x00C00F00)               //   class
                   .u4(0x80000000)),             //   2^31 references, none of them here
         "PHD object array record (tag 5)", "object array length 2147483648" + limit},
    };
    for (const Case& c : cases) {
        CAPTURE(c.what);
        ByteBuilder b = phd_header(c.word, 6, kJ9);
        const std::uint64_t at = b.size();
        b.bytes.insert(b.bytes.end(), c.record.begin(), c.record.end());
        b.u1(0x03);  // end of dump
        PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
        DecodeError error = expect_error(scan_phd_runs(b.bytes, header, 1 << 20));
        CHECK(error.offset == at);
        CHECK(error.record == c.record_name);
        CHECK(error.message == c.message);
        PhdRun run{phd_initial_state(header), b.size() - 1};
        CHECK(expect_error(decode_phd_run(b.bytes, header, run)).message == c.message);
        CHECK(test::load_error(b.bytes, "long.phd") ==
              "long.phd @0x00000024: " + c.record_name + " " + c.message);
    }
}

TEST_CASE("phd: a long[] of exactly 2^31 - 1 elements loads as 16 GiB, the largest Java object") {
    ByteBuilder b = phd_header(8, 5, kJ9);   // v5: no instance size, so the size is estimated
    b.u1(0x3F);                              // primitive array: long[], long gap and length
    b.u8(0x00C01000 >> 2);                   //   gap: an absolute address
    b.u8(0x7FFFFFFF);                        //   length 2^31 - 1
    b.u1(0x03);                              // end of dump
    LoadedDump dump = load_dump_bytes(b.bytes, "largest.phd", {});
    REQUIRE(dump.graph.node_count() == 1);
    CHECK(dump.graph.shallow_bytes[0] == 16 + 0x7FFFFFFFull * 8);  // J9's 16-byte header estimate
    CHECK(dump.graph.shallow_bytes[0] <= kMaxJavaObjectBytes);
}

TEST_CASE("phd: object arrays (tags 8 and 5) give references in index order, true length and v6 instance size") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = phd_id(word, 0x00C01000), a = base - 0x100, c = base - 0x200;
    ByteBuilder b = phd_header(word, 6, kJ9);
    base_object(b, base, a);       // at base
    b.u1(0x08);                    // object array record (tag 8)
    b.u1(0x01);                    //   flags: byte gap, byte refs, hashed
    b.u1(0x10);                    //   gap +0x10 units: base + 0x40
    b.id(a);                       //   class: A (J9 writes the element class)
    b.u4(3);                       //   3 non-null references, last index first
    b.u1(0x02);                    //   +2 units: base + 0x48
    b.u1(0x04);                    //   +4 units: base + 0x50
    b.u1(0xF0);                    //   -0x10 units: base
    b.u4(6);                       //   true length 6: 3 elements are null
    b.u4(0x0A);                    //   instance size 40 bytes
    b.u1(0x05);                    // object array record (tag 5)
    b.u1(0x12);                    //   flags: 00 01 00 1 0 = byte gap, short refs, hashed and moved
    b.u1(0x10);                    //   gap +0x10 units: base + 0x80
    b.id(c);                       //   class: C
    b.u4(0x0BADF00D);              //   int hash (flagged)
    b.u4(2);                       //   2 references, last index first
    b.u2(0xFFF0);                  //   -0x10 units: base + 0x40
    b.u2(0x0100);                  //   +0x100 units: base + 0x480
    b.u4(0x06);                    //   instance size 24 bytes (v6: in tag 5 too)
    b.u1(0x03);                    // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 3);
    const PhdObject& first = records.objects[1];
    CHECK(first.kind == ObjectKind::object_array);
    CHECK(first.address == base + 0x40);
    CHECK(first.class_address == a);
    CHECK(first.length == 6);
    CHECK(first.instance_size == 40);
    CHECK(refs_of(records, first) == std::vector<ObjectId>{base, base + 0x50, base + 0x48});
    const PhdObject& second = records.objects[2];
    CHECK(second.address == base + 0x80);
    CHECK(second.class_address == c);
    CHECK(second.length == 2);
    CHECK(second.instance_size == 24);
    CHECK(refs_of(records, second) == std::vector<ObjectId>{base + 0x480, base + 0x40});
    CHECK(count(records, PhdRecordKind::object_array) == 1);
    CHECK(count(records, PhdRecordKind::object_array_old) == 1);
}

// ---- classes, the class cache, quirks -------------------------------------------------------

TEST_CASE("phd: a class record gives its name, super class, instance size, hash and static references") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = phd_id(word, 0x00C01000), a = base - 0x100;
    const ObjectId klass = base + 0x400;
    ByteBuilder b = phd_header(word, 6, kJ9);
    base_object(b, base, a);                // at base
    std::uint64_t at1 = b.size();
    b.u1(0x06);                             // class record
    b.u1(0x78);                             //   flags: 01 11 1 000 = short gap, long refs, hashed
    b.u2(0x0100);                           //   gap +0x100 units: base + 0x400
    b.u4(24);                               //   instance size 24 bytes
    b.u4(0xDEADBEEF);                       //   int hash (flagged)
    b.id(a);                                //   super class A
    b.u2(16).text("java/lang/String");      //   name
    b.u4(3);                                //   3 references
    b.u8(static_cast<std::uint64_t>(-0x100)); //   -0x100 units: base
    b.u8(0x10);                             //   +0x10 units: base + 0x440
    b.u8(-(klass >> 2));                    //   lands on address 0: a null, dropped
    std::uint64_t at2 = b.size();
    b.u1(0x06);                             // class record
    b.u1(0x00);                             //   flags: byte gap, byte refs, no hash
    b.u1(0x10);                             //   gap +0x10 units: base + 0x440
    b.u4(16);                               //   instance size 16 bytes
    b.id(a);                                //   super class A
    b.u2(2).text("[I");                     //   name
    b.u4(0);                                //   no references
    b.u1(0x03);                             // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.classes.size() == 2);
    const PhdClass& string = records.classes[0];
    CHECK(string.address == klass);
    CHECK(string.super_address == a);
    CHECK(string.name == "java/lang/String");
    CHECK(string.instance_size == 24);
    CHECK(string.hash == 0xDEADBEEFu);
    CHECK(string.static_refs == std::vector<ObjectId>{base, base + 0x440});
    CHECK(string.file_offset == at1);
    const PhdClass& ints = records.classes[1];
    CHECK(ints.address == base + 0x440);
    CHECK(ints.name == "[I");
    CHECK_FALSE(ints.hash.has_value());
    CHECK(ints.static_refs.empty());
    CHECK(ints.file_offset == at2);
    CHECK(records.objects.size() == 1);
    CHECK(records.refs.empty());  // class references live in the class records
    CHECK(records.null_refs_dropped == 1);
    CHECK(count(records, PhdRecordKind::class_record) == 2);
}

TEST_CASE("phd: the class cache keeps the classes of the last 4 medium and long objects, and runs carry it") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = phd_id(word, 0x00C01000);
    auto cls = [&](int k) { return base - 0x100 * static_cast<ObjectId>(k); };
    ByteBuilder b = phd_header(word, 6, kJ9);
    base_object(b, base, cls(1));  // class 1 -> slot 0
    b.u1(0x40);                    // medium object: no refs, byte gap
    b.u1(0x04);                    //   gap +4 units: base + 0x10
    b.id(cls(2));                  //   class 2 -> slot 1
    b.u1(0x08);                    // object array record (tag 8): leaves the cache alone
    b.u1(0x00);                    //   flags: byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x20
    b.id(cls(9));                  //   class 9
    b.u4(0);                       //   no references
    b.u4(0);                       //   true length 0
    b.u4(4);                       //   instance size 16 bytes
    b.u1(0x06);                    // class record: leaves the cache alone
    b.u1(0x00);                    //   flags: byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x30
    b.u4(16);                      //   instance size
    b.id(0);                       //   no super class
    b.u2(1).text("K");             //   name
    b.u4(0);                       //   no references
    b.u1(0x04);                    // long object record
    b.u1(0x01);                    //   flags: byte gap, byte refs, hashed
    b.u1(0x04);                    //   gap +4 units: base + 0x40
    b.id(cls(3));                  //   class 3 -> slot 2
    b.u4(0);                       //   no references
    b.u1(0x40);                    // medium object: no refs, byte gap
    b.u1(0x04);                    //   gap +4 units: base + 0x50
    b.id(cls(4));                  //   class 4 -> slot 3
    b.u1(0x40);                    // medium object: no refs, byte gap
    b.u1(0x04);                    //   gap +4 units: base + 0x60
    b.id(cls(5));                  //   class 5 -> slot 0, replacing class 1
    std::uint64_t shorts = b.size();
    b.u1(0x80);                    // short object, slot 0: 1 00 00 0 00
    b.u1(0x04);                    //   gap +4 units: base + 0x70
    b.u1(0xA0);                    // short object, slot 1: 1 01 00 0 00
    b.u1(0x04);                    //   gap +4 units: base + 0x80
    b.u1(0xC0);                    // short object, slot 2: 1 10 00 0 00
    b.u1(0x04);                    //   gap +4 units: base + 0x90
    b.u1(0xE0);                    // short object, slot 3: 1 11 00 0 00
    b.u1(0x04);                    //   gap +4 units: base + 0xA0
    b.u1(0x03);                    // end of dump

    PhdDecoded decoded = decode(b);
    const auto& objects = decoded.records.objects;
    REQUIRE(objects.size() == 10);
    CHECK(objects[6].address == base + 0x70);
    CHECK(objects[6].class_address == cls(5));
    CHECK(objects[7].class_address == cls(2));
    CHECK(objects[8].class_address == cls(3));
    CHECK(objects[9].class_address == cls(4));
    CHECK(objects[9].address == base + 0xA0);

    // The state a run starting at the first short object gets from the scan.
    auto runs = expect_ok<std::vector<PhdRun>>(scan_phd_runs(b.bytes, decoded.header, 1));
    REQUIRE(runs.size() == 11);
    const PhdState& state = runs[7].start;
    CHECK(state.offset == shorts);
    CHECK(state.address == base + 0x60);
    CHECK(state.class_cache[0] == cls(5));
    CHECK(state.class_cache[1] == cls(2));
    CHECK(state.class_cache[2] == cls(3));
    CHECK(state.class_cache[3] == cls(4));
    CHECK(state.next_cache_slot == 1);
    CHECK(runs.back().end == b.size() - 1);  // the end-of-dump tag
}

TEST_CASE("phd: in a J9 dump an object's class address written as its first reference is dropped and counted") {
    bool j9 = false;
    SUBCASE("J9") { j9 = true; }
    SUBCASE("not J9") { j9 = false; }
    const ObjectId base = 0x00C01000, a = base - 0x100;
    ByteBuilder b = phd_header(4, 5, j9 ? kJ9 : 0);  // version 5: 4-byte units either way
    base_object(b, base, a);       // at base
    b.u1(0x50);                    // medium object: 01 010 0 00 = 2 refs, byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x10
    b.id(a);                       //   class A
    b.u1(0xBC);                    //   -0x44 units: A itself, first: the quirk
    b.u1(0xBC);                    //   -0x44 units: A again, second: a real reference
    b.u1(0x88);                    // short object: slot 0 (A), 1 ref, byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x20
    b.u1(0xB8);                    //   -0x48 units: A, first: the quirk
    b.u1(0x06);                    // class record
    b.u1(0x00);                    //   flags: byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x30
    b.u4(16);                      //   instance size
    b.id(0);                       //   no super class
    b.u2(1).text("K");             //   name
    b.u4(1);                       //   1 reference
    b.u1(0x00);                    //   0 units: the class itself, kept (classes have no quirk)
    b.u1(0x03);                    // end of dump

    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 3);
    if (j9) {
        CHECK(refs_of(records, records.objects[1]) == std::vector<ObjectId>{a});
        CHECK(records.objects[2].ref_count == 0);
        CHECK(records.class_refs_dropped == 2);
    } else {
        CHECK(refs_of(records, records.objects[1]) == std::vector<ObjectId>{a, a});
        CHECK(refs_of(records, records.objects[2]) == std::vector<ObjectId>{a});
        CHECK(records.class_refs_dropped == 0);
    }
    REQUIRE(records.classes.size() == 1);
    CHECK(records.classes[0].static_refs == std::vector<ObjectId>{base + 0x30});
}

TEST_CASE("phd: addresses wrap at the word size") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    ByteBuilder b = phd_header(word, 6, kJ9);
    b.u1(0x40);                    // medium object: no refs, byte gap
    b.u1(0x04);                    //   gap +4 units from address 0: 0x10
    b.id(0x100);                   //   class
    b.u1(0x88);                    // short object: slot 0, 1 ref, byte gap, byte refs
    b.u1(0xF8);                    //   gap -8 units: 0x10 - 0x20 wraps
    b.u1(0x08);                    //   +8 units: back to 0x10
    b.u1(0x03);                    // end of dump
    PhdRecords records = decode(b).records;
    REQUIRE(records.objects.size() == 2);
    CHECK(records.objects[1].address == (word == 4 ? 0xFFFFFFF0ULL : 0xFFFFFFFFFFFFFFF0ULL));
    CHECK(refs_of(records, records.objects[1]) == std::vector<ObjectId>{0x10});
}

TEST_CASE("phd: decoding into a used PhdRecords gives the same records as decoding into a new one") {
    const ObjectId base = 0x00C01000;
    ByteBuilder b = phd_header(4, 6, kJ9);
    base_object(b, base, base - 0x100);  // at base
    b.u1(0x88);                    // short object: slot 0, 1 ref, byte gap, byte refs
    b.u1(0x04);                    //   gap +4 units: base + 0x10
    b.u1(0xFC);                    //   -4 units: base
    b.u1(0x03);                    // end of dump
    PhdDecoded fresh = decode(b);
    PhdRecords used = fresh.records;
    used.refs.push_back(0x1234);
    used.class_refs_dropped = 7;
    used.counts_by_kind[3] = 9;
    REQUIRE(fresh.runs.size() == 1);
    auto error = decode_phd_run_into(b.bytes, fresh.header, fresh.runs[0], used);
    REQUIRE_FALSE(error.has_value());
    check_same(used, fresh.records);
}

// ---- bad input ------------------------------------------------------------------------------

namespace {

// Good records, then room for a bad tag, then good records again. Returns the bad tag offset.
std::uint64_t records_around(ByteBuilder& b, std::uint8_t middle_tag) {
    const ObjectId base = 0x00C01000;
    base_object(b, base, base - 0x100);  // at base
    b.u1(0x80);                          // short object: slot 0, no refs, byte gap
    b.u1(0x04);                          //   gap +4 units
    std::uint64_t middle = b.size();
    b.u1(middle_tag);                    // the tag under test
    b.u1(0x80);                          // short object: slot 0, no refs, byte gap
    b.u1(0x04);                          //   gap +4 units
    b.u1(0x03);                          // end of dump
    return middle;
}

}  // namespace

TEST_CASE("phd: an unknown tag in the middle of the body is reported at its offset by scan and decode") {
    for (std::uint8_t tag : {0x00, 0x01, 0x02, 0x09, 0x1F}) {
        CAPTURE(tag);
        ByteBuilder b = phd_header(4, 6, kJ9);
        std::uint64_t middle = records_around(b, tag);
        PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
        DecodeError error = expect_error(scan_phd_runs(b.bytes, header, 1 << 20));
        CHECK(error.offset == middle);
        char name[32];
        std::snprintf(name, sizeof name, "PHD record tag 0x%02x", tag);
        CHECK(error.record == name);
        CHECK(error.message == "is not a PHD body record");

        // A run over the same bytes (as a scan of the file before the corruption cut it)
        // meets the same error when decoded.
        PhdRun run{phd_initial_state(header), b.size() - 1};
        DecodeError decoded = expect_error(decode_phd_run(b.bytes, header, run));
        CHECK(decoded.offset == middle);
        CHECK(decoded.record == name);
    }
}

TEST_CASE("phd: bytes after the end-of-dump tag, or no end-of-dump tag, are errors") {
    ByteBuilder b = phd_header(4, 6, kJ9);
    base_object(b, 0x00C01000, 0x00C00F00);  // one record
    std::uint64_t end_tag = b.size();
    SUBCASE("trailing bytes") {
        b.u1(0x03);  // end of dump
        b.u1(0x00);  // junk
        b.u1(0x00);  // junk
        PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
        DecodeError error = expect_error(scan_phd_runs(b.bytes, header, 1 << 20));
        CHECK(error.offset == end_tag);
        CHECK(error.record == "PHD end-of-dump tag");
        CHECK(error.message == "is followed by 2 more bytes up to " + hex_offset(b.size()));
    }
    SUBCASE("missing end-of-dump tag") {
        PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
        DecodeError error = expect_error(scan_phd_runs(b.bytes, header, 1 << 20));
        CHECK(error.offset == end_tag);
        CHECK(error.record == "PHD end-of-dump tag");
        CHECK(error.message == "is missing: the file ends at " + hex_offset(b.size()) + " after a whole record");
    }
}

TEST_CASE("phd: a run that does not end at a record boundary, or lies outside the file, is an error") {
    ByteBuilder b = phd_header(4, 6, kJ9);
    base_object(b, 0x00C01000, 0x00C00F00);  // 14 bytes from 0x24
    b.u1(0x03);                              // end of dump
    PhdHeader header = expect_ok<PhdHeader>(read_phd_header(b.bytes));
    PhdRun inside{phd_initial_state(header), 0x24 + 5};
    DecodeError error = expect_error(decode_phd_run(b.bytes, header, inside));
    CHECK(error.offset == 0x24);
    CHECK(error.record == "PHD run");
    CHECK(error.message == "has a record that crosses its end at " + hex_offset(0x29));
    PhdRun past{phd_initial_state(header), b.size() + 1};
    CHECK(expect_error(decode_phd_run(b.bytes, header, past)).record == "PHD run");
    PhdRun over_end_tag{phd_initial_state(header), b.size()};
    DecodeError end = expect_error(decode_phd_run(b.bytes, header, over_end_tag));
    CHECK(end.offset == b.size() - 1);
    CHECK(end.record == "PHD end-of-dump tag");
}

namespace {

// Decodes `bytes` from the header to the end; "" when it decodes, else the error's offset,
// record and message.
std::string try_decode(Bytes bytes, std::uint64_t* offset = nullptr) {
    auto header = read_phd_header(bytes);
    const DecodeError* error = std::get_if<DecodeError>(&header);
    std::variant<std::vector<PhdRun>, DecodeError> runs;
    if (!error) {
        runs = scan_phd_runs(bytes, std::get<PhdHeader>(header), 4096);
        error = std::get_if<DecodeError>(&runs);
    }
    if (!error) {
        for (const PhdRun& run : std::get<std::vector<PhdRun>>(runs)) {
            auto records = decode_phd_run(bytes, std::get<PhdHeader>(header), run);
            if (auto* e = std::get_if<DecodeError>(&records)) {
                if (offset) *offset = e->offset;
                return e->record + " " + e->message;
            }
        }
        return "";
    }
    if (offset) *offset = error->offset;
    return error->record + " " + error->message;
}

}  // namespace

TEST_CASE("phd: a fixture with every record kind cut at every byte offset gives an error naming that offset") {
    std::uint32_t word = 0;
    SUBCASE("32-bit words") { word = 4; }
    SUBCASE("64-bit words") { word = 8; }
    const ObjectId base = phd_id(word, 0x00C01000);
    ByteBuilder b = phd_header(word, 6, kJ9);
    base_object(b, base, base - 0x100);  // long object
    b.u1(0x48);                    // medium object: 1 ref, byte gap, byte refs
    b.u1(0x04);                    //   gap
    b.id(base - 0x200);            //   class
    b.u1(0xFC);                    //   ref
    b.u1(0xA8);                    // short object: slot 1, 1 ref, byte gap, byte refs
    b.u1(0x04);                    //   gap
    b.u1(0xFC);                    //   ref
    b.u1(0x25);                    // primitive array: char[], short gap and length
    b.u2(0x0004);                  //   gap
    b.u2(0x0100);                  //   length
    b.u4(0x84);                    //   instance size
    b.u1(0x07);                    // long primitive array: byte[], word gap and length, hashed
    b.u1(0x93);                    //   flags
    b.id(0x50);                    //   gap
    b.id(0x10);                    //   length
    b.u4(0x11111111);              //   int hash
    b.u4(0x08);                    //   instance size
    b.u1(0x08);                    // object array (tag 8): byte gap, byte refs
    b.u1(0x00);                    //   flags
    b.u1(0x08);                    //   gap
    b.id(base - 0x100);            //   class
    b.u4(1);                       //   1 reference
    b.u1(0xF0);                    //   ref
    b.u4(2);                       //   true length
    b.u4(0x06);                    //   instance size
    b.u1(0x06);                    // class record: byte gap, byte refs
    b.u1(0x00);                    //   flags
    b.u1(0x08);                    //   gap
    b.u4(16);                      //   instance size
    b.id(base - 0x100);            //   super class
    b.u2(3).text("Foo");           //   name
    b.u4(1);                       //   1 reference
    b.u1(0xF0);                    //   ref
    b.u1(0x03);                    // end of dump
    REQUIRE(try_decode(b.bytes).empty());
    for (std::size_t size = 0; size < b.size(); ++size) {
        CAPTURE(size);
        std::uint64_t offset = ~0ULL;
        std::string message = try_decode(Bytes(b.bytes.data(), size), &offset);
        CHECK(message.find(hex_offset(size)) != std::string::npos);
        CHECK(offset <= size);
    }
}

// ---- the real dumps in data/phd ---------------------------------------------------------------

namespace {

struct CorpusFile {
    const char* name;
    const char* javacore;
    int version;
    std::uint32_t flags;
    std::uint64_t classes, objects, object_arrays, primitive_arrays, refs, strings;
    std::uint64_t class_refs_dropped;
};

// data/phd/README.md; ../shared/dumps/PROVENANCE.md "phd/".
const CorpusFile kCorpus[] = {
    {"heapdump.20100112.141124.11580.0002.phd", "javacore.20100112.141124.11580.0003.txt", 5, 6,
     411, 2720, 555, 1583, 6537, 1533, 1},
    {"heapdump.20100209.165721.4484.phd", "javacore.20100209.165721.4484.txt", 5, 2,
     341, 2479, 209, 1701, 4905, 1473, 0},
    {"heapdump.20160404.083909.9480.0002.phd", "javacore.20160404.083909.9480.0003.txt", 6, 5,
     917, 33647, 1073, 20618, 83554, 20200, 2},
};

std::uint64_t kinds(const PhdRecords& records, ObjectKind kind) {
    std::uint64_t n = 0;
    for (const PhdObject& object : records.objects) n += object.kind == kind;
    return n;
}

std::uint64_t all_refs(const PhdRecords& records) {
    std::uint64_t n = records.refs.size();
    for (const PhdClass& cls : records.classes) n += cls.static_refs.size();
    return n;
}

// Loaded classes listed by a javacore: one 3CLTEXTCLASS line each.
std::uint64_t javacore_classes(const std::string& path) {
    std::ifstream in(path);
    std::uint64_t n = 0;
    for (std::string line; std::getline(in, line);) n += line.rfind("3CLTEXTCLASS", 0) == 0;
    return n;
}

}  // namespace

TEST_CASE("phd: every dump in data/phd decodes to its last byte with the measured record counts") {
    for (const CorpusFile& file : kCorpus) {
        CAPTURE(file.name);
        std::vector<std::uint8_t> bytes = test::read_file(test::data_path(std::string("phd/") + file.name));
        REQUIRE(!bytes.empty());
        PhdDecoded decoded = decode_runs(bytes, std::uint64_t{1} << 40);
        CHECK(decoded.header.version == file.version);
        CHECK(decoded.header.flags == file.flags);
        REQUIRE(decoded.runs.size() == 1);
        CHECK(decoded.runs.back().end == bytes.size() - 1);  // then the end-of-dump tag
        const PhdRecords& records = decoded.records;
        CHECK(records.classes.size() == file.classes);
        CHECK(kinds(records, ObjectKind::instance) == file.objects);
        CHECK(kinds(records, ObjectKind::object_array) == file.object_arrays);
        CHECK(kinds(records, ObjectKind::primitive_array) == file.primitive_arrays);
        CHECK(all_refs(records) == file.refs);
        CHECK(records.class_refs_dropped == file.class_refs_dropped);
        CHECK(records.null_refs_dropped == 0);
        CHECK(count(records, PhdRecordKind::object_array_old) == 0);  // all tag 8

        std::map<std::string, ObjectId> by_name;
        for (const PhdClass& cls : records.classes) by_name[cls.name] = cls.address;
        std::uint64_t strings = 0;
        for (const PhdObject& object : records.objects)
            strings += object.kind == ObjectKind::instance && object.class_address == by_name["java/lang/String"];
        CHECK(strings == file.strings);

        // Small runs decode to exactly the same records.
        PhdDecoded small = decode_runs(bytes, 4096);
        CHECK(small.runs.size() > 1);
        check_same(records, small.records);
    }
}

TEST_CASE("phd: the v6 dump's array instance sizes sum to 1,998,032 bytes") {
    std::vector<std::uint8_t> bytes =
        test::read_file(test::data_path("phd/heapdump.20160404.083909.9480.0002.phd"));
    PhdRecords records = decode_runs(bytes, 64 * 1024).records;
    std::uint64_t sum = 0, arrays_without = 0;
    for (const PhdObject& object : records.objects) {
        if (object.kind == ObjectKind::instance) continue;
        sum += object.instance_size;
        arrays_without += object.instance_size == 0;
    }
    CHECK(sum == 1998032);
    CHECK(arrays_without == 0);
}

TEST_CASE("phd: the J9 dumps have one class record per class their javacore lists") {
    for (const CorpusFile& file : kCorpus) {
        CAPTURE(file.name);
        std::vector<std::uint8_t> bytes = test::read_file(test::data_path(std::string("phd/") + file.name));
        PhdDecoded decoded = decode_runs(bytes, 1 << 20);
        std::uint64_t listed = javacore_classes(test::data_path(std::string("phd/") + file.javacore));
        if (decoded.header.j9) {
            CHECK(decoded.records.classes.size() == listed);
        } else {
            // The IBM 1.4.2 javacore lists 332 classes against 341 class records.
            CHECK(listed == 332);
            CHECK(decoded.records.classes.size() == 341);
        }
    }
}

TEST_CASE("phd: the smallest real dump cut at every byte offset gives an error naming that offset") {
    std::vector<std::uint8_t> bytes = test::read_file(test::data_path("phd/heapdump.20100209.165721.4484.phd"));
    REQUIRE(bytes.size() == 39112);
    REQUIRE(try_decode(bytes).empty());
    std::size_t failures = 0;
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        std::uint64_t offset = ~0ULL;
        std::string message = try_decode(Bytes(bytes.data(), size), &offset);
        if (message.find(hex_offset(size)) == std::string::npos || offset > size) {
            if (++failures <= 5) FAIL_CHECK("size " << size << ": " << message);
        }
    }
    CHECK(failures == 0);
}

TEST_CASE("phd: the J9 dumps cut at sampled offsets give an error naming that offset") {
    for (const char* name : {"heapdump.20100112.141124.11580.0002.phd", "heapdump.20160404.083909.9480.0002.phd"}) {
        CAPTURE(name);
        std::vector<std::uint8_t> bytes = test::read_file(test::data_path(std::string("phd/") + name));
        std::size_t step = bytes.size() / 700 | 1;  // odd, so cuts fall at every alignment
        for (std::size_t size = 0; size < bytes.size(); size += size < 200 ? 1 : step) {
            CAPTURE(size);
            std::uint64_t offset = ~0ULL;
            std::string message = try_decode(Bytes(bytes.data(), size), &offset);
            CHECK(message.find(hex_offset(size)) != std::string::npos);
            CHECK(offset <= size);
        }
    }
}

TEST_CASE("phd: random byte changes in a real dump give records or an error, never a crash") {
    std::vector<std::uint8_t> good = test::read_file(test::data_path("phd/heapdump.20100112.141124.11580.0002.phd"));
    std::uint64_t state = 0x9E3779B97F4A7C15ULL;  // a fixed xorshift seed: the same cases every run
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    std::size_t errors = 0;
    for (int round = 0; round < 400; ++round) {
        std::vector<std::uint8_t> bytes = good;
        for (int k = 0; k < 1 + round % 4; ++k) bytes[next() % bytes.size()] = static_cast<std::uint8_t>(next());
        std::uint64_t offset = 0;
        std::string message = try_decode(bytes, &offset);
        if (message.empty()) continue;
        ++errors;
        CHECK(offset <= bytes.size());
    }
    CHECK(errors > 0);
}

TEST_CASE("phd: a heap's running total of sizes stops below 2^63 bytes, so no sum over its objects wraps") {
    std::uint64_t total = 0;
    CHECK(add_heap_bytes(total, kMaxJavaObjectBytes));
    CHECK(total == kMaxJavaObjectBytes);
    total = kMaxHeapBytes - 10;
    CHECK(add_heap_bytes(total, 10));
    CHECK(total == kMaxHeapBytes);
    CHECK_FALSE(add_heap_bytes(total, 1));
    CHECK(total == kMaxHeapBytes);  // unchanged
    total = 0;
    CHECK_FALSE(add_heap_bytes(total, UINT64_MAX));
    CHECK(total == 0);
}
