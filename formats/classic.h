// IBM classic text heapdump: a pure decoder (classic.cpp).
//
// Facts come from ../shared/specs/ibm-classic-heapdump.txt (IBM SDK 6, "sdk" variant),
// ../shared/specs/openj9-heapdump-phd-and-classic.md ("Classic Heap Dump format") and
// OpenJ9's writer, runtime/rasdump/heapdump_classic.c ("openj9" variant). The file is a
// "// Version: ..." line, then one record per object and per class, then two trailers:
//
//   0x00000000E0000AF0 [16] OBJ java/lang/String          record header: address, size, type
//   \t0x00000000E0000B00                                   its references (openj9: tab first)
//   0x00000000E00174F0 [80] CLS java/util/Date
//   \t0x00000000FFF1BB60 0x00000000FFF29630
//   // Breakdown - Classes: 1, Objects: 1, ObjectArrays: 0, PrimitiveArrays: 0
//   // EOF:  Total 'Objects',Refs(null) : 2,5(2)
//
// The body is read as a stream of blank-separated tokens: a record header's four tokens
// share one line, references may run over any number of lines, and a hex token followed on
// its line by "[" starts the next record. That reads both what the writers produce and the
// IBM SDK document's example, whose lines were re-wrapped by the documentation (a header
// there follows the previous record's references on the same line).
//
// Flow: read_classic_header() → split_classic_blocks() → decode_classic_block() on each
// block, in any order or in parallel → add_classic_block() in block order →
// check_classic_trailers(). z/OS writes the file in EBCDIC (IBM-1047): translate it once with
// classic_ebcdic_to_ascii() and hand the translation to the splitter and decoder. The
// translation is byte for byte, so its offsets are the file's offsets.
#pragma once

#include "common.h"

#include <cstdint>
#include <string_view>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace heapgraph {

struct ClassicHeader {
    // Which writer: sdk lists an object's class block as its first reference and writes null
    // references as 0x0...0; openj9 starts each reference line with a tab and omits nulls
    // and the class. Told apart by the line after the first record header: a tab means
    // openj9, a hex token sdk; with nothing to tell, openj9. A caller may override it.
    enum class Variant : std::uint8_t { sdk, openj9 };

    std::string version;             // after "// Version: ", as written
    std::uint64_t body_offset = 0;   // just after the version line's end of line
    std::uint64_t body_line = 2;     // line number (from 1) of body_offset
    bool ebcdic = false;             // IBM-1047: decode classic_ebcdic_to_ascii(file)
    bool crlf = false;               // the version line ends with "\r\n"
    // From the first record's address: writers pad every address to the pointer width, so
    // 8 hex digits mean 4-byte words and 16 mean 8. 8 when the body has no record.
    int word_bytes = 8;
    Variant variant = Variant::openj9;
};

std::variant<ClassicHeader, DecodeError> read_classic_header(Bytes file);

// Byte for byte IBM-1047 to ASCII (Latin-1 above 0x7F); both NL (0x15) and LF (0x25) become
// '\n'.
std::vector<std::uint8_t> classic_ebcdic_to_ascii(Bytes ebcdic);
// Whether `head` opens with "// Version:" in IBM-1047 (format detection asks too).
bool classic_is_ebcdic(Bytes head);

// Lines [begin, end) of the (ASCII) file that start with a record header or a trailer.
struct ClassicBlock {
    std::uint64_t begin = 0, end = 0;
    std::uint64_t first_line = 0;  // line number of `begin`, from 1
};

// Cuts the body into blocks of at least `target_bytes` (except the last), each starting at a
// line that opens a record ("0x<hex> [") or a trailer ("//"). A record is never cut: a block
// grows until such a line comes. An empty body gives no blocks.
std::variant<std::vector<ClassicBlock>, DecodeError> split_classic_blocks(Bytes file, const ClassicHeader& header,
                                                                          std::uint64_t target_bytes);
// The same one block at a time, for a reader that splits while others decode: the block that
// starts at `begin` (a record or trailer line, or the body's start) on line `first_line`,
// and the number of lines it holds (the next block's first line is first_line plus that).
// The caller checks `begin` against the file as split_classic_blocks does.
ClassicBlock next_classic_block(Bytes file, std::uint64_t begin, std::uint64_t first_line, std::uint64_t target_bytes);
std::uint64_t classic_lines_in(Bytes file, const ClassicBlock& block);

// --allow-truncated: how much of a dump that does not end with a whole "// EOF" line can be
// read: up to the start of its last record or trailer line (a cut may have taken that
// record's later reference lines, so it is dropped), or the body's start when it has none.
// file.size() when the dump is whole.
std::uint64_t classic_whole_records_end(Bytes file, const ClassicHeader& header);

struct ClassicObject {
    ObjectId address = 0;
    std::uint64_t size_bytes = 0;       // as written: the writer's size of the object
    std::uint32_t type = 0;             // into ClassicRecords::type_names
    ObjectId class_block = 0;           // sdk: the first reference (0 if none); openj9: 0
    std::uint64_t first_ref = 0;        // into ClassicRecords::refs
    std::uint32_t ref_count = 0;        // non-null references, class block excluded
    std::uint64_t file_offset = 0;      // of the address token
    std::uint64_t line = 0;
};
struct ClassicClass {
    ObjectId address = 0;               // sdk: the class block; openj9: the java/lang/Class object
    std::uint64_t size_bytes = 0;
    std::string name;                   // as written: java/lang/String, [I, [Ljava/lang/Object;
    std::uint64_t first_ref = 0;        // into ClassicRecords::refs
    std::uint32_t ref_count = 0;        // non-null: class fields, then statics (openj9)
    std::uint64_t file_offset = 0;
    std::uint64_t line = 0;
};

// The longest type name read: a class name (a constant-pool UTF8, so at most 65535 bytes) as
// an array type of up to 255 dimensions, "[[...[L<name>;". Writers must keep to it too.
constexpr std::size_t kClassicMaxTypeBytes = 65535 + 255 + 2;

// What an OBJ record's type makes it, for the loader and the counts alike: a type without a
// leading '[' is an instance, "[" and one primitive letter ("[I") a primitive array, and any
// other '[' type an object array ("[[I", "[Ljava/lang/String;", even "[").
ObjectKind classic_type_kind(std::string_view type);

// Records by kind, as classic_type_kind() has them, so "[[I" is an object array as in the
// summary. OpenJ9's writer counts it as a primitive array by its leaf type (heapdump_classic.c,
// printType): nested_primitive_arrays counts such arrays, so that "// Breakdown" is checked
// against either way of counting.
struct ClassicCounts {
    std::uint64_t classes = 0, objects = 0, object_arrays = 0, primitive_arrays = 0;
    std::uint64_t nested_primitive_arrays = 0;  // object arrays whose leaf type is primitive: "[[I"
    std::uint64_t refs = 0;       // non-null reference tokens, sdk class blocks included
    std::uint64_t null_refs = 0;  // reference tokens written as zero
};
ClassicCounts& operator+=(ClassicCounts& total, const ClassicCounts& part);

struct ClassicBreakdown {
    std::uint64_t classes = 0, objects = 0, object_arrays = 0, primitive_arrays = 0;
    std::uint64_t file_offset = 0, line = 0;
};
// "Refs" counts every reference slot the writer visited, nulls included; the nulls are in
// parentheses. openj9 writes only refs - nulls of them.
struct ClassicEof {
    std::uint64_t total_objects = 0, total_refs = 0, null_refs = 0;
    std::uint64_t file_offset = 0, line = 0;
};

// The last thing a block held, to say where a dump without "// EOF" stops.
struct ClassicLast {
    enum class Kind : std::uint8_t { nothing, object, class_record, breakdown, eof };
    Kind kind = Kind::nothing;
    std::uint64_t file_offset = 0, line = 0;
};

struct ClassicRecords {
    std::vector<ClassicObject> objects;
    std::vector<ClassicClass> classes;
    std::vector<ObjectId> refs;            // non-null only, in written order
    std::vector<std::string> type_names;   // OBJ types of this block, each once
    ClassicCounts counts;
    std::optional<ClassicBreakdown> breakdown;  // as seen in this block
    std::optional<ClassicEof> eof;
    ClassicLast last;
    std::uint64_t sdk_objects_without_class_block = 0;  // sdk OBJ records with no or a null first reference
};

// Decodes the records of one block (from split_classic_blocks, or any range that starts at
// a record or trailer and ends at one or at the end of the file). Errors name the line
// ("line 1234: ...") and point at the bad token.
std::variant<ClassicRecords, DecodeError> decode_classic_block(Bytes file, const ClassicHeader& header,
                                                               const ClassicBlock& block);

// What the blocks held, gathered in block order.
struct ClassicTotals {
    ClassicCounts counts;
    std::optional<ClassicBreakdown> breakdown;
    std::optional<ClassicEof> eof;
    ClassicLast last;
};
// Adds a block's counts and trailers; a record or a trailer after "// EOF", a record after
// "// Breakdown", or a trailer given twice is an error.
std::optional<DecodeError> add_classic_block(ClassicTotals& totals, const ClassicRecords& block);

// A dump without "// EOF" is cut short: that is an error naming where it ends and what the
// last whole item was. Otherwise returns warnings, one per trailer number that disagrees
// with the records ("// Breakdown says 321 classes, the file has 320"), and one for a
// missing "// Breakdown".
std::variant<std::vector<std::string>, DecodeError> check_classic_trailers(const ClassicHeader& header,
                                                                           const ClassicTotals& totals,
                                                                           std::uint64_t file_size);

}  // namespace heapgraph
