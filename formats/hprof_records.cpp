// HPROF file header and top-level records (spec: hprof-binary-format.txt). The heap dump
// records (0x0C, 0x1C) are framed here; their sub-records are decoded in hprof_heap.cpp.
#include "byte_reader.h"
#include "formats.h"

#include <algorithm>
#include <cstring>

namespace heapgraph {

namespace {

DecodeError error_at(std::uint64_t offset, std::string record, std::string message) {
    return DecodeError{offset, std::move(record), std::move(message)};
}

bool known_top_tag(std::uint8_t tag) {
    switch (tag) {
        case HprofTag::string: case HprofTag::load_class: case HprofTag::unload_class: case HprofTag::stack_frame: case HprofTag::stack_trace: case HprofTag::alloc_sites: case HprofTag::heap_summary:
        case HprofTag::start_thread: case HprofTag::end_thread: case HprofTag::heap_dump: case HprofTag::cpu_samples: case HprofTag::control_settings: case HprofTag::heap_dump_segment: case HprofTag::heap_dump_end:
            return true;
        default:
            return false;
    }
}

// The body length a fixed-layout record must have, or 0 when the layout has counts.
std::uint64_t fixed_body_length(std::uint8_t tag, std::uint32_t id) {
    switch (tag) {
        case HprofTag::load_class: return 8 + 2 * id;  // serial, class id, trace serial, name id
        case HprofTag::unload_class: return 4;
        case HprofTag::stack_frame: return 4 * id + 8;
        case HprofTag::heap_summary: return 24;
        case HprofTag::start_thread: return 8 + 4 * id;
        case HprofTag::end_thread: return 4;
        case HprofTag::control_settings: return 6;
        default: return 0;
    }
}

constexpr std::uint32_t kReplacement = 0xFFFD;

bool surrogate(std::uint32_t code) { return code >= 0xD800 && code <= 0xDFFF; }

void append_utf8(std::string& out, std::uint32_t code) {
    auto put = [&](std::uint32_t bits) { out.push_back(static_cast<char>(bits)); };
    if (code < 0x80) {
        put(code);
    } else if (code < 0x800) {
        put(0xC0 | code >> 6), put(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        put(0xE0 | code >> 12), put(0x80 | (code >> 6 & 0x3F)), put(0x80 | (code & 0x3F));
    } else {
        put(0xF0 | code >> 18), put(0x80 | (code >> 12 & 0x3F)), put(0x80 | (code >> 6 & 0x3F)), put(0x80 | (code & 0x3F));
    }
}

// The sequence at `at`: its code point (a surrogate half as itself) and length, or U+FFFD and
// the bytes of an invalid sequence (its lead byte and the continuation bytes that belong to it).
struct Sequence {
    std::uint32_t code;
    std::size_t length;
};

Sequence decode_sequence(std::string_view text, std::size_t at) {
    const auto lead = static_cast<std::uint8_t>(text[at]);
    if (lead < 0x80) return {lead, 1};
    std::size_t follow = 0;
    std::uint32_t code = 0, least = 0;
    if (lead >= 0xC0 && lead <= 0xDF) follow = 1, code = lead & 0x1F, least = 0x80;
    else if (lead >= 0xE0 && lead <= 0xEF) follow = 2, code = lead & 0x0F, least = 0x800;
    else if (lead >= 0xF0 && lead <= 0xF4) follow = 3, code = lead & 0x07, least = 0x10000;
    else return {kReplacement, 1};
    for (std::size_t k = 1; k <= follow; ++k) {
        if (at + k >= text.size() || (static_cast<std::uint8_t>(text[at + k]) & 0xC0) != 0x80)
            return {kReplacement, k};
        code = code << 6 | (static_cast<std::uint8_t>(text[at + k]) & 0x3F);
    }
    if (lead == 0xC0 && code == 0) return {0, 2};  // modified UTF-8's U+0000
    if (code < least || code > 0x10FFFF) return {kReplacement, follow + 1};
    return {code, follow + 1};
}

}  // namespace

std::string utf8_from_modified(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        Sequence s = decode_sequence(text, at);
        at += s.length;
        if (s.code >= 0xD800 && s.code <= 0xDBFF && at < text.size()) {
            Sequence low = decode_sequence(text, at);
            if (low.code >= 0xDC00 && low.code <= 0xDFFF) {
                at += low.length;
                s.code = 0x10000 + ((s.code - 0xD800) << 10) + (low.code - 0xDC00);
            }
        }
        append_utf8(out, surrogate(s.code) ? kReplacement : s.code);
    }
    return out;
}

std::string utf8_from_java_chars(std::span<const std::uint8_t> bytes, JavaChars chars, std::size_t max_chars,
                                 bool* cut) {
    std::string out;
    const std::size_t width = chars == JavaChars::latin1 ? 1 : 2;
    const std::size_t units = bytes.size() / width;
    auto unit = [&](std::size_t i) -> std::uint32_t {
        if (width == 1) return bytes[i];
        const std::uint32_t first = bytes[2 * i], second = bytes[2 * i + 1];
        return chars == JavaChars::utf16_big_endian ? first << 8 | second : second << 8 | first;
    };
    std::size_t i = 0, written = 0;
    for (; i < units && written < max_chars; ++written) {
        std::uint32_t code = unit(i++);
        if (code >= 0xD800 && code <= 0xDBFF && i < units && unit(i) >= 0xDC00 && unit(i) <= 0xDFFF)
            code = 0x10000 + ((code - 0xD800) << 10) + (unit(i++) - 0xDC00);
        append_utf8(out, surrogate(code) ? kReplacement : code);
    }
    if (cut) *cut = i < units;
    return out;
}

std::string unknown_tag_name(const char* what, std::uint8_t tag) {
    char text[48];
    std::snprintf(text, sizeof text, "%s 0x%02x", what, tag);
    return text;
}

std::string hprof_tag_name(std::uint8_t tag) {
    switch (tag) {
        case HprofTag::string: return "STRING";
        case HprofTag::load_class: return "LOAD_CLASS";
        case HprofTag::unload_class: return "UNLOAD_CLASS";
        case HprofTag::stack_frame: return "STACK_FRAME";
        case HprofTag::stack_trace: return "STACK_TRACE";
        case HprofTag::alloc_sites: return "ALLOC_SITES";
        case HprofTag::heap_summary: return "HEAP_SUMMARY";
        case HprofTag::start_thread: return "START_THREAD";
        case HprofTag::end_thread: return "END_THREAD";
        case HprofTag::heap_dump: return "HEAP_DUMP";
        case HprofTag::cpu_samples: return "CPU_SAMPLES";
        case HprofTag::control_settings: return "CONTROL_SETTINGS";
        case HprofTag::heap_dump_segment: return "HEAP_DUMP_SEGMENT";
        case HprofTag::heap_dump_end: return "HEAP_DUMP_END";
    }
    return unknown_tag_name("record tag", tag);
}

std::variant<HprofHeader, DecodeError> read_hprof_header(Bytes file) {
    const void* nul = std::memchr(file.data(), 0, std::min<std::size_t>(file.size(), 64));
    if (!nul && file.size() < 64)
        return error_at(file.size(), "header", "is cut short: the file ends inside the format name");
    if (!nul) return error_at(0, "header", "has no NUL-terminated format name in its first 64 bytes");
    HprofHeader header;
    std::size_t name_length = static_cast<const std::uint8_t*>(nul) - file.data();
    header.version.assign(reinterpret_cast<const char*>(file.data()), name_length);
    if (header.version != "JAVA PROFILE 1.0.1" && header.version != "JAVA PROFILE 1.0.2" &&
        header.version != "JAVA PROFILE 1.0.3")
        return error_at(0, "header", "names an unsupported version \"" + header.version + "\"");
    ByteReader in(file, name_length + 1);
    if (!in.has(12)) return error_at(in.pos(), "header", "needs 12 bytes after the name, file ends");
    header.id_size = in.u4();
    if (header.id_size != 4 && header.id_size != 8)
        return error_at(name_length + 1, "header",
                        "identifier size " + std::to_string(header.id_size) + ", expected 4 or 8");
    header.timestamp_ms = in.u8();
    header.records_offset = in.pos();
    return header;
}

std::variant<RecordFrame, DecodeError> read_record_frame(Bytes file, std::uint64_t offset) {
    const Bytes header =
        offset < file.size() ? file.subspan(offset, std::min<std::uint64_t>(9, file.size() - offset)) : Bytes{};
    return read_record_frame(header, offset, file.size());
}

std::variant<RecordFrame, DecodeError> read_record_frame(Bytes header, std::uint64_t offset, std::uint64_t file_size) {
    ByteReader in(header);
    if (!in.has(9))
        return error_at(offset, "record header",
                        "needs 9 bytes, file ends at " + hex_offset(file_size));
    RecordFrame frame;
    frame.tag = in.u1();
    in.skip(4);  // time
    frame.body_length = in.u4();
    frame.body_offset = offset + 9;
    if (!known_top_tag(frame.tag))
        return error_at(offset, hprof_tag_name(frame.tag), "is not a known top-level tag");
    if (frame.body_length > file_size - frame.body_offset)
        return error_at(offset, hprof_tag_name(frame.tag),
                        "needs " + std::to_string(frame.body_length) + " bytes, file ends at " +
                            hex_offset(file_size));
    return frame;
}

std::optional<CutRecord> hprof_cut_record(Bytes file, std::uint64_t offset) {
    if (offset >= file.size()) return std::nullopt;
    ByteReader in(file, offset);
    if (!in.has(9)) return CutRecord{offset, true, {}};
    RecordFrame frame;
    frame.tag = in.u1();
    in.skip(4);  // time
    frame.body_length = in.u4();
    frame.body_offset = in.pos();
    if (!known_top_tag(frame.tag) || in.has(frame.body_length)) return std::nullopt;
    return CutRecord{offset, false, frame};
}

namespace {

using TopResult = std::variant<TopRecord, DecodeError>;

DecodeError length_error(const RecordFrame& frame, std::uint64_t expected) {
    return error_at(frame.body_offset - 9, hprof_tag_name(frame.tag),
                    "has length " + std::to_string(frame.body_length) + ", its fields need " +
                        std::to_string(expected));
}

TopResult read_string(const RecordFrame& frame, ByteReader& in, std::uint32_t id) {
    if (frame.body_length < id) return length_error(frame, id);
    StringRecord record;
    record.id = in.u(id);
    record.text = std::string_view(reinterpret_cast<const char*>(in.here()),
                                   frame.body_length - id);
    return record;
}

TopResult read_load_class(ByteReader& in, std::uint32_t id) {
    LoadClassRecord record;
    record.serial = in.u4();
    record.class_id = in.u(id);
    record.stack_trace_serial = in.u4();
    record.name_id = in.u(id);
    return record;
}

TopResult read_stack_frame(ByteReader& in, std::uint32_t id) {
    StackFrameRecord record;
    record.frame_id = in.u(id);
    record.method_name_id = in.u(id);
    record.signature_id = in.u(id);
    record.source_file_id = in.u(id);
    record.class_serial = in.u4();
    record.line = static_cast<std::int32_t>(in.u4());
    return record;
}

TopResult read_stack_trace(const RecordFrame& frame, ByteReader& in, std::uint32_t id) {
    if (frame.body_length < 12) return length_error(frame, 12);
    StackTraceRecord record;
    record.serial = in.u4();
    record.thread_serial = in.u4();
    std::uint64_t frames = in.u4();
    if (frame.body_length != 12 + frames * id) return length_error(frame, 12 + frames * id);
    record.frame_ids.reserve(frames);
    for (std::uint64_t i = 0; i < frames; ++i) record.frame_ids.push_back(in.u(id));
    return record;
}

TopResult read_start_thread(ByteReader& in, std::uint32_t id) {
    StartThreadRecord record;
    record.thread_serial = in.u4();
    record.thread_id = in.u(id);
    record.stack_trace_serial = in.u4();
    record.name_id = in.u(id);
    record.group_name_id = in.u(id);
    record.parent_group_name_id = in.u(id);
    return record;
}

// Records with a count: the length must be exactly what the count implies.
TopResult check_counted(const RecordFrame& frame, ByteReader& in, std::uint64_t head_bytes,
                        std::uint64_t count_pos, std::uint64_t entry_bytes) {
    if (frame.body_length < head_bytes) return length_error(frame, head_bytes);
    in.skip(count_pos);
    std::uint64_t expected = head_bytes + in.u4() * entry_bytes;
    if (frame.body_length != expected) return length_error(frame, expected);
    return OtherRecord{frame.tag};
}

}  // namespace

std::variant<TopRecord, DecodeError> decode_top_record(const RecordFrame& frame, Bytes body,
                                                       std::uint32_t id_size) {
    ByteReader in(body);
    std::uint64_t fixed = fixed_body_length(frame.tag, id_size);
    if (fixed != 0 && frame.body_length != fixed) return length_error(frame, fixed);
    switch (frame.tag) {
        case HprofTag::string: return read_string(frame, in, id_size);
        case HprofTag::load_class: return read_load_class(in, id_size);
        case HprofTag::stack_frame: return read_stack_frame(in, id_size);
        case HprofTag::stack_trace: return read_stack_trace(frame, in, id_size);
        case HprofTag::alloc_sites: return check_counted(frame, in, 34, 30, 25);  // alloc sites: u2 + 3*u4 + 2*u8 + u4 n
        case HprofTag::start_thread: return read_start_thread(in, id_size);
        case HprofTag::cpu_samples: return check_counted(frame, in, 8, 4, 8);  // cpu samples
        case HprofTag::heap_dump_end:
            if (frame.body_length != 0) return length_error(frame, 0);
            return OtherRecord{frame.tag};
        case HprofTag::unload_class: case HprofTag::heap_summary: case HprofTag::end_thread: case HprofTag::control_settings:
            return OtherRecord{frame.tag};
        default:
            return error_at(frame.body_offset - 9, hprof_tag_name(frame.tag),
                            "is not a top-level record with fields (heap dumps decode elsewhere)");
    }
}

}  // namespace heapgraph
