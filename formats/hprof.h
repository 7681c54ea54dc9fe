// HPROF (Java heap dumps of HotSpot, OpenJDK and Android): the file header, top-level
// records, heap dump sub-records read through class layouts, and the size models that turn
// them into shallow sizes. Layout facts come from ../shared/specs/hprof-binary-format.txt and
// the Android 1.0.3 additions (HEAP DUMP INFO, extra roots, PRIMITIVE ARRAY NODATA).
//
// Decoders are pure functions from bytes (plus the context they need) to records or a
// DecodeError; they hold no global state, so the pipeline can run them on many chunks at once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common.h"

namespace heapgraph {

// ---- HPROF ---------------------------------------------------------------------------

// Record tags, one list for every reader (names: hprof_tag_name, hprof_sub_tag_name). Plain
// enumerators in a struct: they compare with the tag bytes as read, without casts.
struct HprofTag {
    enum : std::uint8_t {
        string = 0x01, load_class = 0x02, unload_class = 0x03, stack_frame = 0x04, stack_trace = 0x05,
        alloc_sites = 0x06, heap_summary = 0x07, start_thread = 0x0A, end_thread = 0x0B, heap_dump = 0x0C,
        cpu_samples = 0x0D, control_settings = 0x0E, heap_dump_segment = 0x1C, heap_dump_end = 0x2C
    };
};
// Sub-records of a heap dump (Android adds 0x89-0x90, 0xC3 and 0xFE).
struct HprofSubTag {
    enum : std::uint8_t {
        root_unknown = 0xFF, root_jni_global = 0x01, root_jni_local = 0x02, root_java_frame = 0x03,
        root_native_stack = 0x04, root_sticky_class = 0x05, root_thread_block = 0x06, root_monitor_used = 0x07,
        root_thread_object = 0x08, class_dump = 0x20, instance_dump = 0x21, object_array_dump = 0x22,
        primitive_array_dump = 0x23, root_interned_string = 0x89, root_finalizing = 0x8A, root_debugger = 0x8B,
        root_reference_cleanup = 0x8C, root_vm_internal = 0x8D, root_jni_monitor = 0x8E, root_unreachable = 0x90,
        primitive_array_nodata = 0xC3, heap_dump_info = 0xFE
    };
};
// A record a heap dump is made of: HEAP DUMP, or one HEAP DUMP SEGMENT of a run.
inline bool is_heap_dump_record(std::uint8_t tag) { return tag == HprofTag::heap_dump || tag == HprofTag::heap_dump_segment; }

struct HprofHeader {
    std::string version;  // "JAVA PROFILE 1.0.2"
    std::uint32_t id_size = 0;
    std::uint64_t timestamp_ms = 0;
    std::uint64_t records_offset = 0;  // first top-level record
};

std::variant<HprofHeader, DecodeError> read_hprof_header(Bytes file);

// One top-level record: tag, then where its body lies in the file.
struct RecordFrame {
    std::uint8_t tag = 0;
    std::uint64_t body_offset = 0;
    std::uint32_t body_length = 0;
};

std::string hprof_tag_name(std::uint8_t tag);
std::string hprof_sub_tag_name(std::uint8_t tag);
// "record tag 0x2a": the name of a tag no list knows.
std::string unknown_tag_name(const char* what, std::uint8_t tag);

// Reads the 9-byte record header at `offset`; checks the tag is known and the body fits.
std::variant<RecordFrame, DecodeError> read_record_frame(Bytes file, std::uint64_t offset);
// The same from the bytes at `offset` alone (`header`: up to 9 of them, fewer where the file
// of `file_size` bytes ends), for a reader that does not map the file there.
std::variant<RecordFrame, DecodeError> read_record_frame(Bytes header, std::uint64_t offset, std::uint64_t file_size);

// A record the end of the file cuts: its header is incomplete, or its tag is known and its
// body runs past the end. Tells a dump cut short (`--allow-truncated`) from a damaged one;
// nullopt when the record at `offset` is whole or damaged.
struct CutRecord {
    std::uint64_t offset = 0;
    bool header_cut = false;           // fewer than 9 bytes left: tag and length unknown
    RecordFrame frame;                 // as claimed, when the header is whole
};
std::optional<CutRecord> hprof_cut_record(Bytes file, std::uint64_t offset);

// Plain records of the top level that later stages use.
struct StringRecord {
    ObjectId id = 0;
    std::string_view text;  // points into the file bytes
};
// HPROF strings are Java's modified UTF-8: U+0000 is written C0 80, and a character beyond
// U+FFFF as its UTF-16 surrogate pair, each half a 3-byte sequence (ED A0..AF xx, ED B0..BF xx).
// Returns standard UTF-8: pairs become one 4-byte sequence; a lone surrogate half and bytes that
// are no sequence become U+FFFD (standard 4-byte sequences, which some writers use, are kept).
std::string utf8_from_modified(std::string_view text);
// A Java string's contents as UTF-8: Latin-1 bytes (compact strings), or UTF-16 code units
// in either byte order (byte[] values of JDK 9+ in the JVM's order, char[] big-endian).
// Surrogates pair up; a lone half becomes U+FFFD. At most `max_chars` characters are decoded;
// `cut` says whether more followed.
enum class JavaChars : std::uint8_t { latin1, utf16_big_endian, utf16_little_endian };
std::string utf8_from_java_chars(std::span<const std::uint8_t> bytes, JavaChars chars, std::size_t max_chars,
                                 bool* cut = nullptr);

struct LoadClassRecord {
    std::uint32_t serial = 0;
    ObjectId class_id = 0;
    std::uint32_t stack_trace_serial = 0;
    ObjectId name_id = 0;
};
struct StackFrameRecord {
    ObjectId frame_id = 0, method_name_id = 0, signature_id = 0, source_file_id = 0;
    std::uint32_t class_serial = 0;
    std::int32_t line = 0;
};
struct StackTraceRecord {
    std::uint32_t serial = 0, thread_serial = 0;
    std::vector<ObjectId> frame_ids;
};
struct StartThreadRecord {
    std::uint32_t thread_serial = 0;
    ObjectId thread_id = 0;
    std::uint32_t stack_trace_serial = 0;
    ObjectId name_id = 0, group_name_id = 0, parent_group_name_id = 0;
};
// Records that carry nothing the analysis uses (unload class, alloc sites, heap summary,
// end thread, cpu samples, control settings, heap dump end) are still decoded and checked.
struct OtherRecord {
    std::uint8_t tag = 0;
};
using TopRecord = std::variant<StringRecord, LoadClassRecord, StackFrameRecord, StackTraceRecord,
                               StartThreadRecord, OtherRecord>;

// Decodes a non-heap top-level record body. `body` is exactly the record's body.
std::variant<TopRecord, DecodeError> decode_top_record(const RecordFrame& frame, Bytes body,
                                                       std::uint32_t id_size);

// ---- heap dump sub-records -------------------------------------------------------------


struct FieldDecl {
    ObjectId name_id = 0;
    std::uint8_t type = 0;
};
struct StaticField {
    ObjectId name_id = 0;
    std::uint8_t type = 0;
    std::uint64_t value = 0;  // raw bits; an id when type is object
};
struct ClassDump {
    ObjectId class_id = 0, super_id = 0, loader_id = 0, signers_id = 0, protection_domain_id = 0;
    std::uint32_t instance_size = 0;  // as the dump writes it (the producer's own measure)
    std::vector<StaticField> statics;
    std::vector<FieldDecl> fields;  // this class only, in dump order
    std::uint64_t file_offset = 0;
};

// A span of heap-dump bytes that holds whole sub-records. `pieces` maps chunk positions to
// file offsets: a sub-record that continues in the next segment is copied into one chunk,
// so a chunk can be made of several file ranges.
struct HeapChunk {
    std::vector<std::uint8_t> owned;  // set only when the chunk had to be assembled
    Bytes bytes;
    struct Piece {
        std::uint64_t chunk_pos, file_offset;
    };
    std::vector<Piece> pieces;
    std::uint64_t file_offset(std::uint64_t chunk_pos) const;
};

// The size of a whole INSTANCE DUMP, OBJECT ARRAY DUMP or PRIMITIVE ARRAY DUMP at `pos`,
// read straight from its header; 0 for any other tag, a header or record `bytes` cut, or
// a bad element type. These are nearly every record of a heap dump, and every walk over
// one (the load's cut, the decode, the value pass) sizes each: inline, with no call, where
// the size by tag below is a call (it was 8% of a run's CPU on the 2 GB BigHeap dump).
inline std::uint64_t object_record_size(Bytes bytes, std::uint64_t pos, std::uint32_t id) noexcept {
    auto big_endian = [&](std::uint64_t at, unsigned width) {
        std::uint64_t value = 0;
        for (unsigned i = 0; i < width; ++i) value = value << 8 | bytes[at + i];
        return value;
    };
    const std::uint64_t left = bytes.size() - pos;
    std::uint64_t size = 0;
    switch (bytes[pos]) {
        case HprofSubTag::instance_dump:  // tag, id, serial u4, class id, field bytes u4, fields
            if (left < 1 + 2 * std::uint64_t{id} + 8) return 0;
            size = 1 + 2 * std::uint64_t{id} + 8 + big_endian(pos + 1 + 2 * id + 4, 4);
            break;
        case HprofSubTag::object_array_dump:  // tag, id, serial u4, length u4, class id, ids
            if (left < 1 + 2 * std::uint64_t{id} + 8) return 0;
            size = 1 + 2 * std::uint64_t{id} + 8 + big_endian(pos + 1 + id + 4, 4) * id;
            break;
        case HprofSubTag::primitive_array_dump: {  // tag, id, serial u4, length u4, type u1, elements
            if (left < 1 + std::uint64_t{id} + 9) return 0;
            static constexpr std::uint8_t kWidth[12] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};  // boolean (4) .. long (11)
            const std::uint8_t type = bytes[pos + 1 + id + 8];
            if (type >= 12 || kWidth[type] == 0) return 0;
            size = 1 + std::uint64_t{id} + 9 + big_endian(pos + 1 + id + 4, 4) * kWidth[type];
            break;
        }
        default: return 0;
    }
    return size <= left ? size : 0;
}

// The size of any sub-record at `pos`, from its tag: the size, 0 when more bytes are needed
// than `bytes` holds, or an error.
std::variant<std::uint64_t, DecodeError> sub_record_size_by_tag(Bytes bytes, std::uint64_t pos,
                                                                std::uint32_t id_size);

// Finds where the sub-record starting at `pos` ends without decoding it.
// Returns the size, 0 when more bytes are needed than `bytes` holds, or an error.
inline std::variant<std::uint64_t, DecodeError> sub_record_size(Bytes bytes, std::uint64_t pos,
                                                                std::uint32_t id_size) {
    if (const std::uint64_t size = object_record_size(bytes, pos, id_size)) return size;
    return sub_record_size_by_tag(bytes, pos, id_size);
}

// The field layout of one class. HPROF writes an instance's values class first, then each
// super class's up to java.lang.Object; a layout holds only the fields its own class declares
// and links to its super class's layout, so a hierarchy n classes deep costs n layouts (not
// n²/2 levels) and each is built once, from its super class's totals.
struct ClassLayout {
    struct Level {
        std::uint32_t primitive_bytes = 0;
        std::uint32_t references = 0;
    };
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    Level own;                                // the fields this class declares
    std::uint64_t data_bytes = 0;             // bytes of field values in an instance dump: own and inherited
    std::uint64_t references = 0;             // reference fields of an instance: own and inherited
    std::vector<std::uint32_t> ref_offsets;   // own object fields: offsets within the own bytes
    std::vector<ObjectId> ref_names;          // their name string ids, parallel to ref_offsets
    std::uint32_t super = kNone;              // the super class's layout (index in ClassLayouts)
    std::uint32_t refs_above = kNone;         // the nearest super class layout that declares references
    bool complete = true;                     // false when a super class dump is missing (or supers loop)
};

// The layouts of a dump's classes: one per class dump, in the same order, each built from its
// super class's (time and memory linear in classes and fields).
class ClassLayouts {
public:
    ClassLayouts() = default;
    ClassLayouts(std::span<const ClassDump> classes, std::uint32_t id_size);

    // The layout index of a class id (its first class dump), or ClassLayout::kNone.
    std::uint32_t index_of(ObjectId class_id) const {
        auto found = index_.find(class_id);
        return found == index_.end() ? ClassLayout::kNone : found->second;
    }
    const ClassLayout& operator[](std::uint32_t index) const { return layouts_[index]; }
    std::size_t size() const { return layouts_.size(); }
    // Every layout index, each super class before its subclasses: folds down the chains.
    const std::vector<std::uint32_t>& supers_first() const { return supers_first_; }

    // Calls visit(offset, level, k) for each reference field of an instance of layout `index`,
    // in dump order: `offset` within the instance's field bytes, `level` the layout that declares
    // it, `k` its place among that level's ref_offsets. Only levels with references are walked,
    // so the cost is that of the fields read.
    template <typename Visit>
    void for_each_reference(std::uint32_t index, Visit&& visit) const {
        const std::uint64_t total = layouts_[index].data_bytes;
        for (std::uint32_t level = index; level != ClassLayout::kNone; level = layouts_[level].refs_above) {
            const ClassLayout& l = layouts_[level];
            const std::uint64_t base = total - l.data_bytes;
            for (std::uint32_t k = 0; k < l.ref_offsets.size(); ++k) visit(base + l.ref_offsets[k], level, k);
        }
    }

    // The one field reader: calls visit(value, level, k) for each reference field of an
    // instance of layout `index`, in dump order, with the value read from `fields` (the
    // instance's field bytes, at least data_bytes of them); `level` and `k` as above.
    template <typename Visit>
    void read_references(std::uint32_t index, const std::uint8_t* fields, std::uint32_t id_size, Visit&& visit) const {
        for_each_reference(index, [&](std::uint64_t offset, std::uint32_t level, std::uint32_t k) {
            ObjectId value = 0;
            for (std::uint32_t b = 0; b < id_size; ++b) value = value << 8 | fields[offset + b];
            visit(value, level, k);
        });
    }

private:
    void finish(const ClassDump& dump, std::uint32_t index, std::uint32_t super, bool complete,
                std::uint32_t id_size);

    std::vector<ClassLayout> layouts_;
    std::unordered_map<ObjectId, std::uint32_t> index_;
    std::vector<std::uint32_t> supers_first_;
};

// How the producing JVM laid out objects: decides shallow sizes (docs/size-model.md).
// HPROF records none of this; the pipeline picks the model whose sizes fit the dump's
// address gaps best.
struct SizeModel {
    std::uint32_t id_size = 8;
    std::uint32_t reference_bytes = 8;      // 4 under compressed oops
    std::uint32_t klass_bytes = 8;          // 4 under compressed class pointers
    std::uint32_t object_header_bytes = 16; // mark word (id size) + klass word
    std::uint32_t array_header_bytes = 24;  // header + length, padded as the VM does
    std::uint32_t alignment = 8;            // 8, or 16.. with ObjectAlignmentInBytes
    bool packed_fields = false;             // JDK 15+ field layout: no per-class rounding
    bool compressed_oops = false;
    bool compressed_klass = false;
};

struct HprofContext {
    std::uint32_t id_size = 8;
    ClassLayouts layouts;
    // While the dump is still being scanned a class dump may lie ahead: then an instance of
    // an unknown class stops the chunk (HeapRecords::deferred_on) instead of failing it.
    bool defer_unknown_classes = false;
    // --allow-truncated, on a heap dump the end of the file cuts: class dumps that lay after
    // the cut are lost, so an instance of a class with no usable layout is kept with no
    // references (HeapRecords::unreadable_classes) instead of failing the chunk.
    bool tolerate_unknown_classes = false;
};


// Shallow sizes are not decided here: they depend on the size model, which is chosen once
// the whole dump is seen (compressed oops leave no mark in the header).
struct ObjectRecord {
    ObjectId id = 0;
    ObjectId class_id = 0;  // 0 for a primitive array (its class is found by element type)
    std::uint64_t length = 0;  // elements of an array; field bytes of an unreadable instance
    std::uint64_t first_ref = 0;  // into HeapRecords::refs
    std::uint64_t position = 0;   // of the sub-record in its chunk
    std::uint32_t ref_count = 0;
    ObjectKind kind = ObjectKind::instance;
    std::uint8_t element_type = 0;  // primitive arrays
};
struct RootRecord {
    ObjectId id = 0;
    RootKind kind = RootKind::unknown;
    std::uint32_t thread_serial = 0;
};
struct HeapRecords {
    std::vector<ObjectRecord> objects;
    std::vector<ObjectId> refs;  // non-null references, in record order
    std::vector<RootRecord> roots;
    std::vector<ClassDump> classes;
    std::uint64_t counts[256] = {};  // sub-records by tag
    ObjectId deferred_on = 0;  // see HprofContext::defer_unknown_classes
    // The class of each instance kept without its fields (HprofContext::tolerate_unknown_classes).
    std::vector<ObjectId> unreadable_classes;
};

// The header of the INSTANCE DUMP at `pos`: tag, id, stack trace serial (u4), class id, length
// of the field values (u4); nullopt when the bytes there hold no such header.
struct InstanceHeader {
    ObjectId id = 0, class_id = 0;
    std::uint32_t field_bytes = 0;
    std::uint64_t fields_offset = 0;  // of the first field value
};
std::optional<InstanceHeader> read_instance_header(Bytes bytes, std::uint64_t pos, std::uint32_t id_size);

// Reads the CLASS DUMP sub-record at `pos` (its size already checked by sub_record_size).
ClassDump read_class_dump_at(Bytes bytes, std::uint64_t pos, std::uint32_t id_size);

// Scans the class dumps only (pass 1: layouts are needed before instances decode).
std::variant<std::vector<ClassDump>, DecodeError> read_class_dumps(const HeapChunk& chunk,
                                                                   std::uint32_t id_size);

// Decodes every sub-record of a chunk (pass 2). Instance values are read through the
// context's layouts; an instance of a class with no layout is an error.
std::variant<HeapRecords, DecodeError> decode_heap_chunk(const HeapChunk& chunk,
                                                         const HprofContext& context);
// The same into `out`, whose buffers are reused (a decoder thread keeps one).
std::optional<DecodeError> decode_heap_chunk_into(const HeapChunk& chunk, const HprofContext& context,
                                                  HeapRecords& out);

// Shallow sizes fold down a class's super chain, from java.lang.Object to the class:
// `super_end` is level_end() of the super class (object_header_bytes for a class with none),
// and instance_shallow_bytes() aligns the total, after adding HotSpot's injected fields.
std::uint64_t level_end(std::uint64_t super_end, ClassLayout::Level own, const SizeModel& model);
std::uint64_t instance_shallow_bytes(std::uint64_t fields_end, const SizeModel& model,
                                     ClassLayout::Level injected = {});
// The same for a chain given whole: `levels` are the class's first, java.lang.Object's last.
std::uint64_t instance_shallow_bytes(std::span<const ClassLayout::Level> levels, const SizeModel& model,
                                     ClassLayout::Level injected = {});
// The injected fields HotSpot (JDK 15+) adds to a JDK class of this Java name, if any.
ClassLayout::Level hotspot_injected_fields(std::string_view java_name);
std::uint64_t array_shallow_bytes(std::uint64_t length, std::uint32_t element_bytes,
                                  const SizeModel& model);
std::uint64_t class_shallow_bytes(const ClassDump& dump, const SizeModel& model);
SizeModel make_size_model(std::uint32_t id_size, bool compressed_oops, bool compressed_klass,
                          bool packed_fields, std::uint32_t alignment = 8);
std::string describe(const SizeModel& model);  // "64-bit, compressed oops, ..." 


}  // namespace heapgraph
