// Text fixtures for the IBM classic heapdump decoder (formats/classic.cpp): the examples of
// both specs (IBM SDK 6 and OpenJ9), laid out as each writer writes them, then hostile input.
//
// Every fixture is decoded as one block and with a block cut at every record, so each test
// also checks that the splitter cuts only where a record or trailer starts and counts lines.
#include "formats.h"
#include "decode_expect.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

using namespace heapgraph;
using heapgraph::test::expect_error;
using heapgraph::test::expect_ok;
using namespace std::string_literals;

namespace {

// The OpenJ9 document's examples, 64-bit, byte for byte as heapdump_classic.c writes them:
// "\n" + header, "\n\t", then "0x%p " per non-null reference (so a trailing blank).
const std::string kOpenJ9 =
    "// Version: JRE 1.8.0 Linux amd64-64 (build 1.8.0_232-b09)\n"                   // line 1
    "0x00000000E0000AF0 [16] OBJ java/lang/String\n"                                 // line 2, 0x3b
    "\t0x00000000E0000B00 \n"                                                        // 3
    "0x00000000E0000B00 [32] OBJ [C\n"                                               // 4
    "\t\n"                                                                           // 5: no references
    "0x00000000FFF07498 [24] OBJ [Ljava/lang/String;\n"                              // 6
    "\t0x00000000E0005D78 0x00000000E0005D50 0x00000000E0005D28 0x00000000E0005D00 \n"  // 7
    "0x00000000E00174F0 [80] CLS java/util/Date\n"                                   // 8
    "\t0x00000000FFF1BB60 0x00000000FFF29630 \n"                                     // 9
    "// Breakdown - Classes: 1, Objects: 1, ObjectArrays: 1, PrimitiveArrays: 1\n"   // 10
    "// EOF:  Total 'Objects',Refs(null) : 4,9(2)\n";                                // 11: 7 non-null + 2 null

// Every record kind, 32-bit OpenJ9: objects, object arrays ("[L", "[[L", "[[I"), primitive
// arrays ("[I", "[Z"), classes of a class, an array and a primitive type. The Breakdown
// counts as OpenJ9's writer does, "[[I" by its leaf type as a primitive array.
const std::string kEveryKind =
    "// Version: JRE 1.8.0 Linux x86-32 (build 1.8.0_232-b09)\n"                    // 1
    "0x10000000 [24] OBJ java/util/HashMap\n"                                        // 2
    "\t0x10000100 \n"                                                                // 3
    "0x10000100 [80] OBJ [Ljava/util/HashMap$Node;\n"                                // 4
    "\t0x10000200 0x10000200 \n"                                                     // 5: the same node twice
    "0x10000200 [32] OBJ java/util/HashMap$Node\n"                                   // 6
    "\t\n"                                                                           // 7
    "0x10000300 [16] OBJ [[I\n"                                                      // 8
    "\t0x10000400 \n"                                                                // 9
    "0x10000400 [24] OBJ [I\n"                                                       // 10
    "\t\n"                                                                           // 11
    "0x10000500 [16] OBJ [[Ljava/lang/String;\n"                                     // 12
    "\t\n"                                                                           // 13
    "0x10000600 [16] OBJ [Z\n"                                                       // 14
    "\t\n"                                                                           // 15
    "0x10001000 [72] CLS java/util/HashMap\n"                                        // 16
    "\t0x10002000 0x10000000 \n"                                                     // 17
    "0x10001100 [72] CLS [I\n"                                                       // 18
    "\t0x10002000 \n"                                                                // 19
    "0x10001200 [72] CLS int\n"                                                      // 20
    "\t\n"                                                                           // 21
    "// Breakdown - Classes: 3, Objects: 2, ObjectArrays: 2, PrimitiveArrays: 3\n"   // 22
    "// EOF:  Total 'Objects',Refs(null) : 10,12(5)\n";                              // 23

// The IBM SDK document's examples as printed there: the class block first, nulls written, and
// lines re-wrapped by the documentation, so one header follows references on its line and the
// Breakdown trailer runs over two lines. The document lost java/lang/Math's header line; the
// one below restores it with an invented address. Its trailers are the document's, which do
// not match these few records.
const std::string kSdk =
    "// Version: J2RE 6.0 IBM J9 2.5 Linux x86-32 build 20081016_024574_lHdRSr\n"            // 1
    "0x00436E90 [28] OBJ java/lang/String\n"                                                 // 2
    "0x415319D8 0x00436EB0\n"                                                                // 3
    "0x00436EB0 [44] OBJ [C\n"                                                               // 4
    "0x41530F20\n"                                                                           // 5
    "0x004380C0 [108] OBJ [Ljava/util/Hashtable$Entry;\n"                                    // 6
    "0x4158CD80 0x00000000 0x00000000 0x00000000 0x00000000 0x00421660 0x004381C0 \n"        // 7
    "0x00438130 0x00438160 0x00421618 0x00421690 0x00000000 0x00000000 0x00000000 \n"        // 8
    "0x00438178 0x004381A8 0x004381F0 0x00000000 0x004381D8 0x00000000 0x00438190 \n"        // 9
    "0x00000000 0x004216A8 0x00000000 0x00438130 [24] OBJ java/util/Hashtable$Entry\n"       // 10
    "0x4158CB88 0x004219B8 0x004341F0 0x00000000 \n"                                         // 11
    "0x41532E68 [32] CLS java/lang/Runnable\n"                                               // 12
    "0x4152F018 0x41532E68 0x00000000 0x00000000 0x00499790\n"                               // 13
    "0x4158A1B0 [168] CLS java/lang/Math\n"                                                  // 14 (restored)
    "0x00000000 0x004206A8 0x00420720 0x00420740 0x00420760 0x00420780 0x004207B0 \n"        // 15
    "0x00421208 0x00421270 0x00421290 0x004212B0 0x004213C8 0x00421458 0x00421478 \n"        // 16
    "0x00000000 0x41589DE0 0x00000000 0x4158B340 0x00000000 0x00000000 0x00000000 \n"        // 17
    "0x4158ACE8 0x00000000 0x4152F018 0x00000000 0x00000000 0x00000000 \n"                   // 18
    "// Breakdown - Classes: 321, Objects: 3718, ObjectArrays: 169, \n"                      // 19
    "PrimitiveArrays: 2141\n"                                                                // 20
    "// EOF:  Total 'Objects',Refs(null) : 6349,23240(7282)\n";                              // 21

// kSdk with trailers that match its records: 39 non-null tokens (class blocks included) and
// 24 nulls.
std::string sdk_consistent() {
    std::string text = kSdk.substr(0, kSdk.find("// Breakdown"));
    return text + "// Breakdown - Classes: 2, Objects: 2, ObjectArrays: 1, PrimitiveArrays: 1\n"
                  "// EOF:  Total 'Objects',Refs(null) : 6,63(24)\n";
}

Bytes view_of(const std::string& text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

struct Decoded {
    ClassicHeader header;
    std::vector<ClassicBlock> blocks;
    ClassicRecords records;  // all blocks, references renumbered, type names merged
    ClassicTotals totals;
};

void append(ClassicRecords& all, ClassicRecords&& part) {
    std::uint64_t shift = all.refs.size();
    for (ClassicObject object : part.objects) {
        object.first_ref += shift;
        const std::string& name = part.type_names[object.type];
        auto found = std::find(all.type_names.begin(), all.type_names.end(), name);
        object.type = static_cast<std::uint32_t>(found - all.type_names.begin());
        if (found == all.type_names.end()) all.type_names.push_back(name);
        all.objects.push_back(object);
    }
    for (ClassicClass cls : part.classes) {
        cls.first_ref += shift;
        all.classes.push_back(std::move(cls));
    }
    all.refs.insert(all.refs.end(), part.refs.begin(), part.refs.end());
    all.counts += part.counts;
    all.sdk_objects_without_class_block += part.sdk_objects_without_class_block;
}

// The whole flow: header, split, decode, gather, check; the first error of any step.
std::variant<Decoded, DecodeError> run(Bytes file, std::uint64_t target_bytes,
                                       std::vector<std::string>* warnings = nullptr) {
    Decoded out;
    auto header = read_classic_header(file);
    if (auto* error = std::get_if<DecodeError>(&header)) return *error;
    out.header = std::get<ClassicHeader>(header);
    std::vector<std::uint8_t> ascii;
    if (out.header.ebcdic) {
        ascii = classic_ebcdic_to_ascii(file);
        file = ascii;
    }
    auto blocks = split_classic_blocks(file, out.header, target_bytes);
    if (auto* error = std::get_if<DecodeError>(&blocks)) return *error;
    out.blocks = std::get<std::vector<ClassicBlock>>(blocks);
    for (const ClassicBlock& block : out.blocks) {
        auto records = decode_classic_block(file, out.header, block);
        if (auto* error = std::get_if<DecodeError>(&records)) return *error;
        auto& part = std::get<ClassicRecords>(records);
        if (auto error = add_classic_block(out.totals, part)) return *error;
        append(out.records, std::move(part));
    }
    auto checked = check_classic_trailers(out.header, out.totals, file.size());
    if (auto* error = std::get_if<DecodeError>(&checked)) return *error;
    if (warnings) *warnings = std::get<std::vector<std::string>>(checked);
    return out;
}

auto key(const ClassicObject& o) {
    return std::tie(o.address, o.size_bytes, o.class_block, o.first_ref, o.ref_count, o.file_offset, o.line);
}
auto key(const ClassicClass& c) {
    return std::tie(c.address, c.size_bytes, c.name, c.first_ref, c.ref_count, c.file_offset, c.line);
}

void check_same(const Decoded& a, const Decoded& b) {
    REQUIRE(a.records.objects.size() == b.records.objects.size());
    for (std::size_t i = 0; i < a.records.objects.size(); ++i) {
        CAPTURE(i);
        CHECK(key(a.records.objects[i]) == key(b.records.objects[i]));
        CHECK(a.records.type_names[a.records.objects[i].type] == b.records.type_names[b.records.objects[i].type]);
    }
    REQUIRE(a.records.classes.size() == b.records.classes.size());
    for (std::size_t i = 0; i < a.records.classes.size(); ++i) {
        CAPTURE(i);
        CHECK(key(a.records.classes[i]) == key(b.records.classes[i]));
    }
    CHECK(a.records.refs == b.records.refs);
    auto counts = [](const ClassicCounts& c) {
        return std::tie(c.classes, c.objects, c.object_arrays, c.primitive_arrays, c.refs, c.null_refs);
    };
    CHECK(counts(a.totals.counts) == counts(b.totals.counts));
    REQUIRE(a.totals.eof.has_value() == b.totals.eof.has_value());
    if (a.totals.eof) CHECK(a.totals.eof->line == b.totals.eof->line);
}

// Decodes as one block and as one block per record; both must agree.
Decoded decode(const std::string& text, std::vector<std::string>* warnings = nullptr) {
    Decoded whole = expect_ok<Decoded>(run(view_of(text), 1 << 20, warnings));
    Decoded each = expect_ok<Decoded>(run(view_of(text), 1));
    check_same(whole, each);
    return whole;
}

std::vector<ObjectId> refs_of(const ClassicRecords& records, std::uint64_t first, std::uint32_t count) {
    auto begin = records.refs.begin() + static_cast<std::ptrdiff_t>(first);
    return {begin, begin + count};
}
std::vector<ObjectId> refs_of(const ClassicRecords& records, const ClassicObject& o) {
    return refs_of(records, o.first_ref, o.ref_count);
}
std::vector<ObjectId> refs_of(const ClassicRecords& records, const ClassicClass& c) {
    return refs_of(records, c.first_ref, c.ref_count);
}
const std::string& type_of(const ClassicRecords& records, const ClassicObject& o) { return records.type_names[o.type]; }

// The one error of decoding `text` as a single block.
DecodeError decode_error(const std::string& text) { return expect_error(run(view_of(text), 1 << 20)); }

// ASCII to IBM-1047, inverting the decoder's own table; '\n' becomes NL (0x15), as on z/OS.
std::vector<std::uint8_t> to_ebcdic(const std::string& text, std::uint8_t newline = 0x15) {
    std::vector<std::uint8_t> all(256);
    for (int i = 0; i < 256; ++i) all[i] = static_cast<std::uint8_t>(i);
    std::vector<std::uint8_t> ascii = classic_ebcdic_to_ascii(all);
    std::uint8_t inverse[256] = {};
    for (int e = 0; e < 256; ++e) inverse[ascii[e]] = static_cast<std::uint8_t>(e);
    inverse[static_cast<std::uint8_t>('\n')] = newline;
    std::vector<std::uint8_t> out;
    for (char c : text) out.push_back(inverse[static_cast<std::uint8_t>(c)]);
    return out;
}

}  // namespace

// ---- header ---------------------------------------------------------------------------------

TEST_CASE("classic: the header gives the version, the body offset, the word size and the writer") {
    ClassicHeader openj9 = expect_ok<ClassicHeader>(read_classic_header(view_of(kOpenJ9)));
    CHECK(openj9.version == "JRE 1.8.0 Linux amd64-64 (build 1.8.0_232-b09)");
    CHECK(openj9.body_offset == 0x3b);
    CHECK(openj9.body_line == 2);
    CHECK(openj9.word_bytes == 8);
    CHECK(openj9.variant == ClassicHeader::Variant::openj9);
    CHECK_FALSE(openj9.ebcdic);
    CHECK_FALSE(openj9.crlf);

    ClassicHeader every = expect_ok<ClassicHeader>(read_classic_header(view_of(kEveryKind)));
    CHECK(every.word_bytes == 4);
    CHECK(every.variant == ClassicHeader::Variant::openj9);

    ClassicHeader sdk = expect_ok<ClassicHeader>(read_classic_header(view_of(kSdk)));
    CHECK(sdk.version == "J2RE 6.0 IBM J9 2.5 Linux x86-32 build 20081016_024574_lHdRSr");
    CHECK(sdk.word_bytes == 4);
    CHECK(sdk.variant == ClassicHeader::Variant::sdk);
}

TEST_CASE("classic: a dump without records reads its trailers, and a UTF-8 byte order mark is skipped") {
    const std::string empty = "\xEF\xBB\xBF// Version: JRE 17\n"
                              "// Breakdown - Classes: 0, Objects: 0, ObjectArrays: 0, PrimitiveArrays: 0\n"
                              "// EOF:  Total 'Objects',Refs(null) : 0,0(0)\n";
    std::vector<std::string> warnings;
    Decoded d = decode(empty, &warnings);
    CHECK(d.header.version == "JRE 17");
    CHECK(d.header.body_offset == 22);
    CHECK(d.header.word_bytes == 8);  // nothing to tell: the default
    CHECK(d.records.objects.empty());
    CHECK(d.records.classes.empty());
    CHECK(warnings.empty());
}

TEST_CASE("classic: a file that does not open with // Version: is refused at offset 0") {
    DecodeError error = expect_error(read_classic_header(view_of("0x00000000 [16] OBJ x\n")));
    CHECK(error.offset == 0);
    CHECK(error.record == "classic header");
    CHECK(error.message.find("// Version:") != std::string::npos);
    std::string endless = "// Version: " + std::string(2 << 20, 'x');
    error = expect_error(read_classic_header(view_of(endless)));
    CHECK(error.message.find("does not end within") != std::string::npos);
}

// ---- records --------------------------------------------------------------------------------

TEST_CASE("classic: the OpenJ9 example reads every record with its references and trailers") {
    std::vector<std::string> warnings;
    Decoded d = decode(kOpenJ9, &warnings);
    const ClassicRecords& r = d.records;
    REQUIRE(r.objects.size() == 3);
    CHECK(r.objects[0].address == 0xE0000AF0);
    CHECK(r.objects[0].size_bytes == 16);
    CHECK(type_of(r, r.objects[0]) == "java/lang/String");
    CHECK(r.objects[0].class_block == 0);
    CHECK(r.objects[0].file_offset == 0x3b);
    CHECK(r.objects[0].line == 2);
    CHECK(refs_of(r, r.objects[0]) == std::vector<ObjectId>{0xE0000B00});
    CHECK(type_of(r, r.objects[1]) == "[C");
    CHECK(r.objects[1].ref_count == 0);
    CHECK(r.objects[1].line == 4);
    CHECK(type_of(r, r.objects[2]) == "[Ljava/lang/String;");
    CHECK(refs_of(r, r.objects[2]) == std::vector<ObjectId>{0xE0005D78, 0xE0005D50, 0xE0005D28, 0xE0005D00});
    REQUIRE(r.classes.size() == 1);
    CHECK(r.classes[0].address == 0xE00174F0);
    CHECK(r.classes[0].size_bytes == 80);
    CHECK(r.classes[0].name == "java/util/Date");
    CHECK(r.classes[0].line == 8);
    CHECK(refs_of(r, r.classes[0]) == std::vector<ObjectId>{0xFFF1BB60, 0xFFF29630});
    REQUIRE(d.totals.breakdown);
    CHECK(d.totals.breakdown->line == 10);
    REQUIRE(d.totals.eof);
    CHECK(d.totals.eof->total_objects == 4);
    CHECK(d.totals.eof->total_refs == 9);
    CHECK(d.totals.eof->null_refs == 2);
    CHECK(d.totals.eof->line == 11);
    CHECK(warnings.empty());
}

TEST_CASE("classic: every record kind is counted by kind, a nested int array as an object array OpenJ9 counts apart") {
    std::vector<std::string> warnings;
    Decoded d = decode(kEveryKind, &warnings);  // its Breakdown counts "[[I" as OpenJ9 does: no warning
    const ClassicCounts& c = d.totals.counts;
    CHECK(c.classes == 3);
    CHECK(c.objects == 2);
    CHECK(c.object_arrays == 3);
    CHECK(c.primitive_arrays == 2);
    CHECK(c.nested_primitive_arrays == 1);
    CHECK(c.refs == 7);
    CHECK(c.null_refs == 0);
    CHECK(warnings.empty());
    const ClassicRecords& r = d.records;
    REQUIRE(r.objects.size() == 7);
    CHECK(refs_of(r, r.objects[1]) == std::vector<ObjectId>{0x10000200, 0x10000200});  // repeats are kept
    CHECK(type_of(r, r.objects[3]) == "[[I");
    REQUIRE(r.classes.size() == 3);
    CHECK(r.classes[1].name == "[I");
    CHECK(r.classes[2].name == "int");
    CHECK(r.classes[2].ref_count == 0);
    CHECK(r.classes[2].line == 20);
}

TEST_CASE("classic: arrays of primitive arrays are object arrays, and a Breakdown that counts them so is no warning") {
    // As heapgraph's writer (and the summary) count: "[[I" and "[[B" are arrays of references.
    const std::string text =
        "// Version: test\n"
        "0x10000000 [24] OBJ [[I\n"                                                     // 2
        "\t0x10000100 \n"
        "0x10000100 [24] OBJ [I\n"                                                      // 4
        "\t\n"
        "0x10000200 [16] OBJ [[B\n"                                                     // 6
        "\t\n"
        "0x10000300 [16] OBJ [[[J\n"                                                    // 8
        "\t\n"
        "// Breakdown - Classes: 0, Objects: 0, ObjectArrays: 3, PrimitiveArrays: 1\n"
        "// EOF:  Total 'Objects',Refs(null) : 4,1(0)\n";
    std::vector<std::string> warnings;
    Decoded d = decode(text, &warnings);
    CHECK(d.totals.counts.object_arrays == 3);
    CHECK(d.totals.counts.primitive_arrays == 1);
    CHECK(warnings.empty());
    // OpenJ9 counts all three by their leaf type: no warning either.
    decode(replace(text, "ObjectArrays: 3, PrimitiveArrays: 1", "ObjectArrays: 0, PrimitiveArrays: 4"), &warnings);
    CHECK(warnings.empty());
    // Neither way: the warning gives the counts by kind, as the summary does.
    decode(replace(text, "ObjectArrays: 3, PrimitiveArrays: 1", "ObjectArrays: 1, PrimitiveArrays: 3"), &warnings);
    CHECK(warnings == std::vector<std::string>{"// Breakdown says 1 object arrays, the file has 3",
                                               "// Breakdown says 3 primitive arrays, the file has 1"});
    CHECK(classic_type_kind("[") == ObjectKind::object_array);
    CHECK(classic_type_kind("[Q") == ObjectKind::object_array);
    CHECK(classic_type_kind("[J") == ObjectKind::primitive_array);
    CHECK(classic_type_kind("java/lang/Object") == ObjectKind::instance);
}

TEST_CASE("classic: the IBM SDK example reads class blocks, nulls and a header after references on its line") {
    std::vector<std::string> warnings;
    Decoded d = decode(kSdk, &warnings);
    const ClassicRecords& r = d.records;
    REQUIRE(r.objects.size() == 4);
    CHECK(r.objects[0].class_block == 0x415319D8);
    CHECK(refs_of(r, r.objects[0]) == std::vector<ObjectId>{0x00436EB0});
    CHECK(r.objects[1].class_block == 0x41530F20);
    CHECK(r.objects[1].ref_count == 0);
    CHECK(r.objects[2].class_block == 0x4158CD80);
    CHECK(refs_of(r, r.objects[2]) ==
          std::vector<ObjectId>{0x00421660, 0x004381C0, 0x00438130, 0x00438160, 0x00421618, 0x00421690, 0x00438178,
                                0x004381A8, 0x004381F0, 0x004381D8, 0x00438190, 0x004216A8});
    // The header that follows references on line 10.
    CHECK(r.objects[3].address == 0x00438130);
    CHECK(r.objects[3].size_bytes == 24);
    CHECK(r.objects[3].line == 10);
    CHECK(r.objects[3].file_offset == kSdk.find("0x00438130 [24]"));
    CHECK(type_of(r, r.objects[3]) == "java/util/Hashtable$Entry");
    CHECK(refs_of(r, r.objects[3]) == std::vector<ObjectId>{0x004219B8, 0x004341F0});
    REQUIRE(r.classes.size() == 2);
    CHECK(refs_of(r, r.classes[0]) == std::vector<ObjectId>{0x4152F018, 0x41532E68, 0x00499790});
    CHECK(r.classes[1].name == "java/lang/Math");
    CHECK(r.classes[1].ref_count == 17);
    CHECK(d.totals.counts.refs == 39);
    CHECK(d.totals.counts.null_refs == 24);
    CHECK(r.sdk_objects_without_class_block == 0);
    // The Breakdown runs over two lines.
    REQUIRE(d.totals.breakdown);
    CHECK(d.totals.breakdown->primitive_arrays == 2141);
    CHECK(d.totals.eof->line == 21);
}

TEST_CASE("classic: trailer numbers that disagree with the records are warnings naming both numbers") {
    std::vector<std::string> warnings;
    decode(kSdk, &warnings);
    std::vector<std::string> expected = {
        "// Breakdown says 321 classes, the file has 2",
        "// Breakdown says 3718 objects, the file has 2",
        "// Breakdown says 169 object arrays, the file has 1",
        "// Breakdown says 2141 primitive arrays, the file has 1",
        "// EOF says 6349 objects and classes, the file has 6",
        "// EOF says 15958 non-null references, the file lists 39",
        "// EOF says 7282 null references, the file lists 24",
    };
    CHECK(warnings == expected);
    decode(sdk_consistent(), &warnings);
    CHECK(warnings.empty());
    decode(replace(kOpenJ9, "// Breakdown - Classes: 1, Objects: 1, ObjectArrays: 1, PrimitiveArrays: 1\n", ""),
           &warnings);
    CHECK(warnings == std::vector<std::string>{"no // Breakdown trailer before // EOF"});
    decode(replace(kOpenJ9, "4,9(2)", "4,9(12)"), &warnings);
    CHECK(warnings == std::vector<std::string>{"// EOF says 12 of its 9 references are null"});
}

TEST_CASE("classic: an SDK object without a class block, or with a null one, is counted") {
    std::vector<std::string> warnings;
    Decoded d = decode(replace(sdk_consistent(), "0x41530F20\n", ""), &warnings);
    CHECK(d.records.sdk_objects_without_class_block == 1);
    CHECK(d.records.objects[1].class_block == 0);
    CHECK(warnings == std::vector<std::string>{"// EOF says 39 non-null references, the file lists 38"});
    d = decode(replace(sdk_consistent(), "0x41530F20\n", "0x00000000\n"), &warnings);
    CHECK(d.records.sdk_objects_without_class_block == 1);
    CHECK(d.totals.counts.null_refs == 25);
}

TEST_CASE("classic: a record's references may fill one very long line") {
    std::string refs;
    for (int i = 0; i < 200000; ++i) refs += "0x0000000010000000 ";
    std::string text = "// Version: JRE 11\n"
                       "0x0000000010000000 [800016] OBJ [Ljava/lang/Object;\n\t" + refs + "\n"
                       "// Breakdown - Classes: 0, Objects: 0, ObjectArrays: 1, PrimitiveArrays: 0\n"
                       "// EOF:  Total 'Objects',Refs(null) : 1,200000(0)\n";
    std::vector<std::string> warnings;
    Decoded d = decode(text, &warnings);
    REQUIRE(d.records.objects.size() == 1);
    CHECK(d.records.objects[0].ref_count == 200000);
    CHECK(warnings.empty());
}

TEST_CASE("classic: Windows line ends read the same as Unix ones") {
    std::string crlf;
    for (char c : kOpenJ9) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    std::vector<std::string> warnings;
    Decoded unix_ = decode(kOpenJ9);
    Decoded windows = decode(crlf, &warnings);
    CHECK(windows.header.crlf);
    CHECK(windows.header.version == unix_.header.version);
    CHECK(windows.records.refs == unix_.records.refs);
    REQUIRE(windows.records.objects.size() == unix_.records.objects.size());
    for (std::size_t i = 0; i < unix_.records.objects.size(); ++i) {
        CHECK(windows.records.objects[i].address == unix_.records.objects[i].address);
        CHECK(windows.records.objects[i].line == unix_.records.objects[i].line);
    }
    CHECK(windows.records.classes[0].name == "java/util/Date");
    CHECK(warnings.empty());
}

// ---- EBCDIC ---------------------------------------------------------------------------------

TEST_CASE("classic: the IBM-1047 table maps the code points the dumps use") {
    struct Point {
        std::uint8_t ebcdic;
        char ascii;
    };
    // From the IBM-1047 code page chart.
    for (Point p : {Point{0xC1, 'A'}, Point{0xE9, 'Z'}, Point{0x81, 'a'}, Point{0xA9, 'z'}, Point{0xF0, '0'},
                    Point{0xF9, '9'}, Point{0x61, '/'}, Point{0x40, ' '}, Point{0xAD, '['}, Point{0xBD, ']'},
                    Point{0x15, '\n'}, Point{0x25, '\n'}, Point{0x0D, '\r'}, Point{0x05, '\t'}, Point{0x7A, ':'},
                    Point{0x5B, '$'}, Point{0x5E, ';'}, Point{0x7D, '\''}, Point{0x4D, '('}, Point{0x5D, ')'},
                    Point{0x6B, ','}, Point{0x60, '-'}, Point{0x4B, '.'}, Point{0xE7, 'X'}, Point{0xA7, 'x'}}) {
        CAPTURE(int(p.ebcdic));
        std::uint8_t in[1] = {p.ebcdic};
        CHECK(classic_ebcdic_to_ascii(in)[0] == static_cast<std::uint8_t>(p.ascii));
    }
}

TEST_CASE("classic: the IBM-1047 table agrees with iconv where iconv is installed") {
    std::string in_path = heapgraph::test::temp_dir() + "/classic-1047.bin";
    {
        std::ofstream out(in_path, std::ios::binary);
        for (int i = 0; i < 256; ++i) out.put(static_cast<char>(i));
    }
    std::string command = "iconv -f IBM1047 -t ISO-8859-1 " + in_path + " 2>/dev/null";
    std::string latin1;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buffer[512];
        std::size_t n = 0;
        while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) latin1.append(buffer, n);
        ::pclose(pipe);
    }
    if (latin1.size() != 256) {
        MESSAGE("iconv with IBM1047 is not available: the table is checked by code points only");
        return;
    }
    std::vector<std::uint8_t> all(256);
    for (int i = 0; i < 256; ++i) all[i] = static_cast<std::uint8_t>(i);
    std::vector<std::uint8_t> ours = classic_ebcdic_to_ascii(all);
    for (int i = 0; i < 256; ++i) {
        CAPTURE(i);
        if (i == 0x15) continue;  // NL: iconv gives U+0085, we give '\n'
        CHECK(ours[i] == static_cast<std::uint8_t>(latin1[i]));
    }
}

TEST_CASE("classic: an EBCDIC dump decodes like its ASCII original, with NL or LF line ends") {
    std::uint8_t newline = 0x15;
    SUBCASE("NL") { newline = 0x15; }
    SUBCASE("LF") { newline = 0x25; }
    std::vector<std::uint8_t> ebcdic = to_ebcdic(kSdk, newline);
    CHECK(detect_format(ebcdic) == DumpFormat::classic);
    Decoded ascii = decode(kSdk);
    Decoded d = expect_ok<Decoded>(run(ebcdic, 1 << 20));
    CHECK(d.header.ebcdic);
    CHECK(d.header.version == ascii.header.version);
    CHECK(d.header.variant == ClassicHeader::Variant::sdk);
    check_same(d, ascii);
    check_same(expect_ok<Decoded>(run(ebcdic, 1)), ascii);
    CHECK(d.records.type_names == ascii.records.type_names);  // '$', '[' and ';' survive
    CHECK(d.records.classes[1].name == "java/lang/Math");
}

TEST_CASE("classic: EBCDIC bytes handed to the splitter or the decoder untranslated are refused") {
    std::vector<std::uint8_t> ebcdic = to_ebcdic(kOpenJ9);
    ClassicHeader header = expect_ok<ClassicHeader>(read_classic_header(ebcdic));
    DecodeError error = expect_error(split_classic_blocks(ebcdic, header, 64));
    CHECK(error.message.find("EBCDIC") != std::string::npos);
    error = expect_error(decode_classic_block(ebcdic, header, {header.body_offset, ebcdic.size(), 2}));
    CHECK(error.message.find("EBCDIC") != std::string::npos);
}

// ---- blocks ---------------------------------------------------------------------------------

TEST_CASE("classic: blocks start at record or trailer lines and know their first line") {
    Decoded d = expect_ok<Decoded>(run(view_of(kOpenJ9), 1));
    std::vector<std::uint64_t> lines;
    for (const ClassicBlock& block : d.blocks) {
        lines.push_back(block.first_line);
        std::string_view start(kOpenJ9.data() + block.begin, 2);
        CHECK((start == "0x" || start == "//"));
    }
    CHECK(lines == std::vector<std::uint64_t>{2, 4, 6, 8, 10, 11});
    CHECK(d.blocks.back().end == kOpenJ9.size());
    // A block never cuts the SDK example inside its Breakdown trailer.
    Decoded sdk = expect_ok<Decoded>(run(view_of(kSdk), 1));
    // Lines 2, 4, 6 (with the header on line 10), 12, 14, then Breakdown (lines 19-20) and EOF.
    CHECK(sdk.blocks.size() == 7);
    CHECK(sdk.blocks[5].first_line == 19);
}

TEST_CASE("classic: splitting at any target size gives the same records as one block") {
    for (const std::string* text : {&kOpenJ9, &kEveryKind, &kSdk}) {
        Decoded whole = decode(*text);
        for (std::uint64_t target = 0; target <= text->size() + 1; target += 7) {
            CAPTURE(target);
            Decoded split = expect_ok<Decoded>(run(view_of(*text), target));
            check_same(split, whole);
        }
    }
}

TEST_CASE("classic: an empty body gives no blocks, and the missing // EOF says so") {
    const std::string text = "// Version: JRE 17\n";
    ClassicHeader header = expect_ok<ClassicHeader>(read_classic_header(view_of(text)));
    CHECK(expect_ok<std::vector<ClassicBlock>>(split_classic_blocks(view_of(text), header, 64)).empty());
    DecodeError error = decode_error(text);
    CHECK(error.offset == text.size());
    CHECK(error.record == "classic // EOF trailer");
    CHECK(error.message == "is missing: the dump ends at 0x00000013 right after the version line, before any record");
}

// ---- errors ---------------------------------------------------------------------------------

TEST_CASE("classic: a dump without // EOF names where it ends and the last whole item") {
    std::string text = kOpenJ9.substr(0, kOpenJ9.find("// Breakdown"));
    DecodeError error = decode_error(text);
    CHECK(error.offset == text.size());
    CHECK(error.message == "is missing: the dump ends at 0x0000016f after the CLS record at line 8 (0x0000011c), "
                           "whose references may be cut short");
    text = kOpenJ9.substr(0, kOpenJ9.find("// EOF"));
    CHECK(decode_error(text).message.find("after the // Breakdown trailer at line 10") != std::string::npos);
}

TEST_CASE("classic: an error in the middle names its line and offset, and the blocks around it decode") {
    const std::string bad = replace(kEveryKind, "\t0x10000400 \n", "\t0x1000040G \n");
    std::uint64_t offset = bad.find("0x1000040G");
    DecodeError error = decode_error(bad);
    CHECK(error.offset == offset);
    CHECK(error.record == "classic OBJ record");
    CHECK(error.message == "line 9: expected a reference of 0x and 8 hex digits, found \"0x1000040G\"");

    ClassicHeader header = expect_ok<ClassicHeader>(read_classic_header(view_of(bad)));
    auto blocks = expect_ok<std::vector<ClassicBlock>>(split_classic_blocks(view_of(bad), header, 1));
    int good = 0, failed = 0;
    for (const ClassicBlock& block : blocks) {
        auto records = decode_classic_block(view_of(bad), header, block);
        if (auto* e = std::get_if<DecodeError>(&records)) {
            ++failed;
            CHECK(block.first_line == 8);
            CHECK(e->offset == offset);
            CHECK(e->message.starts_with("line 9: "));
        } else {
            ++good;
        }
    }
    CHECK(failed == 1);
    CHECK(good == 11);  // 3 records before, 6 after, and 2 trailers
}

TEST_CASE("classic: malformed records and trailers name the line, the offset and what was found") {
    struct Case {
        std::string from, to;  // a change to kEveryKind
        std::string at;        // the error's offset is where this text (last) occurs
        std::string record, message;
    };
    const std::string huge_name(70000, 'x');
    const std::vector<Case> cases = {
        {"0x10000300 [16]", "0x0000000010000300 [16]", "0x0000000010000300", "classic record",
         "line 8: expected an address of 0x and 8 hex digits, found \"0x0000000010000300\""},
        {"[16] OBJ [[I", "[99999999999999999999] OBJ [[I", "[999", "classic record",
         "line 8: expected a size of 1 to 20 decimal digits below 2^64 in [ ], found \"[99999999999999999999]\""},
        {"[16] OBJ [[I", "[-16] OBJ [[I", "[-16]", "classic record",
         "line 8: expected a size of 1 to 20 decimal digits below 2^64 in [ ], found \"[-16]\""},
        {"[16] OBJ [[I", "[16 OBJ [[I", "[16 ", "classic record",
         "line 8: expected the size in bytes as [decimal] after the address, found \"[16\""},
        {"0x10000000 [24]", "0x10000000\n[24]", "\n[24]", "classic record",
         "line 2: expected the size in bytes as [decimal] after the address, found the end of the line"},
        // Not first, an address alone on its line is one more reference of the record before.
        {"0x10000300 [16] OBJ [[I\n", "0x10000300\n[16] OBJ [[I\n", "[16] OBJ [[I", "classic body",
         "line 9: expected a reference, a record or a trailer (//), found \"[16]\""},
        {"[16] OBJ [[I", "[16] ARR [[I", "ARR", "classic record",
         "line 8: expected OBJ or CLS after the size, found \"ARR\""},
        {"[16] OBJ [[I\n", "[16] OBJ\n", "\n\t0x10000400", "classic OBJ record",
         "line 8: expected a type name, found the end of the line"},
        {"[16] OBJ [[I", "[16] OBJ " + huge_name, huge_name, "classic OBJ record",
         "line 8: type name of 70000 bytes is longer than any Java type name (65792 bytes)"},
        {"\t0x10000400 \n", "\t0x10000400 \0\n"s, "\0"s, "classic body",
         "line 9: expected a reference, a record or a trailer (//), found the byte 0x00"},
        {"\t0x10000400 \n", "\t0x10000400\r \n", "\r", "classic body",
         "line 9: expected a reference, a record or a trailer (//), found the byte 0x0d"},
        {"\t0x10000400 \n", "\t0x10000400 java/lang/Object\n", "java/lang/Object", "classic body",
         "line 9: expected a reference, a record or a trailer (//), found \"java/lang/Object\""},
        {"// Breakdown", "// Summary", "Summary", "classic trailer",
         "line 22: expected Breakdown or EOF: after //, found \"Summary\""},
        {"// Breakdown", "//Breakdown", "//Breakdown", "classic trailer",
         "line 22: expected \"//\" and a blank opening a trailer, found \"//Breakdown\""},
        {"Objects: 2,", "Objects: 2", "2 ObjectArrays", "classic // Breakdown trailer",
         "line 22: expected a decimal count and a comma, found \"2\""},
        {"PrimitiveArrays: 3", "PrimitiveArrays: 3x", "3x", "classic // Breakdown trailer",
         "line 22: expected a decimal count below 2^64, found \"3x\""},
        {"10,12(5)", "10,12", "10,12", "classic // EOF trailer",
         "line 23: expected <objects>,<references>(<nulls>) in decimal, found \"10,12\""},
        {"10,12(5)", "10,12(99999999999999999999)", "10,12(9", "classic // EOF trailer",
         "line 23: expected <objects>,<references>(<nulls>) in decimal, each below 2^64, found "
         "\"10,12(99999999999999999999)\""},
        {"10,12(5)\n", "10,12(5)\nextra\n", "extra", "classic body",
         "line 24: follows the // EOF trailer, which ends the dump: found \"extra\""},
        {"10,12(5)\n", "10,12(5)\n// EOF:  Total 'Objects',Refs(null) : 10,12(5)\n", "// EOF", "classic body",
         "line 24: follows the // EOF trailer, which ends the dump: found \"//\""},
    };
    for (const Case& c : cases) {
        CAPTURE(c.message);
        std::string text = replace(kEveryKind, c.from, c.to);
        DecodeError error = decode_error(text);
        CHECK(error.record == c.record);
        CHECK(error.message == c.message);
        CHECK(error.offset == text.rfind(c.at));
    }
}

TEST_CASE("classic: records after the trailers and trailers given twice are errors, also across blocks") {
    std::string after_breakdown = replace(kOpenJ9, "// EOF:", "0x00000000E0000C00 [16] OBJ x\n// EOF:");
    std::uint64_t record = after_breakdown.find("0x00000000E0000C00");
    for (std::uint64_t target : {std::uint64_t{1} << 20, std::uint64_t{1}}) {
        CAPTURE(target);
        DecodeError error = expect_error(run(view_of(after_breakdown), target));
        CHECK(error.offset == record);
        CHECK(error.message.starts_with("line 11: "));
        CHECK(error.message.find("follows the // Breakdown trailer") != std::string::npos);
    }
    std::string twice = replace(kOpenJ9, "// EOF:", "// Breakdown - Classes: 1, Objects: 1, ObjectArrays: 1, "
                                                   "PrimitiveArrays: 1\n// EOF:");
    for (std::uint64_t target : {std::uint64_t{1} << 20, std::uint64_t{1}}) {
        DecodeError error = expect_error(run(view_of(twice), target));
        CHECK(error.offset == twice.rfind("// Breakdown"));
        CHECK(error.message.find("line 11: ") != std::string::npos);
        CHECK(error.message.find("first at line 10") != std::string::npos);
    }
    std::string after_eof = kOpenJ9 + "0x00000000E0000C00 [16] OBJ x\n";
    DecodeError error = expect_error(run(view_of(after_eof), 1));
    CHECK(error.offset == kOpenJ9.size());
    CHECK(error.message == "line 12: follows the // EOF trailer at line 11, which ends the dump");
}

TEST_CASE("classic: a dump cut at any byte gives an error at or before the cut, unless only its last newline is gone") {
    for (const std::string& text : {kOpenJ9, sdk_consistent()}) {
        std::uint64_t whole = text.size() - 1;  // all but the final '\n'
        for (std::uint64_t cut = 0; cut < text.size(); ++cut) {
            CAPTURE(cut);
            std::string part = text.substr(0, cut);
            for (std::uint64_t target : {std::uint64_t{1} << 20, std::uint64_t{1}}) {
                auto result = run(view_of(part), target);
                if (cut >= whole) {
                    CHECK(std::holds_alternative<Decoded>(result));
                    continue;
                }
                REQUIRE(std::holds_alternative<DecodeError>(result));
                const DecodeError& error = std::get<DecodeError>(result);
                CHECK(error.offset <= cut);
                CHECK_FALSE(error.message.empty());
            }
        }
    }
}

TEST_CASE("classic: random damage never crashes and every error points inside the file") {
    std::uint64_t state = 0x9E3779B97F4A7C15ULL;
    auto next = [&] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    const char alphabet[] = "0x[] \t\n\r/OBJCLS,()9AFf\0";
    int errors = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string text = round % 2 ? kEveryKind : kSdk;
        int changes = 1 + static_cast<int>(next() % 4);
        for (int i = 0; i < changes; ++i) {
            std::size_t at = 40 + next() % (text.size() - 40);
            text[at] = next() % 3 ? alphabet[next() % (sizeof alphabet - 1)] : static_cast<char>(next());
        }
        auto result = run(view_of(text), 1 + next() % 200);
        if (auto* error = std::get_if<DecodeError>(&result)) {
            ++errors;
            CHECK(error->offset <= text.size());
        }
    }
    CHECK(errors > 0);
}
