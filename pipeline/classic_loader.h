// Loads an IBM classic text heapdump into the heap graph (pipeline/classic_loader.cpp).
#pragma once

#include "pipeline.h"

namespace heapgraph {

// `file_mapping`: `file` is a read-only file mapping, whose pages can be given back once
// their block is decoded (never for the caller's own bytes).
LoadedDump load_classic(Bytes file, DumpInfo info, const LoadOptions& options, bool file_mapping = false);

}  // namespace heapgraph
