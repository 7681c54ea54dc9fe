// Public interface of the format readers: detecting a dump's format from its first bytes,
// and decoding HPROF chunks into plain records.
//
// Decoders are pure functions from bytes (plus the context they need) to records or a
// DecodeError; they hold no global state, so the pipeline can run them on many chunks at once.
// Layout facts come from ../shared/specs/hprof-binary-format.txt and the Android 1.0.3
// additions (HEAP DUMP INFO, extra roots, PRIMITIVE ARRAY NODATA).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <optional>
#include <variant>
#include <vector>

namespace heapgraph {

using Bytes = std::span<const std::uint8_t>;
using ObjectId = std::uint64_t;  // an address (HPROF identifier) as written in the dump

enum class DumpFormat { hprof, gzip, phd, classic, unknown };

// Recognises a dump by content, never by file name.
DumpFormat detect_format(Bytes head);
std::string format_name(DumpFormat format);

// A decode problem: where (absolute offset), in which record, and what was expected.
struct [[nodiscard]] DecodeError {
    std::uint64_t offset = 0;
    std::string record;
    std::string message;
};

// Thrown by code that has a file name to add; what() reads
// "FILE @0x0001f3a0: INSTANCE_DUMP needs 4096 bytes, segment ends at 0x0001f800".
class DumpError : public std::runtime_error {
public:
    DumpError(const std::string& file, const DecodeError& error);
    DecodeError error;
};

std::string hex_offset(std::uint64_t offset);

// ---- Java's size limits, shared by every format -------------------------------------------
// A Java array holds at most 2^31 - 1 elements (its length is an int), so no object is larger
// than a long[] or double[] of that length: 16 GiB of elements plus a header. A dump that
// gives a longer array or a larger object is malformed, and the decoders refuse it where they
// read it (PHD array lengths, classic OBJ/CLS sizes); HPROF lengths are u4 and its size model
// multiplies them in 64 bits, so its sizes stay below 2^35 without a check.
// Validating each object at the source is what keeps sums of sizes from wrapping, but it is
// not enough alone: 2^32 nodes of 2^34 bytes would still pass 2^64. So a heap's total is also
// held below kMaxHeapBytes as its objects are added (add_heap_bytes); then every sum over a
// set of objects (histogram rows and totals, class and loader totals, retained sizes, the
// difference of two dumps) fits in a uint64, and in an int64 too.
constexpr std::uint64_t kMaxJavaArrayLength = 0x7FFFFFFF;
constexpr std::uint64_t kMaxJavaObjectBytes = kMaxJavaArrayLength * 8 + 64;  // room for any header and padding
constexpr std::uint64_t kMaxHeapBytes = std::uint64_t{1} << 63;  // no 64-bit VM addresses more
// Adds an object's size to a heap's running total; false, leaving it unchanged, when the total
// would pass kMaxHeapBytes.
inline bool add_heap_bytes(std::uint64_t& total, std::uint64_t bytes) {
    if (bytes > kMaxHeapBytes - total) return false;
    total += bytes;
    return true;
}

// ---- HPROF ---------------------------------------------------------------------------

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

// Reads the 9-byte record header at `offset`; checks the tag is known and the body fits.
std::variant<RecordFrame, DecodeError> read_record_frame(Bytes file, std::uint64_t offset);

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

enum class BasicType : std::uint8_t {
    object = 2, boolean = 4, char_ = 5, float_ = 6, double_ = 7, byte = 8, short_ = 9,
    int_ = 10, long_ = 11
};
// Size of a value of `type` in the dump (object = id size); 0 for an invalid type code.
std::uint32_t basic_type_size(std::uint8_t type, std::uint32_t id_size);
std::string_view basic_type_java_name(BasicType type);  // "int", "boolean", ...

enum class RootKind : std::uint8_t {
    unknown, jni_global, jni_local, java_frame, native_stack, sticky_class, thread_block,
    monitor_used, thread_object, interned_string, finalizing, debugger, reference_cleanup,
    vm_internal, jni_monitor, unreachable, system_class, count_
};
std::string_view root_kind_name(RootKind kind);

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

// Finds where the sub-record starting at `pos` ends without decoding it.
// Returns the size, 0 when more bytes are needed than `bytes` holds, or an error.
std::variant<std::uint64_t, DecodeError> sub_record_size(Bytes bytes, std::uint64_t pos,
                                                         std::uint32_t id_size);

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

enum class ObjectKind : std::uint8_t { instance, object_array, primitive_array, class_object };

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

// Java form of a class name as dumps write it: "java/lang/String" and "java.lang.String"
// give "java.lang.String"; "[Ljava/lang/String;" gives "java.lang.String[]"; "[[I" "int[][]".
std::string java_class_name(std::string_view dump_name);

// ---- PHD ----------------------------------------------------------------------------------
// IBM / OpenJ9 Portable Heap Dump (specs: ibm-phd-format.txt, openj9-heapdump-phd-and-
// classic.md; where they are silent, OpenJ9 DTFJ's HeapdumpReader). Records are packed
// relative to the previous one (address gaps, a cache of the last 4 classes), so decoding
// needs the state left by every record before: scan_phd_runs() walks the body once, cheaply,
// and cuts it into runs that each carry that state; decode_phd_run() then decodes runs in
// any order or in parallel.

struct PhdHeader {
    int version = 0;          // 4, 5 or 6
    std::uint32_t flags = 0;  // as written: 1 = 64-bit words, 2 = all objects hashed, 4 = J9
    bool words64 = false, all_hashed = false, j9 = false;
    std::string full_version;  // header record 4, "" when absent
    std::uint64_t body_offset = 0;  // first record, just after the start-of-dump tag 2
    // Header record 1 (older writers only; J9 never writes it). Hints, not checked.
    std::uint32_t total_objects_hint = 0, total_refs_hint = 0;
    // Header record 3 (IBM 1.4.2 "Sovereign"): seeds of the hash codes that dump omits.
    std::uint32_t hashcode_random1 = 0, hashcode_random2 = 0;

    std::uint32_t word_bytes() const { return words64 ? 8 : 4; }
    // Gaps and references count words of 1 << gap_shift bytes (DTFJ: 4-byte units in v5 and
    // in every J9 dump, 8-byte units otherwise).
    int gap_shift() const { return version == 5 || j9 ? 2 : 3; }
    // J9 2.3-2.5 hashed every object with a 16-bit code, stored as a short in every record;
    // other dumps store an int hash only where a record's own flag says so.
    bool short_hashes() const { return j9 && all_hashed; }
    // Before IBM defect 78432 (full versions ending "0917") a primitive array record of size
    // code 3 held an int gap and an int length instead of two longs.
    bool pre78432() const;
};

std::variant<PhdHeader, DecodeError> read_phd_header(Bytes file);

// The decoder state at a record boundary: what the records before it left behind.
struct PhdState {
    std::uint64_t offset = 0;   // of the next record
    std::uint64_t address = 0;  // of the previous record: the next gap is relative to it
    std::uint64_t class_cache[4] = {};  // classes of the last 4 medium/long object records
    std::uint32_t next_cache_slot = 0;  // round robin: the slot the next class overwrites
};
PhdState phd_initial_state(const PhdHeader& header);  // at header.body_offset

// Whole records from start.offset up to (not including) end.
struct PhdRun {
    PhdState start;
    std::uint64_t end = 0;
};

// Walks every record once, cutting a run at the first record boundary at least
// `target_run_bytes` after the run's start. The last run ends at the end-of-dump tag 3, which
// must be the file's last byte. An empty body gives no runs.
// With `cut` set (--allow-truncated), a record the end of the file cuts (or a missing end tag)
// ends the runs before it and is reported there instead of failing the scan.
std::variant<std::vector<PhdRun>, DecodeError> scan_phd_runs(Bytes file, const PhdHeader& header,
                                                             std::uint64_t target_run_bytes,
                                                             std::optional<DecodeError>* cut = nullptr);

// Record kinds, to count records and to name them in errors ("PHD short object record").
enum class PhdRecordKind : std::uint8_t {
    short_object, medium_object, long_object, primitive_array, long_primitive_array,
    object_array_old /* tag 5 */, object_array /* tag 8 */, class_record, count_
};
std::string phd_record_name(PhdRecordKind kind);

struct PhdObject {
    ObjectId address = 0;
    // As written; 0 for primitive arrays. For object arrays the writers put the element class
    // (component type) here, not the array class: String[] names java/lang/String (OpenJ9
    // writeArrayObjectRecord; DTFJ still checks which at load time).
    ObjectId class_address = 0;
    ObjectKind kind = ObjectKind::instance;  // instance, object_array or primitive_array
    std::uint8_t element_type = 0;  // primitive arrays: a BasicType code (PHD code + 4)
    std::uint64_t length = 0;       // arrays: elements (tag 8: the true length, nulls included)
    std::uint64_t instance_size = 0;  // v6 arrays: bytes on the heap; 0 when not written
    std::uint64_t first_ref = 0;    // into PhdRecords::refs
    std::uint32_t ref_count = 0;
    std::uint64_t file_offset = 0;  // of the record's tag
};
struct PhdClass {
    ObjectId address = 0, super_address = 0;
    std::string name;  // as written: "java/lang/String", "[I", "[Ljava/lang/Object;"
    std::uint32_t instance_size = 0;  // bytes of an instance, as the VM gave it
    std::uint64_t class_bytes = 0;    // of the class object itself: PHD never gives it (0); classic CLS does
    // Every non-null reference the record lists: statics, and in J9 dumps also the class
    // object's own fields, its class loader, and the classes its constant pool, super classes
    // and interfaces name (OpenJ9 rasdump/heapdump.cpp, writeClassRecord).
    std::vector<ObjectId> static_refs;
    std::optional<std::uint32_t> hash;
    std::uint64_t file_offset = 0;
};
struct PhdRecords {
    std::vector<PhdObject> objects;
    std::vector<ObjectId> refs;  // non-null, absolute; object arrays in index order
    std::vector<PhdClass> classes;
    std::uint64_t counts_by_kind[16] = {};  // by PhdRecordKind
    // Tolerated producer quirks, counted so that reports can show them:
    // J9 writes an object's class address as its first "reference" (DTFJ drops it too);
    std::uint64_t class_refs_dropped = 0;
    // a reference that lands on address 0 is a null the writer did not omit.
    std::uint64_t null_refs_dropped = 0;
};

// Decodes the records of one run (from scan_phd_runs, or any run that starts at a record
// boundary with the right state and ends at one).
std::variant<PhdRecords, DecodeError> decode_phd_run(Bytes file, const PhdHeader& header,
                                                     const PhdRun& run);
// The same into `out`, whose buffers are reused (a decoder thread keeps one).
std::optional<DecodeError> decode_phd_run_into(Bytes file, const PhdHeader& header, const PhdRun& run,
                                               PhdRecords& out);

// ---- javacore ------------------------------------------------------------------------------
// The javacore an IBM/OpenJ9 JVM writes with a PHD (research notes: OpenJ9 DTFJ's javacore
// parser and how Eclipse MAT uses it for a PHD).
struct Javacore {
    // The java/lang/Thread objects of the threads that were alive (states R, CW, P, B, MW),
    // once each, in file order. Java 7+ javacores name them ("java/lang/Thread:0x..."); IBM
    // 1.4.2 ones give only a TID, which there is the Thread object (no "3XMTHREADINFO1"
    // line follows); J9 2.4 (Java 6) ones give only the J9VMThread, which is no heap object.
    std::vector<ObjectId> thread_objects;
    struct Class {
        std::string name;  // as written: "java/lang/String"
        ObjectId address = 0;  // J9: the J9Class, not the heap class; 1.4.2: the heap class
    };
    // "2CLTEXTCLLOAD" sections: each loader's heap object and the classes it loaded. The
    // object is the address in parentheses, or the "Shadow" address (1.4.2); 0 for none.
    struct Loader {
        std::string name;  // "*System*", "sun/misc/Launcher$AppClassLoader"
        ObjectId object = 0;
        std::vector<Class> classes;
    };
    std::vector<Loader> loaders;
};
Javacore read_javacore(std::string_view text);

}  // namespace heapgraph

#include "classic.h"
