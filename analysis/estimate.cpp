// The memory model of an analysis: the scan's own peak RSS (the program, the decoder's
// buffers and the pages of the file it touched: the analysis decodes the same way) plus the
// graph built after the decode, per object and per reference. The graph's peak comes at the
// dominator step (--timings): node columns, the search forest, the tree and the path tree
// (docs/heap-graph.md). The two figures were fitted on BigHeap dumps of 256 MB and 2 GB
// (4.0M and 32.9M objects) and checked on every dump in data/ with bench/estimate.sh,
// which prints estimate and measured peak side by side: refit them when a change moves the
// peak.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "column.h"
#include "estimate.h"

namespace heapgraph::analysis {

namespace {

// columns, index, dominator and path arrays; 68 since the address column went and shallow
// sizes take 4 bytes (80 before: the 2 GB BigHeap dump was estimated at 1.19x, then 1.15x);
// 66 since kind and class share a word and reachability is a bit (the peak fell 2.7 bytes
// an object; 68 estimated the 2 GB dump at 1.15x); 62 since the dominator step's record of a
// node is its number only (the peak fell 4 bytes an object; 66 estimated the 2 GB dump at
// 1.23x); 59 since the referrer rows keep starts for their own objects only and path slots
// take 2 bytes (62 estimated it at 1.23x again); 56 since the search keeps its
// semidominators in the numbers' block and the duplicate check sorts possible copies only
// (the peak fell about 3 bytes an object; 59 estimated the 2 GB dump at 1.24x); 52 since
// retained bytes take 5 bytes a node (the peak fell 3 bytes an object; 56 estimated the 2 GB
// dump at 1.25-1.26x); 49 since the path tree keeps the parents of shared and unreached
// objects only (the peak fell 2.6 bytes an object; 52 estimated the 2 GB dump at 1.26x); 47
// since shallow sizes take 2 bytes (49 estimated it at 1.25x).
constexpr double kBytesPerObject = 47;
constexpr double kBytesPerReference = 4;  // out rows, shared objects' referrer rows
// PHD and classic text: the scan built the graph already, so only the dominator and path
// arrays come on top (fitted on data/phd only: no big PHD or classic file is at hand).
constexpr double kBytesPerObjectAfterBuild = 24;
// heapgraph-wide (64-bit node ids; dumps of more than 2^32 - 3 objects): on the 2 GB BigHeap
// dump it peaked 1.49 GB above heapgraph (median of 2 runs each, same hour). References
// take 8 bytes instead of 4 (0.22 GB of it), leaving 40 bytes more an object. The arrays on
// top of a PHD or classic graph are all ids: twice the bytes (not measured: no such dump).
struct Model {
    double per_object, per_reference, per_object_after_build;
};
constexpr Model kNarrow{kBytesPerObject, kBytesPerReference, kBytesPerObjectAfterBuild};
constexpr Model kWide{kBytesPerObject + 40, 2 * kBytesPerReference, 2 * kBytesPerObjectAfterBuild};
// HPROF: what the analysis adds whatever the dump's size, mostly the value pass's buffers
// (PHD and classic text have no value pass). The gap between the smallest dumps' scans and
// their analyses, measured with bench/estimate.sh once the content analyses came (before,
// the smallest HPROF dumps were estimated at 0.67-0.72x their peak). 3 MiB, not 4: small
// dumps' peaks vary by 10-20% between runs, and 4 MiB put leakdemo at 1.16-1.24x, the edge
// of estimate_command_test's 25% band (it failed there once under ctest -j2).
constexpr double kAnalysisBytes = 3 << 20;

}  // namespace

// Past half the budget, the heap-backed columns stop there and the rest are files: the memory
// is the scan's peak, the heap columns and the file pages the pager lets be (the other half
// of the budget, at least its floor); the files are temporary disk. The figures below are
// from before stop 43, when the heap columns could take the whole budget. On the 8x replica
// of the 2 GB BigHeap dump (17.3 GB, 19.1 GB of columns by the model), one run each: at
// --memory-limit 2G 4.6 GB of memory and 17.0 GB of files, against 5.1 GB and 18.2 GB
// measured; at the default budget here (12.0 GB) 14.6 GB and 7.3 GB, against 12.8 GB and
// 8.9 GB. Below about a gigabyte of budget the measured peak is higher than the model (the
// 2 GB dump at 64M: 0.5 against 1.0 GB): passes at random over column files keep
// more pages mapped than the pager allows between its looks (every 1-20 ms). Those pages are
// the page cache's, not the process's own: a cgroup's limit reclaims them rather than kill
// the job.
Estimate estimate(const LoadedDump& scanned, std::uint64_t scan_peak_rss, unsigned node_id_bits,
                  std::uint64_t memory_limit) {
    const LoadedDump::Scan& s = scanned.scan;
    const Model& m = node_id_bits == 64 ? kWide : kNarrow;
    const double graph = s.graph_built ? m.per_object_after_build * static_cast<double>(s.objects)
                                       : kAnalysisBytes + m.per_object * static_cast<double>(s.objects) +
                                             m.per_reference * static_cast<double>(s.references);
    Estimate e;
    e.column_bytes = static_cast<std::uint64_t>(graph);
    e.memory_limit_bytes = memory_limit;
    e.scan_peak_rss_bytes = scan_peak_rss;
    e.node_id_bits = node_id_bits;
    e.value_spill_bytes = s.value_spill_bytes;
    e.temp_disk_bytes = scanned.info.inflated_bytes + e.value_spill_bytes;
    const std::uint64_t heap = graph::heap_columns_cap(memory_limit);
    if (e.column_bytes <= heap) {
        e.memory_bytes = scan_peak_rss + e.column_bytes;
    } else {
        const std::uint64_t files = e.column_bytes - heap;
        e.memory_bytes = scan_peak_rss + heap + std::min(files, graph::file_pages_allowance(memory_limit, heap));
        e.temp_disk_bytes += files;
    }
    return e;
}

std::string estimate_json(const LoadedDump& scanned, const Estimate& e) {
    nlohmann::ordered_json j{{"file", scanned.info.path},
                             {"format", scanned.info.format},
                             {"bytes", scanned.info.bytes},
                             {"inflated_bytes", scanned.info.inflated_bytes},
                             {"objects", scanned.scan.objects},
                             {"references", scanned.scan.references},
                             {"memory_bytes", e.memory_bytes},
                             {"node_id_bits", e.node_id_bits},
                             {"scan_peak_rss_bytes", e.scan_peak_rss_bytes},
                             {"column_bytes", e.column_bytes},
                             {"memory_limit_bytes", e.memory_limit_bytes},
                             {"temp_disk_bytes", e.temp_disk_bytes},
                             {"value_spill_bytes", e.value_spill_bytes}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace heapgraph::analysis
