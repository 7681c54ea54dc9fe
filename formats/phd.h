// IBM / OpenJ9 Portable Heap Dump: a pure decoder (phd.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common.h"

namespace heapgraph {

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

}  // namespace heapgraph
