// The index's kept graph (docs/index.md): everything a LoadedDump holds but the dump's bytes
// and the load's timings, in one file, so that a later run on the same dump (other report
// options, diff, convert) reopens the graph instead of decoding the dump again.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>

#include "pipeline.h"

namespace heapgraph {

// A kept file that is not one keep_dump wrote whole (the message says what is wrong).
// `damaged`: its CRC-32 is not the one the caller expected.
struct KeptDumpError : std::runtime_error {
    explicit KeptDumpError(const std::string& what, bool damaged = false) : std::runtime_error(what), damaged(damaged) {}
    bool damaged;
};

// Writes `dump` (as load_dump returned it, before any analysis) to `out`.
void keep_dump(const LoadedDump& dump, std::ostream& out);

// Reads a kept dump back. An HPROF's bytes, which the value pass and the path names read,
// are mapped again from `path` (a gzip dump is inflated again under options.temp_dir).
// Every length is checked against the bytes left and every node id against the node count,
// so a damaged or foreign file is a KeptDumpError, never a crash. Given `crc32`, the file's
// CRC-32 is taken as it is read (a gigabyte is read once, not twice) and must match.
LoadedDump reopen_dump(const std::string& kept, const std::string& path, const LoadOptions& options,
                       std::optional<std::uint32_t> crc32 = {});

// The dump's bytes for a reopened HPROF's source (pipeline/load.cpp, beside load_dump).
void attach_dump_bytes(LoadedDump& dump, const std::string& path, const LoadOptions& options);

}  // namespace heapgraph
