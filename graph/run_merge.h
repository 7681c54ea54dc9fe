// Sorting records that come mostly in order already: in a few ascending runs. The value
// tables (strings, primitive and object arrays) come in the dump's order, which is the
// address order but for a few places: on the 2 GB BigHeap dump two runs each, the first of
// 3,294 strings and 4,938 arrays, where a comparison sort of the three took about 0.4 s. One
// parallel pass finds where the runs start; they are merged pairwise, round after round, in
// place, each merge through a buffer the size of its smaller run: passes in sequence. Past
// kMergedRuns runs the scan stops and a comparison sort does it, as before: the 8x replica
// (bench/replicate_hprof.cpp) writes each heap dump segment's copies one after another, so
// its tables come in thousands of runs.
// A merge keeps records of equal key in their order; the sort may not. Keys here are the
// addresses of distinct records.
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <vector>

namespace heapgraph::graph {

// Up to this many runs are merged (log2 of it rounds, each a pass over the records).
inline constexpr std::size_t kMergedRuns = 64;

namespace run_merge_detail {

// Where each run after the first starts: the positions whose key is below the one before's,
// ascending; or more than `most` of them, once that many are found, when the scan stops (a
// table in thousands of runs is sorted instead, and its pages are not read twice).
template <typename Items, typename Key>
std::vector<std::size_t> run_starts(const Items& items, const Key& key, std::size_t most) {
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    const std::size_t blocks = items.size() < 2 ? 0 : (items.size() - 1 + kBlock - 1) / kBlock;
    std::vector<std::vector<std::size_t>> found(blocks);
    std::atomic<std::size_t> count{0};
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::size_t first = 1 + b * kBlock, last = std::min(items.size(), first + kBlock);
        for (std::size_t i = first; i != last && count.load(std::memory_order_relaxed) <= most; ++i)
            if (key(items[i]) < key(items[i - 1]))
                found[b].push_back(i), count.fetch_add(1, std::memory_order_relaxed);
    });
    std::vector<std::size_t> starts;
    for (const std::vector<std::size_t>& block : found) starts.insert(starts.end(), block.begin(), block.end());
    return starts;
}

// Merges the ascending runs [first, middle) and [middle, last) of `items` in place. Of the left
// run, what is at most the right's first key stays, as does the right run's part from the left's
// last key on; the smaller of what is left of the two goes through `buffer`.
template <typename Items, typename Key>
void merge_runs(Items& items, std::size_t first, std::size_t middle, std::size_t last, const Key& key,
                Items& buffer) {
    auto at = [&](std::size_t i) { return items.begin() + static_cast<std::ptrdiff_t>(i); };
    auto by_key = [&](const auto& a, const auto& b) { return key(a) < key(b); };
    first = static_cast<std::size_t>(std::upper_bound(at(first), at(middle), *at(middle), by_key) - items.begin());
    last = static_cast<std::size_t>(std::lower_bound(at(middle), at(last), *at(middle - 1), by_key) - items.begin());
    if (first == middle || middle == last) return;
    if (middle - first <= last - middle) {
        buffer.resize(middle - first);
        std::move(at(first), at(middle), buffer.begin());
        auto left = buffer.begin(), right = at(middle), out = at(first);
        while (left != buffer.end() && right != at(last))
            *out++ = key(*right) < key(*left) ? std::move(*right++) : std::move(*left++);
        std::move(left, buffer.end(), out);  // the right run's rest is in place
    } else {
        buffer.resize(last - middle);
        std::move(at(middle), at(last), buffer.begin());
        auto left = at(middle), right = buffer.end(), out = at(last);
        while (left != at(first) && right != buffer.begin())
            *--out = key(*std::prev(right)) < key(*std::prev(left)) ? std::move(*--left) : std::move(*--right);
        std::move_backward(buffer.begin(), right, out);  // the left run's rest is in place
    }
}

}  // namespace run_merge_detail

// Sorts `items` (a vector or a column) ascending by `key(item)`, fast when they come in a few
// ascending runs.
template <typename Items, typename Key>
void sort_runs(Items& items, const Key& key) {
    std::vector<std::size_t> bounds = run_merge_detail::run_starts(items, key, kMergedRuns);
    if (bounds.empty()) return;
    using Item = std::remove_cvref_t<decltype(*items.begin())>;
    if (bounds.size() >= kMergedRuns) {
        tbb::parallel_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) { return key(a) < key(b); });
        return;
    }
    bounds.insert(bounds.begin(), 0);
    bounds.push_back(items.size());
    while (bounds.size() > 2) {  // runs [bounds[i], bounds[i + 1]); a round halves them
        const std::size_t pairs = (bounds.size() - 1) / 2;
        tbb::parallel_for(std::size_t{0}, pairs, [&](std::size_t p) {
            Items buffer;
            run_merge_detail::merge_runs(items, bounds[2 * p], bounds[2 * p + 1], bounds[2 * p + 2], key, buffer);
        });
        std::vector<std::size_t> merged;
        for (std::size_t i = 0; i < bounds.size(); i += 2) merged.push_back(bounds[i]);
        if (merged.back() != items.size()) merged.push_back(items.size());
        bounds = std::move(merged);
    }
}

}  // namespace heapgraph::graph
