// graph::compute_dominators against dominator trees worked out by hand, then against Boost's
// Lengauer–Tarjan (dominator_oracle.h) on random graphs, on one long cycle and on every HPROF
// dump in data/. Every tree is also checked against itself: retained sizes sum up the tree,
// the super root retains every reached byte, and the preorder lists each reached node once,
// after its immediate dominator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dominator_oracle.h"
#include "graph.h"
#include "pipeline.h"
#include "test_support.h"

using namespace heapgraph;
using graph::Edge;
using graph::kSuperRoot;
using graph::kUnreached;
using graph::NodeId;

namespace {

struct TestGraph {
    std::uint32_t nodes = 0;
    std::vector<Edge> edges;
    std::vector<NodeId> roots;  // ascending, distinct
};

// The CSR of `edges`, keeping edge-list order within a row.
graph::Csr make_csr(const std::vector<Edge>& edges, std::uint32_t nodes, bool outgoing) {
    graph::Csr csr;
    graph::Column<std::uint64_t> starts(std::size_t{nodes} + 1, 0);
    for (const Edge& e : edges) ++starts[(outgoing ? e.from : e.to) + 1];
    std::partial_sum(starts.begin(), starts.end(), starts.begin());
    csr.targets.resize(edges.size());
    std::vector<std::uint64_t> next(starts.begin(), starts.end() - 1);
    for (const Edge& e : edges) csr.targets[next[outgoing ? e.from : e.to]++] = outgoing ? e.to : e.from;
    csr.set_starts(std::move(starts));
    return csr;
}

// Node v weighs 10 + v bytes, so every sum below can be checked by hand.
graph::ShallowSizes shallow_sizes(std::uint32_t nodes) {
    graph::ShallowSizes shallow;
    for (std::uint32_t v = 0; v < nodes; ++v) shallow.push_back(10 + v);
    return shallow;
}

struct Computed {
    graph::Csr out, in;
    graph::ShallowSizes shallow;
    graph::DominatorTree tree;
};

Computed compute(const TestGraph& g) {
    Computed c{make_csr(g.edges, g.nodes, true), make_csr(g.edges, g.nodes, false), shallow_sizes(g.nodes), {}};
    c.tree = graph::compute_dominators(c.out, c.in, g.roots, c.shallow);
    return c;
}

std::string name(NodeId v) {
    if (v == kSuperRoot) return "super root";
    if (v == kUnreached) return "unreached";
    return std::to_string(v);
}

std::string describe(const TestGraph& g) {
    std::ostringstream out;
    out << g.nodes << " nodes; roots";
    for (NodeId r : g.roots) out << ' ' << r;
    out << "; edges";
    for (const Edge& e : g.edges) out << ' ' << e.from << "->" << e.to;
    return out.str();
}

// What is wrong with `tree`: idoms that differ from `expected`, and retained sizes, counts,
// super root total or preorder that do not follow from the tree's own idoms. Empty when
// nothing is; at most 10 problems are spelled out.
// `preorder_freed`: the tree is compute_retained's, which frees the preorder once it has made
// the child lists; every other tree must list each reached node once, below its dominator.
std::string tree_problems(const graph::DominatorTree& tree, const std::vector<NodeId>& expected,
                          const graph::ShallowSizes& shallow, bool preorder_freed = false) {
    const std::size_t n = expected.size();
    std::ostringstream out;
    std::size_t problems = 0;
    auto report = [&](const auto&... parts) {
        if (problems++ < 10) {
            ((out << parts), ...);
            out << '\n';
        }
    };
    if (tree.idom.size() != n || tree.retained_bytes.size() != n || tree.retained_objects.size() != n)
        return "array sizes " + std::to_string(tree.idom.size()) + "/" + std::to_string(tree.retained_bytes.size()) +
               "/" + std::to_string(tree.retained_objects.size()) + ", expected " + std::to_string(n);

    for (std::size_t v = 0; v < n; ++v)
        if (tree.idom[v] != expected[v])
            report("node ", v, ": idom ", name(tree.idom[v]), ", oracle ", name(expected[v]));

    std::vector<std::uint64_t> bytes(n, 0), objects(n, 0);
    std::uint64_t reached = 0, reached_bytes = 0, super_children_bytes = 0;
    for (std::size_t v = 0; v < n; ++v) {
        NodeId up = tree.idom[v];
        if (up == kUnreached) continue;
        ++reached;
        reached_bytes += shallow[v];
        bytes[v] += shallow[v];
        objects[v] += 1;
        if (up == kSuperRoot)
            super_children_bytes += tree.retained_bytes[v];
        else if (up < n) {
            bytes[up] += tree.retained_bytes[v];
            objects[up] += tree.retained_objects[v];
        } else
            report("node ", v, ": idom ", up, " is no node");
    }
    for (std::size_t v = 0; v < n; ++v) {
        if (tree.idom[v] == kUnreached) {
            if (tree.retained_bytes[v] != 0 || tree.retained_objects[v] != 0)
                report("unreached node ", v, " retains ", tree.retained_bytes[v], " bytes, ",
                       tree.retained_objects[v], " objects");
            continue;
        }
        if (tree.retained_bytes[v] != bytes[v])
            report("node ", v, ": retains ", tree.retained_bytes[v], " bytes, its shallow size and children's make ",
                   bytes[v]);
        if (tree.retained_objects[v] != objects[v])
            report("node ", v, ": retains ", tree.retained_objects[v], " objects, itself and its children make ",
                   objects[v]);
    }
    if (tree.super_root_retained_bytes != reached_bytes)
        report("super root retains ", tree.super_root_retained_bytes, " bytes; the reached nodes weigh ",
               reached_bytes);
    if (tree.super_root_retained_bytes != super_children_bytes)
        report("super root retains ", tree.super_root_retained_bytes, " bytes; its children retain ",
               super_children_bytes);

    if (tree.reached != reached) report("the tree says ", tree.reached, " nodes were reached, not ", reached);
    if (tree.preorder.size() != (preorder_freed ? 0 : reached))
        report("preorder lists ", tree.preorder.size(), " nodes for ", reached, " reached",
               preorder_freed ? " (it should have been freed)" : "");
    constexpr std::size_t kNotListed = ~std::size_t{0};
    std::vector<std::size_t> position(n, kNotListed);
    for (std::size_t i = 0; i < tree.preorder.size(); ++i) {
        NodeId v = tree.preorder[i];
        if (v >= n || tree.idom[v] == kUnreached || position[v] != kNotListed) {
            report("preorder entry ", i, " (", name(v), ") is no reached node or comes twice");
            continue;
        }
        position[v] = i;
        NodeId up = tree.idom[v];
        if (up != kSuperRoot && (up >= n || position[up] == kNotListed))
            report("preorder lists node ", v, " before its immediate dominator ", name(up));
    }
    if (problems > 10) out << (problems - 10) << " more\n";
    return out.str();
}

// Checks a hand-built graph's tree node by node, then the oracle's answer on it.
void check_by_hand(const TestGraph& g, const std::vector<NodeId>& idom, const std::vector<std::uint64_t>& bytes,
                   const std::vector<std::uint32_t>& objects, std::uint64_t super_root_bytes) {
    REQUIRE(idom.size() == g.nodes);
    REQUIRE(bytes.size() == g.nodes);
    REQUIRE(objects.size() == g.nodes);
    Computed c = compute(g);
    REQUIRE(c.tree.idom.size() == g.nodes);
    REQUIRE(c.tree.retained_bytes.size() == g.nodes);
    REQUIRE(c.tree.retained_objects.size() == g.nodes);
    for (NodeId v = 0; v < g.nodes; ++v) {
        CAPTURE(v);
        CHECK(name(c.tree.idom[v]) == name(idom[v]));
        CHECK(c.tree.retained_bytes[v] == bytes[v]);
        CHECK(c.tree.retained_objects[v] == objects[v]);
    }
    CHECK(c.tree.super_root_retained_bytes == super_root_bytes);
    CHECK(tree_problems(c.tree, idom, c.shallow) == "");
    std::vector<NodeId> oracle = test::boost_idoms(c.out, g.roots);
    for (NodeId v = 0; v < g.nodes; ++v) {
        CAPTURE(v);
        CHECK(name(oracle[v]) == name(idom[v]));
    }
}

constexpr NodeId S = kSuperRoot;
constexpr NodeId U = kUnreached;

// Random graphs of 1..300 nodes in five shapes (sparse, dense, heap-like trees with extra
// references, long chains, diamond ladders), with node ids shuffled, and by chance self
// loops, duplicate edges and a region no root reaches whose nodes point into the rest.
class RandomGraphs {
public:
    explicit RandomGraphs(std::uint32_t seed) : rng_(seed) {}

    TestGraph next() {
        TestGraph g;
        std::uint32_t size = pick(0, 2);
        const std::uint32_t n = size == 0 ? pick(1, 12) : size == 1 ? pick(13, 60) : pick(61, 300);
        g.nodes = n;
        std::vector<NodeId> perm(n);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        auto& e = g.edges;
        auto any = [&] { return pick(0, n - 1); };
        switch (pick(0, 4)) {
        case 0:  // sparse
            for (std::uint32_t m = pick(0, 2 * n); m > 0; --m) e.push_back({any(), any()});
            break;
        case 1:  // dense
            for (std::uint32_t m = pick(2 * n, 6 * n); m > 0; --m) e.push_back({any(), any()});
            break;
        case 2:  // a tree with a few extra references
            for (std::uint32_t i = 1; i < n; ++i) e.push_back({perm[pick(0, i - 1)], perm[i]});
            for (std::uint32_t m = pick(0, n / 4); m > 0; --m) e.push_back({any(), any()});
            break;
        case 3:  // long chains, each hung from an earlier node, with a few back edges
            for (std::uint32_t i = 0; i < n;) {
                std::uint32_t length = pick(1, n - i);
                if (i > 0) e.push_back({perm[pick(0, i - 1)], perm[i]});
                for (std::uint32_t k = i + 1; k < i + length; ++k) e.push_back({perm[k - 1], perm[k]});
                i += length;
            }
            for (std::uint32_t m = pick(0, 3); m > 0; --m) {
                std::uint32_t later = pick(0, n - 1);
                e.push_back({perm[later], perm[pick(0, later)]});
            }
            break;
        default:  // a ladder of diamonds a -> b, c -> d, where d opens the next one
            std::uint32_t i = 0;
            for (; i + 3 < n; i += 3) {
                NodeId a = perm[i], b = perm[i + 1], c = perm[i + 2], d = perm[i + 3];
                e.insert(e.end(), {{a, b}, {a, c}, {b, d}, {c, d}});
            }
            for (++i; i < n; ++i) e.push_back({perm[pick(0, i - 1)], perm[i]});
            for (std::uint32_t m = pick(0, 3); m > 0; --m) e.push_back({any(), any()});
            break;
        }
        if (chance(0.3))
            for (std::uint32_t m = pick(1, 1 + n / 10); m > 0; --m) {
                NodeId v = any();
                e.push_back({v, v});
            }
        if (chance(0.3) && !e.empty())
            for (std::uint32_t m = pick(1, 1 + static_cast<std::uint32_t>(e.size()) / 5); m > 0; --m)
                e.push_back(e[pick(0, static_cast<std::uint32_t>(e.size()) - 1)]);

        // A region nothing outside it points into, which no root is chosen from.
        std::vector<std::uint8_t> unreached(n, 0);
        if (n >= 2 && chance(0.35)) {
            std::shuffle(perm.begin(), perm.end(), rng_);
            std::uint32_t count = pick(1, std::max(1u, n / 3));
            for (std::uint32_t i = 0; i < count; ++i) unreached[perm[i]] = 1;
            std::erase_if(e, [&](const Edge& x) { return !unreached[x.from] && unreached[x.to]; });
            for (std::uint32_t m = pick(1, 2 * count); m > 0; --m) e.push_back({perm[pick(0, count - 1)], any()});
        }

        std::vector<NodeId> candidates;
        for (NodeId v = 0; v < n; ++v)
            if (!unreached[v]) candidates.push_back(v);
        std::shuffle(candidates.begin(), candidates.end(), rng_);
        std::uint32_t roots = chance(0.03)  ? 0
                              : chance(0.5) ? 1
                                            : pick(1, std::min<std::uint32_t>(8, static_cast<std::uint32_t>(candidates.size())));
        g.roots.assign(candidates.begin(), candidates.begin() + roots);
        std::sort(g.roots.begin(), g.roots.end());
        std::shuffle(e.begin(), e.end(), rng_);
        return g;
    }

private:
    std::uint32_t pick(std::uint32_t lo, std::uint32_t hi) { return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng_); }
    bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
    std::mt19937 rng_;
};

// Every HPROF file in data/, as (path relative to data/) in a fixed order.
std::vector<std::string> corpus_files() {
    std::vector<std::string> files;
    for (const char* dir : {"hprof", "hprof-android"}) {
        std::vector<std::string> found;
        for (const auto& entry : std::filesystem::directory_iterator(test::data_path(dir)))
            if (entry.path().extension() == ".hprof") found.push_back(std::string(dir) + "/" + entry.path().filename().string());
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }
    for (const char* file : {"hprof/hprof-32.bin", "hprof-gz/java_pid1884.0001.hprof.gz", "samples/leakdemo.hprof",
                             "samples/leakdemo-nocoops.hprof.gz"})
        files.push_back(file);
    return files;
}

// 300,001 offsets: five blocks of 2^16 and a partial one, so every block boundary counts.
template <typename Offset>
void check_parallel_sums() {
    std::mt19937_64 random(7);
    graph::Column<Offset> offsets(300'001, 0);
    for (std::size_t v = 1; v < offsets.size(); ++v) offsets[v] = static_cast<Offset>(random() % 5);
    std::vector<Offset> expected(offsets.begin(), offsets.end());
    std::partial_sum(expected.begin(), expected.end(), expected.begin());
    graph::sum_degrees(offsets);
    CHECK(std::equal(offsets.begin(), offsets.end(), expected.begin(), expected.end()));
    // A scatter leaves each cursor at its row's end, where the next row starts.
    graph::ends_to_starts(offsets);
    CHECK(offsets[0] == 0);
    std::size_t mismatches = 0;
    for (std::size_t v = 1; v < offsets.size(); ++v) mismatches += offsets[v] != expected[v - 1];
    CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("csr: row starts summed and shifted in parallel blocks equal the serial prefix sums, 32 and 64 bits") {
    check_parallel_sums<std::uint32_t>();
    check_parallel_sums<std::uint64_t>();
}

TEST_CASE("dominators: the referrer rows of a graph spanning many blocks equal a serial transpose's shared rows") {
    // 200,000 nodes, 600,000 edges, targets skewed to low ids so that many have several referrers.
    std::mt19937_64 random(11);
    TestGraph g{200'000, {}, {0}};
    for (std::uint32_t k = 0; k < 600'000; ++k) {
        const auto from = static_cast<NodeId>(random() % g.nodes);
        const auto to = static_cast<NodeId>((random() % g.nodes) * (random() % g.nodes) / g.nodes);
        g.edges.push_back({from, to});
    }
    std::stable_sort(g.edges.begin(), g.edges.end(), [](const Edge& a, const Edge& b) { return a.from < b.from; });
    const graph::Csr out = make_csr(g.edges, g.nodes, true);
    const graph::Csr all = make_csr(g.edges, g.nodes, false);  // every referrer, sources ascending
    // Counted with 32-bit row starts, and with 64-bit ones (as past 2^32 - 1 targets); by a
    // worker per range of targets (columns in memory), and through parts of targets whose
    // counts and rows fit a small window (as when the columns are in files): 64 KB here,
    // 98 parts of 2,048 nodes.
    for (const std::uint64_t narrow_targets : {std::uint64_t{0xFFFFFFFFu}, std::uint64_t{0}})
    for (const std::uint64_t window_bytes : {std::uint64_t{0}, std::uint64_t{64} << 10}) {
        CAPTURE(narrow_targets);
        CAPTURE(window_bytes);
        const graph::Csr in = graph::transpose(out, {}, {}, narrow_targets, window_bytes);
        REQUIRE(in.rows() == g.nodes);
        std::size_t mismatches = 0, shared = 0;
        for (NodeId v = 0; v < g.nodes; ++v) {
            const auto want = all.of(v);
            const bool kept = want.size() >= 2;
            shared += kept;
            mismatches += kept ? !std::equal(want.begin(), want.end(), in.of(v).begin(), in.of(v).end()) : !in.of(v).empty();
        }
        CHECK(shared > 10'000);
        CHECK(mismatches == 0);
    }
}

TEST_CASE("dominators: the referrer rows hold only objects with two or more referrers, sorted, duplicates kept") {
    // 0 -> 1, 0 -> 2, 3 -> 2, 2 -> 3, 3 -> 3, 1 -> 4, 1 -> 4 (twice: two fields)
    TestGraph g{5, {{3, 2}, {0, 1}, {0, 2}, {2, 3}, {3, 3}, {1, 4}, {1, 4}}, {0}};
    graph::Csr out = make_csr(g.edges, g.nodes, true);
    graph::Csr in = graph::transpose(out);
    REQUIRE(in.rows() == 5);
    CHECK(in.of(0).empty());
    CHECK(in.of(1).empty());  // one referrer: no row
    CHECK(std::vector<NodeId>(in.of(2).begin(), in.of(2).end()) == std::vector<NodeId>{0, 3});
    CHECK(std::vector<NodeId>(in.of(3).begin(), in.of(3).end()) == std::vector<NodeId>{2, 3});
    CHECK(std::vector<NodeId>(in.of(4).begin(), in.of(4).end()) == std::vector<NodeId>{1, 1});
    CHECK(in.targets.size() == 6);
    graph::DominatorTree tree = graph::compute_dominators(out, in, g.roots, shallow_sizes(g.nodes));
    CHECK(tree.idom == std::vector<NodeId>{kSuperRoot, 0, 0, 2, 1});
    CHECK(tree.condensed_nodes == 4);  // the root, 2, 3 and 4
}

TEST_CASE("dominators: an empty graph has an empty tree and a super root that retains nothing") {
    TestGraph g{0, {}, {}};
    Computed c = compute(g);
    CHECK(c.tree.idom.empty());
    CHECK(c.tree.retained_bytes.empty());
    CHECK(c.tree.retained_objects.empty());
    CHECK(c.tree.preorder.empty());
    CHECK(c.tree.super_root_retained_bytes == 0);
    CHECK(test::boost_idoms(c.out, g.roots).empty());
}

TEST_CASE("dominators: a single root is the super root's only child and retains itself") {
    check_by_hand({1, {}, {0}}, {S}, {10}, {1}, 10);
    // The same node without a root is reached by nothing.
    check_by_hand({1, {}, {}}, {U}, {0}, {0}, 0);
}

TEST_CASE("dominators: each node of a chain is immediately dominated by the one before it") {
    TestGraph g{5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}}, {0}};
    check_by_hand(g, {S, 0, 1, 2, 3}, {60, 50, 39, 27, 14}, {5, 4, 3, 2, 1}, 60);
    CHECK(compute(g).tree.preorder == std::vector<NodeId>{0, 1, 2, 3, 4});
}

TEST_CASE("dominators: the join of a diamond is dominated by the fork and retains what hangs below it") {
    TestGraph g{5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}}, {0}};
    check_by_hand(g, {S, 0, 0, 0, 3}, {60, 11, 12, 27, 14}, {5, 1, 1, 2, 1}, 60);
}

TEST_CASE("dominators: the Lengauer-Tarjan paper graph gets the paper's dominator tree") {
    // Lengauer and Tarjan (1979), figure 1, as Eclipse MAT's CreateSampleDump.DominatorTestData
    // builds it; R is the only GC root.
    enum : NodeId { R, A, B, C, D, E, F, G, H, I, J, K, L };
    TestGraph g{13,
                {{R, A}, {R, B}, {R, C}, {A, D}, {B, A}, {B, D}, {B, E}, {C, F}, {C, G}, {D, L}, {E, H},
                 {F, I}, {G, I}, {G, J}, {H, E}, {H, K}, {I, K}, {J, I}, {K, I}, {K, R}, {L, H}},
                {R}};
    // R -> {A, B, C, D, E, H, I, K}, C -> {F, G}, D -> {L}, G -> {J}; shallow sizes 10 (R) to 22 (L).
    std::vector<NodeId> idom{S, R, R, R, R, R, C, C, R, R, G, R, D};
    std::vector<std::uint64_t> bytes{208, 11, 12, 13 + 16 + 17 + 20, 14 + 22, 15, 16, 17 + 20, 18, 19, 20, 21, 22};
    std::vector<std::uint32_t> objects{13, 1, 1, 4, 2, 1, 1, 2, 1, 1, 1, 1, 1};
    check_by_hand(g, idom, bytes, objects, 208);
    CHECK(bytes[C] == 66);
    CHECK(bytes[D] == 36);
}

TEST_CASE("dominators: the caller's referrer rows are left as they were, and the releasing form rewrites and frees its own") {
    // The search rewrites referrer rows to DFS numbers in place: compute_dominators must do
    // that on a copy. The paper graph's shared objects, with an unreached referrer (13 -> I).
    enum : NodeId { R, A, B, C, D, E, F, G, H, I, J, K, L, X };
    TestGraph g{14,
                {{R, A}, {R, B}, {R, C}, {A, D}, {B, A}, {B, D}, {B, E}, {C, F}, {C, G}, {D, L}, {E, H},
                 {F, I}, {G, I}, {G, J}, {H, E}, {H, K}, {I, K}, {J, I}, {K, I}, {K, R}, {L, H}, {X, I}},
                {R}};
    const Computed kept = compute(g);
    const graph::Csr fresh = make_csr(g.edges, g.nodes, false);
    CHECK(std::vector<NodeId>(kept.in.targets.begin(), kept.in.targets.end()) ==
          std::vector<NodeId>(fresh.targets.begin(), fresh.targets.end()));
    graph::Csr out = make_csr(g.edges, g.nodes, true), in = make_csr(g.edges, g.nodes, false);
    bool called = false;
    const graph::DominatorTree tree =
        graph::compute_dominators_releasing(out, in, g.roots, kept.shallow, {}, {}, [&] { called = true; });
    CHECK(called);
    CHECK(out.empty());
    CHECK(in.empty());
    CHECK(std::vector<NodeId>(tree.idom.begin(), tree.idom.end()) ==
          std::vector<NodeId>(kept.tree.idom.begin(), kept.tree.idom.end()));
    CHECK(tree.idom[X] == kUnreached);
    CHECK(tree.idom[I] == R);
}

TEST_CASE("dominators: a cycle entered at a root is dominated around the cycle from that root") {
    // 0 -> 1 -> 2 -> 3 -> 0, rooted at 2: 2 dominates 3, 3 dominates 0, 0 dominates 1.
    TestGraph g{4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, {2}};
    check_by_hand(g, {3, 0, S, 2}, {21, 11, 46, 34}, {2, 1, 4, 3}, 46);
}

TEST_CASE("dominators: unreachable nodes pointing into the reachable part change no dominator") {
    // 0 -> 1 -> 2 -> 3 from root 0; 4 and 5 reference each other, themselves and 1, 2 and 3,
    // and nothing reached references them (Boost's 3-argument form gets this wrong).
    TestGraph g{6, {{0, 1}, {1, 2}, {2, 3}, {4, 3}, {4, 2}, {5, 5}, {5, 4}, {4, 5}, {5, 1}}, {0}};
    check_by_hand(g, {S, 0, 1, 2, U, U}, {46, 36, 25, 13, 0, 0}, {4, 3, 2, 1, 0, 0}, 46);
    CHECK(compute(g).tree.preorder == std::vector<NodeId>{0, 1, 2, 3});
}

TEST_CASE("dominators: several GC roots hang from the super root along with what they share") {
    // Roots 1, 3 and 5. 0 is shared by 1 and 3, 4 by 3 and 6 (under 5), so both hang from the
    // super root; 3 is a root though 1 references it; 2 and 6 are 5's alone.
    TestGraph g{7, {{1, 0}, {3, 0}, {1, 3}, {3, 4}, {5, 6}, {6, 4}, {5, 2}, {6, 2}}, {1, 3, 5}};
    check_by_hand(g, {S, S, 5, S, S, S, 5}, {10, 11, 12, 13, 14, 43, 16}, {1, 1, 1, 1, 1, 3, 1}, 91);
}

TEST_CASE("dominators: twenty thousand random graphs get Boost's Lengauer-Tarjan dominators") {
    constexpr int kGraphs = 20'000;
    RandomGraphs graphs(20240611);
    int failures = 0, with_unreached_referrers = 0, with_self_loops = 0, with_duplicates = 0, with_no_root = 0;
    std::uint64_t nodes = 0, edges = 0, condensed_nodes = 0, reached_nodes = 0;
    for (int i = 0; i < kGraphs; ++i) {
        TestGraph g = graphs.next();
        nodes += g.nodes;
        edges += g.edges.size();
        Computed c = compute(g);
        std::vector<NodeId> oracle = test::boost_idoms(c.out, g.roots);
        std::string problems = tree_problems(c.tree, oracle, c.shallow);
        // The graph's own referrer rows (shared objects only) give the same tree.
        graph::DominatorTree condensed = graph::compute_dominators(c.out, graph::transpose(c.out), g.roots, c.shallow);
        if (condensed.idom != c.tree.idom || condensed.retained_bytes != c.tree.retained_bytes)
            problems += "condensed referrer rows give another tree; ";
        condensed_nodes += condensed.condensed_nodes;
        reached_nodes += condensed.preorder.size();
        // The parts the note names are spans within the step's time after the numbering.
        const double parts = condensed.rewrite_seconds + condensed.semi_seconds + condensed.sums_seconds;
        if (condensed.rewrite_seconds < 0 || condensed.semi_seconds < 0 || condensed.sums_seconds < 0 ||
            parts > condensed.search_seconds + 1e-9)
            problems += "the step's parts do not lie within its time; ";
        if (!problems.empty() && ++failures <= 5) {
            CAPTURE(i);
            CAPTURE(describe(g));
            FAIL_CHECK(problems);
        }
        // What the graph covered.
        bool unreached_referrer = false, self_loop = false;
        for (const Edge& e : g.edges) {
            unreached_referrer |= oracle[e.from] == kUnreached && oracle[e.to] != kUnreached;
            self_loop |= e.from == e.to;
        }
        std::vector<Edge> sorted = g.edges;
        std::sort(sorted.begin(), sorted.end(), [](Edge a, Edge b) { return a.from != b.from ? a.from < b.from : a.to < b.to; });
        bool duplicate = std::adjacent_find(sorted.begin(), sorted.end(), [](Edge a, Edge b) {
                             return a.from == b.from && a.to == b.to;
                         }) != sorted.end();
        with_unreached_referrers += unreached_referrer;
        with_self_loops += self_loop;
        with_duplicates += duplicate;
        with_no_root += g.roots.empty();
    }
    CHECK(failures == 0);
    CAPTURE(nodes);
    CAPTURE(edges);
    CHECK(with_unreached_referrers > kGraphs / 4);
    CHECK(with_self_loops > kGraphs / 4);
    CHECK(with_duplicates > kGraphs / 4);
    CHECK(with_no_root > 0);
    // Both kinds of node occur: searched (shared or roots) and direct (one referrer).
    CHECK(condensed_nodes > reached_nodes / 10);
    CHECK(condensed_nodes < reached_nodes * 9 / 10);
}

// With the columns in files, a node's record keeps its DFS parent beside its number, and the
// search takes a referrer with one referrer of its own through that parent (graph/dominators.cpp).
TEST_CASE("dominators: with every column in a file, random graphs get Boost's Lengauer-Tarjan dominators") {
    test::StorageBudget budget(1);  // one byte: every column in a file
    REQUIRE_FALSE(graph::fits_memory_budget(sizeof(NodeId)));
    RandomGraphs graphs(20261128);
    int failures = 0;
    for (int i = 0; i < 2'000; ++i) {
        TestGraph g = graphs.next();
        graph::Csr out = make_csr(g.edges, g.nodes, true);
        graph::ShallowSizes shallow = shallow_sizes(g.nodes);
        graph::DominatorTree tree = graph::compute_dominators(out, graph::transpose(out), g.roots, shallow);
        std::string problems = tree_problems(tree, test::boost_idoms(out, g.roots), shallow);
        if (!problems.empty() && ++failures <= 5) {
            CAPTURE(i);
            CAPTURE(describe(g));
            FAIL_CHECK(problems);
        }
    }
    CHECK(failures == 0);
    CHECK(graph::storage_use().file_columns > 0);
}

// No step reads a root's referrers (the search starts a root's semidominator at the super
// root), so the transpose leaves the roots' rows out when told them.
TEST_CASE("dominators: the roots' referrer rows are left out of the transpose, and random graphs still get Boost's dominators") {
    RandomGraphs graphs(20261129);
    int failures = 0, roots_shared = 0;
    for (int i = 0; i < 2'000; ++i) {
        TestGraph g = graphs.next();
        const graph::Csr out = make_csr(g.edges, g.nodes, true);
        const graph::Csr all = graph::transpose(out);
        const graph::ShallowSizes shallow = shallow_sizes(g.nodes);
        // In memory, and through parts of targets as when the columns are in files.
        for (const std::uint64_t window_bytes : {std::uint64_t{0}, std::uint64_t{256}}) {
            const graph::Csr in = graph::transpose(out, g.roots, {}, 0xFFFFFFFFu, window_bytes);
            std::size_t mismatches = 0;
            for (NodeId v = 0; v < g.nodes; ++v) {
                const bool root = std::find(g.roots.begin(), g.roots.end(), v) != g.roots.end();
                roots_shared += root && window_bytes == 0 && all.of(v).size() >= 2;
                const auto want = root ? std::span<const NodeId>{} : all.of(v);
                mismatches += !std::equal(want.begin(), want.end(), in.of(v).begin(), in.of(v).end());
            }
            graph::DominatorTree tree = graph::compute_dominators(out, in, g.roots, shallow);
            std::string problems = tree_problems(tree, test::boost_idoms(out, g.roots), shallow);
            if (mismatches) problems += std::to_string(mismatches) + " rows differ; ";
            if (!problems.empty() && ++failures <= 5) {
                CAPTURE(i);
                CAPTURE(window_bytes);
                CAPTURE(describe(g));
                FAIL_CHECK(problems);
            }
        }
    }
    CHECK(failures == 0);
    CHECK(roots_shared > 200);  // roots with two or more referrers, whose rows went
}

TEST_CASE("dominators: a cycle of 300000 nodes with chords gets Boost's Lengauer-Tarjan dominators") {
    // 0 -> 1 -> ... -> n-1 -> 0 from root 0, a forward chord 1000 -> 200000, edges
    // 250000 -> 5000 and 299999 -> 100000 back into the first part of the cycle, and a
    // duplicate edge. Each chord gives its target two referrers that 1000 is the nearest
    // common dominator of. The back edges into a path linked 200,000 deep make Boost's path
    // compression recurse that deep.
    constexpr std::uint32_t n = 300'000;
    TestGraph g{n, {}, {0}};
    for (std::uint32_t v = 0; v < n; ++v) g.edges.push_back({v, (v + 1) % n});
    g.edges.insert(g.edges.end(), {{1000, 200000}, {250000, 5000}, {299999, 100000}, {150000, 150001}});
    Computed c = compute(g);
    std::vector<NodeId> oracle = test::boost_idoms_big_stack(c.out, g.roots);
    std::string problems = tree_problems(c.tree, oracle, c.shallow);
    CHECK(problems == "");
    CHECK(c.tree.idom[0] == kSuperRoot);
    CHECK(c.tree.idom[1] == 0);
    CHECK(c.tree.idom[1001] == 1000);
    CHECK(c.tree.idom[5000] == 1000);
    CHECK(c.tree.idom[100000] == 1000);
    CHECK(c.tree.idom[200000] == 1000);
    CHECK(c.tree.idom[199999] == 199998);
    CHECK(c.tree.idom[200001] == 200000);
    CHECK(c.tree.retained_objects[0] == n);
    CHECK(c.tree.retained_objects[1000] == n - 1000);
    CHECK(c.tree.retained_objects[1001] == 5000 - 1001);
    CHECK(c.tree.retained_objects[5000] == 100000 - 5000);
    CHECK(c.tree.retained_objects[100000] == 200000 - 100000);
    CHECK(c.tree.retained_objects[200000] == n - 200000);
    std::uint64_t total = std::uint64_t{n} * 10 + std::uint64_t{n} * (n - 1) / 2;
    CHECK(c.tree.retained_bytes[0] == total);
    CHECK(c.tree.super_root_retained_bytes == total);
}

// Nodes whose top_index does not name, in r.top, the top-level dominator the oracle's idoms
// lead to (the suspects count by it).
std::uint64_t top_index_problems(const graph::Retained& r, const std::vector<NodeId>& oracle) {
    std::vector<NodeId> top_of(oracle.size(), kUnreached);
    std::uint64_t problems = 0;
    for (NodeId v = 0; v < oracle.size(); ++v) {
        if (oracle[v] == kUnreached) continue;
        std::vector<NodeId> climbed;
        NodeId u = v;
        while (top_of[u] == kUnreached && oracle[u] != graph::kSuperRoot) climbed.push_back(u), u = oracle[u];
        const NodeId top = top_of[u] != kUnreached ? top_of[u] : u;
        top_of[u] = top;
        for (NodeId x : climbed) top_of[x] = top;
        problems += r.top_index[v] >= r.top.size() || r.top[r.top_index[v]] != top;
    }
    return problems;
}

TEST_CASE("dominators: every corpus HPROF dump gets Boost's Lengauer-Tarjan dominators and sums up its tree") {
    int dumps = 0;
    for (const std::string& file : corpus_files()) {
        std::uint32_t dumps_in_file = 1;
        for (std::uint32_t index = 0; index < dumps_in_file; ++index) {
            CAPTURE(file);
            CAPTURE(index);
            LoadOptions options;
            options.dump_index = index;
            LoadedDump dump = load_dump(test::data_path(file), options);
            dumps_in_file = dump.info.dumps_in_file;
            ++dumps;
            const graph::HeapGraph& hg = dump.graph;
            const std::uint32_t n = hg.node_count();
            CHECK(n > 0);
            CHECK(!hg.root_nodes.empty());

            graph::DominatorTree tree = graph::compute_dominators(hg.out, hg.in, hg.root_nodes, hg.shallow_bytes);
            std::vector<NodeId> oracle = test::boost_idoms_big_stack(hg.out, hg.root_nodes);
            CHECK(tree_problems(tree, oracle, hg.shallow_bytes) == "");

            std::uint64_t reached_bytes = 0, mismatched_reach = 0;
            const graph::NodeBits walked = graph::mark_reachable(hg.out, hg.root_nodes);
            for (NodeId v = 0; v < n; ++v) {
                bool reached = tree.idom[v] != kUnreached;
                if (reached) reached_bytes += hg.shallow_bytes[v];
                mismatched_reach += reached != walked.test(v);
            }
            CHECK(mismatched_reach == 0);
            CHECK(tree.super_root_retained_bytes == reached_bytes);
            CHECK(tree.super_root_retained_bytes == graph::summarize(hg).reachable_bytes);

            // The roots compute_retained chooses with keep_unreachable (unreachable objects
            // nothing unreachable references) make a second, larger forest to compare.
            graph::Retained kept = graph::compute_retained(hg, {.keep_unreachable = true});
            std::vector<NodeId> roots = hg.root_nodes;
            roots.insert(roots.end(), kept.unreachable_roots.begin(), kept.unreachable_roots.end());
            std::sort(roots.begin(), roots.end());
            std::vector<NodeId> kept_oracle = test::boost_idoms_big_stack(hg.out, roots);
            CHECK(tree_problems(kept.tree, kept_oracle, hg.shallow_bytes, /*preorder_freed=*/true) == "");
            CHECK(top_index_problems(kept, kept_oracle) == 0);
        }
    }
    CHECK(dumps == 19);
}
