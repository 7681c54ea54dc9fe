// `heapgraph estimate`: the peak memory and temporary disk an analysis will need, from the
// counts a scan of the dump gives (LoadOptions::scan_only), so a scheduler can size the job
// before it starts. The model and where its figures come from: analysis/estimate.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "pipeline.h"

namespace heapgraph::analysis {

struct Estimate {
    std::uint64_t memory_bytes = 0;     // peak RSS of `analyze DUMP --json FILE` with default options
    std::uint64_t temp_disk_bytes = 0;  // the inflated dump of a gzip file, value spills and column files, under --temp-dir
    std::uint64_t value_spill_bytes = 0;  // HPROF: the value tables the decode spills (LoadValues)
    std::uint64_t scan_peak_rss_bytes = 0;  // what the scan itself reached (part of memory_bytes)
    std::uint64_t column_bytes = 0;       // the graph's columns at the peak, in memory and in files
    std::uint64_t memory_limit_bytes = 0;  // the columns' budget (--memory-limit or its default)
    unsigned node_id_bits = 32;  // 64: the analysis runs in heapgraph-wide (more than 2^32 - 3 objects)
};

// `scan_peak_rss`: the process's peak RSS after the scan (peak_rss_bytes()); `node_id_bits`:
// 64 for a dump heapgraph hands over to heapgraph-wide; `memory_limit`: the columns' budget
// (graph::storage_use().memory_limit), past which columns go to files.
Estimate estimate(const LoadedDump& scanned, std::uint64_t scan_peak_rss, unsigned node_id_bits,
                  std::uint64_t memory_limit);

// {"file", "format", "bytes", "inflated_bytes", "objects", "references", "memory_bytes",
//  "node_id_bits", "scan_peak_rss_bytes", "column_bytes", "memory_limit_bytes", "temp_disk_bytes"} as one JSON object (docs/report-schema.md, "estimate").
std::string estimate_json(const LoadedDump& scanned, const Estimate& e);

}  // namespace heapgraph::analysis
