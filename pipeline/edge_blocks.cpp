#include "edge_blocks.h"

#include <algorithm>

namespace heapgraph {

namespace {

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t value) {
    while (value >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(value | 0x80));
        value >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(value));
}

std::uint64_t zigzag(std::int64_t value) {
    return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
    return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

// Objects of one class often come in runs: remember the last lookup.
struct OrdinalCache {
    ObjectId class_id = 0;
    std::uint32_t ordinal = 0;
    std::uint32_t lookup(const ClassTable& classes, ObjectId id) {
        if (id != class_id || id == 0) {
            auto found = classes.ordinal.find(id);
            class_id = id;
            ordinal = found == classes.ordinal.end() ? 0 : found->second;
        }
        return ordinal;
    }
};

void encode_object(EdgeBlock& block, const HeapRecords& records, const ObjectRecord& o,
                   const ClassTable& classes, OrdinalCache& cache, std::uint64_t& position, ObjectId& address) {
    put_varint(block.stream, o.position - position);
    position = o.position;
    block.stream.push_back(static_cast<std::uint8_t>(o.kind));
    put_varint(block.stream, zigzag(static_cast<std::int64_t>(o.id - address)));
    address = o.id;
    std::uint32_t ordinal = 0;
    if (o.kind == ObjectKind::primitive_array) {
        block.stream.push_back(o.element_type);
    } else {
        ordinal = cache.lookup(classes, o.class_id);
        put_varint(block.stream, ordinal);
        if (ordinal == 0) put_varint(block.stream, o.class_id);
    }
    if (o.kind != ObjectKind::instance || ordinal == 0) put_varint(block.stream, o.length);
    put_varint(block.stream, o.ref_count);
    for (std::uint64_t r = o.first_ref; r < o.first_ref + o.ref_count; ++r)
        put_varint(block.stream, zigzag(static_cast<std::int64_t>(records.refs[r] - o.id)));
}

}  // namespace

std::variant<EdgeBlock, DecodeError> decode_to_block(const HeapChunk& chunk, const ClassTable& classes) {
    // Each decoder thread reuses its record buffers: fresh ones for every 4 MiB chunk cost
    // more in page faults and zeroing than the decoding itself.
    thread_local HeapRecords records;
    if (auto error = decode_heap_chunk_into(chunk, classes.context, records)) return std::move(*error);
    EdgeBlock block;
    block.chunk_offset = chunk.file_offset(0);
    if (records.deferred_on) {
        block.deferred_on = records.deferred_on;
        return block;
    }
    block.objects = records.objects.size();
    block.refs = records.refs.size();
    block.roots = records.roots;
    std::copy(std::begin(records.counts), std::end(records.counts), block.counts.begin());
    thread_local std::vector<std::uint8_t> stream;
    stream.clear();
    std::swap(block.stream, stream);
    std::uint64_t position = 0;
    ObjectId address = 0;
    OrdinalCache cache;
    for (const ObjectRecord& o : records.objects) {
        encode_object(block, records, o, classes, cache, position, address);
        block.range.add(o.id);
        if (o.kind == ObjectKind::object_array && cache.lookup(classes, o.class_id) == 0)
            block.unknown_classes.push_back(o.class_id);
    }
    std::sort(block.unknown_classes.begin(), block.unknown_classes.end());
    block.unknown_classes.erase(std::unique(block.unknown_classes.begin(), block.unknown_classes.end()),
                                block.unknown_classes.end());
    block.unreadable_instances = records.unreadable_classes.size();
    block.unreadable_classes = records.unreadable_classes;
    std::sort(block.unreadable_classes.begin(), block.unreadable_classes.end());
    block.unreadable_classes.erase(std::unique(block.unreadable_classes.begin(), block.unreadable_classes.end()),
                                   block.unreadable_classes.end());
    // Keep the scratch buffer for the next chunk; the block gets an exact-size copy.
    std::swap(block.stream, stream);
    block.stream.assign(stream.begin(), stream.end());
    // Positions are chunk-relative; a chunk assembled from pieces maps them at read time,
    // which only error messages need: store the first piece's offset.
    return block;
}

std::uint64_t BlockReader::varint() {
    std::uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
        std::uint8_t byte = block_.stream[pos_++];
        value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return value;
    }
}

bool BlockReader::next(Entry& e) {
    if (pos_ >= block_.stream.size()) return false;
    position_ += varint();
    e.file_offset = block_.chunk_offset + position_;
    e.kind = static_cast<ObjectKind>(block_.stream[pos_++]);
    address_ += static_cast<std::uint64_t>(unzigzag(varint()));
    e.address = address_;
    e.class_ordinal = 0;
    e.raw_class_id = 0;
    e.element_type = 0;
    e.length = 0;
    if (e.kind == ObjectKind::primitive_array) {
        e.element_type = block_.stream[pos_++];
    } else {
        e.class_ordinal = static_cast<std::uint32_t>(varint());
        if (e.class_ordinal == 0) e.raw_class_id = varint();
    }
    if (e.kind != ObjectKind::instance || e.class_ordinal == 0) e.length = varint();
    e.ref_count = static_cast<std::uint32_t>(varint());
    return true;
}

ObjectId BlockReader::next_ref(const Entry& e) {
    return e.address + static_cast<std::uint64_t>(unzigzag(varint()));
}

}  // namespace heapgraph
