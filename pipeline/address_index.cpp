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

void AddressIndex::Range::add(std::uint64_t address) {
    if (count && address != min) step = std::gcd(step, address > min ? address - min : min - address);
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
    step = std::gcd(std::gcd(step, other.step), other.min > min ? other.min - min : min - other.min);
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    count += other.count;
}

AddressIndex::AddressIndex(const Range& range) {
    if (range.count == 0) return;
    min_ = range.min;
    step_ = std::max<std::uint64_t>(range.step, 1);
    std::uint64_t slots = (range.max - range.min) / step_ + 1;
    // Dense when the bitmap costs at most ~2 bytes per object (16 bits of slots each).
    dense_ = slots / 16 <= range.count + (1u << 20);
    if (dense_) {
        bits_.assign(slots / 64 + 1, 0);
    } else {
        sorted_.reserve(range.count);
    }
}

bool AddressIndex::insert(std::uint64_t address) {
    if (!dense_) {
        std::lock_guard lock(sparse_mutex);
        sorted_.push_back(address);
        return true;
    }
    std::uint64_t slot = (address - min_) / step_;
    std::uint64_t mask = std::uint64_t{1} << (slot % 64);
    std::uint64_t old = std::atomic_ref<std::uint64_t>(bits_[slot / 64]).fetch_or(mask, std::memory_order_relaxed);
    return !(old & mask);
}

void AddressIndex::finish() {
    if (!dense_) {
        tbb::parallel_sort(sorted_.begin(), sorted_.end());
        std::size_t before = sorted_.size();
        sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
        sparse_duplicates_ = before - sorted_.size();
        count_ = static_cast<std::uint32_t>(sorted_.size());
        return;
    }
    rank_.resize(bits_.size());
    std::uint32_t total = 0;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
        rank_[w] = total;
        total += static_cast<std::uint32_t>(std::popcount(bits_[w]));
    }
    count_ = total;
}

std::uint32_t AddressIndex::node_of(std::uint64_t address) const {
    if (!dense_) {
        auto it = std::lower_bound(sorted_.begin(), sorted_.end(), address);
        return it != sorted_.end() && *it == address ? static_cast<std::uint32_t>(it - sorted_.begin()) : kMissing;
    }
    if (address < min_ || (address - min_) % step_) return kMissing;
    std::uint64_t slot = (address - min_) / step_;
    if (slot / 64 >= bits_.size()) return kMissing;
    std::uint64_t word = bits_[slot / 64];
    std::uint64_t bit = std::uint64_t{1} << (slot % 64);
    if (!(word & bit)) return kMissing;
    return rank_[slot / 64] + static_cast<std::uint32_t>(std::popcount(word & (bit - 1)));
}

std::vector<std::uint64_t> AddressIndex::addresses() const {
    if (!dense_) return sorted_;
    std::vector<std::uint64_t> out;
    out.reserve(count_);
    for (std::size_t w = 0; w < bits_.size(); ++w)
        for (std::uint64_t word = bits_[w]; word; word &= word - 1)
            out.push_back(min_ + (w * 64 + static_cast<std::uint64_t>(std::countr_zero(word))) * step_);
    return out;
}

}  // namespace heapgraph
