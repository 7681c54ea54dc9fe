// The heapgraph command: parse the arguments (cli/options.cpp), load -> analyse -> write,
// and choose the exit code (README "Exit codes"). Everything else lives in the libraries.
#include <malloc.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <sstream>

#include <oneapi/tbb/parallel_invoke.h>

#include "estimate_command.h"
#include "gates.h"
#include "indexed.h"
#include "run.h"

namespace {

using namespace heapgraph;
using namespace heapgraph::cli;

std::function<void(const ProgressEvent&)> progress_to(reports::ProgressPrinter& printer) {
    return [&printer](const ProgressEvent& e) { printer.update(e.stage, e.done, e.total, e.unit); };
}

std::string snapshot_bytes(const analysis::Findings& f) {
    std::ostringstream out;
    reports::write_snapshot(reports::make_snapshot(f), out);
    return out.str();
}

// The reports asked for; with --index, the JSON, HTML and snapshot (and the TSV when asked)
// are kept in the entry too, for a later run.
int write_reports(const AnalyzeArgs& args, analysis::Findings& f, const std::vector<Warning>& warnings,
                  const std::optional<reports::IndexEntry>& entry, reports::ProgressPrinter* printer) {
    return writing([&] {
        StageClock clock(f.timings, printer ? progress_to(*printer) : nullptr);
        clock.start("report");  // measured up to the writes: --timings goes into the JSON
        IndexKeeper index(entry, args.index, args.quiet);
        auto tsv = [&](std::ostream& out) { reports::write_objects_tsv(f, out); };
        if (!args.objects_tsv.empty())
            write_output(args.objects_tsv, index.put("objects.tsv", tsv) ? [&](std::ostream& out) {
                reports::copy_indexed(index.file("objects.tsv"), out);
            } : std::function<void(std::ostream&)>(tsv));
        // The reports only read the findings: each on a core of its own (the JSON and HTML
        // from one document).
        std::string json, html, snapshot;
        tbb::parallel_invoke(
            [&] {
                reports::JsonAndHtml both = reports::json_and_html(f, !args.json.empty() || index.keeping(),
                                                                   !args.html.empty() || index.keeping());
                json = std::move(both.json), html = std::move(both.html);
            },
            [&] { if (!args.save.empty() || index.keeping()) snapshot = snapshot_bytes(f); });
        const reports::IndexedFacts facts = gate_facts(f, warnings);
        index.put("report.json", [&](std::ostream& out) { out << json; });
        index.put("report.html", [&](std::ostream& out) { out << html; });
        index.put("snapshot", [&](std::ostream& out) { out << snapshot; });
        index.commit(facts);
        clock.stop();
        if (printer) printer->finish();
        if (args.timings)
            f.timings.push_back({.stage = "storage", .peak_rss_bytes = peak_rss_bytes(), .note = graph::storage_summary()});
        if (args.timings) reports::print_timings(f.timings, std::cerr);
        if (args.timings && !args.json.empty()) json = reports::add_timings(std::move(json), f.timings);
        if (!args.json.empty()) write_output(args.json, [&](std::ostream& out) { out << json; });
        if (!args.html.empty()) write_output(args.html, [&](std::ostream& out) { out << html; });
        if (!args.save.empty()) write_output(args.save, [&](std::ostream& out) { out << snapshot; });
        return gate(suspect_gate(args.fail_on_suspect, facts));
    });
}

int analyze(const AnalyzeArgs& args) {
    std::shared_ptr<reports::ProgressPrinter> printer;  // --progress: bars on stderr per stage
    LoadOptions load = args.load;
    load.values = true;  // the reports read values: the decode collects what it can of them
    if (!args.quiet && (args.progress == "always" || (args.progress == "auto" && ::isatty(STDERR_FILENO)))) {
        printer = std::make_shared<reports::ProgressPrinter>(std::cerr);
        load.progress = progress_to(*printer);
    }
    const std::optional<reports::IndexEntry> entry = analyze_entry(args);
    if (entry)
        if (std::optional<int> code = analyze_from_index(args, *entry)) return *code;
    IndexedDump* loaded = nullptr;  // never freed (never_freed): its graph is written before the exit
    try {
        loaded = &never_freed(new IndexedDump(args.index, args.dump, load, args.quiet));
        LoadedDump& dump = loaded->dump;
        GraphKeeper& keeper = loaded->keeper;
        if (!args.quiet) print_warnings(dump.warnings, "");
        auto& findings = never_freed(new analysis::Findings(analysis::analyse(
            dump, {.top = args.top, .suspect_threshold = args.suspect_threshold, .keep_unreachable = args.keep_unreachable,
                   .holders = !args.save.empty() || entry, .progress = load.progress,
                   .before_changes = [&keeper] { keeper.wait(); }})));
        keeper.wait();
        if (auto kept = keeper.timing()) findings.timings.push_back(*kept);
        return write_reports(args, findings, dump.warnings, entry, printer.get());
    } catch (const std::exception& e) {  // DumpError, UnreadableDump, BadRequest, out of memory
        if (loaded) loaded->keeper.wait();
        return exit_code_for(e, args.dump);
    }
}

// `convert`: any dump we read, rewritten as a classic text heapdump (reports/classic_writer.cpp).
int convert(const ConvertArgs& args) {
    try {
        IndexedDump loaded(args.index, args.dump, args.load, false);
        const LoadedDump& dump = loaded.dump;
        const graph::Column<std::uint64_t> addresses = dump.addresses.addresses();  // every node's is written
        reports::ClassicOutput out{dump.graph, addresses,
                                   dump.info.format_version + ", converted by heapgraph " + HEAPGRAPH_VERSION,
                                   dump.info.id_size == 4 ? 4u : 8u, args.variant == "sdk"};
        return writing([&] {
            reports::ClassicWritten written;
            write_output(args.output, [&](std::ostream& stream) { written = reports::write_classic(out, stream); });
            if (written.names_rewritten) std::cerr << "heapgraph: warning: " << reports::rewritten_names_line(written) << "\n";
            return kOk;
        });
    } catch (const std::exception& e) {
        return exit_code_for(e, args.dump);
    }
}

// `diff` (docs/diff.md): each dump analysed just far enough for a snapshot.
int diff(const DiffArgs& args) {
    if (!args.fail_on_growth.empty() && !growth_limit(args.fail_on_growth, 1)) {
        std::cerr << "heapgraph: --fail-on-growth " << args.fail_on_growth << ": expected a size (50MB) or a percent (10%)\n";
        return kUsage;
    }
    std::vector<reports::Snapshot> series;
    try {
        for (const std::string& input : args.inputs) {
            if (reports::is_snapshot_file(input)) {
                series.push_back(reports::read_snapshot(input));
                continue;
            }
            const std::optional<reports::IndexEntry> entry = diff_entry(args, input);
            if (entry)
                if (std::optional<reports::Snapshot> indexed = snapshot_from_index(args, *entry, input)) {
                    series.push_back(std::move(*indexed));
                    continue;
                }
            IndexedDump loaded(args.index, input, args.load, args.quiet);
            LoadedDump& dump = loaded.dump;
            GraphKeeper& keeper = loaded.keeper;
            if (!args.quiet) print_warnings(dump.warnings, input + ": ");
            series.push_back(reports::make_snapshot(analysis::analyse(
                dump, {.report = false, .holders = true, .before_changes = [&keeper] { keeper.wait(); }})));
            IndexKeeper index(entry, args.index, args.quiet);
            index.put("snapshot", [&](std::ostream& out) { reports::write_snapshot(series.back(), out); });
            index.commit({.warnings = dump.warnings});
        }
    } catch (const std::exception& e) {  // SnapshotError, DumpError, UnreadableDump, BadRequest
        return exit_code_for(e, args.inputs[series.size()]);
    }
    auto result = reports::diff_snapshots(std::move(series), {.growth_threshold_percent = args.growth_threshold});
    try {
        return writing([&] {
            std::string json = reports::diff_json(result, HEAPGRAPH_VERSION);
            if (!args.json.empty()) write_output(args.json, [&](std::ostream& out) { out << json; });
            if (!args.html.empty()) write_output(args.html, [&](std::ostream& out) { out << reports::diff_html(result, json); });
            return gate(diff_gate(args, result));
        });
    } catch (const std::bad_alloc& e) {
        return exit_code_for(e, args.inputs.back());
    }
}

}  // namespace

int main(int argc, char** argv) {
    // Megabyte-sized buffers (gzip members, decoder scratch) would each get fresh, kernel-zeroed
    // pages from mmap and go back on free; from the heap they are reused.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    CLI::App app{"heapgraph: what is holding the memory of a Java heap dump (HPROF, PHD, classic text)"};
    // heapgraph-wide says so: the two tools are otherwise the same program.
    const char* ids = graph::kNodeIdBits == 64 ? " (heapgraph-wide: 64-bit node ids)" : "";
    app.set_version_flag("--version", std::string("heapgraph ") + HEAPGRAPH_VERSION + ids);
    app.require_subcommand(1);
    Args args;
    add_commands(app, args);
    if (argc > 1 && argv[1][0] != '-' && !app.get_subcommands([&](CLI::App* c) { return c->get_name() == argv[1]; }).size()) {
        std::cerr << "heapgraph: unknown command '" << argv[1] << "': expected analyze, convert, diff or estimate (heapgraph --help)\n";
        return kUsage;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "heapgraph: " << e.what() << " (heapgraph --help)\n";
        return kUsage;
    }
    reports::remove_temp_files_on_signals();
    narrow_id_limit(args);
    limit_threads(app, args);
    configure_storage(app, args);
    apply_quiet(app, args);
    if (auto conflict = conflicting_outputs(app, args)) {
        std::cerr << "heapgraph: " << *conflict << "\n";
        return kUsage;
    }
    const int code = app.got_subcommand("convert")    ? convert(args.convert)
                     : app.got_subcommand("diff")     ? diff(args.diff)
                     : app.got_subcommand("estimate") ? estimate(args.estimate)
                                                      : analyze(args.analyze);
    // Here, not where the count was found: every file, mapping and column of the run is gone.
    return code == kHandOver ? hand_over(argv, args.analyze.quiet || args.diff.quiet) : code;
}
