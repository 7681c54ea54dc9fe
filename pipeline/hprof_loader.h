// Loads one heap dump of an HPROF file into the heap graph (pipeline/hprof_loader.cpp).
#pragma once

#include "pipeline.h"

namespace heapgraph {

// `file` is the whole (inflated) HPROF; `info` arrives with path, format and bytes set.
// `release_pages`: the bytes are a file mapping whose pages may be dropped once decoded.
// `fd`: the file's descriptor when the bytes are its mapping, else -1 (the scan reads the
// records' headers past the page cache where it can: SparseReader).
LoadedDump load_hprof(Bytes file, DumpInfo info, const LoadOptions& options, bool release_pages, int fd = -1);

}  // namespace heapgraph
