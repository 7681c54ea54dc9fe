// The bucket sort (graph/bucket_sort.h) and the search from a hint (graph/search.h) against
// the standard library's sort and lower_bound, on spread keys, on keys that all fall in one
// bucket (a dump whose contents all hash alike) and on small inputs.
#include <doctest/doctest.h>

#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "bucket_sort.h"
#include "column.h"
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

}  // namespace

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
