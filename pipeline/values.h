// The value reader: field values and array contents, read back from an HPROF dump's records
// after the graph is built (the graph keeps no values). One parallel pass over the heap
// dump (pipeline/values.cpp) collects what the content analyses ask for:
//   - every java.lang.String instance: its value array and, where the JDK has them, its
//     coder (JDK 9+ compact strings) and offset/count (JDK 6 substrings);
//   - every primitive array: its length, element type, where its elements lie in the file
//     and a hash of them, so that equal contents group without keeping any content.
// Records are kept by address (sorted); node ids are found by one merge with the dump's
// sorted addresses, never a search per record. PHD and classic text hold no values.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats.h"
#include "pipeline.h"

namespace heapgraph {

struct DumpSource;

struct StringObject {
    ObjectId address = 0, value = 0;  // the String, its char[] or byte[]
    std::int32_t offset = -1, count = -1;  // JDK 6: the slice of `value` it uses; -1: the whole array
    std::int8_t coder = -1;                // JDK 9+: 0 Latin-1, 1 UTF-16; -1: no coder (char[])
};

struct ArrayObject {
    static constexpr std::uint64_t kSplit = ~std::uint64_t{0};
    ObjectId address = 0;
    std::uint64_t data_offset = kSplit;  // file offset of the elements; kSplit: not contiguous in the file
    std::uint32_t length = 0;
    std::uint8_t type = 0;     // BasicType
    std::uint64_t hash = 0;    // of the element bytes (libdeflate's CRC-32 and Adler-32)
};

struct DumpValues {
    bool available = false;
    std::string unavailable;  // why not: "PHD records hold no field values"
    std::vector<StringObject> strings;  // sorted by address
    std::vector<ArrayObject> arrays;    // primitive arrays, sorted by address
    std::uint64_t split_arrays = 0;     // arrays whose record a segment boundary cuts: not compared
    // JDK 9+: java.lang.StringUTF16.HI_BYTE_SHIFT, the byte order of UTF-16 byte[] values
    // (0: little-endian, as on x86; 8: big-endian). char[] elements are always big-endian.
    bool utf16_big_endian = false;
    std::shared_ptr<const DumpSource> source;  // keeps the file mapped for element reads

    // The element bytes of `a` (empty when split).
    Bytes elements(const ArrayObject& a) const;
};

// Reads the values of `dump` in one pass over its heap dump; `progress` draws the pass.
DumpValues read_values(const LoadedDump& dump, const std::function<void(const ProgressEvent&)>& progress = {});

// Hash of element bytes, as ArrayObject::hash.
std::uint64_t content_hash(Bytes bytes);

}  // namespace heapgraph
