// The CI gates (README "Exit codes": 5): each returns the one line that fails the run, or
// nullopt when the gate passes or was not asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "options.h"
#include "reports.h"

namespace heapgraph::cli {

// What analyze's gate reads (and an index entry keeps): the reachable bytes, the suspects.
reports::IndexedFacts gate_facts(const analysis::Findings& findings, const std::vector<Warning>& warnings);
// analyze --fail-on-suspect: a leak suspect above PERCENT of the reachable heap.
std::optional<std::string> suspect_gate(double fail_on_suspect, const reports::IndexedFacts& facts);
// "50MB", "1.5GB", "4096" (bytes; KB, MB, GB are powers of 1024) or "10%" of the baseline.
std::optional<std::uint64_t> growth_limit(const std::string& text, std::uint64_t baseline);
// diff --fail-on-growth (the reachable heap), then --fail-on-suspect (one holder).
std::optional<std::string> diff_gate(const DiffArgs& args, const reports::Diff& diff);

}  // namespace heapgraph::cli
