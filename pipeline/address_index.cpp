#include "address_index.h"

#include <oneapi/tbb/parallel_sort.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <numeric>

namespace heapgraph {

namespace {

std::mutex sparse_mutex;  // guards sorted_ appends in the sparse case (rare, small heaps)

}  // namespace

// `step` keeps the OR of all differences from the first address: its lowest set bit is the
// largest power of two dividing every gap (a valid step, and far cheaper than a GCD).
void AddressIndex::Range::add(std::uint64_t address) {
    if (count) step |= address ^ first;
    else first = address;
    min = std::min(min, address);
    max = std::max(max, address);
    ++count;
}

void AddressIndex::Range::merge(const Range& other) {
    if (!other.count) return;
    if (!count) {
        *this = other;
        return;
    }
    step |= other.step | (other.first ^ first);
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    count += other.count;
}

AddressIndex::AddressIndex(const Range& range) {
    if (range.count == 0) return;
    min_ = range.min;
    // The step is the largest power of two dividing every address gap: node_of shifts, it
    // runs for every reference and a divide costs.
    step_shift_ = range.step ? std::countr_zero(range.step) : 0;
    std::uint64_t pages = ((range.max - range.min) >> step_shift_ >> kPageBits) + 1;
    dense_ = pages <= (std::uint64_t{1} << 24);  // a page table of at most 128 MB
    if (dense_) {
        table_ = std::vector<std::atomic<Page*>>(pages);
    } else {
        sorted_.reserve(range.count);
    }
}

AddressIndex::~AddressIndex() {
    for (auto& entry : table_)
        if (Page* page = entry.load(); page && owned_.empty()) delete page;
}

// Pages appear the first time an address falls in them; racing threads agree through CAS.
AddressIndex::Page* AddressIndex::page_for_insert(std::uint64_t page) {
    Page* existing = table_[page].load(std::memory_order_acquire);
    if (existing) return existing;
    auto fresh = std::make_unique<Page>();
    if (table_[page].compare_exchange_strong(existing, fresh.get(), std::memory_order_acq_rel)) return fresh.release();
    return existing;
}

bool AddressIndex::insert(std::uint64_t address) {
    if (!dense_) {
        std::lock_guard lock(sparse_mutex);
        sorted_.push_back(address);
        return true;
    }
    std::uint64_t slot = (address - min_) >> step_shift_;
    Page* page = page_for_insert(slot >> kPageBits);
    std::uint64_t in_page = slot & ((std::uint64_t{1} << kPageBits) - 1);
    std::uint64_t mask = std::uint64_t{1} << (in_page % 64);
    std::uint64_t old = std::atomic_ref<std::uint64_t>(page->bits[in_page / 64]).fetch_or(mask, std::memory_order_relaxed);
    return !(old & mask);
}

void AddressIndex::finish() {
    if (!dense_) {
        tbb::parallel_sort(sorted_.begin(), sorted_.end());
        std::size_t before = sorted_.size();
        sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
        sparse_duplicates_ = before - sorted_.size();
        count_ = static_cast<NodeId>(sorted_.size());
        return;
    }
    NodeId total = 0;
    for (auto& entry : table_) {
        Page* page = entry.load();
        if (!page) continue;
        owned_.emplace_back(page);
        owned_base_.push_back(total);
        owned_number_.push_back(static_cast<std::uint64_t>(&entry - table_.data()));
        page->base = total;
        std::uint16_t in_page = 0;
        for (std::uint64_t w = 0; w < kWordsPerPage; ++w) {
            page->word_rank[w] = in_page;
            in_page = static_cast<std::uint16_t>(in_page + std::popcount(page->bits[w]));
        }
        total += std::accumulate(std::begin(page->bits), std::end(page->bits), 0u,
                                 [](NodeId t, std::uint64_t word) { return t + std::popcount(word); });
    }
    count_ = total;
}

AddressIndex::NodeId AddressIndex::node_of(std::uint64_t address) const {
    if (!dense_) {
        auto it = std::lower_bound(sorted_.begin(), sorted_.end(), address);
        return it != sorted_.end() && *it == address ? static_cast<NodeId>(it - sorted_.begin()) : kMissing;
    }
    if (address < min_ || ((address - min_) & ((std::uint64_t{1} << step_shift_) - 1))) return kMissing;
    std::uint64_t slot = (address - min_) >> step_shift_;
    std::uint64_t page_number = slot >> kPageBits;
    if (page_number >= table_.size()) return kMissing;
    const Page* page = table_[page_number].load(std::memory_order_relaxed);
    if (!page) return kMissing;
    std::uint64_t in_page = slot & ((std::uint64_t{1} << kPageBits) - 1);
    std::uint64_t word = page->bits[in_page / 64];
    std::uint64_t bit = std::uint64_t{1} << (in_page % 64);
    if (!(word & bit)) return kMissing;
    return page->base + page->word_rank[in_page / 64] + static_cast<NodeId>(std::popcount(word & (bit - 1)));
}

AddressIndex AddressIndex::of(std::span<const std::uint64_t> addresses) {
    Range range;
    for (std::uint64_t a : addresses) range.add(a);
    AddressIndex index(range);
    for (std::uint64_t a : addresses) index.insert(a);
    index.finish();
    return index;
}

namespace {

// The position of the k-th set bit of `word` (k < popcount(word)).
unsigned select_bit(std::uint64_t word, unsigned k) {
    for (; k > 0; --k) word &= word - 1;
    return static_cast<unsigned>(std::countr_zero(word));
}

}  // namespace

std::uint64_t AddressIndex::address_of(NodeId node) const {
    if (!dense_) return sorted_[node];
    // The last page whose base is at most node holds it (an owned page has a set bit).
    const std::size_t p = static_cast<std::size_t>(
        std::upper_bound(owned_base_.begin(), owned_base_.end(), node) - owned_base_.begin() - 1);
    const Page& page = *owned_[p];
    const NodeId rank = node - owned_base_[p];
    // The word before the first whose rank passes it: its bits reach past the rank.
    const std::size_t w = static_cast<std::size_t>(
        std::upper_bound(std::begin(page.word_rank), std::end(page.word_rank), rank) - std::begin(page.word_rank) - 1);
    const std::uint64_t slot =
        (owned_number_[p] << kPageBits) + w * 64 + select_bit(page.bits[w], rank - page.word_rank[w]);
    return min_ + (slot << step_shift_);
}

graph::Column<std::uint64_t> AddressIndex::addresses() const {
    if (!dense_) return {sorted_.begin(), sorted_.end()};
    graph::Column<std::uint64_t> out;
    out.reserve(count_);
    for (std::uint64_t p = 0; p < table_.size(); ++p) {
        const Page* page = table_[p].load();
        if (!page) continue;
        for (std::uint64_t w = 0; w < kWordsPerPage; ++w)
            for (std::uint64_t word = page->bits[w]; word; word &= word - 1) {
                std::uint64_t slot = (p << kPageBits) + w * 64 + static_cast<std::uint64_t>(std::countr_zero(word));
                out.push_back(min_ + (slot << step_shift_));
            }
    }
    return out;
}

}  // namespace heapgraph
