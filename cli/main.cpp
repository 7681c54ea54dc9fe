// The heapgraph command: parse arguments, load the dump, write the reports, choose the exit
// code (README "Exit codes"). Everything else lives in the libraries.
#include <CLI/CLI.hpp>

#include <malloc.h>
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <system_error>

#include "checks.h"
#include "pipeline.h"
#include "reports.h"

namespace {

enum Exit { kOk = 0, kUsage = 1, kBadDump = 2, kUnsupported = 3, kOutputFailed = 4, kGateFailed = 5, kOutOfMemory = 6 };

const CLI::Validator kFinite([](std::string& text) { return heapgraph::cli::check_finite(text); }, "NUMBER");
CLI::Validator count_up_to(unsigned long long max) {
    return CLI::Validator([max](std::string& text) { return heapgraph::cli::check_count(text, max); }, "COUNT");
}
const CLI::Validator kFileName([](std::string& text) { return text.empty() ? std::string("an empty file name") : std::string(); },
                               "FILE");

constexpr const char* kAllowTruncatedHelp =
    "Read a dump cut short up to its last whole record, with a `truncated` warning saying what was lost";

struct AnalyzeArgs {
    std::string dump, json = "-", objects_tsv, progress = "auto";
    std::string html;  // --html FILE: empty for none
    heapgraph::LoadOptions load;
    std::size_t top = 100;
    bool keep_unreachable = false, timings = false;
    double suspect_threshold = 10;  // --suspect-threshold PERCENT
    std::string save;               // --save SNAPSHOT: empty for none
    double fail_on_suspect = -1;    // --fail-on-suspect PERCENT: negative for no gate
    bool quiet = false;
};

// The dump and the analysis are deliberately never freed: returning gigabytes to the OS page
// by page takes seconds on a big dump, and the process ends right after the reports. Their
// addresses stay in this global so that LeakSanitizer (HEAPGRAPH_SANITIZE) sees them held,
// not leaked, and still reports every other leak.
const void* volatile g_never_freed[8];  // volatile: the stores must not be optimised away
std::size_t g_never_freed_count = 0;
template <typename T>
T& never_freed(T* object) {
    g_never_freed[g_never_freed_count++ % std::size(g_never_freed)] = object;
    return *object;
}

heapgraph::reports::DumpFacts facts_of(const heapgraph::DumpInfo& i) {
    return {i.path, i.format, i.format_version, i.id_size, i.bytes, i.inflated_bytes, i.gzip_members,
            i.dumps_in_file, i.dump_index, i.compressed_oops, i.size_model, i.records, i.sub_records};
}

// "-" is stdout; anything else is written atomically.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& write) {
    if (path != "-") return heapgraph::reports::write_atomically(path, write);
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("cannot write to stdout");
}

std::vector<heapgraph::reports::StageTime> stage_times(const std::vector<heapgraph::StageTiming>& timings) {
    std::vector<heapgraph::reports::StageTime> out;
    for (const auto& t : timings) out.push_back({t.stage, t.seconds, t.peak_rss_bytes});
    return out;
}

// The fields of the edges into `nodes` read back from the dump (HPROF), for edge names.
void name_path_edges(heapgraph::LoadedDump& dump, const heapgraph::graph::PathTree& paths,
                     std::span<const heapgraph::graph::NodeId> nodes, bool array_indexes) {
    std::vector<heapgraph::graph::PathEdge> edges;
    for (const auto& e : heapgraph::graph::path_edges(paths, nodes))
        if (array_indexes || dump.graph.kind[e.from] != heapgraph::graph::NodeKind::object_array) edges.push_back(e);
    heapgraph::name_edges(dump, edges);
}

// Holders whose signatures name their fields: found once for their paths, named, found again.
std::vector<heapgraph::graph::Holder> named_holders(heapgraph::LoadedDump& dump, const heapgraph::graph::Retained& retained,
                                                    const heapgraph::graph::PathTree& paths,
                                                    const heapgraph::graph::HolderOptions& options) {
    auto holders = heapgraph::graph::find_holders(dump.graph, retained, paths, dump.field_names, options);
    if (!dump.source || holders.empty()) return holders;
    // Signatures show at most the last 16 steps of a path, and say "[]": indexes change between dumps.
    std::vector<heapgraph::graph::NodeId> ends;
    for (const auto& h : holders) {
        auto path = heapgraph::graph::path_from_root(paths, h.node);
        ends.insert(ends.end(), path.end() - static_cast<std::ptrdiff_t>(std::min<std::size_t>(path.size(), 16)), path.end());
    }
    name_path_edges(dump, paths, ends, false);
    return heapgraph::graph::find_holders(dump.graph, retained, paths, dump.field_names, options);
}

// --save: the holders and histogram a later `diff` needs (docs/diff.md).
void save_snapshot(const std::string& path, const heapgraph::reports::Analysis& analysis, heapgraph::LoadedDump& dump) {
    heapgraph::graph::HolderOptions options;
    auto holders = named_holders(dump, analysis.retained, *analysis.paths, options);
    auto snapshot = heapgraph::reports::make_snapshot(analysis, holders, options.min_percent);
    write_output(path, [&](std::ostream& out) { heapgraph::reports::write_snapshot(snapshot, out); });
}

// --fail-on-suspect on analyze: a leak suspect above PERCENT of the reachable heap.
int suspect_gate(const AnalyzeArgs& args, const heapgraph::reports::Analysis& a) {
    if (args.fail_on_suspect < 0 || !a.suspects) return kOk;
    const double total = static_cast<double>(a.retained.tree.super_root_retained_bytes);
    for (const auto& s : *a.suspects) {
        double percent = total > 0 ? 100.0 * static_cast<double>(s.retained_bytes) / total : 0;
        if (percent <= args.fail_on_suspect) continue;
        std::string what = s.group ? std::to_string(s.instances.size()) + " instances of " + a.graph.classes[s.class_index].name
                                   : heapgraph::graph::node_class_name(a.graph, s.node);
        char line[64];
        std::snprintf(line, sizeof line, "%.2f%% of the reachable heap", percent);
        std::cerr << "heapgraph: gate --fail-on-suspect " << args.fail_on_suspect << "%: leak suspect " << what
                  << " retains " << s.retained_bytes << " bytes (" << line << ")\n";
        return kGateFailed;
    }
    return kOk;
}

int write_reports(const AnalyzeArgs& args, heapgraph::LoadedDump& dump) {
    heapgraph::StageClock clock(dump.timings);
    clock.start("collections");
    // Counted first: the dominator pass releases the out rows the walks need.
    const auto& collections = never_freed(new auto(heapgraph::graph::count_collections(dump.graph)));
    clock.start("paths");
    // Also before the dominator pass: leak-suspect paths follow the out rows it releases.
    const auto& paths = never_freed(new auto(heapgraph::graph::shortest_path_tree(dump.graph, dump.weak_edges)));
    clock.start("dominators");
    // PHD and classic text record no roots, so "unreachable" says nothing there: like MAT,
    // keep every object.
    bool keep_unreachable = args.keep_unreachable || dump.info.roots_inferred;
    auto& retained = never_freed(new heapgraph::graph::Retained(
        heapgraph::graph::compute_retained(dump.graph, {.keep_unreachable = keep_unreachable,
                                                        .release_edges = true})));
    clock.start("suspects");
    std::uint64_t suspects_left_out = 0;
    const auto& suspects = never_freed(new auto(heapgraph::graph::find_suspects(
        dump.graph, retained, paths, {.threshold_percent = args.suspect_threshold}, &suspects_left_out)));
    clock.start("path names");
    std::vector<heapgraph::graph::NodeId> path_nodes;  // the steps the reports show
    for (const auto& s : suspects) path_nodes.insert(path_nodes.end(), s.path.begin(), s.path.end());
    name_path_edges(dump, paths, path_nodes, true);
    clock.start("report");
    heapgraph::reports::Analysis analysis{facts_of(dump.info), dump.graph, retained, dump.addresses, {},
                                          HEAPGRAPH_VERSION, args.top, keep_unreachable, &collections};
    analysis.suspects = &suspects;
    analysis.paths = &paths;
    analysis.field_names = &dump.field_names;
    analysis.suspect_threshold = args.suspect_threshold;
    analysis.suspects_left_out = suspects_left_out;
    for (const auto& w : dump.warnings) {
        analysis.warnings.push_back({w.code, w.count, w.message});
        if (!args.quiet) std::cerr << "heapgraph: warning: " << w.count << " " << w.code << ": " << w.message << "\n";
    }
    try {
        if (!args.objects_tsv.empty())
            write_output(args.objects_tsv, [&](std::ostream& out) { heapgraph::reports::write_objects_tsv(analysis, out); });
        std::string json, html;
        if (!args.json.empty() || !args.html.empty()) json = heapgraph::reports::json_report(analysis);
        if (!args.html.empty()) html = heapgraph::reports::html_report(analysis, json);
        clock.stop();
        if (args.timings) {
            // The report stage is measured up to here: only the final write is left out.
            auto timings = stage_times(dump.timings);
            heapgraph::reports::print_timings(timings, std::cerr);
            if (!args.json.empty()) json = heapgraph::reports::add_timings(std::move(json), timings);
        }
        if (!args.json.empty())
            write_output(args.json, [&](std::ostream& out) { out << json; });
        if (!args.html.empty())
            write_output(args.html, [&](std::ostream& out) { out << html; });
        if (!args.save.empty()) save_snapshot(args.save, analysis, dump);
    } catch (const std::bad_alloc&) {
        throw;  // not a report that could not be written: analyze() says where memory ran out
    } catch (const std::exception& e) {
        std::cerr << "heapgraph: " << e.what() << "\n";
        return kOutputFailed;
    }
    return suspect_gate(args, analysis);
}

// --progress: bars on stderr per stage; "auto" only when stderr is a terminal.
void attach_progress(AnalyzeArgs& args, std::shared_ptr<heapgraph::reports::ProgressPrinter>& printer) {
    bool show = !args.quiet && (args.progress == "always" || (args.progress == "auto" && ::isatty(STDERR_FILENO)));
    if (!show) return;
    printer = std::make_shared<heapgraph::reports::ProgressPrinter>(std::cerr);
    args.load.progress = [printer](const heapgraph::ProgressEvent& e) { printer->update(e.stage, e.done, e.total, e.unit); };
}

// Prints an exception from loading a dump as its one line and picks the exit code for it
// (README "Exit codes").
int exit_code_for(const std::exception& e, const std::string& file) {
    auto* system = dynamic_cast<const std::system_error*>(&e);  // no memory left for a worker thread
    if (dynamic_cast<const std::bad_alloc*>(&e) || (system && (system->code() == std::errc::resource_unavailable_try_again ||
                                                               system->code() == std::errc::not_enough_memory))) {
        std::cerr << "heapgraph: " << heapgraph::cli::out_of_memory_line(file, heapgraph::current_stage()) << "\n";
        return kOutOfMemory;
    }
    std::cerr << "heapgraph: " << e.what() << "\n";
    if (dynamic_cast<const heapgraph::BadRequest*>(&e)) return kUsage;
    if (dynamic_cast<const heapgraph::UnsupportedFormat*>(&e)) return kUnsupported;
    return kBadDump;
}

int analyze(AnalyzeArgs& args) {
    std::shared_ptr<heapgraph::reports::ProgressPrinter> printer;
    attach_progress(args, printer);
    try {
        auto& dump = never_freed(new heapgraph::LoadedDump(heapgraph::load_dump(args.dump, args.load)));
        if (printer) printer->finish();
        return write_reports(args, dump);
    } catch (const std::exception& e) {  // DumpError, UnreadableDump, BadRequest, out of memory
        return exit_code_for(e, args.dump);
    }
}

struct ConvertArgs {
    std::string dump, to = "classic", variant = "openj9", output;
    heapgraph::LoadOptions load;
};

// `convert`: any dump we read, rewritten as a classic text heapdump (reports/classic_writer.cpp).
int convert(const ConvertArgs& args) {
    std::unique_ptr<heapgraph::LoadedDump> dump;
    try {
        dump = std::make_unique<heapgraph::LoadedDump>(heapgraph::load_dump(args.dump, args.load));
    } catch (const std::exception& e) {
        return exit_code_for(e, args.dump);
    }
    const heapgraph::DumpInfo& info = dump->info;
    heapgraph::reports::ClassicOutput out{dump->graph, dump->addresses,
                                          info.format_version + ", converted by heapgraph " + HEAPGRAPH_VERSION,
                                          info.id_size == 4 ? 4u : 8u, args.variant == "sdk"};
    heapgraph::reports::ClassicWritten written;
    try {
        write_output(args.output, [&](std::ostream& stream) { written = heapgraph::reports::write_classic(out, stream); });
    } catch (const std::bad_alloc& e) {
        return exit_code_for(e, args.dump);
    } catch (const std::exception& e) {
        std::cerr << "heapgraph: " << e.what() << "\n";
        return kOutputFailed;
    }
    if (written.names_rewritten) {
        std::cerr << "heapgraph: warning: " << written.names_rewritten << " class names rewritten for classic text:";
        for (const std::string& name : written.examples) std::cerr << " " << name;
        std::cerr << (written.names_rewritten > written.examples.size() ? " ...\n" : "\n");
    }
    return kOk;
}

void add_convert(CLI::App& app, ConvertArgs& args) {
    CLI::App* cmd = app.add_subcommand("convert", "Rewrite a heap dump in another format (classic text)");
    cmd->add_option("DUMP", args.dump, "Heap dump (format detected from content)")->required();
    cmd->add_option("--to", args.to, "Output format: classic")->check(CLI::IsMember({"classic"}));
    cmd->add_option("--variant", args.variant, "Classic layout: openj9 (default) or sdk (IBM SDK 6)")
        ->check(CLI::IsMember({"openj9", "sdk"}));
    cmd->add_option("-o,--output", args.output, "Output file, '-' for stdout")->required()->check(kFileName);
    cmd->add_option("--dump-index", args.load.dump_index, "Which heap dump of a multi-dump file (from 0)")
        ->default_val(0)
        ->check(count_up_to(UINT32_MAX));
    cmd->add_option("--threads", args.load.threads, "Worker threads (default: all cores)")->check(count_up_to(1024))->check(CLI::Range(1u, 1024u));
    cmd->add_option("--temp-dir", args.load.temp_dir, "Where gzip dumps are inflated (default $TMPDIR or /tmp)")->check(kFileName);
    cmd->add_flag("--allow-truncated", args.load.allow_truncated, kAllowTruncatedHelp);
}

// ---- diff (docs/diff.md) ------------------------------------------------------------------

struct DiffArgs {
    std::vector<std::string> inputs;
    std::string json = "-", html, fail_on_growth;  // --fail-on-growth "50MB" or "10%"
    double growth_threshold = 2, fail_on_suspect = -1;
    bool quiet = false;
    heapgraph::LoadOptions load;
};

// A dump analysed just far enough for a snapshot: paths before the dominators release the edges.
heapgraph::reports::Snapshot snapshot_of_dump(const std::string& path, const DiffArgs& args) {
    auto dump = std::make_unique<heapgraph::LoadedDump>(heapgraph::load_dump(path, args.load));
    if (!args.quiet)
        for (const auto& w : dump->warnings)
            std::cerr << "heapgraph: warning: " << path << ": " << w.count << " " << w.code << ": " << w.message << "\n";
    auto paths = heapgraph::graph::shortest_path_tree(dump->graph, dump->weak_edges);
    bool keep_unreachable = dump->info.roots_inferred;
    auto retained = heapgraph::graph::compute_retained(dump->graph, {.keep_unreachable = keep_unreachable, .release_edges = true});
    heapgraph::graph::HolderOptions options;
    auto holders = named_holders(*dump, retained, paths, options);
    heapgraph::reports::Analysis analysis{facts_of(dump->info), dump->graph, retained, dump->addresses, {}, HEAPGRAPH_VERSION};
    return heapgraph::reports::make_snapshot(analysis, holders, options.min_percent);
}

// "50MB", "1.5GB", "4096" (bytes; KB, MB, GB are powers of 1024) or "10%" of the baseline.
std::optional<std::uint64_t> growth_limit(const std::string& text, std::uint64_t baseline) {
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (!std::isfinite(value)) return std::nullopt;
    std::string unit = text.substr(used);
    double scale = unit == "%" ? static_cast<double>(baseline) / 100 : unit.empty() || unit == "B" ? 1
                 : unit == "KB" ? 1024.0 : unit == "MB" ? 1048576.0 : unit == "GB" ? 1073741824.0 : -1;
    if (scale < 0 || value < 0 || value * scale >= 0x1p62) return std::nullopt;  // a cast past 2^64 is undefined
    return static_cast<std::uint64_t>(value * scale);
}

std::string with_percent(std::int64_t bytes, std::uint64_t baseline) {
    char text[96];
    std::snprintf(text, sizeof text, "%lld bytes (%.2f%% of the baseline's reachable heap)", static_cast<long long>(bytes),
                  baseline ? 100.0 * static_cast<double>(bytes) / static_cast<double>(baseline) : 0.0);
    return text;
}

// The gates, in order: --fail-on-growth (the reachable heap), then --fail-on-suspect (one holder).
int diff_gates(const DiffArgs& args, const heapgraph::reports::Diff& diff) {
    const std::uint64_t base = diff.series.front().retained_bytes_total;
    if (!args.fail_on_growth.empty()) {
        std::uint64_t limit = *growth_limit(args.fail_on_growth, base);
        if (diff.reachable_growth_bytes() > static_cast<std::int64_t>(limit)) {
            std::string top = diff.suspects.empty() ? std::string("no growth suspect")
                                                    : "top growth suspect " + diff.suspects.front().signature + " +" +
                                                          std::to_string(diff.suspects.front().growth_bytes) + " bytes";
            std::cerr << "heapgraph: gate --fail-on-growth " << args.fail_on_growth << ": reachable heap grew by "
                      << with_percent(diff.reachable_growth_bytes(), base) << ", above " << limit << " bytes; " << top << "\n";
            return kGateFailed;
        }
    }
    if (args.fail_on_suspect >= 0)
        for (const auto& s : diff.suspects)
            if (100.0 * static_cast<double>(s.growth_bytes) > args.fail_on_suspect * static_cast<double>(base)) {
                std::cerr << "heapgraph: gate --fail-on-suspect " << args.fail_on_suspect << "%: growth suspect "
                          << s.class_name << " grew by " << with_percent(s.growth_bytes, base) << " through "
                          << s.signature << "\n";
                return kGateFailed;
            }
    return kOk;
}

int diff(const DiffArgs& args) {
    if (!args.fail_on_growth.empty() && !growth_limit(args.fail_on_growth, 1)) {
        std::cerr << "heapgraph: --fail-on-growth " << args.fail_on_growth << ": expected a size (50MB) or a percent (10%)\n";
        return kUsage;
    }
    std::vector<heapgraph::reports::Snapshot> series;
    try {
        for (const std::string& input : args.inputs)
            series.push_back(heapgraph::reports::is_snapshot_file(input) ? heapgraph::reports::read_snapshot(input)
                                                                         : snapshot_of_dump(input, args));
    } catch (const std::exception& e) {  // SnapshotError, DumpError, UnreadableDump, BadRequest
        return exit_code_for(e, args.inputs[series.size()]);
    }
    auto result = heapgraph::reports::diff_snapshots(std::move(series), {.growth_threshold_percent = args.growth_threshold});
    try {
        std::string json = heapgraph::reports::diff_json(result, HEAPGRAPH_VERSION);
        if (!args.json.empty()) write_output(args.json, [&](std::ostream& out) { out << json; });
        if (!args.html.empty())
            write_output(args.html, [&](std::ostream& out) { out << heapgraph::reports::diff_html(result, json); });
    } catch (const std::bad_alloc& e) {
        return exit_code_for(e, args.inputs.back());
    } catch (const std::exception& e) {
        std::cerr << "heapgraph: " << e.what() << "\n";
        return kOutputFailed;
    }
    return diff_gates(args, result);
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
    cmd->add_flag("--quiet", args.quiet, "Print only errors and a gate's one line on stderr; no report on stdout unless --json names it");
    cmd->add_option("--threads", args.load.threads, "Worker threads (default: all cores)")->check(count_up_to(1024))->check(CLI::Range(1u, 1024u));
    cmd->add_option("--temp-dir", args.load.temp_dir, "Where gzip dumps are inflated (default $TMPDIR or /tmp)")->check(kFileName);
    cmd->add_flag("--allow-truncated", args.load.allow_truncated, kAllowTruncatedHelp);
}

// Outputs that would overwrite an input or each other (README "Exit codes": 1).
std::optional<std::string> conflicting_outputs(const CLI::App& app, const AnalyzeArgs& a, const ConvertArgs& c,
                                               const DiffArgs& d) {
    using heapgraph::cli::NamedPath;
    std::vector<NamedPath> inputs, outputs;
    auto output = [&](const char* option, const std::string& path, bool given) {
        if (given) outputs.push_back({option, path});
    };
    if (app.got_subcommand("convert")) {
        inputs = {{"DUMP", c.dump}};
        output("-o", c.output, true);
    } else if (app.got_subcommand("diff")) {
        for (const std::string& input : d.inputs) inputs.push_back({"input", input});
        output("--json", d.json, !d.json.empty()), output("--html", d.html, !d.html.empty());
    } else {
        inputs = {{"DUMP", a.dump}};
        if (!a.load.javacore.empty()) inputs.push_back({"--javacore", a.load.javacore});
        output("--json", a.json, !a.json.empty()), output("--html", a.html, !a.html.empty());
        output("--objects-tsv", a.objects_tsv, !a.objects_tsv.empty()), output("--save", a.save, !a.save.empty());
    }
    return heapgraph::cli::output_conflict(inputs, outputs);
}

}  // namespace

int main(int argc, char** argv) {
    // Megabyte-sized buffers (gzip members, decoder scratch) would each get fresh, kernel-zeroed
    // pages from mmap and go back on free; from the heap they are reused.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    CLI::App app{"heapgraph: what is holding the memory of a Java heap dump (HPROF, PHD, classic text)"};
    app.set_version_flag("--version", std::string("heapgraph ") + HEAPGRAPH_VERSION);
    app.require_subcommand(1);
    AnalyzeArgs args;
    CLI::App* analyze_cmd = app.add_subcommand("analyze", "Analyse one heap dump and write reports");
    analyze_cmd->add_option("DUMP", args.dump, "Heap dump (format detected from content)")->required();
    analyze_cmd->add_option("--json", args.json, "JSON report file, '-' for stdout (default)")->check(kFileName);
    analyze_cmd->add_option("--html", args.html, "Self-contained HTML report file (docs/html-report.md)")->check(kFileName);
    analyze_cmd->add_option("--objects-tsv", args.objects_tsv, "Write one line per object to this file")->check(kFileName);
    analyze_cmd->add_option("--dump-index", args.load.dump_index, "Which heap dump of a multi-dump file (from 0)")
        ->default_val(0)
        ->check(count_up_to(UINT32_MAX));
    analyze_cmd->add_option("--threads", args.load.threads, "Worker threads (default: all cores)")
        ->check(count_up_to(1024))->check(CLI::Range(1u, 1024u));
    analyze_cmd->add_option("--top", args.top, "Rows in the dominators and consumers tables (default 100, at most 100000)")
        ->check(count_up_to(100000));
    analyze_cmd->add_option("--suspect-threshold", args.suspect_threshold,
                            "Leak suspects retain more than PERCENT of the reachable heap (default 10)")
        ->check(kFinite)->check(CLI::Range(0.0, 100.0));
    analyze_cmd->add_flag("--keep-unreachable", args.keep_unreachable,
                          "Keep unreachable objects in the dominator tree, as MAT's -keep_unreachable_objects");
    analyze_cmd->add_option("--progress", args.progress, "Progress bars on stderr: auto (on a terminal), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    analyze_cmd->add_flag("--timings", args.timings, "Print per-stage wall time and peak RSS; add `timings` to the JSON");
    analyze_cmd->add_option("--temp-dir", args.load.temp_dir, "Where gzip dumps are inflated (default $TMPDIR or /tmp)")->check(kFileName);
    analyze_cmd->add_option("--javacore", args.load.javacore, "PHD only: the javacore written with the dump (thread roots, class loaders)")->check(kFileName);
    analyze_cmd->add_flag("--allow-truncated", args.load.allow_truncated, kAllowTruncatedHelp);
    analyze_cmd->add_option("--save", args.save, "Write an analysis snapshot for a later `diff` (docs/diff.md), '-' for stdout")->check(kFileName);
    analyze_cmd->add_option("--fail-on-suspect", args.fail_on_suspect,
                            "Exit 5 when a leak suspect retains more than PERCENT of the reachable heap")
        ->check(kFinite)->check(CLI::Range(0.0, 100.0));
    analyze_cmd->add_flag("--quiet", args.quiet, "Print only errors and a gate's one line on stderr; no report on stdout unless --json names it");
    DiffArgs diff_args;
    add_diff(app, diff_args);
    ConvertArgs convert_args;
    add_convert(app, convert_args);
    if (argc > 1 && argv[1][0] != '-' && !app.get_subcommands([&](CLI::App* c) { return c->get_name() == argv[1]; }).size()) {
        std::cerr << "heapgraph: unknown command '" << argv[1] << "': expected analyze, convert or diff (heapgraph --help)\n";
        return kUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "heapgraph: " << e.what() << " (heapgraph --help)\n";
        return kUsage;
    }
    heapgraph::reports::remove_temp_files_on_signals();
    // --quiet with no --json: a nightly job wants the gate's one line and nothing else.
    auto quiet_json = [&](const char* name, bool quiet, std::string& json) {
        if (quiet && app.get_subcommand(name)->get_option("--json")->count() == 0) json.clear();
    };
    quiet_json("analyze", args.quiet, args.json);
    quiet_json("diff", diff_args.quiet, diff_args.json);
    if (auto conflict = conflicting_outputs(app, args, convert_args, diff_args)) {
        std::cerr << "heapgraph: " << *conflict << "\n";
        return kUsage;
    }
    if (app.got_subcommand("convert")) return convert(convert_args);
    if (app.got_subcommand("diff")) return diff(diff_args);
    return analyze(args);
}
