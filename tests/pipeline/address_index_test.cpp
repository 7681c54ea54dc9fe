// The address index gives dense ids in address order, finds every inserted address and no
// other, and reports duplicates, in its paged-bitmap form and its sorted fallback.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "address_index.h"
#include "edge_blocks.h"

using namespace heapgraph;

namespace {

void check_index(const std::vector<std::uint64_t>& addresses, bool expect_dense) {
    AddressIndex::Range range;
    for (std::uint64_t a : addresses) range.add(a);
    AddressIndex index(range);
    CHECK(index.dense() == expect_dense);
    for (std::uint64_t a : addresses) CHECK(index.insert(a));
    index.finish();
    std::vector<std::uint64_t> sorted = addresses;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(index.size() == sorted.size());
    CHECK(index.addresses() == sorted);
    for (std::uint32_t i = 0; i < sorted.size(); ++i) CHECK(index.node_of(sorted[i]) == i);
    for (std::uint32_t i = 0; i < sorted.size(); ++i) CHECK(index.address_of(i) == sorted[i]);
    AddressIndex moved = std::move(index);  // the reports hold the index the loader built
    const NodeAddresses view(moved);
    REQUIRE(view.size() == sorted.size());
    CHECK(view[0] == sorted[0]);
    CHECK(view[view.size() - 1] == sorted.back());
    CHECK(view.node_of(sorted.back()) == view.size() - 1);
    index = std::move(moved);
    for (std::uint64_t a : sorted)
        for (std::uint64_t probe : {a + 1, a + 8}) {
            bool present = std::binary_search(sorted.begin(), sorted.end(), probe);
            bool found = index.node_of(probe) != AddressIndex::kMissing;
            CHECK(found == present);
        }
    CHECK(index.node_of(0) == AddressIndex::kMissing);
}

}  // namespace

TEST_CASE("address index: a heap in two generations far apart maps densely, in order") {
    std::vector<std::uint64_t> addresses;
    std::mt19937_64 rng(7);
    std::uint64_t at = 0x7f0000000;
    for (int i = 0; i < 20000; ++i) addresses.push_back(at += 8 * (1 + rng() % 6));
    at = 0x7f0000000 + (std::uint64_t{3} << 30);  // 3 GB further: another generation
    for (int i = 0; i < 20000; ++i) addresses.push_back(at += 16 * (1 + rng() % 3));
    std::shuffle(addresses.begin(), addresses.end(), rng);
    check_index(addresses, true);
}

TEST_CASE("address index: serial ids (the hprof agent's) and a single object") {
    std::vector<std::uint64_t> serial;
    for (std::uint64_t i = 0x50000000; i < 0x50000000 + 140000; ++i) serial.push_back(i);  // full pages
    check_index(serial, true);
    check_index({0x1234}, true);
}

TEST_CASE("address index: addresses spread over the whole 64-bit space fall back to sorting") {
    std::vector<std::uint64_t> addresses;
    std::mt19937_64 rng(11);
    for (int i = 0; i < 3000; ++i) addresses.push_back(((rng() | 1) & ~std::uint64_t{7}) | 8);
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    check_index(addresses, false);
}

TEST_CASE("address index: a second insert of an address is reported") {
    AddressIndex::Range range;
    for (std::uint64_t a : {0x1000, 0x1010, 0x1020}) range.add(a);
    AddressIndex index(range);
    CHECK(index.insert(0x1000));
    CHECK(index.insert(0x1010));
    CHECK(!index.insert(0x1010));
    CHECK(index.insert(0x1020));
    index.finish();
    CHECK(index.size() == 3);
}
