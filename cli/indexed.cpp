// analyze and diff with --index DIR (cli/indexed.h, docs/index.md).
#include "indexed.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gates.h"
#include "kept_dump.h"
#include "run.h"

namespace heapgraph::cli {

namespace {

// Everything besides the dump's bytes that shapes the loaded graph, then `more` (what shapes
// the reports): another value of any of these is another entry. Threads, the memory limit and
// the temp dir change no byte of a report.
std::optional<reports::IndexEntry> entry_for(const std::string& dir, const std::string& dump, const LoadOptions& load,
                                             const nlohmann::ordered_json& more) {
    if (dir.empty()) return std::nullopt;
    std::string fingerprint = reports::dump_fingerprint(dump);
    if (fingerprint.empty()) return std::nullopt;
    nlohmann::ordered_json key = {
        {"tool", HEAPGRAPH_VERSION},
        {"dump", dump},
        {"dump_index", load.dump_index},
        {"javacore", load.javacore},
        {"javacore_fingerprint", load.javacore.empty() ? "" : reports::dump_fingerprint(load.javacore)},
        {"allow_truncated", load.allow_truncated},
        {"max_inflated_bytes", load.max_inflated_bytes}};
    key.update(more);
    return reports::IndexEntry(dir, key.dump(), std::move(fingerprint));
}

std::optional<reports::IndexEntry> reports_entry(const std::string& dir, const std::string& dump, const LoadOptions& load,
                                                 std::size_t top, double suspect_threshold, bool keep_unreachable) {
    return entry_for(dir, dump, load,
                     {{"top", top}, {"suspect_threshold", suspect_threshold}, {"keep_unreachable", keep_unreachable}});
}

std::string read_text(const std::string& path) {
    std::ostringstream text;
    reports::copy_indexed(path, text);
    return text.str();
}

// Writes `line` on stderr unless a line with this `key` was written already: the graph's
// entry and the reports' often fail alike (a changed dump, an index that cannot be written),
// the graph's keeper on a thread of its own.
void say_once(const std::string& key, const std::string& line) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard lock(mutex);
    if (said.insert(key).second) std::cerr << line;
}

void say_not_updated(const std::string& dir, const std::string& why) {
    say_once("not updated: " + dir, "heapgraph: warning: index " + dir + " not updated: " + why + "\n");
}

void say_analysing_again(const std::string& dir, const std::string& dump, const std::string& why) {
    const std::string line = "heapgraph: index " + dir + ": " + dump + ": " + why + "; analysing the dump again\n";
    say_once(line, line);
}

// The entry's facts for `names`, or nullopt, with a line when an entry was there but failed.
std::optional<reports::IndexedFacts> open_entry(const reports::IndexEntry& entry, const std::vector<std::string>& names,
                                                const std::string& dir, const std::string& dump, bool quiet,
                                                bool read_crcs = true) {
    std::string why;
    std::optional<reports::IndexedFacts> facts = entry.open(names, why, read_crcs);
    if (!facts && !why.empty() && !quiet) say_analysing_again(dir, dump, why);
    return facts;
}

}  // namespace

std::optional<reports::IndexEntry> analyze_entry(const AnalyzeArgs& args) {
    return reports_entry(args.index, args.dump, args.load, args.top, args.suspect_threshold, args.keep_unreachable);
}

std::optional<reports::IndexEntry> diff_entry(const DiffArgs& args, const std::string& dump) {
    const AnalyzeArgs defaults;
    return reports_entry(args.index, dump, args.load, defaults.top, defaults.suspect_threshold, defaults.keep_unreachable);
}

std::optional<int> analyze_from_index(const AnalyzeArgs& args, const reports::IndexEntry& entry) {
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::string> names = {"report.json", "report.html", "snapshot"};
    if (!args.objects_tsv.empty()) names.push_back("objects.tsv");
    const std::optional<reports::IndexedFacts> facts = open_entry(entry, names, args.index, args.dump, args.quiet);
    if (!facts) return std::nullopt;
    if (!args.quiet) print_warnings(facts->warnings, "");
    return writing([&] {
        auto copy = [&](const std::string& name) {
            return [&, name](std::ostream& out) { reports::copy_indexed(entry.file(name), out); };
        };
        if (!args.objects_tsv.empty()) write_output(args.objects_tsv, copy("objects.tsv"));
        std::string json = args.json.empty() ? "" : read_text(entry.file("report.json"));
        if (args.timings) {
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            const CpuUse cpu = cpu_use();  // the run is this stage: the process's CPU so far is its
            const std::vector<StageTiming> timings = {{.stage = "index",
                                                       .seconds = seconds,
                                                       .peak_rss_bytes = peak_rss_bytes(),
                                                       .note = "reports reused from " + entry.directory(),
                                                       .user_seconds = cpu.user_seconds,
                                                       .system_seconds = cpu.system_seconds,
                                                       .page_faults = cpu.page_faults}};
            reports::print_timings(timings, std::cerr);
            if (!json.empty()) json = reports::add_timings(std::move(json), timings);
        }
        if (!json.empty()) write_output(args.json, [&](std::ostream& out) { out << json; });
        if (!args.html.empty()) write_output(args.html, copy("report.html"));
        if (!args.save.empty()) write_output(args.save, copy("snapshot"));
        return gate(suspect_gate(args.fail_on_suspect, *facts));
    });
}

std::optional<reports::Snapshot> snapshot_from_index(const DiffArgs& args, const reports::IndexEntry& entry,
                                                     const std::string& dump) {
    const std::optional<reports::IndexedFacts> facts = open_entry(entry, {"snapshot"}, args.index, dump, args.quiet);
    if (!facts) return std::nullopt;
    if (!args.quiet) print_warnings(facts->warnings, dump + ": ");
    reports::Snapshot snapshot = reports::read_snapshot(entry.file("snapshot"));
    snapshot.source = dump;  // as make_snapshot names it
    snapshot.from_dump = true;
    return snapshot;
}

namespace {

// IndexedDump's load: `keep` is set to the graph's entry, and reset when it is reopened.
LoadedDump load_indexed(const std::string& dir, const std::string& dump, const LoadOptions& load, bool quiet,
                        std::optional<reports::IndexEntry>& keep) {
    // The reports do not depend on the id width; the kept columns do (heapgraph-wide).
    keep = entry_for(dir, dump, load, {{"kept", "graph"}, {"node_id_bits", graph::kNodeIdBits}});
    if (!keep) return load_dump(dump, load);
    std::vector<StageTiming> timings;
    StageClock clock(timings);  // draws nothing: a run that finds no graph kept has no such stage
    clock.start("reopen");
    // The graph's size is checked here, its CRC-32 while it is read (it is read once).
    if (auto facts = open_entry(*keep, {"graph"}, dir, dump, quiet, false)) try {
            LoadedDump reopened = reopen_dump(keep->file("graph"), dump, load, facts->files.at("graph").crc32);
            clock.note("graph reopened from " + keep->directory());
            clock.stop();
            reopened.timings = std::move(timings);
            keep.reset();
            return reopened;
        } catch (const KeptDumpError& e) {
            if (!quiet) say_analysing_again(dir, dump, e.damaged ? reports::damaged_file("graph") : e.what());
        }
    return load_dump(dump, load);
}

}  // namespace

IndexedDump::IndexedDump(const std::string& dir, const std::string& path, const LoadOptions& load, bool quiet)
    : dump(load_indexed(dir, path, load, quiet, keep)), keeper(keep, dir, quiet, dump) {}

GraphKeeper::GraphKeeper(const std::optional<reports::IndexEntry>& entry, const std::string& dir, bool quiet,
                         const LoadedDump& dump) {
    if (!entry) return;
    note_ = "in " + entry->directory();
    thread_ = std::thread([this, entry, dir, quiet, &dump] {
        const auto started = std::chrono::steady_clock::now();
        try {
            IndexKeeper index(entry, dir, quiet);
            if (index.put("graph", [&](std::ostream& out) { keep_dump(dump, out); }))
                index.commit({.warnings = dump.warnings});
        } catch (const std::exception& e) {  // out of memory: the command goes on without it
            if (!quiet) say_not_updated(dir, e.what());
        }
        write_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    });
}

void GraphKeeper::wait() {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    const auto started = std::chrono::steady_clock::now();
    thread_.join();
    waited_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::optional<StageTiming> GraphKeeper::timing() const {
    if (note_.empty()) return std::nullopt;
    // No seconds of its own: the wait is inside the stage that waited, and stage seconds add
    // up to the run's.
    char seconds[96];
    std::snprintf(seconds, sizeof seconds, "; written in %.2f s beside the analysis, which waited %.2f s for it",
                  write_seconds_, waited_seconds_);
    return StageTiming{.stage = "keep graph", .seconds = 0, .peak_rss_bytes = peak_rss_bytes(), .note = note_ + seconds};
}

IndexKeeper::IndexKeeper(const std::optional<reports::IndexEntry>& entry, std::string dir, bool quiet)
    : entry_(entry), dir_(std::move(dir)), quiet_(quiet) {
    if (!entry_) return;
    try {
        entry_->begin();
    } catch (const std::exception& e) {
        drop(e);
    }
}

bool IndexKeeper::put(const std::string& name, const std::function<void(std::ostream&)>& write) {
    if (!entry_) return false;
    try {
        entry_->write(name, write);
        return true;
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        drop(e);
        return false;
    }
}

void IndexKeeper::commit(const reports::IndexedFacts& facts) {
    if (!entry_) return;
    try {
        entry_->commit(facts);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        drop(e);
    }
}

void IndexKeeper::drop(const std::exception& e) {
    if (!quiet_) say_not_updated(dir_, e.what());
    entry_.reset();
}

}  // namespace heapgraph::cli
