// Public interface of the pipeline: open a dump, recognise its format, split it into chunks,
// decode them (in parallel), and build the heap graph. Addresses stay here; graph/ sees
// dense node ids only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "address_index.h"
#include "formats.h"
#include "regular_file.h"
#include "graph.h"

namespace heapgraph {

// Progress of a stage: `done` of `total` units (bytes or items). Called from pipeline
// threads, at most a few times a second per stage; the callee must be thread-safe.
struct ProgressEvent {
    const char* stage;
    std::uint64_t done, total;
    const char* unit;  // "B" or "objects"
};

// What one dump may hold: objects (graph::kMaxNodes, 32-bit node ids) and classes (30 bits
// of a node's type word, graph::NodeTypes). A dump past either is refused by count before an
// id could wrap; tests set them small to take that path.
struct DumpLimits {
    std::uint64_t objects = graph::kMaxNodes;
    std::uint64_t classes = graph::NodeTypes::kMaxClasses;
};

struct LoadOptions {
    std::uint32_t dump_index = 0;
    unsigned threads = 0;  // 0: all the machine offers
    std::uint64_t chunk_bytes = 4u << 20;       // heap dump chunk size (classic text: block size)
    std::uint64_t bytes_in_flight = 64u << 20;  // decoded-but-not-collected bound
    std::uint64_t max_inflated_bytes = std::uint64_t{1} << 40;  // gzip bomb guard
    std::string temp_dir;  // where gzip dumps inflate and file-backed columns go (default: $TMPDIR, else /tmp)
    // Bytes of graph columns held in heap memory before columns go to files under temp_dir
    // (graph::configure_storage, process-wide: the CLI sets it once); 0: half of MemAvailable.
    std::uint64_t memory_limit = 0;
    std::string javacore;  // PHD only: a javacore written with the dump, for thread roots and class loaders
    // A dump cut short is read up to its last whole record, with a `truncated` warning saying
    // what was lost; without it, a cut is an error naming the offset where the dump ends.
    bool allow_truncated = false;
    // `heapgraph estimate`: HPROF stops after the decode stage with LoadedDump::scan filled
    // and no graph; PHD and classic text load whole (their decoders keep records whole).
    bool scan_only = false;
    // HPROF: collect the value pass's tables while decoding (LoadedDump::values), for an
    // analysis that will read values; without, its value pass reads the whole dump again.
    bool values = false;
    DumpLimits limits;
    std::function<void(const ProgressEvent&)> progress;
};

// Wall time and the process's peak resident memory at the end of each stage, and the CPU
// time and page faults of all the process's threads during it: user over wall shows how
// many cores the stage kept busy, system time and faults what fresh memory and file pages
// cost (on a machine whose faults are slow, docs/pipeline.md "Stop 38", that is most of it).
struct StageTiming {
    std::string stage;
    double seconds = 0;
    std::uint64_t peak_rss_bytes = 0;
    std::string note;  // what the stage worked on, when that explains its time ("condensed ...")
    double user_seconds = 0, system_seconds = 0;
    std::uint64_t page_faults = 0;  // minor and major
};
std::uint64_t peak_rss_bytes();  // of this process so far
// The process's CPU time and page faults so far, for the differences a stage makes.
struct CpuUse {
    double user_seconds = 0, system_seconds = 0;
    std::uint64_t page_faults = 0;
};
CpuUse cpu_use();
// The stage last started by any StageClock ("decode", "dominators"): names where memory ran out.
std::string current_stage();

struct DumpInfo {
    std::string path;
    std::string format;          // "hprof", "hprof-gz"
    std::string format_version;  // "JAVA PROFILE 1.0.2"
    std::uint32_t id_size = 0;
    std::uint64_t bytes = 0;     // of the file as given
    std::uint64_t inflated_bytes = 0;
    std::uint64_t gzip_members = 0;
    std::uint32_t dumps_in_file = 0;
    std::uint32_t dump_index = 0;
    bool compressed_oops = false;
    std::string size_model;  // how shallow sizes were computed
    bool roots_inferred = false;  // PHD, classic text: the dump records no GC roots
    // References to addresses the dump does not contain, skipped (HotSpot leaves some objects out).
    std::uint64_t dangling_references = 0;
    std::map<std::string, std::uint64_t> records;      // top-level records by name
    std::map<std::string, std::uint64_t> sub_records;  // of the chosen heap dump, by name
};

// A tolerated producer quirk or a loss, named and counted, with what it can distort.
struct Warning {
    std::string code;
    std::uint64_t count = 0;
    std::string message;
};

struct DumpSource;  // pipeline/edge_names.h
struct LoadValues;  // pipeline/values.h

struct LoadedDump {
    DumpInfo info;
    graph::HeapGraph graph;
    // Address -> node id and node id -> address (ids ascend with addresses): a bit per possible
    // object start, not 8 bytes an object.
    AddressIndex addresses;
    std::vector<Warning> warnings;
    std::vector<StageTiming> timings;
    // HPROF only (empty for PHD and classic text, whose records name no fields): the weak
    // edges leak-suspect paths do not follow, (Reference, referent) and Finalizer.unfinalized,
    // sorted; and the names of reference fields and statics.
    std::vector<graph::Edge> weak_edges;
    graph::FieldNames field_names;
    // HPROF: what name_edges reads records back from (the file stays mapped; a gzip dump's
    // inflated temporary file too). For load_dump_bytes, the caller's bytes must outlive it.
    std::shared_ptr<DumpSource> source;
    // HPROF with LoadOptions::values: what the value pass needs that the decode collected.
    std::shared_ptr<LoadValues> values;
    // PHD and classic text with --javacore: the threads it lists, with their frames.
    std::vector<Javacore::Thread> javacore_threads;
    // What a dump holds, for a memory estimate: objects (class objects too) and references;
    // `names` counts the HPROF strings and class names kept in maps.
    struct Scan {
        std::uint64_t objects = 0, references = 0, names = 0;
        bool graph_built = false;  // PHD, classic: the scan was a whole load
        // HPROF: the value tables an analysis spills from the decode (LoadValues), taking a
        // String for each primitive array (most have their own value array).
        std::uint64_t value_spill_bytes = 0;
    } scan;
};

// Class and field names longer than this are cut, ending in U+2026 (pipeline/name_limits.cpp).
inline constexpr std::size_t kMaxNameBytes = 1024;
// True when `name` was longer and is cut now (never inside a UTF-8 sequence).
bool cut_name(std::string& name);
// Cuts the class names and the classes' field names, with a `truncated_output` warning
// when it cut any (load_dump does this; name_edges cuts the names it reads back one by one).
void cut_long_names(LoadedDump& dump);

// Where the whole sub-record of an object lies in the file (pipeline/values.h,
// ValueRequest::locate).
struct RecordSpan {
    ObjectId address = 0;
    std::uint64_t file_offset = 0, bytes = 0;
};

// Exact names for the edges of reported paths (graph::path_edges), added to
// dump.field_names.exact: HPROF field names and object-array indexes ("[12]"), read from the
// source objects' records. A record in `located` (sorted by address; the value pass found
// them) is read where it lies; the rest in one pass over the heap dump, which stops when all
// are found. Does nothing for PHD and classic text (docs/suspects.md).
// `progress` draws the pass over the dump.
void name_edges(LoadedDump& dump, std::span<const graph::PathEdge> edges,
                const std::function<void(const ProgressEvent&)>& progress = {},
                std::span<const RecordSpan> located = {});

// Times stages: start() names the next stage and closes the previous one. Given a progress
// callback, it draws each stage's start and end, a sign of life for the stages that draw no
// bar of their own.
class StageClock {
public:
    explicit StageClock(std::vector<StageTiming>& out, std::function<void(const ProgressEvent&)> progress = {})
        : out_(out), progress_(std::move(progress)) {}
    ~StageClock() { stop(); }
    void start(std::string stage);
    void stop();
    void note(std::string text) { note_ = std::move(text); }  // for the stage running now

private:
    std::vector<StageTiming>& out_;
    std::function<void(const ProgressEvent&)> progress_;
    std::string stage_, note_;
    double started_ = 0;
    CpuUse cpu_at_start_;
};

// A format we recognise but do not read yet.
class UnsupportedFormat : public std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A dump of more objects than DumpLimits::objects: `heapgraph` hands it over to
// `heapgraph-wide`, whose 64-bit node ids number it (cli/main.cpp, docs/heap-graph.md).
class TooManyObjects : public UnsupportedFormat {
public:
    // `held` says how many: "holds 32256 objects and classes".
    TooManyObjects(const std::string& path, const std::string& held, std::uint64_t limit)
        : UnsupportedFormat(path + ": " + held + "; heapgraph numbers at most " + std::to_string(limit) +
                            " in one dump (" + std::to_string(graph::kNodeIdBits) + "-bit node ids, docs/heap-graph.md)") {}
};
// UnreadableDump (the file cannot be opened, or is no dump we recognise): formats/regular_file.h.
// A valid request that does not fit the file (a dump index past the last dump).
class BadRequest : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws DumpError for malformed content (message names file, offset and record).
LoadedDump load_dump(const std::string& path, const LoadOptions& options);
// The same for bytes already in memory; `name` stands for the file in messages.
LoadedDump load_dump_bytes(Bytes bytes, const std::string& name, const LoadOptions& options);

}  // namespace heapgraph
