// Loads an IBM / OpenJ9 Portable Heap Dump into the heap graph (pipeline/phd_loader.cpp).
#pragma once

#include "pipeline.h"

namespace heapgraph {

LoadedDump load_phd(Bytes file, DumpInfo info, const LoadOptions& options);

}  // namespace heapgraph
