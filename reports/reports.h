// Public interface of the reports: the JSON report (schema in docs/report-schema.md), the HTML
// page, the per-object TSV, snapshots and diffs, classic text, and atomic file writing.
// Reports write the analysis stage's Findings (analysis/analysis.h); they compute nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <mutex>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis.h"

namespace heapgraph::reports {

inline constexpr const char* kSchema = "heapgraph-report/1";

// The JSON report of the findings (docs/report-schema.md), as a document and as its text.
nlohmann::ordered_json json_document(const analysis::Findings& findings);
std::string json_report(const analysis::Findings& findings);
std::string json_report(const nlohmann::ordered_json& document);  // of what json_document made
// The inspected objects (analysis/objects.cpp) that are (`in_report`) or are not in the JSON
// report's `objects`: the HTML page embeds the others beside the report.
nlohmann::ordered_json inspected_objects_json(const analysis::Findings& findings, bool in_report);

// A heap rewritten as an IBM classic text heapdump (reports/classic_writer.cpp): OpenJ9's
// layout, or the IBM SDK's with `sdk`. Needs the graph's out rows.
struct ClassicOutput {
    const graph::HeapGraph& graph;
    std::span<const std::uint64_t> addresses;  // by node id (every one is read: a column)
    std::string version;                       // after "// Version: "
    std::uint32_t word_bytes = 8;              // 4 or 8: the width of every address
    bool sdk = false;
};
// Class names the writer had to change so that the classic reader reads them back (control
// bytes, a leading '[' that is no array, names past 65535 bytes; reports/classic_writer.cpp).
struct ClassicWritten {
    std::uint64_t names_rewritten = 0;
    std::vector<std::string> examples;  // the first few, as written (at most 80 bytes each)
};
ClassicWritten write_classic(const ClassicOutput& in, std::ostream& out);
// "3 class names rewritten for classic text: A\x01 B ...", for stderr.
std::string rewritten_names_line(const ClassicWritten& written);
// Adds `timings` as the report's last key (--timings; the one part that varies by run).
std::string add_timings(std::string json, const std::vector<StageTiming>& timings);
void write_objects_tsv(const analysis::Findings& findings, std::ostream& out);
// The self-contained HTML report (docs/html-report.md): embeds the JSON report (json_document)
// and an extract of the dominator tree; at most 10 MB for any dump.
std::string html_report(const analysis::Findings& findings);
// The same around a document json_document made of `findings` (the page cuts its own copy).
std::string html_report(const analysis::Findings& findings, nlohmann::ordered_json document);
// The JSON report's text and the HTML page, each when asked for, side by side from one
// document: made for each, its sections took 0.2 s more CPU on the 2 GB BigHeap dump.
struct JsonAndHtml {
    std::string json, html;
};
JsonAndHtml json_and_html(const analysis::Findings& findings, bool json, bool html);

// Per-stage progress bars on a terminal: "decode  [=====>    ] 1.2/2.0 GB  310 MB/s  ETA 3s".
// Redraws at most ten times a second; thread-safe; finish() ends the line of a stage.
class ProgressPrinter {
public:
    explicit ProgressPrinter(std::ostream& out) : out_(out) {}
    void update(const char* stage, std::uint64_t done, std::uint64_t total, const char* unit);
    void finish();

private:
    std::ostream& out_;
    std::string stage_;
    double stage_started_ = 0, last_draw_ = 0;
    std::mutex mutex_;
};

// A table of stage times and peak memory, for --timings on stderr.
void print_timings(const std::vector<StageTiming>& timings, std::ostream& out);

// ---- snapshots and diffs (reports/snapshot.cpp, reports/diff.cpp, docs/diff.md) ----------

// A small analysis snapshot (`analyze --save`): the histogram, the holders (the dominator tree
// to a bounded depth, with signatures), and the totals a diff needs. On disk: a 32-byte header
// (magic, version, CRC-32 and lengths) and the snapshot as deflated JSON.
inline constexpr std::uint32_t kSnapshotVersion = 1;
struct SnapshotClass {
    std::string name;
    std::uint64_t count = 0, shallow_bytes = 0, retained_bytes = 0;
};
struct SnapshotHolder {
    std::string signature, class_name;
    std::vector<graph::HolderStep> path;
    std::string anchor_kind;
    std::uint32_t parent = graph::kNoHolder, depth = 1;
    std::uint64_t retained_bytes = 0, retained_objects = 0;
};
struct Snapshot {
    std::string source;  // the file read: a dump or a snapshot (not stored)
    bool from_dump = true;
    std::string dump_path, format, tool_version;
    std::uint64_t dump_bytes = 0, inflated_bytes = 0;
    std::uint64_t objects = 0, reachable_objects = 0, retained_bytes_total = 0, classes = 0;
    double holder_min_percent = 0;
    std::vector<SnapshotClass> histogram;  // by name (classes of one name merged); in-tree objects
    std::vector<SnapshotHolder> holders;   // as graph::find_holders
};
// The findings' histogram, holders and totals (analyse with Options::holders).
Snapshot make_snapshot(const analysis::Findings& findings);
void write_snapshot(const Snapshot& snapshot, std::ostream& out);
// The file write_snapshot writes for a JSON payload: header, checksum, deflated payload.
std::string snapshot_file_bytes(std::string_view payload);
// True when the file starts with the snapshot magic (diff tells snapshots from dumps so).
bool is_snapshot_file(const std::string& path);
// Throws SnapshotError naming the file and the problem (version, checksum, truncation).
Snapshot read_snapshot(const std::string& path);
class SnapshotError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct DiffOptions {
    double growth_threshold_percent = 2;  // of the baseline's reachable heap
    double explained_ratio = 0.7;  // a grower whose child holder grew by this share of it gives way to the child
};
struct ClassDelta {
    std::string name;
    std::vector<std::uint8_t> present;  // per dump
    std::vector<std::uint64_t> count, shallow_bytes, retained_bytes;  // per dump (0 when absent)
};
struct GrowthSuspect {
    std::string signature, class_name;
    std::vector<graph::HolderStep> path;
    std::vector<std::uint64_t> retained_bytes;  // per dump; 0 when absent
    std::vector<std::uint8_t> present;
    std::int64_t growth_bytes = 0;  // last - first
    bool every_interval = false;    // grew between each pair of consecutive dumps
    std::string description;
};
struct Diff {
    std::vector<Snapshot> series;  // baseline first
    DiffOptions options;
    std::uint64_t threshold_bytes = 0;
    std::vector<GrowthSuspect> suspects;  // every-interval first (3+ dumps), then growth desc
    std::vector<GrowthSuspect> growers;   // every holder that grew, growth desc (bounded), for the charts
    std::vector<ClassDelta> classes;      // rows with any change; shallow delta desc
    std::uint64_t unchanged_classes = 0;
    std::int64_t reachable_growth_bytes() const {
        return static_cast<std::int64_t>(series.back().retained_bytes_total) -
               static_cast<std::int64_t>(series.front().retained_bytes_total);
    }
};
Diff diff_snapshots(std::vector<Snapshot> series, const DiffOptions& options);
std::string diff_json(const Diff& diff, const std::string& tool_version);
// Self-contained page (docs/diff.md): bar chart of the top growers, sparklines, class deltas.
std::string diff_html(const Diff& diff, const std::string& json);

// ---- the findings index (--index DIR; reports/findings_index.cpp, docs/index.md) ---------

// What identifies a dump's bytes for the index: its size and the CRC-32s of its first and
// last MiB and of 16 evenly spaced 64 KiB samples ("" when the file cannot be read).
std::string dump_fingerprint(const std::string& path);

struct IndexedSuspect {
    std::string what;  // as the --fail-on-suspect line names it
    std::uint64_t retained_bytes = 0;
};
// A kept file's size and CRC-32, as the manifest records them.
struct IndexedFile {
    std::uint64_t bytes = 0;
    std::uint32_t crc32 = 0;
};
// What an entry keeps beside its files: what a run prints and gates on.
struct IndexedFacts {
    std::vector<Warning> warnings{};  // the load's, as printed
    std::uint64_t reachable_bytes = 0;
    std::vector<IndexedSuspect> suspects{};  // in report order
    std::map<std::string, IndexedFile> files{};  // open(): as the manifest records them, by name
};

// One entry of an index directory: the reports of one dump (by path) analysed with one set
// of options (`slot_key`, which names the entry's directory), for one `fingerprint` of the
// dump's bytes. Its files ("report.json" without timings, "report.html", "objects.tsv",
// "snapshot") are written with write(), which keeps each one's size and CRC-32 as it goes;
// commit() then writes the manifest, last.
class IndexEntry {
public:
    IndexEntry(const std::string& dir, std::string slot_key, std::string fingerprint);
    std::string file(const std::string& name) const;
    const std::string& directory() const { return slot_; }
    // The facts when the entry is for this key and fingerprint and holds every file named,
    // each intact; otherwise nullopt, with `why` saying what was missing, changed or damaged
    // ("" when there was no entry at all). With `read_crcs` false only the files' sizes are
    // checked: a reader that reads a file whole checks its CRC-32 (facts.files) as it goes,
    // instead of the file being read twice.
    std::optional<IndexedFacts> open(const std::vector<std::string>& names, std::string& why, bool read_crcs = true) const;
    // Makes the entry's directory and removes its manifest: no entry until commit().
    void begin() const;
    // Writes the file `name` atomically (throws naming the path on failure).
    void write(const std::string& name, const std::function<void(std::ostream&)>& write);
    // The manifest over every file written, last.
    void commit(const IndexedFacts& facts) const;

private:
    std::string slot_, key_, fingerprint_;
    std::vector<std::pair<std::string, IndexedFile>> written_;  // by write(), for the manifest
};
// "NAME is damaged (size or CRC-32 differs from the manifest)": what open() says of a file
// that is not as kept, and what a reader that checks the CRC-32 itself says.
std::string damaged_file(const std::string& name);
// Writes a file of an entry (checked by IndexEntry::open) to `out`.
void copy_indexed(const std::string& path, std::ostream& out);

// Writes through a temporary file in the same directory and renames it into place, so a
// reader never sees half a report and an interrupted run leaves the old file intact.
// Throws std::runtime_error naming the path on failure.
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files
// write_atomically is writing, then let the signal end the process as it would have.
void remove_temp_files_on_signals();

}  // namespace heapgraph::reports
