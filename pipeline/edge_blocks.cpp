#include "edge_blocks.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <span>

namespace heapgraph {

namespace {

std::int64_t unzigzag(std::uint64_t value) {
    return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

void sort_unique(std::vector<ObjectId>& ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

// Slabs double from 1 MB, so a small dump holds no more than it needs, up to 32 MB: the 2 GB
// dump's edge list (298 MB) is in 14, each a few huge-page faults.
constexpr std::size_t kFirstSlabBytes = std::size_t{1} << 20, kSlabBytes = std::size_t{32} << 20;

}  // namespace

EntryStream EntryStream::store(std::span<const std::uint8_t> bytes) {
    EntryStream out;
    if (bytes.empty()) return out;
    // The slab being filled is held by its blocks alone: once they are all freed, so is it,
    // and the next block starts a new one.
    static std::mutex mutex;
    static std::weak_ptr<graph::Column<std::uint8_t>> filling;
    static std::size_t used = 0;
    std::shared_ptr<graph::Column<std::uint8_t>> slab;
    std::size_t at = 0;
    {
        std::lock_guard lock(mutex);
        slab = filling.lock();
        if (!slab || slab->size() - used < bytes.size()) {
            const std::size_t next = slab ? std::min(2 * slab->size(), kSlabBytes) : kFirstSlabBytes;
            slab = std::make_shared<graph::Column<std::uint8_t>>(std::max(next, bytes.size()));
            filling = slab, used = 0;
        }
        at = used;
        used += bytes.size();
    }
    // Outside the lock: each block writes its own slice of the slab.
    std::memcpy(slab->data() + at, bytes.data(), bytes.size());
    out.data_ = slab->data() + at;
    out.size_ = bytes.size();
    out.slab_ = std::move(slab);
    return out;
}

std::uint32_t BlockSink::ordinal_of(ObjectId class_id) {
    if (!ordinals_) return 0;
    return recent_.get(class_id, [&](ObjectId id) {
        auto found = ordinals_->find(id);
        return found == ordinals_->end() ? 0 : found->second;
    });
}

void BlockSink::note_key(ObjectKind kind, ObjectId id) {
    if (last_key_.kind == kind && last_key_.id == id) return;
    last_key_ = {kind, id};
    bool fresh = kind == ObjectKind::primitive_array ? !primitive_keyed_.test(id) && (primitive_keyed_.set(id), true)
                                                     : keyed_[static_cast<std::size_t>(kind)].insert(id).second;
    if (fresh) block_.class_keys.push_back(last_key_);
}

void BlockSink::begin_object(const SinkObject& o, std::size_t refs) {
    // position, kind, address, ordinal or element type, class id, length, size, refs
    std::uint8_t* at = room(2 + 7 * kVarintBytes);
    at = put_varint(at, o.position - position_);
    position_ = o.position;
    *at++ = static_cast<std::uint8_t>(static_cast<std::uint8_t>(o.kind) | (o.shallow_bytes ? kSized : 0));
    at = put_varint(at, zigzag(static_cast<std::int64_t>(o.address - address_)));
    address_ = o.address;
    std::uint32_t ordinal = 0;
    if (o.kind == ObjectKind::primitive_array) {
        *at++ = o.element_type;
        note_key(o.kind, o.element_type);
    } else {
        ordinal = ordinal_of(o.class_id);
        at = put_varint(at, ordinal);
        if (ordinal == 0) {
            at = put_varint(at, o.class_id);
            note_key(o.kind, o.class_id);
            if (o.kind == ObjectKind::object_array) block_.unknown_classes.push_back(o.class_id);
        }
    }
    if (o.kind != ObjectKind::instance || ordinal == 0) at = put_varint(at, o.length);
    if (o.shallow_bytes) at = put_varint(at, *o.shallow_bytes);
    at = put_varint(at, refs);
    cut(at);
    block_.range.add(o.address);
    ++block_.objects;
    block_.refs += refs;
}

void BlockSink::finish() {
    sort_unique(block_.unknown_classes);
    block_.stream = EntryStream::store(out_);
    out_.clear();
}

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
    block.roots = records.roots;
    std::copy(std::begin(records.counts), std::end(records.counts), block.counts.begin());
    thread_local std::vector<std::uint8_t> stream;  // kept for the next chunk
    stream.clear();
    {
        BlockSink sink(block, &classes.ordinal, &stream);
        for (const ObjectRecord& o : records.objects) {
            std::span<const ObjectId> refs(records.refs.data() + o.first_ref, o.ref_count);
            sink.add_object({o.id, o.kind, o.class_id, o.element_type, o.length, std::nullopt, o.position}, refs);
        }
        sink.finish();
    }
    block.unreadable_instances = records.unreadable_classes.size();
    block.unreadable_classes = records.unreadable_classes;
    sort_unique(block.unreadable_classes);
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
    const std::uint8_t kind = block_.stream[pos_++];
    e.kind = static_cast<ObjectKind>(kind & ~kSized);
    address_ += static_cast<std::uint64_t>(unzigzag(varint()));
    e.address = address_;
    e.class_ordinal = 0;
    e.raw_class_id = 0;
    e.element_type = 0;
    e.length = 0;
    e.shallow_bytes.reset();
    if (e.kind == ObjectKind::primitive_array) {
        e.element_type = block_.stream[pos_++];
    } else {
        e.class_ordinal = static_cast<std::uint32_t>(varint());
        if (e.class_ordinal == 0) e.raw_class_id = varint();
    }
    if (e.kind != ObjectKind::instance || e.class_ordinal == 0) e.length = varint();
    if (kind & kSized) e.shallow_bytes = varint();
    e.ref_count = static_cast<std::uint32_t>(varint());
    return true;
}

ObjectId BlockReader::next_ref(const Entry& e) {
    return e.address + static_cast<std::uint64_t>(unzigzag(varint()));
}

}  // namespace heapgraph
