// The memory model of an analysis: the scan's own peak RSS (the program, the decoder's
// buffers and the pages of the file it touched: the analysis decodes the same way) plus the
// graph built after the decode, per object and per reference. The graph's peak comes at the
// dominator step (--timings): node columns, the search forest, the tree and the path tree
// (docs/heap-graph.md). The two figures were fitted on BigHeap dumps of 256 MB and 2 GB
// (4.0M and 32.9M objects) and checked on every dump in data/ with bench/estimate.sh,
// which prints estimate and measured peak side by side: refit them when a change moves the
// peak.
#include <nlohmann/json.hpp>

#include "estimate.h"

namespace heapgraph::analysis {

namespace {

// columns, index, dominator and path arrays; 68 since the address column went and shallow
// sizes take 4 bytes (80 before: the 2 GB BigHeap dump was estimated at 1.19x, then 1.15x);
// 66 since kind and class share a word and reachability is a bit (the peak fell 2.7 bytes
// an object; 68 estimated the 2 GB dump at 1.15x).
constexpr double kBytesPerObject = 66;
constexpr double kBytesPerReference = 4;  // out rows, shared objects' referrer rows
// PHD and classic text: the scan built the graph already, so only the dominator and path
// arrays come on top (fitted on data/phd only: no big PHD or classic file is at hand).
constexpr double kBytesPerObjectAfterBuild = 24;
// HPROF: what the analysis adds whatever the dump's size, mostly the value pass's buffers
// (PHD and classic text have no value pass). The gap between the smallest dumps' scans and
// their analyses, measured with bench/estimate.sh once the content analyses came (before,
// the smallest HPROF dumps were estimated at 0.67-0.72x their peak). 3 MiB, not 4: small
// dumps' peaks vary by 10-20% between runs, and 4 MiB put leakdemo at 1.16-1.24x, the edge
// of estimate_command_test's 25% band (it failed there once under ctest -j2).
constexpr double kAnalysisBytes = 3 << 20;

}  // namespace

Estimate estimate(const LoadedDump& scanned, std::uint64_t scan_peak_rss) {
    const LoadedDump::Scan& s = scanned.scan;
    const double graph = s.graph_built ? kBytesPerObjectAfterBuild * static_cast<double>(s.objects)
                                       : kAnalysisBytes + kBytesPerObject * static_cast<double>(s.objects) +
                                             kBytesPerReference * static_cast<double>(s.references);
    return {scan_peak_rss + static_cast<std::uint64_t>(graph), scanned.info.inflated_bytes, scan_peak_rss};
}

std::string estimate_json(const LoadedDump& scanned, const Estimate& e) {
    nlohmann::ordered_json j{{"file", scanned.info.path},
                             {"format", scanned.info.format},
                             {"bytes", scanned.info.bytes},
                             {"inflated_bytes", scanned.info.inflated_bytes},
                             {"objects", scanned.scan.objects},
                             {"references", scanned.scan.references},
                             {"memory_bytes", e.memory_bytes},
                             {"scan_peak_rss_bytes", e.scan_peak_rss_bytes},
                             {"temp_disk_bytes", e.temp_disk_bytes}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace heapgraph::analysis
