// The compressed edge list: each decoded chunk becomes one block of varint-encoded object
// entries, held until the CSR is built. An entry is
//   position delta, kind byte, zigzag address delta (from the previous entry),
//   class ordinal (instances, object arrays) or element type (primitive arrays),
//   length (arrays), the shallow size when the format gives one (kind byte | kSized),
//   reference count, then each reference as a zigzag delta from the object's own address
//   (heaps allocate together what refers to each other, so most deltas fit two or three bytes).
// Null references are not stored. Class ordinal 0 means "no class record known to the
// decoder": the raw class id follows, and an instance then also has a length (its field
// bytes). A block costs about a third of the plain u64 records it replaces.
//
// BlockSink is the heap sink every format's decoder drives, one chunk at a time: add_object,
// add_root. What it writes, the one builder (heap_builder.h) turns into the graph.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "address_index.h"
#include "formats.h"

namespace heapgraph {

// A class an object names without an ordinal (see ClassKey in heap_builder.h).
struct ClassKeyRef {
    ObjectKind kind = ObjectKind::instance;
    ObjectId id = 0;  // primitive arrays: the element type
};

// What decoders of one moment know about classes: layouts and the ordinal (1-based, in
// class-dump order) of each class dump. Immutable once published to decoders.
struct ClassTable {
    HprofContext context;
    std::unordered_map<ObjectId, std::uint32_t> ordinal;
};

// The kind byte's flag for an entry that carries its shallow size.
inline constexpr std::uint8_t kSized = 0x80;

// One block's entries: a slice of a slab that blocks decoded about the same time share. A
// block is about 140 KB, which as a column of its own came from malloc in 4 KB pages: the
// 2 GB dump's 2,141 blocks took 75K page faults to copy in, on a machine where a fault costs
// about 15 us. A slab is a large column, in huge pages (or, past the memory budget, a file),
// freed with the last block that holds a slice of it.
class EntryStream {
public:
    EntryStream() = default;
    // A copy of `bytes`, in the slab being filled (safe from any thread).
    static EntryStream store(std::span<const std::uint8_t> bytes);

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const std::uint8_t* data() const { return data_; }
    std::uint8_t operator[](std::size_t i) const { return data_[i]; }

private:
    std::shared_ptr<const graph::Column<std::uint8_t>> slab_;
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

struct EdgeBlock {
    // The entries, exact size. In slabs that are columns: past the memory budget the
    // compressed edge list (about a third of the dump) goes to files.
    EntryStream stream;
    std::uint64_t objects = 0, refs = 0;
    std::vector<RootRecord> roots;
    std::array<std::uint64_t, 256> counts{};
    std::uint64_t chunk_offset = 0;  // file offset of the chunk's first byte
    ObjectId deferred_on = 0;        // set: decode again once all class dumps are known
    AddressIndex::Range range;       // of the objects' addresses
    std::vector<ObjectId> unknown_classes;  // array class ids with no class dump, ascending
    // Classes objects name by id or element type, without a class ordinal: each once, in
    // the order of first use (ordinal-0 instances and object arrays, primitive arrays).
    std::vector<ClassKeyRef> class_keys;
    // Instances kept without their fields (HeapRecords::unreadable_classes): how many, and
    // their classes, ascending.
    std::uint64_t unreadable_instances = 0;
    std::vector<ObjectId> unreadable_classes;
};

// One object as a decoder reports it. `class_id` names the class (HPROF: of the object;
// PHD and classic: an object array's element class); `shallow_bytes` is set when the format
// gives the size (HPROF's come from the size model).
struct SinkObject {
    ObjectId address = 0;
    ObjectKind kind = ObjectKind::instance;
    ObjectId class_id = 0;
    std::uint8_t element_type = 0;  // primitive arrays
    std::uint64_t length = 0;       // arrays: elements; an instance with no class: field bytes
    std::optional<std::uint64_t> shallow_bytes;
    std::uint64_t position = 0;     // of the record in its chunk (file offset - chunk_offset)
};

// The per-chunk heap sink: encodes what a decoder adds into `block`. One per chunk, on the
// decoder's thread; `ordinals` (may be null) turns class ids into class ordinals at once.
class BlockSink {
public:
    // The entries are written to `scratch` when given (a decoder thread's buffer, kept
    // between blocks), else to a buffer of the sink's own; finish() copies them to the block.
    BlockSink(EdgeBlock& block, const std::unordered_map<ObjectId, std::uint32_t>* ordinals,
              std::vector<std::uint8_t>* scratch = nullptr)
        : block_(block), ordinals_(ordinals), out_(scratch ? *scratch : own_) {}
    BlockSink(const BlockSink&) = delete;  // out_ may name own_
    BlockSink& operator=(const BlockSink&) = delete;

    // `refs`: non-null references, in record order.
    template <typename Refs>
    void add_object(const SinkObject& o, const Refs& refs) {
        begin_object(o, refs.size());
        // In batches: room for a huge array's every reference at once would be 10 bytes each.
        for (auto ref = refs.begin(); ref != refs.end();) {
            const auto batch = std::min<std::ptrdiff_t>(refs.end() - ref, kRefBatch);
            std::uint8_t* at = room(static_cast<std::size_t>(batch) * kVarintBytes);
            for (const auto last = ref + batch; ref != last; ++ref)
                at = put_varint(at, zigzag(static_cast<std::int64_t>(*ref - o.address)));
            cut(at);
        }
    }
    void add_root(const RootRecord& root) { block_.roots.push_back(root); }
    void finish();  // sorts the unknown array classes, hands the entries to the block

private:
    // Entries are written through a pointer into room made at the end of out_ (room), which is
    // then cut to what was written (cut): a store through a uint8_t* may alias the vector's
    // own pointers, and push_back reloaded them after every byte (3% of a run's CPU).
    std::uint8_t* room(std::size_t bytes) {
        const std::size_t size = out_.size();
        out_.resize(size + bytes);
        return out_.data() + size;
    }
    void cut(const std::uint8_t* end) { out_.resize(static_cast<std::size_t>(end - out_.data())); }
    static constexpr std::ptrdiff_t kRefBatch = 1024;
    void begin_object(const SinkObject& o, std::size_t refs);
    std::uint32_t ordinal_of(ObjectId class_id);
    void note_key(ObjectKind kind, ObjectId id);
    static constexpr std::size_t kVarintBytes = 10;  // a 64-bit value, 7 bits a byte
    static std::uint8_t* put_varint(std::uint8_t* at, std::uint64_t value) {
        while (value >= 0x80) {
            *at++ = static_cast<std::uint8_t>(value | 0x80);
            value >>= 7;
        }
        *at++ = static_cast<std::uint8_t>(value);
        return at;
    }
    static std::uint64_t zigzag(std::int64_t value) {
        return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
    }

    EdgeBlock& block_;
    const std::unordered_map<ObjectId, std::uint32_t>* ordinals_;
    std::vector<std::uint8_t> own_;
    std::vector<std::uint8_t>& out_;
    std::uint64_t position_ = 0;
    ObjectId address_ = 0;
    RecentIds recent_;  // ordinals by class id
    ClassKeyRef last_key_{ObjectKind::class_object, 0};
    std::unordered_set<ObjectId> keyed_[2];  // by kind: instance, object array
    std::bitset<256> primitive_keyed_;
};

// The HPROF sink driver: decodes a chunk and feeds its records to a BlockSink (the decode
// node of the flow graph).
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
        std::optional<std::uint64_t> shallow_bytes;  // when the format gives it
        std::uint32_t ref_count = 0;
    };

    bool next(Entry& entry);           // false at the end of the block
    ObjectId next_ref(const Entry& e);  // call exactly e.ref_count times after next()
    // Passes over e's references without decoding them (instead of next_ref).
    void skip_refs(const Entry& e) {
        for (std::uint32_t r = 0; r < e.ref_count; ++r)
            while (block_.stream[pos_++] & 0x80) {
            }
    }

private:
    std::uint64_t varint();
    const EdgeBlock& block_;
    std::size_t pos_ = 0;
    std::uint64_t position_ = 0;
    ObjectId address_ = 0;
};

// Calls `visit(entry)` for every entry of a block, passing over their references.
template <typename Visit>
void each_entry(const EdgeBlock& block, Visit visit) {
    BlockReader reader(block);
    BlockReader::Entry e;
    while (reader.next(e)) {
        reader.skip_refs(e);
        visit(e);
    }
}

}  // namespace heapgraph
