// What every format reader shares: bytes and addresses, decode errors with their offsets,
// recognising a dump's format, Java's size limits, and the kinds of objects, values and GC
// roots that records of any format name.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace heapgraph {

using Bytes = std::span<const std::uint8_t>;

// `count` bytes of `bytes` from `offset`; empty when they pass its end (a file that shrank,
// or a length a dump claims).
inline Bytes bytes_at(Bytes bytes, std::uint64_t offset, std::uint64_t count) {
    return offset <= bytes.size() && count <= bytes.size() - offset ? bytes.subspan(offset, count) : Bytes{};
}

// Whether `bytes` opens with `prefix`, byte for byte.
inline bool starts_with(Bytes bytes, std::string_view prefix) {
    return bytes.size() >= prefix.size() && std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

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

// What the last class ids looked up gave, direct-mapped by id: a decoder's objects come a few
// classes at a time, and a hash-map lookup for every object (its class's layout, its class's
// ordinal) cost more than the rest of its decoding. Id 0 is never kept.
class RecentIds {
public:
    template <typename Lookup>
    std::uint32_t get(ObjectId id, Lookup&& lookup) {
        Entry& entry = entries_[(id >> 3) % entries_.size()];
        if (entry.id != id || id == 0) entry = {id, lookup(id)};
        return entry.value;
    }

private:
    struct Entry {
        ObjectId id = 0;
        std::uint32_t value = 0;
    };
    std::array<Entry, 64> entries_{};
};

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

// ---- what records of every format name ----------------------------------------------------

enum class ObjectKind : std::uint8_t { instance, object_array, primitive_array, class_object };

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

// Java form of a class name as dumps write it: "java/lang/String" and "java.lang.String"
// give "java.lang.String"; "[Ljava/lang/String;" gives "java.lang.String[]"; "[[I" "int[][]".
std::string java_class_name(std::string_view dump_name);

}  // namespace heapgraph
