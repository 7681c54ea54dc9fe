// The command line: each command's arguments and their CLI11 definitions (cli/options.cpp),
// and the outputs that would overwrite an input or each other.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "pipeline.h"

namespace heapgraph::cli {

enum Exit { kOk = 0, kUsage = 1, kBadDump = 2, kUnsupported = 3, kOutputFailed = 4, kGateFailed = 5, kOutOfMemory = 6 };

struct AnalyzeArgs {
    std::string dump, json = "-", objects_tsv, progress = "auto";
    std::string html;  // --html FILE: empty for none
    LoadOptions load;
    std::size_t top = 100;
    bool keep_unreachable = false, timings = false;
    double suspect_threshold = 10;  // --suspect-threshold PERCENT
    std::string save;               // --save SNAPSHOT: empty for none
    double fail_on_suspect = -1;    // --fail-on-suspect PERCENT: negative for no gate
    std::string index;              // --index DIR: empty for none (docs/index.md)
    bool quiet = false;
};

struct ConvertArgs {
    std::string dump, to = "classic", variant = "openj9", output;
    std::string index;  // --index DIR: the dump's graph reused and kept (docs/index.md)
    LoadOptions load;
};

struct DiffArgs {
    std::vector<std::string> inputs;
    std::string json = "-", html, fail_on_growth;  // --fail-on-growth "50MB" or "10%"
    double growth_threshold = 2, fail_on_suspect = -1;
    std::string index;  // --index DIR: snapshots of the dumps reused and kept (docs/index.md)
    bool quiet = false;
    LoadOptions load;
};

struct EstimateArgs {
    std::string dump;
    LoadOptions load;
};
struct Args {
    AnalyzeArgs analyze;
    ConvertArgs convert;
    DiffArgs diff;
    EstimateArgs estimate;
};

// The subcommands, bound to `args`.
void add_commands(CLI::App& app, Args& args);
// After parsing: --quiet without --json writes no report on stdout.
void apply_quiet(const CLI::App& app, Args& args);
// The line refusing outputs that would overwrite an input or each other (README "Exit codes": 1).
std::optional<std::string> conflicting_outputs(const CLI::App& app, const Args& args);

}  // namespace heapgraph::cli
