// Maps dump addresses to dense node ids (ids in ascending address order) without a sort
// and without a hash table, when the heap is dense: a bitmap with one bit per possible
// object start (address step = the GCD of all address gaps) and a running count per
// 64-bit word, so node_of() is two loads and a popcount. A sparse heap (addresses spread
// far apart, as in Android's separate spaces) falls back to a sorted array and binary search.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace heapgraph {

class AddressIndex {
public:
    static constexpr std::uint32_t kMissing = 0xFFFFFFFFu;

    struct Range {
        std::uint64_t min = ~std::uint64_t{0}, max = 0, step = 0, count = 0;
        void add(std::uint64_t address);  // one address, in any order
        void merge(const Range& other);
    };

    // Prepares for the addresses that `range` describes; insert() them all, then finish().
    explicit AddressIndex(const Range& range);

    // Thread-safe. Returns false when the address was inserted before (a duplicate).
    bool insert(std::uint64_t address);
    void finish();  // computes ranks (dense) or sorts (sparse); reports duplicates of sparse

    std::uint32_t node_of(std::uint64_t address) const;
    std::uint32_t size() const { return count_; }
    bool dense() const { return dense_; }
    std::vector<std::uint64_t> addresses() const;  // by node id
    std::uint64_t sparse_duplicates() const { return sparse_duplicates_; }

private:
    bool dense_ = false;
    std::uint64_t min_ = 0, step_ = 1;
    std::vector<std::uint64_t> bits_;
    std::vector<std::uint32_t> rank_;  // set bits before each word
    std::vector<std::uint64_t> sorted_;
    std::uint32_t count_ = 0;
    std::uint64_t sparse_duplicates_ = 0;
};

}  // namespace heapgraph
