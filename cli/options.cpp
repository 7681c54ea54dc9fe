// CLI11 definitions of analyze, convert and diff (README "Usage"), and the checks on their
// outputs made before anything is read.
#include "options.h"

#include "checks.h"

namespace heapgraph::cli {

namespace {

const CLI::Validator kFinite([](std::string& text) { return check_finite(text); }, "NUMBER");
CLI::Validator count_up_to(unsigned long long max) {
    return CLI::Validator([max](std::string& text) { return check_count(text, max); }, "COUNT");
}
const CLI::Validator kSize([](std::string& text) { return check_size(text); }, "SIZE");
const CLI::Validator kFileName([](std::string& text) { return text.empty() ? std::string("an empty file name") : std::string(); },
                               "FILE");

constexpr const char* kAllowTruncatedHelp =
    "Read a dump cut short up to its last whole record, with a `truncated` warning saying what was lost";
constexpr const char* kQuietHelp =
    "Print only errors and a gate's one line on stderr; no report on stdout unless --json names it";

// The options every command that loads dumps has.
void add_load_options(CLI::App* cmd, LoadOptions& load) {
    cmd->add_option("--threads", load.threads, "Worker threads (default: all cores)")
        ->check(count_up_to(1024))->check(CLI::Range(1u, 1024u));
    cmd->add_option("--temp-dir", load.temp_dir,
                    "Where gzip dumps are inflated and graph columns over --memory-limit go (default $TMPDIR or /tmp)")
        ->check(kFileName);
    cmd->add_option_function<std::string>(
           "--memory-limit", [&load](const std::string& text) { load.memory_limit = parse_size(text).value_or(0); },
           "Resident bytes of the graph's columns (K, M, G: powers of 1024): up to half in memory, the rest "
           "for the pages of column files under --temp-dir (default: MemAvailable)")
        ->check(kSize);
    cmd->add_flag("--allow-truncated", load.allow_truncated, kAllowTruncatedHelp);
}

void add_dump_index(CLI::App* cmd, LoadOptions& load) {
    cmd->add_option("--dump-index", load.dump_index, "Which heap dump of a multi-dump file (from 0)")
        ->default_val(0)
        ->check(count_up_to(UINT32_MAX));
}

void add_index_option(CLI::App* cmd, std::string& dir) {
    cmd->add_option("--index", dir,
                    "Keep each dump's graph and reports in DIR and reuse them while the dump and the options are "
                    "unchanged (docs/index.md)")
        ->check(kFileName);
}

void add_analyze(CLI::App& app, AnalyzeArgs& args) {
    CLI::App* cmd = app.add_subcommand("analyze", "Analyse one heap dump and write reports");
    cmd->add_option("DUMP", args.dump, "Heap dump (format detected from content)")->required();
    cmd->add_option("--json", args.json, "JSON report file, '-' for stdout (default)")->check(kFileName);
    cmd->add_option("--html", args.html, "Self-contained HTML report file (docs/html-report.md)")->check(kFileName);
    cmd->add_option("--objects-tsv", args.objects_tsv, "Write one line per object to this file")->check(kFileName);
    add_dump_index(cmd, args.load);
    cmd->add_option("--top", args.top, "Rows in the dominators and consumers tables (default 100, at most 100000)")
        ->check(count_up_to(100000));
    cmd->add_option("--suspect-threshold", args.suspect_threshold,
                    "Leak suspects retain more than PERCENT of the reachable heap (default 10)")
        ->check(kFinite)->check(CLI::Range(0.0, 100.0));
    cmd->add_flag("--keep-unreachable", args.keep_unreachable,
                  "Keep unreachable objects in the dominator tree, as MAT's -keep_unreachable_objects");
    cmd->add_option("--progress", args.progress, "Progress bars on stderr: auto (on a terminal), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    cmd->add_flag("--timings", args.timings, "Print per-stage wall time and peak RSS; add `timings` to the JSON");
    cmd->add_option("--javacore", args.load.javacore, "PHD only: the javacore written with the dump (thread roots, class loaders)")
        ->check(kFileName);
    cmd->add_option("--save", args.save, "Write an analysis snapshot for a later `diff` (docs/diff.md), '-' for stdout")
        ->check(kFileName);
    cmd->add_option("--fail-on-suspect", args.fail_on_suspect, "Exit 5 when a leak suspect retains more than PERCENT of the reachable heap")
        ->check(kFinite)->check(CLI::Range(0.0, 100.0));
    add_index_option(cmd, args.index);
    cmd->add_flag("--quiet", args.quiet, kQuietHelp);
    add_load_options(cmd, args.load);
}

void add_convert(CLI::App& app, ConvertArgs& args) {
    CLI::App* cmd = app.add_subcommand("convert", "Rewrite a heap dump in another format (classic text)");
    cmd->add_option("DUMP", args.dump, "Heap dump (format detected from content)")->required();
    cmd->add_option("--to", args.to, "Output format: classic")->check(CLI::IsMember({"classic"}));
    cmd->add_option("--variant", args.variant, "Classic layout: openj9 (default) or sdk (IBM SDK 6)")
        ->check(CLI::IsMember({"openj9", "sdk"}));
    cmd->add_option("-o,--output", args.output, "Output file, '-' for stdout")->required()->check(kFileName);
    add_dump_index(cmd, args.load);
    add_index_option(cmd, args.index);
    add_load_options(cmd, args.load);
}

void add_diff(CLI::App& app, DiffArgs& args) {
    CLI::App* cmd = app.add_subcommand("diff", "Compare dumps or snapshots: class deltas and growth suspects (docs/diff.md)");
    cmd->add_option("BASE NEW [NEWER...]", args.inputs, "Dumps or snapshots (told apart by content), baseline first")
        ->required()
        ->expected(2, -1);
    cmd->add_option("--json", args.json, "JSON diff file, '-' for stdout (default)")->check(kFileName);
    cmd->add_option("--html", args.html, "Self-contained HTML diff report file")->check(kFileName);
    cmd->add_option("--growth-threshold", args.growth_threshold,
                    "Growth suspects grew by more than PERCENT of the baseline's reachable heap (default 2)")
        ->check(kFinite)->check(CLI::Range(0.0, 1000.0));
    cmd->add_option("--fail-on-growth", args.fail_on_growth,
                    "Exit 5 when the reachable heap grew by more than SIZE (50MB) or PERCENT (10%) of the baseline");
    cmd->add_option("--fail-on-suspect", args.fail_on_suspect,
                    "Exit 5 when a growth suspect grew by more than PERCENT of the baseline's reachable heap")
        ->check(kFinite)->check(CLI::Range(0.0, 1000.0));
    add_index_option(cmd, args.index);
    cmd->add_flag("--quiet", args.quiet, kQuietHelp);
    add_load_options(cmd, args.load);
}

void add_estimate(CLI::App& app, EstimateArgs& args) {
    CLI::App* cmd = app.add_subcommand(
        "estimate", "Print the peak memory and temporary disk `analyze` will need, as JSON, from a scan of the dump");
    cmd->add_option("DUMP", args.dump, "Heap dump (format detected from content)")->required();
    add_dump_index(cmd, args.load);
    add_load_options(cmd, args.load);
}

}  // namespace

void add_commands(CLI::App& app, Args& args) {
    add_analyze(app, args.analyze);
    add_diff(app, args.diff);
    add_convert(app, args.convert);
    add_estimate(app, args.estimate);
}

void apply_quiet(const CLI::App& app, Args& args) {
    // A nightly job wants the gate's one line and nothing else.
    auto quiet_json = [&](const char* name, bool quiet, std::string& json) {
        if (quiet && app.get_subcommand(name)->get_option("--json")->count() == 0) json.clear();
    };
    quiet_json("analyze", args.analyze.quiet, args.analyze.json);
    quiet_json("diff", args.diff.quiet, args.diff.json);
}

std::optional<std::string> conflicting_outputs(const CLI::App& app, const Args& args) {
    std::vector<NamedPath> inputs, outputs;
    auto output = [&](const char* option, const std::string& path) {
        if (!path.empty()) outputs.push_back({option, path});
    };
    if (app.got_subcommand("estimate")) return std::nullopt;  // writes stdout only
    if (app.got_subcommand("convert")) {
        inputs = {{"DUMP", args.convert.dump}};
        output("-o", args.convert.output), output("--index", args.convert.index);
    } else if (app.got_subcommand("diff")) {
        for (const std::string& input : args.diff.inputs) inputs.push_back({"input", input});
        output("--json", args.diff.json), output("--html", args.diff.html), output("--index", args.diff.index);
    } else {
        const AnalyzeArgs& a = args.analyze;
        inputs = {{"DUMP", a.dump}};
        if (!a.load.javacore.empty()) inputs.push_back({"--javacore", a.load.javacore});
        output("--json", a.json), output("--html", a.html), output("--objects-tsv", a.objects_tsv), output("--save", a.save);
        output("--index", a.index);
    }
    return output_conflict(inputs, outputs);
}

}  // namespace heapgraph::cli
