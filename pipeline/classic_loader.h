// Loads an IBM classic text heapdump into the heap graph (pipeline/classic_loader.cpp).
#pragma once

#include "pipeline.h"

namespace heapgraph {

LoadedDump load_classic(Bytes file, DumpInfo info, const LoadOptions& options);

}  // namespace heapgraph
