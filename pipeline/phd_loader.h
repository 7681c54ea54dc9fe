// Loads an IBM / OpenJ9 Portable Heap Dump into the heap graph (pipeline/phd_loader.cpp).
#pragma once

#include "pipeline.h"

namespace heapgraph {

// `file_mapping`: `file` is a read-only file mapping, whose pages can be given back once
// their run is decoded (never for the caller's own bytes).
LoadedDump load_phd(Bytes file, DumpInfo info, const LoadOptions& options, bool file_mapping = false);

}  // namespace heapgraph
