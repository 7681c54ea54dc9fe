// analyze and diff with --index DIR (docs/index.md): the entry a run uses, the reports it
// writes from that entry, and a fresh run's reports kept in it.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "options.h"
#include "reports.h"

namespace heapgraph::cli {

// The entry for analyze's dump and options; nullopt without --index, or when the dump cannot
// be read (loading it then says why).
std::optional<reports::IndexEntry> analyze_entry(const AnalyzeArgs& args);
// The entry diff uses for one of its dumps: that of `analyze DUMP` with default options.
std::optional<reports::IndexEntry> diff_entry(const DiffArgs& args, const std::string& dump);

// analyze's reports and gate from the entry, with its exit code; nullopt when the entry does
// not hold them (a line on stderr says why when it was there but changed or damaged).
std::optional<int> analyze_from_index(const AnalyzeArgs& args, const reports::IndexEntry& entry);
// diff's snapshot of `dump` from the entry, as a fresh analysis would make it; nullopt when
// the entry does not hold it.
std::optional<reports::Snapshot> snapshot_from_index(const DiffArgs& args, const reports::IndexEntry& entry,
                                                     const std::string& dump);

// Keeps a freshly loaded dump's graph in the index entry `entry` (when set) on a thread of its
// own, beside what the command does with the dump, which must not change the dump until
// wait() returns (the analysis's before_changes). A failure to write is a warning.
class GraphKeeper {
public:
    GraphKeeper(const std::optional<reports::IndexEntry>& entry, const std::string& dir, bool quiet, const LoadedDump& dump);
    ~GraphKeeper() { wait(); }
    GraphKeeper(const GraphKeeper&) = delete;
    GraphKeeper& operator=(const GraphKeeper&) = delete;
    void wait();
    // The --timings line: the writing's seconds and those the command waited, in its note.
    std::optional<StageTiming> timing() const;

private:
    std::thread thread_;
    std::mutex mutex_;
    double write_seconds_ = 0, waited_seconds_ = 0;
    std::string note_;
};

// A dump loaded for a command that may have an index DIR: from the entry that keeps its graph
// when that holds (stage "reopen"), else from the dump, its graph then kept in the entry by
// `keeper` beside what the command does with it (a damaged or stale entry is a line on
// stderr and a fresh load). Without DIR, load_dump. Not movable: the keeper reads `dump`
// where it lies.
struct IndexedDump {
    IndexedDump(const std::string& dir, const std::string& path, const LoadOptions& load, bool quiet);
    IndexedDump(const IndexedDump&) = delete;
    IndexedDump& operator=(const IndexedDump&) = delete;

    std::optional<reports::IndexEntry> keep;  // the entry the graph goes into; unset when reopened
    LoadedDump dump;
    GraphKeeper keeper;
};

// Keeps a fresh run's files in an entry. A failure to write the index is a warning: the
// reports are still written, the entry is left without a manifest (so never used).
class IndexKeeper {
public:
    IndexKeeper(const std::optional<reports::IndexEntry>& entry, std::string dir, bool quiet);
    bool keeping() const { return entry_.has_value(); }
    // Writes the entry's file `name`; false (the entry dropped, with a warning) on failure.
    bool put(const std::string& name, const std::function<void(std::ostream&)>& write);
    // The manifest over every file put, last.
    void commit(const reports::IndexedFacts& facts);
    std::string file(const std::string& name) const { return entry_->file(name); }

private:
    void drop(const std::exception& e);
    std::optional<reports::IndexEntry> entry_;
    std::string dir_;
    bool quiet_;
};

}  // namespace heapgraph::cli
