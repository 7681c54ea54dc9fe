// The bucket sort (graph/bucket_sort.h), the merge of ascending runs (graph/run_merge.h) and
// the search from a hint (graph/search.h) against the standard library's sorts and
// lower_bound, on spread keys, on keys that all fall in one bucket (a dump whose contents all
// hash alike), on runs of every length and count, and on small inputs.
#include <doctest/doctest.h>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "bucket_sort.h"
#include "column.h"
#include "run_merge.h"
#include "search.h"
#include "test_support.h"

namespace {

using namespace heapgraph::graph;

struct Record {
    std::uint64_t key = 0;
    std::uint32_t id = 0;  // unique: breaks ties, so the order is total
    bool operator<(const Record& o) const { return key != o.key ? key < o.key : id < o.id; }
    bool operator==(const Record& o) const = default;
};

std::vector<Record> records(std::size_t n, std::uint64_t key_mask, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<Record> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = {random() & key_mask, static_cast<std::uint32_t>(n - i)};
    return out;
}

template <typename Items>
void check_sorted_like_std(Items items) {
    std::vector<Record> expected(items.begin(), items.end());
    std::sort(expected.begin(), expected.end());
    bucket_sort(items, [](const Record& r, int bits) { return r.key >> (64 - bits); }, std::less<Record>());
    REQUIRE(items.size() == expected.size());
    CHECK(std::equal(items.begin(), items.end(), expected.begin()));
}

// `n` records in `runs` ascending runs of random lengths (keys may repeat within and across
// runs; ids number the records in order), or with `first` > 0 a first run of `first`
// records whose keys are above all the others', as the value tables of the 2 GB dump come.
std::vector<Record> runs_of(std::size_t n, std::size_t runs, std::size_t first, std::uint64_t seed) {
    std::mt19937_64 random(seed);
    std::vector<std::size_t> cuts{0, n};
    if (first) cuts.insert(cuts.begin() + 1, std::min(first, n));
    while (cuts.size() < runs + 1 && n > runs) cuts.push_back(random() % n);
    std::sort(cuts.begin(), cuts.end());
    std::vector<Record> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = {random() % (n + 1) + (i < first ? n + 1 : 0), static_cast<std::uint32_t>(i)};
    auto at = [&](std::size_t i) { return out.begin() + static_cast<std::ptrdiff_t>(i); };
    for (std::size_t r = 0; r + 1 < cuts.size(); ++r) std::sort(at(cuts[r]), at(cuts[r + 1]));
    return out;
}

// sort_runs gives std::stable_sort's order by key: equal keys keep their order in a merge,
// and with the runs above kMergedRuns (where a sort may reorder them) the keys are compared only.
template <typename Items>
void check_runs_sorted(Items items, bool stable) {
    std::vector<Record> expected(items.begin(), items.end());
    auto by_key = [](const Record& a, const Record& b) { return a.key < b.key; };
    std::stable_sort(expected.begin(), expected.end(), by_key);
    sort_runs(items, [](const Record& r) { return r.key; });
    REQUIRE(items.size() == expected.size());
    if (stable) CHECK(std::equal(items.begin(), items.end(), expected.begin()));
    auto same_key = [](const Record& a, const Record& b) { return a.key == b.key; };
    if (!stable) CHECK(std::equal(items.begin(), items.end(), expected.begin(), same_key));
}

}  // namespace

TEST_CASE("merged runs: std::stable_sort's order for any count and length of ascending runs, in both backings") {
    for (std::size_t n : {0u, 1u, 2u, 7u, 1000u, 100000u}) {
        for (std::size_t runs : {1u, 2u, 3u, 5u, 17u, 63u, 64u, 200u}) {
            CAPTURE(n);
            CAPTURE(runs);
            check_runs_sorted(runs_of(n, runs, 0, n * 1000 + runs), runs < kMergedRuns);
        }
        CAPTURE(n);
        check_runs_sorted(runs_of(n, 2, 5, n + 3), true);        // a short first run of high keys
        check_runs_sorted(runs_of(n, 2, n / 2 + 1, n + 4), true);  // the longer run first
    }
    std::vector<Record> descending = records(5000, 0xFFFF, 9);  // as many runs as records, about
    std::sort(descending.rbegin(), descending.rend());
    check_runs_sorted(descending, false);
    const std::vector<Record> two = runs_of(100000, 2, 3000, 11);
    check_runs_sorted(Column<Record>(two.begin(), two.end()), true);
    heapgraph::test::StorageBudget budget(1);  // in a file, the buffer too
    Column<Record> in_file(two.begin(), two.end());
    CHECK(in_file.in_file());
    check_runs_sorted(std::move(in_file), true);
}

TEST_CASE("bucket sort: the same order as std::sort, for spread keys, one bucket and small inputs") {
    for (std::size_t n : {0u, 1u, 5u, 1000u, 20000u, 300000u}) {
        CAPTURE(n);
        check_sorted_like_std(records(n, ~std::uint64_t{0}, n));     // spread over every bucket
        check_sorted_like_std(records(n, 0xFF, n + 1));              // every key in bucket 0
        check_sorted_like_std(records(n, 0xF000000000000000, n + 2));  // sixteen buckets used
    }
    // A column sorts as a vector does, in memory and in a file (sorted in place there).
    const std::vector<Record> spread = records(100000, ~std::uint64_t{0}, 7);
    check_sorted_like_std(Column<Record>(spread.begin(), spread.end()));
    heapgraph::test::StorageBudget budget(1);  // every column past a one-byte budget: in a file
    Column<Record> in_file(spread.begin(), spread.end());
    CHECK(in_file.in_file());
    check_sorted_like_std(std::move(in_file));
}

TEST_CASE("bucket sort: the same order with one thread as with two") {
    std::vector<Record> two = records(200000, 0xFFFF000000000000, 3), one = two;
    bucket_sort(two, [](const Record& r, int bits) { return r.key >> (64 - bits); }, std::less<Record>());
    tbb::task_arena(1).execute([&] {
        bucket_sort(one, [](const Record& r, int bits) { return r.key >> (64 - bits); }, std::less<Record>());
    });
    CHECK(one == two);
}

TEST_CASE("search near a hint: the same place as lower_bound for every key and any hint") {
    std::vector<std::uint64_t> sorted;
    for (std::uint64_t v = 10; v < 400; v += 3) sorted.push_back(v / 9 * 9);  // runs of equal keys too
    const std::span<const std::uint64_t> span(sorted);
    for (std::size_t start = 0; start < sorted.size() + 3; start += 7) {
        std::size_t hint = start;
        for (std::uint64_t key = 0; key < 420; ++key) {
            CAPTURE(key);
            const std::size_t expected = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), key) - sorted.begin());
            CHECK(lower_bound_near(span, key, hint, std::less<std::uint64_t>()) == expected);
            CHECK(hint < sorted.size());
        }
    }
    std::size_t hint = 5;
    CHECK(lower_bound_near(std::span<const std::uint64_t>(), std::uint64_t{1}, hint, std::less<std::uint64_t>()) == 0);
    CHECK(hint == 0);
}
