// Shallow sizes, 4 bytes a node instead of 8: every object short of 4 GiB fits 32 bits,
// and the rare one past it (a Java array of more than 2^29 longs) is kept beside, its
// node's entry marking it. Reads cost one load and a branch that is almost never taken.
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
    // Node v's 4-byte word, for a copy kept elsewhere (in another order); size_of(word, v)
    // gives the size back, looking it up only for the rare large one.
    std::uint32_t word(std::size_t v) const { return small_[v]; }
    std::uint64_t size_of(std::uint32_t word, std::size_t v) const { return word != kLarge ? word : large(v); }
    // Safe from several threads for distinct nodes.
    void set(std::size_t v, std::uint64_t bytes) {
        if (bytes < kLarge) {
            small_[v] = static_cast<std::uint32_t>(bytes);
            return;
        }
        std::lock_guard lock(large_mutex());
        large_[v] = bytes;
        small_[v] = kLarge;
    }
    void push_back(std::uint64_t bytes) {
        small_.push_back(0);
        set(small_.size() - 1, bytes);
    }
    void assign(std::size_t n, std::uint64_t bytes) {
        large_.clear();
        small_.assign(n, static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, kLarge)));
        if (bytes >= kLarge)
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
    static constexpr std::uint32_t kLarge = 0xFFFFFFFFu;
    static std::mutex& large_mutex() {
        static std::mutex mutex;  // one for all: large sizes are rare
        return mutex;
    }
    std::uint64_t large(std::size_t v) const {
        std::lock_guard lock(large_mutex());
        return large_.at(v);
    }

    Column<std::uint32_t> small_;
    std::unordered_map<std::size_t, std::uint64_t> large_;  // the sizes of 2^32 - 1 bytes and more
};

}  // namespace heapgraph::graph
