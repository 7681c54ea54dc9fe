// `heapgraph estimate DUMP`: the analysis's peak memory and temporary disk, as JSON on stdout.
#pragma once

#include "options.h"

namespace heapgraph::cli {

int estimate(const EstimateArgs& args);

}  // namespace heapgraph::cli
