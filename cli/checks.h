// Checks the CLI makes before and after a run: option values CLI11 lets through, output
// paths that would destroy an input or another output, and the out-of-memory line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace heapgraph::cli {

// An option's file: {"--json", "report.json"}, or {"DUMP", "heap.hprof"} for an input.
struct NamedPath {
    std::string option, path;
};

// The line that refuses the run, or nullopt. An output may not be an input (the dump, a
// javacore, a snapshot) nor the file of another output; "-" (stdout) may be named once.
// Devices (/dev/null) may be named by several outputs.
std::optional<std::string> output_conflict(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

// "" when `text` is a finite number, else why not (CLI11 lets NaN and inf through ranges).
std::string check_finite(const std::string& text);
// "" when `text` is a plain count (digits only, at most `max`), else why not: CLI11 reads
// "-1" into an unsigned option as 2^64-1.
std::string check_count(const std::string& text, unsigned long long max);
// "4096", "512K", "1.5G", "2GiB" (K, M, G, T: powers of 1024, as in --memory-limit's help):
// the bytes, or nullopt when the text is not a size.
std::optional<std::uint64_t> parse_size(const std::string& text);
std::string check_size(const std::string& text);

// "heap.hprof: out of memory in stage 'dominators' (peak RSS 3.1 GB; budget: ...)".
std::string out_of_memory_line(const std::string& file, const std::string& stage);

}  // namespace heapgraph::cli
