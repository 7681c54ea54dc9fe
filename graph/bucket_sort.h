// Sorting many plain records whose order starts with a well-spread number (a content hash, a
// file position): one counting pass scatters them into buckets by that number's top bits,
// then each bucket (a dozen records or so) is sorted on its own. A comparison sort of the
// 3.6M String members of the 2 GB BigHeap dump took 0.5 s on the one core the tables left
// it; the buckets take a pass to count and one to scatter. `less` must be a total order
// (ties broken by a unique field), so the result is the same as std::sort's, for any
// number of threads.
#pragma once

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

namespace heapgraph::graph {

// Sorts `items` (a vector or a column) by `less`, where `bucket_of(item, bits)` is the item's
// bucket among 2^bits and never decreases along `less`. The records are scattered into a
// second container of the same type, then swapped in. A column in a file (past the memory
// budget, graph/column.h) is sorted in place instead: scattered writes to a mapped file
// fault a page each (the 2 GB dump at --memory-limit 400M: duplicates 2.1 -> 2.9 s).
template <typename Items, typename BucketOf, typename Less>
void bucket_sort(Items& items, BucketOf&& bucket_of, Less&& less) {
    const std::size_t n = items.size();
    if (n < (std::size_t{1} << 14)) {
        std::sort(items.begin(), items.end(), less);
        return;
    }
    // A column past the budget is a file, and so may its copy be: then it is sorted in place.
    auto in_file = [](const Items& c) {
        if constexpr (requires { c.in_file(); }) return c.in_file();
        else return false;
    };
    Items scattered;
    if (!in_file(items)) scattered.resize(n);
    if (in_file(items) || in_file(scattered)) {
        scattered = {};
        tbb::parallel_sort(items.begin(), items.end(), less);
        return;
    }
    // About eight records a bucket, at most 2^20 buckets (4 MB of counts a slice).
    const int bits = std::clamp(static_cast<int>(std::bit_width(n / 8)) - 1, 8, 20);
    const std::size_t buckets = std::size_t{1} << bits;
    const std::size_t slices = std::clamp<std::size_t>(tbb::this_task_arena::max_concurrency(), 1, 8);
    auto slice_begin = [&](std::size_t k) { return k * n / slices; };
    std::vector<std::vector<std::uint64_t>> next(slices, std::vector<std::uint64_t>(buckets, 0));
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t k) {
        for (std::size_t i = slice_begin(k); i < slice_begin(k + 1); ++i) ++next[k][bucket_of(items[i], bits)];
    });
    // Bucket-major, slice-minor starts: each slice's records keep their order within a bucket.
    std::vector<std::uint64_t> bucket_start(buckets + 1, 0);
    std::uint64_t at = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
        bucket_start[b] = at;
        for (std::size_t k = 0; k < slices; ++k) at += std::exchange(next[k][b], at);
    }
    bucket_start[buckets] = at;
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t k) {
        std::vector<std::uint64_t>& to = next[k];
        for (std::size_t i = slice_begin(k); i < slice_begin(k + 1); ++i) scattered[to[bucket_of(items[i], bits)]++] = items[i];
    });
    next.clear();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, buckets, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t b = r.begin(); b != r.end(); ++b)
            std::sort(scattered.begin() + static_cast<std::ptrdiff_t>(bucket_start[b]),
                      scattered.begin() + static_cast<std::ptrdiff_t>(bucket_start[b + 1]), less);
    });
    std::swap(items, scattered);
}

}  // namespace heapgraph::graph
