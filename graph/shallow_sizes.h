// Shallow sizes, 2 bytes a node instead of 8: a size that is a multiple of 8 (every HotSpot
// object's) is kept in 8-byte units below 256 KiB, any other below 32 KiB as it is, and the
// few beyond (large arrays) beside, their node's entry marking them. Reads cost one load, a
// shift and a branch that is almost never taken. 4 bytes until stop 57: 66 MB less through
// the whole run of the 2 GB BigHeap dump.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <span>
#include <unordered_map>

#include "column.h"

namespace heapgraph::graph {

class ShallowSizes {
public:
    ShallowSizes() = default;
    ShallowSizes(std::initializer_list<std::uint64_t> sizes) : ShallowSizes(std::span<const std::uint64_t>(sizes)) {}
    explicit ShallowSizes(std::span<const std::uint64_t> sizes) {
        assign(sizes.size(), 0);
        for (std::size_t v = 0; v < sizes.size(); ++v) set(v, sizes[v]);
    }

    std::uint64_t operator[](std::size_t v) const { return size_of(word(v), v); }
    // Node v's 2-byte word, for a copy kept elsewhere (in another order); size_of(word, v)
    // gives the size back, looking it up only for the rare large one.
    std::uint32_t word(std::size_t v) const { return small_[v]; }
    std::uint64_t size_of(std::uint32_t word, std::size_t v) const {
        if (word == kLarge) return large(v);
        return word & 1 ? word >> 1 : std::uint64_t{word >> 1} << 3;
    }
    // Safe from several threads for distinct nodes.
    void set(std::size_t v, std::uint64_t bytes) {
        const std::uint16_t word = encode(bytes);
        if (word != kLarge && small_[v] != kLarge) {
            small_[v] = word;
            return;
        }
        std::lock_guard lock(large_mutex());
        if (word == kLarge) large_[v] = bytes;
        else large_.erase(v);
        small_[v] = word;
    }
    void push_back(std::uint64_t bytes) {
        small_.push_back(0);
        set(small_.size() - 1, bytes);
    }
    void assign(std::size_t n, std::uint64_t bytes) {
        large_.clear();
        small_.assign(n, encode(bytes));
        if (encode(bytes) == kLarge)
            for (std::size_t v = 0; v < n; ++v) large_[v] = bytes;
    }
    std::size_t size() const { return small_.size(); }
    template <typename Archive>
    void keep(Archive& archive) {  // the index's file (pipeline/kept_dump.cpp)
        archive.io(small_), archive.io(large_);
    }
    bool empty() const { return small_.empty(); }
    void release_pages(std::size_t first, std::size_t last) const { small_.release_pages(first, last); }
    friend bool operator==(const ShallowSizes& a, std::span<const std::uint64_t> b) {
        if (a.size() != b.size()) return false;
        for (std::size_t v = 0; v < b.size(); ++v)
            if (a[v] != b[v]) return false;
        return true;
    }

private:
    static constexpr std::uint16_t kLarge = 0xFFFF;
    static constexpr std::uint64_t kUnits = 0x7FFF;  // 8-byte units, or bytes, below it
    static std::uint16_t encode(std::uint64_t bytes) {
        if (bytes % 8 == 0 && bytes / 8 < kUnits) return static_cast<std::uint16_t>(bytes / 8 << 1);
        if (bytes < kUnits) return static_cast<std::uint16_t>(bytes << 1 | 1);
        return kLarge;
    }
    static std::mutex& large_mutex() {
        static std::mutex mutex;  // one for all: large sizes are rare
        return mutex;
    }
    std::uint64_t large(std::size_t v) const {
        std::lock_guard lock(large_mutex());
        return large_.at(v);
    }

    Column<std::uint16_t> small_;
    std::unordered_map<std::size_t, std::uint64_t> large_;  // the sizes encode() cannot hold
};

}  // namespace heapgraph::graph
