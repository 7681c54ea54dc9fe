// A search in a sorted range that starts where the last one ended. Keys looked up in nearly
// ascending order (a String's value array, a collection's backing array: each lies just past
// its owner) are found in a few steps near the last, where a binary search over the whole
// range misses the cache at each of its last steps.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

namespace heapgraph::graph {

// The first element of `sorted` not `less` than `key`, as std::lower_bound; `hint` (any value)
// is where the search starts and is set to where it ended (below the size; 0 when empty).
template <typename T, typename Key, typename Less>
std::size_t lower_bound_near(std::span<const T> sorted, const Key& key, std::size_t& hint, Less less) {
    const std::size_t n = sorted.size();
    if (n == 0) return hint = 0;
    hint = std::min(hint, n - 1);
    // Gallop to a bracket [lo, hi) that holds the first element at or past `key`.
    std::size_t lo = hint, hi = hint + 1, step = 1;
    if (less(sorted[hint], key)) {
        while (hi < n && less(sorted[hi], key)) lo = hi, hi = std::min(n, hi + step), step *= 2;
        lo += 1;
    } else {
        while (lo > 0 && !less(sorted[lo - 1], key)) hi = lo, lo = lo > step ? lo - step : 0, step *= 2;
    }
    const auto first = sorted.begin() + static_cast<std::ptrdiff_t>(lo), last = sorted.begin() + static_cast<std::ptrdiff_t>(hi);
    const std::size_t at = static_cast<std::size_t>(std::lower_bound(first, last, key, less) - sorted.begin());
    hint = std::min(at, n - 1);
    return at;
}

}  // namespace heapgraph::graph
