// IBM classic text heapdump decoder (layout in classic.h; facts from the two specs in
// ../shared/specs and OpenJ9's writer, runtime/rasdump/heapdump_classic.c).
//
// 1. read_classic_header() reads the "// Version:" line and looks at the first record to
//    learn the address width and which writer made the file.
// 2. split_classic_blocks() cuts the body at lines that open a record or a trailer, found with
//    memchr; it counts newlines between cuts only (std::count), so every block knows its first
//    line number without a second pass.
// 3. decode_classic_block() reads a block as blank-separated tokens (TokenCursor), one
//    function per item: record header, references, Breakdown trailer, EOF trailer.
// 4. add_classic_block() and check_classic_trailers() gather the blocks in order and compare
//    the trailers with what the records hold.
//
// Nothing here keeps a line in memory, so no line is too long to read; the limits are Java's
// and the writers' own: a type name is a class name (a u2 length) with up to 255 array
// dimensions around it, a record lists fewer than 2^32 references, and no object is larger
// than a long[] of 2^31 - 1 elements (kMaxJavaObjectBytes).
#include "formats.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace heapgraph {

namespace {

constexpr std::string_view kVersion = "// Version:";
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
// "// Version:" in IBM-1047, as format detection knows it.
constexpr std::uint8_t kEbcdicVersion[] = {0x61, 0x61, 0x40, 0xE5, 0x85, 0x99, 0xA2, 0x89, 0x96, 0x95, 0x7A};
// How far the header looks for the end of the version line and for the first record.
constexpr std::uint64_t kHeaderWindow = 1 << 20;
// Class names are constant-pool UTF8 entries, whose length is a u2; OpenJ9 writes an array of
// such a class as up to 255 '[' (the JVM's limit on dimensions), 'L', the name and ';'.
constexpr std::size_t kMaxNameBytes = kClassicMaxTypeBytes;

// IBM-1047 to ISO-8859-1, byte for byte (the code page is a permutation of Latin-1, as
// glibc's IBM1047 converter also has it), except that NL (0x15, Latin-1 0x85) becomes '\n':
// z/OS ends text lines with NL, and with LF (0x25) when converted from ASCII by a2e tables.
constexpr std::uint8_t kIbm1047[256] = {
    0x00, 0x01, 0x02, 0x03, 0x9C, 0x09, 0x86, 0x7F, 0x97, 0x8D, 0x8E, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,  // 0x00
    0x10, 0x11, 0x12, 0x13, 0x9D, 0x0A, 0x08, 0x87, 0x18, 0x19, 0x92, 0x8F, 0x1C, 0x1D, 0x1E, 0x1F,  // 0x10
    0x80, 0x81, 0x82, 0x83, 0x84, 0x0A, 0x17, 0x1B, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x05, 0x06, 0x07,  // 0x20
    0x90, 0x91, 0x16, 0x93, 0x94, 0x95, 0x96, 0x04, 0x98, 0x99, 0x9A, 0x9B, 0x14, 0x15, 0x9E, 0x1A,  // 0x30
    0x20, 0xA0, 0xE2, 0xE4, 0xE0, 0xE1, 0xE3, 0xE5, 0xE7, 0xF1, 0xA2, 0x2E, 0x3C, 0x28, 0x2B, 0x7C,  // 0x40
    0x26, 0xE9, 0xEA, 0xEB, 0xE8, 0xED, 0xEE, 0xEF, 0xEC, 0xDF, 0x21, 0x24, 0x2A, 0x29, 0x3B, 0x5E,  // 0x50
    0x2D, 0x2F, 0xC2, 0xC4, 0xC0, 0xC1, 0xC3, 0xC5, 0xC7, 0xD1, 0xA6, 0x2C, 0x25, 0x5F, 0x3E, 0x3F,  // 0x60
    0xF8, 0xC9, 0xCA, 0xCB, 0xC8, 0xCD, 0xCE, 0xCF, 0xCC, 0x60, 0x3A, 0x23, 0x40, 0x27, 0x3D, 0x22,  // 0x70
    0xD8, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0xAB, 0xBB, 0xF0, 0xFD, 0xFE, 0xB1,  // 0x80
    0xB0, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70, 0x71, 0x72, 0xAA, 0xBA, 0xE6, 0xB8, 0xC6, 0xA4,  // 0x90
    0xB5, 0x7E, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0xA1, 0xBF, 0xD0, 0x5B, 0xDE, 0xAE,  // 0xA0
    0xAC, 0xA3, 0xA5, 0xB7, 0xA9, 0xA7, 0xB6, 0xBC, 0xBD, 0xBE, 0xDD, 0xA8, 0xAF, 0x5D, 0xB4, 0xD7,  // 0xB0
    0x7B, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0xAD, 0xF4, 0xF6, 0xF2, 0xF3, 0xF5,  // 0xC0
    0x7D, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x4F, 0x50, 0x51, 0x52, 0xB9, 0xFB, 0xFC, 0xF9, 0xFA, 0xFF,  // 0xD0
    0x5C, 0xF7, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0xB2, 0xD4, 0xD6, 0xD2, 0xD3, 0xD5,  // 0xE0
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0xB3, 0xDB, 0xDC, 0xD9, 0xDA, 0x9F,  // 0xF0
};

int hex_value(std::uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Printable bytes and anything above 0x7F (Latin-1 or UTF-8 in names); blanks end a token.
bool is_token_byte(std::uint8_t c) { return c > 0x20 && c != 0x7F; }

// "0x" and exactly `digits` hex digits: writers pad every address to the pointer width.
std::optional<ObjectId> parse_address(std::string_view token, std::size_t digits) {
    if (token.size() != digits + 2 || token[0] != '0' || (token[1] != 'x' && token[1] != 'X')) return std::nullopt;
    ObjectId value = 0;
    for (char c : token.substr(2)) {
        int v = hex_value(static_cast<std::uint8_t>(c));
        if (v < 0) return std::nullopt;
        value = value << 4 | static_cast<ObjectId>(v);
    }
    return value;
}

// Unsigned decimal digits only; nullopt when empty, not all digits, or past 2^64 - 1.
std::optional<std::uint64_t> parse_decimal(std::string_view text) {
    if (text.empty() || text.size() > 20) return std::nullopt;
    std::uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
        if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    return value;
}

// A token shown in a message: quoted, at most 40 bytes, control bytes escaped.
std::string quote(std::string_view token) {
    std::string text = "\"";
    for (char c : token.substr(0, 40)) {
        auto byte = static_cast<std::uint8_t>(c);
        if (byte >= 0x20 && byte != 0x7F && byte != '"') {
            text += c;
        } else {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            text += escaped;
        }
    }
    return text + (token.size() > 40 ? "...\"" : "\"");
}

bool is_primitive_code(char c) { return std::string_view("ZCFDBSIJ").find(c) != std::string_view::npos; }

// Counts an OBJ of this type. "[[I" is an object array here, as in the summary; OpenJ9 counts
// it as a primitive array by its leaf type, so it is also counted apart for the trailer check.
void count_object(ClassicCounts& counts, std::string_view type) {
    switch (classic_type_kind(type)) {
        case ObjectKind::primitive_array: ++counts.primitive_arrays; break;
        case ObjectKind::object_array: {
            ++counts.object_arrays;
            std::size_t leaf = type.find_first_not_of('[');
            if (leaf != std::string_view::npos && leaf + 1 == type.size() && is_primitive_code(type[leaf]))
                ++counts.nested_primitive_arrays;
            break;
        }
        default: ++counts.objects; break;
    }
}

// ---- tokens ---------------------------------------------------------------------------------

// Reads blank-separated tokens of [pos, end), counting lines. '\r' is a blank only just before
// '\n' (or at the end), so Windows line ends read as Unix ones and a stray '\r' is an error.
class TokenCursor {
public:
    TokenCursor(Bytes file, std::uint64_t pos, std::uint64_t end, std::uint64_t line)
        : file_(file), pos_(pos), end_(end), line_(line) {}

    std::uint64_t pos() const { return pos_; }
    std::uint64_t line() const { return line_; }

    // Skips blanks and line ends; false at the end of the range.
    bool skip_blanks() {
        while (pos_ < end_) {
            std::uint8_t c = file_[pos_];
            if (c == '\n') ++line_;
            else if (c != ' ' && c != '\t' && !line_end_cr(pos_)) return true;
            ++pos_;
        }
        return false;
    }
    // Skips spaces and tabs; false when the line or the range ends first.
    bool skip_to_token_on_line() {
        while (pos_ < end_ && (file_[pos_] == ' ' || file_[pos_] == '\t')) ++pos_;
        return pos_ < end_ && file_[pos_] != '\n' && !line_end_cr(pos_);
    }
    // The token at the cursor, empty when the cursor is on a byte that is neither a blank nor
    // part of a token (a control byte).
    std::string_view peek() const {
        std::uint64_t p = pos_;
        while (p < end_ && is_token_byte(file_[p])) ++p;
        return {reinterpret_cast<const char*>(file_.data() + pos_), static_cast<std::size_t>(p - pos_)};
    }
    std::string_view take() {
        std::string_view token = peek();
        pos_ += token.size();
        return token;
    }
    void skip(std::string_view peeked) { pos_ += peeked.size(); }
    // Whether "[" follows `token` (at the cursor) on its line: the token opens a record.
    bool opens_record(std::string_view token) const {
        std::uint64_t p = pos_ + token.size();
        while (p < end_ && (file_[p] == ' ' || file_[p] == '\t')) ++p;
        return p < end_ && file_[p] == '[';
    }
    // What the cursor is on, for "expected X, found Y".
    std::string found() const {
        if (pos_ >= end_) return "the end of the data at " + hex_offset(end_);
        if (file_[pos_] == '\n' || line_end_cr(pos_)) return "the end of the line";
        std::string_view token = peek();
        if (token.empty()) {
            char text[32];
            std::snprintf(text, sizeof text, "the byte 0x%02x", file_[pos_]);
            return text;
        }
        return quote(token);
    }

private:
    bool line_end_cr(std::uint64_t p) const {
        return file_[p] == '\r' && (p + 1 == file_.size() || file_[p + 1] == '\n');
    }

    Bytes file_;
    std::uint64_t pos_, end_, line_;
};

// ---- records --------------------------------------------------------------------------------

const std::string kRecord = "classic record", kObjRecord = "classic OBJ record", kClsRecord = "classic CLS record";

class BlockDecoder {
public:
    BlockDecoder(Bytes file, const ClassicHeader& header, const ClassicBlock& block, ClassicRecords& out)
        : header_(header), in_(file, block.begin, block.end, block.first_line), out_(out),
          digits_(static_cast<std::size_t>(header.word_bytes) * 2) {}

    std::optional<DecodeError> run();

private:
    std::optional<DecodeError> record();
    struct Header {
        bool object = false;  // OBJ, else CLS
        ObjectId address = 0;
        std::uint64_t size = 0;
        std::string_view name;
    };
    std::optional<DecodeError> record_header(Header& header);
    std::optional<DecodeError> references(const std::string& record, bool class_block_first,
                                          ObjectId& class_block, std::uint32_t& count);
    std::optional<DecodeError> trailer();
    std::optional<DecodeError> breakdown(std::uint64_t offset, std::uint64_t line);
    std::optional<DecodeError> eof(std::uint64_t offset, std::uint64_t line);
    std::optional<DecodeError> counted(const std::string& record, std::string_view label, std::uint64_t& value,
                                       bool comma);
    std::optional<DecodeError> words(const std::string& record, std::initializer_list<std::string_view> expected);
    std::uint32_t intern(std::string_view name);

    // "line N: expected X, found Y" at the cursor.
    DecodeError expected(const std::string& record, const std::string& what) const {
        return at(in_.pos(), in_.line(), record, "expected " + what + ", found " + in_.found());
    }
    DecodeError at(std::uint64_t offset, std::uint64_t line, const std::string& record,
                   const std::string& message) const {
        return DecodeError{offset, record, "line " + std::to_string(line) + ": " + message};
    }
    std::string address_form() const { return "0x and " + std::to_string(digits_) + " hex digits"; }

    const ClassicHeader& header_;
    TokenCursor in_;
    ClassicRecords& out_;
    std::size_t digits_;
    std::unordered_map<std::string_view, std::uint32_t> type_index_;
};

std::optional<DecodeError> BlockDecoder::run() {
    while (in_.skip_blanks()) {
        std::string_view token = in_.peek();
        std::optional<DecodeError> error;
        if (out_.eof)
            error = at(in_.pos(), in_.line(), "classic body",
                       "follows the // EOF trailer, which ends the dump: found " + in_.found());
        else if (token.starts_with("0x") || token.starts_with("0X"))
            error = record();
        else if (token.starts_with("//"))
            error = trailer();
        else if (out_.last.kind == ClassicLast::Kind::object || out_.last.kind == ClassicLast::Kind::class_record)
            error = expected("classic body", "a reference, a record or a trailer (//)");
        else
            error = expected("classic body", "a record (0x<address> [size] OBJ|CLS type) or a trailer (//)");
        if (error) return error;
    }
    return std::nullopt;
}

std::optional<DecodeError> BlockDecoder::record() {
    std::uint64_t offset = in_.pos(), line = in_.line();
    if (out_.breakdown)
        return at(offset, line, kRecord, "follows the // Breakdown trailer: records come before the trailers");
    Header h;
    if (auto error = record_header(h)) return error;
    std::uint64_t first_ref = out_.refs.size();
    ObjectId class_block = 0;
    std::uint32_t count = 0;
    bool class_block_first = h.object && header_.variant == ClassicHeader::Variant::sdk;
    if (auto error = references(h.object ? kObjRecord : kClsRecord, class_block_first, class_block, count))
        return error;
    if (h.object) {
        out_.objects.push_back({h.address, h.size, intern(h.name), class_block, first_ref, count, offset, line});
        count_object(out_.counts, h.name);
        out_.last = {ClassicLast::Kind::object, offset, line};
    } else {
        out_.classes.push_back({h.address, h.size, std::string(h.name), first_ref, count, offset, line});
        ++out_.counts.classes;
        out_.last = {ClassicLast::Kind::class_record, offset, line};
    }
    return std::nullopt;
}

// "0x<address> [<size>] OBJ|CLS <type>", all on one line.
std::optional<DecodeError> BlockDecoder::record_header(Header& h) {
    auto address = parse_address(in_.peek(), digits_);
    if (!address) return expected(kRecord, "an address of " + address_form());
    h.address = *address;
    in_.take();
    std::string_view token;
    if (!in_.skip_to_token_on_line() || (token = in_.peek()).size() < 3 || token.front() != '[' ||
        token.back() != ']')
        return expected(kRecord, "the size in bytes as [decimal] after the address");
    auto bytes = parse_decimal(token.substr(1, token.size() - 2));
    if (!bytes) return expected(kRecord, "a size of 1 to 20 decimal digits below 2^64 in [ ]");
    h.size = *bytes;
    const std::uint64_t size_offset = in_.pos();
    in_.take();
    if (!in_.skip_to_token_on_line() || (in_.peek() != "OBJ" && in_.peek() != "CLS"))
        return expected(kRecord, "OBJ or CLS after the size");
    h.object = in_.take() == "OBJ";
    const std::string& record = h.object ? kObjRecord : kClsRecord;
    // No Java object is larger (formats.h); a larger size would also wrap the sums of sizes.
    if (h.size > kMaxJavaObjectBytes)
        return at(size_offset, in_.line(), record,
                  "size " + std::to_string(h.size) + " exceeds Java's maximum object size " +
                      std::to_string(kMaxJavaObjectBytes) + " (a long[] of 2^31 - 1 elements)");
    if (!in_.skip_to_token_on_line() || in_.peek().empty()) return expected(record, "a type name");
    h.name = in_.peek();
    if (h.name.size() > kMaxNameBytes)
        return at(in_.pos(), in_.line(), record,
                  "type name of " + std::to_string(h.name.size()) + " bytes is longer than any Java type name (" +
                      std::to_string(kMaxNameBytes) + " bytes)");
    in_.take();
    return std::nullopt;
}

// Hex tokens up to the next record header, trailer or end. Null references are counted, not
// kept. The sdk writer puts the class block first; it is kept apart from the references.
std::optional<DecodeError> BlockDecoder::references(const std::string& record, bool class_block_first,
                                                    ObjectId& class_block, std::uint32_t& count) {
    bool first = true;
    while (in_.skip_blanks()) {
        std::string_view token = in_.peek();
        if (!(token.starts_with("0x") || token.starts_with("0X")) || in_.opens_record(token)) break;
        auto ref = parse_address(token, digits_);
        if (!ref) return expected(record, "a reference of " + address_form());
        in_.skip(token);
        if (first && class_block_first) {
            class_block = *ref;
            ++(*ref ? out_.counts.refs : out_.counts.null_refs);
        } else if (*ref == 0) {
            ++out_.counts.null_refs;
        } else {
            if (count == UINT32_MAX)
                return expected(record, "fewer than 2^32 references in one record");
            out_.refs.push_back(*ref);
            ++out_.counts.refs;
            ++count;
        }
        first = false;
    }
    if (class_block_first && class_block == 0) ++out_.sdk_objects_without_class_block;
    return std::nullopt;
}

std::uint32_t BlockDecoder::intern(std::string_view name) {
    auto [it, added] = type_index_.try_emplace(name, static_cast<std::uint32_t>(out_.type_names.size()));
    if (added) out_.type_names.emplace_back(name);
    return it->second;
}

// ---- trailers -------------------------------------------------------------------------------

std::optional<DecodeError> BlockDecoder::trailer() {
    std::uint64_t offset = in_.pos(), line = in_.line();
    if (in_.peek() != "//") return expected("classic trailer", "\"//\" and a blank opening a trailer");
    in_.take();
    in_.skip_blanks();
    if (in_.peek() == "Breakdown") return breakdown(offset, line);
    if (in_.peek() == "EOF:") return eof(offset, line);
    return expected("classic trailer", "Breakdown or EOF: after //");
}

// Literal tokens, in order, across blanks and line ends.
std::optional<DecodeError> BlockDecoder::words(const std::string& record,
                                               std::initializer_list<std::string_view> expected_words) {
    for (std::string_view word : expected_words) {
        if (!in_.skip_blanks() || in_.peek() != word) return expected(record, quote(word));
        in_.take();
    }
    return std::nullopt;
}

// "<label> <decimal>," (the comma only when `comma`).
std::optional<DecodeError> BlockDecoder::counted(const std::string& record, std::string_view label,
                                                 std::uint64_t& value, bool comma) {
    if (auto error = words(record, {label})) return error;
    std::string what = comma ? "a decimal count and a comma" : "a decimal count";
    if (!in_.skip_blanks()) return expected(record, what);
    std::string_view token = in_.peek();
    if (comma && !token.ends_with(',')) return expected(record, what);
    auto number = parse_decimal(comma ? token.substr(0, token.size() - 1) : token);
    if (!number) return expected(record, what + " below 2^64");
    value = *number;
    in_.take();
    return std::nullopt;
}

// "// Breakdown - Classes: a, Objects: b, ObjectArrays: c, PrimitiveArrays: d"
std::optional<DecodeError> BlockDecoder::breakdown(std::uint64_t offset, std::uint64_t line) {
    const std::string record = "classic // Breakdown trailer";
    if (out_.breakdown)
        return at(offset, line, record, "is given twice (first at line " + std::to_string(out_.breakdown->line) + ")");
    ClassicBreakdown trailer{0, 0, 0, 0, offset, line};
    if (auto error = words(record, {"Breakdown", "-"})) return error;
    if (auto error = counted(record, "Classes:", trailer.classes, true)) return error;
    if (auto error = counted(record, "Objects:", trailer.objects, true)) return error;
    if (auto error = counted(record, "ObjectArrays:", trailer.object_arrays, true)) return error;
    if (auto error = counted(record, "PrimitiveArrays:", trailer.primitive_arrays, false)) return error;
    out_.breakdown = trailer;
    out_.last = {ClassicLast::Kind::breakdown, offset, line};
    return std::nullopt;
}

// "// EOF:  Total 'Objects',Refs(null) : <objects>,<refs>(<nulls>)"
std::optional<DecodeError> BlockDecoder::eof(std::uint64_t offset, std::uint64_t line) {
    const std::string record = "classic // EOF trailer";
    if (auto error = words(record, {"EOF:", "Total", "'Objects',Refs(null)", ":"})) return error;
    std::string what = "<objects>,<references>(<nulls>) in decimal";
    if (!in_.skip_blanks()) return expected(record, what);
    std::string_view token = in_.peek();
    std::size_t comma = token.find(','), open = token.find('(');
    if (comma == std::string_view::npos || open == std::string_view::npos || open < comma || !token.ends_with(')'))
        return expected(record, what);
    auto objects = parse_decimal(token.substr(0, comma));
    auto refs = parse_decimal(token.substr(comma + 1, open - comma - 1));
    auto nulls = parse_decimal(token.substr(open + 1, token.size() - open - 2));
    if (!objects || !refs || !nulls) return expected(record, what + ", each below 2^64");
    in_.take();
    out_.eof = ClassicEof{*objects, *refs, *nulls, offset, line};
    out_.last = {ClassicLast::Kind::eof, offset, line};
    return std::nullopt;
}

// ---- header ---------------------------------------------------------------------------------

// Whether a line starts with a record header: "0x<hex>", blanks, "[". A line that opens with
// a trailer or a record can start a block.
bool opens_record_line(Bytes line) {
    if (!starts_with(line, "0x") && !starts_with(line, "0X")) return false;
    std::uint64_t p = 2;
    while (p < line.size() && hex_value(line[p]) >= 0) ++p;
    if (p == 2) return false;
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
    return p < line.size() && line[p] == '[';
}

// The first line of the body that is not blank, within `text`; text.size() when none.
std::uint64_t first_filled_line(Bytes text, std::uint64_t pos) {
    while (pos < text.size()) {
        std::uint64_t end = pos;
        while (end < text.size() && text[end] != '\n' && (text[end] == ' ' || text[end] == '\t' || text[end] == '\r'))
            ++end;
        if (end < text.size() && text[end] != '\n') return pos;
        pos = end + 1;
    }
    return text.size();
}

// Word size from the first record's address; variant from the line after its header.
void sniff_body(Bytes text, ClassicHeader& header) {
    std::uint64_t pos = first_filled_line(text, header.body_offset);
    if (!starts_with(text.subspan(pos), "0x")) return;
    std::uint64_t digits = 0;
    while (pos + 2 + digits < text.size() && hex_value(text[pos + 2 + digits]) >= 0) ++digits;
    if (digits == 8) header.word_bytes = 4;
    if (digits == 16) header.word_bytes = 8;
    const std::uint8_t* end = static_cast<const std::uint8_t*>(
        std::memchr(text.data() + pos, '\n', text.size() - pos));
    if (!end) return;
    Bytes next = text.subspan(static_cast<std::size_t>(end - text.data()) + 1);
    // OpenJ9 writes "\n\t" after every header, even before an empty list; the IBM SDK
    // document shows the class block at the start of the next line.
    if ((starts_with(next, "0x") || starts_with(next, "0X")) && !opens_record_line(next))
        header.variant = ClassicHeader::Variant::sdk;
}

// Reads the header from `text`, the file's first kHeaderWindow bytes (translated if EBCDIC).
std::variant<ClassicHeader, DecodeError> read_header_text(Bytes text, std::uint64_t file_size) {
    ClassicHeader header;
    std::uint64_t pos = starts_with(text, kUtf8Bom) ? kUtf8Bom.size() : 0;
    if (!starts_with(text.subspan(pos), kVersion))
        return DecodeError{pos, "classic header", "line 1: expected \"// Version:\" at the start of the file"};
    pos += kVersion.size();
    const void* newline = std::memchr(text.data() + pos, '\n', text.size() - pos);
    std::uint64_t end = newline ? static_cast<std::uint64_t>(static_cast<const std::uint8_t*>(newline) - text.data())
                                : text.size();
    if (!newline && text.size() < file_size)
        return DecodeError{0, "classic header", "line 1: the version line does not end within the first " +
                                                    std::to_string(kHeaderWindow) + " bytes"};
    header.body_offset = newline ? end + 1 : end;
    header.crlf = newline && end > pos && text[end - 1] == '\r';
    if (header.crlf) --end;
    while (pos < end && text[pos] == ' ') ++pos;
    header.version.assign(reinterpret_cast<const char*>(text.data() + pos), end - pos);
    sniff_body(text, header);
    return header;
}

// The first line at or after `pos` that opens a record ("0x<hex> [") or a trailer ("//").
std::uint64_t next_item_line(Bytes file, std::uint64_t pos) {
    auto next_line = [&](std::uint64_t p) -> std::uint64_t {
        const void* nl = std::memchr(file.data() + p, '\n', file.size() - p);
        return nl ? static_cast<std::uint64_t>(static_cast<const std::uint8_t*>(nl) - file.data()) + 1 : file.size();
    };
    if (pos > 0 && pos < file.size() && file[pos - 1] != '\n') pos = next_line(pos);
    while (pos < file.size()) {
        Bytes line = file.subspan(pos);
        if (starts_with(line, "//") || opens_record_line(line)) return pos;
        pos = next_line(pos);
    }
    return file.size();
}

std::string describe_last(const ClassicLast& last) {
    std::string where = " at line " + std::to_string(last.line) + " (" + hex_offset(last.file_offset) + ")";
    switch (last.kind) {
        case ClassicLast::Kind::nothing: return "right after the version line, before any record";
        case ClassicLast::Kind::object: return "after the OBJ record" + where + ", whose references may be cut short";
        case ClassicLast::Kind::class_record:
            return "after the CLS record" + where + ", whose references may be cut short";
        case ClassicLast::Kind::breakdown: return "after the // Breakdown trailer" + where;
        case ClassicLast::Kind::eof: break;
    }
    return "after the // EOF trailer" + where;
}

void compare(std::vector<std::string>& warnings, const std::string& trailer, std::uint64_t said,
             const std::string& what, std::uint64_t found, const std::string& has = "has") {
    if (said != found)
        warnings.push_back("// " + trailer + " says " + std::to_string(said) + " " + what + ", the file " + has + " " +
                           std::to_string(found));
}

}  // namespace

// ---- public ---------------------------------------------------------------------------------

bool classic_is_ebcdic(Bytes head) {
    return head.size() >= sizeof kEbcdicVersion &&
           std::equal(std::begin(kEbcdicVersion), std::end(kEbcdicVersion), head.begin());
}

ObjectKind classic_type_kind(std::string_view type) {
    if (!type.starts_with('[')) return ObjectKind::instance;
    return type.size() == 2 && is_primitive_code(type[1]) ? ObjectKind::primitive_array : ObjectKind::object_array;
}

std::vector<std::uint8_t> classic_ebcdic_to_ascii(Bytes ebcdic) {
    std::vector<std::uint8_t> ascii(ebcdic.size());
    std::transform(ebcdic.begin(), ebcdic.end(), ascii.begin(), [](std::uint8_t c) { return kIbm1047[c]; });
    return ascii;
}

std::variant<ClassicHeader, DecodeError> read_classic_header(Bytes file) {
    Bytes window = file.first(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), kHeaderWindow)));
    if (!classic_is_ebcdic(file)) return read_header_text(window, file.size());
    std::vector<std::uint8_t> ascii = classic_ebcdic_to_ascii(window);
    auto header = read_header_text(ascii, file.size());
    if (auto* read = std::get_if<ClassicHeader>(&header)) read->ebcdic = true;
    return header;
}

std::uint64_t classic_whole_records_end(Bytes file, const ClassicHeader& header) {
    const std::uint64_t body = std::min<std::uint64_t>(header.body_offset, file.size());
    auto line_start = [&](std::uint64_t end) {  // of the line holding the byte before `end`
        while (end > body && file[end - 1] != '\n') --end;
        return end;
    };
    if (file.size() > body && file.back() == '\n') {
        std::uint64_t last = line_start(file.size() - 1);
        if (starts_with(file.subspan(last), "// EOF")) return file.size();
    }
    for (std::uint64_t end = file.size(); end > body;) {
        std::uint64_t start = line_start(end);
        Bytes line = file.subspan(start);
        if (starts_with(line, "//") || opens_record_line(line)) return start;
        end = start - 1;  // before this line's predecessor's newline: the line above
        if (start == body) break;
    }
    return body;
}

ClassicBlock next_classic_block(Bytes file, std::uint64_t begin, std::uint64_t first_line, std::uint64_t target_bytes) {
    std::uint64_t step = std::max<std::uint64_t>(target_bytes, 1);
    std::uint64_t end = step >= file.size() - begin ? file.size() : next_item_line(file, begin + step);
    return {begin, end, first_line};
}

std::uint64_t classic_lines_in(Bytes file, const ClassicBlock& block) {
    return static_cast<std::uint64_t>(std::count(file.begin() + block.begin, file.begin() + block.end, '\n'));
}

std::variant<std::vector<ClassicBlock>, DecodeError> split_classic_blocks(Bytes file, const ClassicHeader& header,
                                                                          std::uint64_t target_bytes) {
    if (classic_is_ebcdic(file))
        return DecodeError{0, "classic header", "is still EBCDIC: split classic_ebcdic_to_ascii(file) instead"};
    if (header.body_offset > file.size())
        return DecodeError{header.body_offset, "classic header",
                           "body offset lies past the end of the file at " + hex_offset(file.size())};
    std::vector<ClassicBlock> blocks;
    std::uint64_t begin = header.body_offset, line = header.body_line;
    while (begin < file.size()) {
        blocks.push_back(next_classic_block(file, begin, line, target_bytes));
        line += classic_lines_in(file, blocks.back());
        begin = blocks.back().end;
    }
    return blocks;
}

std::variant<ClassicRecords, DecodeError> decode_classic_block(Bytes file, const ClassicHeader& header,
                                                               const ClassicBlock& block) {
    if (classic_is_ebcdic(file))
        return DecodeError{0, "classic header", "is still EBCDIC: decode classic_ebcdic_to_ascii(file) instead"};
    if (block.begin > block.end || block.end > file.size())
        return DecodeError{block.begin, "classic block",
                           "ends at " + hex_offset(block.end) + ", outside the file of " + hex_offset(file.size())};
    if (header.word_bytes != 4 && header.word_bytes != 8)
        return DecodeError{block.begin, "classic header",
                           "word size must be 4 or 8 bytes, not " + std::to_string(header.word_bytes)};
    ClassicRecords records;
    if (auto error = BlockDecoder(file, header, block, records).run()) return *error;
    return records;
}

ClassicCounts& operator+=(ClassicCounts& total, const ClassicCounts& part) {
    total.classes += part.classes;
    total.objects += part.objects;
    total.object_arrays += part.object_arrays;
    total.primitive_arrays += part.primitive_arrays;
    total.nested_primitive_arrays += part.nested_primitive_arrays;
    total.refs += part.refs;
    total.null_refs += part.null_refs;
    return total;
}

std::optional<DecodeError> add_classic_block(ClassicTotals& totals, const ClassicRecords& block) {
    std::uint64_t first = UINT64_MAX, line = 0;
    auto consider = [&](std::uint64_t offset, std::uint64_t at_line) {
        if (offset < first) first = offset, line = at_line;
    };
    if (!block.objects.empty()) consider(block.objects.front().file_offset, block.objects.front().line);
    if (!block.classes.empty()) consider(block.classes.front().file_offset, block.classes.front().line);
    bool records = first != UINT64_MAX;
    if (block.breakdown) consider(block.breakdown->file_offset, block.breakdown->line);
    if (block.eof) consider(block.eof->file_offset, block.eof->line);
    auto error = [&](const std::string& message) {
        return DecodeError{first, "classic block", "line " + std::to_string(line) + ": " + message};
    };
    if (totals.eof && first != UINT64_MAX)
        return error("follows the // EOF trailer at line " + std::to_string(totals.eof->line) + ", which ends the dump");
    if (totals.breakdown && records)
        return error("record follows the // Breakdown trailer at line " + std::to_string(totals.breakdown->line));
    if (totals.breakdown && block.breakdown)
        return error("second // Breakdown trailer (the first at line " + std::to_string(totals.breakdown->line) + ")");
    totals.counts += block.counts;
    if (block.breakdown) totals.breakdown = block.breakdown;
    if (block.eof) totals.eof = block.eof;
    if (block.last.kind != ClassicLast::Kind::nothing) totals.last = block.last;
    return std::nullopt;
}

std::variant<std::vector<std::string>, DecodeError> check_classic_trailers(const ClassicHeader& header,
                                                                           const ClassicTotals& totals,
                                                                           std::uint64_t file_size) {
    if (!totals.eof)
        return DecodeError{file_size, "classic // EOF trailer",
                           "is missing: the dump ends at " + hex_offset(file_size) + " " + describe_last(totals.last)};
    std::vector<std::string> warnings;
    const ClassicCounts& c = totals.counts;
    if (!totals.breakdown) {
        warnings.push_back("no // Breakdown trailer before // EOF");
    } else {
        const ClassicBreakdown& b = *totals.breakdown;
        compare(warnings, "Breakdown", b.classes, "classes", c.classes);
        compare(warnings, "Breakdown", b.objects, "objects", c.objects);
        // OpenJ9's own writer counts "[[I" by its leaf type, as a primitive array: either way agrees.
        std::uint64_t nested = c.nested_primitive_arrays;
        bool by_leaf = b.object_arrays == c.object_arrays - nested && b.primitive_arrays == c.primitive_arrays + nested;
        if (!by_leaf) {
            compare(warnings, "Breakdown", b.object_arrays, "object arrays", c.object_arrays);
            compare(warnings, "Breakdown", b.primitive_arrays, "primitive arrays", c.primitive_arrays);
        }
    }
    const ClassicEof& e = *totals.eof;
    compare(warnings, "EOF", e.total_objects, "objects and classes",
            c.classes + c.objects + c.object_arrays + c.primitive_arrays);
    if (e.null_refs > e.total_refs) {
        warnings.push_back("// EOF says " + std::to_string(e.null_refs) + " of its " + std::to_string(e.total_refs) +
                           " references are null");
    } else {
        compare(warnings, "EOF", e.total_refs - e.null_refs, "non-null references", c.refs, "lists");
    }
    if (header.variant == ClassicHeader::Variant::sdk)
        compare(warnings, "EOF", e.null_refs, "null references", c.null_refs, "lists");
    else if (c.null_refs > 0)
        warnings.push_back("the file lists " + std::to_string(c.null_refs) +
                           " null references, which the OpenJ9 writer omits");
    return warnings;
}

}  // namespace heapgraph
