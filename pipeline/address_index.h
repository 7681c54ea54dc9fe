// Maps dump addresses to dense node ids (ids in ascending address order) without a sort
// and without a hash table: one bit per possible object start (address step = the GCD of
// all address gaps), in pages of 65,536 slots that exist only where objects are (a heap's
// generations lie gigabytes apart), with a running count per page and per 64-bit word, so
// node_of() is a few loads and a popcount. An address span too wide even for the page table
// falls back to a sorted array and binary search.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "column.h"
#include "heap_graph.h"

namespace heapgraph {

class AddressIndex {
public:
    using NodeId = graph::NodeId;
    static constexpr NodeId kMissing = graph::kNoNode;

    struct Range {
        std::uint64_t min = ~std::uint64_t{0}, max = 0, step = 0, count = 0, first = 0;
        void add(std::uint64_t address);  // one address, in any order
        void merge(const Range& other);
    };

    AddressIndex() = default;  // of no address
    // Prepares for the addresses that `range` describes; insert() them all, then finish().
    explicit AddressIndex(const Range& range);
    ~AddressIndex();
    AddressIndex(AddressIndex&&) = default;
    AddressIndex& operator=(AddressIndex&&) = default;
    // A finished index of distinct addresses (tests, small tools).
    static AddressIndex of(std::span<const std::uint64_t> addresses);

    // Thread-safe. Returns false when the address was inserted before (a duplicate).
    bool insert(std::uint64_t address);
    void finish();  // computes ranks (dense) or sorts (sparse); reports duplicates of sparse

    NodeId node_of(std::uint64_t address) const;
    // The address of node `node` (< size()): the node-th set bit, found by two binary searches
    // (pages by their first node, words by their rank) and a select in one word.
    std::uint64_t address_of(NodeId node) const;
    NodeId size() const { return count_; }
    bool dense() const { return dense_; }
    graph::Column<std::uint64_t> addresses() const;  // by node id, for passes over every node
    std::uint64_t sparse_duplicates() const { return sparse_duplicates_; }

    // Hands the index to archive.io(), or reads it back (Archive::reading): the index's kept
    // graph (pipeline/kept_dump.cpp). The pages' bits are kept; their ranks are counted again.
    template <typename Archive>
    void keep(Archive& archive);

private:
    static constexpr int kPageBits = 16;
    static constexpr std::uint64_t kWordsPerPage = (std::uint64_t{1} << kPageBits) / 64;
    struct Page {
        std::uint64_t bits[kWordsPerPage] = {};
        std::uint16_t word_rank[kWordsPerPage] = {};  // set bits before each word, in the page
        NodeId base = 0;                               // set bits in earlier pages
    };
    Page* page_for_insert(std::uint64_t page);

    bool dense_ = false;
    std::uint64_t min_ = 0;
    int step_shift_ = 0;  // addresses are min_ plus multiples of 2^step_shift_
    std::vector<std::atomic<Page*>> table_;
    std::vector<std::unique_ptr<Page>> owned_;  // filled by finish(), in page order
    std::vector<NodeId> owned_base_;             // each owned page's base, ascending
    std::vector<std::uint64_t> owned_number_;    // and its number in table_
    std::vector<std::uint64_t> sorted_;
    NodeId count_ = 0;
    std::uint64_t sparse_duplicates_ = 0;
};

template <typename Archive>
void AddressIndex::keep(Archive& archive) {
    archive.io(dense_), archive.io(min_), archive.io(step_shift_), archive.io(sorted_);
    archive.io(sparse_duplicates_);
    std::uint64_t pages = table_.size();
    archive.io(pages), archive.io(owned_number_);
    if constexpr (!Archive::reading) {
        for (const auto& page : owned_) archive.raw(page->bits, sizeof page->bits);
        return;
    } else {
        archive.check(pages <= (std::uint64_t{1} << 24) && (dense_ || owned_number_.empty()) && step_shift_ < 64,
                      "address index");
        table_ = std::vector<std::atomic<Page*>>(pages);
        for (std::size_t i = 0; i < owned_number_.size(); ++i) {
            const std::uint64_t number = owned_number_[i];
            archive.check(number < pages && (i == 0 || owned_number_[i - 1] < number), "address index page");
            auto page = std::make_unique<Page>();
            archive.raw(page->bits, sizeof page->bits);
            table_[number].store(page.release());
        }
        owned_number_.clear();
        if (dense_) finish();  // takes the pages, counts ranks and bases again
        count_ = dense_ ? count_ : static_cast<NodeId>(sorted_.size());
    }
}

static_assert(AddressIndex::kMissing == graph::kNoNode, "node_of's miss is the graph's no-node");

// Node id -> address, answered by the index instead of an 8-byte column per object; a
// handle, cheap to copy, valid while the index lives.
class NodeAddresses {
public:
    NodeAddresses() = default;
    NodeAddresses(const AddressIndex& index) : index_(&index) {}
    std::uint64_t operator[](graph::NodeId node) const { return index_->address_of(node); }
    graph::NodeId size() const { return index_ ? index_->size() : 0; }
    // The node at `address`, or AddressIndex::kMissing (== graph::kNoNode).
    graph::NodeId node_of(std::uint64_t address) const {
        return index_ ? index_->node_of(address) : AddressIndex::kMissing;
    }
    // Every node's address, for a pass over all nodes (a select per node would be slower).
    graph::Column<std::uint64_t> column() const {
        return index_ ? index_->addresses() : graph::Column<std::uint64_t>{};
    }

private:
    const AddressIndex* index_ = nullptr;
};

}  // namespace heapgraph
