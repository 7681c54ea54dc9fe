// One bit a node, for flags a loop tests at every edge: 4 MB for 32M nodes stays in the
// cache where a byte or 4-byte column does not.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "huge_vector.h"

namespace heapgraph::graph {

class NodeBits {
public:
    NodeBits() = default;
    explicit NodeBits(std::size_t nodes) : words_((nodes + 63) / 64, 0) {}
    bool test(std::size_t v) const { return (words_[v >> 6] >> (v & 63)) & 1; }
    void set(std::size_t v) { words_[v >> 6] |= std::uint64_t{1} << (v & 63); }
    void clear_word_of(std::size_t v) { words_[v >> 6] = 0; }  // v's and its 63 neighbours' bits
    std::uint64_t& word(std::size_t i) { return words_[i]; }
    std::uint64_t word(std::size_t i) const { return words_[i]; }
    std::size_t words() const { return words_.size(); }
    bool empty() const { return words_.empty(); }
    template <typename Archive>
    void keep(Archive& archive) {  // the index's file (pipeline/kept_dump.cpp)
        archive.io(words_);
    }
    std::size_t count() const {  // bits set
        std::size_t n = 0;
        for (std::uint64_t word : words_) n += static_cast<std::size_t>(std::popcount(word));
        return n;
    }

private:
    HugeVector<std::uint64_t> words_;  // huge pages: every edge of a walk tests a bit
};

// Bits with the count of set bits before each word: a column by rank(v) holds a value for the
// set nodes alone (2 bits a node beside it).
class RankedBits {
public:
    RankedBits() = default;
    explicit RankedBits(NodeBits&& bits) : bits_(std::move(bits)), below_(bits_.words()) {
        for (std::size_t i = 0; i < bits_.words(); ++i)
            below_[i] = count_, count_ += static_cast<std::size_t>(std::popcount(bits_.word(i)));
    }
    bool test(std::size_t v) const { return !bits_.empty() && bits_.test(v); }
    std::size_t rank(std::size_t v) const {  // set bits below v
        const std::uint64_t lower = (std::uint64_t{1} << (v & 63)) - 1;
        return below_[v >> 6] + static_cast<std::size_t>(std::popcount(bits_.word(v >> 6) & lower));
    }
    std::size_t count() const { return count_; }

private:
    NodeBits bits_;
    HugeVector<std::uint64_t> below_;
    std::size_t count_ = 0;
};

}  // namespace heapgraph::graph
