// The compressed edge list: each decoded chunk becomes one block of varint-encoded object
// entries, held until the CSR is built. An entry is
//   position delta, kind byte, zigzag address delta (from the previous entry),
//   class ordinal (instances, object arrays) or element type (primitive arrays),
//   length (arrays), reference count, then each reference as a zigzag delta from the
//   object's own address (heaps allocate together what refers to each other, so most
//   deltas fit two or three bytes).
// Null references are not stored. Class ordinal 0 means "no class dump": the raw class id
// follows, and an instance then also has a length (its field bytes). A block costs about a third of the plain u64 records it replaces.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <variant>
#include <vector>

#include "address_index.h"
#include "formats.h"

namespace heapgraph {

// What decoders of one moment know about classes: layouts and the ordinal (1-based, in
// class-dump order) of each class dump. Immutable once published to decoders.
struct ClassTable {
    HprofContext context;
    std::unordered_map<ObjectId, std::uint32_t> ordinal;
};

struct EdgeBlock {
    std::vector<std::uint8_t> stream;
    std::uint64_t objects = 0, refs = 0;
    std::vector<RootRecord> roots;
    std::array<std::uint64_t, 256> counts{};
    std::uint64_t chunk_offset = 0;  // file offset of the chunk's first byte
    ObjectId deferred_on = 0;        // set: decode again once all class dumps are known
    AddressIndex::Range range;       // of the objects' addresses
    std::vector<ObjectId> unknown_classes;  // array class ids with no class dump, ascending
    // Instances kept without their fields (HeapRecords::unreadable_classes): how many, and
    // their classes, ascending.
    std::uint64_t unreadable_instances = 0;
    std::vector<ObjectId> unreadable_classes;
};

// Decodes a chunk and encodes it as a block (the decode node of the flow graph).
std::variant<EdgeBlock, DecodeError> decode_to_block(const HeapChunk& chunk, const ClassTable& classes);

// Walks a block's entries in order.
class BlockReader {
public:
    explicit BlockReader(const EdgeBlock& block) : block_(block) {}

    struct Entry {
        std::uint64_t file_offset = 0;
        ObjectId address = 0;
        ObjectKind kind = ObjectKind::instance;
        std::uint32_t class_ordinal = 0;  // 0: none (primitive array, or no class dump)
        ObjectId raw_class_id = 0;        // when class_ordinal is 0 for a non-primitive
        std::uint8_t element_type = 0;
        std::uint64_t length = 0;         // arrays; field bytes of an instance with no class dump
        std::uint32_t ref_count = 0;
    };

    bool next(Entry& entry);           // false at the end of the block
    ObjectId next_ref(const Entry& e);  // call exactly e.ref_count times after next()

private:
    std::uint64_t varint();
    const EdgeBlock& block_;
    std::size_t pos_ = 0;
    std::uint64_t position_ = 0;
    ObjectId address_ = 0;
};

}  // namespace heapgraph
