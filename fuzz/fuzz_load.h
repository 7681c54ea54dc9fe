// Shared body of the reader fuzz targets: the bytes go through load_dump_bytes, the entry
// point the CLI uses, with one thread and small limits; a dump that loads is then analysed
// (the whole analysis stage: dominators, paths, suspects, the value reader's duplicates,
// threads, properties and inspected objects), since a reader that accepts hostile bytes
// hands the graph whatever they claim. A clean error (DumpError and friends) is the expected outcome for
// most inputs; a crash, a sanitizer report, a leak or a timeout is a finding.
#pragma once

#include <cstddef>
#include <cstdint>

#include "analysis.h"
#include "pipeline.h"
#include "values.h"

namespace heapgraph::fuzz {

// Loads and analyses; false when the reader refused the bytes with a clean error.
inline bool try_load(Bytes bytes, bool allow_truncated) {
    LoadOptions options;
    options.threads = 1;
    options.chunk_bytes = 4096;  // many chunks even in a small input: exercises the carry-over
    options.bytes_in_flight = 16384;
    options.max_inflated_bytes = 1u << 20;  // keeps gzip executions fast; bigger inflations fail cleanly
    options.allow_truncated = allow_truncated;
    // The CLI's analyze has the decode collect the value tables; the whole pass after the
    // load (an index's reopened graph) reads them itself: half the inputs take each path.
    options.values = bytes.size() % 2 == 0;
    try {
        LoadedDump dump = load_dump_bytes(bytes, "fuzz", options);
        // The whole analysis stage, as the CLI runs it: the value reader reads the hostile
        // records again (strings, arrays, threads, System.props, the inspected objects).
        (void)analysis::analyse(dump, {.top = 10, .inspect = 50});
        return true;
    } catch (const DumpError&) {
    } catch (const UnreadableDump&) {
    } catch (const BadRequest&) {
    } catch (const UnsupportedFormat&) {
    }
    return false;
}

// Each target keeps to its own reader (the others have their own targets). Bytes the strict
// reader refuses are tried again with --allow-truncated, which reads up to the last whole
// record: both paths from one corpus.
inline int load_and_analyse(const std::uint8_t* data, std::size_t size, DumpFormat wanted) {
    Bytes bytes(data, size);
    if (detect_format(bytes.first(std::min<std::size_t>(size, 64))) != wanted) return -1;
    if (!try_load(bytes, false)) try_load(bytes, true);
    return 0;
}

}  // namespace heapgraph::fuzz
