// Edge list -> CSR (outgoing, and incoming for shared objects) -> reachability from the GC roots.
// The CSR build follows gapbs' MakeCSR in named steps: count degrees, prefix sum, scatter.
// Scatter keeps edge-list order within a node, so the result does not depend on threads.
#include "graph.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_scan.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <atomic>
#include <functional>
#include <vector>

namespace heapgraph::graph {

namespace {
constexpr std::size_t kScanGrain = std::size_t{1} << 16;
}

// In parallel (a pass over block sums, then the final one): on the 2 GB BigHeap dump each
// of these was a pass over 33M offsets on one core (the out rows, the referrer rows).
template <typename Offset>
void sum_degrees(Column<Offset>& offsets) {
    using Range = tbb::blocked_range<std::size_t>;
    tbb::parallel_scan(
        Range(0, offsets.size(), kScanGrain), Offset{0},
        [&](const Range& r, Offset sum, bool final) {
            for (std::size_t v = r.begin(); v != r.end(); ++v) {
                sum += offsets[v];
                if (final) offsets[v] = sum;
            }
            return sum;
        },
        std::plus<>());
}

template <typename Offset>
void ends_to_starts(Column<Offset>& offsets) {
    // Each block's first offset takes the one before it, which the block before overwrites:
    // those are read first.
    const std::size_t n = offsets.size(), blocks = (n + kScanGrain - 1) / kScanGrain;
    std::vector<Offset> before(blocks, 0);
    for (std::size_t b = 1; b < blocks; ++b) before[b] = offsets[b * kScanGrain - 1];
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::size_t first = b * kScanGrain, last = std::min(n, first + kScanGrain);
        for (std::size_t v = last - 1; v > first; --v) offsets[v] = offsets[v - 1];
        offsets[first] = before[b];
    });
}

template void sum_degrees(Column<std::uint32_t>&);
template void sum_degrees(Column<std::uint64_t>&);
template void ends_to_starts(Column<std::uint32_t>&);
template void ends_to_starts(Column<std::uint64_t>&);

void Csr::set_starts(Column<std::uint64_t>&& starts, std::uint64_t narrow_span) {
    count_ = starts.size();
    rows_ = count_ ? count_ - 1 : 0;
    present_ = {}, ranks_ = {};
    const std::size_t blocks = (count_ >> kBlockBits) + 1;
    wide_ = false;
    for (std::size_t b = 0; b < blocks && !wide_; ++b) {
        const std::size_t first = b << kBlockBits, last = std::min(count_, (b + 1) << kBlockBits);
        wide_ = first < last && starts[last - 1] - starts[first] > narrow_span;
    }
    if (wide_) {
        starts_ = std::move(starts);
        narrow_ = {}, bases_ = {};
        return;
    }
    narrow_.resize(count_);
    narrow_blocks(starts, narrow_);
    starts = {}, starts_ = {};
}

void Csr::set_starts(Column<std::uint32_t>&& starts) {
    count_ = starts.size();
    rows_ = count_ ? count_ - 1 : 0;
    present_ = {}, ranks_ = {};
    wide_ = false;
    narrow_blocks(starts, starts);  // in place: the column is then kept as the offsets
    narrow_ = std::move(starts);
    starts_ = {};
}

// Each block's first start into bases_, and every start less its block's into `offsets`
// (which may be `starts` itself: a start is read before its offset is written). Blocks are
// independent.
template <typename Offset>
void Csr::narrow_blocks(const Column<Offset>& starts, Column<std::uint32_t>& offsets) {
    const std::size_t blocks = (count_ >> kBlockBits) + 1;
    bases_.assign(blocks, 0);
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
        const std::size_t first = b << kBlockBits, last = std::min(count_, (b + 1) << kBlockBits);
        if (first >= last) return;
        const Offset base = starts[first];
        bases_[b] = base;
        for (std::size_t v = first; v < last; ++v) offsets[v] = static_cast<std::uint32_t>(starts[v] - base);
    });
}

template <typename Offset>
void Csr::set_starts_of(NodeBits&& present, Column<Offset>&& starts, std::uint64_t narrow_span) {
    const std::size_t n = starts.size() - 1, words = present.words();
    NodeBits bits = std::move(present);
    Column<NodeId> ranks(words);
    NodeId flagged = 0;
    for (std::size_t i = 0; i < words; ++i) ranks[i] = flagged, flagged += static_cast<NodeId>(std::popcount(bits.word(i)));
    Column<Offset> kept(std::size_t{flagged} + 1);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, words), [&](const auto& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            std::size_t at = ranks[i];
            for (std::uint64_t word = bits.word(i); word != 0; word &= word - 1)
                kept[at++] = starts[i * 64 + static_cast<std::size_t>(std::countr_zero(word))];
        }
    });
    kept[flagged] = starts[n];
    starts = {};
    if constexpr (sizeof(Offset) == sizeof(std::uint64_t))
        set_starts(std::move(kept), narrow_span);
    else
        set_starts(std::move(kept));
    // After set_starts, which makes rows by index: the index is now the rank.
    present_ = std::move(bits), ranks_ = std::move(ranks), rows_ = n;
}

bool Csr::layout_holds() const {
    if (count_ == 0)  // as made (Csr{}), or rows of no nodes
        return rows_ == 0 && narrow_.empty() && starts_.empty() && bases_.size() <= 1 && present_.empty() && ranks_.empty();
    const bool parts = wide_ ? starts_.size() == count_ && narrow_.empty() && bases_.empty()
                             : starts_.empty() && narrow_.size() == count_ && bases_.size() == (count_ >> kBlockBits) + 1;
    if (!parts) return false;
    if (present_.empty()) return ranks_.empty() && rows_ + 1 == count_;
    if (present_.words() != rows_ / 64 + 1 || ranks_.size() != present_.words()) return false;
    std::uint64_t flagged = 0;
    for (std::size_t i = 0; i < present_.words(); flagged += static_cast<std::uint64_t>(std::popcount(present_.word(i++))))
        if (ranks_[i] != flagged) return false;
    return flagged + 1 == count_;
}

template void Csr::set_starts_of(NodeBits&&, Column<std::uint32_t>&&, std::uint64_t);
template void Csr::set_starts_of(NodeBits&&, Column<std::uint64_t>&&, std::uint64_t);

std::uint64_t Csr::nonempty_word(std::size_t word) const {
    std::uint64_t bits = 0;
    if (present_.empty()) {
        for (std::size_t v = word * 64; v < std::min(rows_, word * 64 + 64); ++v)
            bits |= std::uint64_t{start(v) != start(v + 1)} << (v & 63);
        return bits;
    }
    std::uint64_t at = ranks_[word];
    for (std::uint64_t left = present_.word(word); left != 0; left &= left - 1, ++at)
        if (start(at) != start(at + 1)) bits |= left & -left;
    return bits;
}

NodeBits nonempty_rows(const Csr& rows, std::size_t nodes) {
    NodeBits bits(nodes);
    const std::size_t words = std::min(bits.words(), (rows.rows() + 63) / 64);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, words), [&](const auto& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) bits.word(i) = rows.nonempty_word(i);
    });
    return bits;
}

std::uint64_t Csr::offset_bytes() const {
    return narrow_.size() * sizeof(std::uint32_t) + (bases_.size() + starts_.size() + present_.words()) * sizeof(std::uint64_t) +
           ranks_.size() * sizeof(NodeId);
}

namespace {

Csr make_csr(const std::vector<Edge>& edges, NodeId nodes) {
    Csr csr;
    Column<std::uint64_t> starts(static_cast<std::size_t>(nodes) + 1, 0);
    for (const Edge& e : edges) ++starts[e.from + 1];
    sum_degrees(starts);
    csr.targets.resize(edges.size());
    for (const Edge& e : edges) csr.targets[starts[e.from]++] = e.to;
    ends_to_starts(starts);
    csr.set_starts(std::move(starts));
    return csr;
}

}  // namespace

// A depth-first walk with an explicit stack. Serial on purpose: a parallel BFS paid more in
// atomics and frontier copies than it gained. The analysis needs it only to keep unreachable
// objects (PHD, classic text, --keep-unreachable): the dominator step reaches the same nodes.
NodeBits mark_reachable(const Csr& out, std::span<const NodeId> starts) {
    NodeBits seen(out.rows());
    std::vector<NodeId> stack;
    for (NodeId s : starts)
        if (!seen.test(s)) seen.set(s), stack.push_back(s);
    while (!stack.empty()) {
        NodeId v = stack.back();
        stack.pop_back();
        for (NodeId w : out.of(v))
            if (!seen.test(w)) seen.set(w), stack.push_back(w);
    }
    return seen;
}

const NodeBits& reachable_of(const HeapGraph& graph, NodeBits& walked) {
    if (graph.reachable.words() != 0 || graph.node_count() == 0) return graph.reachable;
    walked = mark_reachable(graph.out, graph.root_nodes);
    return walked;
}

namespace {

// Rows of fewer than two referrers become empty: an object with one referrer is immediately
// dominated by it, and no step reads its row. Nor does any step read a root's (the dominator
// search gives a root the super root as semidominator without reading its referrers): the
// roots' rows become empty too. `counts[w + 1]` holds w's referrers on entry;
// on return `offsets[w]` is w's row start and `multi` has w's bit set when it has a row (the
// bits the referrer rows then keep: Csr::set_starts_of).
template <typename Offset>
NodeBits keep_shared_rows(Column<Offset>& offsets, std::span<const NodeId> roots) {
    const std::size_t n = offsets.size() - 1;
    for (NodeId r : roots) offsets[r + 1] = 0;
    NodeBits multi(n + 1);  // a bit for n too, never set: the rows' end ranks through it
    // A word of bits a step, so that no two threads write one word.
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, multi.words(), kScanGrain / 64), [&](const auto& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
            std::uint64_t word = 0;
            for (std::size_t v = i * 64; v < std::min(n, i * 64 + 64); ++v) {
                if (offsets[v + 1] >= 2) word |= std::uint64_t{1} << (v & 63);
                else offsets[v + 1] = 0;
            }
            multi.word(i) = word;
        }
    });
    sum_degrees(offsets);
    return multi;
}

// Referrer rows from outgoing ones, for the objects with two or more referrers only (most
// heap objects have one: their rows would hold most of the edges and serve no step). Each
// worker owns a range of targets and scans every edge, sources ascending: no atomics, and
// every row comes out sorted by source, the same for any number of workers.
template <typename Offset>
Csr transpose_with(const Csr& out, std::span<const NodeId> roots, const Progress& progress) {
    const std::size_t n = out.rows();
    const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(
        static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()), n / 65536 + 1));
    auto owner_range = [&](std::size_t p) { return std::pair<NodeId, NodeId>(n * p / parts, n * (p + 1) / parts); };
    // Every worker walks all edges twice (count, then scatter); the first one draws the bar.
    const Progress none;
    Csr in;
    Column<Offset> starts(n + 1, 0);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        auto [lo, hi] = owner_range(p);
        // A flat pass over the targets (rows cost a second load per node); the bar moves
        // by slices of the targets, counted as their share of the rows.
        const std::size_t edges = out.targets.size();
        constexpr std::size_t kSlice = std::size_t{1} << 22;
        for (std::size_t begin = 0; begin < edges; begin += kSlice) {
            const std::size_t end = std::min(edges, begin + kSlice);
            for (std::size_t e = begin; e < end; ++e) {
                NodeId w = out.targets[e];
                if (w >= lo && w < hi) ++starts[w + 1];
            }
            if (p == 0 && progress) progress(static_cast<std::uint64_t>(static_cast<double>(n) * end / edges), 2 * n);
        }
    });
    NodeBits multi = keep_shared_rows(starts, roots);
    in.targets.resize(starts[n]);
    // starts[w] is w's cursor while scattering (ends_to_starts).
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        auto [lo, hi] = owner_range(p);
        Ticker tick(p == 0 ? progress : none, 2 * n, n);
        for (NodeId v = 0; v < n; ++v, tick.step())
            for (NodeId w : out.of(v))
                if (w >= lo && w < hi && multi.test(w)) in.targets[starts[w]++] = v;
    });
    ends_to_starts(starts);
    in.set_starts_of(std::move(multi), std::move(starts));
    if (progress) progress(2 * n, 2 * n);
    return in;
}

// The edges whose targets fall in one range of nodes (a part), as (target, source) pairs in
// source order, written with write() to files a slice of the sources each: buffered here,
// then page cache, never mapped, so they cost the process neither memory nor faults. Not a
// SpilledRows: that keeps its first MB in memory, which for 512 parts would be 512 MB.
class PartEdges {
public:
    struct Pair {
        NodeId target, source;
    };
    void add(Pair pair) {
        buffer_.push_back(pair);
        if (buffer_.size() == kBufferPairs) flush();
    }
    void flush() {
        if (buffer_.empty()) return;  // no file for an empty part
        file_.append(buffer_.data(), buffer_.size() * sizeof(Pair));
        buffer_.clear();
    }
    // body(pair) over every pair, in the order added; after flush().
    template <typename Body>
    void each(Body body) const {
        std::vector<Pair> slab;
        const std::uint64_t pairs = file_.bytes() / sizeof(Pair);
        for_each_slab(pairs, kBufferPairs, [&](std::size_t first, std::size_t last) {
            slab.resize(last - first);
            file_.read(first * sizeof(Pair), slab.data(), slab.size() * sizeof(Pair));
            for (const Pair& pair : slab) body(pair);
        });
    }

private:
    static constexpr std::size_t kBufferPairs = 8192;  // 64 KB
    std::vector<Pair> buffer_;
    SpillFile file_;
};

// The same rows when the columns are in files. A worker owning half the targets writes its
// counts and rows at random over half of each column, far more than the pager leaves mapped
// (kFilePagesFloorBytes), so it dropped them between one write and the next: on the 2 GB dump
// at --memory-limit 64M the transpose took 3.5M page faults and 77 s of CPU. Here the edges
// are first sorted into parts of targets whose counts and rows fit `window_bytes` (one pass,
// the sources' slices side by side); then each part is counted, and later scattered, from its
// pairs alone, touching only its own window. Sources stay ascending within every row.
constexpr std::size_t kMaxPartFiles = 512;

template <typename Offset>
Csr transpose_in_parts(const Csr& out, std::span<const NodeId> roots, const Progress& progress, std::uint64_t window_bytes) {
    const std::size_t n = out.rows();
    // A part's window: its counts and shared flags, and its share of the rows (at most every edge).
    const std::uint64_t bytes = n * (sizeof(Offset) + 1) + out.targets.size() * sizeof(NodeId) + 1;
    const std::size_t slices = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
    // Parts of 2^part_bits nodes, the most a window holds (each edge's part is a shift, not a
    // division); a file a slice and part, at most kMaxPartFiles (a dump far past this
    // machine's gets wider windows instead).
    unsigned part_bits = static_cast<unsigned>(std::bit_width(std::max<std::uint64_t>(1, n * window_bytes / bytes))) - 1;
    auto parts_of = [&](unsigned bits) { return std::max<std::size_t>(1, (n + (std::size_t{1} << bits) - 1) >> bits); };
    while (parts_of(part_bits) * slices > kMaxPartFiles) ++part_bits;
    const std::size_t parts = parts_of(part_bits);
    std::vector<PartEdges> edges(slices * parts);  // slice s, part p: edges[s * parts + p]
    tbb::parallel_for(std::size_t{0}, slices, [&](std::size_t s) {
        for (NodeId v = static_cast<NodeId>(n * s / slices); v < n * (s + 1) / slices; ++v)
            for (NodeId w : out.of(v)) edges[s * parts + (w >> part_bits)].add({w, v});
        for (std::size_t p = 0; p < parts; ++p) edges[s * parts + p].flush();
    });
    if (progress) progress(n / 2, 2 * n);
    auto each_of_part = [&](std::size_t p, auto body) {
        for (std::size_t s = 0; s < slices; ++s) edges[s * parts + p].each(body);  // sources ascending
    };
    Column<Offset> starts(n + 1, 0);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        each_of_part(p, [&](PartEdges::Pair e) { ++starts[e.target + 1]; });
    });
    NodeBits multi = keep_shared_rows(starts, roots);
    if (progress) progress(n, 2 * n);
    Csr in;
    in.targets.resize(starts[n]);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        each_of_part(p, [&](PartEdges::Pair e) {
            if (multi.test(e.target)) in.targets[starts[e.target]++] = e.source;
        });
    });
    ends_to_starts(starts);
    in.set_starts_of(std::move(multi), std::move(starts));
    if (progress) progress(2 * n, 2 * n);
    return in;
}

template <typename Offset>
Csr transpose_as(const Csr& out, std::span<const NodeId> roots, const Progress& progress, std::uint64_t window_bytes) {
    // Columns in files: parts that fit a quarter of what the pager leaves mapped (two run at once).
    if (!window_bytes && (out.targets.in_file() || !fits_memory_budget(out.rows() * (sizeof(Offset) + 1))))
        window_bytes = kFilePagesFloorBytes / 4;
    return window_bytes ? transpose_in_parts<Offset>(out, roots, progress, window_bytes) : transpose_with<Offset>(out, roots, progress);
}

}  // namespace

// Counts and cursors of 4 bytes while every count fits: half the bytes of the random
// increments and writes, and the column is kept as the row offsets without a copy.
Csr transpose(const Csr& out, std::span<const NodeId> roots, const Progress& progress, std::uint64_t narrow_targets,
              std::uint64_t window_bytes) {
    return out.targets.size() <= narrow_targets ? transpose_as<std::uint32_t>(out, roots, progress, window_bytes)
                                            : transpose_as<std::uint64_t>(out, roots, progress, window_bytes);
}

HeapGraph build_heap_graph(HeapInput input) {
    HeapGraph graph;
    NodeId nodes = static_cast<NodeId>(input.types.size());
    graph.out = input.out ? std::move(*input.out) : make_csr(input.edges, nodes);
    graph.edges = graph.out.targets.size();
    graph.types = std::move(input.types);
    graph.shallow_bytes = std::move(input.shallow_bytes);
    graph.classes = std::move(input.classes);
    graph.roots = std::move(input.roots);
    graph.root_kind_names = std::move(input.root_kind_names);
    for (const GcRoot& root : graph.roots)
        if (root.global) graph.root_nodes.push_back(root.node);
    std::sort(graph.root_nodes.begin(), graph.root_nodes.end());
    graph.root_nodes.erase(std::unique(graph.root_nodes.begin(), graph.root_nodes.end()),
                           graph.root_nodes.end());
    graph.in = transpose(graph.out, graph.root_nodes, input.progress);
    return graph;
}

}  // namespace heapgraph::graph
