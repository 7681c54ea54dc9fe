// Columns (graph/column.h): the budget picks heap memory or a file, both hold the same
// bytes, released pages come back intact, and a column file that cannot be made is a
// StorageError naming the directory.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <chrono>
#include <numeric>
#include <thread>

#include "byte_counts.h"
#include "column.h"
#include "shallow_sizes.h"
#include "test_support.h"

namespace {

using namespace heapgraph::graph;
namespace fs = std::filesystem;

using Budget = heapgraph::test::StorageBudget;

std::uint64_t rss_file_bytes() {
    std::ifstream status("/proc/self/status");
    for (std::string key; status >> key;) {
        std::uint64_t kb = 0;
        if (key == "RssFile:" && status >> kb) return kb * 1024;
    }
    return 0;
}

}  // namespace

TEST_CASE("column: within half the budget in memory, past it in a file, with the same contents") {
    Budget budget(1 << 20);
    Column<std::uint32_t> small(1000, 7);
    Column<std::uint32_t> big(1 << 20);  // 4 MB: over the 1 MB budget
    Column<std::uint8_t> over_half(600 << 10);  // within the budget, not within its half
    CHECK_FALSE(small.in_file());
    CHECK(big.in_file());
    CHECK(over_half.in_file());
    std::iota(big.begin(), big.end(), 0u);
    CHECK(big[123456] == 123456);
    CHECK(small[999] == 7);
    const StorageUse use = storage_use();
    CHECK(use.file_columns >= 1);
    CHECK(use.file_bytes_peak >= (4u << 20));
    CHECK(use.heap_bytes_peak <= (512u << 10));
}

TEST_CASE("column: vector operations agree in both backings") {
    for (std::uint64_t limit : {std::uint64_t{1}, std::uint64_t{1} << 40}) {
        Budget budget(limit);
        Column<std::uint64_t> c;
        for (std::uint64_t i = 0; i < 100000; ++i) c.push_back(i * 3);  // grows through many blocks
        CHECK(c.in_file() == (limit == 1));
        CHECK(c.size() == 100000);
        CHECK(c.back() == 299997);
        c.resize(100010);
        CHECK(c[100005] == 0);  // new elements are zero
        c.resize(5, 9);
        CHECK(c == std::vector<std::uint64_t>{0, 3, 6, 9, 12});
        c.assign(3, 4);
        CHECK(c == Column<std::uint64_t>{4, 4, 4});
        Column<std::uint64_t> copy = c;
        copy[0] = 1;
        CHECK(c[0] == 4);
        std::span<const std::uint64_t> view = copy;
        CHECK(view.size() == 3);
        CHECK(view[0] == 1);
        Column<std::uint64_t> moved = std::move(copy);
        CHECK(moved.size() == 3);
        CHECK(copy.empty());
        CHECK_THROWS_AS(moved.at(3), std::out_of_range);
    }
}

// Large heap columns grow and shrink where they lie (mremap): what they held stays, and room
// that was old elements before a shrink or a pop comes back as zeros.
TEST_CASE("column: a large heap column keeps its elements and zeroes new room when it grows in place") {
    Budget budget(std::uint64_t{1} << 40);
    Column<std::uint32_t> c;
    for (std::uint32_t i = 0; i < 3'000'000; ++i) c.push_back(i + 1);  // 12 MB, many regrows
    CHECK_FALSE(c.in_file());
    CHECK(c[0] == 1);
    CHECK(c[2'999'999] == 3'000'000);
    c.resize(1'000'001);  // drops elements; the room past them keeps their old bytes
    c.shrink_to_fit();    // in place: the last page still holds old bytes past the end
    CHECK(c.capacity() == 1'000'001);
    c.resize(2'000'000);
    CHECK(c[1'000'000] == 1'000'001);
    CHECK(c[1'000'001] == 0);
    CHECK(c[1'001'000] == 0);
    CHECK(c[1'999'999] == 0);
    CHECK(std::count(c.begin() + 1'000'001, c.end(), 0u) == 999'999);
    c.pop_back(), c.pop_back();
    c[1'999'997] = 5;
    c.resize(1'999'999);  // within capacity: the popped element is cleared, not left as it was
    CHECK(c[1'999'997] == 5);
    CHECK(c[1'999'998] == 0);
}

// A large heap block given back is kept for the next (graph/column.cpp, take_mapping): the
// smallest piece that holds a new block gives it, zeroed, and a block no piece holds grows
// the largest one, zeroed too.
TEST_CASE("column: large heap blocks given back come back zeroed, from the smallest piece that holds them") {
    Budget budget(std::uint64_t{1} << 40);
    keep_heap_blocks(false), keep_heap_blocks(true);  // no pieces from earlier cases
    const std::byte* first = nullptr;
    {
        Column<std::uint32_t> gone(4'000'000);  // 16 MB
        std::fill(gone.begin(), gone.end(), 0xdeadbeefu);
        first = reinterpret_cast<const std::byte*>(gone.data());
    }
    Column<std::uint32_t> front(1'000'000);  // 4 MB of the 16
    CHECK(reinterpret_cast<const std::byte*>(front.data()) == first);
    CHECK(std::count(front.begin(), front.end(), 0u) == 1'000'000);
    Column<std::uint32_t> rest(3'000'000);  // the 12 MB left, just past the 4 MB taken
    CHECK(reinterpret_cast<const std::byte*>(rest.data()) > first);
    CHECK(reinterpret_cast<const std::byte*>(rest.data()) < first + 16'000'000);
    CHECK(std::count(rest.begin(), rest.end(), 0u) == 3'000'000);
    std::fill(front.begin(), front.end(), 7u), std::fill(rest.begin(), rest.end(), 9u);
    front = {}, rest = {};
    Column<std::uint64_t> larger(3'000'000);  // 24 MB: more than any piece, the 12 MB one grown
    CHECK(std::count(larger.begin(), larger.end(), std::uint64_t{0}) == 3'000'000);
    keep_heap_blocks(false), keep_heap_blocks(true);
}

TEST_CASE("column: a large heap column past the budget on growing moves to a file with its elements") {
    Budget budget(std::uint64_t{32} << 20);  // 16 MB for columns in memory
    Column<std::uint64_t> c(1'500'000);  // 12 MB in memory
    CHECK_FALSE(c.in_file());
    std::iota(c.begin(), c.end(), std::uint64_t{0});
    c.resize(3'000'000);  // 24 MB: no room to grow in place
    CHECK(c.in_file());
    CHECK(c[1'499'999] == 1'499'999);
    CHECK(c[1'500'000] == 0);
    CHECK(c[2'999'999] == 0);
}

TEST_CASE("column: a file column's pages leave the process and come back with the same bytes") {
    Budget budget(16 << 20);  // the column goes to a file; 32 MB stays under the pager's 64 MB floor
    constexpr std::size_t kCount = std::size_t{8} << 20;  // 32 MB of uint32_t
    Column<std::uint32_t> c(kCount);
    REQUIRE(c.in_file());
    for (std::size_t i = 0; i < kCount; ++i) c[i] = static_cast<std::uint32_t>(i * 2654435761u);
    const std::uint64_t touched = rss_file_bytes();
    c.release_pages();
    const std::uint64_t released = rss_file_bytes();
    CHECK(touched >= released + (30u << 20));
    bool same = true;
    for (std::size_t i = 0; i < kCount; ++i) same &= c[i] == static_cast<std::uint32_t>(i * 2654435761u);
    CHECK(same);
}

TEST_CASE("column: no directory for a column file is a StorageError naming it and the size") {
    Budget budget(1, heapgraph::test::temp_dir() + "/no-such-dir");
    const std::uint64_t before = storage_use().file_columns;
    try {
        Column<std::uint32_t> c(1000);
        FAIL("a column was made in a missing directory");
    } catch (const StorageError& e) {
        CHECK(std::string(e.what()).find("no-such-dir") != std::string::npos);
        CHECK(std::string(e.what()).find("4000-byte") != std::string::npos);
    }
    CHECK(storage_use().file_columns == before + 1);
}

TEST_CASE("column: column files are unnamed and leave nothing in the directory") {
    const std::string dir = heapgraph::test::temp_dir() + "/columns";
    fs::create_directories(dir);
    {
        Budget budget(1, dir);
        Column<std::uint8_t> c(1 << 16, 1);
        REQUIRE(c.in_file());
        CHECK(fs::is_empty(dir));
    }
    CHECK(fs::is_empty(dir));
}

TEST_CASE("column: the pager keeps a pass's resident file pages near the budget, and the bytes intact") {
    Budget budget(1);  // the pager's floor: 64 MB of resident column pages
    constexpr std::size_t kCount = std::size_t{64} << 20;  // 256 MB of uint32_t
    Column<std::uint32_t> c(kCount);
    REQUIRE(c.in_file());
    const std::uint64_t releases = storage_use().page_releases;
    std::uint64_t most = 0;
    constexpr std::size_t kStep = std::size_t{4} << 20;  // 16 MB a step, then time for the pager
    for (std::size_t begin = 0; begin < kCount; begin += kStep) {
        for (std::size_t i = begin; i < begin + kStep; ++i) c[i] = static_cast<std::uint32_t>(i ^ 0x5bd1e995u);
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        most = std::max(most, rss_file_bytes());
    }
    CHECK(storage_use().page_releases > releases);
    CHECK(most < (std::uint64_t{200} << 20));  // a pass without the pager ends at 256 MB
    bool same = true;
    for (std::size_t i = 0; i < kCount; ++i) same &= c[i] == static_cast<std::uint32_t>(i ^ 0x5bd1e995u);
    CHECK(same);
}

TEST_CASE("pager clock: looks sooner the faster the file pages grow toward the allowance, from 20 ms down to 1 ms, and 20 ms after a drop") {
    using std::chrono::milliseconds;
    constexpr std::uint64_t kMB = std::uint64_t{1} << 20;
    const auto start = std::chrono::steady_clock::now();
    PagerClock clock;
    CHECK(clock.wait() == PagerClock::kLongest);
    clock.looked(100 * kMB, 1000 * kMB, start);  // a first look: no growth known yet
    CHECK(clock.wait() == PagerClock::kLongest);
    // 10 MB in 20 ms with 890 MB left: 1.78 s to fill, far past 20 ms.
    clock.looked(110 * kMB, 1000 * kMB, start + milliseconds(20));
    CHECK(clock.wait() == PagerClock::kLongest);
    // 400 MB in 20 ms with 490 MB left: 24.5 ms to fill, looked at again in half of it.
    clock.looked(510 * kMB, 1000 * kMB, start + milliseconds(40));
    CHECK(std::chrono::abs(clock.wait() - std::chrono::microseconds(12250)) <= std::chrono::microseconds(1));
    // 480 MB in 12.25 ms with 10 MB left: as soon as it may.
    clock.looked(990 * kMB, 1000 * kMB, start + milliseconds(40) + std::chrono::microseconds(12250));
    CHECK(clock.wait() == PagerClock::kShortest);
    // Dropped down to 20 MB: 20 ms, as a pass whose working set is past the allowance maps
    // it back at once; then 490 MB more in 10 ms with 490 MB left: 5 ms.
    const auto drop = start + milliseconds(60);
    clock.dropped(20 * kMB, drop);
    CHECK(clock.wait() == PagerClock::kLongest);
    clock.looked(510 * kMB, 1000 * kMB, drop + milliseconds(10));
    CHECK(std::chrono::abs(clock.wait() - std::chrono::microseconds(5000)) <= std::chrono::microseconds(1));
    // No growth: the longest wait; a drop that leaves pages past the allowance: no sooner.
    clock.looked(510 * kMB, 1000 * kMB, drop + milliseconds(20));
    CHECK(clock.wait() == PagerClock::kLongest);
    clock.dropped(1100 * kMB, drop + milliseconds(21));
    CHECK(clock.wait() == PagerClock::kLongest);
}

TEST_CASE("csr: row starts kept as 32-bit offsets within blocks read back as given (from 64-bit starts or 32-bit ones in place), and as 64-bit starts when a block spans too much") {
    // 200,000 rows over four blocks of 2^16, degrees 0-9, so the starts pass 2^16 and block bases matter.
    constexpr std::size_t kRows = 200'000;
    std::vector<std::uint64_t> starts(kRows + 1, 0);
    for (std::size_t v = 0; v < kRows; ++v) starts[v + 1] = starts[v] + (v * 7919 % 10);
    auto rows = [&](std::uint64_t narrow_span) {
        heapgraph::graph::Csr csr;
        csr.targets.resize(starts.back());
        for (std::uint64_t t = 0; t < starts.back(); ++t) csr.targets[t] = static_cast<heapgraph::graph::NodeId>(t * 31);
        csr.set_starts(heapgraph::graph::Column<std::uint64_t>(starts), narrow_span);
        return csr;
    };
    const heapgraph::graph::Csr narrow = rows(0xFFFFFFFFu), wide = rows(1000);
    // Starts counted in 32 bits become the offsets in place.
    heapgraph::graph::Csr from32;
    from32.targets = narrow.targets;
    from32.set_starts(heapgraph::graph::Column<std::uint32_t>(starts.begin(), starts.end()));
    CHECK(!from32.wide());
    CHECK(from32.offset_bytes() == narrow.offset_bytes());
    CHECK(!narrow.wide());
    CHECK(wide.wide());
    CHECK(narrow.offset_bytes() == (kRows + 1) * 4 + 4 * 8);
    CHECK(wide.offset_bytes() == (kRows + 1) * 8);
    REQUIRE(narrow.rows() == kRows);
    REQUIRE(wide.rows() == kRows);
    std::size_t mismatches = 0;
    for (heapgraph::graph::NodeId v = 0; v <= kRows; ++v) {
        mismatches += narrow.begin(v) != starts[v] || wide.begin(v) != starts[v] || from32.begin(v) != starts[v];
        if (v < kRows) mismatches += narrow.degree(v) != v * 7919 % 10;
    }
    CHECK(mismatches == 0);
    CHECK(narrow.of(kRows - 1).size() == (kRows - 1) * 7919 % 10);
    CHECK(narrow.of(kRows - 1).data() == narrow.targets.data() + starts[kRows - 1]);
    CHECK(heapgraph::graph::Csr{}.empty());
    CHECK(heapgraph::graph::Csr{}.layout_holds());
    CHECK((narrow.layout_holds() && wide.layout_holds() && from32.layout_holds()));
}

TEST_CASE("csr: rows kept for flagged nodes only read back as the rows by node: empty for the others, narrow or wide, 32- or 64-bit starts") {
    // 200,000 nodes over four blocks of 2^16 starts; every third node flagged, with 0-9 targets
    // (so some flagged rows are empty), the others none. Words of flags end at node 199,999.
    using heapgraph::graph::Column;
    using heapgraph::graph::Csr;
    using heapgraph::graph::NodeId;
    constexpr std::size_t kNodes = 200'000;
    heapgraph::graph::NodeBits flagged(kNodes + 1);  // a bit for the rows' end, unset
    std::vector<std::uint64_t> starts(kNodes + 1, 0);
    for (std::size_t v = 0; v < kNodes; ++v) {
        if (v % 3 == 1) flagged.set(v);
        starts[v + 1] = starts[v] + (flagged.test(v) ? v * 7919 % 10 : 0);
    }
    auto rows = [&](std::uint64_t narrow_span, bool from32) {
        Csr csr;
        csr.targets.resize(starts.back());
        for (std::uint64_t t = 0; t < starts.back(); ++t) csr.targets[t] = static_cast<NodeId>(t * 31);
        if (from32)
            csr.set_starts_of(heapgraph::graph::NodeBits(flagged), Column<std::uint32_t>(starts.begin(), starts.end()));
        else
            csr.set_starts_of(heapgraph::graph::NodeBits(flagged), Column<std::uint64_t>(starts.begin(), starts.end()), narrow_span);
        return csr;
    };
    for (const auto& variant : {std::pair{0xFFFFFFFFull, false}, std::pair{1000ull, false}, std::pair{0ull, true}}) {
        // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
        const std::uint64_t narrow_span = variant.first;
        const bool from32 = variant.second;
        CAPTURE(narrow_span);
        CAPTURE(from32);
        const Csr csr = rows(narrow_span, from32);
        CHECK(csr.wide() == (narrow_span == 1000));
        CHECK(csr.layout_holds());
        REQUIRE(csr.rows() == kNodes);
        CHECK(csr.offset_bytes() < kNodes * (csr.wide() ? 8 : 4) / 2);  // a third of the starts, and the flags
        std::size_t mismatches = 0;
        for (NodeId v = 0; v <= kNodes; ++v) {
            mismatches += csr.begin(v) != starts[v];
            if (v == kNodes) break;
            const auto row = csr.of(v);
            mismatches += row.size() != starts[v + 1] - starts[v] || csr.degree(v) != row.size();
            mismatches += !row.empty() && row.data() != csr.targets.data() + starts[v];
        }
        CHECK(mismatches == 0);
        std::size_t bit_mismatches = 0;
        for (std::size_t word = 0; word * 64 < kNodes; ++word)
            for (std::size_t v = word * 64; v < std::min(kNodes, word * 64 + 64); ++v)
                bit_mismatches += ((csr.nonempty_word(word) >> (v & 63)) & 1) != (starts[v + 1] != starts[v]);
        CHECK(bit_mismatches == 0);
    }
}

// Shallow sizes keep 2 bytes a node: multiples of 8 below 256 KiB in 8-byte units, other
// sizes below 32 KiB as they are; the rest are kept beside.
TEST_CASE("shallow sizes: every size up to past 256 KiB reads back, and the words stay in 2 bytes below their bounds") {
    ShallowSizes sizes;
    constexpr std::uint64_t kTop = 300000;
    sizes.assign(kTop, 0);
    for (std::uint64_t v = 0; v < kTop; ++v) sizes.set(v, v);
    std::size_t mismatches = 0, beside = 0;
    for (std::uint64_t v = 0; v < kTop; ++v) {
        mismatches += sizes[v] != v;
        beside += sizes.word(v) == 0xFFFF;
    }
    CHECK(mismatches == 0);
    // Beside: unaligned sizes from 32,767 bytes and aligned ones from 262,136.
    std::size_t expected = 0;
    for (std::uint64_t v = 0; v < kTop; ++v) expected += v % 8 ? v >= 0x7FFF : v / 8 >= 0x7FFF;
    CHECK(beside == expected);
    CHECK(sizes.word(262128) != 0xFFFF);
    CHECK(sizes.word(262136) == 0xFFFF);
    CHECK(sizes.word(32766) != 0xFFFF);  // not a multiple of 8: kept as bytes, below 32,767
    CHECK(sizes.word(32767) == 0xFFFF);
    CHECK(sizes.size_of(sizes.word(262128), 262128) == 262128);
    for (std::uint64_t v = 0; v < kTop; ++v) sizes.set(v, 16);  // every size beside replaced by a small one
    for (std::uint64_t v = 0; v < kTop; v += 997) CHECK(sizes[v] == 16);
    sizes.set(5, 1 << 20);
    CHECK(sizes[5] == 1 << 20);
}

TEST_CASE("shallow sizes: sizes past 32 bits read back whole, set from several threads") {
    ShallowSizes sizes;
    sizes.assign(100000, 0);
    std::vector<std::thread> threads;
    for (std::uint64_t t = 0; t < 4; ++t)
        threads.emplace_back([&sizes, t] {
            for (std::size_t v = t; v < 100000; v += 4)
                sizes.set(v, v % 1000 == 0 ? (std::uint64_t{1} << 34) + v : v % 1000 == 1 ? 0xFFFFFFFFu : v * 8);
        });
    for (std::thread& t : threads) t.join();
    CHECK(sizes[0] == std::uint64_t{1} << 34);
    CHECK(sizes[1] == 0xFFFFFFFFu);
    CHECK(sizes[2] == 16);
    CHECK(sizes[99000] == (std::uint64_t{1} << 34) + 99000);
    CHECK(sizes[99999] == 99999 * 8);
    sizes.set(0, 24);  // a large size replaced by a small one
    CHECK(sizes[0] == 24);
    ShallowSizes listed{1, 0x1FFFFFFFFull, 3};
    CHECK(listed == std::vector<std::uint64_t>{1, 0x1FFFFFFFFull, 3});
    CHECK_FALSE(listed == std::vector<std::uint64_t>{1, 0xFFFFFFFFull, 3});
}

TEST_CASE("byte counts: 5 bytes a node below a 2^40 total, 8 at or past it, and every value up to the total reads back when set from several threads") {
    for (const std::uint64_t total : {(std::uint64_t{1} << 40) - 1, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
        CAPTURE(total);
        ByteCounts counts(100000, total);
        CHECK(counts.size() == 100000);
        CHECK(counts.width() == (total >> 40 == 0 ? 5 : 8));
        CHECK(counts[99999] == 0);  // fresh: zeros
        auto value = [total](std::uint64_t v) {
            return v % 3 == 0 ? total - v : v % 3 == 1 ? (std::uint64_t{1} << 32) + v : 0xFFFFFFFFu - v;
        };
        std::vector<std::thread> threads;
        for (std::uint64_t t = 0; t < 4; ++t)
            threads.emplace_back([&counts, &value, t] {
                for (std::size_t v = t; v < 100000; v += 4) counts.set(v, value(v));
            });
        for (std::thread& t : threads) t.join();
        std::size_t wrong = 0;
        for (std::size_t v = 0; v < 100000; ++v) wrong += counts[v] != value(v);
        CHECK(wrong == 0);
        ByteCounts copy(100000, total);
        for (std::size_t v = 0; v < 100000; ++v) copy.set(v, counts[v]);
        CHECK(copy == counts);
        copy.set(5, copy[5] + 1);
        CHECK_FALSE(copy == counts);
    }
}

TEST_CASE("column: scattered writes take one pass in memory and up to 8 slices of the node ids in files") {
    using heapgraph::graph::in_node_slices;
    using heapgraph::graph::scatter_passes;
    CHECK(scatter_passes(std::uint64_t{1} << 50, false) == 1);
    const std::size_t in_files = scatter_passes(std::uint64_t{1} << 50, true);
    CHECK(in_files >= 1);
    CHECK(in_files <= 8);
    for (std::size_t nodes : {0, 1, 7, 8, 9, 1000}) {
        for (std::size_t passes = 1; passes <= 8; ++passes) {
            std::vector<int> seen(nodes, 0);
            std::size_t next = 0, slices = 0;
            in_node_slices(nodes, passes, [&](std::size_t first, std::size_t last) {
                CHECK(first == next);  // in order, without gaps
                CHECK(first < last);
                for (std::size_t v = first; v < last; ++v) ++seen[v];
                next = last, ++slices;
            });
            CHECK(next == nodes);
            CHECK(slices <= passes);
            CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
        }
    }
}
