// `heapgraph estimate`: scan the dump (HPROF: frame and decode only, no graph) and print
// what analysis/estimate.cpp's model makes of the counts.
#include <iostream>

#include "column.h"
#include "estimate.h"
#include "estimate_command.h"
#include "run.h"

namespace heapgraph::cli {

int estimate(const EstimateArgs& args) {
    try {
        LoadOptions options = args.load;
        options.scan_only = true;
        LoadedDump scanned = load_dump(args.dump, options);
        // The scan counts records (the graph adds no object): past the limit, analyze hands
        // the dump over to heapgraph-wide, and this is its estimate.
        const bool handed_over = scanned.scan.objects > options.limits.objects;
        const analysis::Estimate figures = analysis::estimate(scanned, peak_rss_bytes(), handed_over ? 64 : graph::kNodeIdBits,
                                                                graph::storage_use().memory_limit);
        std::cout << analysis::estimate_json(scanned, figures) << std::flush;
        return kOk;
    } catch (const std::exception& e) {
        return exit_code_for(e, args.dump);
    }
}

}  // namespace heapgraph::cli
